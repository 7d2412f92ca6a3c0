//! The Docker [`Site`]: phases 2–5 and 8 of a run in containers. It builds the node image if it
//! is missing, starts the run's network, the lock service's cluster (and any store the resource
//! needs), the resource server and one container per worker ([`super::deploy`]); it applies the
//! fault plan through [`DockerControl`], watches for nodes that die outside the plan, brings
//! killed workers back, and removes everything at the end (its `finish`, the environment's guard
//! on a panic, its signal thread on Ctrl-C).

use super::deploy::{self, Deployment, WORKER_PORT};
use super::driven::Driven;
use super::prepare::HarnessLog;
use super::progress::Progress;
use super::shared_cluster::OnCluster;
use super::site::Site;
use crate::config::{TestPlan, Workload};
use anyhow::Context;
use containers::control::topology::{targets, targets_of, ClusterRestart, RunTopology};
use containers::control::unplanned::{self, Unplanned};
use containers::control::DockerControl;
use containers::docker::{DockerError, Role, RunEnv};
use futures::future::BoxFuture;
use nemesis::{Nemesis, Plan};
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use results::{EventFault, FaultPhase, NemesisEvent, RunClock};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use workloads::driver::{Hangs, Recorder, WorkerConn};

/// A run deployed in Docker.
pub struct ContainerSite {
    pub env: Arc<RunEnv>,
    pub clock: RunClock,
    pub deployment: Deployment,
    pub restart: Arc<ClusterRestart>,
    pub control: DockerControl,
    topology: RunTopology,
    /// The nemesis's name -> container name, for every node and worker.
    names: BTreeMap<String, String>,
    worker_names: Vec<String>,
    time_limit: Duration,
    /// How far clock faults move a node's clock (from the ttl).
    clock_faults: nemesis::ClockFaults,
    log: HarnessLog,
}

impl ContainerSite {
    /// The lock service's cluster as it stands now (a restarted node has its new address).
    fn cluster(&self) -> containers::cluster::ClusterHandle {
        self.deployment
            .cluster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Deploys `plan` (building the node image if it is missing), on the shared cluster `on`
    /// when given; `moments` is where the live view keeps the current holder and the workers
    /// in flight, which the nemesis's holder and in-flight faults target. On an error
    /// everything started so far is removed.
    pub async fn deploy(
        plan: &TestPlan,
        dir: &RunDir,
        log: &HarnessLog,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
        on: Option<&OnCluster>,
    ) -> anyhow::Result<ContainerSite> {
        let names: Vec<(String, String)> = (0..plan.workers as usize)
            .map(|i| (deploy::worker_name(i), deploy::worker_name(i)))
            .collect();
        let how = Deploying {
            plan,
            dir,
            log,
            workers: &names,
            on,
        };
        Self::deploy_as(&how, progress, moments).await
    }

    /// [`ContainerSite::deploy`] with one worker per `(container short name, owner name)`
    /// (a replay names its workers after the scenario's), on a cluster of its own.
    pub async fn deploy_named(
        plan: &TestPlan,
        dir: &RunDir,
        log: &HarnessLog,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
        workers: &[(String, String)],
    ) -> anyhow::Result<ContainerSite> {
        let how = Deploying {
            plan,
            dir,
            log,
            workers,
            on: None,
        };
        Self::deploy_as(&how, progress, moments).await
    }

    async fn deploy_as(
        how: &Deploying<'_>,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
    ) -> anyhow::Result<ContainerSite> {
        let env = Arc::new(create_env(how, progress).await?);
        how.log.line(&format!("network {} created", env.network()));
        match Self::start(&env, how, progress, moments).await {
            Ok(site) => Ok(site),
            Err(e) => {
                let torn = env.teardown().await;
                how.log
                    .line(&format!("teardown after a failed start: {torn:?}"));
                Err(e)
            }
        }
    }

    async fn start(
        env: &Arc<RunEnv>,
        how: &Deploying<'_>,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
    ) -> anyhow::Result<ContainerSite> {
        let Deploying {
            plan,
            dir,
            log,
            workers: named,
            on,
        } = *how;
        let (lock, stores) = match on {
            Some(on) => {
                log.line(&format!(
                    "cluster {} shared: {} (started before this run; its nodes' output in {})",
                    on.lock.provider,
                    on.id,
                    on.logs.join("nodes").display()
                ));
                (on.lock.clone(), Vec::new())
            }
            None => deploy::start_clusters(env, plan).await?,
        };
        log.line(&format!(
            "cluster {} up: {:?}",
            lock.provider,
            lock.endpoints()
        ));
        let clock = RunClock::start();
        // The counter workload writes to its store directly: no resource server to start.
        let resource = if plan.workload == Workload::FencedWrite {
            progress.phase("resource");
            let node =
                deploy::start_resource(env, plan, &dir.path, &lock, &stores, clock.start_ns())
                    .await?;
            log.line(&format!("resource up at {}", node.address));
            Some(node)
        } else {
            None
        };
        let links = if super::links::needed(plan) {
            let workers: Vec<String> = named.iter().map(|(c, _)| c.clone()).collect();
            let binary =
                std::env::current_exe().context("locating the fencecheck binary to mount")?;
            let mut links = super::links::start(env, &lock, &workers, binary).await?;
            links.control.cut_reply_to = plan.cut_reply_to.clone();
            log.line(&format!(
                "link proxy up, control at {}",
                links.control.control
            ));
            Some(links)
        } else {
            None
        };
        progress.phase("workers");
        let serving = deploy::Serving {
            lock: &lock,
            stores: &stores,
            resource: resource.as_ref(),
            links: links.as_ref(),
        };
        let workers =
            deploy::start_named_workers_with(env, plan, named, &serving, clock.start_ns()).await?;
        log.line(&format!("{} workers up", workers.len()));
        let deployment = Deployment {
            cluster: Arc::new(RwLock::new(lock)),
            stores,
            resource,
            workers,
        };
        let worker_names: Vec<String> = named.iter().map(|(c, _)| c.clone()).collect();
        let mut topology = RunTopology::new(
            env,
            deployment.cluster.clone(),
            worker_names.clone(),
            deployment.resource.as_ref().map(|_| "resource".into()),
        );
        topology.moments = moments;
        if let Some(on) = on {
            topology = topology.with_nodes_of(&on.id);
        }
        let restart = Arc::new(ClusterRestart::new(
            env.clone(),
            deployment.cluster.clone(),
            deployment
                .workers
                .iter()
                .cloned()
                .chain(deployment.resource.clone())
                .collect(),
        ));
        let mut names: BTreeMap<String, String> = {
            let cluster = deployment.cluster.read().unwrap_or_else(|p| p.into_inner());
            match on {
                Some(on) => targets_of(&on.id, cluster.nodes.iter()),
                None => targets(env, cluster.nodes.iter()),
            }
        };
        names.extend(targets(
            env,
            deployment.workers.iter().chain(&deployment.resource),
        ));
        for store in &deployment.stores {
            names.extend(targets(env, store.nodes.iter()));
        }
        let mut control = DockerControl::new(
            env.docker().clone(),
            env.network(),
            names.clone(),
            restart.clone(),
        );
        if let Some(root) = deploy::fake_clock_root(env, plan) {
            control = control.with_fake_clocks(root);
        }
        if let Some(links) = &links {
            control = control.with_link_proxy(links.control.clone());
        }
        if let Some(root) = deploy::data_root(env, plan) {
            control = control.with_data_dirs(root);
        }
        Ok(ContainerSite {
            env: env.clone(),
            clock,
            deployment,
            restart,
            control,
            topology,
            names,
            worker_names,
            time_limit: plan.time_limit.get(),
            clock_faults: nemesis::ClockFaults::for_timing(
                plan.ttl().get(),
                plan.client_timing.op_timeout,
            ),
            log: log.clone(),
        })
    }

    /// Worker `i`'s control port on 127.0.0.1, as it is now (a restart publishes a new one).
    fn worker_addr(&self, i: usize) -> Option<SocketAddr> {
        let name = self.deployment.workers.get(i)?.name.clone();
        let port = self.restart.node(&name)?.host_port(WORKER_PORT)?;
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    }
}

/// How a run is deployed: its plan, its directory and log, its workers' names, and the
/// shared cluster it runs on, if any.
#[derive(Clone, Copy)]
struct Deploying<'a> {
    plan: &'a TestPlan,
    dir: &'a RunDir,
    log: &'a HarnessLog,
    workers: &'a [(String, String)],
    on: Option<&'a OnCluster>,
}

/// The run's Docker environment (on the shared cluster's network when it has one), the node
/// image built first when it is missing.
async fn create_env(how: &Deploying<'_>, progress: &mut Progress) -> anyhow::Result<RunEnv> {
    let Deploying { plan, dir, log, .. } = *how;
    progress.phase("cluster");
    let run_id = deploy::run_id(plan);
    let open = || async {
        match how.on {
            Some(on) => RunEnv::join(&run_id, Some(&dir.path), &on.network).await,
            None => RunEnv::create(&run_id, Some(&dir.path)).await,
        }
    };
    let env = match open().await {
        Err(DockerError::ImageMissing { image }) => {
            progress.phase("image");
            log.line(&format!("node image {image} missing: building it"));
            progress.println(&format!(
                "fencecheck: the node image {image} is missing; building it (about 2 minutes, once)"
            ));
            tokio::task::spawn_blocking(|| {
                containers::image::build(&containers::image::BuildOptions::node_image())
            })
            .await
            .context("building the node image")??;
            progress.phase("cluster");
            open().await
        }
        other => other,
    };
    let env = env.context("creating the run's Docker environment")?;
    if let Some(image) = &plan.client_image {
        ensure_client_image(image, log, progress).await?;
    }
    Ok(env)
}

/// Builds the client image on first use (the adapters' libraries, minutes once); a custom
/// `client_image` must already be there.
async fn ensure_client_image(
    image: &str,
    log: &HarnessLog,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let ours = containers::image::client_image_tag();
    let tag = image.to_string();
    let present =
        tokio::task::spawn_blocking(move || containers::image::build::image_present(&tag))
            .await
            .context("looking up the client image")??;
    if present {
        return Ok(());
    }
    anyhow::ensure!(
        image == ours,
        "client_image {image} is not present: build it (FROM {ours}, say) or drop client_image"
    );
    progress.phase("image");
    log.line(&format!("client image {image} missing: building it"));
    progress.println(&format!(
        "fencecheck: the client image {image} is missing; building it (about 6 minutes, once)"
    ));
    tokio::task::spawn_blocking(|| containers::image::build_client(false))
        .await
        .context("building the client image")??;
    progress.phase("cluster");
    Ok(())
}

impl Site for ContainerSite {
    fn clock(&self) -> RunClock {
        self.clock
    }

    fn workers(&self) -> usize {
        self.deployment.workers.len()
    }

    fn connect<'a>(
        &'a self,
        worker: usize,
        recorder: &'a Recorder,
        until_ns: u64,
    ) -> BoxFuture<'a, anyhow::Result<Option<WorkerConn>>> {
        Box::pin(async move {
            let name = &self.worker_names[worker];
            let addr = self
                .worker_addr(worker)
                .with_context(|| format!("{name}: no published worker port"))?;
            match WorkerConn::connect(addr, Duration::from_secs(30), recorder.clone()).await {
                Ok(c) => Ok(Some(c)),
                // Not back before the end of the workload: nothing left to do.
                Err(_) if recorder.clock.now() >= until_ns => Ok(None),
                Err(e) => Err(anyhow::anyhow!("{name}: {e}")),
            }
        })
    }

    fn restarted(&self, worker: usize, until_ns: u64) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let before = self.worker_addr(worker);
            let mut restarts = self.restart.subscribe();
            loop {
                if self.worker_addr(worker) != before {
                    return true;
                }
                let left = until_ns.saturating_sub(self.clock.now());
                if left == 0 {
                    return false;
                }
                let changed = tokio::time::timeout(Duration::from_nanos(left), restarts.changed());
                if !matches!(changed.await, Ok(Ok(()))) {
                    return self.worker_addr(worker) != before;
                }
            }
        })
    }

    fn faults<'a>(
        &'a self,
        plan: &'a Plan,
        history: &'a HistoryWriter,
        hangs: &'a Hangs,
        cancel: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, anyhow::Result<nemesis::Summary>> {
        Box::pin(async move {
            let control = Driven {
                control: &self.control,
                hangs,
            };
            let nemesis = Nemesis::new(&control, &self.topology, history, self.clock)
                .ending_at(self.time_limit)
                .with_clock_faults(self.clock_faults);
            Ok(nemesis.run(plan, cancel).await?)
        })
    }

    fn one_step<'a>(&'a self, history: &'a HistoryWriter) -> Box<dyn nemesis::OneStep + 'a> {
        Box::new(
            Nemesis::new(&self.control, &self.topology, history, self.clock)
                .with_clock_faults(self.clock_faults),
        )
    }

    fn data_nodes(&self) -> Vec<String> {
        self.cluster()
            .nodes
            .iter()
            .filter(|n| matches!(n.role, Role::Master | Role::Replica))
            .map(|n| containers::control::topology::short_name(&self.env, &n.name))
            .collect()
    }

    fn lease_expired<'a>(
        &'a self,
        lock: &'a str,
        lease: &'a str,
        limit: Duration,
    ) -> BoxFuture<'a, Result<Duration, String>> {
        Box::pin(async move {
            super::lease_expiry::wait_expired(&self.cluster(), lock, lease, limit).await
        })
    }

    fn watch(&self, history: &Arc<HistoryWriter>) -> Box<dyn Send> {
        let nodes: BTreeMap<String, String> = self
            .names
            .iter()
            .filter(|(target, _)| !self.worker_names.contains(target))
            .map(|(target, container)| (container.clone(), target.clone()))
            .collect();
        let (history, log, clock) = (history.clone(), self.log.clone(), self.clock);
        let blind_log = self.log.clone();
        Box::new(unplanned::watch(
            self.env.docker().clone(),
            self.env.run_id(),
            nodes,
            self.control.planned_deaths(),
            move |node| {
                let (phase, fault, said) = match node.what {
                    Unplanned::Died { .. } => (FaultPhase::Start, EventFault::NodeDied, "died"),
                    Unplanned::Back => (FaultPhase::Stop, EventFault::NodeDied, "came back"),
                    Unplanned::Frozen => (FaultPhase::Start, EventFault::NodeFrozen, "froze"),
                    Unplanned::Thawed => (FaultPhase::Stop, EventFault::NodeFrozen, "thawed"),
                };
                let mut e = NemesisEvent::new(phase, fault, vec![node.target.clone()])
                    .with("container", node.container.clone())
                    .with("planned", false);
                if let Unplanned::Died { exit_code } = node.what {
                    e = e.with("exit_code", exit_code);
                }
                log.line(&format!(
                    "{} ({}) {said} outside the fault plan ({:?})",
                    node.target, node.container, node.what
                ));
                if let Err(err) = history.record(e.event(clock.now())) {
                    log.line(&format!("recording that {} {said}: {err}", node.target));
                }
            },
            move |why| {
                let line = format!(
                    "the watch for nodes dying or freezing outside the plan stopped ({why}): \
                     later events are not recorded"
                );
                eprintln!("fencecheck: warning: {line}");
                blind_log.line(&line);
            },
        ))
    }

    fn observe<'a>(
        &'a self,
        path: &'a std::path::Path,
    ) -> BoxFuture<'a, anyhow::Result<Box<dyn Send>>> {
        Box::pin(async move {
            let observer =
                super::observe::start(&self.deployment.cluster, self.clock, path, &self.log)
                    .await?;
            Ok(Box::new(observer) as Box<dyn Send>)
        })
    }

    fn finish(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let torn = self.env.teardown().await;
            self.log.line(&format!("teardown: {torn:?}"));
            torn.context("tearing down the run's containers")
        })
    }
}
