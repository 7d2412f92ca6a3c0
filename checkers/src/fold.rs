//! The hold fold for readers outside the engine: the report draws each hold as a bar, the run's
//! live tracker asks who holds the lock right now (the target of `pause-holder`). Both feed the
//! engine's own [`HoldBook`] through the same derivation ([`holds::derive`]), so a hold means
//! the same thing to the checkers, the page and the nemesis: docs/design.md, "Holds", in one place.

use crate::holds::{self, Hold, HoldBook, HoldEnd, Recycler, Shared};
use crate::locks::{LockId, LockNames};
use results::{Event, EventRef};

/// One hold, once it ended (or the history did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldSpan<S = Hold> {
    pub hold: S,
    /// The lock's name.
    pub lock: String,
    /// Time (ns) and history index of the event that ended it; the last event's time and
    /// `None` when the history ended first.
    pub end: u64,
    pub end_index: Option<u64>,
    pub ended_by: HoldEnd,
}

/// Holds, fed one history event at a time in file order. `S` is how the records are shared:
/// `Rc` by default, `Arc` for a fold that lives behind a lock shared across threads.
#[derive(Debug)]
pub struct HoldFold<S = Hold> {
    locks: LockNames,
    book: HoldBook<S>,
    acquisitions: Recycler<S>,
    last_time: u64,
}

impl<S> Default for HoldFold<S> {
    fn default() -> Self {
        HoldFold {
            locks: LockNames::default(),
            book: HoldBook::default(),
            acquisitions: Recycler::default(),
            last_time: 0,
        }
    }
}

impl<S: Shared> HoldFold<S> {
    /// Takes one event in; `ended` hears of every hold it ends. Returns the hold it opens.
    pub fn event(&mut self, e: &EventRef<'_>, mut ended: impl FnMut(HoldSpan<S>)) -> Option<S> {
        self.last_time = self.last_time.max(e.time);
        let (lock, acquired) =
            holds::derive(e, &mut self.locks, &self.book, &mut self.acquisitions);
        let locks = &self.locks;
        self.book
            .apply_noting(e, lock, acquired.as_ref(), &mut |h, why| {
                ended(HoldSpan {
                    hold: h.clone(),
                    lock: locks.name(h.lock).to_string(),
                    end: e.time,
                    end_index: Some(e.index),
                    ended_by: why,
                })
            });
        acquired
    }

    /// The holds open now, oldest first.
    pub fn open(&self) -> Vec<&S> {
        let mut open: Vec<&S> = self.book.iter().collect();
        open.sort_by_key(|h| h.index);
        open
    }

    /// A lock's name.
    pub fn lock_name(&self, lock: LockId) -> &str {
        self.locks.name(lock)
    }

    /// The history ended: every hold still open ends with it.
    pub fn finish(self) -> Vec<HoldSpan<S>> {
        self.open()
            .into_iter()
            .map(|h| HoldSpan {
                hold: h.clone(),
                lock: self.locks.name(h.lock).to_string(),
                end: self.last_time,
                end_index: None,
                ended_by: HoldEnd::HistoryEnd,
            })
            .collect()
    }
}

/// Every hold of a history, ordered by the acquire `ok` that opened it.
pub fn hold_spans(history: &[Event]) -> Vec<HoldSpan> {
    let mut fold = HoldFold::<Hold>::default();
    let mut spans = Vec::new();
    for e in history {
        fold.event(&e.as_ref(), |s| spans.push(s));
    }
    spans.extend(fold.finish());
    spans.sort_by_key(|s| s.hold.index);
    spans
}

/// Pairs of holds (of one lock) whose intervals overlap, for tests that want the plain fact.
pub fn overlaps<'s>(spans: &'s [HoldSpan], lock: &str) -> Vec<(&'s HoldSpan, &'s HoldSpan)> {
    let of_lock: Vec<&HoldSpan> = spans.iter().filter(|s| s.lock == lock).collect();
    let mut out = Vec::new();
    for (i, a) in of_lock.iter().enumerate() {
        for b in &of_lock[i + 1..] {
            if b.hold.time < a.end && a.hold.time < b.end {
                out.push((*a, *b));
            }
        }
    }
    out
}

/// Consecutive acquisitions of one lock (in acquisition order) whose tokens did not strictly
/// increase.
pub fn falling_tokens<'s>(spans: &'s [HoldSpan], lock: &str) -> Vec<(&'s HoldSpan, &'s HoldSpan)> {
    let of_lock: Vec<&HoldSpan> = spans.iter().filter(|s| s.lock == lock).collect();
    of_lock
        .windows(2)
        .filter(|w| matches!((w[0].hold.token, w[1].hold.token), (Some(a), Some(b)) if b <= a))
        .map(|w| (w[0], w[1]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    /// docs/design.md, "Holds": the first of a release invoke, a lease-lost, any `info` of the
    /// process, its exit, the end of the history.
    #[test]
    fn every_way_a_hold_ends_is_the_design_s() {
        let acquire = |p: u32, lease: &str| {
            [
                invoke(p, Acquire).lock("l"),
                ok(p, Acquire)
                    .lock("l")
                    .owner(&format!("w{p}"))
                    .lease(lease),
            ]
        };
        let mut events: Vec<Event> = Vec::new();
        events.extend(acquire(1, "L1"));
        events.push(invoke(1, Release).lock("l"));
        events.extend(acquire(2, "L2"));
        events.push(info(2, LeaseLost).lock("l"));
        events.extend(acquire(3, "L3"));
        // An indeterminate write retires process 3: nobody knows what it still does.
        events.push(invoke(3, Write).key("k"));
        events.push(info(3, Write).key("k"));
        events.extend(acquire(4, "L4"));
        events.push(info(4, Exit));
        events.extend(acquire(5, "L5"));
        let spans = hold_spans(&history(events));
        let ends: Vec<(Option<&str>, HoldEnd)> =
            spans.iter().map(|s| (s.hold.lease(), s.ended_by)).collect();
        assert_eq!(
            ends,
            vec![
                (Some("L1"), HoldEnd::Release),
                (Some("L2"), HoldEnd::LeaseLost),
                (Some("L3"), HoldEnd::Retired),
                (Some("L4"), HoldEnd::Exit),
                (Some("L5"), HoldEnd::HistoryEnd),
            ]
        );
        assert_eq!(spans[2].end_index, Some(9), "the write's info ended L3");
        assert!(spans.iter().all(|s| s.lock == "l"));
    }
}
