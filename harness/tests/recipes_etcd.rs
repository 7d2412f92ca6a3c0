//! Issue 4's must-show list for etcd-lease and etcd-lock, against the real cluster in containers:
//! contending workers never overlap and (with tokens) strictly increase; a worker SIGSTOPped
//! past the ttl loses the lock to another, and on SIGCONT `stop` records lease-lost before any
//! further write while `continue` sends it; its stale release is rejected (accepted only by
//! `redis-lock-del`). Contention runs `FENCECHECK_CONTENTION_SECS` seconds (default 10).

mod recipes_support;

use harness::cluster::System;
use recipes_support::{assert_pause, contention, pause_past_ttl, with_bed};
use std::time::Duration;
use workloads::config::RecipeKind;

fn contention_secs() -> u64 {
    std::env::var("FENCECHECK_CONTENTION_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_lease_excludes_fences_and_survives_a_pause_past_the_ttl() {
    with_bed(
        System::Etcd,
        RecipeKind::EtcdLease,
        Duration::from_secs(2),
        |bed| async move {
            contention(&bed, 5, contention_secs()).await;
            for discipline in ["stop", "continue"] {
                let outcome =
                    pause_past_ttl(&bed, discipline, &format!("paused-{discipline}")).await;
                assert_pause(&bed, discipline, &outcome);
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_lock_excludes_fences_and_survives_a_pause_past_the_ttl() {
    with_bed(
        System::Etcd,
        RecipeKind::EtcdLock,
        Duration::from_secs(2),
        |bed| async move {
            contention(&bed, 5, contention_secs()).await;
            for discipline in ["stop", "continue"] {
                let outcome =
                    pause_past_ttl(&bed, discipline, &format!("paused-{discipline}")).await;
                assert_pause(&bed, discipline, &outcome);
            }
        },
    )
    .await;
}
