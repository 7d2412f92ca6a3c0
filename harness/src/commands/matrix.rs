//! `fencecheck matrix` (not built yet: see the open issue that asks for it).

/// Arguments of `fencecheck matrix`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`fencecheck matrix` is not implemented yet")
}
