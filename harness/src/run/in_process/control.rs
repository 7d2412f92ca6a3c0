//! The nemesis's seams over in-process workers: [`NodeControl`] pauses a worker by closing its
//! freeze gate, kills it by ending its task and restarts it from its launch; [`Topology`] names
//! the workers and the live holder. There are no lock-service nodes, network, clocks, links or
//! containers here: validation refuses every fault that needs one (the memory provider's capabilities), and
//! the executor's final heal, which asks for them all, finds nothing to undo.

use super::workers::Workers;
use nemesis::{
    ClockSetting, ControlError, Grudge, LinkShaping, Moments, NodeControl, Signal, Topology,
};
use std::sync::{Arc, Mutex};

/// Faults on in-process workers.
pub struct InProcessControl {
    pub workers: Arc<Workers>,
}

impl InProcessControl {
    fn worker(&self, target: &str, action: &str) -> Result<usize, ControlError> {
        self.workers
            .index(target)
            .ok_or_else(|| ControlError::new(target, action, "no in-process worker of that name"))
    }
}

fn no_network(target: &str, action: &str) -> ControlError {
    ControlError::new(
        target,
        action,
        "the in-process site has no network, clocks, links or containers (validation refuses such faults)",
    )
}

impl NodeControl for InProcessControl {
    async fn signal(&self, target: &str, signal: Signal) -> Result<(), ControlError> {
        let i = self.worker(target, "signal")?;
        match signal {
            Signal::Stop => self.workers.freeze(i),
            Signal::Cont => self.workers.thaw(i),
            Signal::Kill => self.workers.kill(i),
        }
        Ok(())
    }

    async fn restart(&self, target: &str) -> Result<(), ControlError> {
        let i = self.worker(target, "restart")?;
        self.workers
            .start(i)
            .await
            .map_err(|e| ControlError::new(target, "restart", format!("{e:#}")))
    }

    async fn partition(&self, _grudge: &Grudge) -> Result<(), ControlError> {
        Err(no_network("the workers", "partition"))
    }

    async fn partition_inbound(&self, _grudge: &Grudge) -> Result<(), ControlError> {
        Err(no_network("the workers", "partition"))
    }

    async fn heal_network(&self) -> Result<(), ControlError> {
        // Nothing was ever installed.
        Ok(())
    }

    async fn shape_links(
        &self,
        target: &str,
        shaping: Option<LinkShaping>,
    ) -> Result<(), ControlError> {
        match shaping {
            None => Ok(()),
            Some(_) => Err(no_network(target, "shape links of")),
        }
    }

    async fn empty_data(&self, target: &str) -> Result<(), ControlError> {
        Err(no_network(target, "empty the data of"))
    }

    async fn throttle(&self, target: &str, cpus: Option<f64>) -> Result<(), ControlError> {
        match cpus {
            None => Ok(()),
            Some(_) => Err(no_network(target, "throttle")),
        }
    }

    async fn set_clock(&self, target: &str, setting: ClockSetting) -> Result<(), ControlError> {
        match setting {
            ClockSetting::Real => Ok(()),
            _ => Err(no_network(target, "set the clock of")),
        }
    }
}

/// The run as the nemesis sees it: workers only, and the holder and the workers in flight
/// the live view tracks.
pub struct InProcessTopology {
    pub workers: Vec<String>,
    pub moments: Arc<Mutex<Moments>>,
}

impl Topology for InProcessTopology {
    fn workers(&self) -> Vec<String> {
        self.workers.clone()
    }

    fn nodes(&self) -> Vec<String> {
        Vec::new()
    }

    fn resource(&self) -> Option<String> {
        None
    }

    async fn moments(&self) -> Moments {
        self.moments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn leader(&self) -> Option<String> {
        None
    }
}
