//! What `reproduce` and `shrink` refuse, with exit 3 and a message naming the directory, the
//! flag or the reason: a directory that is not a run (none, or without its verdict), an
//! anomaly number out of range, and anomalies a replay cannot express (a counter's lost update,
//! a retried write's duplicate effect). No Docker needed:
//! each refusal comes before anything starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FENCECHECK: &str = env!("CARGO_BIN_EXE_fencecheck");

fn fencecheck(args: &[&str]) -> Output {
    Command::new(FENCECHECK)
        .args(args)
        .output()
        .expect("run fencecheck")
}

fn assert_exit_3(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in: {stderr}");
    }
}

/// A hand-made run directory: a test, a two-line history, and a verdict with one anomaly of
/// `kind` (its evidence naming the one acquisition).
fn run_dir(name: &str, test: &str, kind: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fc-reproduce-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("test.yaml"), test).unwrap();
    std::fs::write(
        dir.join("history.jsonl"),
        "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"lock\":\"l\"}\n\
         {\"index\":1,\"time\":2,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"lock\":\"l\",\"owner\":\"worker-1\",\"lease\":\"x\",\"token\":1}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("results.json"),
        format!(
            "{{\"valid\":false,\"anomalies\":[{{\"kind\":\"{kind}\",\"fails\":true,\"summary\":\"s\",\"lease\":\"x\",\"indices\":[1],\"diagnosis\":{{\"observation\":\"\",\"likely_boundary\":\"\",\"what_to_check\":\"\",\"next_action\":\"\"}}}}],\"stats\":{{}}}}"
        ),
    )
    .unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_directory_that_is_not_a_run_is_named() {
    let out = fencecheck(&["reproduce", "/nonexistent/fc-run"]);
    assert_exit_3(&out, &["/nonexistent/fc-run is not a run directory"]);
    let out = fencecheck(&["shrink", "/nonexistent/fc-run"]);
    assert_exit_3(&out, &["/nonexistent/fc-run is not a run directory"]);
    let dir = run_dir("unchecked", "provider: etcd\n", "stale-accepted-write");
    std::fs::remove_file(dir.join("results.json")).unwrap();
    let out = fencecheck(&["reproduce", s(&dir)]);
    assert_exit_3(&out, &["has no results.json", "fencecheck check"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_anomaly_number_out_of_range_names_the_flag_and_the_range() {
    let dir = run_dir("range", "provider: etcd\n", "stale-accepted-write");
    let out = fencecheck(&["reproduce", s(&dir), "--anomaly", "4"]);
    assert_exit_3(
        &out,
        &["--anomaly 4", "results.json lists 1 anomaly (--anomaly 1)"],
    );
    let out = fencecheck(&["reproduce", s(&dir), "--anomaly", "0"]);
    assert_exit_3(&out, &["--anomaly 0"]);
    let out = fencecheck(&["shrink", s(&dir), "--kind", "stale-write"]);
    assert_exit_3(&out, &["--kind \"stale-write\"", "stale-accepted-write"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn anomalies_a_replay_cannot_express_are_refused_with_the_reason() {
    let counter = run_dir(
        "counter",
        "provider: etcd\nworkload: counter\n",
        "lost-update",
    );
    let out = fencecheck(&["reproduce", s(&counter)]);
    assert_exit_3(
        &out,
        &[
            "lost-update is judged over a counter workload",
            "fencecheck shrink",
        ],
    );
    let retried = run_dir("dup", "provider: etcd\n", "duplicate-effect");
    let out = fencecheck(&["reproduce", s(&retried)]);
    assert_exit_3(&out, &["duplicate-effect", "fresh op_id"]);
    for d in [counter, retried] {
        let _ = std::fs::remove_dir_all(d);
    }
}
