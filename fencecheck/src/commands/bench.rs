//! `fencecheck bench ...`: measurements that print figures (medians, percentiles, ratios), kept
//! out of the test suite because this machine is shared and noisy.

/// Arguments of `fencecheck bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to measure.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Cluster start-up: median and max time to ready per system.
    Startup(super::bench_startup::Args),
    /// Fenced resources: writes/s and latency percentiles per backend.
    Resource(super::bench_resource::Args),
    /// Lock recipes: acquire→release cycle latency and cycles/s, 1 and 5 workers.
    Recipes(super::bench_recipes::Args),
    /// Interrupted and disturbed runs: what each left behind and whether its verdict told the
    /// truth (finish, Ctrl-C, SIGKILL + clean, a node killed or frozen from outside).
    Soak(super::bench_soak::Args),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.what {
        What::Startup(a) => super::bench_startup::run(a),
        What::Resource(a) => super::bench_resource::run(a),
        What::Recipes(a) => super::bench_recipes::run(a),
        What::Soak(a) => super::bench_soak::run(a),
    }
}
