//! Healing on every exit path, against a real etcd cluster: a cancelled run (Ctrl-C) heals
//! through the executor, and a control dropped while hurting (an error, a panic) resumes every
//! process and flushes every rule by itself; and a heal removes only fencecheck's own rules.
//! Checked from `/proc` and `iptables -S`, not trusted.

use crate::support::nemesis::{fixture, plan, states, wait_for_events};
use containers::control::{audit, iptables, DockerControl, DockerRestart};
use nemesis::{Grudge, Nemesis, NodeControl, Signal, Topology};
use results::Provider;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_cancelled_run_and_a_dropped_control_both_leave_nothing_hurt() {
    let fx = fixture(Provider::Etcd, "heal", vec![]).await;
    let names: Vec<String> = fx.handle().nodes.iter().map(|n| n.name.clone()).collect();

    // 1. Cancelled mid-fault: a paused node and a partition at once.
    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(
        Provider::Etcd,
        "- at 0s pause-node for 30s pick 1\n- at 0s majorities-ring for 30s\n",
    );
    let during = async {
        wait_for_events(&fx, 2).await;
        let hurt = audit(fx.env.docker(), &names).await.expect("audit");
        let stopped = states(&fx, &names[1]).await;
        (hurt, stopped)
    };
    let cancel = async {
        wait_for_events(&fx, 2).await;
        tokio::time::sleep(Duration::from_millis(1000)).await;
    };
    let (summary, (hurt, stopped)) = tokio::join!(nemesis.run(&plan, cancel), during);
    let summary = summary.expect("nemesis run");
    assert!(summary.cancelled);
    assert_eq!(summary.started, 2);
    assert!(
        stopped.iter().all(|s| *s == 'T'),
        "etcd-2 was stopped: {stopped:?}"
    );
    assert!(
        hurt.rules.iter().any(|(_, r)| r.contains("DROP")),
        "rules were in place: {hurt:?}"
    );
    fx.assert_healed().await;
    let stops = fx
        .events()
        .into_iter()
        .filter(|e| e.error.as_deref() == Some("stopped by the final heal"))
        .count();
    assert_eq!(stops, 2);

    // 2. A control dropped while hurting heals synchronously in its Drop.
    {
        let targets = containers::control::topology::targets(&fx.env, fx.handle().nodes.iter());
        let docker = fx.env.docker().clone();
        let restart = Arc::new(DockerRestart {
            docker: docker.clone(),
        });
        let control = DockerControl::new(docker, fx.env.network(), targets, restart);
        control.signal("etcd-3", Signal::Stop).await.expect("stop");
        let nodes = fx.topology.nodes();
        control
            .partition(&Grudge::halves(&nodes))
            .await
            .expect("partition");
        assert!(control.is_hurting());
        let hurt = audit(fx.env.docker(), &names).await.expect("audit");
        assert!(!hurt.is_clean());
    }
    fx.assert_healed().await;

    // 3. The heal removes fencecheck's own chain and nothing else.
    let pid = fx.node("etcd-1").host_pid;
    let foreign = |op: &str| -> Vec<String> {
        [op, "INPUT", "-s", "203.0.113.7", "-j", "ACCEPT"]
            .map(String::from)
            .to_vec()
    };
    iptables::run(pid, &foreign("-A")).expect("foreign rule added");
    let nodes = fx.topology.nodes();
    fx.control
        .partition(&Grudge::isolate("etcd-1", &nodes))
        .await
        .expect("partition");
    assert!(iptables::rules(pid).expect("rules").len() > 3);
    fx.control.heal_network().await.expect("heal");
    assert_eq!(
        iptables::rules(pid).expect("rules"),
        ["-A INPUT -s 203.0.113.7/32 -j ACCEPT"]
    );
    iptables::run(pid, &foreign("-D")).expect("foreign rule removed");
    fx.assert_healed().await;
    fx.teardown().await;
}
