//! How the engine calls its checkers. A call through a `Box<dyn Checker>` can be neither inlined
//! nor predicted as well as a direct one, so every checker of the standard set is called
//! directly; only a set a test chooses goes through the vtable. Once the four lock checkers
//! were the only direct ones; then grant order made stale-accepted-write read every acquire
//! invoke and `ok` too, and its vtable call, on half the events of a lock history, was a third
//! of the instructions the check gained (it now reads each acquire's invoke from the shared hold
//! book, and sees only the `ok`). The standard set is listed here once;
//! [`crate::all_checkers`] boxes the same list.
//!
//! Direct, but not inlined ([`out_of_line`]): with every checker's event path inlined into the
//! engine's loop over them, the compiler kept less of the loop in registers and set up more for
//! every event than the calls cost: out of line, the engine ran 2.3% fewer instructions on
//! vs_porcupine's histories (2.411 G to 2.356 G, callgrind).

use crate::checker::{Checker, Context, Findings};
use crate::kinds::{
    ConcurrentHolders, DeletedAnothersKey, DoubleRelease, DuplicateEffect, DuplicateToken,
    GrantedGone, HeldAfterLoss, HeldAgainstService, LockedOutClient, LostUpdate, PhantomHolder,
    StaleAcceptedWrite, StuckLock, TokenOutOfOrder,
};
use results::store::CheckConfig;
use results::{EventRef, F};

/// One checker of the engine.
pub(crate) enum Dispatch {
    StaleAcceptedWrite(StaleAcceptedWrite),
    DuplicateToken(DuplicateToken),
    DoubleRelease(DoubleRelease),
    ConcurrentHolders(ConcurrentHolders),
    LostUpdate(LostUpdate),
    DuplicateEffect(DuplicateEffect),
    StuckLock(StuckLock),
    HeldAfterLoss(HeldAfterLoss),
    LockedOutClient(LockedOutClient),
    GrantedGone(GrantedGone),
    PhantomHolder(PhantomHolder),
    DeletedAnothersKey(DeletedAnothersKey),
    HeldAgainstService(HeldAgainstService),
    TokenOutOfOrder(TokenOutOfOrder),
    Other(Box<dyn Checker>),
}

impl Dispatch {
    /// Whether the checker reads the resource log ([`Checker::resource`]): only those are handed
    /// its entries. Every kind is named here, so a kind that comes to read the log is decided
    /// on, not left out by a wildcard.
    pub(crate) fn reads_resource_log(&self) -> bool {
        match self {
            Dispatch::StaleAcceptedWrite(_)
            | Dispatch::DuplicateToken(_)
            | Dispatch::DuplicateEffect(_)
            | Dispatch::Other(_) => true,
            Dispatch::DoubleRelease(_)
            | Dispatch::ConcurrentHolders(_)
            | Dispatch::LostUpdate(_)
            | Dispatch::StuckLock(_)
            | Dispatch::HeldAfterLoss(_)
            | Dispatch::LockedOutClient(_)
            | Dispatch::GrantedGone(_)
            | Dispatch::PhantomHolder(_)
            | Dispatch::DeletedAnothersKey(_)
            | Dispatch::HeldAgainstService(_)
            | Dispatch::TokenOutOfOrder(_) => false,
        }
    }
}

/// The fourteen checkers of docs/design.md, "Anomaly kinds" (sixteen kinds: double-release also sorts
/// out release-of-lost-lock, duplicate-token token-regression) under this configuration, in
/// report order.
pub(crate) fn standard(cfg: &CheckConfig) -> Vec<Dispatch> {
    vec![
        Dispatch::StaleAcceptedWrite(StaleAcceptedWrite::default()),
        Dispatch::DuplicateToken(DuplicateToken::default()),
        Dispatch::DoubleRelease(DoubleRelease::default()),
        Dispatch::ConcurrentHolders(ConcurrentHolders::new(cfg.ttl)),
        Dispatch::LostUpdate(LostUpdate::default()),
        Dispatch::DuplicateEffect(DuplicateEffect::default()),
        Dispatch::StuckLock(StuckLock::new(cfg.ttl, cfg.recovery_slack)),
        Dispatch::HeldAfterLoss(HeldAfterLoss::default()),
        Dispatch::LockedOutClient(LockedOutClient::new(
            cfg.ttl,
            cfg.recovery_slack,
            cfg.workers,
        )),
        Dispatch::GrantedGone(GrantedGone::default()),
        Dispatch::PhantomHolder(PhantomHolder::default()),
        Dispatch::DeletedAnothersKey(DeletedAnothersKey::default()),
        Dispatch::HeldAgainstService(HeldAgainstService::default()),
        Dispatch::TokenOutOfOrder(TokenOutOfOrder::default()),
    ]
}

/// One checker's [`Checker::event`], called (see the module doc).
#[inline(never)]
fn out_of_line<C: Checker>(c: &mut C, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
    c.event(e, cx, out)
}

impl Dispatch {
    /// [`Checker::event`], called directly where the checker's type is known.
    #[inline]
    pub(crate) fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        match self {
            // Only a tokenless grant is remembered (a token orders generations by itself): the
            // call for an acquire `ok` with a token did nothing, and was 2% of the engine's
            // instructions on vs_porcupine's histories.
            Dispatch::StaleAcceptedWrite(_) if e.token.is_some() && matches!(e.f, F::Acquire) => {}
            Dispatch::StaleAcceptedWrite(c) => out_of_line(c, e, cx, out),
            // An acquire `ok` only settles suspects: with none, the call did nothing (the
            // acquisition itself it reads from the shared hold book when a release comes).
            Dispatch::DoubleRelease(c) if !c.judging() && matches!(e.f, F::Acquire) => {}
            Dispatch::DuplicateToken(c) => out_of_line(c, e, cx, out),
            Dispatch::DoubleRelease(c) => out_of_line(c, e, cx, out),
            Dispatch::ConcurrentHolders(c) => {
                if !c.unopposed(e, cx) {
                    out_of_line(c, e, cx, out)
                }
            }
            Dispatch::LostUpdate(c) => out_of_line(c, e, cx, out),
            Dispatch::DuplicateEffect(c) => out_of_line(c, e, cx, out),
            Dispatch::StuckLock(c) => out_of_line(c, e, cx, out),
            Dispatch::HeldAfterLoss(c) => out_of_line(c, e, cx, out),
            Dispatch::GrantedGone(c) => out_of_line(c, e, cx, out),
            Dispatch::PhantomHolder(c) => out_of_line(c, e, cx, out),
            Dispatch::DeletedAnothersKey(c) => out_of_line(c, e, cx, out),
            Dispatch::HeldAgainstService(c) => out_of_line(c, e, cx, out),
            Dispatch::TokenOutOfOrder(c) => out_of_line(c, e, cx, out),
            Dispatch::LockedOutClient(c) => out_of_line(c, e, cx, out),
            Dispatch::Other(c) => c.event(e, cx, out),
        }
    }

    /// The checker behind a vtable, for everything but the per-event call.
    pub(crate) fn boxed(self) -> Box<dyn Checker> {
        match self {
            Dispatch::StaleAcceptedWrite(c) => Box::new(c),
            Dispatch::DuplicateToken(c) => Box::new(c),
            Dispatch::DoubleRelease(c) => Box::new(c),
            Dispatch::ConcurrentHolders(c) => Box::new(c),
            Dispatch::LostUpdate(c) => Box::new(c),
            Dispatch::DuplicateEffect(c) => Box::new(c),
            Dispatch::StuckLock(c) => Box::new(c),
            Dispatch::HeldAfterLoss(c) => Box::new(c),
            Dispatch::GrantedGone(c) => Box::new(c),
            Dispatch::PhantomHolder(c) => Box::new(c),
            Dispatch::DeletedAnothersKey(c) => Box::new(c),
            Dispatch::HeldAgainstService(c) => Box::new(c),
            Dispatch::TokenOutOfOrder(c) => Box::new(c),
            Dispatch::LockedOutClient(c) => Box::new(c),
            Dispatch::Other(c) => c,
        }
    }

    /// The checker, as a trait object (kind, interests, whether it reads the shared state).
    pub(crate) fn as_dyn(&self) -> &dyn Checker {
        match self {
            Dispatch::StaleAcceptedWrite(c) => c,
            Dispatch::DuplicateToken(c) => c,
            Dispatch::DoubleRelease(c) => c,
            Dispatch::ConcurrentHolders(c) => c,
            Dispatch::LostUpdate(c) => c,
            Dispatch::DuplicateEffect(c) => c,
            Dispatch::StuckLock(c) => c,
            Dispatch::HeldAfterLoss(c) => c,
            Dispatch::GrantedGone(c) => c,
            Dispatch::PhantomHolder(c) => c,
            Dispatch::DeletedAnothersKey(c) => c,
            Dispatch::HeldAgainstService(c) => c,
            Dispatch::TokenOutOfOrder(c) => c,
            Dispatch::LockedOutClient(c) => c,
            Dispatch::Other(c) => &**c,
        }
    }

    /// The checker, as a mutable trait object (resource entries, the end).
    pub(crate) fn get(&mut self) -> &mut dyn Checker {
        match self {
            Dispatch::StaleAcceptedWrite(c) => c,
            Dispatch::DuplicateToken(c) => c,
            Dispatch::DoubleRelease(c) => c,
            Dispatch::ConcurrentHolders(c) => c,
            Dispatch::LostUpdate(c) => c,
            Dispatch::DuplicateEffect(c) => c,
            Dispatch::StuckLock(c) => c,
            Dispatch::HeldAfterLoss(c) => c,
            Dispatch::GrantedGone(c) => c,
            Dispatch::PhantomHolder(c) => c,
            Dispatch::DeletedAnothersKey(c) => c,
            Dispatch::HeldAgainstService(c) => c,
            Dispatch::TokenOutOfOrder(c) => c,
            Dispatch::LockedOutClient(c) => c,
            Dispatch::Other(c) => &mut **c,
        }
    }
}
