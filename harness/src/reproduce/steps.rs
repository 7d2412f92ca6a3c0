//! The timeline as scenario steps, in its order, with the waits that matter and the
//! expectations that say the anomaly is back:
//! - an actor granted while an earlier actor still held (granted, never told `released`) waits
//!   first for that holder's lease to be gone, asked of the provider (`wait: lease-expired X`):
//!   in the run the service had let it go, which is what the next grant needs;
//! - a write is expected to get the resource's answer in the run, a release the client's;
//! - an acquire expects the token relation the run showed with the previous token holder
//!   (`token > A.token`, `==`, `<`), or `acquired`;
//! - an actor paused in the run is resumed before its next operation (the resume may be
//!   recorded a moment after the operation it let through);
//! - a fault with a size (a stall of the service, replies held back, a client clock moved)
//!   becomes its step with the run's size; held-back replies end with `heal`, moved client
//!   clocks with `nemesis: clock-real` once none is moved any more;
//! - a release struck in flight (`pause-releasing`, `isolate-releasing`) is that fault's step in
//!   place of the release, sent when the run's fault came; the release's completion adds no
//!   step of its own, its resume or heal comes where the run's stop line was;
//! - a stuck lock gets one more worker, already waiting when the holder's fault comes (`begin
//!   acquire`) and trying again past ttl + recovery slack, as the run's other workers did.

use super::actors::{self, Actor};
use super::timeline::{Arg, Entry, Happened};
use super::Stored;
use crate::replay::scenario::{Action, Cmp, Control, Expect, Step};
use results::fault::FaultKind;
use results::{Anomaly, AnomalyKind, Dur};
use std::collections::BTreeSet;
use std::time::Duration;

/// One step of the scenario as it will be written (by its `Display`, as the file reads it).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub step: Step,
    /// Where in the run it comes from (`index 52, 5.388s`), or why it was added.
    pub from: String,
}

impl Line {
    /// A worker's name, `wait` or `nemesis`.
    pub fn who(&self) -> &str {
        match &self.step {
            Step::Worker { worker, .. } => worker,
            Step::Control { control, .. } => control.who(),
        }
    }

    /// What the step does, as the file writes it after `who: `.
    pub fn action(&self) -> String {
        match &self.step {
            Step::Worker { action, .. } => action.to_string(),
            Step::Control { control, .. } => control.to_string(),
        }
    }

    pub fn expect(&self) -> Option<&Expect> {
        match &self.step {
            Step::Worker { expect, .. } | Step::Control { expect, .. } => expect.as_ref(),
        }
    }
}

/// A worker's step.
fn act(who: &str, action: Action, expect: Option<Expect>, from: String) -> Line {
    Line {
        step: Step::Worker {
            worker: who.to_string(),
            action,
            expect,
            line: 0,
        },
        from,
    }
}

/// A `wait:` or `nemesis:` step.
fn control(control: Control, from: String) -> Line {
    Line {
        step: Step::Control {
            control,
            expect: None,
            line: 0,
        },
        from,
    }
}

/// What the actors' state is while the steps are made.
#[derive(Default)]
struct State {
    granted: BTreeSet<usize>,
    /// Told `released`, or gone as the provider sees it (a wait said so).
    let_go: BTreeSet<usize>,
    paused: BTreeSet<usize>,
    isolated: BTreeSet<usize>,
    /// Whose links are shaped (`slow-reply`, a `cut-*-reply`), whose client clock is moved,
    /// whose CPU is starved.
    shaped: BTreeSet<usize>,
    clocked: BTreeSet<usize>,
    starved: BTreeSet<usize>,
    /// Whose release was sent by a fault's step (`pause-releasing`), answered later.
    releasing: BTreeSet<usize>,
    killed: BTreeSet<usize>,
    paused_nodes: Vec<String>,
    /// Nodes `starve` or `restart-empty` left faulted, until their stop line.
    faulted_nodes: BTreeSet<String>,
    /// Per key, the highest token of the actors' accepted writes so far.
    highest: std::collections::BTreeMap<String, u64>,
}

impl State {
    /// The resource's answer in the run, when the actors' own writes explain it: an accepted
    /// write stays accepted with fewer writes before it, but a rejection made by another
    /// worker's newer token would not happen in the scenario.
    fn expected_answer(&self, result: &str, key: &str, token: Option<u64>) -> Option<Expect> {
        let explained = match (result, token) {
            ("accepted", _) => true,
            ("rejected-stale-fence", Some(t)) => self.highest.get(key).is_some_and(|h| *h > t),
            _ => false,
        };
        let answer = serde_json::from_value(serde_json::Value::from(result)).ok()?;
        explained.then_some(Expect::Result(answer))
    }
}

/// The steps of the scenario.
pub fn steps(stored: &Stored, anomaly: &Anomaly, cast: &[Actor], events: &[Entry]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut st = State::default();
    let stuck = anomaly.kind == AnomalyKind::StuckLock;
    let ttl = stored.test.ttl.unwrap_or(Dur::secs(2)).get();
    for (n, e) in events.iter().enumerate() {
        let from = format!("{}, {:.3}s", e.place, e.time as f64 / 1e9);
        match &e.what {
            Happened::Granted { actor } => {
                for x in 0..cast.len() {
                    if st.granted.contains(&x) && !st.let_go.contains(&x) {
                        out.push(control(
                            Control::LeaseExpired(cast[x].name.clone()),
                            format!(
                                "{} was granted while {} still held",
                                cast[*actor].name, cast[x].name
                            ),
                        ));
                        st.let_go.insert(x);
                    }
                }
                out.push(act(
                    &cast[*actor].name,
                    Action::Acquire,
                    Some(acquire_expect(cast, &st.granted, *actor)),
                    from,
                ));
                // The stuck lock's waiter is already waiting when the holder's fault comes,
                // as the run's other workers were.
                if stuck && st.granted.is_empty() {
                    out.push(act(
                        &actors::name(cast.len()),
                        Action::Begin(Box::new(Action::Acquire)),
                        None,
                        "in the run the other workers were already waiting for the lock".into(),
                    ));
                    // As long as in the run (at most 2 x ttl): a library's waiter looks at the
                    // holder when it starts, before the fault (portalocker reaps a holder it
                    // finds unresponsive then).
                    let gap = events.get(n + 1).map_or(0, |next| next.time - e.time);
                    let gap = Duration::from_nanos(gap).min(ttl * 2);
                    let gap = Duration::from_millis(gap.as_millis() as u64);
                    if !gap.is_zero() {
                        out.push(control(
                            Control::Sleep(Dur(gap)),
                            "the time the run's waiters waited before the next step".into(),
                        ));
                    }
                }
                st.granted.insert(*actor);
            }
            Happened::Wrote {
                actor,
                value,
                result,
                key,
                token,
            } => {
                if st.killed.contains(actor) {
                    continue;
                }
                resume_first(&mut out, &mut st, cast, *actor);
                let expect = st.expected_answer(result, key, *token);
                let from = match &expect {
                    Some(_) => from,
                    None => format!("{from}; the run's {result} came from other workers' writes"),
                };
                out.push(act(
                    &cast[*actor].name,
                    Action::Write(value.clone()),
                    expect,
                    from,
                ));
                if result == "accepted" {
                    if let Some(t) = token {
                        let h = st.highest.entry(key.clone()).or_default();
                        *h = (*h).max(*t);
                    }
                }
            }
            Happened::Released { actor, answer } => {
                if st.killed.contains(actor) {
                    continue;
                }
                if st.releasing.remove(actor) {
                    // Sent by the fault's step; its answer is the pending operation's.
                    if *answer == Some(results::OpResult::Released) {
                        st.let_go.insert(*actor);
                    }
                    continue;
                }
                resume_first(&mut out, &mut st, cast, *actor);
                out.push(act(
                    &cast[*actor].name,
                    Action::Release,
                    answer.map(Expect::Result),
                    from,
                ));
                if *answer == Some(results::OpResult::Released) {
                    st.let_go.insert(*actor);
                }
            }
            Happened::WorkerFault {
                actor,
                fault,
                start,
                arg,
            } => {
                let struck = Struck {
                    actor: *actor,
                    fault: *fault,
                    start: *start,
                    arg: *arg,
                };
                worker_fault(&mut out, &mut st, cast, struck, from)
            }
            Happened::ServiceFault {
                fault: fault @ (FaultKind::StallService | FaultKind::StallLeader),
                start,
                arg,
                ..
            } => {
                // One step: the stall thaws itself after its length; its stop line is not one.
                if let (true, Some(Arg::Length(length))) = (*start, arg) {
                    let stall = Control::Stall {
                        leader: *fault == FaultKind::StallLeader,
                        length: *length,
                    };
                    out.push(control(stall, from));
                }
            }
            Happened::ServiceFault {
                fault:
                    fault @ (FaultKind::StarveNode
                    | FaultKind::RestartEmptyNode
                    | FaultKind::RestartEmptyLeader),
                nodes,
                start,
                ..
            } => {
                let starve = *fault == FaultKind::StarveNode;
                for node in nodes {
                    let n = node.clone();
                    let step = match (*start, starve) {
                        (true, _) if !st.faulted_nodes.insert(n.clone()) => continue,
                        (false, _) if !st.faulted_nodes.remove(node) => continue,
                        (true, true) => Control::StarveNode(n),
                        (false, true) => Control::UnstarveNode(n),
                        (true, false) => Control::RestartEmpty(n),
                        (false, false) => Control::Restart(n),
                    };
                    out.push(control(step, from.clone()));
                }
            }
            Happened::ServiceFault { nodes, start, .. } => {
                for node in nodes {
                    let paused = st.paused_nodes.contains(node);
                    if *start && !paused {
                        out.push(control(Control::PauseNode(node.clone()), from.clone()));
                        st.paused_nodes.push(node.clone());
                    } else if !*start && paused {
                        out.push(control(Control::ResumeNode(node.clone()), from.clone()));
                        st.paused_nodes.retain(|n| n != node);
                    }
                }
            }
        }
    }
    if stuck {
        out.extend(waiter(stored, cast));
    }
    out
}

/// The token relation with the latest granted actor that had a token, else `acquired`.
fn acquire_expect(cast: &[Actor], granted: &BTreeSet<usize>, actor: usize) -> Expect {
    let previous = granted
        .iter()
        .filter(|x| cast[**x].token.is_some())
        .max_by_key(|x| cast[**x].granted);
    match (cast[actor].token, previous) {
        (Some(t), Some(&x)) => {
            let theirs = cast[x].token.unwrap_or_default();
            let op = match t.cmp(&theirs) {
                std::cmp::Ordering::Greater => Cmp::Gt,
                std::cmp::Ordering::Equal => Cmp::Eq,
                std::cmp::Ordering::Less => Cmp::Lt,
            };
            Expect::Token {
                op,
                other: cast[x].name.clone(),
            }
        }
        _ => Expect::Acquired,
    }
}

/// A paused actor is resumed before it acts (its operation was let through by the resume).
fn resume_first(out: &mut Vec<Line>, st: &mut State, cast: &[Actor], actor: usize) {
    if st.paused.remove(&actor) {
        out.push(act(
            &cast[actor].name,
            Action::Resume,
            None,
            "its next operation came after the resume".into(),
        ));
    }
}

/// A fault on an actor's worker, as the timeline has it.
struct Struck {
    actor: usize,
    fault: FaultKind,
    start: bool,
    arg: Option<Arg>,
}

fn worker_fault(out: &mut Vec<Line>, st: &mut State, cast: &[Actor], s: Struck, from: String) {
    let Struck {
        actor,
        fault,
        start,
        arg,
    } = s;
    if st.killed.contains(&actor) {
        return;
    }
    let name = &cast[actor].name;
    let after = match arg {
        Some(Arg::After(d)) => d,
        _ => Dur::from_millis(0),
    };
    let push =
        |out: &mut Vec<Line>, action: Action| out.push(act(name, action, None, from.clone()));
    match (fault, start) {
        (FaultKind::PauseHolder | FaultKind::PauseWorker, true) if st.paused.insert(actor) => {
            push(out, Action::Pause);
        }
        (FaultKind::PauseHolder | FaultKind::PauseWorker | FaultKind::PauseReleasing, false)
            if st.paused.remove(&actor) =>
        {
            push(out, Action::Resume);
        }
        (FaultKind::PauseReleasing, true) if st.paused.insert(actor) => {
            st.releasing.insert(actor);
            push(out, Action::PauseReleasing(after));
        }
        (FaultKind::IsolateReleasing, true) if st.isolated.insert(actor) => {
            st.releasing.insert(actor);
            push(out, Action::IsolateReleasing(after));
        }
        (FaultKind::KillHolder | FaultKind::KillWorker, true) => {
            st.killed.insert(actor);
            st.paused.remove(&actor);
            push(out, Action::Kill);
        }
        (FaultKind::IsolateHolder | FaultKind::IsolateWorker, true)
            if st.isolated.insert(actor) =>
        {
            push(out, Action::Isolate);
        }
        (
            FaultKind::IsolateHolder | FaultKind::IsolateWorker | FaultKind::IsolateReleasing,
            false,
        ) if st.isolated.remove(&actor) => {
            push(out, Action::Heal);
        }
        (FaultKind::SlowReply, true) if st.shaped.insert(actor) => {
            let length = match arg {
                Some(Arg::Length(d)) => Some(d),
                _ => None,
            };
            push(out, Action::SlowReply(length));
        }
        (FaultKind::CutRenewReply, true) if st.shaped.insert(actor) => {
            push(out, Action::CutRenewReply);
        }
        (FaultKind::CutReleaseReply, true) if st.shaped.insert(actor) => {
            // The step sends the release; the run's release is its pending answer.
            st.releasing.insert(actor);
            push(out, Action::CutReleaseReply(after));
        }
        (FaultKind::SlowReply | FaultKind::CutRenewReply | FaultKind::CutReleaseReply, false)
            if st.shaped.remove(&actor) =>
        {
            push(out, Action::Heal);
        }
        (FaultKind::StarveWorker, true) if st.starved.insert(actor) => {
            push(out, Action::Starve);
        }
        (FaultKind::StarveWorker, false) if st.starved.remove(&actor) => {
            push(out, Action::Heal);
        }
        (FaultKind::ClientClockJump | FaultKind::ClientClockSkew, true) => {
            if let Some(Arg::Clock(clock)) = arg {
                st.clocked.insert(actor);
                push(out, Action::ClientClock(clock));
            }
        }
        (FaultKind::ClientClockJump | FaultKind::ClientClockSkew, false)
            if st.clocked.remove(&actor) && st.clocked.is_empty() =>
        {
            // clock-real puts every clock back: only once no actor's clock is moved any more.
            out.push(control(Control::ClockReal, from));
        }
        _ => {}
    }
}

/// The stuck lock's waiter goes on trying past ttl + recovery slack: one acquire per acquire
/// timeout (the run's), one more than the window needs.
fn waiter(stored: &Stored, cast: &[Actor]) -> Vec<Line> {
    let name = actors::name(cast.len());
    let t = &stored.test;
    let ttl = t.ttl.unwrap_or(Dur::secs(2)).get();
    let slack = t
        .recovery_slack
        .unwrap_or(results::store::DEFAULT_RECOVERY_SLACK)
        .get();
    let each = t.acquire_timeout.map_or(ttl, |d| d.get()).max(ttl / 4);
    let tries = (ttl + slack).as_nanos().div_ceil(each.as_nanos().max(1)) as usize + 1;
    (0..tries)
        .map(|i| {
            act(
                &name,
                Action::Acquire,
                None,
                format!(
                    "try {} of {tries}: in the run the other workers kept trying past ttl + slack",
                    i + 1
                ),
            )
        })
        .collect()
}

/// The scenario's workers: the cast, and the stuck lock's waiter.
pub fn workers(cast: &[Actor], lines: &[Line]) -> Vec<String> {
    let mut names: Vec<String> = cast.iter().map(|a| a.name.clone()).collect();
    for l in lines {
        if let Step::Worker { worker, .. } = &l.step {
            if !names.contains(worker) {
                names.push(worker.clone());
            }
        }
    }
    names
}
