//! `locked-out-client`: a worker whose acquires of a lock keep failing or timing out for longer
//! than `ttl + recovery_slack` while other workers are granted that lock: a client that can no
//! longer take the lock (a library's client wedged after an exception, a session it never
//! re-establishes). Observed, like `concurrent-holders`: under contention some acquires fail
//! legitimately, and a lock that is not fair (polling rather than a queue) can starve one client
//! for a while, so it fails a run only where the test's `fail_on` names it.
//!
//! A worker is followed across its process ids (worker `i` of `n` is process `i`, `i + n`, ...
//! after each retirement: docs/design.md, "history.jsonl") when the test says `n` (`workers` in
//! `test.yaml`); otherwise each process is judged alone.
//!
//! A *run* is a worker's acquires of one lock, each answered `fail` or `info`, with no `ok` of
//! its own on that lock between them. It is claimed when, from its first invoke to its last
//! completion,
//! - it lasted longer than `ttl + recovery_slack` (the time a lock may take to come back),
//! - it holds at least [`MIN_ATTEMPTS`] attempts (the worker kept trying),
//! - at least [`MIN_FREE_FAILURES`] of them failed while no other worker held the lock (a free
//!   lock it still could not take: under contention alone, with long holds, a waiter's every
//!   attempt can fail while others hold the lock, and one timeout can land just as the holder
//!   released; that is no lockout),
//! - other workers were granted the lock at least [`MIN_GRANTS`] times, at least once after
//!   the worker had been failing for `ttl + recovery_slack` (the lock was there to take and was
//!   still being taken: a lock that nobody could take any more is stuck-lock's to judge, not
//!   this client's fault), and
//! - no fault was on the worker's own worker (by its name, from its grants; a worker never
//!   granted has none, and a fault on a name no worker was granted under may be on it) or on
//!   the lock service at any moment of it: a frozen, cut-off or killed client, or a service
//!   down, fails its acquires for a reason. A fault ends the run; one begins again after it.
//!
//! It is judged when it ends (the worker's grant, a fault, the end of the history) and reported
//! once, `at` the completion that made it true. Memory: per worker its name and one run per
//! lock it is failing to take (the first [`LISTED`] attempts and grants kept as evidence); per
//! lock a count of grants and the last few; per faulted scope two numbers.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::hashing::FastMap;
use crate::locks::{LockId, PerLock};
use crate::name::Name;
use crate::procs::PerProcess;
use results::fault::Scope;
use results::{AnomalyKind, EventRef, OpType, Process, F};
use std::time::Duration;

mod report;
mod run;
use run::{Calm, Grant, Grants, Run};

/// The fewest attempts a run needs: one failure, or two, is contention.
pub const MIN_ATTEMPTS: u32 = 3;
/// The fewest grants to other workers a run needs: the lock was there to take, and was taken.
pub const MIN_GRANTS: u64 = 2;
/// The fewest failures a run needs answered while no other worker held the lock: one can be a
/// waiter's timeout landing just as the holder released.
pub const MIN_FREE_FAILURES: u32 = 2;

/// See the module doc.
#[derive(Debug, Default)]
pub struct LockedOutClient {
    /// `ttl + recovery_slack` (ns), when the test gives a ttl.
    window: Option<u64>,
    /// The test's worker count: processes `i`, `i + n`, ... are one worker.
    workers: Option<u32>,
    /// Per worker.
    by_worker: PerProcess<Worker>,
    /// Per lock, its grants.
    grants: PerLock<Grants>,
    /// Worker names (from grants) to workers.
    named: FastMap<Name, u32>,
    /// Faults of the lock service, and faults on workers by target name.
    service: Calm,
    targets: FastMap<Name, Calm>,
    completed: u64,
}

/// One worker: its id, its name (the owner of its grants) and the runs it is in.
#[derive(Debug)]
struct Worker {
    id: u32,
    name: Option<Name>,
    runs: Vec<(LockId, Run)>,
}

impl Checker for LockedOutClient {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::LockedOutClient
    }

    fn interests(&self) -> Interests {
        // Without a ttl there is no window to judge by: nothing to read.
        if self.window.is_none() {
            return Interests::NONE;
        }
        // Not the invokes: the hold book keeps each pending acquire's invoke.
        Interests::ACQUIRE.only(OpType::Ok)
            | Interests::ACQUIRE.only(OpType::Fail)
            | Interests::ACQUIRE.only(OpType::Info)
            | Interests::NEMESIS
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            self.nemesis(e, cx);
            return;
        };
        let (F::Acquire, Some(lock)) = (&e.f, cx.lock) else {
            return;
        };
        match e.kind {
            OpType::Ok => {
                self.completed += 1;
                self.granted(p, lock, e, cx, out);
            }
            OpType::Fail | OpType::Info => {
                self.completed += 1;
                if let (Some(window), Some(invoked)) = (self.window, cx.holds.pending_since(p)) {
                    self.failed(p, (lock, cx.locks.name(lock)), invoked, window, e, cx, out);
                }
            }
            OpType::Invoke => {}
        }
    }

    fn finish(&mut self, _end: &End, out: &mut Findings) -> Outcome {
        if self.window.is_none() {
            return Outcome::NotApplicable(
                "no ttl in test.yaml: no window to judge a worker locked out by".into(),
            );
        }
        let mut ended = Vec::new();
        for worker in self.by_worker.values_mut() {
            let w = worker.id;
            ended.extend(worker.runs.drain(..).map(|(_, run)| (w, run)));
        }
        for (w, run) in ended {
            self.judge(w, run, out);
        }
        if self.completed == 0 {
            Outcome::NotApplicable("no acquire completed".into())
        } else {
            Outcome::Checked
        }
    }
}

impl LockedOutClient {
    pub fn new(ttl: Option<Duration>, slack: Duration, workers: Option<u32>) -> Self {
        LockedOutClient {
            window: ttl.map(|t| (t + slack).as_nanos() as u64),
            workers: workers.filter(|&n| n > 0),
            ..LockedOutClient::default()
        }
    }

    /// The worker a process belongs to.
    fn worker_of(&self, p: u32) -> u32 {
        self.workers.map_or(p, |n| p % n)
    }

    /// Worker `w`'s state, made on first use.
    fn worker(&mut self, w: u32) -> &mut Worker {
        self.by_worker.get_or_insert_with(w, || Worker {
            id: w,
            name: None,
            runs: Vec::new(),
        })
    }

    /// Whether a fault was on worker `w` or the service at any moment since history index
    /// `since`.
    fn faulted_since(&self, w: u32, since: u64) -> bool {
        if self.service.broken_since(since) {
            return true;
        }
        match self.by_worker.get(w).and_then(|w| w.name.as_ref()) {
            Some(name) => self
                .targets
                .get(name)
                .is_some_and(|c| c.broken_since(since)),
            None => self
                .targets
                .iter()
                .filter(|(name, _)| !self.named.contains_key(*name))
                .any(|(_, c)| c.broken_since(since)),
        }
    }

    fn nemesis(&mut self, e: &EventRef<'_>, cx: &Context<'_>) {
        let (fault, start) = match &e.f {
            // A start that carries an error was skipped: nothing was applied.
            F::Start(_) if e.error().is_some() => return,
            F::Start(f) => (&**f, true),
            F::Stop(f) => (&**f, false),
            _ => return,
        };
        let mark = |c: &mut Calm| {
            c.active = if start {
                c.active + 1
            } else {
                c.active.saturating_sub(1)
            };
            c.last = Some(e.index);
        };
        match cx.fault_scope(fault, e) {
            Scope::Resource => {}
            Scope::LockService => mark(&mut self.service),
            Scope::Workers => {
                for t in e.targets() {
                    mark(self.targets.entry(Name::from(t.as_ref())).or_default());
                }
            }
        }
    }

    /// A grant of `lock` to process `p`: counted for the runs of others, and the end of `p`'s
    /// worker's own run on it.
    fn granted(
        &mut self,
        p: u32,
        lock: LockId,
        e: &EventRef<'_>,
        cx: &Context<'_>,
        out: &mut Findings,
    ) {
        self.grants.at(lock).push(Grant {
            index: e.index,
            time: e.time,
            process: p,
            token: e.token,
        });
        let w = self.worker_of(p);
        let owner = cx.acquired.and_then(|a| a.owner());
        let worker = self.worker(w);
        if let (None, Some(owner)) = (&worker.name, owner) {
            worker.name = Some(Name::from(owner));
            self.named.insert(Name::from(owner), w);
        }
        if let Some(run) = self.take_run(w, lock) {
            self.judge(w, run, out);
        }
    }

    /// A failed acquire of `lock` by process `p`, invoked at `invoked` (index, time).
    #[allow(clippy::too_many_arguments)]
    fn failed(
        &mut self,
        p: u32,
        (lock, name): (LockId, &str),
        invoked: (u64, u64),
        window: u64,
        e: &EventRef<'_>,
        cx: &Context<'_>,
        out: &mut Findings,
    ) {
        let w = self.worker_of(p);
        let since = self
            .by_worker
            .get(w)
            .and_then(|x| x.runs.iter().find(|(l, _)| *l == lock))
            .map_or(invoked.0, |(_, r)| r.first.0);
        // A fault since the run's first invoke ends the run; one since this attempt's excuses
        // it too.
        if self.faulted_since(w, since) {
            if let Some(run) = self.take_run(w, lock) {
                self.judge(w, run, out);
            }
            if self.faulted_since(w, invoked.0) {
                return;
            }
        }
        let free = cx
            .holds
            .open(lock)
            .iter()
            .all(|h| self.worker_of(h.process) == w);
        let grants = self.grants.at(lock);
        let worker = self.by_worker.get_or_insert_with(w, || Worker {
            id: w,
            name: None,
            runs: Vec::new(),
        });
        let k = match worker.runs.iter().position(|(l, _)| *l == lock) {
            Some(k) => k,
            None => {
                worker.runs.push((lock, Run::open(name, invoked, grants)));
                worker.runs.len() - 1
            }
        };
        let run = &mut worker.runs[k].1;
        run.attempt(p, invoked.0, e, grants, free);
        if run.claimed_at.is_none() && run.holds(window, grants.last_time) {
            run.claimed_at = Some(e.time);
        }
    }

    fn take_run(&mut self, w: u32, lock: LockId) -> Option<Run> {
        let worker = self.by_worker.get_mut(w)?;
        let k = worker.runs.iter().position(|(l, _)| *l == lock)?;
        Some(worker.runs.swap_remove(k).1)
    }

    /// A run that ended: reported if it was claimed.
    fn judge(&self, w: u32, run: Run, out: &mut Findings) {
        if let Some(at) = run.claimed_at {
            let name_of = |p: u32| {
                self.by_worker
                    .get(self.worker_of(p))
                    .and_then(|x| x.name.as_deref())
            };
            report::push(w, &run, at, &name_of, out);
        }
    }
}
