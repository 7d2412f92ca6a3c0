//! The `Client` seam: one lock recipe as its users run it (acquire / renew / release), answering
//! every call with a typed [`Completion`] that carries Jepsen's three outcomes. A recipe never
//! panics or returns a bare error to the worker: anything it cannot vouch for is `Info`.

use futures::future::BoxFuture;
use std::fmt;
use std::time::Duration;

/// The outcome of one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion<T> {
    /// It happened.
    Ok(T),
    /// It certainly did not happen (the reason says why, e.g. `release-rejected-not-owner`).
    Fail(String),
    /// Nobody knows: an error, a timeout, a lost connection.
    Info(String),
    /// Nobody knows, because the client library raised what its documentation does not list as
    /// an operational error (a bug, not a fault): the history's outcome is `info` marked
    /// `exception`, and the verdict is then at best unknown. The message starts with
    /// [`EXCEPTION`].
    Exception(String),
}

/// A completion that is not `Ok`: what a caller passes on alike whatever its operation was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotOk {
    Fail(String),
    Info(String),
    Exception(String),
}

impl fmt::Display for NotOk {
    /// The message: why it failed, or what nobody knows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotOk::Fail(e) | NotOk::Info(e) | NotOk::Exception(e) => f.write_str(e),
        }
    }
}

impl<T> From<NotOk> for Completion<T> {
    fn from(not_ok: NotOk) -> Self {
        match not_ok {
            NotOk::Fail(e) => Completion::Fail(e),
            NotOk::Info(e) => Completion::Info(e),
            NotOk::Exception(e) => Completion::Exception(e),
        }
    }
}

/// How a library exception's message begins, for a person reading the history.
pub const EXCEPTION: &str = "library exception: ";

impl<T> Completion<T> {
    /// A library exception (see [`Completion::Exception`]).
    pub fn exception(why: impl fmt::Display) -> Self {
        Completion::Exception(format!("{EXCEPTION}{why}"))
    }

    /// `Info` with the message prefixed "indeterminate: ".
    pub fn info(why: impl fmt::Display) -> Self {
        Completion::Info(format!("indeterminate: {why}"))
    }

    pub fn fail(why: impl fmt::Display) -> Self {
        Completion::Fail(why.to_string())
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Completion<U> {
        match self {
            Completion::Ok(t) => Completion::Ok(f(t)),
            Completion::Fail(e) => Completion::Fail(e),
            Completion::Info(e) => Completion::Info(e),
            Completion::Exception(e) => Completion::Exception(e),
        }
    }

    /// The value of `Ok`, or what the completion is instead.
    pub fn into_result(self) -> Result<T, NotOk> {
        match self {
            Completion::Ok(t) => Ok(t),
            Completion::Fail(e) => Err(NotOk::Fail(e)),
            Completion::Info(e) => Err(NotOk::Info(e)),
            Completion::Exception(e) => Err(NotOk::Exception(e)),
        }
    }

    /// `f` of the value of `Ok`; any other completion passes through unchanged.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Completion<U>) -> Completion<U> {
        match self.into_result() {
            Ok(t) => f(t),
            Err(not_ok) => not_ok.into(),
        }
    }

    pub fn is_ok(&self) -> bool {
        matches!(self, Completion::Ok(_))
    }
}

/// Runs `fut` with a deadline; running out of time is `Info` (the request may still land).
pub async fn within<T>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = Completion<T>>,
) -> Completion<T> {
    match tokio::time::timeout(limit, fut).await {
        Ok(c) => c,
        Err(_) => Completion::info(format!("{what} timed out after {limit:?}")),
    }
}

/// What a lock library answers when asked whether it holds a lock: its own belief, and, where
/// its adapter can also read the lock service, what the service said (a separate answer: the
/// belief is never repaired with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Belief {
    pub held: bool,
    pub server_held: Option<bool>,
}

impl Belief {
    /// A belief with no server read beside it.
    pub fn held(held: bool) -> Self {
        Belief {
            held,
            server_held: None,
        }
    }
}

/// A check's answer as a renewal's ([`Client::renew`]): held confirms the hold for `ttl` from
/// when the question was sent; not held is a definite loss. The library's belief decides, never
/// the server read beside it.
pub fn checked_renewal(answer: Completion<Belief>, ttl: Duration) -> Completion<Duration> {
    answer.and_then(|b| match b.held {
        true => Completion::Ok(ttl),
        false => Completion::fail("the library says it no longer holds the lock"),
    })
}

/// One acquisition as the provider granted it (the client side of a hold: what the recipe keeps
/// to renew and release it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub lock: String,
    /// Who holds it (the random owner value, session id, ...).
    pub owner: String,
    /// The provider's handle: etcd lease id, ZooKeeper node path, Redis owner value.
    pub lease: String,
    /// The provider's key that embodies the hold (etcd key, ZooKeeper node, Redis key), for
    /// resources that guard writes with it (`etcd-guard`).
    pub lock_key: Option<String>,
    /// Fence token; `None` for recipes without one (Redlock).
    pub token: Option<u64>,
    /// What the client's own read-back after the grant found, when it found the grant's node or
    /// key gone (an adapter's `read_back`): the grant stands, as the library gave it.
    pub read_back: Option<String>,
    /// Until when the grant is certainly valid (CLOCK_MONOTONIC): the send time of the last
    /// request that confirmed it, plus the ttl it confirmed.
    pub valid_until: std::time::Instant,
}

/// The reason string of a release that certainly did not remove the lock because we no longer
/// own it (mapped to the `release-rejected-not-owner` result).
pub const NOT_OWNER: &str = "release-rejected-not-owner";

/// A lock recipe. Methods take `&self` so that a background renewal task and the work loop can
/// share one client; a recipe keeps whatever per-hold state it needs (keep-alive streams, the
/// ZooKeeper session) inside.
pub trait Client: Send + Sync {
    /// Blocks until the lock is granted (`Ok`), certainly not granted within the configured
    /// acquire timeout (`Fail`), or unknown (`Info`).
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>>;

    /// Extends or confirms the hold. `Ok(validity)`: held for at least `validity` from the moment
    /// the renewal was sent; `Fail`: certainly not held any more; `Info`: cannot confirm.
    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>>;

    /// Releases the hold. `Fail(NOT_OWNER)` when the provider refused because it is not ours.
    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>>;

    /// Asks whether the hold is still held, extending nothing: `Some` for a client whose
    /// keep-alive is such a question (an adapter with `check` and no `renew`), which the worker
    /// then asks instead of [`Client::renew`] and records in the history as `f = check`; `None`
    /// (the default) where the keep-alive renews, or where there is nothing to ask (the client
    /// already knows the hold is lost).
    fn check<'a>(&'a self, _hold: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        None
    }

    /// The application's own question before a write (the profile's `ask: before-write`):
    /// whether the library believes it holds the lock, for any client that can be asked, even
    /// one whose keep-alive renews. `None` where there is nothing to ask.
    fn ask<'a>(&'a self, _hold: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        None
    }

    /// Whether the library itself says how long a hold lasts (a library behind its adapter: an
    /// application has only its word), rather than the worker's clock over the recipe's
    /// renewals (fencecheck's own recipes).
    fn judges_its_own_hold(&self) -> bool {
        false
    }

    /// Forgets the current hold and keeps the client, as an application that goes on after an
    /// error does (the profile's `on_error: keep`): its library's session, pool and lock
    /// objects serve the next operation.
    fn forget(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Forgets whatever the client holds or may hold, without releasing it, as if it had
    /// crashed: after any `info` the process is retired (docs/design.md, "history.jsonl"), and
    /// an acquire or a release that ended `info` may have left a lease, a node or a session
    /// behind that only the client's end lets expire. Called after every `info`, hold or not.
    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_the_failure_kind() {
        let f: Completion<u32> = Completion::fail("nope");
        assert_eq!(f.map(|x| x + 1), Completion::Fail("nope".into()));
        let i: Completion<u32> = Completion::info("lost connection");
        assert_eq!(
            i.map(|x| x + 1),
            Completion::Info("indeterminate: lost connection".into())
        );
        assert_eq!(Completion::Ok(1).map(|x| x + 1), Completion::Ok(2));
    }

    #[test]
    fn the_belief_decides_a_checked_renewal_never_the_server_read() {
        let ttl = Duration::from_secs(2);
        let believes = Belief {
            held: true,
            server_held: Some(false),
        };
        assert_eq!(
            checked_renewal(Completion::Ok(believes), ttl),
            Completion::Ok(ttl)
        );
        let doubts = Belief {
            held: false,
            server_held: Some(true),
        };
        assert!(matches!(
            checked_renewal(Completion::Ok(doubts), ttl),
            Completion::Fail(_)
        ));
    }

    #[tokio::test]
    async fn a_timeout_is_indeterminate() {
        let c: Completion<()> = within(Duration::from_millis(10), "acquire", async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Completion::Ok(())
        })
        .await;
        assert!(matches!(c, Completion::Info(m) if m.contains("acquire timed out")));
    }
}
