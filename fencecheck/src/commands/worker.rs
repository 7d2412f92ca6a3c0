//! `fencecheck worker`: one lock-client process, started by the harness inside its own
//! container on the run's network (the harness's binary bind-mounted), serving the control
//! protocol of `workloads::protocol` on `--listen` (published on 127.0.0.1). Everything it does
//! lives in `workloads::worker`; this file turns flags into a validated recipe config, connects
//! the lock client (one of fencecheck's recipes, or a library behind its adapter, started here
//! as a child process) and the resource client, and serves until killed.
//!
//! On start it prints `fencecheck worker: <name> listening on <addr>` to stderr.

use anyhow::Context;
use results::RunClock;
use std::sync::Arc;
use std::time::Duration;
use workloads::adapter::{AdapterClient, Init, Program, INIT_DEADLINE, PROTOCOL};
use workloads::client::Client;
use workloads::config::{Discipline, RawRecipeConfig, RecipeConfig, RecipeKind};
use workloads::fenced_write::{MemoryMode, MemoryResource, ResourceWriter};
use workloads::kinds::Provider;
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
    /// One of fencecheck's recipes (`fencecheck run --help` lists them); or `--client-cmd`.
    #[arg(long, value_parser = |s: &str| s.parse::<RecipeKind>(), required_unless_present = "client_cmd")]
    pub recipe: Option<RecipeKind>,
    /// A client adapter to start as a child (`sh -c <command>`, protocol of docs/adapters.md)
    /// instead of a recipe; needs `--provider` and `--lock`.
    #[arg(long, conflicts_with = "recipe", requires_all = ["provider", "lock"])]
    pub client_cmd: Option<String>,
    /// The adapter's name in messages (a shipped adapter's folder name, or `own`).
    #[arg(long, default_value = "own")]
    pub client_name: String,
    /// Where the adapter's command runs (its folder, mounted into this container).
    #[arg(long)]
    pub client_dir: Option<std::path::PathBuf>,
    /// The test's `client_options`, as JSON, passed to the adapter's `init` unchanged.
    #[arg(long, default_value = "{}", value_parser = |s: &str| serde_json::from_str::<serde_json::Value>(s).map_err(|e| e.to_string()))]
    pub client_options: serde_json::Value,
    /// Refuse to serve if the adapter reports no fence token (the resource needs one).
    #[arg(long)]
    pub require_token: bool,
    /// The lock's name (the adapter is started for one lock).
    #[arg(long)]
    pub lock: Option<String>,
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
    let provider = match &args.provider {
        Some(p) => Some(Provider::parse_lock(p).map_err(|e| anyhow::anyhow!("--provider: {e}"))?),
        None => None,
    };
    // An adapter is held to its provider's rules (etcd leases are whole seconds, ...).
    let recipe = match (args.recipe, provider) {
        (Some(r), Some(p)) if r.provider() != p => anyhow::bail!(
            "--provider {p} does not run --recipe {r}: that recipe needs --provider {}",
            r.provider()
        ),
        (Some(r), _) => r,
        (None, Some(p)) => RecipeKind::default_for(p)
            .ok_or_else(|| anyhow::anyhow!("--provider {p} has no recipe; give --recipe"))?,
        (None, None) => anyhow::bail!("--client-cmd needs --provider"),
    };
    let cfg = RawRecipeConfig {
        ttl: args.ttl,
        renew_interval: args.renew_interval,
        session_timeout: args.session_timeout,
        op_timeout: args.op_timeout,
        acquire_timeout: args.acquire_timeout,
    }
    .validate(recipe)
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
        let (client, label) = match &args.client_cmd {
            Some(command) => start_adapter(&args, command, recipe.provider(), cfg.clone()).await?,
            None => {
                let target = Target {
                    endpoints: args.endpoints.clone(),
                    sentinel_master: args.sentinel_master.clone(),
                };
                let client = workloads::recipes::connect(&target, &args.name, cfg.clone())
                    .await
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "--recipe {recipe} --endpoints {}: {e}",
                            args.endpoints.join(",")
                        )
                    })?;
                (client, recipe.to_string())
            }
        };
        let resource: Box<dyn ResourceWriter> = match &args.resource {
            Some(addr) => Box::new(
                connect_resource(addr, Duration::from_secs(30))
                    .await
                    .with_context(|| format!("--resource {addr}"))?,
            ),
            None => Box::new(MemoryResource::new(MemoryMode::Strict, clock)),
        };
        let mut worker = Worker::new(&args.name, client, resource, cfg, args.discipline)
            .with_client_label(label);
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

/// Starts the adapter and shakes hands with it; the label names the library it reported.
async fn start_adapter(
    args: &Args,
    command: &str,
    provider: Provider,
    cfg: RecipeConfig,
) -> anyhow::Result<(Arc<dyn Client>, String)> {
    let init = Init {
        protocol: PROTOCOL,
        worker: args.name.clone(),
        lock: args.lock.clone().unwrap_or_default(),
        provider: provider.to_string(),
        endpoints: args.endpoints.clone(),
        ttl_ms: cfg.ttl.as_millis() as u64,
        acquire_timeout_ms: cfg.acquire_timeout.as_millis() as u64,
        options: args.client_options.clone(),
    };
    let program = Program {
        command: command.to_string(),
        dir: args.client_dir.clone(),
    };
    let name = &args.client_name;
    let adapter = AdapterClient::start(name, Box::new(program), init, INIT_DEADLINE, cfg)
        .await
        .map_err(|e| anyhow::anyhow!("--client-cmd {command:?}: {e}"))?;
    let d = adapter.described().clone();
    eprintln!(
        "fencecheck worker: adapter {name}: {} {}, token: {}",
        d.library,
        d.version,
        d.token.as_deref().unwrap_or("none")
    );
    anyhow::ensure!(
        d.token.is_some() || !args.require_token,
        "adapter {name} ({} {}) reports no fence token, and the test's resource decides writes \
         by token: use resource none (stale writes are then judged by grant order)",
        d.library,
        d.version
    );
    Ok((
        Arc::new(adapter),
        format!("{name} ({} {})", d.library, d.version),
    ))
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
