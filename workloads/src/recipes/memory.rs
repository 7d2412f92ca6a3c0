//! The `memory` provider: an in-process lock service shared by in-process workers, so the whole
//! pipeline (driver, worker, ownership, resource, history) runs in a plain `cargo test`. Its
//! knobs reproduce the classic lock-service bugs the checkers must catch.

use crate::client::{Client, Completion, Grant, NOT_OWNER};
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The bugs a test can plant, by the names it writes (`memory_bugs:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryBug {
    ExpiresEarly,
    ReleaseWithoutOwnerCheck,
    TokensNotMonotonic,
}

impl MemoryBug {
    pub const ALL: [MemoryBug; 3] = [
        MemoryBug::ExpiresEarly,
        MemoryBug::ReleaseWithoutOwnerCheck,
        MemoryBug::TokensNotMonotonic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryBug::ExpiresEarly => "expires-early",
            MemoryBug::ReleaseWithoutOwnerCheck => "release-without-owner-check",
            MemoryBug::TokensNotMonotonic => "tokens-not-monotonic",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryBug> {
        MemoryBug::ALL.into_iter().find(|b| b.as_str() == s)
    }
}

/// Bugs the service can have on purpose.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemoryKnobs {
    /// The service expires a lease after this fraction of the ttl it promised (e.g. 0.3).
    pub expires_early: Option<f64>,
    /// A release removes whoever holds the lock, not only the caller's hold.
    pub release_without_owner_check: bool,
    /// Tokens cycle 1, 2, 3, 1, 2, ... instead of increasing.
    pub tokens_not_monotonic: bool,
}

impl MemoryKnobs {
    /// The knobs of these planted bugs (an early expiry keeps 30% of the ttl).
    pub fn planting(bugs: &[MemoryBug]) -> MemoryKnobs {
        MemoryKnobs {
            expires_early: bugs.contains(&MemoryBug::ExpiresEarly).then_some(0.3),
            release_without_owner_check: bugs.contains(&MemoryBug::ReleaseWithoutOwnerCheck),
            tokens_not_monotonic: bugs.contains(&MemoryBug::TokensNotMonotonic),
        }
    }
}

#[derive(Debug)]
struct Holder {
    lease: String,
    expires: Instant,
}

#[derive(Debug, Default)]
struct State {
    holders: HashMap<String, Holder>,
    grants: u64,
}

/// The service: one per test, cloned into every worker's client.
#[derive(Debug, Clone, Default)]
pub struct MemoryLockService {
    knobs: MemoryKnobs,
    state: Arc<Mutex<State>>,
}

impl MemoryLockService {
    pub fn new(knobs: MemoryKnobs) -> Self {
        Self {
            knobs,
            state: Arc::default(),
        }
    }

    /// A client for one worker.
    pub fn client(&self, owner: &str, ttl: Duration, acquire_timeout: Duration) -> MemoryClient {
        MemoryClient {
            service: self.clone(),
            owner: owner.to_string(),
            ttl,
            acquire_timeout,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the grant `lease` of `lock` still holds it now, as the service sees it.
    pub fn holds(&self, lock: &str, lease: &str) -> bool {
        let now = Instant::now();
        self.state()
            .holders
            .get(lock)
            .is_some_and(|h| h.lease == lease && h.expires > now)
    }

    fn effective_ttl(&self, ttl: Duration) -> Duration {
        match self.knobs.expires_early {
            Some(f) => ttl.mul_f64(f.clamp(0.0, 1.0)),
            None => ttl,
        }
    }

    fn try_grant(&self, lock: &str, owner: &str, ttl: Duration) -> Option<Grant> {
        let now = Instant::now();
        let mut st = self.state();
        if st.holders.get(lock).is_some_and(|h| h.expires > now) {
            return None;
        }
        st.grants += 1;
        let n = st.grants;
        let token = if self.knobs.tokens_not_monotonic {
            (n - 1) % 3 + 1
        } else {
            n
        };
        let lease = format!("mem-{n}");
        st.holders.insert(
            lock.to_string(),
            Holder {
                lease: lease.clone(),
                expires: now + self.effective_ttl(ttl),
            },
        );
        Some(Grant {
            lock: lock.to_string(),
            owner: owner.to_string(),
            lock_key: Some(format!("memory/{lock}")),
            read_back: None,
            lease,
            token: Some(token),
            valid_until: now + ttl,
        })
    }
}

/// One worker's view of the memory service.
#[derive(Debug, Clone)]
pub struct MemoryClient {
    service: MemoryLockService,
    owner: String,
    ttl: Duration,
    acquire_timeout: Duration,
}

impl Client for MemoryClient {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let deadline = Instant::now() + self.acquire_timeout;
            loop {
                if let Some(hold) = self.service.try_grant(lock, &self.owner, self.ttl) {
                    return Completion::Ok(hold);
                }
                if Instant::now() >= deadline {
                    return Completion::fail("acquire timeout: the lock stayed held by another");
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let now = Instant::now();
            let extend = self.service.effective_ttl(self.ttl);
            let mut st = self.service.state();
            match st.holders.get_mut(&hold.lock) {
                Some(h) if h.lease == hold.lease && h.expires > now => {
                    h.expires = now + extend;
                    Completion::Ok(self.ttl)
                }
                _ => Completion::fail("lease expired"),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let now = Instant::now();
            let mut st = self.service.state();
            let mine = st
                .holders
                .get(&hold.lock)
                .is_some_and(|h| h.lease == hold.lease && h.expires > now);
            // Without the owner check it removes whoever holds the lock; a release that removed
            // nothing says so either way.
            let removes = mine
                || (self.service.knobs.release_without_owner_check
                    && st.holders.contains_key(&hold.lock));
            if removes {
                st.holders.remove(&hold.lock);
                Completion::Ok(())
            } else {
                Completion::fail(NOT_OWNER)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn exclusive_until_expiry_then_tokens_increase() {
        let svc = MemoryLockService::default();
        let a = svc.client("a", TTL, Duration::from_millis(20));
        let b = svc.client("b", TTL, Duration::from_secs(1));
        let Completion::Ok(ha) = a.acquire("l").await else {
            panic!()
        };
        assert!(matches!(a.acquire("l").await, Completion::Fail(_)));
        let Completion::Ok(hb) = b.acquire("l").await else {
            panic!()
        };
        assert!(hb.token > ha.token);
        assert_eq!(a.release(&ha).await, Completion::Fail(NOT_OWNER.into()));
        assert!(matches!(a.renew(&ha).await, Completion::Fail(_)));
        assert_eq!(b.release(&hb).await, Completion::Ok(()));
    }

    #[tokio::test]
    async fn knobs_reproduce_the_classic_bugs() {
        let svc = MemoryLockService::new(MemoryKnobs {
            release_without_owner_check: true,
            tokens_not_monotonic: true,
            ..Default::default()
        });
        let a = svc.client("a", TTL, Duration::from_millis(10));
        let mut tokens = vec![];
        for _ in 0..4 {
            let Completion::Ok(h) = a.acquire("l").await else {
                panic!()
            };
            tokens.push(h.token.unwrap());
            a.release(&h).await;
        }
        assert_eq!(tokens, [1, 2, 3, 1]);
        let Completion::Ok(h) = a.acquire("l").await else {
            panic!()
        };
        let stale = Grant {
            lease: "someone-else".into(),
            ..h
        };
        assert_eq!(a.release(&stale).await, Completion::Ok(()));
    }
}
