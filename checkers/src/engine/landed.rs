//! Which of the run's planned faults landed (docs/design.md, "What a verdict may claim"). The
//! nemesis records a fault that found nothing to strike (no holder, no acquire in flight within
//! half its length) or could not be applied as a start carrying an error; a run that asked for
//! faults and had none of them land tested none of what it asked, so its verdict is at best
//! unknown. The outages outside the plan (`node-died`, `node-frozen`) are not planned faults, nor
//! is a holder freeze aimed again because its target had let go first. A cut of the next reply
//! lands when a reply spends it, a holder freeze when its target still held: their stop lines
//! say when not.

use results::fault::{AIMED_AGAIN, CUT_UNSPENT, HOLDER_MISSED, NODE_DIED, NODE_FROZEN};
use results::landing::Landing;
use results::{EventRef, Verdict, F};

/// The planned fault starts of a run: in all and per fault, how many, and how many carried no
/// error.
#[derive(Debug, Default)]
pub(super) struct Landed {
    landing: Landing,
}

impl Landed {
    /// One nemesis event.
    pub(super) fn event(&mut self, e: &EventRef<'_>) {
        match &e.f {
            F::Start(fault) if &**fault != NODE_DIED && &**fault != NODE_FROZEN => {
                self.landing.see(fault, e.error().is_none());
            }
            // A cut no reply spent was armed, and struck nothing; so did a holder freeze that
            // reached a worker which had let go.
            F::Stop(fault)
                if e.error().is_some_and(|w| {
                    w.starts_with(CUT_UNSPENT) || w.starts_with(HOLDER_MISSED)
                }) =>
            {
                self.landing.unland(fault);
            }
            // A holder freeze aimed again is no planned start of its own.
            F::Stop(fault) if e.error().is_some_and(|w| w.starts_with(AIMED_AGAIN)) => {
                self.landing.withdraw(fault);
            }
            _ => {}
        }
    }

    /// `stats.faults` ([`Landing`]), and the reason the verdict is unknown when none of the
    /// planned faults landed.
    pub(super) fn finish(&self, verdict: &mut Verdict) {
        let l = &self.landing;
        if l.planned == 0 {
            return;
        }
        verdict
            .stats
            .insert("faults".into(), serde_json::to_value(l).unwrap_or_default());
        if l.landed == 0 {
            verdict.unknown_reasons.push(format!(
                "none of the {} planned fault{} landed (each found nothing to strike, could \
                 not be applied, or was a cut no reply spent): the run tested none of the \
                 faults it asked for",
                l.planned,
                if l.planned == 1 { "" } else { "s" }
            ));
        }
    }
}
