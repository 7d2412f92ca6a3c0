//! `stale-accepted-write`: the resource accepted a write for key K from an older generation after
//! it had accepted one from a newer generation. Two bases, because not every lock hands out a
//! token:
//! - `basis: token`: a write with token t was accepted after a write with a token greater than
//!   t (the resource log's `highest_before` counts too: the log may be partial);
//! - `basis: grant-order` (recipes and client libraries without tokens): acquisition X's acquire
//!   completed before acquisition Y's was invoked (same lock), the resource accepted Y's write
//!   to K, and afterwards X's write to K. Real time orders the generations where no token does;
//! - `basis: every-order` (tokenless, acquires that overlapped, so grant order cannot order X and
//!   Y): the resource accepted writes to K from X, then Y, then X again. Whichever grant came
//!   first, one accepted write is stale ([`every_order`]). X then Y alone is stale in one order
//!   only: nothing is claimed, and the stats' note says the overlap left it undecided.
//!
//! The resource log is the ground truth: an `info` write (the worker never learned the outcome)
//! that the log shows accepted still counts, and a stale token the resource *rejected* is
//! fencing working, never an anomaly. Memory: the highest accepted token per key; for tokenless
//! acquisitions, each one's grant times (until the resource log is read), per key the newest
//! generation accepted so far and its last few runs of writes by one generation.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::holds::Acquisition;
use crate::kinds::resource_presence::Presence;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, ResourceRef, F};
use serde_json::json;
use std::rc::Rc;

mod every_order;
use every_order::Runs;

#[derive(Debug)]
struct Highest {
    token: u64,
    seq: u64,
    time: u64,
    owner: String,
    lease: String,
}

/// A tokenless acquisition as the history granted it: what orders it against the others.
#[derive(Debug, Clone)]
pub(super) struct Grant {
    lock: String,
    process: u32,
    owner: String,
    lease: String,
    /// History index and time of its acquire invoke and of its `ok`.
    invoked: (u64, u64),
    granted: (u64, u64),
    /// The acquisitions of other processes whose certain holds of the lock were open at this
    /// grant (their acquire `ok` indices): the two were held at once.
    overlaps: Vec<u64>,
}

/// The newest generation whose write to a key (of one lock) the resource accepted so far.
#[derive(Debug, Clone)]
struct Newest {
    grant: Rc<Grant>,
    seq: u64,
    time: u64,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct StaleAcceptedWrite {
    presence: Presence,
    highest: FastMap<String, Highest>,
    /// Tokenless acquisitions by lease (a lease string may come back: every grant is kept).
    grants: FastMap<String, Vec<Rc<Grant>>>,
    /// Accepted tokenless writes, and how many of them could be tied to a grant.
    tokenless: (u64, u64),
    /// Per (key, lock): the accepted tokenless write whose acquire was invoked last.
    newest: FastMap<(String, String), Newest>,
    /// Per (key, lock): the accepted tokenless writes as runs of one generation each.
    runs: Runs,
}

impl Checker for StaleAcceptedWrite {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::StaleAcceptedWrite
    }

    fn interests(&self) -> Interests {
        // The acquire's invoke (index and time) comes from the shared hold book.
        Interests::WRITE | Interests::ACQUIRE.only(OpType::Ok)
    }

    // Inlined into the engine's one call for it (`dispatch`): it sees half the events of a
    // lock history, and a second call cost more than the bookkeeping it does for each.
    #[inline(always)]
    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, _out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Write, _) => self.presence.event(e),
            (F::Acquire, OpType::Ok) => {
                let invoked = cx.holds.pending_since(p);
                // A token orders generations by itself: only tokenless grants are remembered.
                if let (None, Some(a), Some(invoked)) = (e.token, cx.acquired, invoked) {
                    self.grant(p, e, cx, a, invoked);
                }
            }
            _ => {}
        }
    }

    fn resource(&mut self, r: &ResourceRef<'_>, out: &mut Findings) {
        self.presence.entries += 1;
        match r.token {
            Some(t) => {
                self.presence.with_token += 1;
                if r.result.is_accepted() {
                    self.by_token(r, t, out);
                }
            }
            None if r.result.is_accepted() => self.by_grant_order(r, out),
            None => {}
        }
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        self.runs.note_undecided(out);
        let (accepted, ordered) = self.tokenless;
        match self.presence.outcome(end, false) {
            // Writes without tokens are judged by grant order; with none tied to a grant,
            // nothing was judged at all.
            Outcome::Checked if self.presence.with_token == 0 && accepted > 0 && ordered == 0 => {
                Outcome::NotApplicable(
                    "the writes carry no fence token, and none could be tied to a grant in the \
                     history to order it"
                        .into(),
                )
            }
            other => other,
        }
    }
}

impl StaleAcceptedWrite {
    /// Remembers a tokenless grant. Out of line: the event path of a fenced recipe (half the
    /// events of a lock history come through it) stays small enough to inline.
    #[inline(never)]
    fn grant(
        &mut self,
        p: u32,
        e: &EventRef<'_>,
        cx: &Context<'_>,
        a: &Acquisition,
        invoked: (u64, u64),
    ) {
        let Some(lease) = a.lease().filter(|l| !l.is_empty()) else {
            return;
        };
        let grant = Grant {
            lock: cx.locks.name(a.lock).to_string(),
            process: p,
            owner: a.owner().unwrap_or_default().to_string(),
            lease: lease.to_string(),
            invoked,
            granted: (e.index, e.time),
            overlaps: cx
                .holds
                .open(a.lock)
                .iter()
                .filter(|h| h.process != p)
                .map(|h| h.index)
                .collect(),
        };
        self.grants
            .entry(grant.lease.clone())
            .or_default()
            .push(Rc::new(grant));
    }

    fn by_token(&mut self, r: &ResourceRef<'_>, t: u64, out: &mut Findings) {
        let h = self.highest.get(r.key.as_ref());
        let known = h.map(|h| h.token).filter(|&h| h > t);
        // The resource's own record of what it had is evidence too (the log may be partial).
        let admitted = r.highest_before.filter(|&h| h > t);
        if known.is_some() || admitted.is_some() {
            let newer = known.max(admitted).unwrap_or(t);
            let mut evidence = write_evidence(r, "token");
            evidence.token = Some(t);
            if let Some(h) = h.filter(|h| h.token > t) {
                evidence.seqs = vec![h.seq, r.seq];
                evidence.times = vec![h.time, r.time];
                evidence.other.insert("newer_owner".into(), json!(h.owner));
                evidence.other.insert("newer_lease".into(), json!(h.lease));
                evidence.other.insert("newer_token".into(), json!(h.token));
            } else {
                evidence.seqs = vec![r.seq];
                evidence.times = vec![r.time];
            }
            let summary = format!(
                "key {}: token {t} from {} (lease {}) accepted at seq {} after token {newer} had been accepted",
                r.key, r.owner, r.lease, r.seq
            );
            let obs = format!(
                "token {t} arrived after accepted token {newer} on key {} and was accepted: both \
                 generations' writes took effect",
                r.key
            );
            out.push(
                r.time,
                summary,
                evidence,
                diagnosis::stale_accepted_write(obs),
            );
            return;
        }
        match self.highest.get_mut(r.key.as_ref()) {
            // Updated in place: a new highest token per hold must not cost allocations.
            Some(h) if t > h.token => {
                (h.token, h.seq, h.time) = (t, r.seq, r.time);
                h.owner.clear();
                h.owner.push_str(&r.owner);
                h.lease.clear();
                h.lease.push_str(&r.lease);
            }
            Some(_) => {}
            None => {
                let h = Highest {
                    token: t,
                    seq: r.seq,
                    time: r.time,
                    owner: r.owner.to_string(),
                    lease: r.lease.to_string(),
                };
                self.highest.insert(r.key.to_string(), h);
            }
        }
    }

    /// A tokenless write: stale when a generation granted after this one's grant completed had
    /// its write accepted first. A write whose acquisition the history does not show (an `info`
    /// acquire, another writer) cannot be ordered and is left alone.
    fn by_grant_order(&mut self, r: &ResourceRef<'_>, out: &mut Findings) {
        self.tokenless.0 += 1;
        // The latest grant of this lease (of this process, when it is known) before the write.
        let Some(x) = self.grants.get(r.lease.as_ref()).and_then(|gs| {
            gs.iter()
                .rev()
                .find(|g| g.granted.1 <= r.time && g.process == r.process)
                .or_else(|| gs.iter().rev().find(|g| g.granted.1 <= r.time))
        }) else {
            return;
        };
        self.tokenless.1 += 1;
        let x = x.clone();
        let slot = (r.key.to_string(), x.lock.clone());
        match self.newest.get(&slot) {
            Some(y) if y.grant.invoked.1 > x.granted.1 => {
                let y = y.clone();
                report_grant_order(r, &x, &y, out);
            }
            Some(y) if y.grant.invoked.1 >= x.invoked.1 => {}
            _ => {
                let newest = Newest {
                    grant: x.clone(),
                    seq: r.seq,
                    time: r.time,
                };
                self.newest.insert(slot.clone(), newest);
            }
        }
        self.runs.accepted(&slot, x, r, out);
    }
}

/// The evidence every stale write carries: the write as the resource decided it.
pub(super) fn write_evidence(r: &ResourceRef<'_>, basis: &str) -> Evidence {
    let mut evidence = Evidence {
        key: Some(r.key.to_string()),
        owner: Some(r.owner.to_string()),
        lease: Some(r.lease.to_string()),
        highest_before: r.highest_before,
        result: Some(r.result.as_str().into()),
        ..Default::default()
    };
    evidence.other.insert("basis".into(), json!(basis));
    evidence.other.insert("process".into(), json!(r.process));
    evidence.other.insert("op_id".into(), json!(r.op_id));
    evidence
}

fn report_grant_order(r: &ResourceRef<'_>, x: &Grant, y: &Newest, out: &mut Findings) {
    let mut evidence = write_evidence(r, "grant-order");
    evidence.lock = Some(x.lock.clone());
    // X granted, Y invoked after it and granted; then Y's write, then X's.
    evidence.indices = vec![x.granted.0, y.grant.invoked.0, y.grant.granted.0];
    evidence.seqs = vec![y.seq, r.seq];
    evidence.times = vec![x.granted.1, y.grant.invoked.1, y.time, r.time];
    evidence
        .other
        .insert("newer_process".into(), json!(y.grant.process));
    evidence
        .other
        .insert("newer_owner".into(), json!(y.grant.owner));
    evidence
        .other
        .insert("newer_lease".into(), json!(y.grant.lease));
    let summary = format!(
        "key {}: the write of lease {} (acquired at index {}) was accepted at seq {} after the \
         write of lease {}, acquired later (invoked at index {}), had been accepted at seq {}",
        r.key, x.lease, x.granted.0, r.seq, y.grant.lease, y.grant.invoked.0, y.seq
    );
    let obs = format!(
        "lock {}: {} held it first and {} acquired it after that grant had completed; the \
         resource took {}'s write, then the older generation's write to {}: both took effect",
        x.lock, x.lease, y.grant.lease, y.grant.lease, r.key
    );
    out.push(
        r.time,
        summary,
        evidence,
        diagnosis::stale_accepted_write_tokenless(obs),
    );
}
