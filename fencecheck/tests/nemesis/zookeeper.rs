//! `halves` against a real 3-member ZooKeeper ensemble: the minority side stops serving (no
//! quorum), the majority keeps a leader and a follower, and after the heal nothing is left cut.

use crate::support::nemesis::{first_targets, fixture, plan};
use nemesis::Nemesis;
use results::Provider;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A four-letter word through the member's published port (from the host, never dropped).
async fn four_letter(port: Option<u16>, word: &str) -> String {
    let ask = async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port?))
            .await
            .ok()?;
        s.write_all(word.as_bytes()).await.ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).await.ok()?;
        Some(out)
    };
    tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn mode(srvr: &str) -> Option<&str> {
    srvr.lines().find_map(|l| l.strip_prefix("Mode: "))
}

#[tokio::test]
async fn halves_leave_the_minority_without_a_quorum() {
    let fx = fixture(Provider::Zookeeper, "halves", vec![]).await;
    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(Provider::Zookeeper, "- at 0s start halves for 14s\n");
    let check = async {
        let minority = first_targets(&fx).await;
        assert_eq!(minority.len(), 1, "3 nodes split 1 / 2");
        let lonely = fx.node(&minority[0]).client_port;
        let majority: Vec<Option<u16>> = fx
            .handle()
            .nodes
            .iter()
            .filter(|n| !n.name.ends_with(&minority[0]))
            .map(|n| n.client_port)
            .collect();
        let start = Instant::now();
        let (lonely_said, modes) = loop {
            let lonely_said = four_letter(lonely, "srvr").await;
            let mut modes = Vec::new();
            for p in &majority {
                modes.push(
                    mode(&four_letter(*p, "srvr").await)
                        .unwrap_or("none")
                        .to_string(),
                );
            }
            modes.sort();
            let no_quorum = lonely_said.contains("not currently serving requests");
            if no_quorum && modes == ["follower", "leader"] {
                break (lonely_said, modes);
            }
            assert!(
                start.elapsed() < Duration::from_secs(12),
                "minority said {lonely_said:?}, majority modes {modes:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        (lonely_said, modes, start.elapsed())
    };
    let (summary, (lonely_said, modes, took)) =
        tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    eprintln!("minority lost its quorum after {took:?}: {lonely_said:?}; majority {modes:?}");
    fx.assert_healed().await;
    let start = Instant::now();
    while fx.handle().check_ready().await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "ensemble whole again after heal"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    fx.teardown().await;
}
