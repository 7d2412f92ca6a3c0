//! Runs a plan: starts and stops each fault at its time through [`NodeControl`], records every
//! start and stop as a `nemesis` event in the history, and heals everything when it ends, however
//! it ends. What is paused, killed or partitioned is tracked *before* the action is taken, so a
//! heal after an error or a cancellation never misses a target.

use crate::clock::{ClockFaults, ClockSetting};
use crate::control::{ControlError, NodeControl, Signal, Topology};
use crate::fault::{Aim, Family, FaultKind, Mechanism, Shaping};
use crate::grudge::Grudge;
use crate::plan::{Plan, Step};
use crate::targets::{resolve, Resolved};
use results::jsonl::{HistoryWriter, JsonlError};
use results::{EventFault, NemesisEvent, RunClock};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

mod heal;
mod holder;
mod in_flight;
mod one_step;

pub use one_step::{OneStep, Struck};

/// How often a holder fault that found no holder asks again.
const HOLDER_POLL: Duration = Duration::from_millis(20);

/// Why the nemesis stopped early. The heal has been attempted regardless.
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    #[error("nemesis: {0}")]
    Control(#[from] ControlError),
    #[error("nemesis: recording to the history: {0}")]
    History(#[from] JsonlError),
}

/// What a run of the plan did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Faults that took effect.
    pub started: usize,
    /// Faults that had no target at their time (no holder, no leader); recorded with an error.
    pub skipped: usize,
    /// The run was cancelled before the plan's end.
    pub cancelled: bool,
}

/// What a started fault did, so that its stop undoes exactly that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applied {
    Paused,
    Killed,
    Partitioned,
    Clocked,
    Shaped,
    Hung,
    Starved,
}

/// What a fault's action did: applied how, to which targets (the control's names), and what
/// its start line records of it.
type Acted = (Applied, Vec<String>, Vec<(&'static str, serde_json::Value)>);

#[derive(Debug, Clone)]
struct Active {
    applied: Applied,
    targets: Vec<String>,
    /// The start's event, which the stop repeats.
    event: NemesisEvent,
    /// It armed a cut of the next reply: its stop asks whether a reply spent it.
    cut: bool,
}

#[derive(Debug, Default)]
struct State {
    paused: BTreeSet<String>,
    killed: BTreeSet<String>,
    /// Nodes whose clock is not the real one.
    clocked: BTreeSet<String>,
    /// Workers whose links are shaped.
    shaped: BTreeSet<String>,
    /// Workers whose work is hung.
    hung: BTreeSet<String>,
    /// Targets whose CPU is limited.
    starved: BTreeSet<String>,
    /// The two-way cuts active, by their fault's key: the rules installed are their union.
    partitions: BTreeMap<usize, Grudge>,
    /// Targets a stop left as the fault left them (a worker a replay killed stays dead): no
    /// heal signals or restarts them.
    left: BTreeSet<String>,
    active: BTreeMap<usize, Active>,
    /// How many faults were struck one at a time ([`OneStep`]).
    struck: usize,
    summary: Summary,
}

/// The executor of one run's faults.
pub struct Nemesis<'a, C, T> {
    control: &'a C,
    topology: &'a T,
    history: &'a HistoryWriter,
    clock: RunClock,
    state: Mutex<State>,
    /// The end of the run's fault window, if the caller gave it ([`Nemesis::ending_at`]).
    end: Option<Duration>,
    /// How far clock faults move a clock ([`Nemesis::with_clock_faults`]).
    clock_faults: ClockFaults,
}

impl<'a, C: NodeControl, T: Topology> Nemesis<'a, C, T> {
    pub fn new(
        control: &'a C,
        topology: &'a T,
        history: &'a HistoryWriter,
        clock: RunClock,
    ) -> Self {
        Self {
            control,
            topology,
            history,
            clock,
            state: Mutex::new(State::default()),
            end: None,
            clock_faults: ClockFaults::for_ttl(Duration::from_secs(2)),
        }
    }

    /// How far `clock-jump` and `clock-skew` move a clock (the default is for a 2 s ttl).
    pub fn with_clock_faults(mut self, clock_faults: ClockFaults) -> Self {
        self.clock_faults = clock_faults;
        self
    }

    /// The end of the run's fault window (the time limit, counted like the plan's times): a
    /// holder fault that waited for its holder and is the plan's last step is lengthened up to
    /// it, never into the recovery time after it.
    pub fn ending_at(mut self, end: Duration) -> Self {
        self.end = Some(end);
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `plan` from now (its times count from this call) until its last fault stops or
    /// `cancel` completes, then heals everything. Returns the first error, after healing.
    pub async fn run(
        &self,
        plan: &Plan,
        cancel: impl Future<Output = ()>,
    ) -> Result<Summary, NemesisError> {
        let outcome = tokio::select! {
            r = self.drive(plan) => r,
            () = cancel => Ok(true),
        };
        let healed = self.heal_all().await;
        let cancelled = outcome?;
        healed?;
        Ok(Summary {
            cancelled,
            ..self.state().summary.clone()
        })
    }

    /// Returns false: not cancelled.
    async fn drive(&self, plan: &Plan) -> Result<bool, NemesisError> {
        let origin = tokio::time::Instant::now();
        // (time, 0 = stop before 1 = start at the same instant, step index)
        let mut agenda: Vec<(Duration, u8, usize)> = Vec::new();
        for (i, step) in plan.steps.iter().enumerate() {
            agenda.push((step.at, 1, i));
            agenda.push((step.end(), 0, i));
        }
        agenda.sort();
        // How late each holder fault that had to wait for its holder started, and each stall
        // (after its signals).
        let mut late: BTreeMap<usize, Duration> = BTreeMap::new();
        for (k, &(at, what, i)) in agenda.iter().enumerate() {
            tokio::time::sleep_until(origin + at).await;
            // The plan's next event, or after its last one, the end of the fault window.
            let next = agenda.get(k + 1).map(|n| n.0).or(self.end);
            if what == 1 {
                // A holder fault may wait for a holder, but never past the plan's next event.
                let step = &plan.steps[i];
                let mut wait_until = step.at + step.duration / 2;
                if let Some(next) = next {
                    wait_until = wait_until.min(next);
                }
                let started = self.start(i, step, origin + wait_until).await?;
                let stall = step.fault.family() == Family::Stall;
                if started && (step.fault.aim().waits() || stall) {
                    late.insert(i, origin.elapsed().saturating_sub(at));
                }
                let mut st = self.state();
                if started {
                    st.summary.started += 1;
                } else {
                    st.summary.skipped += 1;
                }
            } else {
                // A holder fault that started late keeps its planned length where the plan
                // leaves room: its stop moves by the wait, but never past the next event.
                // A stall's drawn length counts from its start line, which follows the last
                // node's SIGSTOP: signalling three nodes of a loaded machine took 100 ms and more,
                // and the whole service was frozen that much less than the length it recorded.
                let fault = plan.steps[i].fault;
                if let Some(late) = late
                    .remove(&i)
                    .filter(|l| *l > HOLDER_POLL || fault.family() == Family::Stall)
                {
                    let until = next.map_or(at + late, |n| n.min(at + late));
                    tokio::time::sleep_until(origin + until).await;
                }
                self.stop(i, None).await?;
            }
        }
        Ok(false)
    }

    /// Starts step `i`; false when it had no target (recorded, with the reason, as an error).
    async fn start(
        &self,
        i: usize,
        step: &Step,
        wait_until: tokio::time::Instant,
    ) -> Result<bool, NemesisError> {
        let (resolved, mut how) = if step.fault.is_in_flight() {
            self.resolve_in_flight(step, wait_until).await
        } else {
            (self.resolve_waiting(step, wait_until).await, Vec::new())
        };
        if step.fault.family() == Family::Stall {
            // The drawn length of a stall is what decides whether a lease survives it.
            how.push(("length_ms", (step.duration.as_millis() as u64).into()));
        }
        let (applied, targets, mut value) = match self.act(i, resolved).await? {
            Ok(acted) => acted,
            Err(why) => {
                let e = self.event(step.fault, &[], vec![]);
                let e = e.with_error(format!("skipped: {why}"));
                self.history.record(e.event(self.clock.now()))?;
                return Ok(false);
            }
        };
        value.extend(how);
        if let Some(landed) = self.landed(step.fault, &value).await {
            value.push(("landed", landed.into()));
        }
        let event = self.event(step.fault, &targets, value);
        self.activate(i, applied, targets, event)?;
        if applied == Applied::Paused && step.fault.aim() == Aim::Holder {
            return self.hold_checked(i, step, wait_until).await;
        }
        Ok(true)
    }

    /// Takes a resolved fault's action, each target tracked before it is acted on: what was
    /// applied, to whom, and what the start line records of it; `Err` with the reason when it
    /// had no target. `key` is the fault's key among the active ones.
    async fn act(
        &self,
        key: usize,
        resolved: Resolved,
    ) -> Result<Result<Acted, &'static str>, NemesisError> {
        Ok(Ok(match resolved {
            Resolved::NoTarget(why) => return Ok(Err(why)),
            Resolved::Signal(signal, targets) => {
                let applied = if signal == Signal::Kill {
                    Applied::Killed
                } else {
                    Applied::Paused
                };
                for t in &targets {
                    {
                        let mut st = self.state();
                        match applied {
                            Applied::Killed => st.killed.insert(t.clone()),
                            _ => st.paused.insert(t.clone()),
                        };
                    }
                    self.control.signal(t, signal).await?;
                }
                (applied, targets, vec![])
            }
            Resolved::Partition(grudge, targets) => {
                // No tracking needed before the rules go in: every heal flushes every rule. The
                // rules installed are the union of every two-way cut active, this one's among
                // them (a plan holds one at a time; a replay's isolations add up).
                let value = serde_json::to_value(&grudge).unwrap_or_default();
                let union = {
                    let mut st = self.state();
                    st.partitions.insert(key, grudge);
                    Grudge::union(st.partitions.values())
                };
                self.control.partition(&union).await?;
                (Applied::Partitioned, targets, vec![("grudge", value)])
            }
            Resolved::OneWay(grudge, targets) => {
                // The same grudge shape; `direction` says each node drops only what arrives.
                let value = serde_json::to_value(&grudge).unwrap_or_default();
                self.control.partition_inbound(&grudge).await?;
                let way = serde_json::Value::from("inbound");
                (
                    Applied::Partitioned,
                    targets,
                    vec![("grudge", value), ("direction", way)],
                )
            }
            Resolved::Clock(setting, targets) => {
                for t in &targets {
                    self.state().clocked.insert(t.clone());
                    self.control.set_clock(t, setting).await?;
                }
                let value = serde_json::to_value(setting).unwrap_or_default();
                (Applied::Clocked, targets, vec![("clock", value)])
            }
            Resolved::Links(shaping, targets) => {
                for t in &targets {
                    self.state().shaped.insert(t.clone());
                    self.control.shape_links(t, Some(shaping)).await?;
                }
                let value = serde_json::to_value(shaping).unwrap_or_default();
                (Applied::Shaped, targets, vec![("links", value)])
            }
            Resolved::KillEmpty(targets) => {
                for t in &targets {
                    self.state().killed.insert(t.clone());
                    self.control.signal(t, Signal::Kill).await?;
                    self.control.empty_data(t).await?;
                }
                (Applied::Killed, targets, vec![])
            }
            Resolved::Hang(targets) => {
                for t in &targets {
                    self.state().hung.insert(t.clone());
                    self.control.hang_work(t, true).await?;
                }
                (Applied::Hung, targets, vec![])
            }
            Resolved::Starve(cpus, targets) => {
                for t in &targets {
                    self.state().starved.insert(t.clone());
                    self.control.throttle(t, Some(cpus)).await?;
                }
                (Applied::Starved, targets, vec![("cpus", cpus.into())])
            }
        }))
    }

    /// An acted fault is active under `key` until its stop, and its start line is recorded.
    fn activate(
        &self,
        key: usize,
        applied: Applied,
        targets: Vec<String>,
        event: NemesisEvent,
    ) -> Result<(), NemesisError> {
        let line = event.event(self.clock.now());
        let cut = matches!(event.fault, EventFault::Kind(k)
            if k.mechanism() == Mechanism::Link(Shaping::CutReply));
        self.state().active.insert(
            key,
            Active {
                applied,
                targets,
                event,
                cut,
            },
        );
        self.history.record(line)?;
        Ok(())
    }

    /// Resolves `step`'s target. A holder fault that finds no holder (between one release and
    /// the next acquire) waits for the next one until `deadline` (half the fault's duration,
    /// or the plan's next event if that comes first) rather than being skipped: a skipped pause
    /// left whole runs without the fault they were meant to show. Its stop moves by the wait
    /// (keeping the planned length) unless another event of the plan comes first, so no other
    /// step is delayed.
    ///
    /// `clock-jump` waits for a fresh hold (a holder other than the one at the step's start),
    /// so that the jump strikes within [`HOLDER_POLL`] of an acquisition, while that holder has
    /// all its work ahead of it: Kleppmann's case of a lock that expires early under a client
    /// that has just been granted it. At the deadline it takes whatever holder there is.
    async fn resolve_waiting(&self, step: &Step, deadline: tokio::time::Instant) -> Resolved {
        let holder_fault = step.fault.aim().waits();
        if step.fault == FaultKind::ClockJump {
            let before = self.topology.moments().await.holder;
            loop {
                let now = self.topology.moments().await.holder;
                if (now.is_some() && now != before) || tokio::time::Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(HOLDER_POLL).await;
            }
        }
        loop {
            let r = resolve(self.topology, step, &self.clock_faults).await;
            if !holder_fault
                || !matches!(r, Resolved::NoTarget(_))
                || tokio::time::Instant::now() >= deadline
            {
                return r;
            }
            tokio::time::sleep(HOLDER_POLL).await;
        }
    }

    /// Stops step `i` if it is active: resumes, restarts or flushes exactly what it did.
    /// `why` it is no ordinary stop, for the stop line's error.
    async fn stop(&self, i: usize, why: Option<&str>) -> Result<(), NemesisError> {
        let Some(active) = self.state().active.get(&i).cloned() else {
            return Ok(());
        };
        let mut unspent = false;
        if active.cut {
            // Asked before the links are healed: a cut no reply spent struck nothing.
            let mut answers = Vec::new();
            for t in &active.targets {
                answers.push(self.control.cut_spent(t).await?);
            }
            unspent = !answers.is_empty() && answers.iter().all(|a| *a == Some(false));
        }
        match active.applied {
            Applied::Paused => {
                for t in &active.targets {
                    self.control.signal(t, Signal::Cont).await?;
                    self.state().paused.remove(t);
                }
            }
            Applied::Killed => {
                for t in &active.targets {
                    self.control.restart(t).await?;
                    self.state().killed.remove(t);
                }
            }
            Applied::Partitioned => {
                // The cuts still active stay; with none left, every rule goes.
                let rest = {
                    let mut st = self.state();
                    st.partitions.remove(&i);
                    (!st.partitions.is_empty()).then(|| Grudge::union(st.partitions.values()))
                };
                match rest {
                    Some(union) => self.control.partition(&union).await?,
                    None => self.control.heal_network().await?,
                }
            }
            Applied::Clocked => {
                for t in &active.targets {
                    self.control.set_clock(t, ClockSetting::Real).await?;
                    self.state().clocked.remove(t);
                }
            }
            Applied::Shaped => {
                for t in &active.targets {
                    self.control.shape_links(t, None).await?;
                    self.state().shaped.remove(t);
                }
            }
            Applied::Hung => {
                for t in &active.targets {
                    self.control.hang_work(t, false).await?;
                    self.state().hung.remove(t);
                }
            }
            Applied::Starved => {
                for t in &active.targets {
                    self.control.throttle(t, None).await?;
                    self.state().starved.remove(t);
                }
            }
        }
        self.state().active.remove(&i);
        let mut e = active.event.stopped();
        let because = why;
        let mut why = Vec::new();
        if unspent {
            why.push(results::fault::CUT_UNSPENT);
        }
        why.extend(because);
        if !why.is_empty() {
            e = e.with_error(why.join("; "));
        }
        self.history.record(e.event(self.clock.now()))?;
        Ok(())
    }

    /// A start of `fault`, before it is timed.
    fn event(
        &self,
        fault: impl Into<EventFault>,
        targets: &[String],
        extra: Vec<(&str, serde_json::Value)>,
    ) -> NemesisEvent {
        let mut e = NemesisEvent::start(fault, targets.to_vec());
        for (k, v) in extra {
            e = e.with(k, v);
        }
        e
    }
}
