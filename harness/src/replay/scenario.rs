//! A scripted incident: the scenario file of `fencecheck replay`, parsed and checked before any
//! container starts. A malformed scenario (unknown worker, a write before that worker ever
//! acquired, an unknown action or expectation) is rejected with its line number.
//!
//! ```yaml
//! name: stale-fence
//! providers: [etcd, zookeeper, redis]   # each runs with its default recipe unless `recipe:` names one
//!                                       # (or `client: kazoo` replays with that library: its provider)
//! resource: strict
//! ttl: 2s
//! workers: [A, B]
//! # optional: the lock client's settings, as in a test file (acquire_timeout, recovery_slack,
//! # renewal, renew_interval, session_timeout, op_timeout, client_options, app, cut_reply_to;
//! # on the memory provider, memory_bugs;
//! # with a client,
//! # `with: [redis==5.0.8]` pins its library's dependencies)
//! steps:
//!   - A: acquire
//!   - A: pause
//!   - wait: lease-expired A
//!   - B: acquire
//!     expect: token > A.token
//!   - B: write v2
//!     expect: accepted
//!   - A: resume
//!   - A: write v1
//!     expect: rejected-stale-fence
//!   - A: release
//!     expect: release-rejected-not-owner
//! ```
//!
//! `begin <operation>` (`- B: begin acquire`) sends the operation and goes on without waiting
//! for its answer: a worker already blocked in an acquire when the next steps happen.
//!
//! The faults at a lock protocol's weak moments are worker steps too: `pause-acquiring`,
//! `kill-acquiring` and `pause-waiter` send an acquire, `pause-releasing` and
//! `isolate-releasing` a release, and strike the worker `after <duration>` (at once without
//! one); `slow-reply [<duration>]` holds back the lock service's replies to the worker until its
//! `heal`; `client-clock-jump <±duration>` and `client-clock-skew <factor>x` move the wall
//! clock of the worker's lock client until `nemesis: clock-real`.

use crate::config::Dur;
use containers::image::pin::Pin;
use results::fault::FaultKind;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::fmt;

mod lines;
use lines::{parse_action, parse_expect, parse_nemesis, parse_wait};

/// What a worker step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Acquire,
    Write(String),
    Release,
    Pause,
    Resume,
    Kill,
    /// Cut the worker off from the lock service (not from the resource).
    Isolate,
    Heal,
    /// Send an acquire and freeze the worker this long after (`pause-acquiring after 5ms`):
    /// the acquire stays open until `resume`.
    PauseAcquiring(Dur),
    /// The same with a release (`pause-releasing`).
    PauseReleasing(Dur),
    /// Send an acquire and kill the worker this long after (`kill-acquiring after 5ms`).
    KillAcquiring(Dur),
    /// Send a release and cut the worker off from the lock service this long after
    /// (`isolate-releasing after 2ms`), until its `heal`.
    IsolateReleasing(Dur),
    /// Send an acquire for a lock another worker holds and freeze the worker this long after
    /// (`pause-waiter after 300ms`): frozen in its wait, until `resume`.
    PauseWaiter(Dur),
    /// Hold back every reply of the lock service to the worker this long while its requests
    /// pass at once (`slow-reply 2s`; without a length, twice the client's operation timeout,
    /// as the run's `slow-reply`), until its `heal`.
    SlowReply(Option<Dur>),
    /// Move the wall clock of the worker's lock client (`client-clock-jump`,
    /// `client-clock-skew`), until `nemesis: clock-real`.
    ClientClock(ClientClock),
    /// Send an acquire and, this long after, arm a cut on the worker's links: the next reply
    /// the lock service sends it (the acquire's, if it has not come yet) is dropped and its
    /// connection closed, the request having landed (`cut-acquire-reply after 5ms`), until its
    /// `heal`.
    CutAcquireReply(Dur),
    /// The same with a release (`cut-release-reply`).
    CutReleaseReply(Dur),
    /// Arm the cut now, with no operation sent: the next reply to the worker is cut, whatever
    /// its lock client sends next (its renewal, where it renews on its own), until its `heal`.
    CutRenewReply,
    /// Cut the worker's CPU to a few percent of one CPU (a cgroup quota): slow, not stopped
    /// (`starve`), until its `heal`.
    Starve,
    /// `begin acquire` (or write, release): the operation is sent and the scenario goes on
    /// without its answer, as a worker already waiting when the next steps happen; it is
    /// completed and checked before that worker's next step, or at the end.
    Begin(Box<Action>),
}

impl Action {
    /// The operation itself (`begin acquire` is an acquire).
    pub fn operation(&self) -> &Action {
        match self {
            Action::Begin(inner) => inner,
            other => other,
        }
    }

    /// The run's fault this step strikes, if it strikes one.
    pub fn fault(&self) -> Option<FaultKind> {
        Some(match self {
            Action::Acquire
            | Action::Write(_)
            | Action::Release
            | Action::Resume
            | Action::Heal => return None,
            Action::Begin(inner) => return inner.fault(),
            Action::Pause => FaultKind::PauseWorker,
            Action::Kill => FaultKind::KillWorker,
            Action::Isolate => FaultKind::IsolateWorker,
            Action::PauseAcquiring(_) => FaultKind::PauseAcquiring,
            Action::PauseReleasing(_) => FaultKind::PauseReleasing,
            Action::KillAcquiring(_) => FaultKind::KillAcquiring,
            Action::IsolateReleasing(_) => FaultKind::IsolateReleasing,
            Action::PauseWaiter(_) => FaultKind::PauseWaiter,
            Action::SlowReply(_) => FaultKind::SlowReply,
            Action::ClientClock(c) => c.fault(),
            Action::CutAcquireReply(_) => FaultKind::CutAcquireReply,
            Action::CutReleaseReply(_) => FaultKind::CutReleaseReply,
            Action::CutRenewReply => FaultKind::CutRenewReply,
            Action::Starve => FaultKind::StarveWorker,
        })
    }
}

/// How a client clock step moves the worker's wall clock. Integers, so a step compares exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientClock {
    /// `client-clock-jump 10s` (`-10s`: backward): this many milliseconds off the real time.
    Jump { millis: i64 },
    /// `client-clock-skew 3x` (`0.333x`: slow): running this many thousandths as fast.
    Skew { per_mille: u32 },
}

impl ClientClock {
    /// The run's name of the fault, for the history's nemesis lines.
    pub fn fault(self) -> FaultKind {
        match self {
            ClientClock::Jump { .. } => FaultKind::ClientClockJump,
            ClientClock::Skew { .. } => FaultKind::ClientClockSkew,
        }
    }

    /// The setting the worker's fake clock takes.
    pub fn setting(self) -> nemesis::ClockSetting {
        match self {
            ClientClock::Jump { millis } => nemesis::ClockSetting::Ahead {
                secs: millis as f64 / 1000.0,
            },
            ClientClock::Skew { per_mille } => nemesis::ClockSetting::Fast {
                factor: f64::from(per_mille) / 1000.0,
            },
        }
    }
}

/// What the nemesis / the clock does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Wait until the provider no longer lists this worker's lease (asked, not slept).
    LeaseExpired(String),
    /// Wait a fixed time (for a scenario that is about time itself).
    Sleep(Dur),
    /// Heal every fault the scenario applied: resume paused workers and nodes, remove cuts.
    Heal,
    /// SIGSTOP every process of a node of the lock service (`master` / `leader`: whoever leads
    /// when the step runs; or a short name such as `redis-1`, `etcd-2`).
    PauseNode(String),
    /// SIGCONT a node paused by `nemesis: pause <node>` (`master` / `leader`: the one paused).
    ResumeNode(String),
    /// Cut the Redis master off from its replicas (the sentinels still see both): whatever it
    /// acknowledges now is not replicated.
    CutReplication,
    /// Wait until the sentinels name a master other than the one at the step's start.
    Failover,
    /// Move these nodes' wall clocks this far ahead (libfaketime), until `clock-real` or heal.
    ClockJump { ahead: Dur, nodes: Vec<String> },
    /// Every moved clock back to the real time.
    ClockReal,
    /// Freeze every node of the lock service (`leader`: the leader alone) for this long, then
    /// thaw it: `stall-service` / `stall-leader` as one step.
    Stall { leader: bool, length: Dur },
    /// Cut a node's CPU to a few percent of one CPU (`starve <node>`), until `unstarve <node>`
    /// or heal.
    StarveNode(String),
    /// Lift the CPU limit `starve <node>` set (`master` / `leader`: the one starved).
    UnstarveNode(String),
    /// Kill a node and empty its data directory (`restart-empty <node>`): it stays down until
    /// `restart <node>` (or the final heal) starts it again from nothing.
    RestartEmpty(String),
    /// Start a node `restart-empty` left down (`master` / `leader`: the one it killed).
    Restart(String),
}

impl Control {
    /// The run's fault this step strikes, if it strikes one the fault table names.
    pub fn fault(&self) -> Option<FaultKind> {
        Some(match self {
            Control::LeaseExpired(_)
            | Control::Sleep(_)
            | Control::Heal
            | Control::ResumeNode(_)
            | Control::CutReplication
            | Control::Failover
            | Control::ClockReal
            | Control::UnstarveNode(_)
            | Control::Restart(_) => return None,
            Control::PauseNode(_) => FaultKind::PauseNode,
            Control::ClockJump { .. } => FaultKind::ClockJump,
            Control::Stall { leader: true, .. } => FaultKind::StallLeader,
            Control::Stall { leader: false, .. } => FaultKind::StallService,
            Control::StarveNode(_) => FaultKind::StarveNode,
            Control::RestartEmpty(n) if n == "master" || n == "leader" => {
                FaultKind::RestartEmptyLeader
            }
            Control::RestartEmpty(_) => FaultKind::RestartEmptyNode,
        })
    }

    /// Who a step of this control is written as: `wait` (it waits for something to be true) or
    /// `nemesis` (it does something).
    pub fn who(&self) -> &'static str {
        match self {
            Control::LeaseExpired(_) | Control::Sleep(_) | Control::Failover => "wait",
            _ => "nemesis",
        }
    }
}

/// A worker's action as the scenario file writes it (after `A: `), as `lines.rs` reads it.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Acquire => f.write_str("acquire"),
            Action::Write(v) => write!(f, "write {v}"),
            Action::Release => f.write_str("release"),
            Action::Pause => f.write_str("pause"),
            Action::Resume => f.write_str("resume"),
            Action::Kill => f.write_str("kill"),
            Action::Isolate => f.write_str("isolate"),
            Action::Heal => f.write_str("heal"),
            Action::Begin(inner) => write!(f, "begin {inner}"),
            Action::PauseAcquiring(after) => write!(f, "pause-acquiring after {after}"),
            Action::PauseReleasing(after) => write!(f, "pause-releasing after {after}"),
            Action::KillAcquiring(after) => write!(f, "kill-acquiring after {after}"),
            Action::IsolateReleasing(after) => write!(f, "isolate-releasing after {after}"),
            Action::PauseWaiter(after) => write!(f, "pause-waiter after {after}"),
            Action::CutAcquireReply(after) if after.get().is_zero() => {
                f.write_str("cut-acquire-reply")
            }
            Action::CutReleaseReply(after) if after.get().is_zero() => {
                f.write_str("cut-release-reply")
            }
            Action::CutAcquireReply(after) => write!(f, "cut-acquire-reply after {after}"),
            Action::CutReleaseReply(after) => write!(f, "cut-release-reply after {after}"),
            Action::CutRenewReply => f.write_str("cut-renew-reply"),
            Action::Starve => f.write_str("starve"),
            Action::SlowReply(None) => f.write_str("slow-reply"),
            Action::SlowReply(Some(d)) => write!(f, "slow-reply {d}"),
            Action::ClientClock(ClientClock::Jump { millis }) => write!(
                f,
                "client-clock-jump {}{}",
                if *millis < 0 { "-" } else { "" },
                Dur::from_millis(millis.unsigned_abs())
            ),
            Action::ClientClock(ClientClock::Skew { per_mille }) => {
                write!(f, "client-clock-skew {}x", f64::from(*per_mille) / 1000.0)
            }
        }
    }
}

/// A `wait:` or `nemesis:` step as the scenario file writes it (after its `who`).
impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Control::LeaseExpired(w) => write!(f, "lease-expired {w}"),
            Control::Sleep(d) => write!(f, "{d}"),
            Control::Heal => f.write_str("heal"),
            Control::PauseNode(n) => write!(f, "pause {n}"),
            Control::ResumeNode(n) => write!(f, "resume {n}"),
            Control::StarveNode(n) => write!(f, "starve {n}"),
            Control::UnstarveNode(n) => write!(f, "unstarve {n}"),
            Control::RestartEmpty(n) => write!(f, "restart-empty {n}"),
            Control::Restart(n) => write!(f, "restart {n}"),
            Control::CutReplication => f.write_str("cut-replication"),
            Control::Failover => f.write_str("failover"),
            Control::ClockJump { ahead, nodes } => {
                write!(f, "clock-jump {ahead} on {}", nodes.join(","))
            }
            Control::ClockReal => f.write_str("clock-real"),
            Control::Stall {
                leader: false,
                length,
            } => write!(f, "stall-service {length}"),
            Control::Stall {
                leader: true,
                length,
            } => write!(f, "stall-leader {length}"),
        }
    }
}

/// An expectation as the scenario file writes it (after `expect: `).
impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Result(r) => f.write_str(r.as_str()),
            Expect::Acquired => f.write_str("acquired"),
            Expect::LockHeld => f.write_str("lock-held"),
            Expect::Token { op, other } => {
                let op = match op {
                    Cmp::Gt => ">",
                    Cmp::Ge => ">=",
                    Cmp::Lt => "<",
                    Cmp::Eq => "==",
                };
                write!(f, "token {op} {other}.token")
            }
            Expect::Anomaly(k) => f.write_str(k.as_str()),
        }
    }
}

/// An expectation on a step's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    Result(results::OpResult),
    /// An acquire that took the lock (`ok`).
    Acquired,
    /// The step could not take the lock because someone holds it.
    LockHeld,
    /// `token > W.token` (or `>=`, `<`, `==`).
    Token {
        op: Cmp,
        other: String,
    },
    /// Some anomaly of this kind is in the final verdict.
    Anomaly(results::AnomalyKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Gt,
    Ge,
    Lt,
    Eq,
}

impl Cmp {
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Eq => a == b,
        }
    }
}

/// One validated step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Worker {
        worker: String,
        action: Action,
        expect: Option<Expect>,
        line: u32,
    },
    Control {
        control: Control,
        expect: Option<Expect>,
        line: u32,
    },
}

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub providers: Vec<String>,
    pub recipe: Option<String>,
    /// A shipped client adapter the actors use (the library the incident happened with).
    pub client: Option<String>,
    /// Pins of its library's dependencies, as a test file's `with` (`redis==5.0.8`).
    pub with: Vec<Pin>,
    pub resource: String,
    pub ttl: Dur,
    pub workers: Vec<String>,
    pub steps: Vec<Step>,
    /// Anomalies the final check must report (e.g. the stuck-lock scenario).
    pub expect_anomalies: Vec<results::AnomalyKind>,
    /// `recovery_slack` of the run's check (stuck-lock's patience beyond the ttl).
    pub recovery_slack: Option<Dur>,
    /// How long one acquire waits for a held lock before it fails (default: the ttl).
    pub acquire_timeout: Option<Dur>,
    /// Where the workers renew: `background` (default) or `inline` (only before a write).
    pub renewal: Option<String>,
    /// The lock client's own settings, as a test file writes them (a scenario made from a run
    /// keeps the run's, so the actors' client behaves as the run's workers did).
    pub client_options: Option<serde_json::Value>,
    pub renew_interval: Option<Dur>,
    pub session_timeout: Option<Dur>,
    pub op_timeout: Option<Dur>,
    /// The application the actors model (`app:` as in a test file): whether a worker asks its
    /// library before each write and keeps its client after a library error.
    pub app: Option<String>,
    /// The command whose next reply a `cut-*-reply` step strikes (`cut_reply_to:` as in a test
    /// file), rather than whatever reply comes next.
    pub cut_reply_to: Option<String>,
    /// Bugs planted in the memory provider (`memory_bugs:` as in a test file), for a scenario
    /// replayed on the in-process site.
    pub memory_bugs: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    providers: Vec<String>,
    provider: Option<String>,
    recipe: Option<String>,
    client: Option<String>,
    #[serde(default)]
    with: Vec<Pin>,
    #[serde(default = "default_resource")]
    resource: String,
    ttl: Option<Dur>,
    workers: Vec<String>,
    steps: Vec<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    expect_anomalies: Vec<String>,
    recovery_slack: Option<Dur>,
    acquire_timeout: Option<Dur>,
    renewal: Option<String>,
    client_options: Option<serde_json::Value>,
    renew_interval: Option<Dur>,
    session_timeout: Option<Dur>,
    op_timeout: Option<Dur>,
    app: Option<String>,
    cut_reply_to: Option<String>,
    #[serde(default)]
    memory_bugs: Vec<String>,
}

fn default_resource() -> String {
    "strict".into()
}

/// A scenario that cannot run, with the line it came from.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {message}")]
pub struct ScenarioError {
    pub line: u32,
    pub message: String,
}

fn at(line: u32, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        line,
        message: message.into(),
    }
}

/// Parses and validates a scenario file's text.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = serde_saphyr::from_str(text).map_err(|e| {
        // serde-saphyr's message carries its own line/column; keep it whole.
        at(0, e.to_string())
    })?;
    let mut providers = raw.providers;
    if let Some(p) = raw.provider {
        providers.push(p);
    }
    if let Some(client) = &raw.client {
        if raw.recipe.is_some() {
            return Err(at(
                1,
                "recipe and client each name the actors' lock client: keep one",
            ));
        }
        // `name@version`: the release is the plan's business (validated with it).
        let name = client.split_once('@').map_or(client.as_str(), |(n, _)| n);
        let adapter = crate::config::clients::shipped_adapter(name).ok_or_else(|| {
            at(
                1,
                format!(
                    "unknown client {client:?}; use one of {}",
                    crate::config::clients::shipped_names()
                ),
            )
        })?;
        let own = adapter.provider.as_str();
        if let Some(other) = providers.iter().find(|p| p.as_str() != own) {
            return Err(at(
                1,
                format!("client {client} runs on provider {own}, not {other}: drop the providers"),
            ));
        }
        providers = vec![own.to_string()];
    } else if !raw.with.is_empty() {
        return Err(at(
            1,
            "with pins dependencies of the actors' client library: name it (client: \
             python-redis-lock) or drop with",
        ));
    }
    if providers.is_empty() {
        return Err(at(1, "the scenario names no provider: add `provider: etcd` or `providers: [etcd, zookeeper]`"));
    }
    if raw.workers.is_empty() {
        return Err(at(
            1,
            "the scenario names no workers: add `workers: [A, B]`",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for w in &raw.workers {
        let ok = !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok || matches!(w.as_str(), "wait" | "nemesis" | "expect") {
            return Err(at(1, format!("worker name {w:?}: use letters, digits, - and _ (and not wait, nemesis, expect)")));
        }
        if !seen.insert(w.to_ascii_lowercase()) {
            return Err(at(
                1,
                format!("worker {w:?} is named twice (names are compared ignoring case)"),
            ));
        }
    }
    let expect_anomalies = raw
        .expect_anomalies
        .iter()
        .map(|k| {
            results::AnomalyKind::parse(k)
                .ok_or_else(|| at(1, format!("unknown anomaly kind {k:?} in expect_anomalies")))
        })
        .collect::<Result<_, _>>()?;

    let mut acquired: Vec<&str> = Vec::new();
    let mut steps = Vec::new();
    for spanned in &raw.steps {
        let line = spanned.referenced.line() as u32;
        let mut map = spanned.value.clone();
        let expect = match map.remove("expect") {
            Some(e) => Some(parse_expect(&e, &raw.workers, line)?),
            None => None,
        };
        if map.len() != 1 {
            return Err(at(line, "a step is one `<worker>: <action>`, `wait: ...` or `nemesis: ...`, optionally with `expect:`"));
        }
        let Some((who, what)) = map.into_iter().next() else {
            return Err(at(line, "empty step"));
        };
        if matches!(who.as_str(), "wait" | "nemesis")
            && expect
                .as_ref()
                .is_some_and(|e| !matches!(e, Expect::Anomaly(_)))
        {
            return Err(at(line, format!("a `{who}:` step has no outcome to expect; only an anomaly kind (e.g. `expect: stuck-lock`) may follow it")));
        }
        let step = match who.as_str() {
            "wait" => Step::Control {
                control: parse_wait(&what, &raw.workers, line)?,
                expect,
                line,
            },
            "nemesis" => Step::Control {
                control: parse_nemesis(&what, line)?,
                expect,
                line,
            },
            worker => {
                if !raw.workers.iter().any(|w| w == worker) {
                    return Err(at(
                        line,
                        format!(
                            "unknown worker {worker:?}; the scenario's workers are {}",
                            raw.workers.join(", ")
                        ),
                    ));
                }
                let action = parse_action(&what, line)?;
                if matches!(action, Action::PauseWaiter(_))
                    && !acquired.iter().any(|w| *w != worker)
                {
                    return Err(at(line, format!("worker {worker} cannot be a waiter here: no other worker acquired before this step (a waiter waits for a lock another worker holds)")));
                }
                match action.operation() {
                    Action::Acquire
                    | Action::PauseAcquiring(_)
                    | Action::KillAcquiring(_)
                    | Action::CutAcquireReply(_)
                    | Action::PauseWaiter(_) => acquired.push(
                        raw.workers
                            .iter()
                            .find(|w| *w == worker)
                            .map(|s| s.as_str())
                            .unwrap_or_default(),
                    ),
                    Action::Write(_)
                    | Action::Release
                    | Action::PauseReleasing(_)
                    | Action::IsolateReleasing(_)
                    | Action::CutReleaseReply(_)
                        if !acquired.contains(&worker) =>
                    {
                        return Err(at(
                            line,
                            format!("worker {worker} cannot {what:?} before its first acquire"),
                        ));
                    }
                    _ => {}
                }
                if let (Some(Expect::Token { other, .. }), _) = (&expect, &action) {
                    if !acquired.contains(&other.as_str()) {
                        return Err(at(line, format!("the expectation compares with {other}.token but {other} has not acquired yet")));
                    }
                }
                Step::Worker {
                    worker: worker.to_string(),
                    action,
                    expect,
                    line,
                }
            }
        };
        steps.push(step);
    }
    Ok(Scenario {
        name: raw.name,
        providers,
        recipe: raw.recipe,
        client: raw.client,
        with: raw.with,
        resource: raw.resource,
        ttl: raw.ttl.unwrap_or(Dur::secs(2)),
        workers: raw.workers,
        steps,
        expect_anomalies,
        recovery_slack: raw.recovery_slack,
        acquire_timeout: raw.acquire_timeout,
        renewal: raw.renewal,
        client_options: raw.client_options,
        renew_interval: raw.renew_interval,
        session_timeout: raw.session_timeout,
        op_timeout: raw.op_timeout,
        app: raw.app,
        cut_reply_to: raw.cut_reply_to,
        memory_bugs: raw.memory_bugs,
    })
}

#[cfg(test)]
mod tests;
