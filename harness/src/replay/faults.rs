//! The nemesis and wait steps of a scenario, and the faults they leave to heal: pausing a node of
//! the lock service (`master` / `leader` resolved when the step runs), starving it of CPU,
//! killing it with its data emptied and starting it again, cutting a Redis master
//! from its replicas, waiting for a Sentinel failover, waiting (by asking the provider) for a
//! worker's lease to expire; isolations as one union grudge; and the final heal (of the worker
//! steps' faults too: `worker_faults`).

use super::probe;
use super::rows::Row;
use super::scenario::Control;
use super::steps::{Moved, Stage};
use containers::docker::Role;
use nemesis::{Grudge, NodeControl, Signal};
use results::fault::FaultKind;
use results::{EventFault, FaultPhase, NemesisEvent};
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
                let cluster = self
                    .site
                    .deployment
                    .cluster
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                let limit = self.plan.ttl().get() * 3 + Duration::from_secs(2);
                let took = probe::wait_expired(&cluster, &self.plan.lock, &lease, limit).await?;
                rows[i].result = format!("expired after {:.2}s", took.as_secs_f64());
            }
            Control::Sleep(d) => {
                tokio::time::sleep(d.get()).await;
                rows[i].result = "slept".into();
            }
            Control::Heal => {
                self.heal_all().await;
                rows[i].result = "healed".into();
            }
            Control::ClockJump { ahead, nodes } => {
                let secs = ahead.get().as_secs_f64();
                for node in nodes {
                    self.site
                        .control
                        .set_clock(node, nemesis::ClockSetting::Ahead { secs })
                        .await
                        .map_err(|e| e.to_string())?;
                    if !self.clocked.iter().any(|m| m.clock == *node) {
                        self.clocked.push(Moved {
                            clock: node.clone(),
                            fault: FaultKind::ClockJump,
                            named: node.clone(),
                        });
                    }
                    self.nemesis(FaultPhase::Start, FaultKind::ClockJump, node);
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
                self.signal(&node, Signal::Stop).await?;
                self.paused_nodes.push(node.clone());
                self.nemesis(FaultPhase::Start, FaultKind::PauseNode, &node);
                rows[i].result = format!("{node} paused (SIGSTOP)");
            }
            Control::ResumeNode(n) => {
                let node = if n == "master" || n == "leader" {
                    self.paused_nodes
                        .last()
                        .cloned()
                        .ok_or("no lock-service node is paused")?
                } else {
                    n.clone()
                };
                self.signal(&node, Signal::Cont).await?;
                self.paused_nodes.retain(|p| *p != node);
                self.nemesis(FaultPhase::Stop, FaultKind::PauseNode, &node);
                rows[i].result = format!("{node} resumed (SIGCONT)");
            }
            Control::StarveNode(n) => {
                let node = self.resolve_node(n).await?;
                self.starved_nodes.push(node.clone());
                self.throttle(&node, Some(nemesis::STARVED_CPUS)).await?;
                self.record(
                    &NemesisEvent::start(FaultKind::StarveNode, vec![node.clone()])
                        .with("cpus", nemesis::STARVED_CPUS),
                );
                rows[i].result = format!(
                    "{node}'s CPU cut to {:.0}% of one CPU",
                    nemesis::STARVED_CPUS * 100.0
                );
            }
            Control::UnstarveNode(n) => {
                let node = Self::named_or_last(n, &self.starved_nodes, "starved")?;
                self.throttle(&node, None).await?;
                self.starved_nodes.retain(|s| *s != node);
                self.nemesis(FaultPhase::Stop, FaultKind::StarveNode, &node);
                rows[i].result = format!("{node}'s CPU no longer limited");
            }
            Control::RestartEmpty(n) => {
                let fault = if n == "master" || n == "leader" {
                    FaultKind::RestartEmptyLeader
                } else {
                    FaultKind::RestartEmptyNode
                };
                let node = self.resolve_node(n).await?;
                // Tracked before the kill: the final heal starts it again whatever fails next.
                self.emptied.push((node.clone(), fault));
                self.signal(&node, Signal::Kill).await?;
                self.site
                    .control
                    .empty_data(&node)
                    .await
                    .map_err(|e| e.to_string())?;
                self.nemesis(FaultPhase::Start, fault, &node);
                rows[i].result = format!("{node} killed, its data directory emptied");
            }
            Control::Restart(n) => {
                let down: Vec<String> = self.emptied.iter().map(|(d, _)| d.clone()).collect();
                let node = Self::named_or_last(n, &down, "killed by restart-empty")?;
                rows[i].result = self.restart_emptied(&node).await?;
            }
            Control::CutReplication => {
                let master = self.resolve_node("master").await?;
                let replicas: Vec<String> = {
                    let c = self
                        .site
                        .deployment
                        .cluster
                        .read()
                        .unwrap_or_else(|p| p.into_inner());
                    c.nodes
                        .iter()
                        .filter(|n| matches!(n.role, Role::Master | Role::Replica))
                        .map(|n| containers::control::topology::short_name(&self.site.env, &n.name))
                        .filter(|n| *n != master)
                        .collect()
                };
                if replicas.is_empty() {
                    return Err(
                        "cut-replication needs a master with replicas (redis-sentinel)".into(),
                    );
                }
                self.cut_replication = Some((master.clone(), replicas.clone()));
                self.repartition().await?;
                self.nemesis(FaultPhase::Start, EventFault::CutReplication, &master);
                rows[i].result = format!("{master} cut from {}", replicas.join(", "));
            }
            Control::Failover => {
                let before = self
                    .paused_nodes
                    .last()
                    .cloned()
                    .or_else(|| self.cut_replication.as_ref().map(|c| c.0.clone()))
                    .ok_or("wait failover needs a paused or cut master first")?;
                let start = Instant::now();
                let limit = Duration::from_secs(40);
                loop {
                    let cluster = self
                        .site
                        .deployment
                        .cluster
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    if let Ok(Some(n)) = cluster.leader().await {
                        let now =
                            containers::control::topology::short_name(&self.site.env, &n.name);
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
    /// `length_ms`). A node frozen here and not yet thawed is in `paused_nodes`, so the final
    /// heal resumes it if a step fails half-way.
    async fn stall(&mut self, leader: bool, length: Duration) -> Result<String, String> {
        let (fault, nodes) = if leader {
            (
                FaultKind::StallLeader,
                vec![self.resolve_node("leader").await?],
            )
        } else {
            let c = self
                .site
                .deployment
                .cluster
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let nodes = c
                .nodes
                .iter()
                .map(|n| containers::control::topology::short_name(&self.site.env, &n.name))
                .collect();
            (FaultKind::StallService, nodes)
        };
        for node in &nodes {
            self.paused_nodes.push(node.clone());
            self.signal(node, Signal::Stop).await?;
        }
        let event = results::NemesisEvent::start(fault, nodes.clone())
            .with("length_ms", length.as_millis() as u64);
        self.record(&event);
        tokio::time::sleep(length).await;
        for node in &nodes {
            self.signal(node, Signal::Cont).await?;
            self.paused_nodes.retain(|p| p != node);
        }
        self.record(&event.stopped());
        Ok(format!("{} frozen for {length:?}", nodes.join(", ")))
    }

    /// `master` / `leader`: who leads now; anything else is taken as a short node name.
    async fn resolve_node(&self, n: &str) -> Result<String, String> {
        if n != "master" && n != "leader" {
            return Ok(n.to_string());
        }
        let cluster = self
            .site
            .deployment
            .cluster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let node = cluster
            .leader()
            .await?
            .ok_or_else(|| format!("{} names no {n} right now", cluster.provider))?;
        Ok(containers::control::topology::short_name(
            &self.site.env,
            &node.name,
        ))
    }

    /// `master` / `leader`: the latest of `nodes` (the ones a step faulted); else the name.
    fn named_or_last(n: &str, nodes: &[String], what: &str) -> Result<String, String> {
        if n == "master" || n == "leader" {
            nodes
                .last()
                .cloned()
                .ok_or_else(|| format!("no lock-service node is {what}"))
        } else {
            Ok(n.to_string())
        }
    }

    /// Starts `node`, which `restart-empty` left down, from its emptied data directory.
    async fn restart_emptied(&mut self, node: &str) -> Result<String, String> {
        let at = self
            .emptied
            .iter()
            .position(|(d, _)| d == node)
            .ok_or_else(|| format!("{node} was not killed by a restart-empty step"))?;
        let start = Instant::now();
        self.site
            .control
            .restart(node)
            .await
            .map_err(|e| e.to_string())?;
        let (_, fault) = self.emptied.remove(at);
        self.nemesis(FaultPhase::Stop, fault, node);
        Ok(format!(
            "{node} started again without its data after {:.1}s",
            start.elapsed().as_secs_f64()
        ))
    }

    async fn throttle(&self, node: &str, cpus: Option<f64>) -> Result<(), String> {
        self.site
            .control
            .throttle(node, cpus)
            .await
            .map_err(|e| e.to_string())
    }

    pub(super) async fn signal(&self, target: &str, s: Signal) -> Result<(), String> {
        self.site
            .control
            .signal(target, s)
            .await
            .map_err(|e| e.to_string())
    }

    /// Installs the union of every isolation and the replication cut (or heals when none).
    pub(super) async fn repartition(&self) -> Result<(), String> {
        let lock_nodes: Vec<String> = {
            let c = self
                .site
                .deployment
                .cluster
                .read()
                .unwrap_or_else(|p| p.into_inner());
            c.nodes
                .iter()
                .map(|n| containers::control::topology::short_name(&self.site.env, &n.name))
                .collect()
        };
        let mut grudge = Grudge::none();
        let mut add = |g: Grudge| {
            for (k, v) in g.0 {
                grudge.0.entry(k).or_default().extend(v);
            }
        };
        for w in self.isolated.keys() {
            add(Grudge::cut(&[self.workers[*w].target.clone()], &lock_nodes));
        }
        if let Some((m, replicas)) = &self.cut_replication {
            add(Grudge::cut(std::slice::from_ref(m), replicas));
        }
        if grudge.0.is_empty() {
            self.site.control.heal_network().await
        } else {
            self.site.control.partition(&grudge).await
        }
        .map_err(|e| e.to_string())
    }

    /// Resumes every paused worker and node and removes every cut.
    pub async fn heal_all(&mut self) {
        for w in 0..self.workers.len() {
            if self.workers[w].paused {
                let (t, owner) = (self.workers[w].target.clone(), self.workers[w].name.clone());
                if let Err(e) = self.signal(&t, Signal::Cont).await {
                    self.log.line(&format!("heal: {e}"));
                }
                self.workers[w].paused = false;
                let fault =
                    std::mem::replace(&mut self.workers[w].paused_by, FaultKind::PauseWorker);
                self.nemesis(FaultPhase::Stop, fault, &owner);
            }
        }
        for node in std::mem::take(&mut self.paused_nodes) {
            if let Err(e) = self.signal(&node, Signal::Cont).await {
                self.log.line(&format!("heal: {e}"));
            }
            self.nemesis(FaultPhase::Stop, FaultKind::PauseNode, &node);
        }
        self.reset_clocks().await;
        for (w, fault) in std::mem::take(&mut self.shaped) {
            if let Err(e) = self.unshape(w, fault).await {
                self.log.line(&format!("heal: {e}"));
            }
        }
        for w in std::mem::take(&mut self.starved) {
            if let Err(e) = self.unstarve(w).await {
                self.log.line(&format!("heal: {e}"));
            }
        }
        for node in std::mem::take(&mut self.starved_nodes) {
            if let Err(e) = self.throttle(&node, None).await {
                self.log.line(&format!("heal: {e}"));
            }
            self.nemesis(FaultPhase::Stop, FaultKind::StarveNode, &node);
        }
        let down: Vec<String> = self.emptied.iter().map(|(d, _)| d.clone()).collect();
        for node in down {
            if let Err(e) = self.restart_emptied(&node).await {
                self.log.line(&format!("heal: {e}"));
                self.emptied.retain(|(d, _)| *d != node);
            }
        }
        let isolated = std::mem::take(&mut self.isolated);
        let cut = self.cut_replication.take();
        if !isolated.is_empty() || cut.is_some() {
            if let Err(e) = self.site.control.heal_network().await {
                self.log.line(&format!("heal: {e}"));
            }
            for (w, fault) in isolated {
                let owner = self.workers[w].name.clone();
                self.nemesis(FaultPhase::Stop, fault, &owner);
            }
            if let Some((m, _)) = cut {
                self.nemesis(FaultPhase::Stop, EventFault::CutReplication, &m);
            }
        }
    }

    /// Every clock a step moved (a node's, a worker's lock client's) back to the real time.
    async fn reset_clocks(&mut self) {
        for moved in std::mem::take(&mut self.clocked) {
            if let Err(e) = self
                .site
                .control
                .set_clock(&moved.clock, nemesis::ClockSetting::Real)
                .await
            {
                self.log.line(&format!("heal: {e}"));
            }
            self.nemesis(FaultPhase::Stop, moved.fault, &moved.named);
        }
    }
}
