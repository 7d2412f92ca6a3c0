//! Clock faults against real servers under libfaketime: a Redis master's wall clock jumps ahead
//! (its `TIME` moves, a key set with a 5 s expiry is gone at once: Redis expires by the wall
//! clock), a fast clock gains on the real one, the heal puts it back; ZooKeeper starts and serves
//! under a fake clock; etcd is refused, naming why.

use crate::support::nemesis::fixture_with_fake_clocks;
use nemesis::{ClockSetting, NodeControl};
use results::Provider;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn redis_cli(container: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("docker")
        .args(["exec", container, "redis-cli"])
        .args(args)
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The server's wall clock minus the host's, in seconds (`TIME`: seconds and microseconds).
fn redis_clock_offset(container: &str) -> f64 {
    let time = redis_cli(container, &["TIME"]);
    let mut words = time.split_whitespace();
    let secs: f64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .expect("TIME seconds");
    let micros: f64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .expect("TIME micros");
    let host = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    secs + micros / 1e6 - host
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jump_expires_a_redis_key_early_a_fast_clock_gains_and_the_heal_restores() {
    let fx = fixture_with_fake_clocks(Provider::Redis, "clock").await;
    let r = fx.env.container_name("redis-1");
    tokio::task::block_in_place(|| {
        let before = redis_clock_offset(&r);
        assert!(
            before.abs() < 0.5,
            "real time before the fault: {before:+.3} s"
        );
    });
    let set = Instant::now();
    tokio::task::block_in_place(|| {
        assert_eq!(redis_cli(&r, &["SET", "lock", "me", "PX", "5000"]), "OK");
    });
    fx.control
        .set_clock("redis-1", ClockSetting::Ahead { secs: 10.0 })
        .await
        .expect("jump");
    tokio::task::block_in_place(|| {
        let ahead = redis_clock_offset(&r);
        assert!((ahead - 10.0).abs() < 0.5, "10 s ahead: {ahead:+.3} s");
        assert_eq!(
            redis_cli(&r, &["GET", "lock"]),
            "",
            "a 5 s key is gone after the jump"
        );
        let gone = set.elapsed().as_secs_f64();
        eprintln!(
            "clock-jump: the 5 s key was gone {gone:.2} s after it was set, {:.2} s early",
            5.0 - gone
        );
    });
    fx.control
        .set_clock("redis-1", ClockSetting::Fast { factor: 3.0 })
        .await
        .expect("fast");
    let fast_from = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let gained = tokio::task::block_in_place(|| redis_clock_offset(&r));
    let real = fast_from.elapsed().as_secs_f64();
    assert!(
        gained > real * 1.5 && gained < real * 2.5,
        "3 × as fast: ~{:.1} s gained in {real:.1} s, read {gained:+.3} s",
        real * 2.0
    );
    fx.control
        .set_clock("redis-1", ClockSetting::Real)
        .await
        .expect("heal");
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::task::block_in_place(|| {
        let after = redis_clock_offset(&r);
        assert!(after.abs() < 0.5, "real time after the heal: {after:+.3} s");
    });
    fx.assert_healed().await;
    fx.teardown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_serves_under_a_fake_clock_and_etcd_is_refused() {
    let fx = fixture_with_fake_clocks(Provider::Zookeeper, "zkclock").await;
    let leader = fx.handle().leader().await.expect("leader query");
    assert!(
        leader.is_some(),
        "a ZooKeeper ensemble under libfaketime elects a leader"
    );
    for n in ["zk-1", "zk-2", "zk-3"] {
        fx.control
            .set_clock(n, ClockSetting::Ahead { secs: 10.0 })
            .await
            .expect("jump");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    fx.handle()
        .check_ready()
        .await
        .expect("still serving after the jump");
    for n in ["zk-1", "zk-2", "zk-3"] {
        fx.control
            .set_clock(n, ClockSetting::Real)
            .await
            .expect("heal");
    }
    fx.teardown().await;

    let id = format!("t-nemesis-etcdclock-{:x}", std::process::id());
    let env = containers::docker::RunEnv::create(&id, None)
        .await
        .expect("run env");
    let dir = std::env::temp_dir().join(&id);
    let e = env
        .start_cluster_with_fake_clocks(Provider::Etcd, &dir)
        .await
        .expect_err("etcd under a fake clock is refused");
    assert!(e.to_string().contains("Go programs"), "{e}");
    env.teardown().await.expect("teardown");
}
