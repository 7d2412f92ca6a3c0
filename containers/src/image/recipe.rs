//! The one way every client image is made: a tag that covers all of its inputs; an image
//! already tagged so is reused; otherwise the caller is told, its inputs are prepared on the
//! host (a crate compiled), the node image is built if it is missing, and the image is built in
//! a fresh context folder that is removed afterwards, whether the build worked or not.

use super::build::{image_present, BuildMethod, ImageError};
use std::path::Path;

/// Makes the image `tag` unless it is present (and `reuse` allows taking it): `building` is
/// told the tag, `prepare` runs on the host, and `build` fills the context folder
/// (`fencecheck-client-<context>-<pid>` in the temporary directory) and runs `docker build`
/// there.
pub fn ensure<P, E: From<ImageError>>(
    tag: &str,
    context: &str,
    reuse: bool,
    building: impl FnOnce(&str),
    prepare: impl FnOnce() -> Result<P, E>,
    build: impl FnOnce(&Path, P) -> Result<(), E>,
) -> Result<BuildMethod, E> {
    if reuse && image_present(tag)? {
        return Ok(BuildMethod::Reused);
    }
    building(tag);
    let prepared = prepare()?;
    super::build(&super::BuildOptions::node_image())?;
    let dir = std::env::temp_dir().join(format!(
        "fencecheck-client-{context}-{}",
        std::process::id()
    ));
    let result = build(&dir, prepared);
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|()| BuildMethod::Dockerfile)
}
