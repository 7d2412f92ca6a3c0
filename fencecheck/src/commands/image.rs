//! `fencecheck image build|status`: the node image every container runs (etcd, ZooKeeper,
//! Redis + sentinel, PostgreSQL, iptables...), and with `--client` the client image adapters
//! run in. `build` reuses an image whose tag (a hash of its inputs) is present; `status` says
//! whether it is there and what it holds.

use anyhow::Context;
use containers::docker::connect;
use containers::image::{self, BuildMethod, BuildOptions};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `fencecheck image`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with the node image.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Build the node image (Dockerfile from a Debian base, else debootstrap + docker import),
    /// unless an image with its tag is already present.
    Build(BuildArgs),
    /// Say whether the node image is present and what it holds.
    Status,
}

/// Arguments of `fencecheck image build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// Build even if the tag is present.
    #[arg(long)]
    pub force: bool,
    /// Another package list (the tag is its hash); default: the list compiled in.
    #[arg(long, value_name = "FILE")]
    pub packages: Option<PathBuf>,
    /// Base image of the Dockerfile attempt.
    #[arg(long, default_value = "debian:bookworm-slim")]
    pub base_image: String,
    /// Debian mirror for debootstrap (default: the host's apt mirror).
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,
    /// Build the client image too (the node image plus the lock libraries of the shipped
    /// adapters; runs with `--client` build it on first use).
    #[arg(long)]
    pub client: bool,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Runtime::new()?;
    // Fail early and clearly when no engine answers, before minutes of debootstrap.
    let docker = runtime.block_on(connect())?;
    match args.action {
        Action::Build(build) => build_image(build),
        Action::Status => runtime.block_on(status(&docker)),
    }
}

fn build_image(args: BuildArgs) -> anyhow::Result<u8> {
    let mut options = BuildOptions::node_image();
    if let Some(path) = &args.packages {
        options.packages_txt = std::fs::read_to_string(path).with_context(|| {
            format!(
                "--packages {}: cannot read the package list",
                path.display()
            )
        })?;
        options.tag = image::tag_for(&options.packages_txt);
    }
    options.force = args.force;
    options.base_image = args.base_image;
    options.mirror = args.mirror;
    let started = Instant::now();
    let method = image::build(&options)?;
    let how = match method {
        BuildMethod::Reused => "present, reused".to_string(),
        BuildMethod::Dockerfile => format!("built from a Dockerfile in {:.0?}", started.elapsed()),
        BuildMethod::Debootstrap => {
            format!(
                "built by debootstrap + docker import in {:.0?}",
                started.elapsed()
            )
        }
    };
    println!("{}: {how}", options.tag);
    if args.client {
        let started = Instant::now();
        let how = match image::build_client(args.force)? {
            BuildMethod::Reused => "present, reused".to_string(),
            _ => format!("built in {:.0?}", started.elapsed()),
        };
        println!("{}: {how}", image::client_image_tag());
    }
    Ok(0)
}

async fn status(docker: &containers::docker::Docker) -> anyhow::Result<u8> {
    let tag = image::node_image_tag();
    let status = image::status(docker, &tag).await?;
    if !status.present {
        println!("{tag}: missing — build it with `fencecheck image build`");
    } else {
        let size = status.size_bytes.unwrap_or(0) as f64 / 1e9;
        let created = status.created.unwrap_or_default();
        println!("{tag}: present ({size:.2} GB, created {created})");
    }
    println!("package list (node-image/packages.txt, compiled in):");
    let versions = if status.present {
        image::installed_versions(&tag, &image::packages(image::PACKAGES_TXT))
    } else {
        Vec::new()
    };
    for package in image::packages(image::PACKAGES_TXT) {
        let version = versions
            .iter()
            .find(|(p, _)| p == package)
            .map(|(_, v)| v.as_str())
            .unwrap_or("");
        println!("  {package:<20} {version}");
    }
    Ok(0)
}
