//! The node image: one local image holding etcd, ZooKeeper, Redis (+ sentinel), PostgreSQL and
//! the network tools, built from Debian's packages because no registry may be reachable. Its own
//! crate, with no dependency beyond a hash, so that `make run` can build it (the binary
//! `fencecheck-node-image`) while the rest of fencecheck compiles.
//!
//! Its tag carries a hash of the package list (`node-image/packages.txt`, compiled in), so an
//! edited list builds a new image and an unchanged one is reused.

pub mod build;

pub use build::{build, image_present, BuildMethod, BuildOptions, ImageError};

use sha2::{Digest, Sha256};

/// The package list of the node image, as compiled into this binary.
pub const PACKAGES_TXT: &str = include_str!("../packages.txt");

/// Repository part of the node image's name.
pub const IMAGE_REPOSITORY: &str = "fencecheck-node";

/// The package names of a list (one per line, `#` comments and blank lines ignored).
pub fn packages(list: &str) -> Vec<&str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// `fencecheck-node:<first 12 hex digits of sha256 of the list file>`.
pub fn tag_for(list: &str) -> String {
    let digest = Sha256::digest(list.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{IMAGE_REPOSITORY}:{hex}")
}

/// The tag of the node image this binary uses.
pub fn node_image_tag() -> String {
    tag_for(PACKAGES_TXT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_is_the_hash_of_the_list() {
        assert_eq!(tag_for(""), "fencecheck-node:e3b0c44298fc");
        assert_ne!(
            tag_for("redis-server\n"),
            tag_for("redis-server\netcd-server\n")
        );
        assert!(node_image_tag().starts_with("fencecheck-node:"));
    }

    #[test]
    fn comments_and_blank_lines_are_not_packages() {
        assert_eq!(
            packages("# x\n\netcd-server\n  redis-server \n"),
            ["etcd-server", "redis-server"]
        );
        assert!(packages(PACKAGES_TXT).contains(&"postgresql"));
    }
}
