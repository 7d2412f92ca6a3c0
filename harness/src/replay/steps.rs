//! The steps of a scenario applied to a running stage, one at a time, in order. Each step fills
//! one [`Row`] of the step table. An operation sent to a paused worker is left open (its row
//! says so) and is completed and checked when that worker is resumed, killed, or at the end.
//! Faults the scenario applies are recorded as nemesis events (`start-pause-worker-a` /
//! `stop-pause-worker-a` ...), so the checkers see them as they see a run's nemesis.

use super::actor::{nemesis_event, Actor, Cmd, Done};
use super::probe;
use super::scenario::{Action, Control, Expect, Step};
use crate::cluster::ClusterHandle;
use crate::config::TestPlan;
use crate::control::DockerControl;
use crate::docker::{Role, RunEnv};
use crate::run::prepare::HarnessLog;
use nemesis::{Grudge, NodeControl, Signal};
use results::OpType;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use workloads::driver::Recorder;

/// One line of the step table.
#[derive(Debug, Clone)]
pub struct Row {
    /// 1-based step number.
    pub step: usize,
    pub line: u32,
    /// The worker, `wait` or `nemesis`.
    pub who: String,
    pub action: String,
    pub token: Option<u64>,
    pub highest_before: Option<u64>,
    pub result: String,
    pub expect: Option<Expect>,
    /// `None`: nothing expected (or not decided yet).
    pub held: Option<bool>,
    pub why: Option<String>,
}

impl Row {
    fn new(step: usize, s: &Step) -> Row {
        let (line, who, action, expect) = match s {
            Step::Worker {
                worker,
                action,
                expect,
                line,
            } => (*line, worker.clone(), action_text(action), expect.clone()),
            Step::Control {
                control,
                expect,
                line,
            } => {
                let who = match control {
                    Control::LeaseExpired(_) | Control::Sleep(_) | Control::Failover => "wait",
                    _ => "nemesis",
                };
                (
                    *line,
                    who.to_string(),
                    control_text(control),
                    expect.clone(),
                )
            }
        };
        Row {
            step,
            line,
            who,
            action,
            token: None,
            highest_before: None,
            result: String::new(),
            expect,
            held: None,
            why: None,
        }
    }
}

fn action_text(a: &Action) -> String {
    match a {
        Action::Acquire => "acquire".into(),
        Action::Write(v) => format!("write {v}"),
        Action::Release => "release".into(),
        Action::Pause => "pause".into(),
        Action::Resume => "resume".into(),
        Action::Kill => "kill".into(),
        Action::Isolate => "isolate".into(),
        Action::Heal => "heal".into(),
    }
}

fn control_text(c: &Control) -> String {
    match c {
        Control::LeaseExpired(w) => format!("lease-expired {w}"),
        Control::Sleep(d) => format!("sleep {d}"),
        Control::Heal => "heal".into(),
        Control::PauseNode(n) => format!("pause {n}"),
        Control::ResumeNode(n) => format!("resume {n}"),
        Control::CutReplication => "cut-replication".into(),
        Control::Failover => "failover".into(),
    }
}

/// How an expectation reads in the table.
pub fn expect_text(e: &Expect) -> String {
    match e {
        Expect::Result(r) => r.as_str().to_string(),
        Expect::Acquired => "acquired".into(),
        Expect::LockHeld => "lock-held".into(),
        Expect::Token { op, other } => {
            let op = match op {
                super::scenario::Cmp::Gt => ">",
                super::scenario::Cmp::Ge => ">=",
                super::scenario::Cmp::Lt => "<",
                super::scenario::Cmp::Eq => "==",
            };
            format!("token {op} {other}.token")
        }
        Expect::Anomaly(k) => format!("anomaly {}", k.as_str()),
    }
}

/// One scenario worker as the executor tracks it.
#[derive(Debug)]
pub struct W {
    pub name: String,
    /// Short container name (`worker-a`): the control's target.
    pub target: String,
    actor: Actor,
    paused: bool,
    pending: Vec<(usize, Cmd, oneshot::Receiver<Done>)>,
    /// Token and lease of the worker's latest successful acquire.
    token: Option<u64>,
    lease: Option<String>,
}

impl W {
    pub fn new(name: String, target: String, actor: Actor) -> W {
        W {
            name,
            target,
            actor,
            paused: false,
            pending: Vec::new(),
            token: None,
            lease: None,
        }
    }
}

/// Everything the steps act on.
pub struct Stage {
    pub env: Arc<RunEnv>,
    pub cluster: Arc<RwLock<ClusterHandle>>,
    pub control: DockerControl,
    pub rec: Recorder,
    pub plan: TestPlan,
    pub workers: Vec<W>,
    /// How long a non-paused worker may take to answer one operation.
    pub op_wait: Duration,
    /// Lock-service nodes paused by `nemesis: pause` (short names), in order.
    pub paused_nodes: Vec<String>,
    /// Indices of isolated workers.
    pub isolated: BTreeSet<usize>,
    /// The master cut from its replicas, and its replicas.
    pub cut_replication: Option<(String, Vec<String>)>,
    pub log: HarnessLog,
}

/// Runs every step; stops at the first step that cannot be carried out (a harness problem or a
/// wait that never came true), heals, and completes every open operation.
pub async fn run_all(st: &mut Stage, steps: &[Step]) -> (Vec<Row>, Option<String>) {
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

impl Stage {
    fn worker(&self, name: &str) -> Result<usize, String> {
        self.workers
            .iter()
            .position(|w| w.name == name)
            .ok_or_else(|| format!("no worker {name}"))
    }

    fn nemesis(&self, start: bool, fault: &str, targets: &[String]) {
        if let Err(e) = self
            .rec
            .record(nemesis_event(&self.rec, start, fault, targets))
        {
            self.log.line(&format!("cannot record nemesis event: {e}"));
        }
    }

    async fn apply(&mut self, step: &Step, i: usize, rows: &mut [Row]) -> Result<(), String> {
        match step {
            Step::Worker { worker, action, .. } => {
                let w = self.worker(worker)?;
                let target = self.workers[w].target.clone();
                let op = |cmd: Cmd| Some(cmd);
                let cmd = match action {
                    Action::Acquire => op(Cmd::Acquire),
                    Action::Write(v) => op(Cmd::Write(v.clone())),
                    Action::Release => op(Cmd::Release),
                    _ => None,
                };
                if let Some(cmd) = cmd {
                    let rx = self.workers[w].actor.send(cmd.clone());
                    if self.workers[w].paused {
                        rows[i].result = "sent; open while paused".into();
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
                match action {
                    Action::Pause => {
                        self.signal(&target, Signal::Stop).await?;
                        self.workers[w].paused = true;
                        self.nemesis(true, &format!("pause-{target}"), &[target.clone()]);
                        rows[i].result = "paused (SIGSTOP)".into();
                    }
                    Action::Resume => {
                        self.signal(&target, Signal::Cont).await?;
                        self.workers[w].paused = false;
                        self.nemesis(false, &format!("pause-{target}"), &[target.clone()]);
                        rows[i].result = "resumed (SIGCONT)".into();
                        self.finish_pending(w, rows, self.op_wait).await;
                    }
                    Action::Kill => {
                        self.nemesis(true, &format!("kill-{target}"), &[target.clone()]);
                        self.signal(&target, Signal::Kill).await?;
                        self.workers[w].paused = false;
                        self.nemesis(false, &format!("kill-{target}"), &[target.clone()]);
                        rows[i].result = "killed (SIGKILL)".into();
                        self.finish_pending(w, rows, Duration::from_secs(10)).await;
                    }
                    Action::Isolate => {
                        self.isolated.insert(w);
                        self.repartition().await?;
                        self.nemesis(true, &format!("isolate-{target}"), &[target.clone()]);
                        rows[i].result = "cut from the lock service".into();
                    }
                    Action::Heal => {
                        self.isolated.remove(&w);
                        self.repartition().await?;
                        self.nemesis(false, &format!("isolate-{target}"), &[target.clone()]);
                        rows[i].result = "reconnected".into();
                    }
                    _ => {}
                }
                Ok(())
            }
            Step::Control { control, .. } => self.control_step(control, i, rows).await,
        }
    }

    async fn control_step(
        &mut self,
        c: &Control,
        i: usize,
        rows: &mut [Row],
    ) -> Result<(), String> {
        match c {
            Control::LeaseExpired(name) => {
                let w = self.worker(name)?;
                let lease = self.workers[w]
                    .lease
                    .clone()
                    .ok_or_else(|| format!("{name} holds no lease (no successful acquire yet)"))?;
                let cluster = self
                    .cluster
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                let limit = self.plan.ttl.get() * 3 + Duration::from_secs(2);
                let took = probe::wait_expired(&cluster, &self.plan.lock, &lease, limit).await?;
                rows[i].result = format!("expired after {:.2}s", took.as_secs_f64());
            }
            Control::Sleep(d) => {
                tokio::time::sleep(d.get()).await;
                rows[i].result = "slept".into();
            }
            Control::Heal => {
                self.heal_all().await;
                rows[i].result = "healed".into();
            }
            Control::PauseNode(n) => {
                let node = self.resolve_node(n).await?;
                self.signal(&node, Signal::Stop).await?;
                self.paused_nodes.push(node.clone());
                self.nemesis(true, &format!("pause-{node}"), &[node.clone()]);
                rows[i].result = format!("{node} paused (SIGSTOP)");
            }
            Control::ResumeNode(n) => {
                let node = if n == "master" || n == "leader" {
                    self.paused_nodes
                        .last()
                        .cloned()
                        .ok_or("no lock-service node is paused")?
                } else {
                    n.clone()
                };
                self.signal(&node, Signal::Cont).await?;
                self.paused_nodes.retain(|p| *p != node);
                self.nemesis(false, &format!("pause-{node}"), &[node.clone()]);
                rows[i].result = format!("{node} resumed (SIGCONT)");
            }
            Control::CutReplication => {
                let master = self.resolve_node("master").await?;
                let replicas: Vec<String> = {
                    let c = self.cluster.read().unwrap_or_else(|p| p.into_inner());
                    c.nodes
                        .iter()
                        .filter(|n| matches!(n.role, Role::Master | Role::Replica))
                        .map(|n| crate::control::topology::short_name(&self.env, &n.name))
                        .filter(|n| *n != master)
                        .collect()
                };
                if replicas.is_empty() {
                    return Err(
                        "cut-replication needs a master with replicas (redis-sentinel)".into(),
                    );
                }
                self.cut_replication = Some((master.clone(), replicas.clone()));
                self.repartition().await?;
                self.nemesis(true, "cut-replication", &[master.clone()]);
                rows[i].result = format!("{master} cut from {}", replicas.join(", "));
            }
            Control::Failover => {
                let before = self
                    .paused_nodes
                    .last()
                    .cloned()
                    .or_else(|| self.cut_replication.as_ref().map(|c| c.0.clone()))
                    .ok_or("wait failover needs a paused or cut master first")?;
                let start = Instant::now();
                let limit = Duration::from_secs(40);
                loop {
                    let cluster = self
                        .cluster
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    if let Ok(Some(n)) = cluster.leader().await {
                        let now = crate::control::topology::short_name(&self.env, &n.name);
                        if now != before {
                            rows[i].result = format!(
                                "{now} promoted after {:.1}s",
                                start.elapsed().as_secs_f64()
                            );
                            break;
                        }
                    }
                    if start.elapsed() > limit {
                        return Err(format!("the sentinels still name {before} after {limit:?}"));
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        Ok(())
    }

    /// `master` / `leader`: who leads now; anything else is taken as a short node name.
    async fn resolve_node(&self, n: &str) -> Result<String, String> {
        if n != "master" && n != "leader" {
            return Ok(n.to_string());
        }
        let cluster = self
            .cluster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let node = cluster
            .leader()
            .await?
            .ok_or_else(|| format!("{} names no {n} right now", cluster.system))?;
        Ok(crate::control::topology::short_name(&self.env, &node.name))
    }

    async fn signal(&self, target: &str, s: Signal) -> Result<(), String> {
        self.control
            .signal(target, s)
            .await
            .map_err(|e| e.to_string())
    }

    /// Installs the union of every isolation and the replication cut (or heals when none).
    async fn repartition(&self) -> Result<(), String> {
        let lock_nodes: Vec<String> = {
            let c = self.cluster.read().unwrap_or_else(|p| p.into_inner());
            c.nodes
                .iter()
                .map(|n| crate::control::topology::short_name(&self.env, &n.name))
                .collect()
        };
        let mut grudge = Grudge::none();
        let mut add = |g: Grudge| {
            for (k, v) in g.0 {
                grudge.0.entry(k).or_default().extend(v);
            }
        };
        for w in &self.isolated {
            add(Grudge::cut(&[self.workers[*w].target.clone()], &lock_nodes));
        }
        if let Some((m, replicas)) = &self.cut_replication {
            add(Grudge::cut(&[m.clone()], replicas));
        }
        if grudge.0.is_empty() {
            self.control.heal_network().await
        } else {
            self.control.partition(&grudge).await
        }
        .map_err(|e| e.to_string())
    }

    /// Resumes every paused worker and node and removes every cut.
    pub async fn heal_all(&mut self) {
        for w in 0..self.workers.len() {
            if self.workers[w].paused {
                let t = self.workers[w].target.clone();
                if let Err(e) = self.signal(&t, Signal::Cont).await {
                    self.log.line(&format!("heal: {e}"));
                }
                self.workers[w].paused = false;
                self.nemesis(false, &format!("pause-{t}"), &[t.clone()]);
            }
        }
        for node in std::mem::take(&mut self.paused_nodes) {
            if let Err(e) = self.signal(&node, Signal::Cont).await {
                self.log.line(&format!("heal: {e}"));
            }
            self.nemesis(false, &format!("pause-{node}"), &[node.clone()]);
        }
        let isolated = std::mem::take(&mut self.isolated);
        let cut = self.cut_replication.take();
        if !isolated.is_empty() || cut.is_some() {
            if let Err(e) = self.control.heal_network().await {
                self.log.line(&format!("heal: {e}"));
            }
            for w in isolated {
                let t = self.workers[w].target.clone();
                self.nemesis(false, &format!("isolate-{t}"), &[t]);
            }
            if let Some((m, _)) = cut {
                self.nemesis(false, "cut-replication", &[m]);
            }
        }
    }

    /// Completes the open operations of worker `w` (in the order they were sent).
    async fn finish_pending(&mut self, w: usize, rows: &mut [Row], wait: Duration) {
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
                        "{} did not answer within {wait:?} after it was resumed",
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
