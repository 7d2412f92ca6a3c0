//! The steps of a scenario applied to a running stage, one at a time, in order. Each step fills
//! one [`Row`] of the step table. An operation sent to a paused worker is left open (its row
//! says so) and is completed and checked when that worker is resumed, killed, or at the end.
//! Faults the scenario applies are struck and lifted through the site's fault executor
//! (`nemesis::OneStep`), which records them as a run's nemesis does (`start-pause-worker` /
//! `stop-pause-worker` ...), so the checkers see them as they see a run's.

use super::actor::{Actor, Cmd, Done};
pub use super::rows::{expect_text, Row};
use super::scenario::{Action, Expect, Step};
use super::standing::{On, Standing};
use crate::config::TestPlan;
use crate::run::prepare::HarnessLog;
use crate::run::site::Site;
use nemesis::{Grudge, OneStep, Resolved, Signal, Struck};
use results::fault::FaultKind;
use results::{EventFault, OpType};
use std::time::Duration;
use tokio::sync::oneshot;
use workloads::driver::Recorder;

/// One scenario worker as the executor tracks it.
#[derive(Debug)]
pub struct W {
    pub name: String,
    /// The control's target: its container's short name (`worker-a`), or its owner name on
    /// the in-process site.
    pub target: String,
    pub(super) actor: Actor,
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
            pending: Vec::new(),
            token: None,
            lease: None,
        }
    }
}

/// Everything the steps act on: the deployed site, its fault executor, the scenario's workers,
/// and the faults standing.
pub struct Stage<'s> {
    pub site: &'s dyn Site,
    pub faults: Box<dyn OneStep + 's>,
    pub rec: Recorder,
    pub plan: TestPlan,
    pub workers: Vec<W>,
    /// How long a non-paused worker may take to answer one operation.
    pub op_wait: Duration,
    /// Every fault a step struck and no step lifted yet.
    pub standing: Standing,
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

    /// Strikes `fault` now through the site's executor, its start line naming `named` (a
    /// scenario's worker by its owner name, a node by its own) and carrying `extra` after the
    /// action's own fields.
    pub(super) async fn strike(
        &self,
        fault: impl Into<EventFault>,
        resolved: Resolved,
        named: &str,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Result<Struck, String> {
        self.faults
            .strike(fault.into(), resolved, Some(vec![named.to_string()]), extra)
            .await
            .map_err(|e| e.to_string())
    }

    /// Undoes what `struck` did and records its stop.
    pub(super) async fn lift(&self, struck: Struck) -> Result<(), String> {
        self.faults.lift(struck).await.map_err(|e| e.to_string())
    }

    /// Strikes `fault` on worker `w` now: `action` of the control's target, its start line
    /// naming the worker by its owner name.
    pub(super) async fn strike_worker(
        &self,
        w: usize,
        fault: FaultKind,
        action: impl FnOnce(String) -> Resolved,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Result<Struck, String> {
        let resolved = action(self.workers[w].target.clone());
        let owner = self.workers[w].name.clone();
        self.strike(fault, resolved, &owner, extra).await
    }

    /// Worker `w` cut from every lock-service node, as `fault`.
    pub(super) async fn isolate(
        &mut self,
        w: usize,
        fault: FaultKind,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Result<(), String> {
        let nodes = self.faults.nodes();
        let cut =
            |t: String| Resolved::Partition(Grudge::cut(std::slice::from_ref(&t), &nodes), vec![t]);
        let struck = self.strike_worker(w, fault, cut, extra).await?;
        self.standing.push(On::Isolated(w), struck);
        Ok(())
    }

    async fn apply(&mut self, step: &Step, i: usize, rows: &mut [Row]) -> Result<(), String> {
        match step {
            Step::Worker { worker, action, .. } => {
                let w = self.worker(worker)?;
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
                    let paused = self.standing.holds(&On::Frozen(w));
                    if !paused {
                        self.finish_pending(w, rows, self.op_wait).await;
                    }
                    let rx = self.workers[w].actor.send(cmd.clone());
                    if paused || matches!(action, Action::Begin(_)) {
                        rows[i].result = if paused {
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
                        let stop = |t| Resolved::Signal(Signal::Stop, vec![t]);
                        let struck = self
                            .strike_worker(w, FaultKind::PauseWorker, stop, vec![])
                            .await?;
                        self.standing.push(On::Frozen(w), struck);
                        rows[i].result = "paused (SIGSTOP)".into();
                    }
                    Action::Resume => {
                        let struck = self
                            .standing
                            .take(&On::Frozen(w))
                            .ok_or_else(|| format!("{owner} is not paused"))?;
                        self.lift(struck).await?;
                        rows[i].result = "resumed (SIGCONT)".into();
                        self.finish_pending(w, rows, self.op_wait).await;
                    }
                    Action::Kill => {
                        // A paused worker's pause ends where its process does.
                        if let Some(paused) = self.standing.take(&On::Frozen(w)) {
                            self.faults.leave(paused).map_err(|e| e.to_string())?;
                        }
                        self.kill(w, FaultKind::KillWorker, vec![]).await?;
                        rows[i].result = "killed (SIGKILL)".into();
                        self.finish_pending(w, rows, Duration::from_secs(10)).await;
                    }
                    Action::Isolate => {
                        self.isolate(w, FaultKind::IsolateWorker, vec![]).await?;
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
