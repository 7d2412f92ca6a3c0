//! etcd's leases beside its keys: a watch shows a key's lease ID but not the lease itself, whose
//! grant, keep-alives and end are not changes of any key. So the observer reads the service's
//! leases (`LeaseLeases`, then each one's `LeaseTimeToLive`) every [`POLL`] and records what
//! changed since the read before: a lease not seen before (`granted`, with the time to live it
//! was granted), one gone (`ended`: revoked or run out, with its remaining time at the last
//! read), and one renewed (`renewed`). etcd counts a lease's remaining time in whole seconds,
//! so each read bounds when the lease would run out to a span of a second: a lease read to run
//! out later than the reads before allowed was renewed since: a keep-alive reached the service,
//! or a new leader extended its leases, as etcd does at an election.
//! Keep-alives less than a second apart are seen as one.
//!
//! Its own stream (`leases`, written as the `node` of its `watching` and `gap` lines): a read
//! that fails is a gap of the leases until a read succeeds again, and that read's differences
//! are dated when seen.

use super::Record;
use containers::cluster::ClusterHandle;
use etcd_client::{Client, ConnectOptions};
use results::service_log::{ServiceEntry, ServiceWhat};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// How often the observer reads the leases.
const POLL: Duration = Duration::from_millis(250);

/// How long one read may take before the observer counts it failed.
const ASK: Duration = Duration::from_secs(1);

/// The stream's name, and the `node` of its `watching` and `gap` lines.
pub(super) const STREAM: &str = "leases";

/// One lease as the reads found it.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// Seconds of time to live remaining at the last read, and granted.
    remaining: i64,
    granted: i64,
    /// The earliest and the latest moment (the run's clock) the last read allows for its end.
    ends_from: u64,
    ends_by: u64,
}

/// Reads the leases until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    let mut known: BTreeMap<i64, Lease> = BTreeMap::new();
    loop {
        let why = read(&cluster, &out, &mut known).await;
        out.broke(STREAM, Some(STREAM), "reading etcd's leases", &why)
            .await;
    }
}

/// Reads every [`POLL`] until a read fails: the reason.
async fn read(
    cluster: &RwLock<ClusterHandle>,
    out: &Record,
    known: &mut BTreeMap<i64, Lease>,
) -> String {
    let options = ConnectOptions::new()
        .with_connect_timeout(ASK)
        .with_timeout(ASK);
    let mut client = match super::etcd::connect(cluster, options).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let mut now = match leases(&mut client, out).await {
            Ok(now) => now,
            Err(e) => return e,
        };
        if !out.following(STREAM) {
            let mut e = ServiceEntry::new(out.now(), ServiceWhat::Watching);
            e.node = Some(STREAM.into());
            out.write(&e);
            out.set_following(STREAM, true);
        }
        let at = out.now();
        let line = |what: ServiceWhat, id: i64, seconds: i64| {
            let mut e = ServiceEntry::new(at, what);
            e.owner = Some(format!("{id:x}"));
            e.ttl_ms = Some(seconds.max(0) as u64 * 1000);
            e
        };
        for (id, was) in known.iter() {
            if !now.contains_key(id) {
                out.write(&line(ServiceWhat::Ended, *id, was.remaining));
            }
        }
        for (id, lease) in now.iter_mut() {
            match known.get(id) {
                None => out.write(&line(ServiceWhat::Granted, *id, lease.granted)),
                Some(was) if lease.ends_from > was.ends_by => {
                    out.write(&line(ServiceWhat::Renewed, *id, lease.remaining))
                }
                // Not renewed: the reads together bound its end more tightly.
                Some(was) => lease.ends_by = lease.ends_by.min(was.ends_by),
            }
        }
        *known = now;
    }
}

/// The service's leases now; a lease gone between the list and its own read is left out.
async fn leases(client: &mut Client, out: &Record) -> Result<BTreeMap<i64, Lease>, String> {
    const S: u64 = 1_000_000_000;
    let ids: Vec<i64> = match client.leases().await {
        Ok(r) => r.leases().iter().map(|l| l.id()).collect(),
        Err(e) => return Err(format!("listing the leases: {e}")),
    };
    let mut now = BTreeMap::new();
    for id in ids {
        let asked = out.now();
        match client.lease_time_to_live(id, None).await {
            Ok(r) if r.ttl() >= 0 => {
                // The service read the whole seconds left between the question and the answer.
                let left = r.ttl() as u64 * S;
                now.insert(
                    id,
                    Lease {
                        remaining: r.ttl(),
                        granted: r.granted_ttl(),
                        ends_from: asked + left,
                        ends_by: out.now() + left + S,
                    },
                );
            }
            Ok(_) => {}
            Err(e) => return Err(format!("reading lease {id:x}: {e}")),
        }
    }
    Ok(now)
}
