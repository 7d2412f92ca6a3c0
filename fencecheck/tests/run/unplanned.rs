//! Nodes hurt from outside the fault plan, as a person at a terminal would (`docker kill`,
//! `docker pause`): the run records each, and its verdict claims no more than the run showed.
//! (Ctrl-C's teardown, never recorded as deaths, is checked by the pipeline's Ctrl-C test.)

use super::pipeline::{bin, explain, runs_root, wait_for_history};
use crate::support::infra::labelled_containers;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Starts `fencecheck run` named `name` with `args`, waits until a lock is granted, does `act`
/// to the container `node` of the run, and returns the run's output and directory.
fn run_and_hurt(
    name: &str,
    args: &[&str],
    node: &str,
    act: impl FnOnce(&str),
) -> (Output, std::path::PathBuf, std::path::PathBuf) {
    let root = runs_root(name);
    let child = Command::new(bin())
        .args(["run", "--quiet", "--name", name])
        .args(args)
        .arg("--runs")
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fencecheck starts");
    let dir = wait_for_history(&root, "\"ok\",\"f\":\"acquire\"", Duration::from_secs(120));
    act(&format!(
        "fc-{}-{node}",
        crate::support::infra::harness_run_id(name)
    ));
    let out = child.wait_with_output().expect("the run ends");
    assert_eq!(labelled_containers(name), "", "containers left behind");
    (out, dir, root)
}

fn docker(args: &[&str]) {
    let out = Command::new("docker").args(args).output().expect("docker");
    assert!(out.status.success(), "docker {args:?}: {}", explain(&out));
}

#[test]
fn an_etcd_member_killed_from_outside_is_recorded_and_the_verdict_is_unknown() {
    let (out, dir, root) = run_and_hurt(
        "outside-kill-test",
        &["--nemesis", "none", "--time-limit", "14s", "--seed", "3"],
        "etcd-2",
        |c| docker(&["kill", c]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    let died: Vec<&str> = history
        .lines()
        .filter(|l| l.contains("start-node-died"))
        .collect();
    assert_eq!(died.len(), 1, "{history}");
    assert!(died[0].contains("\"targets\":[\"etcd-2\"]"), "{}", died[0]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("unplanned: node etcd-2 died at"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("Outside the fault plan"));
    assert!(
        report.contains("node-died"),
        "the report draws it as a fault"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_only_redis_killed_from_outside_makes_the_run_unknown_naming_it() {
    let (out, dir, root) = run_and_hurt(
        "outside-redis-kill",
        &[
            "--recipe",
            "redis-lock",
            "--nemesis",
            "none",
            "--time-limit",
            "16s",
        ],
        "redis-1",
        |c| docker(&["kill", c]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let why = results["unknown_reasons"].to_string();
    assert!(
        why.contains("node redis-1 died at") && why.contains("never came back"),
        "{why}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_redis_frozen_from_outside_past_ttl_and_slack_is_recorded_not_blamed_on_the_holder() {
    let (out, dir, root) = run_and_hurt(
        "outside-redis-pause",
        &[
            "--recipe",
            "redis-lock",
            "--ttl",
            "1s",
            "--time-limit",
            "16s",
            "--seed",
            "4",
        ],
        "redis-1",
        |c| {
            docker(&["pause", c]);
            // ttl 1 s + the default recovery slack 5 s, and more.
            std::thread::sleep(Duration::from_secs(7));
            docker(&["unpause", c]);
        },
    );
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{}",
        explain(&out)
    );
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    for f in ["start-node-frozen", "stop-node-frozen"] {
        assert!(
            history
                .lines()
                .any(|l| l.contains(f) && l.contains("redis-1")),
            "no {f} of redis-1:\n{history}"
        );
    }
    assert!(!history.contains("node-died"), "a freeze is no death");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let stuck: Vec<&serde_json::Value> = results["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "stuck-lock")
        .collect();
    assert!(
        stuck.is_empty(),
        "stuck-lock through a recorded freeze: {stuck:#?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("node redis-1 was frozen"), "{stdout}");
    let _ = std::fs::remove_dir_all(&root);
}
