//! The link and clock fault families through the whole pipeline: a run with `lossy-network` and
//! `clock-jump` (Redis) records each fault's start and stop, heals, and leaves no container, no
//! rule and no moved clock behind; its `test.yaml` carries the plan. The clock jump acts (the
//! Kleppmann cell of `matrix/published.yaml` shows what it does to Redlock).

use crate::support::infra::{fresh_root, labelled_containers};
use std::process::Command;

#[test]
fn link_and_clock_faults_start_stop_and_leave_nothing() {
    let root = fresh_root("run", "newfaults");
    std::fs::create_dir_all(&root).expect("root");
    let test = root.join("test.yaml");
    std::fs::write(
        &test,
        "name: t-new-faults\nrecipe: redis-lock\ntime_limit: 14s\nnemesis_timeline:\n  \
         - at 2s start lossy-network for 4s\n  - at 8s start clock-jump for 3s\n",
    )
    .expect("test.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["run", "--quiet", "--runs"])
        .arg(&root)
        .arg("--config")
        .arg(&test)
        .output()
        .expect("fencecheck runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not a harness error: {stderr}"
    );
    let dir = std::fs::canonicalize(root.join("latest")).expect("run dir");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    for f in ["lossy-network", "clock-jump"] {
        let starts = history.matches(&format!("\"start-{f}\"")).count();
        let stops = history.matches(&format!("\"stop-{f}\"")).count();
        assert!(
            starts >= 1 && starts == stops,
            "{f}: {starts} starts, {stops} stops"
        );
    }
    assert!(
        dir.join(format!(
            "nodes/fc-{}-netproxy.log",
            crate::support::infra::harness_run_id("t-new-faults")
        ))
        .is_file(),
        "the link proxy ran"
    );
    let clock = std::fs::read_to_string(dir.join("clocks/redis-1/faketime")).expect("clock file");
    assert_eq!(clock.trim(), "+0.000", "the clock is real after the run");
    assert_eq!(
        labelled_containers("t-new-faults"),
        "",
        "containers left behind"
    );
}
