//! One fault at a time, outside any plan: a replay's steps strike a fault at the moment the
//! scenario says and lift it at another. A struck fault goes through the plan's own action,
//! tracking, start and stop lines and final heal; only its targets come from the caller, who
//! names them (a scenario's worker, the leader it resolved). [`OneStep`] is the executor as a
//! trait object, so a caller holding either kind of site (containers, in-process) strikes
//! through the same code.

use super::{Applied, Nemesis, NemesisError};
use crate::control::{ControlError, NodeControl, Topology};
use crate::targets::Resolved;
use results::EventFault;
use std::future::Future;
use std::pin::Pin;

/// A fault struck and not yet lifted: what its lift or its leave takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Struck(usize);

/// The first key of a struck fault among the active ones: far above any plan step's index.
const FIRST_KEY: usize = usize::MAX / 2;

/// A future a [`OneStep`] returns.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The executor, one fault at a time. Every start and stop line it records is the one a plan's
/// fault records (the fault's name, its targets, what it did), so the checkers read a replay's
/// faults as they read a run's.
pub trait OneStep: Send + Sync {
    /// Applies `resolved` now, as `fault`. The start line names `named` (a scenario's owner
    /// names) when given, else the control's targets, and carries the action's own fields
    /// followed by `extra`.
    fn strike<'a>(
        &'a self,
        fault: EventFault,
        resolved: Resolved,
        named: Option<Vec<String>>,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Pending<'a, Result<Struck, NemesisError>>;

    /// Undoes exactly what `struck` did (thaw, restart, the cut removed, the clock real, the
    /// links as they were) and records its stop; a cut of a reply that no reply spent says so
    /// on the stop line.
    fn lift(&self, struck: Struck) -> Pending<'_, Result<(), NemesisError>>;

    /// Records `struck`'s stop and leaves its effect standing: a killed worker stays dead (no
    /// heal restarts it), a clock moved again is the next fault's to undo.
    fn leave(&self, struck: Struck) -> Result<(), NemesisError>;

    /// Lifts everything struck and heals everything, as at the end of a plan.
    fn heal_all(&self) -> Pending<'_, Result<(), NemesisError>>;

    /// The workers, by the names the control acts on.
    fn workers(&self) -> Vec<String>;

    /// The lock service's nodes, by the names the control acts on.
    fn nodes(&self) -> Vec<String>;

    /// The lock service's leader or master now, asked of the service.
    fn leader(&self) -> Pending<'_, Option<String>>;
}

impl<C: NodeControl, T: Topology> Nemesis<'_, C, T> {
    async fn strike_now(
        &self,
        fault: EventFault,
        resolved: Resolved,
        named: Option<Vec<String>>,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Result<Struck, NemesisError> {
        let key = {
            let mut st = self.state();
            st.struck += 1;
            FIRST_KEY + st.struck
        };
        let (applied, targets, mut value) = match self.act(key, resolved).await? {
            Ok(acted) => acted,
            Err(why) => return Err(ControlError::new(fault.name(), "strike", why).into()),
        };
        value.extend(extra);
        let event = self.event(fault, named.as_deref().unwrap_or(&targets), value);
        self.activate(key, applied, targets, event)?;
        Ok(Struck(key))
    }

    fn leave_now(&self, struck: Struck) -> Result<(), NemesisError> {
        let active = {
            let mut st = self.state();
            let Some(active) = st.active.remove(&struck.0) else {
                return Ok(());
            };
            st.partitions.remove(&struck.0);
            for t in &active.targets {
                match active.applied {
                    Applied::Killed => {
                        st.killed.remove(t);
                        st.left.insert(t.clone());
                    }
                    Applied::Paused => {
                        st.paused.remove(t);
                    }
                    Applied::Clocked => {
                        st.clocked.remove(t);
                    }
                    Applied::Shaped => {
                        st.shaped.remove(t);
                    }
                    Applied::Hung => {
                        st.hung.remove(t);
                    }
                    Applied::Starved => {
                        st.starved.remove(t);
                    }
                    Applied::Partitioned => {}
                }
            }
            active
        };
        self.history
            .record(active.event.stopped().event(self.clock.now()))?;
        Ok(())
    }
}

impl<C: NodeControl, T: Topology> OneStep for Nemesis<'_, C, T> {
    fn strike<'a>(
        &'a self,
        fault: EventFault,
        resolved: Resolved,
        named: Option<Vec<String>>,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Pending<'a, Result<Struck, NemesisError>> {
        Box::pin(self.strike_now(fault, resolved, named, extra))
    }

    fn lift(&self, struck: Struck) -> Pending<'_, Result<(), NemesisError>> {
        Box::pin(self.stop(struck.0, None))
    }

    fn leave(&self, struck: Struck) -> Result<(), NemesisError> {
        self.leave_now(struck)
    }

    fn heal_all(&self) -> Pending<'_, Result<(), NemesisError>> {
        Box::pin(Nemesis::heal_all(self))
    }

    fn workers(&self) -> Vec<String> {
        self.topology.workers()
    }

    fn nodes(&self) -> Vec<String> {
        self.topology.nodes()
    }

    fn leader(&self) -> Pending<'_, Option<String>> {
        Box::pin(self.topology.leader())
    }
}
