//! The nemesis and wait steps of a scenario, and the final heal, struck and lifted through the
//! site's fault executor: pausing a node of the lock service (`master` / `leader` resolved when
//! the step runs), starving it of CPU, killing it with its data emptied and starting it again,
//! cutting a Redis master from its replicas, waiting for a Sentinel failover, waiting (by asking
//! the site's lock service) for a worker's lease to expire.

use super::rows::Row;
use super::scenario::Control;
use super::standing::On;
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
                let stop = |t| Resolved::Signal(Signal::Stop, vec![t]);
                let node = self
                    .strike_node(n, FaultKind::PauseNode, stop, On::FrozenNode)
                    .await?;
                rows[i].result = format!("{node} paused (SIGSTOP)");
            }
            Control::ResumeNode(n) => {
                let (node, struck) = self.named_or_last(n, On::FrozenNode, "paused")?;
                self.lift(struck).await?;
                rows[i].result = format!("{node} resumed (SIGCONT)");
            }
            Control::StarveNode(n) => {
                let starve = |t| Resolved::Starve(nemesis::STARVED_CPUS, vec![t]);
                let node = self
                    .strike_node(n, FaultKind::StarveNode, starve, On::StarvedNode)
                    .await?;
                rows[i].result = format!(
                    "{node}'s CPU cut to {:.0}% of one CPU",
                    nemesis::STARVED_CPUS * 100.0
                );
            }
            Control::UnstarveNode(n) => {
                let (node, struck) = self.named_or_last(n, On::StarvedNode, "starved")?;
                self.lift(struck).await?;
                rows[i].result = format!("{node}'s CPU no longer limited");
            }
            Control::RestartEmpty(n) => {
                let fault = if n == "master" || n == "leader" {
                    FaultKind::RestartEmptyLeader
                } else {
                    FaultKind::RestartEmptyNode
                };
                let kill = |t| Resolved::KillEmpty(vec![t]);
                let node = self.strike_node(n, fault, kill, On::EmptiedNode).await?;
                rows[i].result = format!("{node} killed, its data directory emptied");
            }
            Control::Restart(n) => {
                let (node, struck) =
                    self.named_or_last(n, On::EmptiedNode, "killed by restart-empty")?;
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
                self.standing.push(On::CutMaster(master.clone()), struck);
                rows[i].result = format!("{master} cut from {}", replicas.join(", "));
            }
            Control::Failover => {
                let standing = &self.standing;
                let before = standing
                    .latest(&On::FrozenNode(String::new()))
                    .or_else(|| standing.latest(&On::CutMaster(String::new())))
                    .map(|(n, _)| n.to_string())
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

    /// Strikes `fault` on node `n` (`master` / `leader`: who leads now): `action` of it,
    /// standing as `on` of it until the step that lifts it. Returns the node.
    async fn strike_node(
        &mut self,
        n: &str,
        fault: FaultKind,
        action: impl FnOnce(String) -> Resolved,
        on: fn(String) -> On,
    ) -> Result<String, String> {
        let node = self.resolve_node(n).await?;
        let struck = self
            .strike(fault, action(node.clone()), &node, vec![])
            .await?;
        self.standing.push(on(node.clone()), struck);
        Ok(node)
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

    /// The fault standing on node `n` of the kind `on` makes (`master` / `leader`: the newest
    /// of that kind), taken out for its lift.
    fn named_or_last(
        &mut self,
        n: &str,
        on: fn(String) -> On,
        what: &str,
    ) -> Result<(String, Struck), String> {
        let node = if n == "master" || n == "leader" {
            self.standing
                .latest(&on(String::new()))
                .map(|(node, _)| node.to_string())
        } else {
            Some(n.to_string())
        };
        node.and_then(|node| Some((node.clone(), self.standing.take(&on(node))?)))
            .ok_or_else(|| format!("no lock-service node {n} is {what} by a step"))
    }

    /// Lifts every fault a step struck, newest first, each recording its stop.
    async fn lift_all(&mut self) {
        let mut struck = self.standing.take_all(|_| true);
        struck.reverse();
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
        for struck in self.standing.take_all(|on| matches!(on, On::Clock(_))) {
            if let Err(e) = self.lift(struck).await {
                self.log.line(&format!("heal: {e}"));
            }
        }
    }
}
