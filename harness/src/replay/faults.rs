//! The nemesis and wait steps of a scenario, and the final heal, struck and lifted through the
//! site's fault executor: pausing a node of the lock service (`master` / `leader` resolved when
//! the step runs), starving it of CPU, killing it with its data emptied and starting it again,
//! cutting a Redis master from its replicas, waiting for a Sentinel failover, waiting (by asking
//! the site's lock service) for a worker's lease to expire.

use super::rows::Row;
use super::scenario::Control;
use super::steps::Stage;
use nemesis::{Grudge, Resolved, Signal, Struck};
use results::fault::FaultKind;
use results::EventFault;
use std::time::{Duration, Instant};

impl Stage<'_> {
    pub(super) async fn control_step(
        &mut self,
        c: &Control,
        i: usize,
        rows: &mut [Row],
    ) -> Result<(), String> {
        match c {
            Control::LeaseExpired(name) => {
                let w = self.worker(name)?;
                let lease = self.workers[w]
                    .lease
                    .clone()
                    .ok_or_else(|| format!("{name} holds no lease (no successful acquire yet)"))?;
                let limit = self.plan.ttl().get() * 3 + Duration::from_secs(2);
                let took = self
                    .site
                    .lease_expired(&self.plan.lock, &lease, limit)
                    .await?;
                rows[i].result = format!("expired after {:.2}s", took.as_secs_f64());
            }
            Control::Sleep(d) => {
                tokio::time::sleep(d.get()).await;
                rows[i].result = "slept".into();
            }
            Control::Heal => {
                self.lift_all().await;
                rows[i].result = "healed".into();
            }
            Control::ClockJump { ahead, nodes } => {
                let secs = ahead.get().as_secs_f64();
                for node in nodes {
                    let setting = nemesis::ClockSetting::Ahead { secs };
                    self.move_clock(node, FaultKind::ClockJump, setting, node)
                        .await?;
                }
                rows[i].result = format!("{} {ahead} ahead", nodes.join(", "));
            }
            Control::ClockReal => {
                self.reset_clocks().await;
                rows[i].result = "clocks real".into();
            }
            Control::Stall { leader, length } => {
                rows[i].result = self.stall(*leader, length.get()).await?;
            }
            Control::PauseNode(n) => {
                let node = self.resolve_node(n).await?;
                let stop = Resolved::Signal(Signal::Stop, vec![node.clone()]);
                let struck = self
                    .strike(FaultKind::PauseNode, stop, &node, vec![])
                    .await?;
                self.paused_nodes.push((node.clone(), struck));
                rows[i].result = format!("{node} paused (SIGSTOP)");
            }
            Control::ResumeNode(n) => {
                let (node, struck) = Self::named_or_last(n, &mut self.paused_nodes, "paused")?;
                self.lift(struck).await?;
                rows[i].result = format!("{node} resumed (SIGCONT)");
            }
            Control::StarveNode(n) => {
                let node = self.resolve_node(n).await?;
                let starve = Resolved::Starve(nemesis::STARVED_CPUS, vec![node.clone()]);
                let struck = self
                    .strike(FaultKind::StarveNode, starve, &node, vec![])
                    .await?;
                self.starved_nodes.push((node.clone(), struck));
                rows[i].result = format!(
                    "{node}'s CPU cut to {:.0}% of one CPU",
                    nemesis::STARVED_CPUS * 100.0
                );
            }
            Control::UnstarveNode(n) => {
                let (node, struck) = Self::named_or_last(n, &mut self.starved_nodes, "starved")?;
                self.lift(struck).await?;
                rows[i].result = format!("{node}'s CPU no longer limited");
            }
            Control::RestartEmpty(n) => {
                let fault = if n == "master" || n == "leader" {
                    FaultKind::RestartEmptyLeader
                } else {
                    FaultKind::RestartEmptyNode
                };
                let node = self.resolve_node(n).await?;
                let kill = Resolved::KillEmpty(vec![node.clone()]);
                let struck = self.strike(fault, kill, &node, vec![]).await?;
                self.emptied.push((node.clone(), struck));
                rows[i].result = format!("{node} killed, its data directory emptied");
            }
            Control::Restart(n) => {
                let (node, struck) =
                    Self::named_or_last(n, &mut self.emptied, "killed by restart-empty")?;
                let start = Instant::now();
                self.lift(struck).await?;
                rows[i].result = format!(
                    "{node} started again without its data after {:.1}s",
                    start.elapsed().as_secs_f64()
                );
            }
            Control::CutReplication => {
                let master = self.resolve_node("master").await?;
                let replicas: Vec<String> = self
                    .site
                    .data_nodes()
                    .into_iter()
                    .filter(|n| *n != master)
                    .collect();
                if replicas.is_empty() {
                    return Err(
                        "cut-replication needs a master with replicas (redis-sentinel)".into(),
                    );
                }
                let grudge = Grudge::cut(std::slice::from_ref(&master), &replicas);
                let cut = Resolved::Partition(grudge, vec![master.clone()]);
                let struck = self
                    .strike(EventFault::CutReplication, cut, &master, vec![])
                    .await?;
                self.cut_replication = Some((master.clone(), struck));
                rows[i].result = format!("{master} cut from {}", replicas.join(", "));
            }
            Control::Failover => {
                let before = self
                    .paused_nodes
                    .last()
                    .map(|(n, _)| n.clone())
                    .or_else(|| self.cut_replication.as_ref().map(|c| c.0.clone()))
                    .ok_or("wait failover needs a paused or cut master first")?;
                let start = Instant::now();
                let limit = Duration::from_secs(40);
                loop {
                    if let Some(now) = self.faults.leader().await {
                        if now != before {
                            rows[i].result = format!(
                                "{now} promoted after {:.1}s",
                                start.elapsed().as_secs_f64()
                            );
                            // One sentinel naming the new master is not all of them: a client
                            // asking another one a moment later can still be sent to the old
                            // (paused) master. The old master stays paused, so waiting for the
                            // others to converge cannot change what the scenario shows.
                            tokio::time::sleep(Duration::from_millis(1500)).await;
                            break;
                        }
                    }
                    if start.elapsed() > limit {
                        return Err(format!("the sentinels still name {before} after {limit:?}"));
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        Ok(())
    }

    /// Freezes every node of the lock service (or its leader) for `length` and thaws it,
    /// recorded as the run's nemesis records `stall-service` / `stall-leader` (with its
    /// `length_ms`). A node frozen here and not yet thawed is the executor's to thaw if a step
    /// fails half-way.
    async fn stall(&mut self, leader: bool, length: Duration) -> Result<String, String> {
        let (fault, nodes) = if leader {
            (
                FaultKind::StallLeader,
                vec![self.resolve_node("leader").await?],
            )
        } else {
            (FaultKind::StallService, self.faults.nodes())
        };
        let stop = Resolved::Signal(Signal::Stop, nodes.clone());
        let length_ms = ("length_ms", (length.as_millis() as u64).into());
        let struck = self
            .faults
            .strike(fault.into(), stop, None, vec![length_ms])
            .await
            .map_err(|e| e.to_string())?;
        tokio::time::sleep(length).await;
        self.lift(struck).await?;
        Ok(format!("{} frozen for {length:?}", nodes.join(", ")))
    }

    /// `master` / `leader`: who leads now; anything else is taken as a short node name.
    async fn resolve_node(&self, n: &str) -> Result<String, String> {
        if n != "master" && n != "leader" {
            return Ok(n.to_string());
        }
        self.faults
            .leader()
            .await
            .ok_or_else(|| format!("the lock service names no {n} right now"))
    }

    /// The fault a step struck on node `n` (`master` / `leader`: the latest of `struck`),
    /// taken out of `struck` for its lift.
    fn named_or_last(
        n: &str,
        struck: &mut Vec<(String, Struck)>,
        what: &str,
    ) -> Result<(String, Struck), String> {
        let at = if n == "master" || n == "leader" {
            struck.len().checked_sub(1)
        } else {
            struck.iter().position(|(node, _)| node == n)
        };
        at.map(|at| struck.remove(at))
            .ok_or_else(|| format!("no lock-service node {n} is {what} by a step"))
    }

    /// Lifts every fault a step struck, in the order a heal undoes them (the workers thawed
    /// first), each recording its stop.
    async fn lift_all(&mut self) {
        let mut struck: Vec<Struck> = Vec::new();
        struck.extend(self.workers.iter_mut().filter_map(|w| w.paused.take()));
        struck.extend(self.paused_nodes.drain(..).map(|(_, s)| s));
        struck.extend(self.clocked.drain(..).map(|(_, s)| s));
        struck.extend(std::mem::take(&mut self.shaped).into_values());
        struck.extend(std::mem::take(&mut self.starved).into_values());
        struck.extend(self.starved_nodes.drain(..).map(|(_, s)| s));
        struck.extend(self.emptied.drain(..).map(|(_, s)| s));
        struck.extend(std::mem::take(&mut self.isolated).into_values());
        struck.extend(self.cut_replication.take().map(|(_, s)| s));
        for s in struck {
            if let Err(e) = self.lift(s).await {
                self.log.line(&format!("heal: {e}"));
            }
        }
    }

    /// The final heal: every fault a step struck lifted, then the executor's heal of
    /// everything (what a failed lift left, every node thawed, every cut removed).
    pub async fn heal_all(&mut self) {
        self.lift_all().await;
        if let Err(e) = self.faults.heal_all().await {
            self.log.line(&format!("heal: {e}"));
        }
    }

    /// Every clock a step moved (a node's, a worker's lock client's) back to the real time.
    async fn reset_clocks(&mut self) {
        for (_, struck) in std::mem::take(&mut self.clocked) {
            if let Err(e) = self.lift(struck).await {
                self.log.line(&format!("heal: {e}"));
            }
        }
    }
}
