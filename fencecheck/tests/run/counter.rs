//! `fencecheck run --workload counter` end to end: Jepsen's etcd 3.4.3 result reproduced against
//! real containers. A counter in Redis protected only by `etcd-lock` loses acknowledged
//! increments when the holder is paused; the same work with every write guarded by the lock
//! key's revision (`--counter-store etcd-guard`) loses none. Plus the same pipeline in-process
//! (memory provider) in seconds: a correct lock keeps the count, an early-expiring one loses it.
//!
//! Why the container run must lose updates: each hold is acquire → one increment (read the
//! counter, work 250–750 ms, write read+1) → release, so a holder spends nearly all of its hold
//! between its read and its write. `nemesis_interval: 1s` with the default pause of 2 x ttl
//! (4 s) gives three `pause-holder` faults in 15 s (at 1 s, 6 s, 11 s). A pause that lands in
//! the read→write window outlives the 2 s lease; a waiting worker acquires and increments
//! (holds last under a second, so increments are acknowledged during the remaining ~2 s); on
//! resume the paused worker (discipline `continue`, like Jepsen's client) writes its stale
//! read plus one and erases them. Missing all three windows needs all three pauses to land in the few
//! milliseconds between a release and the next acquire or around a read — and a pause that finds
//! no holder waits for the next one rather than hitting a non-holder.

use crate::support::infra::labelled_containers;

use std::path::{Path, PathBuf};
use std::process::Output;

fn root(name: &str) -> PathBuf {
    crate::support::infra::fresh_root("run-counter", name)
}

fn run(root: &Path, yaml: &str, args: &[&str]) -> Output {
    crate::support::infra::run_config(root, yaml, args)
}

fn results(root: &Path) -> serde_json::Value {
    let dir = std::fs::canonicalize(root.join("runs/latest")).unwrap();
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

fn failing(r: &serde_json::Value) -> Vec<String> {
    r["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["fails"] == true)
        .map(|a| a["kind"].as_str().unwrap().to_string())
        .collect()
}

/// (ok increments, values the final read returned) from the history.
fn counts(root: &Path) -> (u64, Vec<i64>) {
    let dir = std::fs::canonicalize(root.join("runs/latest")).unwrap();
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    let (mut acked, mut reads) = (0, vec![]);
    for line in history.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        match (e["f"].as_str(), e["type"].as_str()) {
            (Some("increment"), Some("ok")) => acked += 1,
            (Some("read"), Some("ok")) => reads.push(e["value"].as_i64().unwrap()),
            _ => {}
        }
    }
    (acked, reads)
}

fn explain(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const PAUSES: &str = "nemesis: [pause-holder]
nemesis_interval: 1s
discipline: continue
";

fn etcd_lock_counter(name: &str, store: &str) -> (Output, PathBuf) {
    let r = root(name);
    let yaml = format!("name: {name}\n{PAUSES}");
    let out = run(
        &r,
        &yaml,
        &[
            "--recipe",
            "etcd-lock",
            "--workload",
            "counter",
            "--counter-store",
            store,
            "--time-limit",
            "15s",
            "--seed",
            "3",
        ],
    );
    assert_eq!(
        labelled_containers(name),
        "",
        "{name}: containers left behind"
    );
    // The counter writes to its store: no fenced-resource server is started for it.
    let dir = std::fs::canonicalize(r.join("runs/latest")).unwrap();
    let nodes: Vec<String> = std::fs::read_dir(dir.join("nodes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !nodes.iter().any(|n| n.contains("-resource")),
        "{name}: a resource container ran: {nodes:?}"
    );
    (out, r)
}

#[test]
fn a_counter_behind_etcd_lock_alone_loses_updates_under_holder_pauses() {
    let (out, r) = etcd_lock_counter("t-counter-lock-redis", "redis");
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let res = results(&r);
    assert!(
        failing(&res).contains(&"lost-update".to_string()),
        "{}",
        explain(&out)
    );
    let (acked, reads) = counts(&r);
    let last = *reads.last().expect("the final read is in the history");
    assert!(
        (last as u64) < acked,
        "final read {last} below the {acked} acknowledged increments"
    );
}

#[test]
fn the_same_counter_guarded_by_the_lock_key_revision_loses_nothing() {
    let (out, r) = etcd_lock_counter("t-counter-lock-guard", "etcd-guard");
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let res = results(&r);
    assert!(failing(&res).is_empty(), "{}", explain(&out));
    let (acked, reads) = counts(&r);
    let last = *reads.last().expect("the final read is in the history");
    assert!(acked > 5, "the workload ran: {acked} increments");
    assert!(last as u64 >= acked, "final {last}, acknowledged {acked}");
    // The paused holders' writes were refused by etcd, not lost silently.
    let dir = std::fs::canonicalize(r.join("runs/latest")).unwrap();
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    assert!(
        history.contains(r#""result":"rejected-stale-fence""#),
        "a paused holder's increment was rejected by the guard"
    );
}

const MEMORY: &str = "provider: memory
workload: counter
workers: 4
ttl: 300ms
work: 200ms
time_limit: 2s
recovery: 1s
recovery_slack: 1s
seed: 11
";

#[test]
fn in_process_a_correct_lock_keeps_the_count() {
    let r = root("memory-clean");
    let out = run(&r, MEMORY, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let (acked, reads) = counts(&r);
    assert!(acked > 0);
    assert_eq!(reads.last().copied(), Some(acked as i64));
}

#[test]
fn in_process_a_lease_that_expires_early_loses_updates() {
    let r = root("memory-early");
    let out = run(&r, MEMORY, &["--memory-bugs", "expires-early"]);
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    assert!(failing(&results(&r)).contains(&"lost-update".to_string()));
}
