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
pub enum What {}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.what {}
}
