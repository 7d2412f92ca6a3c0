//! `fencecheck clients`: the lock clients a test can name — the shipped adapters (each with its
//! default release, the PyPI releases known to work, the releases whose image is built here, and
//! the Debian build's version inside the client image when it is built), the in-process adapter
//! of the pipeline test, and fencecheck's own recipes — each with the token it reports and why.

use harness::config::clients::{shipped, IN_PROCESS_ADAPTER};
use harness::config::RecipeKind;

/// Arguments of `fencecheck clients`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<u8> {
    let tag = containers::image::client_image_tag();
    let built = containers::image::build::image_present(&tag).unwrap_or(false);
    let adapters = shipped();
    let versions = if built {
        let packages: Vec<&str> = adapters
            .iter()
            .filter_map(|a| a.debian.as_ref().map(|d| d.package.as_str()))
            .collect();
        containers::image::installed_versions(&tag, &packages)
    } else {
        Vec::new()
    };
    let releases_built = containers::image::version::built();
    println!("Shipped adapters (`fencecheck run --client <name>[@<version>|@debian]`):");
    println!(
        "  {:<18} {:<10} {:<26} {:<9} token",
        "name", "provider", "library", "default"
    );
    for a in &adapters {
        let token = a.token.as_deref().unwrap_or("none");
        println!(
            "  {:<18} {:<10} {:<26} {:<9} {token}",
            a.name,
            a.provider.as_str(),
            a.library,
            a.default_release().label(),
        );
        if let Some(p) = &a.pypi {
            // One image per release and set of pins: a release built with other pins is one
            // release here.
            let mut here: Vec<&str> = releases_built
                .iter()
                .filter(|(adapter, _, _)| *adapter == a.name)
                .map(|(_, v, _)| v.as_str())
                .collect();
            here.dedup();
            let here = if here.is_empty() {
                "none yet".to_string()
            } else {
                here.join(", ")
            };
            let with = if p.with.is_empty() {
                String::new()
            } else {
                format!(" with {} (`--with` replaces a pin)", p.with.join(", "))
            };
            println!(
                "  {:<18} PyPI {}{with}: known to work {}; built here: {here}",
                "",
                p.package,
                p.known.join(", ")
            );
        }
        if let Some(c) = &a.cargo {
            let here: Vec<&str> = releases_built
                .iter()
                .filter(|(adapter, _, _)| *adapter == a.name)
                .map(|(_, v, _)| v.as_str())
                .collect();
            println!(
                "  {:<18} crate {} (built by the host's cargo): known to work {}; built here: {}",
                "",
                c.package,
                c.known.join(", "),
                if here.is_empty() {
                    "none yet".to_string()
                } else {
                    here.join(", ")
                }
            );
        }
        if let Some(d) = &a.debian {
            // A library compiled into its adapter (etcd's Go client) leaves its Debian version
            // in the adapter's folder instead of an installed package.
            let compiled_in = || {
                built
                    .then(|| {
                        let path = format!("/adapters/{}/library-version", a.name);
                        containers::image::file_in_image(&tag, &path)
                    })
                    .flatten()
            };
            let version = versions
                .iter()
                .find(|(p, _)| *p == d.package)
                .map(|(_, v)| v.clone())
                .or_else(compiled_in)
                .unwrap_or_else(|| "client image not built".into());
            println!("  {:<18} Debian {} (@debian): {version}", "", d.package);
        }
        if a.providers.len() > 1 {
            let all: Vec<&str> = a.providers.iter().map(|p| p.as_str()).collect();
            println!(
                "  {:<18} providers: {} (`--provider` picks one)",
                "",
                all.join(", ")
            );
        }
        println!("  {:<18} why: {}", "", a.why);
    }
    println!(
        "The Debian builds run in the client image {tag}{}; each PyPI release in its own image \
         (fencecheck-client-<name>:<version>-<hash>), built on first use.",
        if built {
            ""
        } else {
            " (not built yet: `fencecheck image build --client`)"
        }
    );
    println!();
    println!(
        "In-process adapter: `--client {IN_PROCESS_ADAPTER}` (provider memory): the adapter protocol \
         over the in-process lock service, for pipeline tests"
    );
    println!("Your own adapter: `--client-cmd '<command>' --client-dir <folder> --provider <p>` (docs/adapters.md)");
    println!();
    println!("fencecheck's own recipes (`--recipe <name>`), the textbook baselines:");
    for r in RecipeKind::ALL {
        let token = if r.has_token() { "token" } else { "no token" };
        println!("  {:<17} {:<15} {token}", r.as_str(), r.provider().as_str());
    }
    Ok(0)
}
