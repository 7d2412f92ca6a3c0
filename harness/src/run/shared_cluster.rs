//! A lock service's cluster that several runs use, at once or one after another (a matrix's
//! runs with `--jobs`): started once on a network of its own, each run joining that network
//! with its own workers, resource and link proxy, and taking a lock name no run on the cluster
//! used before. Which runs may share is decided from the fault table and the plan
//! ([`sharing`]): a run whose faults touch only its own containers and links, whose servers need
//! no fake clock or data directory, whose resource keeps its state in its own container, and
//! whose lock client names every key after the run's lock (fencecheck's recipes and the shipped
//! adapters; not an adapter of the user's own, nor an advisory lock keyed by a short hash). A cluster is used only after [`SharedCluster::verify`] found it whole; one that
//! is not is torn down and a fresh one started (docs/design.md, "Shared clusters").

use super::deploy;
use crate::config::{TestPlan, Workload};
use anyhow::Context;
use containers::cluster::ClusterHandle;
use containers::docker::RunEnv;
use results::persistence::Persistence;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use workloads::kinds::Provider;
use workloads::resource::BackendKind;

/// The provider whose cluster `plan` can share with other runs, or why it needs one of its
/// own.
pub fn sharing(plan: &TestPlan) -> Result<Provider, String> {
    if let Some(why) = plan.provider.no_servers_because() {
        return Err(format!("{} {why}", plan.provider));
    }
    if let Some(step) = plan
        .faults
        .plan
        .steps
        .iter()
        .find(|s| s.fault.cannot_share_a_cluster().is_some())
    {
        let why = step.fault.cannot_share_a_cluster().unwrap_or_default();
        return Err(format!("{}: {why}", step.fault));
    }
    if let Some(adapter) = plan.client.adapter() {
        if !adapter.shipped {
            return Err(format!(
                "adapter {} is the user's own: nothing says it names its keys after the lock",
                adapter.name
            ));
        }
        if plan.provider == Provider::Postgres {
            return Err(format!(
                "{}'s advisory lock key is a hash of the lock name (tooz's postgres driver keeps \
                 16 bits of it): two runs' names may take one lock",
                adapter.name
            ));
        }
    }
    if plan.fake_clocks {
        return Err("its servers run under fake clocks".into());
    }
    if plan.empties_data || plan.persistence != Persistence::None {
        return Err("its servers keep their data in a directory of the run".into());
    }
    if let Workload::Counter(store) = plan.workload {
        return Err(format!(
            "its counter lives in a {store} store every run on the cluster would write"
        ));
    }
    let (backend, _) = plan.resource.server();
    if backend != BackendKind::Register {
        return Err(format!(
            "its resource ({}) keeps its state in a server every run on the cluster would write",
            plan.resource
        ));
    }
    Ok(plan.provider)
}

/// What a run needs of a cluster it did not start: whose it is, its network and its nodes.
#[derive(Debug, Clone)]
pub struct OnCluster {
    /// The cluster environment's run id (its containers' label and name prefix).
    pub id: String,
    pub network: String,
    pub lock: ClusterHandle,
    /// Where the nodes' output is kept (`<logs>/nodes/`).
    pub logs: PathBuf,
}

/// A started cluster that outlives the runs on it. Its methods are async; the matrix drives
/// them from a runtime of its own, since every run has its own.
pub struct SharedCluster {
    pub provider: Provider,
    env: Arc<RunEnv>,
    on: OnCluster,
}

impl SharedCluster {
    /// Starts a `provider` cluster under the Docker run id `id`, its nodes' output under `logs`.
    pub async fn start(id: &str, provider: Provider, logs: &Path) -> anyhow::Result<SharedCluster> {
        std::fs::create_dir_all(logs).with_context(|| format!("creating {}", logs.display()))?;
        let env = Arc::new(
            RunEnv::create_for_cluster(id, logs)
                .await
                .with_context(|| format!("creating the environment of shared cluster {id}"))?,
        );
        let lock = env
            .start_lock_service(provider, Persistence::None, None, None)
            .await
            .with_context(|| format!("starting the shared {provider} cluster {id}"));
        let lock = match lock {
            Ok(lock) => lock,
            Err(e) => {
                let _ = env.teardown().await;
                return Err(e);
            }
        };
        let on = OnCluster {
            id: id.to_string(),
            network: env.network().to_string(),
            lock,
            logs: logs.to_path_buf(),
        };
        Ok(SharedCluster { provider, env, on })
    }

    pub fn on(&self) -> &OnCluster {
        &self.on
    }

    /// Whether the next run may use the cluster: every node running, none of its processes
    /// stopped, paused, starved or behind an iptables rule, and the service ready (quorum,
    /// leader, replicas). `Err` says what is wrong; such a cluster is torn down, never used.
    pub async fn verify(&self) -> Result<(), String> {
        let names: Vec<String> = self.on.lock.nodes.iter().map(|n| n.name.clone()).collect();
        let audit = containers::control::audit::audit(self.env.docker(), &names).await?;
        if !audit.not_running.is_empty() {
            return Err(format!("not running: {}", audit.not_running.join(", ")));
        }
        if !audit.is_clean() {
            return Err(format!("hurt after its last run: {audit:?}"));
        }
        for name in &names {
            let info = self
                .env
                .docker()
                .inspect_container(name, None)
                .await
                .map_err(|e| format!("inspect {name}: {e}"))?;
            if info.state.and_then(|s| s.paused) == Some(true) {
                return Err(format!("{name} is paused"));
            }
        }
        self.on.lock.check_ready().await
    }

    /// Removes the cluster's containers and network; the nodes' output stays under its logs.
    pub async fn teardown(&self) -> anyhow::Result<()> {
        self.env
            .teardown()
            .await
            .with_context(|| format!("tearing down shared cluster {}", self.on.id))
    }

    /// The containers of the cluster (for a test that hurts one).
    pub fn env(&self) -> &RunEnv {
        &self.env
    }
}

/// A Docker run id for a new shared `provider` cluster, after the checkout's prefix: the
/// process id and a count of this process's shared clusters keep it apart from every other.
pub fn cluster_id(provider: Provider) -> String {
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    let n = STARTED.fetch_add(1, Ordering::SeqCst) + 1;
    deploy::after_prefix(
        &deploy::checkout_prefix(),
        &format!("shared-{provider}-{}-{n}", std::process::id()),
    )
}
