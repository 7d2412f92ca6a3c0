//! A site's [`NodeControl`] bound to the run's driver: every fault goes to the site's own control
//! except `hang-work`, which acts in the driver ([`Hangs`]: the sessions send a hung worker
//! nothing while its process runs on). Both sites run their plan through it.

use nemesis::{ClockSetting, ControlError, Grudge, LinkShaping, NodeControl, Signal};
use workloads::driver::Hangs;

/// `control`, with the driver's gates for `hang-work`.
pub struct Driven<'a, C> {
    pub control: &'a C,
    pub hangs: &'a Hangs,
}

impl<C: NodeControl> NodeControl for Driven<'_, C> {
    async fn signal(&self, target: &str, signal: Signal) -> Result<(), ControlError> {
        self.control.signal(target, signal).await
    }

    async fn restart(&self, target: &str) -> Result<(), ControlError> {
        self.control.restart(target).await
    }

    async fn partition(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.control.partition(grudge).await
    }

    async fn partition_inbound(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.control.partition_inbound(grudge).await
    }

    async fn heal_network(&self) -> Result<(), ControlError> {
        self.control.heal_network().await
    }

    async fn shape_links(
        &self,
        target: &str,
        shaping: Option<LinkShaping>,
    ) -> Result<(), ControlError> {
        self.control.shape_links(target, shaping).await
    }

    async fn cut_spent(&self, target: &str) -> Result<Option<bool>, ControlError> {
        self.control.cut_spent(target).await
    }

    async fn set_clock(&self, target: &str, setting: ClockSetting) -> Result<(), ControlError> {
        self.control.set_clock(target, setting).await
    }

    async fn empty_data(&self, target: &str) -> Result<(), ControlError> {
        self.control.empty_data(target).await
    }

    async fn throttle(&self, target: &str, cpus: Option<f64>) -> Result<(), ControlError> {
        self.control.throttle(target, cpus).await
    }

    async fn hang_work(&self, target: &str, hung: bool) -> Result<(), ControlError> {
        self.hangs.set(target, hung);
        Ok(())
    }
}
