//! `fencecheck worker`: one lock-client process, started by the harness inside its own
//! container on the run's network (the harness's binary bind-mounted), serving the control
//! protocol of `workloads::protocol` on `--listen` (published on 127.0.0.1). What the worker is
//! arrives whole as `--launch <json>` (a `workloads::worker::WorkerLaunch`, made once from the
//! validated plan by the harness); this file only starts it over the network
//! (`NetworkPlace`) and serves until killed.
//!
//! On start it prints `fencecheck worker: <name> listening on <addr>` to stderr.

use anyhow::Context;
use results::RunClock;
use workloads::worker::{NetworkPlace, WorkerLaunch};

/// Arguments of `fencecheck worker`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to serve the control protocol on.
    #[arg(long, default_value = "0.0.0.0:7100")]
    pub listen: std::net::SocketAddr,
    /// The worker, as JSON (the harness's `WorkerLaunch`: name, client, lock, config,
    /// discipline, endpoints, resource, counter_store, clock_start).
    #[arg(long, value_parser = parse_launch)]
    pub launch: WorkerLaunch,
}

fn parse_launch(s: &str) -> Result<WorkerLaunch, String> {
    serde_json::from_str(s).map_err(|e| format!("not a worker launch: {e}"))
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let launch = args.launch;
        let clock = launch
            .clock_start
            .map_or_else(RunClock::start, RunClock::from_start);
        let worker = launch.start(&NetworkPlace { clock }).await?;
        eprintln!(
            "fencecheck worker: {} ({}) listening on {}",
            launch.name,
            worker.client_label(),
            args.listen
        );
        workloads::worker::serve(args.listen, worker)
            .await
            .with_context(|| format!("--listen {}", args.listen))?;
        Ok(0)
    })
}
