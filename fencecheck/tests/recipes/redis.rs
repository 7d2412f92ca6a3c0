//! What must hold for redis-lock and redis-lock-del (single master), against the real cluster in containers:
//! contending workers never overlap and (with tokens) strictly increase; a worker SIGSTOPped
//! past the ttl loses the lock to another, and on SIGCONT `stop` records lease-lost before any
//! further write while `continue` sends it; its stale release is rejected (accepted only by
//! `redis-lock-del`). Contention runs `FENCECHECK_CONTENTION_SECS` seconds (default 10).

use crate::support::recipes::must_show;
use results::Provider;
use std::time::Duration;
use workloads::config::RecipeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_lock_excludes_fences_and_survives_a_pause_past_the_ttl() {
    must_show(
        Provider::Redis,
        RecipeKind::RedisLock,
        Duration::from_secs(2),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_lock_del_excludes_fences_and_survives_a_pause_past_the_ttl() {
    must_show(
        Provider::Redis,
        RecipeKind::RedisLockDel,
        Duration::from_secs(2),
    )
    .await;
}
