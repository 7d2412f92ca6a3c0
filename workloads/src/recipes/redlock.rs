//! `redlock`: Redis's distributed lock over N independent masters (5 here, quorum 3). Acquire
//! sets the same random value with `SET NX PX` on every master; it holds if a majority said yes
//! and time is left: validity = ttl - elapsed - clock drift. Extend and release use the same
//! compare-and-PEXPIRE / compare-and-delete scripts as `redis-lock`, on all masters. There is no
//! fence token — the algorithm has none — so the acquisition is recorded without one.

use super::redis_conn::RedisConn;
use super::redis_lock::{lock_key, owner_value, COMPARE_AND_DELETE, EXTEND};
use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use futures::future::{join_all, BoxFuture};
use rand::Rng;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

static SET_NX: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
          return 0",
    )
});

/// Clock drift allowance of the Redlock description: 1% of the ttl plus 2 ms.
fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// What the masters said to one round.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    yes: usize,
    no: usize,
    unknown: usize,
}

pub struct Redlock {
    masters: Vec<RedisConn>,
    owner: String,
    cfg: RecipeConfig,
}

impl Redlock {
    pub fn connect(endpoints: &[String], owner: &str, cfg: RecipeConfig) -> Result<Self, String> {
        if endpoints.len() < 3 {
            return Err(format!(
                "redlock needs at least 3 independent masters (5 in the standard setup), got {}",
                endpoints.len()
            ));
        }
        let masters = endpoints
            .iter()
            .map(|e| RedisConn::direct(e, cfg.op_timeout))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            masters,
            owner: owner.to_string(),
            cfg,
        })
    }

    fn quorum(&self) -> usize {
        self.masters.len() / 2 + 1
    }

    /// Runs `script` with one key and args on every master at once.
    async fn round(&self, script: &redis::Script, key: &str, args: &[String]) -> Tally {
        let calls = self.masters.iter().map(|m| {
            let mut inv = script.prepare_invoke();
            inv.key(key);
            for a in args {
                inv.arg(a);
            }
            within(self.cfg.op_timeout, "redlock node", async move {
                match m.run::<u64>(inv).await {
                    Ok(n) => Completion::Ok(n),
                    Err(e) => Completion::info(e),
                }
            })
        });
        let mut t = Tally::default();
        for c in join_all(calls).await {
            match c {
                Completion::Ok(n) if n > 0 => t.yes += 1,
                Completion::Ok(_) => t.no += 1,
                _ => t.unknown += 1,
            }
        }
        t
    }
}

impl Client for Redlock {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let key = lock_key(lock);
            let deadline = Instant::now() + self.cfg.acquire_timeout;
            let ttl_ms = self.cfg.ttl.as_millis().to_string();
            loop {
                let value = owner_value(&self.owner);
                let start = Instant::now();
                let t = self
                    .round(&SET_NX, &key, &[value.clone(), ttl_ms.clone()])
                    .await;
                let validity = self
                    .cfg
                    .ttl
                    .checked_sub(start.elapsed() + drift(self.cfg.ttl));
                if t.yes >= self.quorum() {
                    if let Some(v) = validity.filter(|v| !v.is_zero()) {
                        return Completion::Ok(Grant {
                            lock: lock.to_string(),
                            owner: self.owner.clone(),
                            lease: value,
                            lock_key: Some(key.clone()),
                            read_back: None,
                            token: None,
                            valid_until: Instant::now() + v,
                        });
                    }
                }
                // No usable majority: undo whatever we set, on every master.
                self.round(&COMPARE_AND_DELETE, &key, &[value]).await;
                if t.yes + t.unknown >= self.quorum() && t.yes < self.quorum() {
                    // Unanswered masters may have said yes: we might hold a majority until expiry.
                    return Completion::info(format!(
                        "redlock: {} yes, {} no, {} unanswered",
                        t.yes, t.no, t.unknown
                    ));
                }
                if Instant::now() >= deadline {
                    return Completion::fail(format!(
                        "acquire timeout: no majority (last round {} yes, {} no, {} unanswered)",
                        t.yes, t.no, t.unknown
                    ));
                }
                let backoff = rand::rng().random_range(5..=30);
                tokio::time::sleep(Duration::from_millis(backoff)).await;
            }
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let start = Instant::now();
            let args = [hold.lease.clone(), self.cfg.ttl.as_millis().to_string()];
            let t = self.round(&EXTEND, &lock_key(&hold.lock), &args).await;
            let validity = self
                .cfg
                .ttl
                .checked_sub(start.elapsed() + drift(self.cfg.ttl));
            match validity {
                Some(v) if t.yes >= self.quorum() => Completion::Ok(v),
                _ if t.no > self.masters.len() - self.quorum() => Completion::fail(format!(
                    "only {} of {} masters still hold our value",
                    t.yes,
                    self.masters.len()
                )),
                _ => Completion::info(format!(
                    "extend: {} yes, {} no, {} unanswered",
                    t.yes, t.no, t.unknown
                )),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let t = self
                .round(
                    &COMPARE_AND_DELETE,
                    &lock_key(&hold.lock),
                    std::slice::from_ref(&hold.lease),
                )
                .await;
            if t.yes > 0 {
                Completion::Ok(())
            } else if t.unknown == 0 {
                Completion::fail(NOT_OWNER)
            } else {
                Completion::info(format!("release: {} no, {} unanswered", t.no, t.unknown))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_one_percent_plus_two_ms() {
        assert_eq!(drift(Duration::from_secs(10)), Duration::from_millis(102));
    }
}
