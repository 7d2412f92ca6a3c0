//! `fencecheck cluster` (not built yet: see the open issue that asks for it).

/// Arguments of `fencecheck cluster`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`fencecheck cluster` is not implemented yet")
}
