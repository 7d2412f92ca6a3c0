//! `fencecheck worker`: one lock-client process, started by the harness inside its own
//! container on the run's network (the harness's binary bind-mounted), serving the control
//! protocol of `workloads::protocol` on `--listen` (published on 127.0.0.1). Everything it does
//! lives in `workloads::worker`; this file turns flags into a validated recipe config, connects
//! the recipe and the resource client, and serves until killed.
//!
//! On start it prints `fencecheck worker: <name> listening on <addr>` to stderr.

use anyhow::Context;
use results::RunClock;
use std::time::Duration;
use workloads::config::{Discipline, RawRecipeConfig, RecipeKind};
use workloads::fenced_write::{MemoryMode, MemoryResource, ResourceWriter};
use workloads::recipes::Target;
use workloads::worker::Worker;

/// Arguments of `fencecheck worker`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to serve the control protocol on.
    #[arg(long, default_value = "0.0.0.0:7100")]
    pub listen: std::net::SocketAddr,
    /// This worker's name (the `owner` of its acquisitions).
    #[arg(long, default_value = "worker")]
    pub name: String,
    /// etcd-lease | etcd-lock | zk-lock | redis-lock | redis-lock-del | redlock | redis-sentinel | memory
    #[arg(long, value_parser = |s: &str| s.parse::<RecipeKind>())]
    pub recipe: RecipeKind,
    /// The provider (etcd, zookeeper, redis, redlock, redis-sentinel, memory); checked against
    /// the recipe when given.
    #[arg(long)]
    pub provider: Option<String>,
    /// Provider endpoints, comma-separated `host:port` (etcd members, ZooKeeper servers, the
    /// Redis server, the 5 Redlock masters, or the sentinels).
    #[arg(long, value_delimiter = ',')]
    pub endpoints: Vec<String>,
    /// The master name the sentinels monitor (redis-sentinel).
    #[arg(long, default_value = "mymaster")]
    pub sentinel_master: String,
    /// Lease / key ttl (default 5s).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub ttl: Option<Duration>,
    /// Time between renewals, less than ttl/2 (default ttl/3).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub renew_interval: Option<Duration>,
    /// ZooKeeper session timeout (default ttl).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub session_timeout: Option<Duration>,
    /// Deadline of one provider or resource request, less than ttl (default min(ttl/2, 2s)).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub op_timeout: Option<Duration>,
    /// How long one acquire may wait for the lock (default 10s).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub acquire_timeout: Option<Duration>,
    /// Client discipline: `stop` or `continue` on suspect, `background` or `inline` renewal
    /// (e.g. `continue,inline`).
    #[arg(long, default_value = "stop,background", value_parser = |s: &str| s.parse::<Discipline>())]
    pub discipline: Discipline,
    /// The fenced resource (`host:port`). Without it, writes go to an in-process strict register
    /// (useful for benchmarks and smoke tests only: nobody else sees it).
    #[arg(long)]
    pub resource: Option<String>,
    /// The counter workload's store: `redis://host:port`, a PostgreSQL connection string, or
    /// `etcd-guard` (increments guarded by the lock key's revision, on the `--endpoints` etcd).
    #[arg(long)]
    pub counter_store: Option<String>,
    /// The run's start as absolute CLOCK_MONOTONIC ns (default: now).
    #[arg(long)]
    pub clock_start: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(p) = &args.provider {
        let expected = args.recipe.provider().as_str();
        anyhow::ensure!(
            p == expected,
            "--provider {p} does not run --recipe {}: that recipe needs --provider {expected}",
            args.recipe
        );
    }
    let cfg = RawRecipeConfig {
        ttl: args.ttl,
        renew_interval: args.renew_interval,
        session_timeout: args.session_timeout,
        op_timeout: args.op_timeout,
        acquire_timeout: args.acquire_timeout,
    }
    .validate(args.recipe)
    .map_err(|e| anyhow::anyhow!("--{}", e.to_string().replacen('_', "-", 1)))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let clock = args
            .clock_start
            .map_or_else(RunClock::start, RunClock::from_start);
        let target = Target {
            endpoints: args.endpoints.clone(),
            sentinel_master: args.sentinel_master.clone(),
        };
        let client = workloads::recipes::connect(&target, &args.name, cfg.clone())
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "--recipe {} --endpoints {}: {e}",
                    args.recipe,
                    args.endpoints.join(",")
                )
            })?;
        let resource: Box<dyn ResourceWriter> = match &args.resource {
            Some(addr) => Box::new(
                connect_resource(addr, Duration::from_secs(30))
                    .await
                    .with_context(|| format!("--resource {addr}"))?,
            ),
            None => Box::new(MemoryResource::new(MemoryMode::Strict, clock)),
        };
        let mut worker = Worker::new(&args.name, client, resource, cfg, args.discipline);
        if let Some(target) = &args.counter_store {
            let counter = workloads::counter_guard::open(target, &args.endpoints)
                .await
                .with_context(|| format!("--counter-store {target}"))?;
            worker = worker.with_counter(counter);
        }
        eprintln!(
            "fencecheck worker: {} listening on {}",
            args.name, args.listen
        );
        workloads::worker::serve(args.listen, worker)
            .await
            .with_context(|| format!("--listen {}", args.listen))?;
        Ok(0)
    })
}

/// Retries while the resource container starts.
async fn connect_resource(
    addr: &str,
    patience: Duration,
) -> anyhow::Result<workloads::resource::ResourceClient> {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        match workloads::resource::ResourceClient::connect(addr).await {
            Ok(c) => return Ok(c),
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
