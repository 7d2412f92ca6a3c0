//! The faults a worker step applies at a lock protocol's weak moments, recorded as
//! the run's nemesis records them (the fault's own name, the worker as the target): an
//! operation sent and the worker struck `after` a delay while it is in flight
//! (`pause-acquiring`, `kill-acquiring`, `pause-waiter`, `pause-releasing`,
//! `isolate-releasing`, `cut-acquire-reply`, `cut-release-reply`), the lock service's replies to
//! it held back (`slow-reply`) or the next one cut (`cut-renew-reply`), its CPU starved
//! (`starve`), and its lock client's wall clock moved (`client-clock-jump`,
//! `client-clock-skew`). Each is healed by the worker's `resume` / `heal`, `nemesis:
//! clock-real`, or the final heal.

use super::actor::Cmd;
use super::rows::Row;
use super::scenario::ClientClock;
use super::steps::{Moved, Stage};
use crate::config::Dur;
use nemesis::{LinkShaping, NodeControl, Signal};
use results::fault::{Family, FaultKind, Mechanism, Shaping};
use results::{FaultPhase, NemesisEvent};
use std::time::Duration;

impl Stage<'_> {
    /// Sends `cmd` and strikes worker `w` with `fault` `after` later: its reply, if it had not
    /// come yet, waits for the thaw (a pause), never comes (a kill), or meets the cut (an
    /// isolation, a cut reply). The start line records the delay. A cut reply with no delay is
    /// armed before the request leaves.
    pub(super) async fn strike_in_flight(
        &mut self,
        w: usize,
        i: usize,
        cmd: Cmd,
        after: Dur,
        fault: FaultKind,
        rows: &mut [Row],
    ) -> Result<(), String> {
        if fault.family() == Family::Reply && after.get().is_zero() {
            // Armed before the request leaves, so the reply cut is this operation's (unless its
            // client's own renewal is answered first).
            self.cut_reply(w, fault, None).await?;
            let rx = self.workers[w].actor.send(cmd.clone());
            self.workers[w].pending.push((i, cmd, rx));
            self.finish_pending(w, rows, self.op_wait).await;
            return Ok(());
        }
        let target = self.workers[w].target.clone();
        let owner = self.workers[w].name.clone();
        let rx = self.workers[w].actor.send(cmd.clone());
        tokio::time::sleep(after.get()).await;
        let event = NemesisEvent::start(fault, vec![owner.clone()])
            .with("delay_ms", after.get().as_millis() as u64);
        self.workers[w].pending.push((i, cmd, rx));
        match fault {
            FaultKind::KillAcquiring => {
                self.record(&event);
                self.signal(&target, Signal::Kill).await?;
                self.record(&event.stopped());
                rows[i].result = format!("sent; killed {after} after");
                self.finish_pending(w, rows, Duration::from_secs(10)).await;
            }
            FaultKind::CutAcquireReply | FaultKind::CutReleaseReply => {
                // Its answer comes (or its error does) without a step of the worker's own.
                self.cut_reply(w, fault, Some(after)).await?;
                rows[i].result = format!("sent; its next reply cut {after} after");
                self.finish_pending(w, rows, self.op_wait).await;
            }
            FaultKind::IsolateReleasing => {
                self.isolated.insert(w, fault);
                self.repartition().await?;
                self.record(&event);
                rows[i].result = format!("sent; cut off {after} after, open until it answers");
            }
            _ => {
                self.signal(&target, Signal::Stop).await?;
                self.workers[w].paused = true;
                self.workers[w].paused_by = fault;
                self.record(&event);
                rows[i].result = format!("sent; paused {after} after, open while paused");
            }
        }
        Ok(())
    }

    /// `heal`: the worker's cut removed and its replies no longer held back.
    pub(super) async fn heal_worker(&mut self, w: usize) -> Result<String, String> {
        let mut healed = Vec::new();
        if let Some(fault) = self.isolated.remove(&w) {
            self.repartition().await?;
            let owner = self.workers[w].name.clone();
            self.nemesis(FaultPhase::Stop, fault, &owner);
            healed.push("reconnected");
        }
        if let Some(fault) = self.shaped.remove(&w) {
            self.unshape(w, fault).await?;
            healed.push("its links as they were");
        }
        if self.starved.remove(&w) {
            self.unstarve(w).await?;
            healed.push("its CPU no longer limited");
        }
        Ok(if healed.is_empty() {
            "nothing to heal".into()
        } else {
            healed.join("; ")
        })
    }

    /// `slow-reply`: every reply of the lock service to worker `w` waits `length` (by default
    /// twice the client's operation timeout, as in a run), its requests pass at once.
    pub(super) async fn slow_replies(
        &mut self,
        w: usize,
        length: Option<Dur>,
    ) -> Result<String, String> {
        let shaping = match length {
            Some(d) => LinkShaping {
                delay_ms: d.get().as_millis() as u64,
                replies_only: true,
                ..LinkShaping::default()
            },
            None => LinkShaping::slow_reply(self.plan.client_timing.op_timeout),
        };
        self.shape(w, FaultKind::SlowReply, shaping, None).await?;
        Ok(format!(
            "replies held back {} ms, requests at once",
            shaping.delay_ms
        ))
    }

    /// A `cut-*-reply`: the next reply the lock service sends worker `w` is dropped and its
    /// connection closed, the request having landed; armed `after` its operation was sent, if
    /// one was. Spent once; the shaping stays until the worker's `heal`.
    pub(super) async fn cut_reply(
        &mut self,
        w: usize,
        fault: FaultKind,
        after: Option<Dur>,
    ) -> Result<(), String> {
        self.shape(w, fault, LinkShaping::cut_reply(), after).await
    }

    /// Worker `w`'s links shaped by `fault`, recorded with the shaping (and the delay after its
    /// operation was sent, if it struck one in flight) until its `heal`.
    async fn shape(
        &mut self,
        w: usize,
        fault: FaultKind,
        shaping: LinkShaping,
        after: Option<Dur>,
    ) -> Result<(), String> {
        let target = self.workers[w].target.clone();
        self.site
            .control
            .shape_links(&target, Some(shaping))
            .await
            .map_err(|e| e.to_string())?;
        self.shaped.insert(w, fault);
        let owner = self.workers[w].name.clone();
        let value = serde_json::to_value(shaping).unwrap_or_default();
        let mut event = NemesisEvent::start(fault, vec![owner]).with("links", value);
        if let Some(after) = after {
            event = event.with("delay_ms", after.get().as_millis() as u64);
        }
        self.record(&event);
        Ok(())
    }

    /// Worker `w`'s links as they were, recorded as the stop of the `fault` that shaped them;
    /// a cut no reply spent says so on its stop line, as in a run.
    pub(super) async fn unshape(&self, w: usize, fault: FaultKind) -> Result<(), String> {
        let target = self.workers[w].target.clone();
        let unspent = fault.mechanism() == Mechanism::Link(Shaping::CutReply)
            && self.site.control.cut_spent(&target).await.ok().flatten() == Some(false);
        self.site
            .control
            .shape_links(&target, None)
            .await
            .map_err(|e| e.to_string())?;
        let owner = self.workers[w].name.clone();
        let mut stop = NemesisEvent::new(FaultPhase::Stop, fault, vec![owner]);
        if unspent {
            stop = stop.with_error(results::fault::CUT_UNSPENT);
        }
        self.record(&stop);
        Ok(())
    }

    /// `starve`: worker `w`'s container limited to a few percent of one CPU, as the run's
    /// `starve-worker` (recorded with its quota), until its `heal`.
    pub(super) async fn starve(&mut self, w: usize) -> Result<String, String> {
        let target = self.workers[w].target.clone();
        self.site
            .control
            .throttle(&target, Some(nemesis::STARVED_CPUS))
            .await
            .map_err(|e| e.to_string())?;
        self.starved.insert(w);
        let owner = self.workers[w].name.clone();
        self.record(
            &NemesisEvent::start(FaultKind::StarveWorker, vec![owner])
                .with("cpus", nemesis::STARVED_CPUS),
        );
        Ok(format!(
            "its CPU cut to {:.0}% of one CPU",
            nemesis::STARVED_CPUS * 100.0
        ))
    }

    /// Worker `w`'s CPU no longer limited, recorded as the starve's stop.
    pub(super) async fn unstarve(&self, w: usize) -> Result<(), String> {
        let target = self.workers[w].target.clone();
        self.site
            .control
            .throttle(&target, None)
            .await
            .map_err(|e| e.to_string())?;
        let owner = self.workers[w].name.clone();
        self.nemesis(FaultPhase::Stop, FaultKind::StarveWorker, &owner);
        Ok(())
    }

    /// `client-clock-jump` / `client-clock-skew`: the wall clock worker `w`'s lock client reads
    /// (libfaketime in its container), until `nemesis: clock-real` or the final heal.
    pub(super) async fn move_client_clock(
        &mut self,
        w: usize,
        how: ClientClock,
    ) -> Result<String, String> {
        let target = self.workers[w].target.clone();
        let owner = self.workers[w].name.clone();
        let setting = how.setting();
        self.site
            .control
            .set_clock(&target, setting)
            .await
            .map_err(|e| e.to_string())?;
        // A clock moved again: the earlier move ends here, as its own stop line.
        if let Some(at) = self.clocked.iter().position(|m| m.clock == target) {
            let earlier = self.clocked.remove(at);
            self.nemesis(FaultPhase::Stop, earlier.fault, &earlier.named);
        }
        self.clocked.push(Moved {
            clock: target,
            fault: how.fault(),
            named: owner.clone(),
        });
        let value = serde_json::to_value(setting).unwrap_or_default();
        self.record(&NemesisEvent::start(how.fault(), vec![owner]).with("clock", value));
        Ok(match setting {
            nemesis::ClockSetting::Ahead { secs } => format!("its wall clock {secs:+.3} s off"),
            nemesis::ClockSetting::Fast { factor } => format!("its wall clock at {factor}x"),
            nemesis::ClockSetting::Real => "its wall clock real".into(),
        })
    }
}
