//! `fencecheck resource` (not built yet: see the open issue that asks for it).

/// Arguments of `fencecheck resource`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`fencecheck resource` is not implemented yet")
}
