//! What must hold for redis-sentinel (master + 2 replicas + 3 sentinels, no failover here), against the real cluster in containers:
//! contending workers never overlap and (with tokens) strictly increase; a worker SIGSTOPped
//! past the ttl loses the lock to another, and on SIGCONT `stop` records lease-lost before any
//! further write while `continue` sends it; its stale release is rejected (accepted only by
//! `redis-lock-del`). Contention runs `FENCECHECK_CONTENTION_SECS` seconds (default 10).

use crate::support::recipes::{must_show, with_bed};
use results::Provider;
use std::time::Duration;
use workloads::config::RecipeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_sentinel_excludes_fences_and_survives_a_pause_past_the_ttl() {
    must_show(
        Provider::RedisSentinel,
        RecipeKind::RedisSentinel,
        Duration::from_secs(2),
    )
    .await;
}

/// Resumes a SIGSTOPped node however the test ends.
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGCONT,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_sentinel_rediscovers_the_master_after_a_failover() {
    use results::OpType;
    use workloads::driver::Session;
    with_bed(
        Provider::RedisSentinel,
        RecipeKind::RedisSentinel,
        Duration::from_secs(2),
        |bed| async move {
            let (_, conn) = bed.worker("f0", "stop").await;
            let mut s = Session::new(conn, bed.ids(), bed.rec.clone());
            assert_eq!(
                s.acquire("failover").await.unwrap().kind(),
                Some(OpType::Ok)
            );
            assert_eq!(s.release().await.unwrap().kind(), Some(OpType::Ok));
            let old = bed.cluster.leader().await.unwrap().expect("a master");
            let resume = Resume(old.host_pid as i32);
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(old.host_pid as i32),
                nix::sys::signal::Signal::SIGSTOP,
            )
            .unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(40);
            let mut attempts = 0;
            loop {
                attempts += 1;
                if s.acquire("failover").await.unwrap().kind() == Some(OpType::Ok) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "no acquire after failover"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let new = bed.cluster.leader().await.unwrap().expect("a master");
            eprintln!(
                "failover {} -> {} after {attempts} attempts",
                old.name, new.name
            );
            assert_ne!(new.name, old.name, "the lock was granted by the new master");
            assert!(attempts > 1, "the paused master cannot have granted it");
            drop(resume);
        },
    )
    .await;
}
