//! The `cut-*-reply` faults through the whole pipeline against real Redis: a worker's acquire in
//! flight has its request pass and its connection closed when the reply comes back; the start
//! line names the acquire it struck, the link proxy's log shows the cut, the fault is healed and
//! nothing is left behind.

use crate::support::infra::{fresh_root, harness_run_id, labelled_containers, run_config};
use std::path::PathBuf;

/// Runs the test `yaml` in a fresh root named `name`; its run directory, once it ended with a
/// verdict (not a harness error).
fn run(name: &str, yaml: &str) -> PathBuf {
    let root = fresh_root("run", name);
    let out = run_config(&root, yaml, &[]);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not a harness error: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::canonicalize(root.join("runs/latest")).expect("run dir")
}

#[test]
fn a_cut_acquire_reply_lands_the_request_and_closes_its_connection() {
    let yaml = "name: t-cut-reply\nrecipe: redis-lock\nworkers: 3\nttl: 2s\ntime_limit: 10s\n\
                seed: 3\nnemesis_timeline:\n  - at 2s start cut-acquire-reply for 4s\n";
    let dir = run("cut-reply", yaml);
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    let start: serde_json::Value = history
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a line"))
        .find(|e| e["f"] == "start-cut-acquire-reply")
        .expect("the fault started");
    assert!(
        start["error"].is_null(),
        "it found an acquire in flight: {start}"
    );
    assert!(start["value"]["invoke_index"].is_u64(), "{start}");
    assert_eq!(start["value"]["links"]["cut_next_reply"], true, "{start}");
    assert_eq!(history.matches("\"stop-cut-acquire-reply\"").count(), 1);
    let log = std::fs::read_to_string(dir.join(format!(
        "nodes/fc-{}-netproxy.log",
        harness_run_id("t-cut-reply")
    )))
    .expect("the link proxy's log");
    assert!(log.contains("reply cut"), "{log}");
    assert_eq!(
        labelled_containers("t-cut-reply"),
        "",
        "containers left behind"
    );
}

/// The other new faults on one real run: a starved holder, a holder's cut reply and a Redis server
/// restarted without its data each start on a target, stop, and leave nothing behind (no
/// container, no CPU limit: the run's own audit after the final heal fails a run that leaves
/// one).
#[test]
fn starve_worker_cut_renew_reply_and_restart_empty_node_start_and_heal() {
    let yaml = "name: t-more-faults\nrecipe: redis-lock\nworkers: 3\nttl: 2s\ntime_limit: 14s\n\
                seed: 5\npersistence: always\nnemesis_timeline:\n  \
                - at 2s start starve-worker for 3s\n  - at 6s start cut-renew-reply for 3s\n  \
                - at 10s start restart-empty-node for 2s\n";
    let dir = run("more-new-faults", yaml);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("history.jsonl"))
        .expect("history")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a line"))
        .collect();
    for fault in ["starve-worker", "cut-renew-reply", "restart-empty-node"] {
        let start = lines
            .iter()
            .find(|e| e["f"] == format!("start-{fault}"))
            .unwrap_or_else(|| panic!("{fault} never started"));
        assert!(start["error"].is_null(), "{fault} struck: {start}");
        assert!(
            lines.iter().any(|e| e["f"] == format!("stop-{fault}")),
            "{fault} stopped"
        );
    }
    let starve = lines
        .iter()
        .find(|e| e["f"] == "start-starve-worker")
        .expect("start");
    assert_eq!(starve["value"]["cpus"], 0.05, "{starve}");
    assert_eq!(
        labelled_containers("t-more-faults"),
        "",
        "containers left behind"
    );
}

/// By command: with `cut_reply_to: delete` a ZooKeeper worker's cut is of its next delete's
/// reply (its release), not of whatever reply comes first (a ping): the struck worker's release
/// is answered `info`, the setting is recorded in `test.yaml`, and nothing is left behind.
#[test]
fn a_cut_by_command_strikes_the_reply_to_that_command() {
    let yaml = "name: t-cut-delete\nrecipe: zk-lock\nworkers: 3\nttl: 2s\ntime_limit: 10s\n\
                seed: 3\ncut_reply_to: delete\nnemesis_timeline:\n  \
                - at 2s start cut-renew-reply for 5s\n";
    let dir = run("cut-by-command", yaml);
    let recorded = std::fs::read_to_string(dir.join("test.yaml")).expect("test.yaml");
    assert!(recorded.contains("cut_reply_to: delete"), "{recorded}");
    let history: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("history.jsonl"))
        .expect("history")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a line"))
        .collect();
    let start = history
        .iter()
        .position(|e| e["f"] == "start-cut-renew-reply" && e["error"].is_null())
        .expect("the cut found a holder");
    let struck = history[start]["value"]["targets"][0]
        .as_str()
        .expect("a target")
        .to_string();
    let cut = history[start..].iter().find(|e| {
        e["f"] == "release" && e["type"] == "info" && e["owner"].as_str() == Some(&struck)
    });
    assert!(
        cut.is_some(),
        "the struck worker {struck}'s release met the cut: {:?}",
        &history[start..]
    );
    // Spent on that reply: its stop line does not say it struck nothing.
    let stop = history[start..]
        .iter()
        .find(|e| e["f"] == "stop-cut-renew-reply")
        .expect("the cut stopped");
    assert!(
        !stop["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("cut unspent"),
        "{stop}"
    );
    assert_eq!(
        labelled_containers("t-cut-delete"),
        "",
        "containers left behind"
    );
}
