//! `stuck-lock`: a lock nobody could acquire within `ttl + recovery_slack` after its holder died
//! or after the faults were healed, while workers kept trying.
//!
//! An obligation "this lock must become acquirable" starts when
//! - a process holding it certainly (acquire `ok`) exits,
//! - the nemesis pauses, isolates or hangs the work of the worker holding it (the holder is
//!   alive but frozen, cut off or doing nothing: its lease must run out; the obligation ends
//!   with that fault, the holder back; under `hang-work` the diagnosis names a zombie holder,
//!   a lease renewed while its work makes no progress),
//! - an acquire ends `info` or its process exits while the acquire is pending (it may have
//!   taken the lock, and nobody will release it; if other processes certainly held the lock at
//!   that moment it was not free, and the clock starts when the last of those holds ends), or
//! - the nemesis heals the last active fault of the lock service (every known lock), or
//! - the last certain hold of the lock ends and nobody holds it ([`last_acquire`]: the lock
//!   must then be free, and acquires that keep failing past the window show it is not).
//!
//! Only faults that can make the lock service itself unavailable suspend the clock (node
//! pause / kill / restart, partitions that split the service, failover, a node that died
//! outside the plan), and faults that cut a *trying* client off (pausing, killing or isolating
//! a worker that holds nothing); it restarts when they end. Faults on a holder never suspend
//! it: a crashed or frozen holder is exactly what this check exists for ([`super::outages`]).
//! A running obligation keeps its start when another comes (every `info` acquire would push
//! the deadline back otherwise). At the deadline `start + ttl + slack` the lock is stuck if
//! no acquire succeeded since the obligation began, and someone was trying both at the start
//! (an acquire pending, or attempted within `slack`) and at the deadline. Any successful
//! acquire of the lock discharges it. A window still open when the history ends is not judged.
//! Where the run has the service's own record, each report names the holder the service shows
//! through the window, or says the service had the lock free ([`service_holder`]).
//! Without a ttl in `test.yaml` the checker is not applicable. Every report names the lock's
//! last acquire and its outcome (and the first after its last hold ended, when that differs).
//! Memory: per lock a few numbers and two acquire outcomes.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use crate::kinds::outages::Outages;
use crate::locks::{LockId, PerLock};
use crate::name::{opt_name, Name};
use results::fault::Mechanism;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::time::Duration;

mod faults;
mod last_acquire;
mod service_holder;
use last_acquire::{Acquires, Free, Reason};

/// Owner, lease and token of the holder an obligation is about.
type Holder = (Option<Name>, Option<Name>, Option<u64>);

#[derive(Debug, Clone)]
struct Obligation {
    reason: Reason,
    index: u64,
    time: u64,
    holder: Option<Holder>,
    /// When the clock started (None while a fault is active).
    start: Option<u64>,
    tried_early: bool,
    /// The worker fault (pause, isolation) of the holder that started it: it ends with it.
    ends_with: Option<String>,
    /// Started by an `info` acquire while other processes certainly held the lock: the lock
    /// was not free then, so the clock waits until those holds end.
    waits_for_holds: bool,
}

#[derive(Debug)]
struct LockState {
    /// The lock's name, for the report (a deadline may be judged at the end, without events).
    name: Name,
    attempts: u32,
    last_attempt: Option<u64>,
    obligation: Option<Obligation>,
    acquires: Acquires,
    /// The end of its last certain hold, while nobody has acquired it since.
    free: Option<Free>,
}

/// See the module doc.
#[derive(Debug)]
pub struct StuckLock {
    ttl: Option<u64>,
    slack: u64,
    /// Per lock ever tried or obliged.
    locks: PerLock<Option<LockState>>,
    /// The active faults that suspend the clock.
    outages: Outages,
    next_deadline: Option<u64>,
}

impl StuckLock {
    pub fn new(ttl: Option<Duration>, slack: Duration) -> StuckLock {
        StuckLock {
            ttl: ttl.map(|t| t.as_nanos() as u64),
            slack: slack.as_nanos() as u64,
            locks: PerLock::default(),
            outages: Outages::default(),
            next_deadline: None,
        }
    }

    fn trying(&self, l: &LockState, now: u64) -> bool {
        trying(self.slack, l, now)
    }

    /// Obliges `lock` to become acquirable. An obligation already running keeps its start (a
    /// later `info` acquire must not push the deadline back); it only learns the holder, and
    /// one tied to a worker fault becomes permanent when the holder exits.
    fn oblige(
        &mut self,
        (lock, name): (LockId, &str),
        reason: impl Into<Reason>,
        e: &EventRef<'_>,
        holder: Option<Holder>,
        waits_for_holds: bool,
    ) {
        let start = (!self.outages.suspended() && !waits_for_holds).then_some(e.time);
        let l = state(&mut self.locks, lock, name);
        if let Some(o) = &mut l.obligation {
            o.holder = o.holder.take().or(holder);
            o.ends_with = None;
            return;
        }
        let tried_early =
            l.attempts > 0 || l.last_attempt.is_some_and(|t| t + self.slack >= e.time);
        l.obligation = Some(Obligation {
            reason: reason.into(),
            index: e.index,
            time: e.time,
            holder,
            start,
            tried_early,
            ends_with: None,
            waits_for_holds,
        });
        self.recompute_deadline();
    }

    /// Process `q`'s hold (if any) ends with this event: an obligation waiting for the certain
    /// holds of its lock to end starts its clock once `q`'s was the last of them.
    fn holds_ending(&mut self, q: u32, e: &EventRef<'_>, cx: &Context<'_>) {
        if self.outages.suspended() {
            return;
        }
        let mut started = false;
        for (lock, l) in self.locks.iter_mut() {
            let Some(o) = l.as_mut().and_then(|l| l.obligation.as_mut()) else {
                continue;
            };
            if o.waits_for_holds
                && o.start.is_none()
                && cx.holds.open(lock).iter().all(|h| h.process == q)
            {
                o.start = Some(e.time);
                o.waits_for_holds = false;
                started = true;
            }
        }
        if started {
            self.recompute_deadline();
        }
    }

    fn obligation_mut(&mut self, lock: LockId) -> Option<&mut Obligation> {
        self.locks.get_mut(lock)?.as_mut()?.obligation.as_mut()
    }

    fn recompute_deadline(&mut self) {
        let span = self.ttl.unwrap_or(0) + self.slack;
        self.next_deadline = self
            .locks
            .iter()
            .filter_map(|(_, l)| l.as_ref()?.obligation.as_ref()?.start.map(|s| s + span))
            .min();
    }

    /// Judges every obligation whose deadline passed before `now`.
    fn expire(&mut self, now: u64, out: &mut Findings) {
        let span = self.ttl.unwrap_or(0) + self.slack;
        let mut due = Vec::new();
        for (lock, l) in self.locks.iter() {
            if let Some(o) = l.as_ref().and_then(|l| l.obligation.as_ref()) {
                if o.start.is_some_and(|s| s + span < now) {
                    due.push(lock);
                }
            }
        }
        for lock in due {
            let Some(l) = self.locks.get(lock).and_then(Option::as_ref) else {
                continue;
            };
            let Some(o) = l.obligation.clone() else {
                continue;
            };
            let start = o.start.unwrap_or(o.time);
            let deadline = start + span;
            if o.tried_early && self.trying(l, deadline) {
                report(
                    l,
                    &o,
                    start,
                    deadline,
                    self.ttl.unwrap_or(0),
                    self.slack,
                    out,
                );
            }
            if let Some(l) = self.locks.get_mut(lock).and_then(Option::as_mut) {
                l.obligation = None;
                l.free = None;
            }
        }
        self.recompute_deadline();
    }
}

impl Checker for StuckLock {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::StuckLock
    }

    fn interests(&self) -> Interests {
        if self.ttl.is_none() {
            return Interests::NONE; // nothing to judge without a ttl
        }
        Interests::ACQUIRE
            | Interests::RELEASE
            | Interests::LEASE_LOST
            | Interests::EXIT
            | Interests::NEMESIS
            | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        if self.ttl.is_none() {
            return;
        }
        if self.next_deadline.is_some_and(|d| d < e.time) {
            self.expire(e.time, out);
        }
        let ending = match e.process {
            Process::Worker(q) => matches!(
                (&e.f, e.kind),
                (F::Release, OpType::Invoke) | (F::LeaseLost, _) | (F::Exit, _) | (_, OpType::Info)
            )
            .then_some(q),
            Process::Nemesis => None,
        };
        if let Some(q) = ending {
            self.holds_ending(q, e, cx);
        }
        self.match_event(e, cx);
        // After the match, so that an obligation with a cause of its own (a holder that
        // exited) is the one that runs.
        if let Some(q) = ending {
            self.last_holds_ended(q, e, cx);
        }
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        self.finish_checker(end, out)
    }
}

impl StuckLock {
    /// Always inlined into [`Checker::event`]: left to the compiler it stayed a call for every
    /// event this checker sees, 1% of the engine's instructions on the throughput bench's
    /// history (its state lookup another call inside it).
    #[inline(always)]
    fn match_event(&mut self, e: &EventRef<'_>, cx: &Context<'_>) {
        match (e.process, &e.f, e.kind) {
            // A start that carries an error was skipped (no target): nothing was applied.
            (Process::Nemesis, F::Start(_), _) if e.error().is_some() => {}
            (Process::Nemesis, F::Start(fault), _) => self.fault_started(fault, e, cx),
            (Process::Nemesis, F::Stop(fault), _) => self.fault_stopped(fault, e),
            (Process::Worker(p), F::Acquire, kind) => {
                let Some((lock, name)) = cx.lock_named() else {
                    return;
                };
                let slack = self.slack;
                let l = state(&mut self.locks, lock, name);
                let mut discharged = false;
                match kind {
                    OpType::Invoke => {
                        l.attempts += 1;
                        if let Some(o) = &mut l.obligation {
                            if o.start.is_some_and(|s| e.time <= s + slack) {
                                o.tried_early = true;
                            }
                        }
                    }
                    OpType::Ok => {
                        l.attempts = l.attempts.saturating_sub(1);
                        discharged = l.obligation.take().is_some();
                        l.acquires.completed(p, e);
                        l.free = None;
                    }
                    OpType::Fail | OpType::Info => {
                        l.attempts = l.attempts.saturating_sub(1);
                        l.acquires.completed(p, e);
                    }
                }
                l.last_attempt = Some(e.time);
                if kind == OpType::Info {
                    let why = format!(
                        "process {p}'s acquire ended info at index {}: it may hold the lock and is retired",
                        e.index
                    );
                    let others_hold = cx.holds.open(lock).iter().any(|h| h.process != p);
                    self.oblige((lock, name), why, e, None, others_hold);
                } else if discharged {
                    self.recompute_deadline();
                } else if kind == OpType::Fail {
                    self.free_lock_failed(lock, cx);
                }
            }
            (Process::Worker(p), F::Exit, _) => {
                let held: Vec<_> = cx
                    .holds
                    .held_by(p)
                    .map(|h| (h.lock, (opt_name(h.owner()), opt_name(h.lease()), h.token)))
                    .collect();
                for (lock, holder) in held {
                    let why = format!("holder process {p} exited at index {}", e.index);
                    self.oblige((lock, cx.locks.name(lock)), why, e, Some(holder), false);
                }
                if let Some(lock) = cx.holds.pending_acquire(p) {
                    if let Some(l) = self.locks.get_mut(lock).and_then(Option::as_mut) {
                        l.attempts = l.attempts.saturating_sub(1);
                    }
                    let why = format!(
                        "process {p} exited at index {} with an acquire pending",
                        e.index
                    );
                    self.oblige((lock, cx.locks.name(lock)), why, e, None, false);
                }
            }
            _ => {}
        }
    }

    fn finish_checker(&mut self, end: &End, out: &mut Findings) -> Outcome {
        if self.ttl.is_none() {
            return Outcome::NotApplicable("test.yaml gives no ttl".into());
        }
        // Deadlines passed after the last event this checker saw are judged now: nothing it
        // watches changed since, so the state is the state at the deadline.
        if let Some(t) = end.last_time {
            self.expire(t, out);
        }
        if let ServiceLog::Present(record) = &end.service_log {
            for anomaly in &mut out.reported {
                service_holder::amend(anomaly, record);
            }
        }
        if self.locks.iter().all(|(_, l)| l.is_none()) {
            Outcome::NotApplicable("no lock was ever tried".into())
        } else {
            Outcome::Checked
        }
    }
}

/// Whether someone was trying to acquire `l` at `now`: an acquire pending, or one attempted
/// within `slack` before.
fn trying(slack: u64, l: &LockState, now: u64) -> bool {
    l.attempts > 0 || l.last_attempt.is_some_and(|t| t + slack >= now)
}

/// The state of `lock`, made (named `name`) on first use.
#[inline]
fn state<'s>(
    locks: &'s mut PerLock<Option<LockState>>,
    lock: LockId,
    name: &str,
) -> &'s mut LockState {
    locks.at(lock).get_or_insert_with(|| LockState {
        name: Name::from(name),
        attempts: 0,
        last_attempt: None,
        obligation: None,
        acquires: Acquires::default(),
        free: None,
    })
}

fn report(
    l: &LockState,
    o: &Obligation,
    start: u64,
    deadline: u64,
    ttl: u64,
    slack: u64,
    out: &mut Findings,
) {
    let lock = l.name.as_str();
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        indices: vec![o.index],
        times: vec![o.time, start, deadline],
        ..Default::default()
    };
    if let Some((owner, lease, token)) = &o.holder {
        evidence.owner = owner.as_ref().map(ToString::to_string);
        evidence.lease = lease.as_ref().map(ToString::to_string);
        evidence.token = *token;
    }
    evidence
        .other
        .insert("reason".into(), json!(o.reason.to_string()));
    evidence.other.insert("ttl_ns".into(), json!(ttl));
    evidence
        .other
        .insert("recovery_slack_ns".into(), json!(slack));
    evidence.other.insert("window_start".into(), json!(start));
    evidence.other.insert("deadline".into(), json!(deadline));
    let summary = format!(
        "lock {lock} not acquired by anyone within ttl + slack ({} ms) after {}",
        (ttl + slack) / 1_000_000,
        o.reason
    );
    let mut obs = format!(
        "workers kept trying to acquire {lock} from t={start}ns to t={deadline}ns and none succeeded"
    );
    if let Some(story) = last_acquire::story(l) {
        obs = format!("{obs}; {story}");
        evidence
            .other
            .insert("last_acquire".into(), json!(l.acquires.last.index));
        if let Some(first) = l.acquires.first_after_hold() {
            evidence
                .other
                .insert("first_acquire_after_hold".into(), json!(first.index));
        }
    }
    let hung = o
        .ends_with
        .as_deref()
        .is_some_and(|f| Mechanism::of(f) == Some(Mechanism::Hang));
    let diagnosis = if hung {
        evidence.other.insert("zombie_holder".into(), json!(true));
        diagnosis::zombie_holder(obs)
    } else {
        diagnosis::stuck_lock(obs)
    };
    out.push(deadline, summary, evidence, diagnosis);
}
