//! The pins of a client library's dependencies (`with: [redis==5.0.8]`, `--with`): laid over
//! the shipped adapter's own pins of its release from PyPI, each replacing the pin of its
//! package (docs/adapters.md, "Which build of the library runs"). Every other client installs
//! nothing from PyPI for the test, and is refused saying where its dependencies come from.

use super::{err, ConfigError};
use crate::config::clients::{LockClient, Release, IN_PROCESS_ADAPTER};
use containers::image::pin::{self, Pin};

/// The client with the test's `with` pins over its release's own (each replaces the pin of its
/// package, the others are added). Only a shipped adapter's release from PyPI takes pins.
pub fn pinned(client: LockClient, pins: &[Pin]) -> Result<LockClient, ConfigError> {
    if pins.is_empty() {
        return Ok(client);
    }
    if let Some((a, b)) = pin::twice(pins) {
        return Err(err(
            "with",
            format!("{} is pinned twice ({a}, {b}): keep one", a.package),
        ));
    }
    let mut adapter = match client {
        LockClient::Adapter(a) => a,
        LockClient::Recipe(r) => {
            return Err(err(
                "with",
                format!(
                    "pins a dependency of a client library from PyPI, and the recipe {r} is \
                     fencecheck's own code: name a shipped Python adapter (client: \
                     python-redis-lock) or drop with"
                ),
            ))
        }
    };
    let name = adapter.name.clone();
    let refusal = match &mut adapter.release {
        Some(Release::Pypi(req)) => {
            let own = pin::normalized(&req.package);
            if let Some(p) = pins.iter().find(|p| p.key() == own) {
                return Err(err(
                    "with",
                    format!(
                        "{p} pins {name}'s own library: name its release in client \
                         ({name}@{})",
                        p.version
                    ),
                ));
            }
            req.with = pin::overlay(&req.with, pins);
            None
        }
        Some(Release::Debian) => Some(format!(
            "{name}@debian is Debian's build in the client image, its dependencies Debian's \
             too: pins take a release from PyPI (client: {name}, or {name}@<version>)"
        )),
        Some(Release::Crate(_)) => Some(format!(
            "{name} is a Rust adapter, its crate's dependencies pinned by its Cargo.lock: with \
             pins Python packages from PyPI"
        )),
        Some(Release::Requirements(_)) => Some(
            "your adapter's libraries are the lines of its folder's requirements.txt: pin them \
             there"
                .to_string(),
        ),
        Some(Release::OwnCrate) => Some(
            "your adapter folder's Cargo.toml builds it: pin its dependencies there".to_string(),
        ),
        None if name == IN_PROCESS_ADAPTER => Some(
            "the in-process adapter installs nothing: pins take a shipped Python adapter's \
             release from PyPI"
                .to_string(),
        ),
        None => Some(
            "your adapter runs in the client image, which installs nothing for it: list its \
             libraries in a requirements.txt in its folder"
                .to_string(),
        ),
    };
    match refusal {
        Some(why) => Err(err("with", why)),
        None => Ok(LockClient::Adapter(adapter)),
    }
}
