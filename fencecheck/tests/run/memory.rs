//! The whole `fencecheck run` pipeline (config file → record → check → results.json → report →
//! exit code) in-process against the memory provider, in seconds and without Docker. Each
//! planted bug must surface as exactly the anomaly it causes; the clean service must pass.

use std::path::{Path, PathBuf};
use std::process::Output;

fn root(name: &str) -> PathBuf {
    crate::support::infra::fresh_root("run-memory", name)
}

fn run(root: &Path, yaml: &str, args: &[&str]) -> Output {
    crate::support::infra::run_config(root, yaml, args)
}

const BASE: &str = "provider: memory
workers: 4
ttl: 300ms
time_limit: 2s
recovery: 1s
recovery_slack: 1s
seed: 11
";

fn kinds(root: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(root.join("runs/latest")).unwrap();
    assert!(dir.join("report.html").is_file() && dir.join("junit.xml").is_file());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    r["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["fails"] == true)
        .map(|a| a["kind"].as_str().unwrap().to_string())
        .collect()
}

fn explain(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_correct_lock_service_passes() {
    let r = root("clean");
    let out = run(&r, BASE, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    assert!(kinds(&r).is_empty());
}

#[test]
fn non_monotonic_tokens_are_duplicate_and_regressing_tokens() {
    let r = root("tokens");
    let out = run(&r, BASE, &["--memory-bugs", "tokens-not-monotonic"]);
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let mut k = kinds(&r);
    k.sort();
    k.dedup();
    assert_eq!(k, vec!["duplicate-token", "token-regression"]);
}

#[test]
fn release_without_owner_check_is_a_double_release() {
    let r = root("release");
    let out = run(
        &r,
        BASE,
        &["--memory-bugs", "expires-early,release-without-owner-check"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    assert!(
        kinds(&r).iter().all(|k| k == "double-release"),
        "{:?}",
        kinds(&r)
    );
    assert!(!kinds(&r).is_empty());
}

#[test]
fn a_typo_in_the_test_file_names_the_file_and_exits_3() {
    let r = root("typo");
    let out = run(&r, &format!("{BASE}wrokers: 3\n"), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("test.yaml") && err.contains("wrokers"),
        "{err}"
    );
}

#[test]
fn a_bad_fault_schedule_exits_3_with_its_line_before_anything_starts() {
    let r = root("schedule");
    let yaml = "provider: etcd\ntime_limit: 30s\nnemesis_timeline:\n  - at 5s start pause-holder for 6s\n  - at 9s start failover for 5s\n";
    let out = run(&r, yaml, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 5") && err.contains("failover"), "{err}");
    assert!(
        !r.join("runs").exists(),
        "nothing started, no run directory"
    );
}

#[test]
fn the_recovery_tail_ends_once_every_worker_took_the_lock_again() {
    let r = root("settle");
    let yaml = BASE.replace("recovery: 1s", "recovery: 20s");
    let out = run(&r, &yaml, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let dir = std::fs::canonicalize(r.join("runs/latest")).unwrap();
    let log = std::fs::read_to_string(dir.join("harness.log")).unwrap();
    assert!(log.contains("recovery settled at"), "{log}");
    let last = std::fs::read_to_string(dir.join("history.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["time"]
                .as_u64()
                .unwrap()
        })
        .max()
        .unwrap();
    // The time limit is 2 s; a tail at its full length would record until 22 s.
    assert!(last < 12_000_000_000, "the history goes on until {last} ns");
}

/// A small tmpfs the test mounts (root only) and unmounts when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(name: &str, size: &str) -> Option<SmallDisk> {
        let dir = root(name);
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// The run directory's disk fills mid-run: the run stops at the first write it cannot make
/// (every fault healed, the plan cancelled), with exit 3 naming the file, and what it recorded
/// until then stays readable, the resource's decisions included.
#[test]
fn a_run_whose_disk_fills_stops_at_the_first_write_it_cannot_make() {
    let Some(disk) = SmallDisk::mount("full-disk", "200k") else {
        panic!("cannot mount a tmpfs (this test needs root, as `make test` runs in CI)");
    };
    let yaml = BASE
        .replace("time_limit: 2s", "time_limit: 120s")
        .replace("seed: 11", "seed: 11\nnemesis: [pause-holder]");
    let runs = disk.0.join("runs");
    let out = run(&disk.0, &yaml, &[]);
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    let dir = std::fs::canonicalize(runs.join("latest")).unwrap();
    let log = std::fs::read_to_string(dir.join("harness.log")).unwrap();
    // The workload's failed line cancels the plan, or the nemesis's own line fails first; the
    // plan stops either way.
    assert!(
        log.contains("cancelled: true") || log.contains("nemesis: Err(nemesis: recording"),
        "the fault plan ran on: {log}"
    );
    let times: Vec<u64> = std::fs::read_to_string(dir.join("history.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|e| e["time"].as_u64())
        .collect();
    // 200 kB hold a few seconds of this workload; a run that went on would record for 120 s.
    assert!(*times.iter().max().unwrap() < 60_000_000_000);
    let decisions = std::fs::read_to_string(dir.join("resource.jsonl")).unwrap();
    assert!(decisions.lines().count() > 10, "{decisions}");
}
