//! The link proxy against real containers: a worker's PING to Redis through its route costs what
//! a direct one does plus the delay a `slow-network` shaping adds each way, and the heal takes it
//! back. Round trips are timed inside the worker's container (`redis-cli` per PING), medians of 9.

use crate::support::nemesis::fixture;
use containers::docker::{ContainerSpec, Role};
use nemesis::LinkShaping;
use results::Provider;

/// Median round trip (ms) of `redis-cli PING` from `from` to `host:port`, timed in `from`.
fn median_ping_ms(from: &str, host: &str, port: u16) -> f64 {
    let script = format!(
        "for i in 1 2 3 4 5 6 7 8 9; do s=$(date +%s%N); redis-cli -h {host} -p {port} PING \
         >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 )); done"
    );
    let out = std::process::Command::new("docker")
        .args(["exec", from, "sh", "-c", &script])
        .output()
        .expect("docker exec");
    let mut us: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(us.len(), 9, "nine round trips: {out:?}");
    us.sort_by(f64::total_cmp);
    us[4] / 1000.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_adds_the_delay_it_is_told_to_and_nothing_after_the_heal() {
    let worker = ContainerSpec::new("worker-1", ["sleep", "600"]).role(Role::Worker);
    let fx = fixture(Provider::Redis, "links", vec![worker]).await;
    let links = harness::run::links::start(
        &fx.env,
        &fx.handle(),
        &["worker-1".to_string()],
        env!("CARGO_BIN_EXE_fencecheck").into(),
    )
    .await
    .expect("link proxy");
    let route = links.endpoints["worker-1"][0].clone();
    let (host, port) = route.rsplit_once(':').expect("host:port");
    let port: u16 = port.parse().expect("port");
    let (w, r) = (
        fx.env.container_name("worker-1"),
        fx.env.container_name("redis-1"),
    );
    let direct = tokio::task::block_in_place(|| median_ping_ms(&w, &r, 6379));
    let relayed = tokio::task::block_in_place(|| median_ping_ms(&w, host, port));
    let shaping = LinkShaping {
        delay_ms: 100,
        jitter_ms: 0,
        loss: 0.0,
        replies_only: false,
        cut_next_reply: false,
    };
    links
        .control
        .shape("worker-1", Some(shaping))
        .await
        .expect("shape");
    let slowed = tokio::task::block_in_place(|| median_ping_ms(&w, host, port));
    links.control.shape("worker-1", None).await.expect("heal");
    let healed = tokio::task::block_in_place(|| median_ping_ms(&w, host, port));
    eprintln!(
        "link proxy: PING median direct {direct:.1} ms, relayed {relayed:.1} ms, \
         100 ms each way {slowed:.1} ms, healed {healed:.1} ms"
    );
    assert!(
        relayed < direct + 20.0,
        "a plain relay adds little: {relayed} vs {direct}"
    );
    assert!(
        (slowed - relayed - 200.0).abs() < 60.0,
        "100 ms each way adds ~200 ms per round trip: {slowed} vs {relayed}"
    );
    assert!(
        healed < relayed + 20.0,
        "the heal takes the delay back: {healed}"
    );
    fx.teardown().await;
}
