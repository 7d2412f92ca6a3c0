//! Durability against real Redis: fencecheck's `redis-lock` keeps its fence counter in the lock's
//! own server. Without persistence a killed master restarts empty and hands out tokens it has
//! already handed out (`token-regression`); with the append-only file fsynced before each reply
//! the same kill loses nothing, and `restart-empty-leader` (the disk lost) brings the regression
//! back whatever the persistence. The setting is recorded in `test.yaml`, and the data the
//! server wrote is kept with the run.

use crate::support::infra::{fresh_root, harness_run_id, labelled_containers, run_config};
use serde_json::Value;

/// Runs `redis-lock` under `fault` with `persistence`; the kinds found and the run directory.
fn run(name: &str, persistence: &str, fault: &str) -> (Vec<String>, std::path::PathBuf) {
    let root = fresh_root("run-durability", name);
    let yaml = format!(
        "name: {name}\nrecipe: redis-lock\nresource: strict\nworkers: 3\nttl: 2s\n\
         time_limit: 10s\nseed: 2\npersistence: {persistence}\n\
         nemesis_timeline:\n  - at 3s start {fault} for 2s\n"
    );
    let out = run_config(&root, &yaml, &[]);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not a harness error: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = std::fs::canonicalize(root.join("runs/latest")).expect("run dir");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("results"))
            .expect("json");
    let kinds = results["anomalies"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["kind"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let recorded = std::fs::read_to_string(dir.join("test.yaml")).expect("test.yaml");
    assert!(
        recorded.contains(&format!("persistence: {persistence}")),
        "{recorded}"
    );
    assert_eq!(
        labelled_containers(&harness_run_id(name)),
        "",
        "containers left behind"
    );
    (kinds, dir)
}

#[test]
fn a_fence_counter_survives_a_kill_only_with_persistence_and_never_a_lost_disk() {
    let (none, _) = run("t-dur-none", "none", "kill-leader");
    assert!(none.iter().any(|k| k == "token-regression"), "{none:?}");
    let (always, dir) = run("t-dur-always", "always", "kill-leader");
    assert!(
        !always.iter().any(|k| k == "token-regression"),
        "{always:?}"
    );
    let aof = dir.join("data/redis-1/appendonlydir");
    assert!(
        aof.is_dir(),
        "the server's append-only file is kept with the run"
    );
    let (lost, _) = run("t-dur-lost", "always", "restart-empty-leader");
    assert!(lost.iter().any(|k| k == "token-regression"), "{lost:?}");
}

/// A ZooKeeper member (the leader, then a drawn one) restarted without its data directory
/// rejoins the ensemble as the same member and syncs from the leader: both faults strike, no
/// node dies outside the plan, and the servers' data is kept with the run.
#[test]
fn a_zookeeper_member_restarted_without_its_data_rejoins() {
    let name = "t-dur-zk";
    let root = fresh_root("run-durability", name);
    let yaml = format!(
        "name: {name}\nrecipe: zk-lock\nworkers: 3\nttl: 2s\ntime_limit: 14s\nseed: 1\n\
         nemesis_timeline:\n  - at 3s start restart-empty-leader for 3s\n  \
         - at 8s start restart-empty-node for 3s\n"
    );
    let out = run_config(&root, &yaml, &[]);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not a harness error: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = std::fs::canonicalize(root.join("runs/latest")).expect("run dir");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    for fault in ["restart-empty-leader", "restart-empty-node"] {
        let start: Value = history
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("a line"))
            .find(|e| e["f"] == format!("start-{fault}"))
            .unwrap_or_else(|| panic!("{fault} never started"));
        assert!(start["error"].is_null(), "{fault} struck: {start}");
    }
    assert!(
        !history.contains("start-node-died"),
        "a member did not come back"
    );
    for member in ["zk-1", "zk-2", "zk-3"] {
        assert!(
            dir.join(format!("data/{member}/myid")).is_file(),
            "{member}'s data kept"
        );
    }
    assert_eq!(
        labelled_containers(&harness_run_id(name)),
        "",
        "containers left behind"
    );
}
