//! `fencecheck bench startup`: starts and removes each cluster several times and prints the
//! median and max time from "start" to "a real client says ready". The machine is shared, so
//! these are figures to compare, not assertions.

use crate::cluster::System;
use crate::docker::RunEnv;
use std::time::Duration;

/// Arguments of `fencecheck bench startup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Systems to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "etcd,zookeeper,redis,redlock,redis-sentinel,postgres"
    )]
    pub systems: Vec<System>,
    /// Starts per system.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// The targets of the foundation issue (bare processes start in 0.7 s, 1 s and 15 ms).
fn target(system: System) -> Option<Duration> {
    match system {
        System::Etcd => Some(Duration::from_secs(3)),
        System::Zookeeper => Some(Duration::from_secs(4)),
        System::Redlock => Some(Duration::from_millis(1500)),
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
        "{:<16} {:>5} {:>10} {:>10} {:>8}",
        "system", "runs", "median", "max", "target"
    );
    for (system, mut times) in rows {
        times.sort();
        let median = times[times.len() / 2];
        let max = times[times.len() - 1];
        let target = target(system)
            .map(|t| format!("{:.1} s", t.as_secs_f64()))
            .unwrap_or_default();
        println!(
            "{:<16} {:>5} {:>8.2} s {:>8.2} s {:>8}",
            system.name(),
            times.len(),
            median.as_secs_f64(),
            max.as_secs_f64(),
            target
        );
    }
    Ok(0)
}

async fn measure_all(env: &RunEnv, args: &Args) -> anyhow::Result<Vec<(System, Vec<Duration>)>> {
    let mut rows = Vec::new();
    for &system in &args.systems {
        let mut times = Vec::new();
        for i in 0..args.runs {
            let cluster = env.start_cluster(system).await?;
            eprintln!("{system} #{}: ready in {:.2?}", i + 1, cluster.startup);
            times.push(cluster.startup);
            env.remove_cluster(&cluster).await?;
        }
        rows.push((system, times));
    }
    Ok(rows)
}
