//! The `fencecheck` binary: parses the command line and hands each subcommand to its module in
//! [`commands`]. Exit codes are those of docs/design.md, "Exit codes": 0 valid, 1 anomalies that fail the run,
//! 2 unknown, 3 harness or configuration error.

use clap::{Parser, Subcommand};
mod commands;
use std::process::ExitCode;

/// Jepsen-style fault injection for distributed locks: real etcd, ZooKeeper and Redis clusters,
/// real pauses, partitions and kills, and a verdict on whether fenced writes stayed safe.
#[derive(Debug, Parser)]
#[command(name = "fencecheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run one test (with no arguments: etcd lease lock, strict fenced resource, holder pauses).
    Run(commands::run::Args),
    /// Re-check a stored run offline.
    Check(commands::check::Args),
    /// Run a scripted incident timeline step by step and compare it with its expectations.
    Replay(commands::replay::Args),
    /// Make a replay scenario from one anomaly of a stored run, and replay it.
    Reproduce(commands::reproduce::Args),
    /// Find the smallest test (fewer faults, workers, time) that still shows a run's failing
    /// anomaly kind.
    Shrink(commands::shrink::Args),
    /// Run a grid of tests and write one comparison table.
    Matrix(commands::matrix::Args),
    /// Build or inspect the node image (and, with --client, the client image).
    Image(commands::image::Args),
    /// List the lock clients a test can name: shipped adapters with their library versions,
    /// and fencecheck's own recipes.
    Clients(commands::clients::Args),
    /// Remove every container and network fencecheck left behind.
    Clean(commands::clean::Args),
    /// Start one cluster by hand and keep it up until Ctrl-C.
    Cluster(commands::cluster::Args),
    /// Measure start-up, recipes, resources or checkers.
    Bench(commands::bench::Args),
    /// Internal: one lock-client worker (started inside a container by the harness).
    #[command(hide = true)]
    Worker(commands::worker::Args),
    /// Internal: the fenced resource server (started inside a container by the harness).
    #[command(hide = true)]
    Resource(commands::resource::Args),
    /// Internal: the link proxy of slow and lossy networks (started inside a container).
    #[command(hide = true)]
    Proxy(commands::proxy::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors; bad flags are configuration errors (3).
            return if e.use_stderr() {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Run(a) => commands::run::run(a),
        Command::Check(a) => commands::check::run(a),
        Command::Replay(a) => commands::replay::run(a),
        Command::Reproduce(a) => commands::reproduce::run(a),
        Command::Shrink(a) => commands::shrink::run(a),
        Command::Matrix(a) => commands::matrix::run(a),
        Command::Image(a) => commands::image::run(a),
        Command::Clients(a) => commands::clients::run(a),
        Command::Clean(a) => commands::clean::run(a),
        Command::Cluster(a) => commands::cluster::run(a),
        Command::Bench(a) => commands::bench::run(a),
        Command::Worker(a) => commands::worker::run(a),
        Command::Resource(a) => commands::resource::run(a),
        Command::Proxy(a) => commands::proxy::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("fencecheck: error: {e:#}");
            ExitCode::from(3)
        }
    }
}
