//! The PostgreSQL observer: advisory locks have no change stream, so the observer reads the
//! granted advisory locks in `pg_locks` every [`POLL`] and records what differs from the read
//! before: a lock granted to a backend is a put (`owner` the backend's pid, `key` the 64-bit
//! advisory key, or `classid,objid` for the two-key form), a lock let go a delete. A hold that
//! began and ended between two reads is not in the record, and a change reaches it up to one
//! read's span late: each `progress` line's lag is the time from the start of the read before
//! to the end of this one, measured.
//!
//! A connection that broke is a gap until a new one reads again; the first read after it is
//! compared with the last one before, so its lines say what changed across the gap, dated when
//! it was seen.

use super::Record;
use containers::cluster::{postgres_connection_string, ClusterHandle};
use results::service_log::{ServiceEntry, ServiceWhat};
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::time::Instant;

/// How often the observer reads `pg_locks`.
const POLL: Duration = Duration::from_millis(20);

/// How long the observer waits before it connects again after the connection broke.
const RETRY: Duration = Duration::from_millis(200);

/// How long a read may take before the connection counts as broken.
const ASK: Duration = Duration::from_secs(2);

/// How often a `progress` line records the lag.
const PROGRESS: Duration = Duration::from_secs(1);

/// The name of the one stream.
const STREAM: &str = "postgres";

/// Granted advisory locks: key and holding backend.
const HELD: &str = "SELECT CASE WHEN objsubid = 1 \
                    THEN ((classid::bigint << 32) | objid::bigint)::text \
                    ELSE classid::text || ',' || objid::text END, pid \
                    FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid IS NOT NULL";

/// One read: (key, pid) of every granted advisory lock.
type Held = BTreeSet<(String, i32)>;

/// Follows the server until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    out.set_following(STREAM, false);
    let mut last = Held::new();
    loop {
        let why = read_on(&cluster, &out, &mut last).await;
        if out.following(STREAM) {
            out.gap(None, &format!("the connection to PostgreSQL broke: {why}"));
            out.log.line(&format!(
                "service.jsonl: the connection to PostgreSQL broke ({why}); connecting again"
            ));
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Reads on one connection until it breaks: the reason.
async fn read_on(cluster: &RwLock<ClusterHandle>, out: &Record, last: &mut Held) -> String {
    let target = {
        let cluster = cluster.read().unwrap_or_else(|p| p.into_inner());
        let target = cluster
            .client_nodes()
            .next()
            .and_then(postgres_connection_string);
        target
    };
    let Some(target) = target else {
        return "the server publishes no port".into();
    };
    let connected =
        tokio::time::timeout(ASK, tokio_postgres::connect(&target, tokio_postgres::NoTls));
    let (client, connection) = match connected.await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return format!("connecting: {e}"),
        Err(_) => return format!("connecting: no answer within {ASK:?}"),
    };
    let driver = tokio::spawn(connection);
    let why = poll(&client, out, last).await;
    driver.abort();
    why
}

async fn poll(client: &tokio_postgres::Client, out: &Record, last: &mut Held) -> String {
    let statement = match client.prepare(HELD).await {
        Ok(s) => s,
        Err(e) => return format!("preparing the read: {e}"),
    };
    let mut before = Instant::now();
    let mut reported = Instant::now();
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let start = Instant::now();
        let rows = match tokio::time::timeout(ASK, client.query(&statement, &[])).await {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => return format!("reading pg_locks: {e}"),
            Err(_) => return format!("reading pg_locks: no answer within {ASK:?}"),
        };
        let now: Held = rows
            .iter()
            .filter_map(|r| Some((r.try_get::<_, String>(0).ok()?, r.try_get(1).ok()?)))
            .collect();
        if !out.following(STREAM) {
            out.write(&ServiceEntry::new(out.now(), ServiceWhat::Watching));
            out.set_following(STREAM, true);
        }
        let time = out.now();
        for (key, pid) in now.difference(last) {
            out.write(&change(time, ServiceWhat::Put, key, *pid));
        }
        for (key, pid) in last.difference(&now) {
            out.write(&change(time, ServiceWhat::Delete, key, *pid));
        }
        *last = now;
        if reported.elapsed() >= PROGRESS {
            let mut e = ServiceEntry::new(time, ServiceWhat::Progress);
            e.lag_ns = Some(before.elapsed().as_nanos() as u64);
            out.write(&e);
            reported = Instant::now();
        }
        before = start;
    }
}

fn change(time: u64, what: ServiceWhat, key: &str, pid: i32) -> ServiceEntry {
    let mut e = ServiceEntry::new(time, what);
    e.key = Some(format!("advisory {key}"));
    e.owner = Some(pid.to_string());
    e
}
