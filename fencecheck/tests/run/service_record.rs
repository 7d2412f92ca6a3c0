//! The lock service's own record on each real provider through the whole pipeline: during a run
//! whose holders are paused past their lease, `service.jsonl` shows every grant's key, node or
//! advisory lock at the service with the identity the grant names (etcd's lease and create
//! revision, ZooKeeper's node path and czxid, the Redis value, the PostgreSQL backend's pid), so
//! every record maps to the run process that was told it held the lock. The observer's round
//! trips (its lag) are printed for the record, and each run leaves nothing behind.

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

/// Runs `test.yaml` text, expecting a verdict, and reads back its history and service record.
fn run_and_read(name: &str, yaml: &str) -> (Vec<Event>, Vec<ServiceEntry>) {
    let root = fresh_root("run", name);
    let out = run_config(&root, yaml, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict: {stderr}"
    );
    let run = std::fs::canonicalize(root.join("runs").join("latest")).expect("the run");
    (
        lines(&run.join("history.jsonl")),
        lines(&run.join("service.jsonl")),
    )
}

/// Runs `recipe` with two pause-holder faults and checks that every grant has its put in the
/// record (`matches` says which put is the grant's) no later than a second after the grant.
fn every_grant_is_in_the_record(
    name: &str,
    recipe: &str,
    matches: impl Fn(&Event, &ServiceEntry) -> bool,
) -> (Vec<Event>, Vec<ServiceEntry>) {
    let (history, record) = run_and_read(
        name,
        &format!(
            "name: {name}\nrecipe: {recipe}\ntime_limit: 10s\nnemesis_timeline:\n  \
             - at 2s start pause-holder for 3s\n  - at 6s start pause-holder for 3s\n"
        ),
    );
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
        let put = record
            .iter()
            .find(|s| s.what == ServiceWhat::Put && matches(g, s));
        assert!(
            put.is_some_and(|p| p.time <= g.time + 1_000_000_000),
            "{recipe}: grant at index {} (lease {:?}, token {:?}) has its put in the record",
            g.index,
            g.lease,
            g.token
        );
    }
    let mut lags: Vec<u64> = record.iter().filter_map(|s| s.lag_ns).collect();
    lags.sort_unstable();
    assert!(!lags.is_empty(), "the observer measured its lag");
    eprintln!(
        "{recipe}: observer lag over {} round trips: median {:.2} ms, max {:.2} ms",
        lags.len(),
        lags[lags.len() / 2] as f64 / 1e6,
        lags[lags.len() - 1] as f64 / 1e6
    );
    assert_eq!(labelled_containers(name), "", "the run left nothing behind");
    (history, record)
}

#[test]
fn etcds_record_maps_every_grant_to_the_process_that_was_told_it_held_the_lock() {
    let (history, record) = every_grant_is_in_the_record("t-service-etcd", "etcd-lease", |g, s| {
        s.owner == g.lease && s.created == g.token.map(|t| t as i64)
    });
    // Each grant's lease is in the record from its grant to its end: released (revoked), or
    // run out while its holder was paused.
    let lines = |what: ServiceWhat, lease: &str| {
        (record.iter())
            .filter(|s| s.what == what && s.key.is_none() && s.owner.as_deref() == Some(lease))
            .count()
    };
    for g in history
        .iter()
        .filter(|e| (e.kind, &e.f) == (OpType::Ok, &F::Acquire))
    {
        let lease = g.lease.as_deref().expect("etcd-lease reports its lease");
        assert_eq!(
            lines(ServiceWhat::Granted, lease),
            1,
            "lease {lease} granted once"
        );
        assert!(
            lines(ServiceWhat::Ended, lease) <= 1,
            "lease {lease} ended once at most"
        );
    }
    assert!(
        record.iter().any(|s| s.what == ServiceWhat::Ended),
        "leases ended in the record: {record:?}"
    );
}

#[test]
fn zookeepers_record_maps_every_grant_to_the_process_that_was_told_it_held_the_lock() {
    let (history, record) = every_grant_is_in_the_record("t-service-zk", "zk-lock", |g, s| {
        s.key == g.lease && s.created == g.token.map(|t| t as i64) && s.owner.is_some()
    });
    // Each grant's node is owned by a session the record shows begun and, while its holder
    // ran, renewed.
    let session_lines = |what: ServiceWhat, session: &str| {
        (record.iter())
            .filter(|s| s.what == what && s.key.is_none() && s.owner.as_deref() == Some(session))
            .count()
    };
    for g in history
        .iter()
        .filter(|e| (e.kind, &e.f) == (OpType::Ok, &F::Acquire))
    {
        let node = (record.iter())
            .find(|s| s.what == ServiceWhat::Put && s.key == g.lease)
            .expect("the grant's node");
        let session = node.owner.as_deref().expect("an ephemeral node's session");
        assert_eq!(session_lines(ServiceWhat::Granted, session), 1, "{session}");
    }
    assert!(
        record
            .iter()
            .any(|s| s.what == ServiceWhat::Renewed && s.key.is_none()),
        "sessions renewed in the record: {record:?}"
    );
}

#[test]
fn rediss_record_maps_every_grant_to_the_process_that_was_told_it_held_the_lock() {
    every_grant_is_in_the_record("t-service-redis", "redis-lock", |g, s| {
        s.value == g.lease && s.node.as_deref() == Some("redis-1") && s.ttl_ms.is_some()
    });
}

#[test]
fn postgress_record_maps_every_grant_to_the_backend_that_holds_it() {
    every_grant_is_in_the_record("t-service-pg", "pg-advisory", |g, s| {
        let pid = g.lease.as_deref().and_then(|l| l.strip_prefix("pid "));
        let pid = pid.and_then(|p| p.split_once(' ')).map(|(p, _)| p);
        pid.is_some() && s.owner.as_deref() == pid
    });
}

#[test]
fn sentinels_record_names_the_master_the_failover_moved_the_lock_to() {
    let name = "t-service-sentinel";
    let (history, record) = run_and_read(
        name,
        &format!(
            "name: {name}\nrecipe: redis-sentinel\ntime_limit: 20s\nnemesis_timeline:\n  \
             - at 3s start failover for 12s\n"
        ),
    );
    let switches: Vec<&ServiceEntry> = (record.iter())
        .filter(|s| s.what == ServiceWhat::Master)
        .collect();
    // A quorum of the three sentinels agreed, and each announces the switch it saw.
    assert!(
        switches.len() >= 2,
        "the sentinels announced the failover: {record:?}"
    );
    let master = switches[0].value.clone().expect("the new master");
    for s in &switches {
        assert!(
            s.node
                .as_deref()
                .is_some_and(|n| n.starts_with("sentinel-")),
            "{s:?}"
        );
        assert_eq!(
            s.value.as_ref(),
            Some(&master),
            "one new master: {switches:?}"
        );
    }
    assert_ne!(master, "redis-1", "the master moved off redis-1");
    // The lock moved with it: a grant after the switch has its key on the new master.
    let switched = switches[0].time;
    let moved = history
        .iter()
        .filter(|e| (e.kind, &e.f) == (OpType::Ok, &F::Acquire) && e.time > switched)
        .any(|g| {
            record.iter().any(|s| {
                s.what == ServiceWhat::Put
                    && s.value == g.lease
                    && s.node.as_deref() == Some(master.as_str())
            })
        });
    assert!(
        moved,
        "a grant after the switch was put on {master}: {record:?}"
    );
    assert_eq!(labelled_containers(name), "", "the run left nothing behind");
}
