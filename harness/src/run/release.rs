//! A shipped adapter's PyPI release (or the `requirements.txt` of a user's own adapter folder),
//! made ready before anything of the run starts: its wheels fetched on the host (or taken from
//! the cache) and its image built, or reused while what went in is unchanged; the plan then
//! names that image. A Rust adapter's crate release the same way, built by the host's cargo, and
//! a user's own folder with a `Cargo.toml` (its package built by the host's cargo). A
//! version the registry does not have, or a build that fails, stops here, before any container
//! or run directory: exit 3 naming the package, the version and the registry's answer
//! (docs/design.md, "Exit codes").

use crate::config::TestPlan;
use containers::image::version::{self, Holder, VersionError, VersionImage};
use containers::image::BuildMethod;
use containers::image::{crate_build, own_crate};
use std::time::Instant;

/// Sets `plan.client_image` to the image of its adapter's PyPI release (or of its own folder's
/// requirements), building it when it is missing; plans of any other client are left as they
/// are. Says on stderr what it did.
pub fn prepare(plan: &mut TestPlan) -> Result<(), VersionError> {
    if plan.client_image.is_some() {
        return Ok(());
    }
    // One preparation at a time in this process: the runs of a matrix with --jobs that need
    // the same release wait for the first to build it, then reuse it (and two builds never
    // share a build folder or fight for the machine's two cores).
    static PREPARING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = PREPARING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((adapter, release)) = plan.client.crate_release() {
        let what = format!("client {adapter}@{}", release.version);
        let started = Instant::now();
        let image = crate_build::ensure(adapter, release, |tag| {
            eprintln!(
                "fencecheck: {what}: building the adapter with the host's cargo and image {tag} \
                 (the node image and the binary; a few minutes cold, once)"
            )
        })?;
        said(&what, &image, started);
        plan.client_image = Some(image.tag);
        return Ok(());
    }
    if let Some((name, dir)) = plan.client.own_crate() {
        let what = format!("client {name}: Cargo.toml");
        let started = Instant::now();
        let image = own_crate::ensure(dir, name, |tag| {
            eprintln!(
                "fencecheck: {what}: building your adapter with the host's cargo and image {tag} \
                 (the node image and its binaries on PATH; once per change of the folder)"
            )
        })?;
        said(&what, &image, started);
        plan.client_image = Some(image.tag);
        return Ok(());
    }
    let Some((holder, req)) = plan.client.built_release() else {
        return Ok(());
    };
    let req = req.clone();
    let what = match holder {
        Holder::Shipped(adapter) => format!("client {adapter}@{}", req.version),
        Holder::Own => format!("client {}: requirements.txt", plan.client.name()),
    };
    let started = Instant::now();
    let image = version::ensure(holder, &req, |tag| {
        eprintln!(
            "fencecheck: {what}: building image {tag} (the node image, python3-venv and the \
             fetched wheels, no network inside; about a minute, once)"
        )
    })?;
    said(&what, &image, started);
    plan.client_image = Some(image.tag);
    Ok(())
}

/// Whether the image was reused or built, and how long that took.
fn said(what: &str, image: &VersionImage, started: Instant) {
    match image.method {
        BuildMethod::Reused => {
            eprintln!("fencecheck: {what}: image {} (present, reused)", image.tag)
        }
        _ => eprintln!(
            "fencecheck: {what}: built image {} in {:.0?}",
            image.tag,
            started.elapsed()
        ),
    }
}
