//! The nemesis against a real 3-member etcd: a paused holder loses its lease to another client,
//! an isolated leader can no longer serve linearizable reads while the majority elects a new
//! one, a killed member restarts with its data and rejoins — and after every heal nothing is
//! left stopped or cut.

use crate::support::nemesis::{first_targets, fixture, plan, states, wait_for_events};
use containers::docker::{ContainerSpec, Role};
use etcd_client::{Client, ConnectOptions, GetOptions, LockOptions};
use nemesis::Nemesis;
use results::Provider;
use std::time::{Duration, Instant};

async fn client(port: Option<u16>, timeout: Duration) -> Client {
    let endpoint = format!("127.0.0.1:{}", port.expect("published port"));
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(2))
        .with_timeout(timeout);
    Client::connect([endpoint], Some(options))
        .await
        .expect("etcd client")
}

/// The member id of the node behind `port`, and the leader it believes in.
async fn status(port: Option<u16>) -> Result<(u64, u64), String> {
    let mut c = client(port, Duration::from_secs(1)).await;
    let s = c.status().await.map_err(|e| e.to_string())?;
    let me = s.header().map(|h| h.member_id()).unwrap_or(0);
    Ok((me, s.leader()))
}

#[tokio::test]
async fn a_paused_holders_lease_expires_and_another_client_acquires() {
    let spec = |endpoints: String| {
        ContainerSpec::new(
            "worker-1",
            [
                "etcdctl",
                "--endpoints",
                &endpoints,
                "lock",
                "--ttl=2",
                "nemesis-lock",
                "sleep",
                "600",
            ],
        )
        .role(Role::Worker)
    };
    // The worker needs the members' in-network addresses, known only once the cluster is up:
    // start the fixture with no extra container, then add the worker to it.
    let mut fx = fixture(Provider::Etcd, "pause", vec![]).await;
    let endpoints = fx.handle().network_endpoints().join(",");
    let worker = fx
        .env
        .start_container(spec(endpoints))
        .await
        .expect("worker");
    fx.control.set_target("worker-1", &worker.name);
    fx.others.push(worker.clone());
    fx.topology.moments.lock().expect("moments").holder = Some("worker-1".into());
    let port = fx.handle().nodes[0].client_port;

    let mut probe = client(port, Duration::from_secs(1)).await;
    let held = Instant::now();
    loop {
        let r = probe
            .get("nemesis-lock", Some(GetOptions::new().with_prefix()))
            .await;
        if r.is_ok_and(|r| r.count() == 1) {
            break;
        }
        assert!(
            held.elapsed() < Duration::from_secs(10),
            "worker never took the lock"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let lease = probe.lease_grant(30, None).await.expect("lease").id();
    let opts = || Some(LockOptions::new().with_lease(lease));
    assert!(
        probe.lock("nemesis-lock", opts()).await.is_err(),
        "while the worker runs, its lock is not free"
    );

    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(Provider::Etcd, "- at 0s start pause-holder for 6s\n");
    let check = async {
        wait_for_events(&fx, 1).await;
        let st = states(&fx, &worker.name).await;
        assert!(
            !st.is_empty() && st.iter().all(|s| *s == 'T'),
            "worker stopped: {st:?}"
        );
        let paused = Instant::now();
        let mut taker = client(port, Duration::from_secs(5)).await;
        let got = taker.lock("nemesis-lock", opts()).await;
        (got.map_err(|e| e.to_string()), paused.elapsed())
    };
    let (summary, (got, waited)) = tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    got.expect("another client acquires while the holder is paused");
    eprintln!("another client acquired {waited:?} after the holder was paused (ttl 2s)");
    assert!(
        waited >= Duration::from_millis(1000),
        "only after the lease expired: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(5),
        "within the ttl plus slack: {waited:?}"
    );

    let ev = fx.events();
    assert_eq!(ev.len(), 2);
    assert_eq!(
        ev[0].value.as_ref().expect("value")["targets"],
        serde_json::json!(["worker-1"])
    );
    assert!(states(&fx, &worker.name).await.iter().all(|s| *s != 'T'));
    fx.assert_healed().await;
    fx.teardown().await;
}

#[tokio::test]
async fn isolate_leader_stops_linearizable_reads_on_the_old_leader_while_the_majority_elects() {
    let fx = fixture(Provider::Etcd, "isolate", vec![]).await;
    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(Provider::Etcd, "- at 0s start isolate-leader for 10s\n");
    let check = async {
        let old = first_targets(&fx).await.remove(0);
        let old_port = fx.node(&old).client_port;
        let (old_id, _) = status(old_port).await.expect("old leader answers status");
        let others: Vec<_> = fx
            .handle()
            .nodes
            .iter()
            .filter(|n| !n.name.ends_with(&old))
            .map(|n| n.client_port)
            .collect();
        let start = Instant::now();
        let new_leader = loop {
            if let Ok((_, leader)) = status(others[0]).await {
                if leader != 0 && leader != old_id {
                    break leader;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(8),
                "no new leader in the majority"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        eprintln!(
            "majority elected a new leader {:?} after the cut",
            start.elapsed()
        );
        let mut old_side = client(old_port, Duration::from_secs(2)).await;
        let stale = old_side.get("k", None).await;
        let mut majority = client(others[1], Duration::from_secs(2)).await;
        majority
            .put("k", "v", None)
            .await
            .expect("majority accepts writes");
        let fresh = majority
            .get("k", None)
            .await
            .expect("majority serves linearizable reads");
        (old, stale.is_err(), new_leader, fresh.count())
    };
    let (summary, (old, stale_failed, new_leader, fresh)) =
        tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    assert!(
        stale_failed,
        "the isolated old leader {old} must not serve a linearizable read"
    );
    assert_ne!(new_leader, 0);
    assert_eq!(fresh, 1);
    fx.assert_healed().await;
    let start = Instant::now();
    while fx.handle().check_ready().await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "cluster whole again after heal"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    fx.teardown().await;
}

#[tokio::test]
async fn a_killed_member_restarts_with_its_data_and_rejoins() {
    let fx = fixture(Provider::Etcd, "kill", vec![]).await;
    let victim = fx.node("etcd-1");
    let (victim_id, _) = status(victim.client_port).await.expect("status");
    let mut before = client(fx.node("etcd-2").client_port, Duration::from_secs(2)).await;
    before.put("survives", "yes", None).await.expect("put");

    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    // pick 0 of the sorted node names is etcd-1.
    let plan = plan(Provider::Etcd, "- at 0s start kill-node for 3s pick 0\n");
    let check = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let info = fx
            .env
            .docker()
            .inspect_container(&victim.name, None)
            .await
            .expect("inspect");
        info.state.and_then(|s| s.running)
    };
    let (summary, running_during) = tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    assert_eq!(
        running_during,
        Some(false),
        "the member was dead during the fault"
    );

    let restarted = fx.node("etcd-1");
    assert_ne!(restarted.host_pid, victim.host_pid, "a new process");
    let start = Instant::now();
    let (id, leader) = loop {
        match status(restarted.client_port).await {
            Ok((id, leader)) if leader != 0 => break (id, leader),
            _ => {}
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "restarted member never rejoined"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!(
        "restarted member rejoined {:?} after its restart returned",
        start.elapsed()
    );
    assert_eq!(id, victim_id, "the same member, with its data");
    assert_ne!(leader, 0);
    let mut after = client(restarted.client_port, Duration::from_secs(3)).await;
    let got = after
        .get("survives", None)
        .await
        .expect("linearizable read via the restarted member");
    assert_eq!(got.kvs()[0].value(), b"yes");
    let ev = fx.events();
    let fs: Vec<String> = ev.iter().map(|e| e.f.to_string()).collect();
    assert_eq!(fs, ["start-kill-node", "stop-kill-node"]);
    fx.assert_healed().await;
    fx.teardown().await;
}
