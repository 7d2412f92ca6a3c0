//! The etcd observer: one watch over every key, with each deleted key's last value (`prev_kv`),
//! so a delete still names the key's create revision and lease. A watch that broke (a node
//! frozen, killed or cut off, a reconnect) is taken up again from the revision after the last one
//! recorded, which etcd replays in full unless it was compacted meanwhile: only then is there a
//! gap. Every second the observer asks the stream for its progress; the round trip, written as a
//! `progress` line, bounds how late a change committed before the question reached the record.

use super::Record;
use containers::cluster::ClusterHandle;
use etcd_client::{Client, ConnectOptions, EventType, KeyValue, WatchOptions, WatchResponse};
use results::service_log::{ServiceEntry, ServiceWhat};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::time::Instant;

/// How long the observer waits before it connects again after the watch broke.
const RETRY: Duration = Duration::from_millis(200);

/// The name of etcd's one stream.
pub(super) const STREAM: &str = "etcd";

/// How often the observer asks the stream for its progress.
const PROGRESS: Duration = Duration::from_secs(1);

/// Follows the service until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    // The next revision the record needs; none before the first watch began.
    let mut next: Option<i64> = None;
    out.set_following(STREAM, false);
    loop {
        let why = watch(&cluster, &out, &mut next).await;
        if out.following(STREAM) {
            out.set_following(STREAM, false);
            out.log.line(&format!(
                "service.jsonl: the etcd watch broke ({why}); taking it up again from revision {}",
                next.map_or("now".to_string(), |n| n.to_string())
            ));
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// One watch, from `next` on, until it breaks: the reason.
async fn watch(
    cluster: &Arc<RwLock<ClusterHandle>>,
    out: &Record,
    next: &mut Option<i64>,
) -> String {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(1))
        .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1));
    let mut client = match connect(cluster, options).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let mut wanted = WatchOptions::new().with_all_keys().with_prev_key();
    if let Some(n) = *next {
        wanted = wanted.with_start_revision(n);
    }
    let (mut ask, mut stream) = match client.watch("", Some(wanted)).await {
        Ok(s) => s.split(),
        Err(e) => return format!("watching: {e}"),
    };
    let mut asked: Option<Instant> = None;
    let mut tick = tokio::time::interval(PROGRESS);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if asked.is_none() && out.following(STREAM) {
                    if let Err(e) = ask.request_progress().await {
                        return format!("asking for progress: {e}");
                    }
                    asked = Some(Instant::now());
                }
            }
            message = stream.message() => match message {
                Ok(Some(r)) => {
                    if let Some(why) = take(&r, out, next, &mut asked) {
                        return why;
                    }
                }
                Ok(None) => return "the service ended the watch".into(),
                Err(e) => return e.to_string(),
            }
        }
    }
}

/// A client of the cluster's members as they are now; the error names them.
pub(super) async fn connect(
    cluster: &RwLock<ClusterHandle>,
    options: ConnectOptions,
) -> Result<Client, String> {
    let endpoints = cluster
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .endpoints();
    (Client::connect(&endpoints, Some(options)).await)
        .map_err(|e| format!("connecting to {}: {e}", endpoints.join(",")))
}

/// Records one response; the reason to start over, if it ends the watch.
fn take(
    r: &WatchResponse,
    out: &Record,
    next: &mut Option<i64>,
    asked: &mut Option<Instant>,
) -> Option<String> {
    let header = r.header().map(|h| h.revision());
    if r.canceled() {
        let compacted = r.compact_revision();
        if compacted > 0 {
            out.gap(
                None,
                &format!(
                "etcd compacted its history up to revision {compacted} while the watch was down"
            ),
            );
            *next = None;
        }
        return Some(format!("the watch was cancelled: {}", r.cancel_reason()));
    }
    if r.created() {
        let from = next.or(header.map(|h| h + 1)).unwrap_or(1);
        let mut e = ServiceEntry::new(out.now(), ServiceWhat::Watching);
        e.revision = Some(from);
        out.write(&e);
        *next = Some(from);
        out.set_following(STREAM, true);
        return None;
    }
    if r.events().is_empty() {
        if let Some(at) = asked.take() {
            let mut e = ServiceEntry::new(out.now(), ServiceWhat::Progress);
            e.lag_ns = Some(at.elapsed().as_nanos() as u64);
            e.revision = header;
            out.write(&e);
        }
        return None;
    }
    for ev in r.events() {
        let Some(kv) = ev.kv() else { continue };
        let (what, about) = match ev.event_type() {
            EventType::Put => (ServiceWhat::Put, Some(kv)),
            EventType::Delete => (ServiceWhat::Delete, ev.prev_kv()),
        };
        let mut e = ServiceEntry::new(out.now(), what);
        e.key = Some(String::from_utf8_lossy(kv.key()).into_owned());
        e.revision = Some(kv.mod_revision());
        if let Some(about) = about {
            describe(&mut e, about);
        }
        out.write(&e);
        *next = Some(kv.mod_revision() + 1);
    }
    None
}

/// The key's value, lease and create revision.
fn describe(e: &mut ServiceEntry, kv: &KeyValue) {
    e.value = Some(String::from_utf8_lossy(kv.value()).into_owned());
    e.created = Some(kv.create_revision());
    if kv.lease() != 0 {
        e.owner = Some(format!("{:x}", kv.lease()));
    }
}
