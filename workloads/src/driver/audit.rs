//! A quick audit of a lock history for the recipe tests: every hold's interval and token, and
//! whether holds overlapped or tokens went backwards. (The checkers crate gives the real verdict
//! with evidence; this is the tests' own independent yardstick, small enough to trust.)

use results::{Event, OpType, Process, F};
use std::collections::HashMap;

/// One hold as the history shows it: [acquire ok, first of release invoke / lease-lost / exit /
/// an indeterminate outcome / the end of the history].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldSpan {
    pub process: u32,
    pub lease: String,
    pub token: Option<u64>,
    pub start: u64,
    pub end: u64,
    /// History index of the acquire `ok`.
    pub index: u64,
}

/// Every hold of `lock` in acquisition order.
pub fn holds(events: &[Event], lock: &str) -> Vec<HoldSpan> {
    let end_of_history = events.iter().map(|e| e.time).max().unwrap_or(0);
    let mut open: HashMap<u32, HoldSpan> = HashMap::new();
    let mut done = vec![];
    for e in events {
        let Process::Worker(p) = e.process else {
            continue;
        };
        let this_lock = e.lock.as_deref().is_none_or(|l| l == lock);
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) if this_lock => {
                if let Some(prev) = open.remove(&p) {
                    done.push(HoldSpan {
                        end: e.time,
                        ..prev
                    });
                }
                open.insert(
                    p,
                    HoldSpan {
                        process: p,
                        lease: e.lease.clone().unwrap_or_default(),
                        token: e.token,
                        start: e.time,
                        end: u64::MAX,
                        index: e.index,
                    },
                );
            }
            (F::Release, OpType::Invoke) | (F::LeaseLost, _) | (F::Exit, _) | (_, OpType::Info)
                if this_lock =>
            {
                if let Some(h) = open.remove(&p) {
                    done.push(HoldSpan { end: e.time, ..h });
                }
            }
            _ => {}
        }
    }
    done.extend(open.into_values().map(|h| HoldSpan {
        end: end_of_history,
        ..h
    }));
    done.sort_by_key(|h| (h.start, h.index));
    done
}

/// Pairs of holds whose intervals overlap.
pub fn overlaps(holds: &[HoldSpan]) -> Vec<(HoldSpan, HoldSpan)> {
    let mut out = vec![];
    for (i, a) in holds.iter().enumerate() {
        for b in &holds[i + 1..] {
            if b.start >= a.end {
                continue;
            }
            out.push((a.clone(), b.clone()));
        }
    }
    out
}

/// Consecutive acquisitions (in acquisition order) whose tokens did not strictly increase.
pub fn token_regressions(holds: &[HoldSpan]) -> Vec<(HoldSpan, HoldSpan)> {
    holds
        .windows(2)
        .filter(|w| match (w[0].token, w[1].token) {
            (Some(a), Some(b)) => b <= a,
            _ => false,
        })
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(i: u64, t: u64, p: u32, kind: OpType, f: F, token: Option<u64>) -> Event {
        let mut e = Event::new(t, Process::Worker(p), kind, f);
        e.index = i;
        e.lock = Some("l".into());
        e.lease = Some(format!("lease-{p}"));
        e.token = token;
        e
    }

    #[test]
    fn a_hold_ends_at_its_release_invoke_and_a_later_hold_does_not_overlap() {
        let h = vec![
            ev(0, 10, 1, OpType::Ok, F::Acquire, Some(1)),
            ev(1, 20, 1, OpType::Invoke, F::Release, Some(1)),
            ev(2, 30, 2, OpType::Ok, F::Acquire, Some(2)),
        ];
        let spans = holds(&h, "l");
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[0].start, spans[0].end), (10, 20));
        assert!(overlaps(&spans).is_empty());
        assert!(token_regressions(&spans).is_empty());
    }

    #[test]
    fn two_open_holds_overlap_and_a_lower_later_token_regresses() {
        let h = vec![
            ev(0, 10, 1, OpType::Ok, F::Acquire, Some(5)),
            ev(1, 30, 2, OpType::Ok, F::Acquire, Some(4)),
            ev(2, 40, 1, OpType::Info, F::LeaseLost, Some(5)),
        ];
        let spans = holds(&h, "l");
        assert_eq!(overlaps(&spans).len(), 1);
        assert_eq!(token_regressions(&spans).len(), 1);
    }
}
