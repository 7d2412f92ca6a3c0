//! One-way partitions against real containers: a grudge applied inbound only drops what
//! arrives from the peer and lets what the node sends through. Shown with UDP datagrams (a TCP
//! connection needs both directions, so it would fail either way): asked from inside the
//! containers, on the run's network; the heal leaves no rule behind.

use crate::support::nemesis::fixture;
use containers::docker::{ContainerSpec, Role};
use nemesis::{Grudge, NodeControl};
use results::Provider;

/// Sends one datagram from `from` to `to` and says whether `to` received it.
fn datagram_arrives(from: &str, to: &str, port: u16) -> bool {
    let listen = std::process::Command::new("docker")
        .args([
            "exec",
            to,
            "timeout",
            "3",
            "nc",
            "-u",
            "-l",
            "-W",
            "1",
            &port.to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("nc -l in the container");
    std::thread::sleep(std::time::Duration::from_millis(700));
    for _ in 0..3 {
        let _ = std::process::Command::new("docker")
            .args([
                "exec",
                from,
                "sh",
                "-c",
                &format!("echo ping | nc -u -w 1 -q 0 {to} {port}"),
            ])
            .status();
    }
    let out = listen.wait_with_output().expect("nc -l finished");
    String::from_utf8_lossy(&out.stdout).contains("ping")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbound_cut_drops_what_arrives_and_lets_what_leaves_through() {
    let worker = ContainerSpec::new("worker-1", ["sleep", "600"]).role(Role::Worker);
    let fx = fixture(Provider::Redis, "oneway", vec![worker]).await;
    let (w, r) = (
        fx.env.container_name("worker-1"),
        fx.env.container_name("redis-1"),
    );
    tokio::task::block_in_place(|| {
        assert!(
            datagram_arrives(&w, &r, 9701),
            "worker → redis before the cut"
        );
        assert!(
            datagram_arrives(&r, &w, 9702),
            "redis → worker before the cut"
        );
    });
    // deafen-holder's grudge: worker-1 hears nothing from redis-1.
    let grudge = Grudge::deafen("worker-1", &["redis-1".to_string()]);
    fx.control
        .partition_inbound(&grudge)
        .await
        .expect("one-way cut");
    tokio::task::block_in_place(|| {
        assert!(datagram_arrives(&w, &r, 9703), "worker → redis still flows");
        assert!(!datagram_arrives(&r, &w, 9704), "redis → worker is dropped");
    });
    fx.control.heal_network().await.expect("heal");
    tokio::task::block_in_place(|| {
        assert!(
            datagram_arrives(&r, &w, 9705),
            "redis → worker after the heal"
        );
    });
    fx.assert_healed().await;
    fx.teardown().await;
}
