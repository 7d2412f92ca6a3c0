//! The steps of a scenario applied to a running stage, one at a time, in order. Each step fills
//! one [`Row`] of the step table. An operation sent to a paused worker is left open (its row
//! says so) and is completed and checked when that worker is resumed, killed, or at the end.
//! Faults the scenario applies are recorded as nemesis events (`start-pause-worker` /
//! `stop-pause-worker` ...), so the checkers see them as they see a run's nemesis.

use super::actor::{Actor, Cmd, Done};
pub use super::rows::{expect_text, Row};
use super::scenario::{Action, Expect, Step};
use crate::config::TestPlan;
use crate::run::container_site::ContainerSite;
use crate::run::prepare::HarnessLog;
use nemesis::Signal;
use results::fault::FaultKind;
use results::{EventFault, FaultPhase, NemesisEvent, OpType};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::oneshot;
use workloads::driver::Recorder;

/// One scenario worker as the executor tracks it.
#[derive(Debug)]
pub struct W {
    pub name: String,
    /// Short container name (`worker-a`): the control's target.
    pub target: String,
    pub(super) actor: Actor,
    pub(super) paused: bool,
    /// The fault that froze it (`pause-worker`, `pause-acquiring` ...): its stop names it too.
    pub(super) paused_by: FaultKind,
    pub(super) pending: Vec<(usize, Cmd, oneshot::Receiver<Done>)>,
    /// Token and lease of the worker's latest successful acquire.
    pub(super) token: Option<u64>,
    pub(super) lease: Option<String>,
}

impl W {
    pub fn new(name: String, target: String, actor: Actor) -> W {
        W {
            name,
            target,
            actor,
            paused: false,
            paused_by: FaultKind::PauseWorker,
            pending: Vec::new(),
            token: None,
            lease: None,
        }
    }
}

/// A wall clock a step moved: the control's target, the fault, and whom the history names.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub clock: String,
    pub fault: FaultKind,
    pub named: String,
}

/// Everything the steps act on: the deployed site (its containers, cluster and control) and
/// the scenario's workers.
pub struct Stage<'s> {
    pub site: &'s ContainerSite,
    pub rec: Recorder,
    pub plan: TestPlan,
    pub workers: Vec<W>,
    /// How long a non-paused worker may take to answer one operation.
    pub op_wait: Duration,
    /// Lock-service nodes paused by `nemesis: pause` (short names), in order.
    pub paused_nodes: Vec<String>,
    /// Indices of isolated workers, with the fault that cut each off (`isolate-worker`,
    /// `isolate-releasing`): its stop names it too.
    pub isolated: BTreeMap<usize, FaultKind>,
    /// Indices of workers whose links a step shaped (`slow-reply`, a `cut-*-reply`), with
    /// that fault: its stop names it.
    pub shaped: BTreeMap<usize, FaultKind>,
    /// Indices of workers whose CPU `starve` limited.
    pub starved: BTreeSet<usize>,
    /// Lock-service nodes whose CPU `nemesis: starve` limited (short names).
    pub starved_nodes: Vec<String>,
    /// Lock-service nodes `nemesis: restart-empty` killed and emptied, not started yet, with
    /// the fault that names each (`restart-empty-node` / `restart-empty-leader`).
    pub emptied: Vec<(String, FaultKind)>,
    /// The master cut from its replicas, and its replicas.
    pub cut_replication: Option<(String, Vec<String>)>,
    /// Clocks a step moved: a node's (`clock-jump`) or a worker's lock client's.
    pub clocked: Vec<Moved>,
    pub log: HarnessLog,
}

/// Runs every step; stops at the first step that cannot be carried out (a harness problem or a
/// wait that never came true), heals, and completes every open operation.
pub async fn run_all(st: &mut Stage<'_>, steps: &[Step]) -> (Vec<Row>, Option<String>) {
    let mut rows: Vec<Row> = Vec::new();
    let mut aborted = None;
    for (i, step) in steps.iter().enumerate() {
        rows.push(Row::new(i + 1, step));
        st.log.line(&format!(
            "step {} (line {}): {}",
            i + 1,
            rows[i].line,
            rows[i].action
        ));
        if let Err(e) = st.apply(step, i, &mut rows).await {
            rows[i].held = Some(false);
            rows[i].result = "not carried out".into();
            rows[i].why = Some(e.clone());
            aborted = Some(format!(
                "step {} (line {}) {} {}: {e}",
                i + 1,
                rows[i].line,
                rows[i].who,
                rows[i].action
            ));
            break;
        }
    }
    st.heal_all().await;
    for w in 0..st.workers.len() {
        st.finish_pending(w, &mut rows, st.op_wait).await;
    }
    (rows, aborted)
}

impl Stage<'_> {
    pub(super) fn worker(&self, name: &str) -> Result<usize, String> {
        self.workers
            .iter()
            .position(|w| w.name == name)
            .ok_or_else(|| format!("no worker {name}"))
    }

    /// Records a `start-<fault>` / `stop-<fault>` nemesis event naming its one target.
    pub(super) fn nemesis(&self, phase: FaultPhase, fault: impl Into<EventFault>, target: &str) {
        self.record(&NemesisEvent::new(phase, fault, vec![target.to_string()]));
    }

    /// Records a nemesis event now.
    pub(super) fn record(&self, e: &NemesisEvent) {
        if let Err(e) = self.rec.record(e.event(self.rec.clock.now())) {
            self.log.line(&format!("cannot record nemesis event: {e}"));
        }
    }

    async fn apply(&mut self, step: &Step, i: usize, rows: &mut [Row]) -> Result<(), String> {
        match step {
            Step::Worker { worker, action, .. } => {
                let w = self.worker(worker)?;
                let target = self.workers[w].target.clone();
                let op = |cmd: Cmd| Some(cmd);
                let cmd = match action.operation() {
                    Action::Acquire => op(Cmd::Acquire),
                    Action::Write(v) => op(Cmd::Write(v.clone())),
                    Action::Release => op(Cmd::Release),
                    _ => None,
                };
                let in_flight = match action {
                    Action::PauseAcquiring(after) => {
                        Some((Cmd::Acquire, *after, FaultKind::PauseAcquiring))
                    }
                    Action::KillAcquiring(after) => {
                        Some((Cmd::Acquire, *after, FaultKind::KillAcquiring))
                    }
                    Action::PauseWaiter(after) => {
                        Some((Cmd::Acquire, *after, FaultKind::PauseWaiter))
                    }
                    Action::PauseReleasing(after) => {
                        Some((Cmd::Release, *after, FaultKind::PauseReleasing))
                    }
                    Action::IsolateReleasing(after) => {
                        Some((Cmd::Release, *after, FaultKind::IsolateReleasing))
                    }
                    Action::CutAcquireReply(after) => {
                        Some((Cmd::Acquire, *after, FaultKind::CutAcquireReply))
                    }
                    Action::CutReleaseReply(after) => {
                        Some((Cmd::Release, *after, FaultKind::CutReleaseReply))
                    }
                    _ => None,
                };
                if let Some((cmd, after, fault)) = in_flight {
                    return self.strike_in_flight(w, i, cmd, after, fault, rows).await;
                }
                if let Some(cmd) = cmd {
                    // A begun operation of this worker's answers first: its rows stay in order.
                    if !self.workers[w].paused {
                        self.finish_pending(w, rows, self.op_wait).await;
                    }
                    let rx = self.workers[w].actor.send(cmd.clone());
                    if self.workers[w].paused || matches!(action, Action::Begin(_)) {
                        rows[i].result = if self.workers[w].paused {
                            "sent; open while paused".into()
                        } else {
                            "sent; open while the scenario goes on".into()
                        };
                        self.workers[w].pending.push((i, cmd, rx));
                        return Ok(());
                    }
                    let done = tokio::time::timeout(self.op_wait, rx)
                        .await
                        .map_err(|_| format!("{worker} did not answer within {:?}", self.op_wait))?
                        .unwrap_or(Done {
                            outcome: None,
                            token: None,
                            index: None,
                        });
                    self.complete(i, w, &cmd, done, rows);
                    return Ok(());
                }
                // Worker faults are recorded as the run's nemesis records them: the standard
                // fault name, the worker (its owner name) as the target.
                let owner = self.workers[w].name.clone();
                match action {
                    Action::Pause => {
                        self.signal(&target, Signal::Stop).await?;
                        self.workers[w].paused = true;
                        self.nemesis(FaultPhase::Start, FaultKind::PauseWorker, &owner);
                        rows[i].result = "paused (SIGSTOP)".into();
                    }
                    Action::Resume => {
                        self.signal(&target, Signal::Cont).await?;
                        self.workers[w].paused = false;
                        let fault = std::mem::replace(
                            &mut self.workers[w].paused_by,
                            FaultKind::PauseWorker,
                        );
                        self.nemesis(FaultPhase::Stop, fault, &owner);
                        rows[i].result = "resumed (SIGCONT)".into();
                        self.finish_pending(w, rows, self.op_wait).await;
                    }
                    Action::Kill => {
                        self.nemesis(FaultPhase::Start, FaultKind::KillWorker, &owner);
                        self.signal(&target, Signal::Kill).await?;
                        self.workers[w].paused = false;
                        self.nemesis(FaultPhase::Stop, FaultKind::KillWorker, &owner);
                        rows[i].result = "killed (SIGKILL)".into();
                        self.finish_pending(w, rows, Duration::from_secs(10)).await;
                    }
                    Action::Isolate => {
                        self.isolated.insert(w, FaultKind::IsolateWorker);
                        self.repartition().await?;
                        self.nemesis(FaultPhase::Start, FaultKind::IsolateWorker, &owner);
                        rows[i].result = "cut from the lock service".into();
                    }
                    Action::Heal => rows[i].result = self.heal_worker(w).await?,
                    Action::SlowReply(length) => {
                        rows[i].result = self.slow_replies(w, *length).await?;
                    }
                    Action::ClientClock(how) => {
                        rows[i].result = self.move_client_clock(w, *how).await?;
                    }
                    Action::CutRenewReply => {
                        self.cut_reply(w, FaultKind::CutRenewReply, None).await?;
                        rows[i].result = "its next reply cut, whatever its client sends".into();
                    }
                    Action::Starve => rows[i].result = self.starve(w).await?,
                    _ => {}
                }
                Ok(())
            }
            Step::Control { control, .. } => self.control_step(control, i, rows).await,
        }
    }

    /// Completes the open operations of worker `w` (in the order they were sent).
    pub(super) async fn finish_pending(&mut self, w: usize, rows: &mut [Row], wait: Duration) {
        for (i, cmd, rx) in std::mem::take(&mut self.workers[w].pending) {
            match tokio::time::timeout(wait, rx).await {
                Ok(done) => {
                    let done = done.unwrap_or(Done {
                        outcome: None,
                        token: None,
                        index: None,
                    });
                    self.complete(i, w, &cmd, done, rows);
                }
                Err(_) => {
                    rows[i].result = "no answer".into();
                    rows[i].held = Some(false);
                    rows[i].why = Some(format!(
                        "{} did not answer within {wait:?} once the scenario waited for it",
                        self.workers[w].name
                    ));
                }
            }
        }
    }

    /// Fills a row from an operation's end and checks its expectation.
    fn complete(&mut self, i: usize, w: usize, cmd: &Cmd, done: Done, rows: &mut [Row]) {
        let row = &mut rows[i];
        row.token = done.token;
        let Some(o) = &done.outcome else {
            row.result = "died (no answer)".into();
            self.check(i, w, cmd, &done, rows);
            return;
        };
        row.highest_before = o.highest_before;
        row.result = match (o.result, o.kind) {
            (Some(r), _) => r.as_str().to_string(),
            (None, OpType::Ok) if *cmd == Cmd::Acquire => "acquired".into(),
            (None, OpType::Ok) => "ok".into(),
            (None, k) => format!(
                "{}: {}",
                if k == OpType::Fail { "fail" } else { "info" },
                o.error.clone().unwrap_or_default()
            ),
        };
        if *cmd == Cmd::Acquire && o.kind == OpType::Ok {
            self.workers[w].token = o.token;
            self.workers[w].lease = o.lease.clone();
        }
        self.check(i, w, cmd, &done, rows);
    }

    fn check(&self, i: usize, _w: usize, cmd: &Cmd, done: &Done, rows: &mut [Row]) {
        let Some(expect) = rows[i].expect.clone() else {
            return;
        };
        let o = done.outcome.as_ref();
        let (held, why) = match &expect {
            Expect::Result(r) => {
                let got = o.and_then(|o| o.result);
                (
                    got == Some(*r),
                    format!("expected {}, got {}", r.as_str(), rows[i].result),
                )
            }
            Expect::Acquired => (
                *cmd == Cmd::Acquire && o.is_some_and(|o| o.kind == OpType::Ok),
                format!(
                    "expected the acquire to take the lock, got {}",
                    rows[i].result
                ),
            ),
            Expect::LockHeld => (
                *cmd == Cmd::Acquire
                    && o.is_some_and(|o| {
                        o.kind == OpType::Fail
                            && o.error
                                .as_deref()
                                .is_some_and(|e| e.contains("acquire timeout"))
                    }),
                format!(
                    "expected the lock to be held by someone else (acquire timeout), got {}",
                    rows[i].result
                ),
            ),
            Expect::Token { op, other } => {
                let theirs = self.worker(other).ok().and_then(|x| self.workers[x].token);
                match (done.token, theirs) {
                    (Some(a), Some(b)) => (
                        op.holds(a, b),
                        format!(
                            "token {a} vs {other}.token {b}: {} does not hold",
                            expect_text(&expect)
                        ),
                    ),
                    (a, b) => (
                        false,
                        format!("no token to compare (this step: {a:?}, {other}: {b:?})"),
                    ),
                }
            }
            // Decided after the check.
            Expect::Anomaly(_) => return,
        };
        rows[i].held = Some(held);
        if !held {
            rows[i].why = Some(why);
        }
    }
}
