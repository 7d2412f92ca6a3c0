//! `fencecheck replay` (not built yet: see the open issue that asks for it).

/// Arguments of `fencecheck replay`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`fencecheck replay` is not implemented yet")
}
