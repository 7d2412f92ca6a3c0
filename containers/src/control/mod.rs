//! The real [`NodeControl`]: faults applied to containers. Signals go to the host PIDs of every
//! process of a container (nix `kill`), partitions are iptables rules in the containers' network
//! namespaces (`nsenter`), restarts go through a pluggable [`Restart`]. What is stopped and where
//! rules exist is tracked, so a heal undoes exactly that — and a `Drop` without a heal still
//! resumes every process and flushes every rule, synchronously.
//!
//! - [`procs`]: processes of a container, signals, `/proc` states.
//! - [`iptables`]: the `FENCECHECK` chain and `nsenter`.
//! - [`restart`]: how a killed target comes back.
//! - [`audit`]: proof that nothing is left stopped or cut.
//! - [`clock`]: fake wall clocks (libfaketime) and how a clock fault moves them.
//! - [`cpu`]: CPU starvation (a container's CPU quota).
//! - [`data`]: servers' data directories on the host, emptied by `restart-empty-*`.
//! - [`links`]: the control of the run's link proxy (slow and lossy networks).
//! - [`topology`]: the nemesis's view of a run (leader, holder) and restarts through `RunEnv`.
//! - [`unplanned`]: what happened to the run's nodes outside the fault plan (deaths, returns,
//!   freezes from outside).

pub mod audit;
pub mod clock;
pub mod cpu;
pub mod data;
pub mod iptables;
pub mod links;
pub mod procs;
pub mod restart;
pub mod topology;
pub mod unplanned;

pub use audit::{audit, Audit};
pub use restart::{DockerRestart, Restart};
pub use topology::{ClusterRestart, RunTopology};

use bollard::Docker;
use nemesis::{ClockSetting, ControlError, Grudge, LinkShaping, NodeControl, Signal};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Default)]
struct Tracked {
    /// target -> pids this control stopped and has not resumed.
    stopped: BTreeMap<String, BTreeSet<i32>>,
    /// target -> host pid of the namespace holding fencecheck rules.
    rules: BTreeMap<String, u32>,
    /// target -> in-network IP, remembered (a dead container has none to ask for).
    ips: BTreeMap<String, String>,
    /// target -> container whose CPU this control limited and has not lifted.
    throttled: BTreeMap<String, String>,
}

/// Where a container stands right now.
struct ContainerState {
    id: String,
    pid: u32,
    running: bool,
    ip: Option<String>,
}

/// Applies faults to the containers of one run.
pub struct DockerControl {
    docker: Docker,
    network: String,
    targets: Mutex<BTreeMap<String, String>>,
    restarter: Arc<dyn Restart>,
    tracked: Mutex<Tracked>,
    /// The kills this control makes, so a watch of deaths can tell them from unplanned ones.
    planned: unplanned::PlannedDeaths,
    /// The run's fake clocks, when its nodes were started with one.
    clocks: Option<clock::FakeClocks>,
    /// The run's link proxy, when the plan has link faults.
    links: Option<links::LinkProxy>,
    /// Where the servers' data directories are on the host, when they persist.
    data: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for DockerControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerControl")
            .field("network", &self.network)
            .field("targets", &self.targets)
            .field("tracked", &self.tracked)
            .finish()
    }
}

impl DockerControl {
    /// `targets` maps the nemesis's names (`worker-3`, `etcd-1`) to container names or ids on
    /// the Docker network `network`.
    pub fn new(
        docker: Docker,
        network: &str,
        targets: BTreeMap<String, String>,
        restarter: Arc<dyn Restart>,
    ) -> Self {
        Self {
            docker,
            network: network.to_string(),
            targets: Mutex::new(targets),
            restarter,
            tracked: Mutex::new(Tracked::default()),
            planned: unplanned::PlannedDeaths::default(),
            clocks: None,
            links: None,
            data: None,
        }
    }

    /// `restart-empty-*` empties the servers' data directories under `root` (see [`data`]).
    pub fn with_data_dirs(mut self, root: std::path::PathBuf) -> Self {
        self.data = Some(root);
        self
    }

    /// Link faults go to the run's link proxy.
    pub fn with_link_proxy(mut self, proxy: links::LinkProxy) -> Self {
        self.links = Some(proxy);
        self
    }

    /// Clock faults move the clocks under `root` (see [`clock::FakeClocks`]).
    pub fn with_fake_clocks(mut self, root: std::path::PathBuf) -> Self {
        self.clocks = Some(clock::FakeClocks::new(root));
        self
    }

    /// The deaths this control causes (for [`unplanned::watch`]).
    pub fn planned_deaths(&self) -> unplanned::PlannedDeaths {
        self.planned.clone()
    }

    /// Adds or re-points a target (a respawned worker in a new container).
    pub fn set_target(&self, name: &str, container: &str) {
        lock(&self.targets).insert(name.to_string(), container.to_string());
    }

    fn container(&self, target: &str, action: &str) -> Result<String, ControlError> {
        lock(&self.targets)
            .get(target)
            .cloned()
            .ok_or_else(|| ControlError::new(target, action, "unknown target"))
    }

    async fn live(&self, target: &str, action: &str) -> Result<ContainerState, ControlError> {
        let container = self.container(target, action)?;
        let info = self
            .docker
            .inspect_container(&container, None)
            .await
            .map_err(|e| ControlError::new(target, action, format!("inspect {container}: {e}")))?;
        let state = info.state.unwrap_or_default();
        let networks = info
            .network_settings
            .and_then(|n| n.networks)
            .unwrap_or_default();
        let ip = networks
            .get(&self.network)
            .or_else(|| networks.values().next())
            .and_then(|e| e.ip_address.clone())
            .filter(|ip| !ip.is_empty());
        if let Some(ip) = &ip {
            lock(&self.tracked)
                .ips
                .insert(target.to_string(), ip.clone());
        }
        Ok(ContainerState {
            id: info.id.unwrap_or_default(),
            pid: u32::try_from(state.pid.unwrap_or(0)).unwrap_or(0),
            running: state.running == Some(true),
            ip,
        })
    }

    async fn ip_of(&self, target: &str) -> Result<String, ControlError> {
        if let Some(ip) = lock(&self.tracked).ips.get(target) {
            return Ok(ip.clone());
        }
        self.live(target, "partition").await?.ip.ok_or_else(|| {
            ControlError::new(
                target,
                "partition",
                "container has no IP on the run's network",
            )
        })
    }

    /// Resumes every process this control stopped and flushes every namespace it touched,
    /// without Docker or an async runtime: the path for `Drop` and for signal handlers.
    pub fn heal_blocking(&self) {
        let mut t = lock(&self.tracked);
        for pids in t.stopped.values() {
            let pids: Vec<i32> = pids.iter().copied().collect();
            let _ = procs::signal_all(&pids, Signal::Cont);
        }
        t.stopped.clear();
        for pid in t.rules.values() {
            iptables::flush(*pid);
        }
        t.rules.clear();
        for container in t.throttled.values() {
            cpu::lift_blocking(container);
        }
        t.throttled.clear();
        if let Some(clocks) = &self.clocks {
            clocks.reset_all();
        }
    }

    /// Whether anything is currently stopped, cut or starved by this control.
    pub fn is_hurting(&self) -> bool {
        let t = lock(&self.tracked);
        !t.stopped.is_empty()
            || !t.rules.is_empty()
            || !t.throttled.is_empty()
            || self.clocks.as_ref().is_some_and(|c| c.any_moved())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

impl NodeControl for DockerControl {
    async fn signal(&self, target: &str, signal: Signal) -> Result<(), ControlError> {
        let action = format!("{signal:?}").to_lowercase();
        let live = self.live(target, &action).await?;
        let mut pids = procs::container_pids(&live.id);
        if pids.is_empty() && live.pid != 0 {
            pids.push(live.pid as i32);
        }
        match signal {
            Signal::Stop => {
                if !live.running {
                    return Err(ControlError::new(
                        target,
                        &action,
                        "container is not running",
                    ));
                }
                lock(&self.tracked)
                    .stopped
                    .entry(target.to_string())
                    .or_default()
                    .extend(pids.iter().copied());
            }
            Signal::Cont => {
                if let Some(known) = lock(&self.tracked).stopped.remove(target) {
                    pids.extend(known);
                }
                pids.sort_unstable();
                pids.dedup();
            }
            Signal::Kill => {
                lock(&self.tracked).stopped.remove(target);
                lock(&self.tracked).rules.remove(target);
                if !live.running {
                    return Ok(());
                }
                self.planned.expect(&self.container(target, &action)?);
            }
        }
        procs::signal_all(&pids, signal).map_err(|e| ControlError::new(target, &action, e))?;
        if signal == Signal::Kill {
            // The container is gone only once Docker says so; a restart before that races.
            for _ in 0..100 {
                if !self.live(target, &action).await?.running {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            return Err(ControlError::new(
                target,
                &action,
                "still running 5 s after SIGKILL",
            ));
        }
        Ok(())
    }

    async fn restart(&self, target: &str) -> Result<(), ControlError> {
        let container = self.container(target, "restart")?;
        self.restarter
            .restart(target, &container)
            .await
            .map_err(|e| ControlError::new(target, "restart", e))?;
        let mut t = lock(&self.tracked);
        t.stopped.remove(target);
        t.rules.remove(target);
        Ok(())
    }

    async fn partition(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.install(grudge, false).await
    }

    async fn partition_inbound(&self, grudge: &Grudge) -> Result<(), ControlError> {
        self.install(grudge, true).await
    }

    async fn shape_links(
        &self,
        target: &str,
        shaping: Option<LinkShaping>,
    ) -> Result<(), ControlError> {
        let Some(proxy) = &self.links else {
            return Err(ControlError::new(
                target,
                "shape links",
                "this run started no link proxy",
            ));
        };
        proxy
            .shape(target, shaping)
            .await
            .map_err(|e| ControlError::new(target, "shape links", e))
    }

    async fn cut_spent(&self, target: &str) -> Result<Option<bool>, ControlError> {
        let Some(proxy) = &self.links else {
            return Ok(None);
        };
        proxy
            .cut_spent(target)
            .await
            .map(Some)
            .map_err(|e| ControlError::new(target, "ask the link proxy about the cut of", e))
    }

    async fn set_clock(&self, target: &str, setting: ClockSetting) -> Result<(), ControlError> {
        let Some(clocks) = &self.clocks else {
            return Err(ControlError::new(
                target,
                "set clock",
                "this run's nodes were not started with a fake clock",
            ));
        };
        clocks
            .set(target, setting)
            .map_err(|e| ControlError::new(target, "set clock", e))
    }

    async fn empty_data(&self, target: &str) -> Result<(), ControlError> {
        if self.live(target, "empty the data of").await?.running {
            return Err(ControlError::new(
                target,
                "empty the data of",
                "it is running",
            ));
        }
        match &self.data {
            Some(root) => data::empty(root, target)
                .map_err(|e| ControlError::new(target, "empty the data of", e)),
            // Nothing persisted: it restarts empty anyway.
            None => Ok(()),
        }
    }

    async fn throttle(&self, target: &str, cpus: Option<f64>) -> Result<(), ControlError> {
        let container = self.container(target, "throttle")?;
        if cpus.is_some() {
            lock(&self.tracked)
                .throttled
                .insert(target.to_string(), container.clone());
        }
        cpu::limit(&self.docker, &container, cpus)
            .await
            .map_err(|e| ControlError::new(target, "throttle", e))?;
        if cpus.is_none() {
            lock(&self.tracked).throttled.remove(target);
        }
        Ok(())
    }

    async fn heal_network(&self) -> Result<(), ControlError> {
        let namespaces: Vec<u32> = std::mem::take(&mut lock(&self.tracked).rules)
            .into_values()
            .collect();
        blocking(move || namespaces.into_iter().for_each(iptables::flush)).await;
        Ok(())
    }
}

impl DockerControl {
    /// Installs `grudge` (both ways, or inbound only), replacing any previous partition.
    async fn install(&self, grudge: &Grudge, inbound_only: bool) -> Result<(), ControlError> {
        self.heal_network().await?;
        for node in grudge.nodes() {
            let live = self.live(node, "partition").await?;
            if !live.running {
                continue; // a dead node drops everything already; its restart brings a fresh netns
            }
            let mut peers = Vec::new();
            for from in grudge.0.get(node).into_iter().flatten() {
                peers.push(self.ip_of(from).await?);
            }
            lock(&self.tracked).rules.insert(node.to_string(), live.pid);
            let pid = live.pid;
            blocking(move || {
                if inbound_only {
                    iptables::install_inbound(pid, &peers)
                } else {
                    iptables::install(pid, &peers)
                }
            })
            .await
            .map_err(|e| ControlError::new(node, "partition", e))?;
        }
        Ok(())
    }
}

impl Drop for DockerControl {
    fn drop(&mut self) {
        if self.is_hurting() {
            self.heal_blocking();
        }
    }
}
