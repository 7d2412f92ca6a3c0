//! `hang-work` end to end: the holder's work hangs while its process and its lock client run on.
//! A lock renewed in the background then outlives the work (stuck-lock, diagnosed as a zombie
//! holder); one renewed from the loop that does the work lapses, the next holder takes over and
//! the zombie's late write is fenced (or, when its write had left before the hang, its release
//! refused). In process (the memory provider, no Docker) and against
//! real services: etcd with fencecheck's recipe, and kazoo, whose session outlives a hung job.

use crate::support::infra::{fresh_root, labelled_containers, run_config};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn explain(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run_dir(root: &Path) -> PathBuf {
    std::fs::canonicalize(root.join("runs/latest")).expect("run dir")
}

fn read_json(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("json")
}

fn history(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir(root).join("history.jsonl"))
        .expect("history")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a history line"))
        .collect()
}

/// The hung worker and the history indices of the hang's start and stop.
fn the_hang(h: &[Value]) -> (String, u64, u64) {
    let line = |f: &str| {
        h.iter()
            .find(|e| e["f"] == f)
            .unwrap_or_else(|| panic!("no {f} line"))
    };
    let start = line("start-hang-work");
    assert!(
        start["error"].is_null(),
        "the hang found its holder: {start}"
    );
    let worker = start["value"]["targets"][0].as_str().expect("a target");
    let index = |e: &Value| e["index"].as_u64().expect("index");
    (
        worker.to_string(),
        index(start),
        index(line("stop-hang-work")),
    )
}

/// Operations the hung worker invoked while hung: none may be.
fn invoked_while_hung(h: &[Value], worker: &str, (from, to): (u64, u64)) -> Vec<u64> {
    let processes: Vec<&Value> = h
        .iter()
        .filter(|e| e["owner"] == worker)
        .map(|e| &e["process"])
        .collect();
    h.iter()
        .filter(|e| e["type"] == "invoke" && processes.contains(&&e["process"]))
        .filter_map(|e| e["index"].as_u64())
        .filter(|i| (from..to).contains(i))
        .collect()
}

fn grants_to_others(h: &[Value], worker: &str, (from, to): (u64, u64)) -> usize {
    h.iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok" && e["owner"] != worker)
        .filter(|e| (from..to).contains(&e["index"].as_u64().unwrap_or(0)))
        .count()
}

fn stuck_locks(results: &Value) -> Vec<&Value> {
    results["anomalies"]
        .as_array()
        .map(|a| a.iter().filter(|x| x["kind"] == "stuck-lock").collect())
        .unwrap_or_default()
}

const MEMORY: &str = "provider: memory
workers: 3
ttl: 300ms
time_limit: 5s
recovery: 2s
recovery_slack: 1s
seed: 11
nemesis_timeline:
  - at 500ms start hang-work for 3s
";

#[test]
fn a_hung_holder_renewed_in_the_background_keeps_the_lock_and_is_named_a_zombie() {
    let r = fresh_root("run-hang-work", "background");
    let out = run_config(&r, MEMORY, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stuck-lock fails: {}",
        explain(&out)
    );
    let h = history(&r);
    let (worker, from, to) = the_hang(&h);
    assert_eq!(
        invoked_while_hung(&h, &worker, (from, to)),
        Vec::<u64>::new()
    );
    assert_eq!(
        grants_to_others(&h, &worker, (from, to)),
        0,
        "the lease was kept"
    );
    let results = read_json(run_dir(&r).join("results.json"));
    let stuck = stuck_locks(&results);
    assert_eq!(stuck.len(), 1, "{results}");
    assert_eq!(stuck[0]["owner"], worker.as_str());
    assert_eq!(stuck[0]["other"]["zombie_holder"], true);
    let said = stuck[0]["diagnosis"]["observation"].as_str().unwrap_or("");
    assert!(
        said.contains("renewed while its work makes no progress"),
        "{said}"
    );
}

#[test]
fn a_hung_holder_renewed_inline_loses_the_lock_and_its_late_write_is_fenced() {
    let r = fresh_root("run-hang-work", "inline");
    let yaml = format!("{MEMORY}discipline: continue\nrenewal: inline\n");
    let out = run_config(&r, &yaml, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let h = history(&r);
    let (worker, from, to) = the_hang(&h);
    assert_eq!(
        invoked_while_hung(&h, &worker, (from, to)),
        Vec::<u64>::new()
    );
    assert!(
        grants_to_others(&h, &worker, (from, to)) > 0,
        "the lease lapsed and another worker took the lock"
    );
    // The hung hold's first operation after the hang finds its lease gone: a write carrying
    // its old token is refused by the fence, or, where the hang struck after its write had
    // left, its release is refused.
    let index = |e: &Value| e["index"].as_u64().unwrap_or(0);
    let hung = h
        .iter()
        .rev()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok" && e["owner"] == worker.as_str())
        .find(|e| index(e) < from)
        .expect("the hung worker held the lock when the hang began");
    let late = h
        .iter()
        .filter(|e| e["type"] != "invoke" && e["lease"] == hung["lease"])
        .filter(|e| e["f"] == "write" || e["f"] == "release")
        .find(|e| index(e) > to)
        .expect("the hung hold wrote or released after the hang");
    assert_eq!(late["type"], "fail", "{late}");
    let refused = if late["f"] == "write" {
        "rejected-stale-fence"
    } else {
        "release-rejected-not-owner"
    };
    assert_eq!(late["result"], refused, "{late}");
    let results = read_json(run_dir(&r).join("results.json"));
    assert!(stuck_locks(&results).is_empty(), "{results}");
    assert_eq!(results["valid"], true, "{results}");
}

/// Against a real service: the run's summary is a verdict, the hang is healed and nothing is
/// left behind; returns the results.
fn container_run(name: &str, yaml: &str) -> (Value, Vec<Value>) {
    let r = fresh_root("run-hang-work", name);
    let out = run_config(&r, yaml, &[]);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not a harness error: {}",
        explain(&out)
    );
    let h = history(&r);
    let _ = the_hang(&h);
    let id = crate::support::infra::harness_run_id(name);
    assert_eq!(labelled_containers(&id), "", "containers left behind");
    (read_json(run_dir(&r).join("results.json")), h)
}

#[test]
fn etcd_background_renewal_holds_a_hung_job_and_inline_renewal_lets_it_go() {
    let base = "recipe: etcd-lease\nworkers: 3\nttl: 2s\ntime_limit: 14s\nrecovery_slack: 2s\n\
                seed: 4\nnemesis_timeline:\n  - at 2s start hang-work for 8s\n";
    let (background, _) = container_run("t-hang-etcd-bg", &format!("name: t-hang-etcd-bg\n{base}"));
    let stuck = stuck_locks(&background);
    assert_eq!(stuck.len(), 1, "{background}");
    assert_eq!(stuck[0]["other"]["zombie_holder"], true);
    let (inline, h) = container_run(
        "t-hang-etcd-inline",
        &format!("name: t-hang-etcd-inline\n{base}discipline: continue\nrenewal: inline\n"),
    );
    assert!(stuck_locks(&inline).is_empty(), "{inline}");
    let (worker, from, to) = the_hang(&h);
    assert!(grants_to_others(&h, &worker, (from, to)) > 0);
}

#[test]
fn kazoo_keeps_a_hung_holders_lock_for_as_long_as_its_session_lives() {
    let yaml = "name: t-hang-kazoo\nclient: kazoo\nworkers: 3\nttl: 2s\ntime_limit: 14s\n\
                recovery_slack: 2s\nseed: 4\nnemesis_timeline:\n  - at 2s start hang-work for 8s\n";
    let (results, _) = container_run("t-hang-kazoo", yaml);
    let stuck = stuck_locks(&results);
    assert_eq!(stuck.len(), 1, "{results}");
    assert_eq!(stuck[0]["other"]["zombie_holder"], true);
}
