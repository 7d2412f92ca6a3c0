//! `fencecheck clients`: the lock clients a test can name — the shipped adapters (with the
//! version of each library inside the client image, when it is built), the in-process adapter
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
        let packages: Vec<&str> = adapters.iter().map(|a| a.package.as_str()).collect();
        containers::image::installed_versions(&tag, &packages)
    } else {
        Vec::new()
    };
    println!("Shipped adapters (`fencecheck run --client <name>`), client image {tag}:");
    if !built {
        println!("  (not built yet: the first run with --client builds it, or `fencecheck image build --client`)");
    }
    println!(
        "  {:<17} {:<10} {:<26} {:<18} token",
        "name", "provider", "library", "version"
    );
    for a in &adapters {
        // A library compiled into its adapter (etcd's Go client) leaves its Debian version in
        // the adapter's folder instead of an installed package.
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
            .find(|(p, _)| *p == a.package)
            .map(|(_, v)| v.clone())
            .or_else(compiled_in)
            .unwrap_or_else(|| "-".into());
        let token = a.token.as_deref().unwrap_or("none");
        println!(
            "  {:<17} {:<10} {:<26} {:<18} {token}",
            a.name,
            a.provider.as_str(),
            a.library,
            version
        );
        println!("  {:<17} why: {}", "", a.why);
    }
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
