//! `double-release` and its harmless counterpart `release-of-lost-lock`: a release returned
//! `released` for an acquisition that no longer owned the lock. Which of the two it is depends
//! on what the history shows afterwards, so one state machine sorts every such release:
//!
//! - the same acquisition released twice (both acknowledged) is a `double-release` at once;
//! - a release acknowledged for acquisition A after another acquisition had been granted (before
//!   the release was sent), while other acquisitions held the lock, waits for the history's
//!   word (see [`super::release_suspects`]): the lock freed under a holder that no fault could
//!   have cost its lease is a `double-release`; anything else a `release-of-lost-lock`;
//! - such a release with nobody holding the lock at that moment is a `release-of-lost-lock` at
//!   once.
//!
//! A client library may well answer `released` for a node or key its expired session no
//! longer owns, deleting nothing; only shown harm makes it a double release. A release
//! rejected as not-owner is the correct behaviour and never reported. Memory: per live process,
//! its pending release and the acquisition it last released per lock (an index); the faults in
//! force, and the suspects awaiting judgement. Each process's latest acquisition of each lock and
//! each lock's latest grant are the shared hold book's ([`crate::holds::latest`]).

use super::release_suspects::{self, victims, Disturbances, Settled, Suspect};
use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::{Acquisition, Hold};
use crate::kinds::concurrent_holders::fmt_token;
use crate::locks::LockId;
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpResult, OpType, Process, F};
use serde_json::json;

/// A release invoke awaiting its completion: (lock, index, time, and the index of the lock's
/// latest grant when it was invoked: a grant after the invoke is the next holder's, fine).
type PendingRelease = (LockId, u64, u64, Option<u64>);

/// See the module doc.
#[derive(Debug, Default)]
pub struct DoubleRelease {
    /// Per process: for each lock, the history index of the acquisition it last released
    /// (acknowledged) and of that release. Which acquisition a release is for, the shared hold
    /// book says (the process's latest of the lock): keeping a copy here, visited for every
    /// acquire `ok`, cost 3% of the engine's instructions on vs_porcupine's histories.
    released: PerProcess<Vec<(LockId, u64, u64)>>,
    /// Per process: the history index where its acquisitions were forgotten (its exit, or an
    /// `info` that retired it): a later release is of nothing it certainly acquired.
    forgotten: PerProcess<u64>,
    pending: PerProcess<PendingRelease>,
    suspects: Vec<Suspect>,
    disturbances: Disturbances,
    releases: u64,
}

impl Checker for DoubleRelease {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DoubleRelease
    }

    fn paired_kind(&self) -> Option<AnomalyKind> {
        Some(AnomalyKind::ReleaseOfLostLock)
    }

    fn interests(&self) -> Interests {
        // An acquire `ok` only to judge suspects ([`DoubleRelease::judging`]); a lease-lost
        // event changes nothing here.
        Interests::ACQUIRE.only(OpType::Ok)
            | Interests::RELEASE
            | Interests::EXIT
            | Interests::ANY_INFO
            | Interests::NEMESIS
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            self.disturbances.nemesis(e, cx, &mut self.suspects);
            return;
        };
        if !self.suspects.is_empty() {
            self.judge(p, e, cx, out);
        }
        match (&e.f, e.kind) {
            (F::Release, OpType::Invoke) => {
                if let Some(lock) = cx.lock {
                    let latest = cx.holds.latest().last_grant(lock);
                    self.pending.insert(p, (lock, e.index, e.time, latest));
                }
            }
            (F::Release, OpType::Ok) if e.result != Some(OpResult::ReleaseRejectedNotOwner) => {
                self.releases += 1;
                if let Some(rel) = self.pending.remove(p) {
                    self.released(p, rel, (e, cx), out);
                }
            }
            (F::Release, _) => drop(self.pending.remove(p)),
            // A worker that noticed its lease is gone is still the same process, and it
            // may still send the release it holds the old handle for: exactly the stale
            // release this checker exists to catch. Only a death or an indeterminate
            // outcome (which retires the process id) forgets its acquisitions.
            (F::LeaseLost, _) => {}
            (F::Exit, _) | (_, OpType::Info) => {
                self.forgotten.insert(p, e.index);
                self.released.remove(p);
                self.pending.remove(p);
            }
            _ => {}
        }
    }

    fn finish(&mut self, _end: &End, out: &mut Findings) -> Outcome {
        // The history ended before it showed harm: the release only said it succeeded.
        for s in std::mem::take(&mut self.suspects) {
            lost_lock(&s, "the history ended", out);
        }
        if self.releases == 0 {
            Outcome::NotApplicable("no release succeeded".into())
        } else {
            Outcome::Checked
        }
    }
}

impl DoubleRelease {
    /// Whether a suspect awaits judgement: only then does an acquire `ok` tell this checker
    /// anything, and the engine skips the call otherwise.
    #[inline]
    pub(crate) fn judging(&self) -> bool {
        !self.suspects.is_empty()
    }

    /// Decides the suspects this event settles (see the module doc). Out of line, as
    /// [`DoubleRelease::released`] is: a valid history has no suspect, and its events' path
    /// stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn judge(&mut self, p: u32, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let mut i = 0;
        while i < self.suspects.len() {
            match self.suspects[i].settle(p, e, cx) {
                None => i += 1,
                Some(settled) => {
                    let s = self.suspects.swap_remove(i);
                    match settled {
                        Settled::Harm { victim, shown } => {
                            freed_under_holder(&s, &victim, e, &shown, out)
                        }
                        Settled::NoHarm(why) => lost_lock(&s, why, out),
                    }
                }
            }
        }
    }

    /// A release of process `p` was acknowledged `released`. Most are the first release of
    /// the lock's newest grant, and end here; the rest are judged out of line
    /// ([`DoubleRelease::judge_release`]): a call for every release cost 0.5% of the engine's
    /// instructions on vs_porcupine's histories.
    #[inline(always)]
    fn released(
        &mut self,
        p: u32,
        rel: PendingRelease,
        (e, cx): (&EventRef<'_>, &Context<'_>),
        out: &mut Findings,
    ) {
        let (lock, _, _, latest) = rel;
        let forgotten = self.forgotten.get(p).copied();
        let Some(acq) = cx
            .holds
            .latest()
            .of(p, lock)
            .filter(|a| forgotten.is_none_or(|f| a.index > f))
        else {
            return; // a release of nothing this process certainly acquired
        };
        let marks = self.released.at(p);
        let first = match marks.iter_mut().find(|(l, _, _)| *l == lock) {
            Some((_, of, at)) if *of == acq.index => Some(std::mem::replace(at, e.index)),
            Some(mark) => {
                *mark = (lock, acq.index, e.index);
                None
            }
            None => {
                marks.push((lock, acq.index, e.index));
                None
            }
        };
        // Lost: another acquisition was granted after this one and before the release was sent.
        let lost = latest.is_some_and(|l| l > acq.index);
        if first.is_none() && !lost {
            return;
        }
        let a = acq.clone();
        self.judge_release(p, a, first, rel, (e, cx), out);
    }

    /// A second release of one acquisition, or the release of a lost one (see the module doc).
    #[inline(never)]
    fn judge_release(
        &mut self,
        p: u32,
        a: Hold,
        first: Option<u64>,
        (lock, rel_index, rel_time, _): PendingRelease,
        (e, cx): (&EventRef<'_>, &Context<'_>),
        out: &mut Findings,
    ) {
        if let Some(first) = first {
            let mut evidence = evidence(cx.locks.name(lock), &a, p);
            evidence.indices = vec![a.index, first, rel_index, e.index];
            evidence.times = vec![a.time, rel_time, e.time];
            let summary = format!(
                "process {p} released lock {} (lease {}) twice: first at index {first}, again at index {}",
                cx.locks.name(lock),
                a.lease().unwrap_or("-"),
                e.index
            );
            let obs = format!(
                "the acquisition at index {} was released at index {first} and its second \
                 release at index {} also returned released",
                a.index, e.index
            );
            out.push(
                e.time,
                summary,
                evidence,
                diagnosis::double_release_twice(obs),
            );
            return;
        }
        // Lost (another acquisition was granted after this one and before the release was
        // sent) — unless every such grant that is still open carries an older token, or was
        // granted with its own node or key already gone: the releaser then held the newest
        // lease at the service, and its release freed nothing but its own lock.
        let mut newer_grants = cx
            .holds
            .open(lock)
            .iter()
            .filter(|h| h.process != p && h.index > a.index)
            .peekable();
        let newest_was_ours = newer_grants.peek().is_some()
            && newer_grants.all(|h| release_suspects::holds_nothing_newer(h, &a));
        if newest_was_ours {
            return;
        }
        let victims = victims(cx, lock, p, &a, &self.disturbances);
        let Some(holder) = victims
            .iter()
            .map(|v| &v.hold)
            .max_by_key(|h| h.index)
            .cloned()
        else {
            lost_lock_alone(&a, p, (rel_index, e), cx, out);
            return;
        };
        self.suspects.push(Suspect {
            holder,
            lock,
            lock_name: cx.locks.name(lock).to_string(),
            releaser: a,
            process: p,
            invoked: (rel_index, rel_time),
            acknowledged: (e.index, e.time),
            victims,
        });
    }
}

fn evidence(lock: &str, acq: &Acquisition, p: u32) -> Evidence {
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: text(acq.owner()),
        lease: text(acq.lease()),
        token: acq.token,
        result: Some(OpResult::Released.as_str().into()),
        ..Default::default()
    };
    evidence.other.insert("process".into(), json!(p));
    evidence
}

fn suspect_evidence(s: &Suspect, h: &Acquisition) -> Evidence {
    let a = &s.releaser;
    let mut evidence = evidence(&s.lock_name, a, s.process);
    evidence.indices = vec![a.index, h.index, s.invoked.0, s.acknowledged.0];
    evidence.times = vec![a.time, h.time, s.invoked.1, s.acknowledged.1];
    evidence
        .other
        .insert("holder_process".into(), json!(h.process));
    evidence
        .other
        .insert("holder_owner".into(), json!(h.owner()));
    evidence
        .other
        .insert("holder_lease".into(), json!(h.lease()));
    evidence.other.insert("holder_token".into(), json!(h.token));
    evidence
}

/// The history showed the lock freed under its holder: a double release.
fn freed_under_holder(
    s: &Suspect,
    h: &Acquisition,
    e: &EventRef<'_>,
    shown: &str,
    out: &mut Findings,
) {
    let lock = &s.lock_name;
    let a = &s.releaser;
    let mut evidence = suspect_evidence(s, h);
    evidence.indices.push(e.index);
    evidence.times.push(e.time);
    evidence.other.insert("harm".into(), json!(shown));
    let summary = format!(
        "stale owner process {} (lease {}, token {}) released lock {lock} at index {} while \
         process {} held it (lease {}, token {}, acquired at index {}); then {shown}",
        s.process,
        a.lease().unwrap_or("-"),
        fmt_token(a.token),
        s.acknowledged.0,
        h.process,
        h.lease().unwrap_or("-"),
        fmt_token(h.token),
        h.index
    );
    let obs = format!(
        "a release with the old handle {} returned released while lease {} was the current \
         holder of {lock}, and {shown}",
        a.lease().unwrap_or("-"),
        h.lease().unwrap_or("-"),
    );
    // It became true when the stale release freed the lock.
    out.push(
        s.acknowledged.1,
        summary,
        evidence,
        diagnosis::double_release_stale(obs),
    );
}

/// The release only said it succeeded: nothing in the history shows the holder's lock freed.
fn lost_lock(s: &Suspect, why: &str, out: &mut Findings) {
    let out = out.paired();
    let (a, h) = (&s.releaser, &s.holder);
    let mut evidence = suspect_evidence(s, h);
    evidence.other.insert("no_harm_shown".into(), json!(why));
    let summary = format!(
        "process {} was told released for lease {} of lock {} at index {} although process {} \
         (lease {}, acquired at index {}) held it; {why}, and no harm to it was seen",
        s.process,
        a.lease().unwrap_or("-"),
        s.lock_name,
        s.acknowledged.0,
        h.process,
        h.lease().unwrap_or("-"),
        h.index
    );
    let obs = format!(
        "the release of lease {} was acknowledged after lease {} had acquired the lock; {why}",
        a.lease().unwrap_or("-"),
        h.lease().unwrap_or("-"),
    );
    out.push(
        s.acknowledged.1,
        summary,
        evidence,
        diagnosis::release_of_lost_lock(obs),
    );
}

/// A release acknowledged after another acquisition had completed, with nobody holding.
fn lost_lock_alone(
    a: &Acquisition,
    p: u32,
    (rel_index, e): (u64, &EventRef<'_>),
    cx: &Context<'_>,
    out: &mut Findings,
) {
    let lock = cx.locks.name(a.lock);
    let mut evidence = evidence(lock, a, p);
    evidence.indices = vec![a.index, rel_index, e.index];
    evidence.times = vec![a.time, e.time];
    let summary = format!(
        "process {p} was told released for lease {} of lock {lock} at index {}, after another \
         acquisition had taken the lock; nobody held it then",
        a.lease().unwrap_or("-"),
        e.index
    );
    let obs = format!(
        "the acquisition at index {} had lost {lock} to a later one before its release was \
         acknowledged at index {}",
        a.index, e.index
    );
    out.paired().push(
        e.time,
        summary,
        evidence,
        diagnosis::release_of_lost_lock(obs),
    );
}
