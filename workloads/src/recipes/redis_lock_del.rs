//! `redis-lock-del`: the same acquire as `redis-lock`, released with a plain `DEL` — the classic
//! bug, kept as the unsafe contrast. A holder whose key expired (a pause, a slow request)
//! deletes the *next* holder's key on release, and a third client then gets the lock while the
//! second still works.

use super::redis_conn::RedisConn;
use super::redis_lock::{RedisLock, Release};
use crate::config::RecipeConfig;

/// A `redis-lock` whose release deletes the key whoever holds it.
pub fn redis_lock_del(endpoint: &str, owner: &str, cfg: RecipeConfig) -> Result<RedisLock, String> {
    let conn = RedisConn::direct(endpoint, cfg.op_timeout)?;
    Ok(RedisLock::new(conn, owner, cfg, Release::PlainDel))
}
