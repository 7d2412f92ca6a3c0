//! `fencecheck proxy`: the link proxy for slow and lossy networks, started by the harness inside
//! a container on the run's network when the plan has a network fault (`workloads::proxy`).

/// Arguments of `fencecheck proxy`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The links, comma-separated: `worker-1>etcd-1=0.0.0.0:7301->fc-run-etcd-1:2379,...`.
    #[arg(long)]
    pub routes: String,
    /// Where the control port listens (JSON lines: a tag's shaping, or heal).
    #[arg(long, default_value = "0.0.0.0:7400")]
    pub control: String,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let routes = workloads::proxy::parse_routes(&args.routes).map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Runtime::new()?;
    eprintln!(
        "fencecheck proxy: {} links, control on {}",
        routes.len(),
        args.control
    );
    runtime.block_on(workloads::proxy::serve(routes, &args.control))?;
    Ok(0)
}
