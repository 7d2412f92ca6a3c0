//! `fencecheck bench startup`: starts and removes each cluster several times and prints the
//! median and max time from "start" to "a real client says ready". The machine is shared, so
//! these are figures to compare, not assertions; next to each, the "engine floor": the median time
//! the same engine, at the same moment, takes to start as many bare containers (`sleep`, same
//! network, same published ports), i.e. what no cluster recipe can beat.

use containers::docker::{ContainerSpec, RunEnv};
use results::Provider;
use std::time::{Duration, Instant};

/// Arguments of `fencecheck bench startup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Systems to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = Provider::parse_with_servers,
        default_value = "etcd,zookeeper,redis,redlock,redis-sentinel,postgres"
    )]
    pub systems: Vec<Provider>,
    /// Starts per system.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// The targets of the foundation issue (bare processes start in 0.7 s, 1 s and 15 ms).
fn target(system: Provider) -> Option<Duration> {
    match system {
        Provider::Etcd => Some(Duration::from_secs(3)),
        Provider::Zookeeper => Some(Duration::from_secs(4)),
        Provider::Redlock => Some(Duration::from_millis(1500)),
        _ => None,
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(args.runs > 0, "--runs must be at least 1");
    tokio::runtime::Runtime::new()?.block_on(bench(args))
}

async fn bench(args: Args) -> anyhow::Result<u8> {
    let id = format!("bench-startup-{:04x}", rand::random::<u16>());
    let env = RunEnv::create(&id, None).await?;
    let result = measure_all(&env, &args).await;
    env.teardown().await?;
    let rows = result?;
    println!(
        "{:<16} {:>5} {:>10} {:>10} {:>8} {:>13}",
        "system", "runs", "median", "max", "target", "engine floor"
    );
    for (system, mut times, mut floor) in rows {
        times.sort();
        floor.sort();
        let median = times[times.len() / 2];
        let max = times[times.len() - 1];
        let floor = floor[floor.len() / 2];
        let target = target(system)
            .map(|t| format!("{:.1} s", t.as_secs_f64()))
            .unwrap_or_default();
        println!(
            "{:<16} {:>5} {:>8.2} s {:>8.2} s {:>8} {:>11.2} s",
            system.as_str(),
            times.len(),
            median.as_secs_f64(),
            max.as_secs_f64(),
            target,
            floor.as_secs_f64()
        );
    }
    Ok(0)
}

type Row = (Provider, Vec<Duration>, Vec<Duration>);

async fn measure_all(env: &RunEnv, args: &Args) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &system in &args.systems {
        let (mut times, mut floor) = (Vec::new(), Vec::new());
        for i in 0..args.runs {
            let cluster = env.start_cluster(system).await?;
            eprintln!("{system} #{}: ready in {:.2?}", i + 1, cluster.startup);
            times.push(cluster.startup);
            env.remove_cluster(&cluster).await?;
            floor.push(engine_floor(env, cluster.nodes.len()).await?);
        }
        rows.push((system, times, floor));
    }
    Ok(rows)
}

/// Time to start `n` bare containers concurrently (published port, no readiness wait).
async fn engine_floor(env: &RunEnv, n: usize) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let specs = (0..n).map(|i| {
        let spec = ContainerSpec::new(&format!("floor-{i}"), ["sleep", "infinity"]).port(9);
        env.start_container(spec)
    });
    let mut nodes = Vec::new();
    for node in futures::future::join_all(specs).await {
        nodes.push(node?);
    }
    let elapsed = started.elapsed();
    for node in &nodes {
        env.remove(node).await?;
    }
    Ok(elapsed)
}
