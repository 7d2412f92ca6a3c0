//! The Redis observer: each server's keyspace notifications, one stream per server (the
//! single master, Redlock's five masters, Sentinel's master and replicas), since each server
//! keeps its own keys and no order spans them (each sentinel's failovers are
//! [`super::sentinel`]'s). Every server runs with `notify-keyspace-events`
//! on its command line, so a restarted one keeps announcing.
//!
//! A notification names only the key and the event. On a `set` or an `expire` the observer
//! reads the key's value and time to live at once, on a second connection: a key deleted and set
//! again within that round trip is recorded with its later value. Redis announces a `SET … PX`
//! as a `set` followed by an `expire`, so a put is followed by a `renewed` line of the same
//! value. An expiry is recorded when the server removed the key (its active expiry samples ten
//! times a second, or a read found the key expired), which can be later than the moment its
//! time to live ran out; `ttl_ms` on the put or renewal says when that was due.
//!
//! Redis keeps no notifications for a subscriber that was away: a subscription that broke is a
//! gap of that server until it is subscribed again. Every second a message published on the
//! observer's own channel times the round trip through the server's notification path
//! (`progress`), which bounds how late a change reached the record.

use super::Record;
use containers::cluster::probe::redis_connection;
use containers::cluster::ClusterHandle;
use containers::docker::{Node, Role};
use futures::StreamExt;
use redis::aio::MultiplexedConnection;
use results::service_log::{ServiceEntry, ServiceWhat};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::time::Instant;

/// How often the observer times a round trip through the notification path.
const PROGRESS: Duration = Duration::from_secs(1);

/// How long the observer waits for a connection or a key's read.
const ASK: Duration = Duration::from_secs(1);

/// The observer's own channel, for its round trips.
const PROBE_CHANNEL: &str = "fencecheck:observer";

/// Keyspace notifications of database 0 arrive on `__keyspace@0__:<key>`.
const KEYSPACE: &str = "__keyspace@0__:";

/// Follows every Redis server of the cluster (not its sentinels) until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    let names: Vec<String> = servers(&cluster).iter().map(|n| n.name.clone()).collect();
    for name in &names {
        out.set_following(name, false);
    }
    futures::future::join_all(
        names
            .into_iter()
            .map(|name| follow_server(&cluster, &out, name)),
    )
    .await;
}

/// The cluster's Redis servers (not its sentinels), as they are now.
fn servers(cluster: &RwLock<ClusterHandle>) -> Vec<Node> {
    let cluster = cluster.read().unwrap_or_else(|p| p.into_inner());
    cluster
        .nodes
        .iter()
        .filter(|n| matches!(n.role, Role::Master | Role::Replica))
        .cloned()
        .collect()
}

/// `redis-1` of `fc-<run>-redis-1`: the name faults give the node.
pub(super) fn short(name: &str) -> String {
    let mut parts = name.rsplitn(3, '-');
    match (parts.next(), parts.next()) {
        (Some(n), Some(kind)) => format!("{kind}-{n}"),
        _ => name.to_string(),
    }
}

/// Follows one server, subscribing again whenever the subscription breaks.
async fn follow_server(cluster: &RwLock<ClusterHandle>, out: &Record, name: String) {
    let what = format!("the subscription to {name}");
    loop {
        let why = subscribe(cluster, out, &name).await;
        out.broke(&name, Some(&short(&name)), &what, &why).await;
    }
}

/// A subscriber's connection to the server (or sentinel) at `endpoint`.
pub(super) async fn pubsub(endpoint: &str) -> Result<redis::aio::PubSub, String> {
    let client = redis::Client::open(format!("redis://{endpoint}/")).map_err(|e| e.to_string())?;
    match tokio::time::timeout(ASK, client.get_async_pubsub()).await {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(format!("connecting: {e}")),
        Err(_) => Err(format!("connecting: no answer within {ASK:?}")),
    }
}

/// One subscription to the server called `name`, until it breaks: the reason.
async fn subscribe(cluster: &RwLock<ClusterHandle>, out: &Record, name: &str) -> String {
    let Some(node) = servers(cluster).into_iter().find(|n| n.name == name) else {
        return format!("{name} is no longer in the cluster");
    };
    let Some(endpoint) = node.host_endpoint() else {
        return format!("{name} publishes no client port");
    };
    let mut pubsub = match pubsub(&endpoint).await {
        Ok(p) => p,
        Err(e) => return e,
    };
    let subscribed = tokio::time::timeout(ASK, async {
        pubsub.psubscribe(format!("{KEYSPACE}*")).await?;
        pubsub.subscribe(PROBE_CHANNEL).await
    })
    .await;
    match subscribed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return format!("subscribing: {e}"),
        Err(_) => return format!("subscribing: no answer within {ASK:?}"),
    }
    let mut reader = match redis_connection(&node).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let node_name = short(name);
    let mut e = ServiceEntry::new(out.now(), ServiceWhat::Watching);
    e.node = Some(node_name.clone());
    out.write(&e);
    out.set_following(name, true);

    let mut stream = pubsub.into_on_message();
    let mut tick = tokio::time::interval(PROGRESS);
    let mut probe: u64 = 0;
    let mut asked: Option<(u64, Instant)> = None;
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if asked.is_none() {
                    probe += 1;
                    asked = Some((probe, Instant::now()));
                    // Sent on its own task: a frozen server holds the answer, not the observer.
                    let mut sender = reader.clone();
                    tokio::spawn(async move {
                        let _: redis::RedisResult<i64> = redis::cmd("PUBLISH")
                            .arg(PROBE_CHANNEL)
                            .arg(probe)
                            .query_async(&mut sender)
                            .await;
                    });
                }
            }
            message = stream.next() => {
                let Some(message) = message else {
                    return "the server closed the subscription".into();
                };
                let channel = message.get_channel_name();
                if channel == PROBE_CHANNEL {
                    let echoed: Option<u64> = message.get_payload().ok();
                    if let Some((sent, at)) = asked.filter(|(sent, _)| Some(*sent) == echoed) {
                        let mut e = ServiceEntry::new(out.now(), ServiceWhat::Progress);
                        e.node = Some(node_name.clone());
                        e.lag_ns = Some(at.elapsed().as_nanos() as u64);
                        e.revision = Some(sent as i64);
                        out.write(&e);
                        asked = None;
                    }
                    continue;
                }
                let (Some(key), Ok(event)) =
                    (channel.strip_prefix(KEYSPACE), message.get_payload::<String>())
                else {
                    continue;
                };
                take(out, &mut reader, &node_name, key, &event).await;
            }
        }
    }
}

/// Records one notification: a lock key set, renewed, deleted or expired. Other events
/// (a fence counter's `incrby`) are not the lock's and are left out.
async fn take(
    out: &Record,
    reader: &mut MultiplexedConnection,
    node: &str,
    key: &str,
    event: &str,
) {
    let what = match event {
        "set" => ServiceWhat::Put,
        "expire" => ServiceWhat::Renewed,
        "del" => ServiceWhat::Delete,
        "expired" | "evicted" => ServiceWhat::Expired,
        _ => return,
    };
    let mut e = ServiceEntry::new(out.now(), what);
    e.node = Some(node.to_string());
    e.key = Some(key.to_string());
    if matches!(what, ServiceWhat::Put | ServiceWhat::Renewed) {
        // One round trip, not a transaction: a change between the two reads is announced and
        // read again, and MULTI/EXEC doubled the commands each notification costs the server.
        let mut pipe = redis::pipe();
        pipe.get(key).pttl(key);
        let read = pipe.query_async::<(Option<String>, i64)>(reader);
        match tokio::time::timeout(ASK, read).await {
            Ok(Ok((value, ttl))) => {
                // PTTL -2: the key went between the two reads (-1: it has no expiry).
                if value.is_some() && ttl == -2 {
                    e.error = Some(
                        "the key was deleted between the reads of its value and its time to live"
                            .into(),
                    );
                }
                e.value = value;
                e.ttl_ms = u64::try_from(ttl).ok();
            }
            Ok(Err(err)) => e.error = Some(format!("reading the key: {err}")),
            Err(_) => e.error = Some(format!("reading the key: no answer within {ASK:?}")),
        }
    }
    out.write(&e);
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn a_servers_short_name_is_the_one_faults_give_it() {
        assert_eq!(short("fc-r1a2-redis-1"), "redis-1");
        assert_eq!(short("fc-run-7-redis-3"), "redis-3");
        assert_eq!(short("redis"), "redis");
    }
}
