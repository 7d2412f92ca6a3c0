//! The ZooKeeper observer: a session of its own with one persistent recursive watch on the whole
//! tree, so every lock recipe's and library's nodes are seen wherever they live. An event names
//! only the path; on a creation or a change the observer reads the node at once, and records its
//! czxid (`created`), mzxid (`revision`), ephemeral owner session (`owner`, hex) and data
//! (`value`). A node deleted before that read is recorded with the read's error; a deleted node
//! is recorded with what the observer read of it while it stood.
//!
//! ZooKeeper 3.8 sends no zxid with an event and does not replay a persistent watch's events
//! that fell while the session was disconnected, so a disconnection is a gap until the session
//! is connected again (another server, the same session). Every second the observer writes its
//! own node, `/fencecheck-observer`, and times the round trip until the watch reports it
//! (`progress`): the only write it makes, outside every lock's path.

use super::Record;
use containers::cluster::ClusterHandle;
use results::service_log::{ServiceEntry, ServiceWhat};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::time::Instant;
use zookeeper_client as zk;

/// How long the observer waits before it opens a new session after the last one ended.
const RETRY: Duration = Duration::from_millis(200);

/// How often the observer times a round trip through the watch.
const PROGRESS: Duration = Duration::from_secs(1);

/// How long the observer waits for a connection or a node's read.
const ASK: Duration = Duration::from_secs(2);

/// The observer's session timeout: long enough to ride out a frozen server while the client
/// moves to another.
const SESSION: Duration = Duration::from_secs(10);

/// The observer's own node, for its round trips.
const PROBE: &str = "/fencecheck-observer";

/// The name of the one stream.
pub(super) const STREAM: &str = "zookeeper";

/// What the observer read of a node while it stood: its czxid and owner session.
type Seen = BTreeMap<String, (i64, Option<String>)>;

/// Follows the ensemble until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    out.set_following(STREAM, false);
    let mut seen = Seen::new();
    loop {
        let why = session(&cluster, &out, &mut seen).await;
        if out.following(STREAM) {
            out.gap(None, &format!("the observer's session ended: {why}"));
        }
        out.log.line(&format!(
            "service.jsonl: the ZooKeeper observer's session ended ({why}); opening another"
        ));
        tokio::time::sleep(RETRY).await;
    }
}

/// One session, until it ends: the reason.
async fn session(cluster: &RwLock<ClusterHandle>, out: &Record, seen: &mut Seen) -> String {
    let endpoints = cluster
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .endpoints()
        .join(",");
    let connect = zk::Client::connector()
        .with_session_timeout(SESSION)
        .with_connection_timeout(ASK)
        .connect(&endpoints);
    let client = match tokio::time::timeout(ASK * 2, connect).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return format!("connecting to {endpoints}: {e}"),
        Err(_) => return format!("connecting to {endpoints}: no answer within {:?}", ASK * 2),
    };
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    match client.create(PROBE, b"0", &persistent).await {
        Ok(_) | Err(zk::Error::NodeExists) => {}
        Err(e) => return format!("creating {PROBE}: {e}"),
    }
    let mut watcher = match client
        .watch("/", zk::AddWatchMode::PersistentRecursive)
        .await
    {
        Ok(w) => w,
        Err(e) => return format!("watching /: {e}"),
    };
    out.write(&ServiceEntry::new(out.now(), ServiceWhat::Watching));
    out.set_following(STREAM, true);

    let mut tick = tokio::time::interval(PROGRESS);
    let mut asked: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if asked.is_none() && out.following(STREAM) {
                    asked = Some(Instant::now());
                    // Sent on its own task: a frozen server holds the answer, not the observer.
                    let writer = client.clone();
                    tokio::spawn(async move {
                        let _ = writer.set_data(PROBE, b"1", None).await;
                    });
                }
            }
            event = watcher.changed() => {
                if let Some(why) = take(&client, out, seen, &event, &mut asked).await {
                    return why;
                }
            }
        }
    }
}

/// Records one event; the reason to open a new session, if it ends this one.
async fn take(
    client: &zk::Client,
    out: &Record,
    seen: &mut Seen,
    event: &zk::WatchedEvent,
    asked: &mut Option<Instant>,
) -> Option<String> {
    let path = event.path.as_str();
    match event.event_type {
        zk::EventType::Session => match event.session_state {
            zk::SessionState::Disconnected => {
                if out.following(STREAM) {
                    out.gap(None, "the observer's session was disconnected");
                }
                *asked = None;
            }
            zk::SessionState::SyncConnected if !out.following(STREAM) => {
                out.write(&ServiceEntry::new(out.now(), ServiceWhat::Watching));
                out.set_following(STREAM, true);
            }
            state if state.is_terminated() => return Some(format!("the session is {state:?}")),
            _ => {}
        },
        zk::EventType::NodeDataChanged if path == PROBE => {
            if let Some(at) = asked.take() {
                let mut e = ServiceEntry::new(out.now(), ServiceWhat::Progress);
                e.lag_ns = Some(at.elapsed().as_nanos() as u64);
                out.write(&e);
            }
        }
        _ if path == PROBE || path.starts_with("/zookeeper") => {}
        zk::EventType::NodeCreated | zk::EventType::NodeDataChanged => {
            let mut e = ServiceEntry::new(out.now(), ServiceWhat::Put);
            e.key = Some(path.to_string());
            match tokio::time::timeout(ASK, client.get_data(path)).await {
                Ok(Ok((data, stat))) => {
                    let owner =
                        (stat.ephemeral_owner != 0).then(|| format!("{:x}", stat.ephemeral_owner));
                    e.created = Some(stat.czxid);
                    e.revision = Some(stat.mzxid);
                    e.owner = owner.clone();
                    e.value = Some(String::from_utf8_lossy(&data).into_owned());
                    seen.insert(path.to_string(), (stat.czxid, owner));
                }
                Ok(Err(err)) => e.error = Some(format!("reading the node: {err}")),
                Err(_) => e.error = Some(format!("reading the node: no answer within {ASK:?}")),
            }
            out.write(&e);
        }
        zk::EventType::NodeDeleted => {
            let mut e = ServiceEntry::new(out.now(), ServiceWhat::Delete);
            e.key = Some(path.to_string());
            if let Some((created, owner)) = seen.remove(path) {
                e.created = Some(created);
                e.owner = owner;
            }
            out.write(&e);
        }
        zk::EventType::NodeChildrenChanged => {}
    }
    None
}
