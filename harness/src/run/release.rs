//! A shipped adapter's PyPI release, made ready before anything of the run starts: its wheels
//! fetched on the host (or taken from the cache) and its image built, or reused while what went
//! in is unchanged; the plan then names that image. A version the registry does not have, or a
//! build that fails, stops here, before any container or run directory: exit 3 naming the
//! package, the version and the registry's answer (docs/design.md, "Exit codes").

use crate::config::TestPlan;
use containers::image::version::{self, VersionError};
use containers::image::BuildMethod;
use std::time::Instant;

/// Sets `plan.client_image` to the image of its adapter's PyPI release, building it when it is
/// missing; plans of any other client are left as they are. Says on stderr what it did.
pub fn prepare(plan: &mut TestPlan) -> Result<(), VersionError> {
    let Some((adapter, req)) = plan.client.pypi_release() else {
        return Ok(());
    };
    if plan.client_image.is_some() {
        return Ok(());
    }
    let (adapter, req) = (adapter.to_string(), req.clone());
    let started = Instant::now();
    let image = version::ensure(&adapter, &req, |tag| {
        eprintln!(
            "fencecheck: client {adapter}@{}: building image {tag} (the node image, python3-venv \
             and the release's wheels, no network inside; about 2 minutes, once)",
            req.version
        )
    })?;
    match image.method {
        BuildMethod::Reused => eprintln!(
            "fencecheck: client {adapter}@{}: image {} (present, reused)",
            req.version, image.tag
        ),
        _ => eprintln!(
            "fencecheck: client {adapter}@{}: built image {} in {:.0?}",
            req.version,
            image.tag,
            started.elapsed()
        ),
    }
    plan.client_image = Some(image.tag);
    Ok(())
}
