//! `stale-accepted-write` with `basis: every-order`: tokenless acquisitions X and Y of one lock
//! whose acquires overlapped (neither's `ok` came before the other's invoke), so grant order
//! cannot say which generation is the newer, and which were held at once (one's certain hold
//! was open when the other was granted). When the resource accepted writes to one key from
//! X, then Y, then X again, the order does not matter: if X was granted first, X's last write
//! came after the newer Y's; if Y was, Y's write came after the newer X's first. One of them is
//! stale either way, and the evidence names both orders.
//!
//! X then Y alone is stale only if Y was the older: nothing is claimed, and the checker's stats
//! count the pair as undecided (with a note saying the overlap left it so), so the report shows
//! what the run could not judge instead of a silent pass.
//!
//! Writes are kept per (key, lock) as runs (consecutive accepted writes of one generation), at
//! most [`KEPT`] runs back: the pattern is looked for only among them, which bounds memory and
//! the cost of each write (a pattern spread over more runs of other writers is not claimed).

use super::{write_evidence, Grant};
use crate::checker::Findings;
use crate::diagnosis;
use crate::hashing::FastMap;
use results::ResourceRef;
use serde_json::json;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

/// How many runs of writes are kept per (key, lock).
pub(super) const KEPT: usize = 64;

/// Consecutive accepted writes to one key by one generation.
#[derive(Debug, Clone)]
struct Run {
    grant: Rc<Grant>,
    /// Resource seq and time of its first and of its last write.
    first: (u64, u64),
    last: (u64, u64),
}

/// Two generations of one lock whose writes to a key alternated: (key, lock, the two grants'
/// history indices, smaller first).
type Pair = (String, String, u64, u64);

/// The runs of every (key, lock), and the pairs judged or left undecided.
#[derive(Debug, Default)]
pub(in crate::kinds) struct Runs {
    by_slot: FastMap<(String, String), VecDeque<Run>>,
    reported: BTreeSet<Pair>,
    undecided: BTreeSet<Pair>,
}

/// Whether real time orders two grants: one's acquire completed before the other's was invoked.
fn ordered(x: &Grant, y: &Grant) -> bool {
    y.invoked.1 > x.granted.1 || x.invoked.1 > y.granted.1
}

/// Two grants the rule judges: not ordered by real time, and held at once. (Holds one after the
/// other whose acquires overlapped, the hand-off of workers blocked in acquire, are neither
/// claimed nor counted undecided: nothing says they ever competed.)
fn competing(x: &Grant, y: &Grant) -> bool {
    !ordered(x, y) && (x.overlaps.contains(&y.granted.0) || y.overlaps.contains(&x.granted.0))
}

fn pair(slot: &(String, String), x: &Grant, y: &Grant) -> Pair {
    let (a, b) = (x.granted.0.min(y.granted.0), x.granted.0.max(y.granted.0));
    (slot.0.clone(), slot.1.clone(), a, b)
}

impl Runs {
    /// The resource accepted `r`, a write of generation `x`, to `slot` (key, lock).
    pub(super) fn accepted(
        &mut self,
        slot: &(String, String),
        x: Rc<Grant>,
        r: &ResourceRef<'_>,
        out: &mut Findings,
    ) {
        if !self.by_slot.contains_key(slot) {
            self.by_slot.insert(slot.clone(), VecDeque::new());
        }
        let Some(runs) = self.by_slot.get_mut(slot) else {
            return;
        };
        if let Some(last) = runs.back_mut().filter(|l| Rc::ptr_eq(&l.grant, &x)) {
            last.last = (r.seq, r.time);
            return;
        }
        // X's earlier run, if any: only runs that ended after X's grant can be X's.
        let earlier = runs
            .iter()
            .enumerate()
            .rev()
            .take_while(|(_, run)| run.last.1 >= x.granted.1)
            .find(|(_, run)| Rc::ptr_eq(&run.grant, &x))
            .map(|(i, _)| i);
        if let Some(i) = earlier {
            let between = runs.iter().skip(i + 1);
            let y = between
                .filter(|y| !Rc::ptr_eq(&y.grant, &x) && competing(&x, &y.grant))
                .find(|y| !self.reported.contains(&pair(slot, &x, &y.grant)));
            if let Some(y) = y {
                let key = pair(slot, &x, &y.grant);
                self.undecided.remove(&key);
                self.reported.insert(key);
                report(r, (&x, &runs[i]), y, out);
            }
        }
        if let Some(prev) = runs.back().filter(|p| competing(&x, &p.grant)) {
            let key = pair(slot, &x, &prev.grant);
            if !self.reported.contains(&key) {
                self.undecided.insert(key);
            }
        }
        if runs.len() == KEPT {
            runs.pop_front();
        }
        runs.push_back(Run {
            grant: x,
            first: (r.seq, r.time),
            last: (r.seq, r.time),
        });
    }

    /// The pairs left undecided, as the kind's note and stat.
    pub(super) fn note_undecided(&self, out: &mut Findings) {
        let n = self.undecided.len() as u64;
        if n == 0 {
            return;
        }
        out.stats.insert("undecided_overlaps".into(), json!(n));
        out.note = Some(format!(
            "{n} pair{} of tokenless acquisitions whose acquires overlapped wrote one key in an \
             order stale only if the later writer was the older generation: the overlap left \
             {} undecided (not claimed)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        ));
    }
}

/// X wrote (run `xr`), then Y (run `y`), then X again (`r`): stale in either order.
fn report(r: &ResourceRef<'_>, (x, xr): (&Grant, &Run), y: &Run, out: &mut Findings) {
    let yg = &y.grant;
    let mut evidence = write_evidence(r, "every-order");
    evidence.lock = Some(x.lock.clone());
    evidence.indices = vec![x.invoked.0, x.granted.0, yg.invoked.0, yg.granted.0];
    evidence.seqs = vec![xr.last.0, y.first.0, r.seq];
    evidence.times = vec![x.granted.1, yg.granted.1, xr.last.1, y.first.1, r.time];
    evidence
        .other
        .insert("other_process".into(), json!(yg.process));
    evidence.other.insert("other_owner".into(), json!(yg.owner));
    evidence.other.insert("other_lease".into(), json!(yg.lease));
    let orders = json!([
        {
            "older": x.lease,
            "newer": yg.lease,
            "stale_seq": r.seq,
            "why": format!(
                "if {} was granted first, its write at seq {} came after the newer {}'s at seq {}",
                x.lease, r.seq, yg.lease, y.first.0
            ),
        },
        {
            "older": yg.lease,
            "newer": x.lease,
            "stale_seq": y.first.0,
            "why": format!(
                "if {} was granted first, its write at seq {} came after the newer {}'s at seq {}",
                yg.lease, y.first.0, x.lease, xr.last.0
            ),
        },
    ]);
    evidence.other.insert("orders".into(), orders);
    let summary = format!(
        "key {}: the resource accepted writes of lease {} (seq {}), lease {} (seq {}) and lease {} \
         again (seq {}); their acquires of lock {} overlapped, and in either grant order one of \
         these writes is stale",
        r.key, x.lease, xr.last.0, yg.lease, y.first.0, x.lease, r.seq, x.lock
    );
    let obs = format!(
        "lock {}: {} and {} both believed they held it (each acquire was invoked before the \
         other's grant completed), and their writes to {} alternated {}, {}, {}: if {} was the \
         older, seq {} is stale; if {} was, seq {} is",
        x.lock,
        x.lease,
        yg.lease,
        r.key,
        x.lease,
        yg.lease,
        x.lease,
        x.lease,
        r.seq,
        yg.lease,
        y.first.0
    );
    out.push(
        r.time,
        summary,
        evidence,
        diagnosis::stale_accepted_write_tokenless(obs),
    );
}
