//! The rows of the step table: what each step did, what was expected, whether it held. Built
//! by [`super::steps`]; printed by [`super::table`].

use super::scenario::{Action, ClientClock, Cmp, Control, Expect, Step};
use crate::config::Dur;

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
    pub(super) fn new(step: usize, s: &Step) -> Row {
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
        Action::Begin(inner) => format!("begin {}", action_text(inner)),
        Action::PauseAcquiring(after) => format!("pause-acquiring after {after}"),
        Action::PauseReleasing(after) => format!("pause-releasing after {after}"),
        Action::KillAcquiring(after) => format!("kill-acquiring after {after}"),
        Action::IsolateReleasing(after) => format!("isolate-releasing after {after}"),
        Action::PauseWaiter(after) => format!("pause-waiter after {after}"),
        Action::CutAcquireReply(after) if after.get().is_zero() => "cut-acquire-reply".into(),
        Action::CutReleaseReply(after) if after.get().is_zero() => "cut-release-reply".into(),
        Action::CutAcquireReply(after) => format!("cut-acquire-reply after {after}"),
        Action::CutReleaseReply(after) => format!("cut-release-reply after {after}"),
        Action::CutRenewReply => "cut-renew-reply".into(),
        Action::Starve => "starve".into(),
        Action::SlowReply(None) => "slow-reply".into(),
        Action::SlowReply(Some(d)) => format!("slow-reply {d}"),
        Action::ClientClock(ClientClock::Jump { millis }) => format!(
            "client-clock-jump {}{}",
            if *millis < 0 { "-" } else { "" },
            Dur::from_millis(millis.unsigned_abs())
        ),
        Action::ClientClock(ClientClock::Skew { per_mille }) => {
            format!("client-clock-skew {}x", f64::from(*per_mille) / 1000.0)
        }
    }
}

fn control_text(c: &Control) -> String {
    match c {
        Control::LeaseExpired(w) => format!("lease-expired {w}"),
        Control::Sleep(d) => format!("sleep {d}"),
        Control::Heal => "heal".into(),
        Control::PauseNode(n) => format!("pause {n}"),
        Control::ResumeNode(n) => format!("resume {n}"),
        Control::StarveNode(n) => format!("starve {n}"),
        Control::UnstarveNode(n) => format!("unstarve {n}"),
        Control::RestartEmpty(n) => format!("restart-empty {n}"),
        Control::Restart(n) => format!("restart {n}"),
        Control::CutReplication => "cut-replication".into(),
        Control::Failover => "failover".into(),
        Control::ClockJump { ahead, nodes } => format!("clock-jump {ahead} on {}", nodes.join(",")),
        Control::ClockReal => "clock-real".into(),
        Control::Stall {
            leader: false,
            length,
        } => format!("stall-service {length}"),
        Control::Stall {
            leader: true,
            length,
        } => format!("stall-leader {length}"),
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
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
                Cmp::Lt => "<",
                Cmp::Eq => "==",
            };
            format!("token {op} {other}.token")
        }
        Expect::Anomaly(k) => format!("anomaly {}", k.as_str()),
    }
}
