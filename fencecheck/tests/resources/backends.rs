//! Each real backend against its real store in a container: stale tokens rejected and newer
//! ones accepted, `none` accepting both, every request in `resource.jsonl` with its decision and
//! `highest_before`; then 8 clients × 2,000 random-token writes whose log re-decides to the same
//! decisions, misses nothing, and (per key) follows the store's own decision order. The Redis and
//! PostgreSQL tests also run the counter workload on the same store.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns: unwrap is how a test fails

use crate::support::resource::{check_log, hammer, read_log, run_dir, write, Chooser, Docker};
use rand::Rng;
use results::{RunClock, WriteResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use workloads::resource::Audit;
use workloads::resource::{
    start_server, BackendKind, Endpoints, Mode, ResourceClient, Server, ServerHandle,
};

async fn serve(
    kind: BackendKind,
    mode: Mode,
    at: &Endpoints,
    log: &std::path::Path,
) -> (Arc<Server>, ServerHandle, ResourceClient) {
    let (server, handle) = start_server(
        kind,
        mode,
        at,
        log,
        RunClock::start(),
        "127.0.0.1:0",
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let client = ResourceClient::connect(&handle.local_addr.to_string())
        .await
        .unwrap();
    (server, handle, client)
}

/// The token-rule backends (postgres, redis-fenced): the same sequence as the register's.
async fn token_rule_semantics(kind: BackendKind, at: &Endpoints) {
    use WriteResult::*;
    let dir = run_dir(kind.as_str());
    let cases = [
        (
            Mode::Strict,
            [Accepted, RejectedStaleFence, Accepted, Accepted],
        ),
        (
            Mode::StrictIdempotent,
            [Accepted, RejectedStaleFence, Accepted, RejectedDuplicate],
        ),
        (Mode::None, [Accepted, Accepted, Accepted, Accepted]),
    ];
    for (mode, expected) in cases {
        let log = dir.join(format!("{}.jsonl", mode.as_str()));
        let (_s, _h, mut c) = serve(kind, mode, at, &log).await;
        let key = format!("sem-{}", mode.as_str());
        let writes = [
            write(&key, Some(5), "a"),
            write(&key, Some(3), "b"),
            write(&key, Some(7), "c"),
            write(&key, Some(9), "a"),
        ];
        let mut got = Vec::new();
        for w in &writes {
            got.push(c.write(w).await.unwrap());
        }
        assert_eq!(
            got.iter().map(|r| r.result).collect::<Vec<_>>(),
            expected,
            "{} mode {}",
            kind.as_str(),
            mode.as_str()
        );
        let hb: Vec<_> = got.iter().map(|r| r.highest_before).collect();
        assert_eq!(&hb[..3], &[None, Some(5), Some(5)]);
        let entries = read_log(&log);
        assert_eq!(entries.len(), 4, "every request is in the log");
        for (e, (w, r)) in entries.iter().zip(writes.iter().zip(&got)) {
            assert_eq!(
                (e.op_id.as_str(), e.token, e.result, e.highest_before),
                (w.op_id.as_str(), w.token, r.result, r.highest_before)
            );
        }
    }
}

/// 8 clients, 2,000 writes, random tokens, 4 keys, mode strict; returns the log.
async fn token_rule_hammer(kind: BackendKind, at: &Endpoints) -> Vec<results::ResourceEntry> {
    let log = run_dir(kind.as_str()).join("resource.jsonl");
    let (_s, handle, _c) = serve(kind, Mode::Strict, at, &log).await;
    let choose: Chooser = Arc::new(|rng, _| (Some(rng.random_range(1..=200)), None));
    let sent = hammer(
        &handle.local_addr.to_string(),
        8,
        2000,
        &["h0", "h1", "h2", "h3"],
        11,
        choose,
    )
    .await;
    let errors: Vec<_> = sent.iter().filter_map(|s| s.reply.as_ref().err()).collect();
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        errors.first()
    );
    let entries = check_log(&log, &sent, Audit::Exact(Mode::Strict));
    assert_eq!(entries.len(), 2000, "no request is missing from the log");
    assert!(entries.iter().filter(|e| !e.result.is_accepted()).count() > 500);
    entries
}

/// The counter workload on a real plain store: sequential read-increment-write counts exactly;
/// 8 concurrent unprotected increments (two holders at once, as under a pause) lose updates;
/// the same 8 serialized by a lock lose none. What a lock alone protects, on the real store.
async fn counter_workload_on(target: &str) {
    use workloads::counter::{connect, increment};
    let store: Arc<dyn workloads::counter::PlainStore> = Arc::from(connect(target).await.unwrap());
    for _ in 0..5 {
        increment(store.as_ref(), "seq").await.unwrap();
    }
    assert_eq!(store.read("seq").await.unwrap(), 5);
    let run = |key: &'static str, lock: Option<Arc<tokio::sync::Mutex<()>>>| {
        let store = store.clone();
        async move {
            let tasks: Vec<_> = (0..8)
                .map(|_| {
                    let (store, lock) = (store.clone(), lock.clone());
                    tokio::spawn(async move {
                        for _ in 0..25 {
                            let _held = match &lock {
                                Some(l) => Some(l.lock().await),
                                None => None,
                            };
                            increment(store.as_ref(), key).await.unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            store.read(key).await.unwrap()
        }
    };
    let unprotected = run("free", None).await;
    assert!(
        unprotected < 200,
        "8 x 25 unprotected increments should lose some, got {unprotected}"
    );
    assert_eq!(
        run("locked", Some(Arc::default())).await,
        200,
        "a held lock loses none"
    );
}

/// The store records each decision's attempt: `resolve` finds a decided attempt (with its
/// decision) and does not invent one that was never sent. This is what settles writes in doubt.
async fn resolve_finds_decided_attempts(
    kind: BackendKind,
    at: &Endpoints,
    mut w: workloads::resource::WriteRequest,
) {
    let store =
        workloads::resource::open_backend(kind, Mode::Strict, at, &[], Duration::from_secs(30))
            .await
            .unwrap();
    w.key = format!("resolve-{}", kind.as_str());
    let d = store.decide(&w, 1).await.unwrap();
    assert_eq!(store.resolve(&w, 1).await.unwrap(), Some(d.result));
    let mut stale = w.clone();
    stale.token = Some(0);
    stale.op_id = "stale".into();
    let d2 = store.decide(&stale, 2).await.unwrap();
    assert_eq!(d2.result, WriteResult::RejectedStaleFence);
    assert_eq!(
        store.resolve(&stale, 2).await.unwrap(),
        Some(WriteResult::RejectedStaleFence)
    );
    assert_eq!(
        store.resolve(&stale, 3).await.unwrap(),
        None,
        "attempt 3 was never sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_fenced_against_real_redis() {
    let mut docker = Docker::new("redis");
    let redis = docker.redis();
    docker.wait_for(
        &redis,
        "Ready to accept connections",
        Duration::from_secs(30),
    );
    let at = Endpoints {
        redis: Some(format!(
            "redis://127.0.0.1:{}",
            docker.host_port(&redis, 6379)
        )),
        ..Endpoints::default()
    };
    token_rule_semantics(BackendKind::RedisFenced, &at).await;
    token_rule_hammer(BackendKind::RedisFenced, &at).await;
    counter_workload_on(at.redis.as_deref().unwrap()).await;
    resolve_finds_decided_attempts(BackendKind::RedisFenced, &at, write("k", Some(3), "r")).await;
    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_against_real_postgresql() {
    let mut docker = Docker::new("pg");
    let pg = docker.postgres();
    docker.wait_for(
        &pg,
        "database system is ready to accept connections",
        Duration::from_secs(60),
    );
    let conn = format!(
        "host=127.0.0.1 port={} user=postgres",
        docker.host_port(&pg, 5432)
    );
    let at = Endpoints {
        postgres: Some(conn.clone()),
        postgres_connections: 4,
        ..Endpoints::default()
    };
    token_rule_semantics(BackendKind::Postgres, &at).await;
    let entries = token_rule_hammer(BackendKind::Postgres, &at).await;
    counter_workload_on(&conn).await;
    resolve_finds_decided_attempts(BackendKind::Postgres, &at, write("k", Some(3), "r")).await;

    // PostgreSQL's own ledger, written in the deciding transaction, lists each key's decisions
    // in the order it made them: the log must list them in that same order.
    let (client, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = client
        .query("SELECT key, op_id, result, highest_before FROM fence_ledger WHERE key LIKE 'h_' ORDER BY key, n", &[])
        .await
        .unwrap();
    let mut ledger: HashMap<String, Vec<(String, String, Option<i64>)>> = HashMap::new();
    for r in rows {
        ledger
            .entry(r.get(0))
            .or_default()
            .push((r.get(1), r.get(2), r.get(3)));
    }
    let mut logged: HashMap<String, Vec<(String, String, Option<i64>)>> = HashMap::new();
    for e in &entries {
        logged.entry(e.key.clone()).or_default().push((
            e.op_id.clone(),
            e.result.as_str().to_string(),
            e.highest_before.map(|h| h as i64),
        ));
    }
    assert_eq!(
        ledger, logged,
        "log order differs from PostgreSQL's decision order"
    );
    connections_come_back_after_termination(&conn, &client).await;
    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}

/// PostgreSQL closes every client connection (as a restart does, here by terminating their
/// backends): the resource and the counter store must open new ones for the next operations,
/// not fail for the rest of the run. At most one operation per old connection may fail.
async fn connections_come_back_after_termination(conn: &str, admin: &tokio_postgres::Client) {
    use workloads::resource::Postgres;
    use workloads::resource::Resource;
    let resource = Postgres::connect(conn, 2, Mode::Strict).await.unwrap();
    let counter = workloads::counter::connect(conn).await.unwrap();
    let first = resource.decide(&write("re", Some(1), "re-1"), 1).await;
    assert_eq!(first.unwrap().result, WriteResult::Accepted);
    counter.write("re", 7).await.unwrap();
    let killed: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        killed >= 3,
        "terminated {killed} backends, expected the resource's and counter's"
    );
    let (mut failures, mut accepted) = (Vec::new(), 0);
    for attempt in 2..12u64 {
        match resource
            .decide(
                &write("re", Some(attempt), &format!("re-{attempt}")),
                attempt,
            )
            .await
        {
            Ok(d) => {
                assert_eq!(d.result, WriteResult::Accepted);
                accepted += 1;
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(
        failures.len() <= 2 && accepted >= 8,
        "after the termination: {accepted} accepted, failures {failures:?}"
    );
    let mut read = counter.read("re").await;
    if read.is_err() {
        read = counter.read("re").await;
    }
    assert_eq!(read.unwrap(), 7, "the counter store did not reconnect");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn etcd_guard_against_real_etcd() {
    use WriteResult::*;
    let mut docker = Docker::new("etcd");
    let etcd = docker.etcd();
    docker.wait_for(
        &etcd,
        "ready to serve client requests",
        Duration::from_secs(30),
    );
    let endpoint = format!("127.0.0.1:{}", docker.host_port(&etcd, 2379));
    let at = Endpoints {
        etcd: vec![endpoint.clone()],
        ..Endpoints::default()
    };
    let mut kv = etcd_client::Client::connect([endpoint.as_str()], None)
        .await
        .unwrap();
    // (Re)creates a lock key as a lock client would and returns its create revision: the token.
    let acquire = async |kv: &mut etcd_client::Client, lock: &str| -> u64 {
        kv.delete(lock, None).await.unwrap();
        kv.put(lock, "holder", None)
            .await
            .unwrap()
            .header()
            .unwrap()
            .revision() as u64
    };
    let dir = run_dir("etcd");
    let guarded = |key: &str, lock: &str, token: Option<u64>, op: &str| {
        let mut w = write(key, token, op);
        w.lock_key = Some(lock.to_string());
        w
    };

    // strict: the guard admits only the lock's current create revision.
    let (_s, _h, mut c) = serve(
        BackendKind::EtcdGuard,
        Mode::Strict,
        &at,
        &dir.join("strict.jsonl"),
    )
    .await;
    let r1 = acquire(&mut kv, "locks/s").await;
    let r2 = acquire(&mut kv, "locks/s").await;
    let mut got = vec![c
        .write(&guarded("s", "locks/s", Some(r2), "a"))
        .await
        .unwrap()];
    got.push(
        c.write(&guarded("s", "locks/s", Some(r1), "b"))
            .await
            .unwrap(),
    );
    let r3 = acquire(&mut kv, "locks/s").await;
    got.push(
        c.write(&guarded("s", "locks/s", Some(r3), "c"))
            .await
            .unwrap(),
    );
    kv.delete("locks/s", None).await.unwrap(); // the lease expired; nobody holds the lock
    got.push(
        c.write(&guarded("s", "locks/s", Some(r3), "d"))
            .await
            .unwrap(),
    );
    let results: Vec<_> = got.iter().map(|r| (r.result, r.highest_before)).collect();
    assert_eq!(
        results,
        vec![
            (Accepted, None),
            (RejectedStaleFence, Some(r2)),
            (Accepted, Some(r2)),
            (RejectedStaleFence, Some(r3))
        ]
    );
    assert_eq!(read_log(&dir.join("strict.jsonl")).len(), 4);
    // A write without the lock key cannot be guarded: an error, not a decision.
    assert!(c.write(&write("s", Some(r3), "e")).await.is_err());

    // strict-idempotent: a replayed op_id is a duplicate even with a valid guard.
    let (_s, _h, mut c) = serve(
        BackendKind::EtcdGuard,
        Mode::StrictIdempotent,
        &at,
        &dir.join("idem.jsonl"),
    )
    .await;
    let r = acquire(&mut kv, "locks/i").await;
    assert_eq!(
        c.write(&guarded("i", "locks/i", Some(r), "a"))
            .await
            .unwrap()
            .result,
        Accepted
    );
    assert_eq!(
        c.write(&guarded("i", "locks/i", Some(r), "a"))
            .await
            .unwrap()
            .result,
        RejectedDuplicate
    );

    // none: stale and tokenless writes go through.
    let (_s, _h, mut c) = serve(
        BackendKind::EtcdGuard,
        Mode::None,
        &at,
        &dir.join("none.jsonl"),
    )
    .await;
    let old = acquire(&mut kv, "locks/n").await;
    let new = acquire(&mut kv, "locks/n").await;
    assert_eq!(
        c.write(&guarded("n", "locks/n", Some(new), "a"))
            .await
            .unwrap()
            .result,
        Accepted
    );
    let stale = c
        .write(&guarded("n", "locks/n", Some(old), "b"))
        .await
        .unwrap();
    assert_eq!((stale.result, stale.highest_before), (Accepted, Some(new)));
    assert_eq!(
        c.write(&guarded("n", "locks/n", None, "c"))
            .await
            .unwrap()
            .highest_before,
        Some(new),
        "the fence keeps the highest"
    );

    // 8 clients × 2,000 writes while a churner keeps re-acquiring the 4 locks.
    let log = dir.join("resource.jsonl");
    let (_s, handle, _c) = serve(BackendKind::EtcdGuard, Mode::Strict, &at, &log).await;
    let revisions: Arc<Mutex<HashMap<String, Vec<u64>>>> = Arc::default();
    let keys = ["h0", "h1", "h2", "h3"];
    for k in keys {
        let r = acquire(&mut kv, &format!("locks/{k}")).await;
        revisions.lock().unwrap().insert(k.to_string(), vec![r]);
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let (mut kv, revisions, stop) = (kv.clone(), revisions.clone(), stop.clone());
        tokio::spawn(async move {
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let k = keys[i % keys.len()];
                i += 1;
                kv.delete(format!("locks/{k}"), None).await.unwrap();
                let r = kv
                    .put(format!("locks/{k}"), "holder", None)
                    .await
                    .unwrap()
                    .header()
                    .unwrap()
                    .revision() as u64;
                revisions.lock().unwrap().get_mut(k).unwrap().push(r);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let seen = revisions.clone();
    let choose: Chooser = Arc::new(move |rng, key| {
        let revs = seen.lock().unwrap();
        let revs = &revs[key];
        let token = if rng.random_bool(0.6) {
            revs[revs.len() - 1]
        } else {
            revs[rng.random_range(0..revs.len())]
        };
        (Some(token), Some(format!("locks/{key}")))
    });
    let sent = hammer(&handle.local_addr.to_string(), 8, 2000, &keys, 13, choose).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn.await.unwrap();
    assert!(
        sent.iter().all(|s| s.reply.is_ok()),
        "every write was decided"
    );
    let entries = check_log(&log, &sent, Audit::Guard);
    assert_eq!(entries.len(), 2000, "no request is missing from the log");
    let accepted = entries.iter().filter(|e| e.result.is_accepted()).count();
    assert!(
        accepted > 100 && accepted < 1900,
        "a mix of decisions ({accepted} accepted)"
    );
    let r = acquire(&mut kv, "locks/resolve-etcd-guard").await;
    let w = guarded("k", "locks/resolve-etcd-guard", Some(r), "r");
    resolve_finds_decided_attempts(BackendKind::EtcdGuard, &at, w).await;
    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}
