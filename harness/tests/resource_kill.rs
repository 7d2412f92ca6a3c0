//! `fencecheck resource` as the harness runs it — the binary bind-mounted into a container on the
//! run's network, the run dir bind-mounted, the port published on 127.0.0.1 — SIGKILLed while 8
//! clients write to it. Every write it acknowledged must be in `resource.jsonl` with the decision
//! the client got; restarted, it continues the log where it stopped, and its decisions after the
//! restart still re-decide identically from the whole log.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns: unwrap is how a test fails

mod resource_support;

use rand::Rng;
use resource_support::{check_log, hammer_until, run_dir, Chooser, Docker};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use workloads::resource::rule::{Audit, Mode};

fn listening_lines(container: &str) -> usize {
    let out = std::process::Command::new("docker")
        .args(["logs", container])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stderr)
        .matches("listening on")
        .count()
}

fn wait_listening(container: &str, times: usize) {
    for _ in 0..300 {
        if listening_lines(container) >= times {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{container} did not start listening (#{times})");
}

#[tokio::test]
async fn killing_the_resource_container_loses_no_acknowledged_decision() {
    let mut docker = Docker::new("kill");
    let dir = run_dir("kill");
    let bin = Path::new(env!("CARGO_BIN_EXE_fencecheck"));
    let clock = results::RunClock::start();
    let cmd = format!(
        "exec /fencecheck resource --listen 0.0.0.0:7000 --backend register --mode strict \
         --log /run-dir/resource.jsonl --clock-start {}",
        clock.start_ns()
    );
    let resource = docker.run(
        "resource",
        7000,
        &[(bin, "/fencecheck:ro"), (&dir, "/run-dir")],
        &cmd,
    );
    wait_listening(&resource, 1);
    let addr = format!("127.0.0.1:{}", docker.host_port(&resource, 7000));
    let choose: Chooser = Arc::new(|rng, _| (Some(rng.random_range(1..=500)), None));
    let keys = ["k0", "k1", "k2"];

    // Phase 1: 8 clients write flat out; the container is SIGKILLed under them.
    let stop = Arc::new(AtomicBool::new(false));
    let writers = {
        let (addr, choose, stop) = (addr.clone(), choose.clone(), stop.clone());
        tokio::spawn(async move {
            hammer_until(&addr, 8, 1_000_000, "a", &keys, 1, choose, Some(stop)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    docker.kill(&resource);
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let mut sent = writers.await.unwrap();
    let acked = sent.iter().filter(|s| s.reply.is_ok()).count();
    let failed = sent.iter().filter(|s| s.reply.is_err()).count();
    assert!(
        acked > 100,
        "the kill came after real traffic ({acked} acknowledged)"
    );
    assert!(failed > 0, "the kill landed mid-run (no write failed)");
    let log = dir.join("resource.jsonl");
    check_log(&log, &sent, Audit::Exact(Mode::Strict));

    // Phase 2: restarted (new host port), it recovers and continues the same log.
    docker.start(&resource);
    wait_listening(&resource, 2);
    let addr = format!("127.0.0.1:{}", docker.host_port(&resource, 7000));
    sent.extend(hammer_until(&addr, 8, 800, "b", &keys, 2, choose, None).await);
    let entries = check_log(&log, &sent, Audit::Exact(Mode::Strict));
    let after = sent
        .iter()
        .filter(|s| s.req.op_id.starts_with('b') && s.reply.is_ok())
        .count();
    assert_eq!(after, 800, "every write after the restart was decided");
    assert!(
        entries.len() >= acked + 800,
        "{} entries for {acked} + 800 acknowledged",
        entries.len()
    );
    assert!(
        entries
            .iter()
            .any(|e| e.op_id.starts_with('b') && !e.result.is_accepted()),
        "state survived: stale writes rejected after restart"
    );

    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}
