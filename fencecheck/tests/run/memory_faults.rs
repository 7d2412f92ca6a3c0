//! Worker faults in a plain `cargo test`: the memory provider's in-process workers are paused,
//! killed and restarted by the nemesis executor itself (its start, stop and heal), through the
//! same run pipeline the containers use, with no Docker. And the in-process workers are made
//! from the same launch as a container's: the timing the test recorded is the timing they use.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn root(name: &str) -> PathBuf {
    crate::support::infra::fresh_root("run-memory-faults", name)
}

fn explain(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run_dir(root: &Path) -> PathBuf {
    std::fs::canonicalize(root.join("runs/latest")).unwrap()
}

fn history(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir(root).join("history.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn nemesis_events(h: &[Value]) -> Vec<(String, Vec<String>)> {
    h.iter()
        .filter(|e| e["process"] == "nemesis")
        .map(|e| {
            let targets = e["value"]["targets"]
                .as_array()
                .map(|t| t.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            (e["f"].as_str().unwrap().to_string(), targets)
        })
        .collect()
}

/// Processes of worker `owner` that were granted the lock, in history order.
fn granted_processes(h: &[Value], owner: &str) -> Vec<u64> {
    let mut p: Vec<u64> = h
        .iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok" && e["owner"] == owner)
        .filter_map(|e| e["process"].as_u64())
        .collect();
    p.dedup();
    p
}

#[test]
fn pauses_and_kills_of_in_process_workers_start_stop_and_heal() {
    let r = root("pause-kill");
    let yaml = "provider: memory
workers: 3
ttl: 300ms
time_limit: 4s
recovery: 1s
recovery_slack: 1s
seed: 5
nemesis_timeline:
  - at 500ms start pause-holder for 800ms
  - at 2s start kill-worker for 400ms
  - at 2800ms start pause-worker for 400ms
";
    let out = crate::support::infra::run_config(&r, yaml, &[]);
    // The strict register rejects what the paused holder writes late: nothing fails the run.
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let h = history(&r);
    let faults = nemesis_events(&h);
    let names: Vec<&str> = faults.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "start-pause-holder",
            "stop-pause-holder",
            "start-kill-worker",
            "stop-kill-worker",
            "start-pause-worker",
            "stop-pause-worker"
        ],
        "{faults:?}"
    );
    // Each stop names what its start hit.
    assert_eq!(faults[0].1, faults[1].1);
    assert_eq!(faults[2].1, faults[3].1);
    assert_eq!(faults[4].1, faults[5].1);
    let paused = &faults[0].1[0];
    let killed = &faults[2].1[0];
    assert!(paused.starts_with("worker-") && killed.starts_with("worker-"));
    // The paused holder's lease lapsed while it was frozen: someone else was granted the lock
    // between the pause's start and its stop.
    let at = |f: &str| {
        h.iter()
            .find(|e| e["f"] == f)
            .and_then(|e| e["index"].as_u64())
            .unwrap()
    };
    let (pause, thaw) = (at("start-pause-holder"), at("stop-pause-holder"));
    assert!(
        h.iter().any(|e| e["f"] == "acquire"
            && e["type"] == "ok"
            && e["owner"] != paused.as_str()
            && (pause..thaw).contains(&e["index"].as_u64().unwrap())),
        "no other worker was granted the lock during the pause of {paused}"
    );
    // The heal thawed it: frozen, it completed nothing; thawed, it was granted the lock again.
    let by_paused = |range: std::ops::Range<u64>| {
        h.iter().any(|e| {
            e["f"] == "acquire"
                && e["type"] == "ok"
                && e["owner"] == paused.as_str()
                && range.contains(&e["index"].as_u64().unwrap())
        })
    };
    assert!(
        !by_paused(pause..thaw),
        "{paused} was granted the lock while frozen"
    );
    assert!(
        by_paused(thaw..u64::MAX),
        "{paused} never served again after the thaw"
    );
    // The killed worker's process ended in the history, and the worker came back after the
    // restart under a new process id, and was granted the lock again.
    let kill = at("start-kill-worker");
    assert!(
        h.iter().any(|e| e["f"] == "exit"
            && e["index"].as_u64().unwrap() > kill
            && e["type"] == "info"),
        "no exit recorded after the kill of {killed}"
    );
    let back = at("stop-kill-worker");
    assert!(
        h.iter().any(|e| e["f"] == "acquire"
            && e["type"] == "ok"
            && e["owner"] == killed.as_str()
            && e["index"].as_u64().unwrap() > back),
        "{killed} was never granted the lock after its restart"
    );
    let processes = granted_processes(&h, killed);
    assert!(
        processes.windows(2).any(|w| w[0] != w[1]),
        "{killed} kept one process id across its death: {processes:?}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir(&r).join("results.json")).unwrap())
            .unwrap();
    assert_eq!(results["valid"], true, "{results}");
}

#[test]
fn an_acquire_timeout_is_used_as_recorded() {
    let r = root("acquire-timeout");
    // Two workers, holds far longer than the acquire timeout: the waiter gives up after it.
    let yaml = "provider: memory
workers: 2
ttl: 2s
acquire_timeout: 150ms
work: 1s
time_limit: 3s
recovery: 1s
seed: 3
";
    let out = crate::support::infra::run_config(&r, yaml, &[]);
    assert!(matches!(out.status.code(), Some(0)), "{}", explain(&out));
    let recorded = std::fs::read_to_string(run_dir(&r).join("test.yaml")).unwrap();
    assert!(recorded.contains("acquire_timeout: 150ms"), "{recorded}");
    let h = history(&r);
    // Each failed acquire, paired with its own invoke (a process has one request at a time).
    let mut pending = std::collections::HashMap::new();
    let mut waits = Vec::new();
    for e in h.iter().filter(|e| e["f"] == "acquire") {
        let (p, t) = (e["process"].as_u64().unwrap(), e["time"].as_u64().unwrap());
        match e["type"].as_str().unwrap() {
            "invoke" => drop(pending.insert(p, t)),
            "fail" => waits.push((t - pending[&p]) / 1_000_000),
            _ => {}
        }
    }
    assert!(!waits.is_empty(), "no acquire ever waited out its timeout");
    // The recipe's default is 10 s; the test said 150 ms.
    assert!(
        waits.iter().all(|&ms| (150..1000).contains(&ms)),
        "failed acquires waited {waits:?} ms"
    );
}

#[test]
fn a_run_whose_every_planned_fault_found_nothing_to_strike_is_unknown() {
    let r = root("all-skipped");
    // One worker: nobody ever waits for a lock another holds, so pause-waiter strikes nothing.
    let yaml = "provider: memory
workers: 1
ttl: 300ms
time_limit: 3s
recovery: 1s
seed: 2
nemesis_timeline:
  - at 500ms start pause-waiter for 1s
  - at 1800ms start pause-waiter for 1s
";
    let out = crate::support::infra::run_config(&r, yaml, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("faults: 0 of 2 planned faults landed: pause-waiter 0/2"),
        "{stdout}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir(&r).join("results.json")).unwrap())
            .unwrap();
    let why = results["unknown_reasons"][0].as_str().unwrap_or("");
    assert!(
        why.starts_with("none of the 2 planned faults landed"),
        "{why}"
    );
}
