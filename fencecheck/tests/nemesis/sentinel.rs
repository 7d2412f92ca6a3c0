//! `failover` against a real Redis Sentinel deployment (master, 2 replicas, 3 sentinels): the
//! master is paused, the sentinels promote a replica, and after the heal the old master is
//! running again, demoted to a replica, with nothing left stopped.

use crate::support::nemesis::{fixture, plan};
use containers::docker::Role;
use nemesis::Nemesis;
use results::Provider;
use std::time::{Duration, Instant};

async fn query(port: Option<u16>, cmd: redis::Cmd) -> Option<redis::Value> {
    let ask = async {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", port?)).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        cmd.query_async::<redis::Value>(&mut conn).await.ok()
    };
    tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .ok()
        .flatten()
}

async fn master_by_sentinel(port: Option<u16>) -> Option<String> {
    let mut cmd = redis::cmd("SENTINEL");
    cmd.arg("get-master-addr-by-name").arg("mymaster");
    match query(port, cmd).await? {
        redis::Value::Array(v) => match v.first()? {
            redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::test]
async fn failover_promotes_a_replica() {
    let fx = fixture(Provider::RedisSentinel, "failover", vec![]).await;
    let sentinel = fx
        .handle()
        .nodes
        .iter()
        .find(|n| n.role == Role::Sentinel)
        .and_then(|n| n.client_port);
    let old = master_by_sentinel(sentinel)
        .await
        .expect("sentinel names a master");
    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(Provider::RedisSentinel, "- at 0s start failover for 12s\n");
    let check = async {
        let start = Instant::now();
        loop {
            if let Some(now) = master_by_sentinel(sentinel).await {
                if now != old {
                    return (now, start.elapsed());
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(11),
                "no replica promoted"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let (summary, (new_master, took)) =
        tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    eprintln!("{old} -> {new_master} promoted after {took:?}");
    let ev = fx.events();
    let target = ev[0].value.as_ref().expect("value")["targets"][0]
        .as_str()
        .expect("target")
        .to_string();
    assert!(
        old.ends_with(&target),
        "the paused node {target} was the master {old}"
    );
    let promoted = fx
        .handle()
        .nodes
        .iter()
        .find(|n| n.name == new_master)
        .map(|n| n.role);
    assert_eq!(
        promoted,
        Some(Role::Replica),
        "a former replica was promoted"
    );
    fx.assert_healed().await;

    // Resumed, the old master learns from the sentinels that it is a replica now.
    let old_port = fx.node(&target).client_port;
    let start = Instant::now();
    loop {
        let role = match query(old_port, redis::cmd("ROLE")).await {
            Some(redis::Value::Array(v)) => match v.first() {
                Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        if role == "slave" {
            eprintln!("old master demoted {:?} after the heal", start.elapsed());
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "old master still {role:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    fx.teardown().await;
}
