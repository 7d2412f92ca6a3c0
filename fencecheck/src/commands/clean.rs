//! `fencecheck clean [--run <id>]`: removes every container and network labelled
//! `fencecheck.run` (or only those of one run) — what a SIGKILLed harness left behind — and
//! the binaries such runs pinned in the temp dir (a run directory's pin stays with the run).

use containers::docker::{connect, remove_by_run, sweep_pinned_binaries};

/// Arguments of `fencecheck clean`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Remove only the containers and network of this run id (default: of every run).
    #[arg(long = "run", value_name = "ID")]
    pub run: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(async {
        let docker = connect().await?;
        remove_by_run(&docker, args.run.as_deref()).await
    })?;
    let scope = match &args.run {
        Some(id) => format!("run {id}"),
        None => "all runs".to_string(),
    };
    println!(
        "removed {} container(s) and {} network(s) of {scope}",
        report.containers.len(),
        report.networks.len()
    );
    for name in report.containers.iter().chain(&report.networks) {
        println!("  {name}");
    }
    let pins = sweep_pinned_binaries(args.run.as_deref());
    if pins > 0 {
        println!("removed {pins} pinned fencecheck binary(ies) from the temp dir");
    }
    Ok(0)
}
