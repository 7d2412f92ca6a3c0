//! `fencecheck bench recipes`: acquire → release cycle latency (p50 / p99, hdrhistogram) and
//! cycles per second for each recipe, first with 1 worker, then with 5 contending for one lock.
//! Workers are real `fencecheck worker` containers on the run's network driven over their
//! published ports, as in a run, so the figures include the control protocol's hop (~0.1 ms).
//! The machine is shared: compare figures, do not assert on them. `--observer-cost` measures
//! what the lock service's observer (docs/design.md, "service.jsonl") costs the workload: each
//! phase runs without and with it, alternately, twice, so drift weighs on both alike.

use anyhow::Context;
use containers::cluster::ClusterHandle;
use containers::docker::{ContainerSpec, Readiness, Role, RunEnv};
use harness::run::deploy::{worker_args, WORKER_PORT};
use harness::run::observe;
use harness::run::prepare::HarnessLog;
use hdrhistogram::Histogram;
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use results::{OpType, Provider, RunClock};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use workloads::config::{RawRecipeConfig, RecipeKind};
use workloads::driver::{ProcessIds, Recorder, Session, WorkerConn};
use workloads::worker::WorkerLaunch;

/// Arguments of `fencecheck bench recipes`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Recipes to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "etcd-lease,etcd-lock,zk-lock,redis-lock,redis-lock-del,redlock,redis-sentinel",
        value_parser = |s: &str| s.parse::<RecipeKind>()
    )]
    pub recipes: Vec<RecipeKind>,
    /// Seconds of cycling per recipe and worker count.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Contending workers in the second phase.
    #[arg(long, default_value_t = 5)]
    pub workers: usize,
    /// Lock ttl given to the workers.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub ttl: Duration,
    /// Run each phase without and with the lock service's observer, alternately, twice.
    #[arg(long)]
    pub observer_cost: bool,
}

/// Rounds of (without, with) the observer under `--observer-cost`.
const OBSERVER_ROUNDS: usize = 2;

/// The provider whose cluster a recipe runs against; none for one without servers (memory).
fn provider_of(recipe: RecipeKind) -> Option<Provider> {
    Some(recipe.provider()).filter(|p| p.no_servers_because().is_none())
}

/// One row of the table.
struct Row {
    recipe: RecipeKind,
    workers: usize,
    /// Whether the observer ran (`None`: not asked).
    observer: Option<bool>,
    cycles: u64,
    failed: u64,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(args.seconds > 0, "--seconds must be at least 1");
    anyhow::ensure!(args.workers > 0, "--workers must be at least 1");
    for r in &args.recipes {
        anyhow::ensure!(
            provider_of(*r).is_some(),
            "--recipes: {r} runs in-process only; nothing to measure"
        );
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(bench(args))
}

async fn bench(args: Args) -> anyhow::Result<u8> {
    let bin = std::env::current_exe().context("locating the fencecheck binary")?;
    // The sessions record a history like any run; the bench only needs it to exist.
    let history = std::env::temp_dir().join(format!(
        "fencecheck-bench-recipes-{}.jsonl",
        std::process::id()
    ));
    let rec = Recorder::new(
        Arc::new(HistoryWriter::create(&history)?),
        RunClock::start(),
    );
    let result = table(&args, &bin, &rec).await;
    let _ = std::fs::remove_file(&history);
    result
}

async fn table(args: &Args, bin: &std::path::Path, rec: &Recorder) -> anyhow::Result<u8> {
    println!(
        "{:<16} {:>7} {:>8} {:>7} {:>6} {:>9} {:>9} {:>9}",
        "recipe", "workers", "observer", "cycles", "failed", "cycles/s", "p50 ms", "p99 ms"
    );
    for recipe in &args.recipes {
        let Some(provider) = provider_of(*recipe) else {
            continue;
        };
        let id = format!(
            "bench-recipes-{}-{:04x}",
            recipe.as_str(),
            rand::random::<u16>()
        );
        let env = RunEnv::create(&id, None).await?;
        let rows = measure(&env, provider, *recipe, args, bin, rec).await;
        env.teardown().await?;
        for row in rows.with_context(|| format!("recipe {recipe}"))? {
            println!(
                "{:<16} {:>7} {:>8} {:>7} {:>6} {:>9.1} {:>9.2} {:>9.2}",
                row.recipe.as_str(),
                row.workers,
                match row.observer {
                    None => "-",
                    Some(false) => "off",
                    Some(true) => "on",
                },
                row.cycles,
                row.failed,
                row.per_sec,
                row.p50.as_secs_f64() * 1e3,
                row.p99.as_secs_f64() * 1e3
            );
        }
    }
    Ok(0)
}

async fn measure(
    env: &RunEnv,
    provider: Provider,
    recipe: RecipeKind,
    args: &Args,
    bin: &std::path::Path,
    rec: &Recorder,
) -> anyhow::Result<Vec<Row>> {
    let cluster = env.start_cluster(provider).await?;
    let mut sessions = vec![];
    for i in 0..args.workers {
        let name = format!("bench-{i}");
        let config = RawRecipeConfig {
            ttl: Some(args.ttl),
            ..Default::default()
        }
        .validate(recipe)
        .map_err(|e| anyhow::anyhow!("--{e}"))?;
        let launch = WorkerLaunch::recipe(&name, config, cluster.network_endpoints());
        let node = env
            .start_container(
                ContainerSpec::fencecheck(&name, bin, worker_args(&launch)?)
                    .port(WORKER_PORT)
                    .role(Role::Worker)
                    .ready(Readiness::Listening(WORKER_PORT)),
            )
            .await?;
        let addr = node.host_endpoint().context("worker port")?.parse()?;
        let conn = WorkerConn::connect(addr, Duration::from_secs(20), rec.clone()).await?;
        let ids = ProcessIds::of_worker(i as u32, args.workers as u32);
        sessions.push(Session::new(conn, ids, rec.clone()));
    }
    let lock = format!("bench-{recipe}");
    let cluster = Arc::new(RwLock::new(cluster));
    let mut rows = vec![];
    for workers in [1, args.workers] {
        let sessions = &mut sessions[..workers];
        if !args.observer_cost {
            let tally = cycle(sessions, &lock, args.seconds).await?;
            rows.push(tally.row(recipe, workers, None, args.seconds));
            continue;
        }
        for _ in 0..OBSERVER_ROUNDS {
            for observed in [false, true] {
                let observer = if observed {
                    Some(Observed::start(&cluster).await?)
                } else {
                    None
                };
                let tally = cycle(sessions, &lock, args.seconds).await?;
                drop(observer);
                rows.push(tally.row(recipe, workers, Some(observed), args.seconds));
            }
        }
    }
    Ok(rows)
}

/// The run's observer of the lock service, writing into a directory of its own that goes with
/// it.
struct Observed {
    _observer: Option<observe::Observer>,
    dir: std::path::PathBuf,
}

impl Observed {
    async fn start(cluster: &Arc<RwLock<ClusterHandle>>) -> anyhow::Result<Observed> {
        let dir = std::env::temp_dir().join(format!(
            "fencecheck-bench-observer-{}-{:04x}",
            std::process::id(),
            rand::random::<u16>()
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let run = RunDir::open(&dir);
        let log = HarnessLog::create(&run)?;
        let observer = observe::start(cluster, RunClock::start(), &run.service_log(), &log).await?;
        Ok(Observed {
            _observer: observer,
            dir,
        })
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        self._observer.take();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Tally {
    hist: Histogram<u64>,
    failed: u64,
}

impl Tally {
    fn row(&self, recipe: RecipeKind, workers: usize, observer: Option<bool>, seconds: u64) -> Row {
        let us = |q: f64| Duration::from_micros(self.hist.value_at_quantile(q));
        Row {
            recipe,
            workers,
            observer,
            cycles: self.hist.len(),
            failed: self.failed,
            per_sec: self.hist.len() as f64 / seconds as f64,
            p50: us(0.5),
            p99: us(0.99),
        }
    }
}

/// Every session cycles acquire → release on `lock` for `seconds`; a cycle's latency runs from
/// the acquire invoke to the release completion (waiting for the lock included).
async fn cycle(sessions: &mut [Session], lock: &str, seconds: u64) -> anyhow::Result<Tally> {
    let until = Instant::now() + Duration::from_secs(seconds);
    let loops = sessions.iter_mut().map(|s| async move {
        let mut hist = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3)?;
        let mut failed = 0u64;
        while Instant::now() < until && !s.is_dead() {
            let start = Instant::now();
            if s.acquire(lock).await?.kind() != Some(OpType::Ok) {
                failed += 1;
                continue;
            }
            if s.release().await?.kind() != Some(OpType::Ok) {
                failed += 1;
                continue;
            }
            hist.record(start.elapsed().as_micros().max(1) as u64)?;
        }
        anyhow::Ok((hist, failed))
    });
    let mut total = Tally {
        hist: Histogram::new_with_bounds(1, 120_000_000, 3)?,
        failed: 0,
    };
    for r in futures::future::join_all(loops).await {
        let (h, f) = r?;
        total.hist.add(&h)?;
        total.failed += f;
    }
    Ok(total)
}
