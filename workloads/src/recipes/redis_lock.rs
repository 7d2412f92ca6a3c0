//! `redis-lock`: the single-instance Redis lock done right. One Lua script sets the key with
//! `SET NX PX` to a random owner value and, in the same atomic step, INCRs a fence counter whose
//! new value is the token. Renew = compare-and-PEXPIRE; release = compare-and-delete, so a
//! stale owner can never remove someone else's lock. (`redis-lock-del` and `redis-sentinel`
//! reuse this recipe with another release or another connection source.)

use super::redis_conn::RedisConn;
use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use futures::future::BoxFuture;
use rand::Rng;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

const WAIT_STEP: Duration = Duration::from_millis(10);

static ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
            return redis.call('INCR', KEYS[2])
          end
          return 0",
    )
});

pub(crate) static EXTEND: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"if redis.call('GET', KEYS[1]) == ARGV[1] then
            return redis.call('PEXPIRE', KEYS[1], ARGV[2])
          end
          return 0",
    )
});

pub(crate) static COMPARE_AND_DELETE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"if redis.call('GET', KEYS[1]) == ARGV[1] then
            return redis.call('DEL', KEYS[1])
          end
          return 0",
    )
});

static PLAIN_DEL: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(r"return redis.call('DEL', KEYS[1])"));

/// How a hold is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Delete only if the value is still my owner value.
    CompareAndDelete,
    /// `DEL key` whoever holds it: the classic bug.
    PlainDel,
}

pub struct RedisLock {
    conn: RedisConn,
    owner: String,
    cfg: RecipeConfig,
    release: Release,
}

pub(crate) fn lock_key(lock: &str) -> String {
    format!("fencecheck:lock:{lock}")
}

/// A fresh random owner value for one acquisition.
pub(crate) fn owner_value(owner: &str) -> String {
    format!("{owner}:{:016x}", rand::rng().random::<u64>())
}

impl RedisLock {
    pub fn new(conn: RedisConn, owner: &str, cfg: RecipeConfig, release: Release) -> Self {
        Self {
            conn,
            owner: owner.to_string(),
            cfg,
            release,
        }
    }

    async fn script<T: redis::FromRedisValue>(
        &self,
        what: &str,
        inv: redis::ScriptInvocation<'_>,
    ) -> Completion<T> {
        within(self.cfg.op_timeout, what, async {
            match self.conn.run(inv).await {
                Ok(v) => Completion::Ok(v),
                Err(e) => Completion::info(format!("{what}: {e}")),
            }
        })
        .await
    }
}

impl Client for RedisLock {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let value = owner_value(&self.owner);
            let key = lock_key(lock);
            let deadline = Instant::now() + self.cfg.acquire_timeout;
            loop {
                let sent = Instant::now();
                let mut inv = ACQUIRE.prepare_invoke();
                inv.key(&key)
                    .key(format!("fencecheck:fence:{lock}"))
                    .arg(&value)
                    .arg(self.cfg.ttl.as_millis() as u64);
                match self.script::<u64>("acquire script", inv).await {
                    Completion::Ok(0) => {}
                    Completion::Ok(token) => {
                        return Completion::Ok(Grant {
                            lock: lock.to_string(),
                            owner: self.owner.clone(),
                            lease: value,
                            lock_key: Some(key.clone()),
                            read_back: None,
                            token: Some(token),
                            valid_until: sent + self.cfg.ttl,
                        })
                    }
                    // The script may have run: we may hold the key until it expires.
                    Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                        return Completion::Info(e)
                    }
                }
                if Instant::now() >= deadline {
                    return Completion::fail(
                        "acquire timeout: the key stayed held by another owner",
                    );
                }
                tokio::time::sleep(WAIT_STEP).await;
            }
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let mut inv = EXTEND.prepare_invoke();
            inv.key(lock_key(&hold.lock))
                .arg(&hold.lease)
                .arg(self.cfg.ttl.as_millis() as u64);
            match self.script::<u64>("extend script", inv).await {
                Completion::Ok(1) => Completion::Ok(self.cfg.ttl),
                Completion::Ok(_) => {
                    Completion::fail("the key expired or belongs to another owner")
                }
                Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                    Completion::Info(e)
                }
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let key = lock_key(&hold.lock);
            match self.release {
                Release::CompareAndDelete => {
                    let mut inv = COMPARE_AND_DELETE.prepare_invoke();
                    inv.key(key).arg(&hold.lease);
                    match self.script::<u64>("release script", inv).await {
                        Completion::Ok(1) => Completion::Ok(()),
                        Completion::Ok(_) => Completion::fail(NOT_OWNER),
                        Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                            Completion::Info(e)
                        }
                    }
                }
                Release::PlainDel => {
                    let mut inv = PLAIN_DEL.prepare_invoke();
                    inv.key(key);
                    // DEL deletes whoever holds the key: the naive client's bug. A DEL that
                    // deleted nothing (the key had expired) is reported as such, not as a
                    // release: the history then shows only the harm DEL really did.
                    match self.script::<u64>("DEL", inv).await {
                        Completion::Ok(0) => Completion::fail(NOT_OWNER),
                        other => other.map(|_| ()),
                    }
                }
            }
        })
    }
}
