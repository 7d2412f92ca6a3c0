//! The faults a worker step applies at a lock protocol's weak moments, struck through the site's
//! fault executor and recorded as the run's nemesis records them (the fault's own name, the
//! worker as the target): an operation sent and the worker struck `after` a delay while it is in
//! flight (`pause-acquiring`, `kill-acquiring`, `pause-waiter`, `pause-releasing`,
//! `isolate-releasing`, `cut-acquire-reply`, `cut-release-reply`), the lock service's replies to
//! it held back (`slow-reply`) or the next one cut (`cut-renew-reply`), its CPU starved
//! (`starve`), and its lock client's wall clock moved (`client-clock-jump`,
//! `client-clock-skew`). Each is lifted by the worker's `resume` / `heal`, `nemesis:
//! clock-real`, or the final heal.

use super::actor::Cmd;
use super::rows::Row;
use super::scenario::ClientClock;
use super::standing::On;
use super::steps::Stage;
use crate::config::Dur;
use nemesis::{LinkShaping, Resolved, Signal};
use results::fault::{Family, FaultKind};
use std::time::Duration;

/// The start line's field for a fault struck `after` its operation was sent.
fn delay(after: Dur) -> (&'static str, serde_json::Value) {
    ("delay_ms", (after.get().as_millis() as u64).into())
}

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
        let rx = self.workers[w].actor.send(cmd.clone());
        tokio::time::sleep(after.get()).await;
        self.workers[w].pending.push((i, cmd, rx));
        match fault {
            FaultKind::KillAcquiring => {
                self.kill(w, fault, vec![delay(after)]).await?;
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
                self.isolate(w, fault, vec![delay(after)]).await?;
                rows[i].result = format!("sent; cut off {after} after, open until it answers");
            }
            _ => {
                let stop = |t| Resolved::Signal(Signal::Stop, vec![t]);
                let struck = self
                    .strike_worker(w, fault, stop, vec![delay(after)])
                    .await?;
                self.standing.push(On::Frozen(w), struck);
                rows[i].result = format!("sent; paused {after} after, open while paused");
            }
        }
        Ok(())
    }

    /// Worker `w` killed as `fault`, its stop recorded at once: it stays dead, and no heal
    /// starts it again.
    pub(super) async fn kill(
        &mut self,
        w: usize,
        fault: FaultKind,
        extra: Vec<(&'static str, serde_json::Value)>,
    ) -> Result<(), String> {
        let kill = |t| Resolved::Signal(Signal::Kill, vec![t]);
        let struck = self.strike_worker(w, fault, kill, extra).await?;
        self.faults.leave(struck).map_err(|e| e.to_string())
    }

    /// `heal`: the worker's cut removed, its replies no longer held back, its CPU its own.
    pub(super) async fn heal_worker(&mut self, w: usize) -> Result<String, String> {
        let mut healed = Vec::new();
        if let Some(struck) = self.standing.take(&On::Isolated(w)) {
            self.lift(struck).await?;
            healed.push("reconnected");
        }
        if let Some(struck) = self.standing.take(&On::Shaped(w)) {
            self.lift(struck).await?;
            healed.push("its links as they were");
        }
        if let Some(struck) = self.standing.take(&On::Starved(w)) {
            self.lift(struck).await?;
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
    /// one was. Spent once; the shaping stays until the worker's `heal`, whose stop line says
    /// whether a reply spent it.
    pub(super) async fn cut_reply(
        &mut self,
        w: usize,
        fault: FaultKind,
        after: Option<Dur>,
    ) -> Result<(), String> {
        self.shape(w, fault, LinkShaping::cut_reply(), after).await
    }

    /// Worker `w`'s links shaped by `fault`, recorded with the shaping (and the delay after its
    /// operation was sent, if it struck one in flight) until its `heal`. A shaping already on
    /// its links ends here, replaced.
    async fn shape(
        &mut self,
        w: usize,
        fault: FaultKind,
        shaping: LinkShaping,
        after: Option<Dur>,
    ) -> Result<(), String> {
        if let Some(earlier) = self.standing.take(&On::Shaped(w)) {
            self.faults.leave(earlier).map_err(|e| e.to_string())?;
        }
        let links = |t| Resolved::Links(shaping, vec![t]);
        let extra = after.into_iter().map(delay).collect();
        let struck = self.strike_worker(w, fault, links, extra).await?;
        self.standing.push(On::Shaped(w), struck);
        Ok(())
    }

    /// `starve`: worker `w`'s container limited to a few percent of one CPU, as the run's
    /// `starve-worker` (recorded with its quota), until its `heal`.
    pub(super) async fn starve(&mut self, w: usize) -> Result<String, String> {
        let starve = |t| Resolved::Starve(nemesis::STARVED_CPUS, vec![t]);
        let struck = self
            .strike_worker(w, FaultKind::StarveWorker, starve, vec![])
            .await?;
        self.standing.push(On::Starved(w), struck);
        Ok(format!(
            "its CPU cut to {:.0}% of one CPU",
            nemesis::STARVED_CPUS * 100.0
        ))
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
        self.move_clock(&target, how.fault(), setting, &owner)
            .await?;
        Ok(match setting {
            nemesis::ClockSetting::Ahead { secs } => format!("its wall clock {secs:+.3} s off"),
            nemesis::ClockSetting::Fast { factor } => format!("its wall clock at {factor}x"),
            nemesis::ClockSetting::Real => "its wall clock real".into(),
        })
    }

    /// `clock`'s wall clock set as `fault`, named `named` on its start line; a move of that
    /// clock still standing ends here, as its own stop line.
    pub(super) async fn move_clock(
        &mut self,
        clock: &str,
        fault: FaultKind,
        setting: nemesis::ClockSetting,
        named: &str,
    ) -> Result<(), String> {
        if let Some(earlier) = self.standing.take(&On::Clock(clock.to_string())) {
            self.faults.leave(earlier).map_err(|e| e.to_string())?;
        }
        let moved = Resolved::Clock(setting, vec![clock.to_string()]);
        let struck = self.strike(fault, moved, named, vec![]).await?;
        self.standing.push(On::Clock(clock.to_string()), struck);
        Ok(())
    }
}
