//! How the engine calls its checkers. The four lock checkers see most events of a lock
//! history, and a call through a `Box<dyn Checker>` could not be inlined or predicted as
//! well as a direct one: they are called directly, every other checker (and any set a test
//! chooses) through its vtable. The standard set is listed here once; [`crate::all_checkers`]
//! boxes the same list.

use crate::checker::{Checker, Context, Findings};
use crate::kinds::{
    ConcurrentHolders, DoubleRelease, DuplicateEffect, DuplicateToken, LostUpdate,
    StaleAcceptedWrite, StuckLock, TokenRegression,
};
use results::store::CheckConfig;
use results::EventRef;

/// One checker of the engine.
pub(crate) enum Dispatch {
    DuplicateToken(DuplicateToken),
    TokenRegression(TokenRegression),
    DoubleRelease(DoubleRelease),
    ConcurrentHolders(ConcurrentHolders),
    Other(Box<dyn Checker>),
}

/// The eight checkers of docs/design.md, "Anomaly kinds" (nine kinds: double-release also sorts out
/// release-of-lost-lock) under this configuration, in report order.
pub(crate) fn standard(cfg: &CheckConfig) -> Vec<Dispatch> {
    vec![
        Dispatch::Other(Box::new(StaleAcceptedWrite::default())),
        Dispatch::DuplicateToken(DuplicateToken::default()),
        Dispatch::TokenRegression(TokenRegression::default()),
        Dispatch::DoubleRelease(DoubleRelease::default()),
        Dispatch::ConcurrentHolders(ConcurrentHolders::default()),
        Dispatch::Other(Box::new(LostUpdate::default())),
        Dispatch::Other(Box::new(DuplicateEffect::default())),
        Dispatch::Other(Box::new(StuckLock::new(cfg.ttl, cfg.recovery_slack))),
    ]
}

impl Dispatch {
    /// [`Checker::event`], called directly where the checker's type is known.
    #[inline]
    pub(crate) fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        match self {
            Dispatch::DuplicateToken(c) => c.event(e, cx, out),
            Dispatch::TokenRegression(c) => c.event(e, cx, out),
            Dispatch::DoubleRelease(c) => c.event(e, cx, out),
            Dispatch::ConcurrentHolders(c) => c.event(e, cx, out),
            Dispatch::Other(c) => c.event(e, cx, out),
        }
    }

    /// The checker behind a vtable, for everything but the per-event call.
    pub(crate) fn boxed(self) -> Box<dyn Checker> {
        match self {
            Dispatch::DuplicateToken(c) => Box::new(c),
            Dispatch::TokenRegression(c) => Box::new(c),
            Dispatch::DoubleRelease(c) => Box::new(c),
            Dispatch::ConcurrentHolders(c) => Box::new(c),
            Dispatch::Other(c) => c,
        }
    }

    /// The checker, as a trait object (kind, interests, whether it reads the shared state).
    pub(crate) fn as_dyn(&self) -> &dyn Checker {
        match self {
            Dispatch::DuplicateToken(c) => c,
            Dispatch::TokenRegression(c) => c,
            Dispatch::DoubleRelease(c) => c,
            Dispatch::ConcurrentHolders(c) => c,
            Dispatch::Other(c) => &**c,
        }
    }

    /// The checker, as a mutable trait object (resource entries, the end).
    pub(crate) fn get(&mut self) -> &mut dyn Checker {
        match self {
            Dispatch::DuplicateToken(c) => c,
            Dispatch::TokenRegression(c) => c,
            Dispatch::DoubleRelease(c) => c,
            Dispatch::ConcurrentHolders(c) => c,
            Dispatch::Other(c) => &mut **c,
        }
    }
}
