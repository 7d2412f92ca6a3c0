//! CPU starvation against a real etcd node: `starve-node` cuts the node's CPU quota to a few
//! percent, the kernel throttles a busy process in it, and the heal lifts the quota; a control
//! dropped while a container is starved lifts it by itself. Checked from the kernel's own
//! counters (`cpu.stat`'s `nr_throttled`) and Docker's view of the container, not trusted.

use crate::support::nemesis::{first_targets, fixture, plan};
use containers::control::{audit, DockerControl, DockerRestart};
use nemesis::{Nemesis, NodeControl};
use results::Provider;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// How many periods the kernel throttled `container`'s processes so far (cgroup v1 `cpu.stat`),
/// read inside it.
fn throttled_periods(container: &str) -> u64 {
    let out = Command::new("docker")
        .args(["exec", container, "cat", "/sys/fs/cgroup/cpu/cpu.stat"])
        .output()
        .expect("docker exec");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("nr_throttled "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no nr_throttled in {container}'s cpu.stat: {text}"))
}

/// Keeps one CPU busy inside `container` for a second.
fn spin(container: &str) {
    let status = Command::new("docker")
        .args([
            "exec",
            container,
            "timeout",
            "1",
            "sh",
            "-c",
            "while :; do :; done",
        ])
        .status()
        .expect("docker exec");
    assert_eq!(status.code(), Some(124), "the loop ran until its timeout");
}

#[tokio::test]
async fn a_starved_node_is_throttled_by_the_kernel_and_lifted_by_the_heal_and_on_drop() {
    let fx = fixture(Provider::Etcd, "starve", vec![]).await;
    let names: Vec<String> = fx.handle().nodes.iter().map(|n| n.name.clone()).collect();

    // 1. Through the executor: starved while the fault lasts, lifted by the heal that ends it.
    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(Provider::Etcd, "- at 0s start starve-node for 60s pick 1\n");
    let measured = tokio::sync::Notify::new();
    let during = async {
        let target = first_targets(&fx).await;
        let container = fx.node(&target[0]).name;
        let before = throttled_periods(&container);
        spin(&container);
        let after = throttled_periods(&container);
        let hurt = audit(fx.env.docker(), &names).await.expect("audit");
        measured.notify_one();
        (container, after - before, hurt)
    };
    let (summary, (container, throttled, hurt)) =
        tokio::join!(nemesis.run(&plan, measured.notified()), during);
    let summary = summary.expect("nemesis run");
    assert_eq!(summary.started, 1);
    assert!(
        throttled >= 5,
        "a busy loop in the starved node was throttled in {throttled} periods only"
    );
    assert_eq!(hurt.throttled, [(container.clone(), 5_000)], "{hurt:?}");
    let start = &fx.events()[0];
    assert_eq!(start.value.as_ref().expect("value")["cpus"], 0.05);
    fx.assert_healed().await;
    let before = throttled_periods(&container);
    spin(&container);
    assert_eq!(
        throttled_periods(&container),
        before,
        "the quota was lifted at the stop"
    );

    // 2. A control dropped while a container is starved lifts the quota in its Drop.
    {
        let targets = containers::control::topology::targets(&fx.env, fx.handle().nodes.iter());
        let docker = fx.env.docker().clone();
        let restart = Arc::new(DockerRestart {
            docker: docker.clone(),
        });
        let control = DockerControl::new(docker, fx.env.network(), targets, restart);
        control
            .throttle("etcd-2", Some(0.05))
            .await
            .expect("throttle");
        assert!(control.is_hurting());
        let hurt = audit(fx.env.docker(), &names).await.expect("audit");
        assert_eq!(hurt.throttled.len(), 1, "{hurt:?}");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    fx.assert_healed().await;
    fx.teardown().await;
}
