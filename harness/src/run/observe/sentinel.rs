//! Sentinel's own view beside its servers' keys: which server each sentinel calls the master.
//! A Sentinel lock lives on whichever server is master now, so a failover moves the lock to a
//! replica that may not have its key yet; the record of the servers' keys alone does not say
//! when clients were sent elsewhere. Each sentinel announces a failover it saw end on its
//! `+switch-master` channel (`<master name> <old host> <old port> <new host> <new port>`), and
//! the observer records it as a `master` line: `node` the sentinel, `value` the server it now
//! calls master (by the name faults give it).
//!
//! One stream per sentinel, followed as a server's notifications are: Sentinel keeps no
//! messages for a subscriber that was away, so a broken subscription is a gap of that sentinel
//! until it is subscribed again.

use super::redis::short;
use super::Record;
use containers::cluster::ClusterHandle;
use containers::docker::{Node, Role};
use futures::StreamExt;
use results::service_log::{ServiceEntry, ServiceWhat};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// How long the observer waits for a connection or a subscription.
const ASK: Duration = Duration::from_secs(1);

/// The channel on which a sentinel announces a failover's end.
const SWITCH: &str = "+switch-master";

/// Follows every sentinel of the cluster (none but Sentinel's has any) until the task is
/// aborted.
pub(super) async fn follow_all(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    let names = sentinels(&cluster);
    for name in &names {
        out.set_following(name, false);
    }
    futures::future::join_all(names.into_iter().map(|name| follow(&cluster, &out, name))).await;
}

/// The cluster's sentinels' names.
fn sentinels(cluster: &RwLock<ClusterHandle>) -> Vec<String> {
    let cluster = cluster.read().unwrap_or_else(|p| p.into_inner());
    (cluster.nodes.iter())
        .filter(|n| n.role == Role::Sentinel)
        .map(|n| n.name.clone())
        .collect()
}

fn node(cluster: &RwLock<ClusterHandle>, name: &str) -> Option<Node> {
    let cluster = cluster.read().unwrap_or_else(|p| p.into_inner());
    cluster.nodes.iter().find(|n| n.name == name).cloned()
}

/// Follows the sentinel called `name`, subscribing again whenever the subscription breaks.
async fn follow(cluster: &RwLock<ClusterHandle>, out: &Record, name: String) {
    let what = format!("the subscription to {name}");
    loop {
        let why = subscribe(cluster, out, &name).await;
        out.broke(&name, Some(&short(&name)), &what, &why).await;
    }
}

/// One subscription to the sentinel called `name`, until it breaks: the reason.
async fn subscribe(cluster: &RwLock<ClusterHandle>, out: &Record, name: &str) -> String {
    let Some(endpoint) = node(cluster, name).and_then(|n| n.host_endpoint()) else {
        return format!("{name} is no longer in the cluster, or publishes no port");
    };
    let mut pubsub = match super::redis::pubsub(&endpoint).await {
        Ok(p) => p,
        Err(e) => return e,
    };
    match tokio::time::timeout(ASK, pubsub.subscribe(SWITCH)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return format!("subscribing: {e}"),
        Err(_) => return format!("subscribing: no answer within {ASK:?}"),
    }
    let sentinel = short(name);
    let mut e = ServiceEntry::new(out.now(), ServiceWhat::Watching);
    e.node = Some(sentinel.clone());
    out.write(&e);
    out.set_following(name, true);
    let mut stream = pubsub.into_on_message();
    while let Some(message) = stream.next().await {
        let Ok(payload) = message.get_payload::<String>() else {
            continue;
        };
        let mut e = ServiceEntry::new(out.now(), ServiceWhat::Master);
        e.node = Some(sentinel.clone());
        e.value = Some(new_master(&payload));
        out.write(&e);
    }
    "the sentinel closed the subscription".into()
}

/// The new master of a `+switch-master` message, by the name faults give it; the message
/// itself where it is not of that form.
fn new_master(payload: &str) -> String {
    match payload.split(' ').collect::<Vec<_>>()[..] {
        [_, _, _, host, _] => short(host),
        _ => payload.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::new_master;

    #[test]
    fn a_switch_names_the_new_master_as_faults_do() {
        assert_eq!(
            new_master("mymaster fc-r1-redis-1 6379 fc-r1-redis-3 6379"),
            "redis-3"
        );
        assert_eq!(new_master("something else"), "something else");
    }
}
