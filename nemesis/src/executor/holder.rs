//! A freeze aimed at the holder that reached a worker which had already let go. The holder is
//! read off the live history, which learns of a release only when its reply arrives: a worker
//! frozen in those few milliseconds holds nothing, and its pause would show nothing a paused
//! holder shows. [`SETTLE`] after the freeze the history is asked again; a target that no
//! longer holds is thawed at once, its stop line says why, and the fault is aimed at the next
//! holder until its deadline (docs/design.md, "Faults").

use super::in_flight::SETTLE;
use super::{Nemesis, NemesisError};
use crate::control::{NodeControl, Topology};
use crate::plan::Step;
use results::fault::{AIMED_AGAIN, HOLDER_MISSED};

impl<C: NodeControl, T: Topology> Nemesis<'_, C, T> {
    /// Step `i` has just frozen what the live history called the holder: keeps the freeze when
    /// every target still holds [`SETTLE`] later (true: started). Otherwise stops it with the
    /// reason and starts the step again while `deadline` allows; after it, the step struck
    /// nothing (false).
    pub(super) async fn hold_checked(
        &self,
        i: usize,
        step: &Step,
        deadline: tokio::time::Instant,
    ) -> Result<bool, NemesisError> {
        tokio::time::sleep(SETTLE).await;
        let now = self.topology.moments().await;
        let holds = |t: &String| now.holding.contains(t) || now.holder.as_ref() == Some(t);
        let Some(targets) = self.state().active.get(&i).map(|a| a.targets.clone()) else {
            return Ok(true);
        };
        let gone: Vec<&String> = targets.iter().filter(|t| !holds(t)).collect();
        if gone.is_empty() {
            return Ok(true);
        }
        let who = gone
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let again = tokio::time::Instant::now() < deadline;
        let why = format!(
            "{} ({who})",
            if again { AIMED_AGAIN } else { HOLDER_MISSED }
        );
        self.stop(i, Some(&why)).await?;
        if !again {
            return Ok(false);
        }
        Box::pin(self.start(i, step, deadline)).await
    }
}
