//! `redis-sentinel`: `redis-lock` against whichever master the sentinels name. After a failover
//! the next request that fails drops the connection and asks the sentinels again. Replication is
//! asynchronous, so a lock key written just before a failover can vanish on the new master
//! (docs/design.md, "Platform facts"): the recipe is expected to lose exclusion under failover, and its
//! fence counter can go backwards with it.

use super::redis_conn::RedisConn;
use super::redis_lock::{RedisLock, Release};
use crate::config::RecipeConfig;

/// A `redis-lock` on the master named `master` by the sentinels at `sentinels` (`host:port`).
pub fn redis_sentinel(
    sentinels: &[String],
    master: &str,
    owner: &str,
    cfg: RecipeConfig,
) -> Result<RedisLock, String> {
    let conn = RedisConn::sentinel(sentinels, master, cfg.op_timeout)?;
    Ok(RedisLock::new(conn, owner, cfg, Release::CompareAndDelete))
}
