//! In-memory stand-ins for the harness: a [`FakeControl`] that records every call and keeps the
//! state a real cluster would be in (which targets are stopped or dead, which rules exist), and a
//! [`StaticTopology`] whose holder and leader a test sets. The executor's whole behaviour is
//! specified against these in milliseconds; the container tests prove the same against Docker.

use crate::clock::{ClockSetting, LinkShaping};
use crate::control::{ControlError, InFlight, Moments, NodeControl, Signal, Topology};
use crate::grudge::Grudge;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// One call made to the fake, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Signal(String, Signal),
    Restart(String),
    Partition(Grudge),
    PartitionInbound(Grudge),
    HealNetwork,
    /// The target and its clock setting, as text (`ahead 10s`, `fast x3`, `real`).
    SetClock(String, String),
    /// The target and its links' shaping (`None`: healed): delay, jitter, and the loss as
    /// text, followed by ` replies-only` when only the replies are shaped.
    ShapeLinks(String, Option<(u64, u64, String)>),
    /// The target and whether its work is hung (`false`: resumed).
    HangWork(String, bool),
    /// A killed target's data emptied.
    EmptyData(String),
    /// The target and its CPU limit, as text (`0.05`; `None`: lifted).
    Throttle(String, Option<String>),
}

#[derive(Debug, Default)]
struct World {
    calls: Vec<Call>,
    stopped: BTreeSet<String>,
    dead: BTreeSet<String>,
    grudge: Grudge,
    /// Whether the grudge in force is one-way.
    inbound_only: bool,
    clocks: BTreeMap<String, ClockSetting>,
    shaped: BTreeSet<String>,
    hung: BTreeSet<String>,
    throttled: BTreeSet<String>,
    failing: BTreeSet<String>,
    /// What [`NodeControl::cut_spent`] answers ([`FakeControl::cut_answer`]).
    cut_spent: Option<bool>,
}

/// A [`NodeControl`] over an imaginary cluster.
#[derive(Debug, Default)]
pub struct FakeControl {
    world: Mutex<World>,
}

impl FakeControl {
    pub fn new() -> Self {
        Self::default()
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What a question about a cut is answered from now on: spent on a reply, or not.
    pub fn cut_answer(&self, spent: bool) {
        self.world().cut_spent = Some(spent);
    }

    /// Makes every action on `target` fail (a container that vanished).
    pub fn fail_on(&self, target: &str) {
        self.world().failing.insert(target.to_string());
    }

    pub fn calls(&self) -> Vec<Call> {
        self.world().calls.clone()
    }

    /// Targets currently stopped (SIGSTOP without SIGCONT).
    pub fn stopped(&self) -> BTreeSet<String> {
        self.world().stopped.clone()
    }

    /// Targets killed and not restarted.
    pub fn dead(&self) -> BTreeSet<String> {
        self.world().dead.clone()
    }

    /// The partition in force.
    pub fn grudge(&self) -> Grudge {
        self.world().grudge.clone()
    }

    fn install(&self, grudge: &Grudge, inbound_only: bool) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(if inbound_only {
            Call::PartitionInbound(grudge.clone())
        } else {
            Call::Partition(grudge.clone())
        });
        if let Some(bad) = grudge.nodes().find(|n| w.failing.contains(*n)) {
            return Err(ControlError::new(bad, "partition", "no such container"));
        }
        w.grudge = grudge.clone();
        w.inbound_only = inbound_only;
        Ok(())
    }

    /// Whether the partition in force cuts one direction only.
    pub fn inbound_only(&self) -> bool {
        self.world().inbound_only
    }

    /// The targets whose links are shaped now.
    pub fn shaped(&self) -> BTreeSet<String> {
        self.world().shaped.clone()
    }

    /// The targets whose CPU is limited now.
    pub fn throttled(&self) -> BTreeSet<String> {
        self.world().throttled.clone()
    }

    /// The workers whose work is hung now.
    pub fn hung(&self) -> BTreeSet<String> {
        self.world().hung.clone()
    }

    /// The targets whose clocks are not real, with their setting.
    pub fn clocks(&self) -> BTreeMap<String, ClockSetting> {
        self.world().clocks.clone()
    }
}

impl NodeControl for FakeControl {
    async fn signal(&self, target: &str, signal: Signal) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(Call::Signal(target.into(), signal));
        if w.failing.contains(target) {
            return Err(ControlError::new(target, "signal", "no such container"));
        }
        match signal {
            Signal::Stop => {
                w.stopped.insert(target.into());
            }
            Signal::Cont => {
                w.stopped.remove(target);
            }
            Signal::Kill => {
                w.stopped.remove(target);
                w.dead.insert(target.into());
            }
        }
        Ok(())
    }

    async fn restart(&self, target: &str) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(Call::Restart(target.into()));
        if w.failing.contains(target) {
            return Err(ControlError::new(target, "restart", "no such container"));
        }
        w.dead.remove(target);
        Ok(())
    }

    async fn partition(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.install(grudge, false)
    }

    async fn partition_inbound(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.install(grudge, true)
    }

    async fn heal_network(&self) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(Call::HealNetwork);
        w.grudge = Grudge::none();
        w.inbound_only = false;
        Ok(())
    }

    async fn cut_spent(&self, _target: &str) -> Result<Option<bool>, ControlError> {
        Ok(self.world().cut_spent)
    }

    async fn shape_links(
        &self,
        target: &str,
        shaping: Option<LinkShaping>,
    ) -> Result<(), ControlError> {
        let mut w = self.world();
        let text = shaping.map(|s| {
            let only = if s.replies_only { " replies-only" } else { "" };
            (s.delay_ms, s.jitter_ms, format!("{}{only}", s.loss))
        });
        w.calls.push(Call::ShapeLinks(target.into(), text));
        match shaping {
            Some(_) => w.shaped.insert(target.into()),
            None => w.shaped.remove(target),
        };
        Ok(())
    }

    async fn set_clock(&self, target: &str, setting: ClockSetting) -> Result<(), ControlError> {
        let mut w = self.world();
        let text = match setting {
            ClockSetting::Real => "real".to_string(),
            ClockSetting::Ahead { secs } => format!("ahead {secs}s"),
            ClockSetting::Fast { factor } => format!("fast x{factor}"),
        };
        w.calls.push(Call::SetClock(target.into(), text));
        if w.failing.contains(target) {
            return Err(ControlError::new(target, "set clock", "no such container"));
        }
        match setting {
            ClockSetting::Real => w.clocks.remove(target),
            s => w.clocks.insert(target.into(), s),
        };
        Ok(())
    }

    async fn empty_data(&self, target: &str) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(Call::EmptyData(target.into()));
        if !w.dead.contains(target) {
            return Err(ControlError::new(
                target,
                "empty the data of",
                "it is running",
            ));
        }
        Ok(())
    }

    async fn throttle(&self, target: &str, cpus: Option<f64>) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls
            .push(Call::Throttle(target.into(), cpus.map(|c| c.to_string())));
        if w.failing.contains(target) {
            return Err(ControlError::new(target, "throttle", "no such container"));
        }
        match cpus {
            Some(_) => w.throttled.insert(target.into()),
            None => w.throttled.remove(target),
        };
        Ok(())
    }

    async fn hang_work(&self, target: &str, hung: bool) -> Result<(), ControlError> {
        let mut w = self.world();
        w.calls.push(Call::HangWork(target.into(), hung));
        if w.failing.contains(target) {
            return Err(ControlError::new(
                target,
                "hang the work of",
                "no such worker",
            ));
        }
        match hung {
            true => w.hung.insert(target.into()),
            false => w.hung.remove(target),
        };
        Ok(())
    }
}

/// A [`Topology`] with fixed members and a settable holder and leader.
#[derive(Debug, Default)]
pub struct StaticTopology {
    pub workers: Vec<String>,
    pub nodes: Vec<String>,
    pub resource: Option<String>,
    pub holder: Mutex<Option<String>>,
    pub leader: Mutex<Option<String>>,
    /// Acquires in flight (the in-flight faults' targets).
    pub acquiring: Mutex<Vec<InFlight>>,
    /// Releases in flight.
    pub releasing: Mutex<Vec<InFlight>>,
}

impl StaticTopology {
    /// `workers` named worker-1.., `nodes` named n1.., a resource, worker-1 holding, n1 leading.
    pub fn new(workers: usize, nodes: usize) -> Self {
        Self {
            workers: (1..=workers).map(|i| format!("worker-{i}")).collect(),
            nodes: (1..=nodes).map(|i| format!("n{i}")).collect(),
            resource: Some("resource".into()),
            holder: Mutex::new(Some("worker-1".into())),
            leader: Mutex::new(Some("n1".into())),
            acquiring: Mutex::new(Vec::new()),
            releasing: Mutex::new(Vec::new()),
        }
    }
}

impl Topology for StaticTopology {
    fn workers(&self) -> Vec<String> {
        self.workers.clone()
    }
    fn nodes(&self) -> Vec<String> {
        self.nodes.clone()
    }
    fn resource(&self) -> Option<String> {
        self.resource.clone()
    }
    async fn moments(&self) -> Moments {
        let read = |m: &Mutex<Vec<InFlight>>| m.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let holder = self
            .holder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Moments {
            holding: holder.iter().cloned().collect(),
            holder,
            acquiring: read(&self.acquiring),
            releasing: read(&self.releasing),
        }
    }
    async fn leader(&self) -> Option<String> {
        self.leader
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
