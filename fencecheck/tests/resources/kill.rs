//! `fencecheck resource` as the harness runs it — the binary bind-mounted into a container on the
//! run's network, the run dir bind-mounted, the port published on 127.0.0.1 — SIGKILLed while 8
//! clients write to it. Every write it acknowledged must be in `resource.jsonl` with the decision
//! the client got; restarted, it continues the log where it stopped, and its decisions after the
//! restart still re-decide identically from the whole log.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns: unwrap is how a test fails

use crate::support::resource::{check_log, hammer_until, run_dir, Chooser, Docker};
use rand::Rng;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use workloads::resource::{Audit, Mode};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_the_register_resource_container_loses_no_acknowledged_decision() {
    let mut docker = Docker::new("kill-reg");
    kill_mid_run(&mut docker, "--backend register").await;
    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}

/// With a real store the store keeps its state across the kill, and the decision in flight at
/// the kill may be in Redis but not in the log: the restarted resource must recover it from the
/// store (its intents file says which), or later highest_before values contradict the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_the_redis_fenced_resource_container_loses_nothing_the_store_decided() {
    let mut docker = Docker::new("kill-redis");
    let redis = docker.redis();
    docker.wait_for(
        &redis,
        "Ready to accept connections",
        Duration::from_secs(30),
    );
    let backend = format!("--backend redis-fenced --redis redis://{redis}:6379");
    kill_mid_run(&mut docker, &backend).await;
    let id = docker.id.clone();
    drop(docker);
    assert_eq!(Docker::leftovers(&id), "", "containers left behind");
}

async fn kill_mid_run(docker: &mut Docker, backend: &str) {
    let dir = run_dir("kill");
    let bin = Path::new(env!("CARGO_BIN_EXE_fencecheck"));
    let clock = results::RunClock::start();
    let cmd = format!(
        "exec /fencecheck resource --listen 0.0.0.0:7000 {backend} --mode strict \
         --log /run-dir/resource.jsonl --clock-start {}",
        clock.start_ns()
    );
    let mounts = [(bin, "/fencecheck:ro"), (dir.as_path(), "/run-dir")];
    let resource = docker.run("resource", 7000, &mounts, &cmd);
    wait_listening(&resource, 1);
    let addr = format!("127.0.0.1:{}", docker.host_port(&resource, 7000));
    // Mostly rising tokens (a lock service's counter), so that most writes raise the fence and a
    // decision missing from the log shows in the next highest_before; some stale ones.
    let counter = Arc::new(AtomicU64::new(100));
    let choose: Chooser = Arc::new(move |rng, _| {
        let token = if rng.random_bool(0.8) {
            counter.fetch_add(1, Ordering::Relaxed)
        } else {
            rng.random_range(1..=50)
        };
        (Some(token), None)
    });
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
    // Off the runtime's threads, so the clients keep writing while docker delivers the SIGKILL.
    let kill = resource.clone();
    tokio::task::spawn_blocking(move || crate::support::resource::docker_kill(&kill))
        .await
        .unwrap();
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
    let before_restart = check_log(&log, &sent, Audit::Exact(Mode::Strict)).len();

    // Phase 2: restarted (new host port), it settles what was in doubt and continues the log.
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
    let stale_after = entries
        .iter()
        .filter(|e| e.op_id.starts_with('b') && !e.result.is_accepted());
    assert!(
        stale_after.count() > 0,
        "state survived: stale writes rejected after restart"
    );
    let recovered = entries.len() - before_restart - 800;
    eprintln!(
        "{backend}: {acked} acknowledged before the kill, {failed} cut off; {} logged but \
         unacknowledged at the kill, {recovered} recovered from the store at restart",
        before_restart - acked
    );
}
