//! `fencecheck bench resource`: how fast each fenced resource decides writes — writes per second
//! and latency percentiles (hdrhistogram, µs) with N clients (default 8), one table row per
//! backend. Each store runs in a real container (the infra's `RunEnv::start_cluster`: etcd 3
//! members, Redis single master, PostgreSQL 15 with fsync off); the resource server runs
//! in-process on the host and reaches the stores through 127.0.0.1 ports, so a figure is the
//! proxy + one store round trip, not the network of a run.
//!
//! Tokens come from one counter shared by the clients, as a lock service hands them out: mostly
//! rising, with a stale one whenever a slower client's write reaches its key after a faster
//! one's. For etcd-guard each key's lock is created once and every write carries its create
//! revision (all pass the guard). After timing,
//! the log is audited like the tests do, so a fast but wrong backend does not get a figure.

use anyhow::Context;
use hdrhistogram::Histogram;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use results::{Provider, RunClock};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use workloads::resource::{audit, Audit};
use workloads::resource::{
    start_server, BackendKind, Endpoints, Mode, ResourceClient, WriteRequest,
};

use containers::cluster::postgres_connection_string;
use containers::docker::RunEnv;

/// Arguments of `fencecheck bench resource`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Backends to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "register,etcd-guard,postgres,redis-fenced",
          value_parser = |s: &str| s.parse::<BackendKind>())]
    pub backends: Vec<BackendKind>,
    /// Concurrent clients (one connection each).
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Writes per backend (split between the clients).
    #[arg(long, default_value_t = 4000)]
    pub writes: usize,
    /// Distinct keys written (writes to one key are serialized by the server).
    #[arg(long, default_value_t = 8)]
    pub keys: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(
        args.clients > 0 && args.keys > 0 && args.writes > 0,
        "--clients, --keys and --writes must be > 0"
    );
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(bench(args))
}

/// One row of the table.
struct Figures {
    backend: BackendKind,
    writes: usize,
    elapsed: Duration,
    accepted: usize,
    hist: Histogram<u64>,
}

async fn bench(args: Args) -> anyhow::Result<u8> {
    let run_id = format!("bench-resource-{:08x}", rand::random::<u32>());
    let env = RunEnv::create(&run_id, None)
        .await
        .context("creating the bench's Docker network")?;
    let result = measure_all(&env, &args).await;
    env.teardown()
        .await
        .context("removing the bench's containers")?;
    let rows = result?;
    println!(
        "{:<14} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "backend", "writes", "clients", "writes/s", "p50 µs", "p99 µs", "max µs", "accepted"
    );
    for r in rows {
        println!(
            "{:<14} {:>7} {:>8} {:>9.0} {:>9} {:>9} {:>9} {:>8.0}%",
            r.backend.as_str(),
            r.writes,
            args.clients,
            r.writes as f64 / r.elapsed.as_secs_f64(),
            r.hist.value_at_quantile(0.5),
            r.hist.value_at_quantile(0.99),
            r.hist.max(),
            100.0 * r.accepted as f64 / r.writes as f64
        );
    }
    Ok(0)
}

async fn measure_all(env: &RunEnv, args: &Args) -> anyhow::Result<Vec<Figures>> {
    let dir = std::env::temp_dir().join(format!("fencecheck-{}", env.run_id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rows = Vec::new();
    for &backend in &args.backends {
        let mut at = Endpoints {
            postgres_connections: 4,
            ..Endpoints::default()
        };
        let provider = match backend {
            BackendKind::Register => None,
            BackendKind::EtcdGuard => Some(Provider::Etcd),
            BackendKind::Postgres => Some(Provider::Postgres),
            BackendKind::RedisFenced => Some(Provider::Redis),
        };
        let cluster = match provider {
            Some(s) => Some(
                env.start_cluster(s)
                    .await
                    .with_context(|| format!("starting {s}"))?,
            ),
            None => None,
        };
        if let Some(c) = &cluster {
            match backend {
                BackendKind::EtcdGuard => at.etcd = c.endpoints(),
                BackendKind::RedisFenced => {
                    at.redis = c.endpoints().first().map(|e| format!("redis://{e}"))
                }
                BackendKind::Postgres => {
                    at.postgres = c.client_nodes().next().and_then(postgres_connection_string)
                }
                BackendKind::Register => {}
            }
        }
        let log = dir.join(format!("{}.jsonl", backend.as_str()));
        let (_server, handle) = start_server(
            backend,
            Mode::Strict,
            &at,
            &log,
            RunClock::start(),
            "127.0.0.1:0",
            Duration::from_secs(30),
        )
        .await
        .with_context(|| format!("starting the {} resource", backend.as_str()))?;
        let tokens = lock_tokens(backend, &at, args.keys).await?;
        let row = measure(backend, &handle.local_addr.to_string(), args, tokens).await?;
        let entries: Vec<results::ResourceEntry> = results::jsonl::JsonlReader::open(&log)?
            .map(|r| r.map(|(_, e)| e))
            .collect::<Result<_, _>>()?;
        let how = if backend == BackendKind::EtcdGuard {
            Audit::Guard
        } else {
            Audit::Exact(Mode::Strict)
        };
        audit(&entries, how)
            .map_err(|e| anyhow::anyhow!("{} log failed its audit: {e}", backend.as_str()))?;
        anyhow::ensure!(
            entries.len() == args.writes,
            "{} logged {} of {} writes",
            backend.as_str(),
            entries.len(),
            args.writes
        );
        eprintln!(
            "{}: {} writes in {:.2?}, log audited",
            backend.as_str(),
            row.writes,
            row.elapsed
        );
        rows.push(row);
        if let Some(c) = &cluster {
            env.remove_cluster(c).await.ok();
        }
    }
    Ok(rows)
}

/// etcd-guard: creates `locks/k<i>` once per key and returns their create revisions.
async fn lock_tokens(
    backend: BackendKind,
    at: &Endpoints,
    keys: usize,
) -> anyhow::Result<Option<HashMap<String, u64>>> {
    if backend != BackendKind::EtcdGuard {
        return Ok(None);
    }
    let mut kv = etcd_client::Client::connect(&at.etcd, None)
        .await
        .context("connecting to etcd")?;
    let mut tokens = HashMap::new();
    for k in 0..keys {
        let put = kv.put(format!("locks/k{k}"), "bench", None).await?;
        let rev = put.header().map(|h| h.revision()).unwrap_or_default() as u64;
        tokens.insert(format!("k{k}"), rev);
    }
    Ok(Some(tokens))
}

async fn measure(
    backend: BackendKind,
    addr: &str,
    args: &Args,
    tokens: Option<HashMap<String, u64>>,
) -> anyhow::Result<Figures> {
    let tokens = Arc::new(tokens);
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(1));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let (addr, tokens, counter) = (addr.to_string(), tokens.clone(), counter.clone());
        let n = args.writes / args.clients + usize::from(c < args.writes % args.clients);
        let (keys, seed) = (args.keys, args.seed);
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed.wrapping_add(c as u64));
            let mut client = ResourceClient::connect(&addr).await?;
            let mut hist = Histogram::<u64>::new(3)?;
            let mut accepted = 0;
            for i in 0..n {
                let key = format!("k{}", rng.random_range(0..keys));
                let token = match tokens.as_ref() {
                    Some(t) => t[&key],
                    None => counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                };
                let w = WriteRequest {
                    lock: format!("lock-{key}"),
                    lock_key: Some(format!("locks/{key}")),
                    key,
                    value: serde_json::json!(i),
                    token: Some(token),
                    op_id: format!("{c}-{i}"),
                    owner: format!("bench-{c}"),
                    lease: format!("bench-{c}"),
                    process: c as u32,
                };
                let t0 = Instant::now();
                let reply = client.write(&w).await?;
                hist.record(t0.elapsed().as_micros() as u64)?;
                accepted += usize::from(reply.result.is_accepted());
            }
            anyhow::Ok((hist, accepted))
        }));
    }
    let mut hist = Histogram::<u64>::new(3)?;
    let mut accepted = 0;
    for t in tasks {
        let (h, a) = t.await??;
        hist.add(h)?;
        accepted += a;
    }
    Ok(Figures {
        backend,
        writes: args.writes,
        elapsed: start.elapsed(),
        accepted,
        hist,
    })
}
