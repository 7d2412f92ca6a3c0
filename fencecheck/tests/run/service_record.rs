//! The lock service's own record on a real etcd cluster through the whole pipeline: during a
//! run whose holders are paused past their lease, `service.jsonl` shows every grant's key, created
//! with the lease the grant names at the revision its token says, so every record maps to the
//! run process that was told it held the lock; the observer's progress round trips (its lag) are
//! printed for the record. The run leaves nothing behind.

use crate::support::infra::{fresh_root, labelled_containers, run_config};
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{Event, OpType, F};
use std::path::Path;

fn lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole line"))
        .collect()
}

#[test]
fn etcds_record_maps_every_grant_to_the_process_that_was_told_it_held_the_lock() {
    let root = fresh_root("run", "service-record");
    let out = run_config(
        &root,
        "name: t-service-record\nprovider: etcd\ntime_limit: 10s\nnemesis_timeline:\n  \
         - at 2s start pause-holder for 3s\n  - at 6s start pause-holder for 3s\n",
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict: {stderr}"
    );
    let run = std::fs::canonicalize(root.join("runs").join("latest")).expect("the run");
    let history: Vec<Event> = lines(&run.join("history.jsonl"));
    let record: Vec<ServiceEntry> = lines(&run.join("service.jsonl"));
    assert_eq!(record[0].what, ServiceWhat::Watching, "{:?}", record[0]);
    assert!(
        record.iter().all(|s| s.what != ServiceWhat::Gap),
        "the observer lost nothing: {record:?}"
    );
    let grants: Vec<&Event> = history
        .iter()
        .filter(|e| (e.kind, &e.f) == (OpType::Ok, &F::Acquire))
        .collect();
    assert!(grants.len() > 3, "the workload took the lock: {grants:?}");
    for g in &grants {
        let lease = g.lease.as_deref().expect("a grant names its lease");
        let token = g.token.expect("etcd-lease's token") as i64;
        let put = record.iter().find(|s| {
            s.what == ServiceWhat::Put
                && s.owner.as_deref() == Some(lease)
                && s.created == Some(token)
        });
        assert!(
            put.is_some_and(|p| p.time <= g.time + 1_000_000_000),
            "grant at index {} (lease {lease}, token {token}) has its key in the record",
            g.index
        );
    }
    let mut lags: Vec<u64> = record.iter().filter_map(|s| s.lag_ns).collect();
    lags.sort_unstable();
    assert!(!lags.is_empty(), "the observer measured its lag");
    eprintln!(
        "observer lag over {} round trips: median {:.2} ms, max {:.2} ms",
        lags.len(),
        lags[lags.len() / 2] as f64 / 1e6,
        lags[lags.len() - 1] as f64 / 1e6
    );
    let verdict: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    assert_eq!(verdict["stats"]["granted-gone"]["status"], "not applicable");
    assert_eq!(
        labelled_containers("t-service-record"),
        "",
        "the run left nothing behind"
    );
}
