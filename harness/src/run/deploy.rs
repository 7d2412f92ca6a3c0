//! Phases 3–5 of a run in containers: the lock service's cluster (and the store a resource
//! needs), the resource server, and one container per worker — each the harness's own binary,
//! each on the run's network with its port published on 127.0.0.1.

use crate::config::clients::CLIENT_DIR_IN_CONTAINER;
use crate::config::{CounterStore, Provider, ResourceKind, TestPlan, Workload};
use anyhow::Context;
use containers::cluster::ClusterHandle;
use containers::docker::{ContainerSpec, Node, Readiness, Role, RunEnv};
use results::persistence::Persistence;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use workloads::resource::BackendKind;
use workloads::worker::WorkerLaunch;

/// The port every worker serves its control protocol on, inside its container.
pub const WORKER_PORT: u16 = 7100;
/// The resource server's port inside its container.
pub const RESOURCE_PORT: u16 = 7000;
/// Where the run directory is mounted in the resource container.
const RUN_DIR_IN_CONTAINER: &str = "/run-dir";

/// Everything a run started in Docker.
#[derive(Debug)]
pub struct Deployment {
    pub cluster: Arc<RwLock<ClusterHandle>>,
    /// Stores other than the lock service (PostgreSQL for the postgres resource).
    pub stores: Vec<ClusterHandle>,
    /// The fenced resource; none for the counter workload, which writes to its store directly.
    pub resource: Option<Node>,
    pub workers: Vec<Node>,
}

/// The environment variable whose value (letters, digits, dashes) starts every run id, so that
/// two checkouts on one machine (two CI jobs, two worktrees) running the same test do not sweep
/// each other's containers: the sweep at a run's start goes by run id.
pub const RUN_PREFIX_VAR: &str = "FENCECHECK_RUN_PREFIX";

/// A test name made safe as a Docker run id (the stale sweep at start uses it: re-running a test
/// removes what an earlier, killed run of the same test left), after the checkout's prefix.
pub fn run_id(plan: &TestPlan) -> String {
    run_id_after(&checkout_prefix(), plan)
}

/// The checkout's prefix from [`RUN_PREFIX_VAR`], made Docker-safe and at most 7 characters
/// (empty when unset).
pub fn checkout_prefix() -> String {
    let prefix =
        containers::docker::docker_safe(&std::env::var(RUN_PREFIX_VAR).unwrap_or_default());
    let prefix = prefix.trim_matches('-');
    prefix[..prefix.len().min(7)]
        .trim_end_matches('-')
        .to_string()
}

/// `id` after `prefix` (nothing when the prefix is empty), the whole at most 41 characters.
pub fn after_prefix(prefix: &str, id: &str) -> String {
    if prefix.is_empty() {
        return id.to_string();
    }
    let mut id = id.to_string();
    id.truncate(40 - prefix.len());
    format!("{prefix}-{}", id.trim_matches('-'))
}

/// [`run_id`] after a given prefix (already made safe by [`checkout_prefix`]; empty: none).
fn run_id_after(prefix: &str, plan: &TestPlan) -> String {
    after_prefix(prefix, &test_run_id(plan, 40 - prefix.len()))
}

/// The run id of the test alone, at most `max` characters (a slotted id a few more).
fn test_run_id(plan: &TestPlan, max: usize) -> String {
    let mut id = containers::docker::docker_safe(&plan.name);
    match plan.docker_slot {
        None => {
            id.truncate(max);
            id.trim_matches('-').to_string()
        }
        Some(slot) => {
            // Two cells whose names share 30 characters must not share containers either.
            let hash = plan.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            id.truncate(max.saturating_sub(10));
            format!("{}-{:06x}-j{slot}", id.trim_matches('-'), hash & 0xff_ffff)
        }
    }
}

/// Starts the lock service's cluster and any store the resource needs, concurrently.
pub async fn start_clusters(
    env: &RunEnv,
    plan: &TestPlan,
) -> anyhow::Result<(ClusterHandle, Vec<ClusterHandle>)> {
    let system = plan.provider;
    let mut stores = Vec::new();
    let (resource, counter) = match plan.workload {
        Workload::FencedWrite => (Some(plan.resource), None),
        Workload::Counter(store) => (None, Some(store)),
    };
    // A store the lock service already is (Redis, PostgreSQL) is not started twice: the resource
    // writes to the lock service's own server, as an application keeping its lock and its data
    // in one database does.
    let needs_postgres = (resource == Some(ResourceKind::Postgres)
        || counter == Some(CounterStore::Postgres))
        && system != Provider::Postgres;
    let needs_redis = (resource == Some(ResourceKind::RedisFenced)
        || counter == Some(CounterStore::Redis))
        && system != Provider::Redis;
    if needs_postgres {
        stores.push(Provider::Postgres);
    }
    if needs_redis {
        stores.push(Provider::Redis);
    }
    // The servers start under libfaketime only when the plan moves their clocks.
    let clocks = fake_clock_root(env, plan).filter(|_| plan.fake_clocks);
    let data = data_root(env, plan);
    let lock = env.start_lock_service(system, plan.persistence, clocks.as_deref(), data.as_deref());
    let others = futures::future::join_all(stores.into_iter().map(|s| env.start_cluster(s)));
    let (lock, others) = tokio::join!(lock, others);
    let lock = lock.with_context(|| format!("starting the {system} cluster"))?;
    let others = others
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .context("starting a store")?;
    Ok((lock, others))
}

/// Where the fake clocks of the lock-service nodes and of the workers' lock clients live
/// (`<run>/clocks/<node or worker>/`), when the plan moves clocks (a clock fault, a client clock
/// fault, a replay's clock step): only then do the servers (or the workers) start under
/// libfaketime.
/// Where the lock service's servers keep their data on the host, when the run needs it there:
/// its Redis servers persist, or its plan restarts a server without its data.
pub fn data_root(env: &RunEnv, plan: &TestPlan) -> Option<std::path::PathBuf> {
    let run = env.run_dir()?;
    (plan.persistence != Persistence::None || plan.empties_data)
        .then(|| run.join(containers::control::data::DIR))
}

pub fn fake_clock_root(env: &RunEnv, plan: &TestPlan) -> Option<std::path::PathBuf> {
    (plan.fake_clocks || plan.fake_client_clocks).then(|| {
        env.run_dir()
            .unwrap_or(std::path::Path::new("."))
            .join("clocks")
    })
}

fn store<'a>(
    lock: &'a ClusterHandle,
    stores: &'a [ClusterHandle],
    system: Provider,
) -> Option<&'a ClusterHandle> {
    std::iter::once(lock)
        .chain(stores)
        .find(|c| c.provider == system)
}

/// The resource server's flags for the plan's resource.
fn resource_args(
    plan: &TestPlan,
    lock: &ClusterHandle,
    stores: &[ClusterHandle],
    clock_start: u64,
) -> anyhow::Result<Vec<String>> {
    let (backend, mode) = plan.resource.server();
    let mut args = vec![
        "resource".to_string(),
        format!("--listen=0.0.0.0:{RESOURCE_PORT}"),
        format!("--backend={}", backend.as_str()),
        format!("--mode={}", mode.as_str()),
        format!(
            "--log={RUN_DIR_IN_CONTAINER}/{}",
            results::layout::RESOURCE_LOG
        ),
        format!("--clock-start={clock_start}"),
    ];
    match backend {
        BackendKind::EtcdGuard => {
            args.push(format!("--etcd={}", lock.network_endpoints().join(",")))
        }
        BackendKind::Postgres => {
            let pg = store(lock, stores, Provider::Postgres).context("no PostgreSQL started")?;
            let node = pg.nodes.first().context("PostgreSQL has no node")?;
            let host = node.address.split(':').next().unwrap_or_default();
            args.push(format!("--postgres=host={host} port=5432 user=postgres"));
        }
        BackendKind::RedisFenced => {
            let r = store(lock, stores, Provider::Redis).context("no Redis started")?;
            let ep = r
                .network_endpoints()
                .into_iter()
                .next()
                .context("Redis has no node")?;
            args.push(format!("--redis=redis://{ep}"));
        }
        BackendKind::Register => {}
    }
    Ok(args)
}

/// Starts the resource server with the run directory mounted, so its log lands in the run.
pub async fn start_resource(
    env: &RunEnv,
    plan: &TestPlan,
    run_dir: &Path,
    lock: &ClusterHandle,
    stores: &[ClusterHandle],
    clock_start: u64,
) -> anyhow::Result<Node> {
    let binary = std::env::current_exe().context("locating the fencecheck binary to mount")?;
    let args = resource_args(plan, lock, stores, clock_start)?;
    let run_dir = std::fs::canonicalize(run_dir)
        .with_context(|| format!("resolving {}", run_dir.display()))?;
    let spec = ContainerSpec::fencecheck("resource", binary, args)
        .bind(run_dir, RUN_DIR_IN_CONTAINER, false)
        .port(RESOURCE_PORT)
        .role(Role::Resource)
        .ready(Readiness::LogLine("listening on".into()))
        .ready_timeout(Duration::from_secs(45));
    env.start_container(spec)
        .await
        .context("starting the resource server")
}

/// The worker's `--counter-store` target for the counter workload (`None` for fenced writes):
/// a Redis URL or PostgreSQL string on the run's network, or `etcd-guard` (the worker's
/// `--endpoints` are then the etcd members the guard writes to).
fn counter_target(
    plan: &TestPlan,
    lock: &ClusterHandle,
    stores: &[ClusterHandle],
) -> anyhow::Result<Option<String>> {
    let Workload::Counter(store_kind) = plan.workload else {
        return Ok(None);
    };
    Ok(Some(match store_kind {
        CounterStore::Postgres => {
            let pg = store(lock, stores, Provider::Postgres).context("no PostgreSQL started")?;
            let node = pg.nodes.first().context("PostgreSQL has no node")?;
            let host = node.address.split(':').next().unwrap_or_default();
            format!("host={host} port=5432 user=postgres")
        }
        CounterStore::EtcdGuard => "etcd-guard".to_string(),
        CounterStore::Redis => {
            let r = store(lock, stores, Provider::Redis).context("no Redis started")?;
            let ep = r
                .network_endpoints()
                .into_iter()
                .next()
                .context("Redis has no node")?;
            format!("redis://{ep}")
        }
        CounterStore::Memory => {
            anyhow::bail!("the memory counter store does not run in containers")
        }
    }))
}

/// The launch of the worker `owner` in a container: the plan's launch, with the lock service's
/// endpoints on the run's network, the resource's address or the counter's store, and the run's
/// clock.
fn container_launch(
    plan: &TestPlan,
    owner: &str,
    lock: &ClusterHandle,
    resource: Option<&Node>,
    clock_start: u64,
    counter: Option<&str>,
) -> WorkerLaunch {
    let mut launch = super::launch::worker_launch(plan, owner);
    launch.endpoints = lock.network_endpoints();
    launch.resource = resource
        .filter(|_| plan.workload == Workload::FencedWrite)
        .map(|r| r.address.clone());
    launch.counter_store = counter.map(str::to_string);
    launch.clock_start = Some(clock_start);
    launch
}

/// The `fencecheck worker` arguments of a container: where it listens ([`WORKER_PORT`]), and
/// its launch whole.
pub fn worker_args(launch: &WorkerLaunch) -> anyhow::Result<Vec<String>> {
    let json = serde_json::to_string(launch).context("writing the worker's launch")?;
    Ok(vec![
        "worker".to_string(),
        format!("--listen=0.0.0.0:{WORKER_PORT}"),
        format!("--launch={json}"),
    ])
}

/// The name of worker `i` (0-based): `worker-1` ...
pub fn worker_name(i: usize) -> String {
    format!("worker-{}", i + 1)
}

/// Starts every worker container concurrently, named `worker-1` ... (the container's short name
/// and the worker's owner name are the same).
pub async fn start_workers(
    env: &RunEnv,
    plan: &TestPlan,
    lock: &ClusterHandle,
    resource: &Node,
    clock_start: u64,
) -> anyhow::Result<Vec<Node>> {
    start_workers_with(env, plan, lock, &[], Some(resource), clock_start).await
}

/// [`start_workers`] for a run that started other stores (the counter workload's store).
pub async fn start_workers_with(
    env: &RunEnv,
    plan: &TestPlan,
    lock: &ClusterHandle,
    stores: &[ClusterHandle],
    resource: Option<&Node>,
    clock_start: u64,
) -> anyhow::Result<Vec<Node>> {
    let names: Vec<(String, String)> = (0..plan.workers as usize)
        .map(|i| (worker_name(i), worker_name(i)))
        .collect();
    let serving = Serving {
        lock,
        stores,
        resource,
        links: None,
    };
    start_named_workers_with(env, plan, &names, &serving, clock_start).await
}

/// Starts one worker container per `(container short name, owner name)`, concurrently.
pub async fn start_named_workers(
    env: &RunEnv,
    plan: &TestPlan,
    names: &[(String, String)],
    lock: &ClusterHandle,
    resource: &Node,
    clock_start: u64,
) -> anyhow::Result<Vec<Node>> {
    let serving = Serving {
        lock,
        stores: &[],
        resource: Some(resource),
        links: None,
    };
    start_named_workers_with(env, plan, names, &serving, clock_start).await
}

/// What the workers talk to: the lock service, the stores a counter writes to, the resource,
/// and the link proxy in front of the lock service when the plan has link faults.
#[derive(Clone, Copy)]
pub struct Serving<'a> {
    pub lock: &'a ClusterHandle,
    pub stores: &'a [ClusterHandle],
    pub resource: Option<&'a Node>,
    pub links: Option<&'a super::links::Links>,
}

/// [`start_named_workers`] for a run that started other stores (the counter workload's store)
/// or a link proxy.
pub async fn start_named_workers_with(
    env: &RunEnv,
    plan: &TestPlan,
    names: &[(String, String)],
    serving: &Serving<'_>,
    clock_start: u64,
) -> anyhow::Result<Vec<Node>> {
    let Serving {
        lock,
        stores,
        resource,
        links,
    } = *serving;
    let binary = std::env::current_exe().context("locating the fencecheck binary to mount")?;
    let counter = counter_target(plan, lock, stores)?;
    let mut specs = Vec::with_capacity(names.len());
    for (container, owner) in names {
        let mut launch =
            container_launch(plan, owner, lock, resource, clock_start, counter.as_deref());
        if let Some(links) = links {
            super::links::point_at_proxy(&mut launch, links, container);
        }
        let mut spec = ContainerSpec::fencecheck(container, binary.clone(), worker_args(&launch)?);
        // A client clock fault moves the wall clock of the worker and of every process it
        // starts (an adapter inherits the preload): the lock client's own clock.
        if let (true, Some(root)) = (plan.fake_client_clocks, fake_clock_root(env, plan)) {
            containers::control::clock::fake(&mut spec, &root.join(container))
                .with_context(|| format!("{container}: its fake clock"))?;
        }
        // An adapter's worker runs in the client image (its library installed), with the
        // user's own adapter folder mounted read-only.
        if let Some(image) = &plan.client_image {
            spec = spec.image(image.clone());
        }
        if let Some(dir) = plan.client.adapter().and_then(|a| a.dir.clone()) {
            spec = spec.bind(dir, CLIENT_DIR_IN_CONTAINER, true);
        }
        specs.push(
            spec.port(WORKER_PORT)
                .role(Role::Worker)
                .ready(Readiness::Listening(WORKER_PORT))
                .ready_timeout(Duration::from_secs(45)),
        );
    }
    futures::future::join_all(specs.into_iter().map(|spec| env.start_container(spec)))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .context("starting the workers")
}

#[cfg(test)]
mod tests;
