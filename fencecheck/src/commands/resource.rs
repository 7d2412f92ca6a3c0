//! `fencecheck resource`: the fenced resource server, started by the harness inside a container
//! on the run's network with the run directory bind-mounted (so `--log` lands in the run's
//! `resource.jsonl`) and its port published on 127.0.0.1. Everything it does lives in
//! `workloads::resource`; this file turns flags into that and waits for SIGTERM / Ctrl-C.
//!
//! On start it prints one line to stderr, `fencecheck resource: listening on <addr> ...`, which
//! the harness can wait for (or it can send `{"op":"ping"}` until it gets `{"status":"pong"}`).

use anyhow::Context;
use results::RunClock;
use std::path::PathBuf;
use std::time::Duration;
use workloads::resource::{start_server, BackendKind, Endpoints, Mode};

/// Arguments of `fencecheck resource`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:7000")]
    pub listen: String,
    /// register | etcd-guard | postgres | redis-fenced
    #[arg(long, default_value = "register", value_parser = |s: &str| s.parse::<BackendKind>())]
    pub backend: BackendKind,
    /// strict | strict-idempotent | none
    #[arg(long, default_value = "strict", value_parser = |s: &str| s.parse::<Mode>())]
    pub mode: Mode,
    /// Path of resource.jsonl (appended to: a restarted resource continues its log).
    #[arg(long)]
    pub log: PathBuf,
    /// The run's start as absolute CLOCK_MONOTONIC ns (default: now).
    #[arg(long)]
    pub clock_start: Option<u64>,
    /// etcd endpoints for etcd-guard, comma-separated (`etcd-1:2379,etcd-2:2379`).
    #[arg(long, value_delimiter = ',')]
    pub etcd: Vec<String>,
    /// Redis URL for redis-fenced (`redis://redis-1:6379`).
    #[arg(long)]
    pub redis: Option<String>,
    /// PostgreSQL connection string for postgres (`host=pg-1 port=5432 user=postgres`).
    #[arg(long)]
    pub postgres: Option<String>,
    /// PostgreSQL connections to open.
    #[arg(long, default_value_t = 4)]
    pub postgres_connections: usize,
    /// How long to keep retrying the backend connection at start.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub connect_timeout: Duration,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: Args) -> anyhow::Result<u8> {
    let clock = args
        .clock_start
        .map_or_else(RunClock::start, RunClock::from_start);
    let endpoints = Endpoints {
        etcd: args.etcd.clone(),
        redis: args.redis.clone(),
        postgres: args.postgres.clone(),
        postgres_connections: args.postgres_connections,
    };
    let (server, handle) = start_server(
        args.backend,
        args.mode,
        &endpoints,
        &args.log,
        clock,
        &args.listen,
        args.connect_timeout,
    )
    .await
    .with_context(|| {
        format!(
            "--backend {} --log {}",
            args.backend.as_str(),
            args.log.display()
        )
    })?;
    eprintln!(
        "fencecheck resource: listening on {} (backend {}, mode {}, log {}, {} decisions recovered)",
        handle.local_addr,
        args.backend.as_str(),
        args.mode.as_str(),
        args.log.display(),
        server.logged()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
        _ = handle.wait() => anyhow::bail!("the listener on {} failed", args.listen),
    }
    eprintln!(
        "fencecheck resource: stopping after {} decisions",
        server.logged()
    );
    Ok(0)
}
