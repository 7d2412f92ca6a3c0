//! The executor's heal of everything, on every exit: what a run must leave behind is nothing
//! stopped, nothing cut, no clock moved, no work hung, nothing starved of CPU, nothing dead
//! (but what a stop left dead on purpose: [`super::OneStep::leave`]).

use super::{Nemesis, NemesisError};
use crate::clock::ClockSetting;
use crate::control::{NodeControl, Signal, Topology};
use std::collections::BTreeSet;

/// The error of a stop line written by the heal rather than by the plan.
const FINAL_HEAL: &str = "stopped by the final heal";

impl<C: NodeControl, T: Topology> Nemesis<'_, C, T> {
    /// Heals everything: stops every active fault (recording its stop), SIGCONTs every worker,
    /// node and resource, flushes every partition rule, restarts whatever is still killed.
    /// Tries every step even when one fails, and returns the first failure.
    pub async fn heal_all(&self) -> Result<(), NemesisError> {
        let mut first: Option<NemesisError> = None;
        let mut keep = |r: Result<(), NemesisError>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        let active: Vec<usize> = self.state().active.keys().copied().collect();
        for i in active {
            let r = self.stop(i, Some(FINAL_HEAL)).await;
            if r.is_err() {
                self.state().active.remove(&i);
            }
            keep(r);
        }
        let (paused, killed, left) = {
            let mut st = self.state();
            st.partitions.clear();
            (st.paused.clone(), st.killed.clone(), st.left.clone())
        };
        let mut everyone: BTreeSet<String> = paused;
        everyone.extend(self.topology.workers());
        everyone.extend(self.topology.nodes());
        everyone.extend(self.topology.resource());
        for t in everyone
            .iter()
            .filter(|t| !killed.contains(*t) && !left.contains(*t))
        {
            keep(
                self.control
                    .signal(t, Signal::Cont)
                    .await
                    .map_err(Into::into),
            );
        }
        keep(self.control.heal_network().await.map_err(Into::into));
        let shaped = std::mem::take(&mut self.state().shaped);
        for t in &shaped {
            keep(self.control.shape_links(t, None).await.map_err(Into::into));
        }
        let hung = std::mem::take(&mut self.state().hung);
        for t in &hung {
            keep(self.control.hang_work(t, false).await.map_err(Into::into));
        }
        let starved = std::mem::take(&mut self.state().starved);
        for t in &starved {
            keep(self.control.throttle(t, None).await.map_err(Into::into));
        }
        let clocked = std::mem::take(&mut self.state().clocked);
        for t in &clocked {
            keep(
                self.control
                    .set_clock(t, ClockSetting::Real)
                    .await
                    .map_err(Into::into),
            );
        }
        for t in &killed {
            let r = self.control.restart(t).await;
            if r.is_ok() {
                self.state().killed.remove(t);
            }
            keep(r.map_err(Into::into));
        }
        self.state().paused.clear();
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
