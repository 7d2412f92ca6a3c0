//! The client image: the node image plus the lock libraries under test and their adapters
//! (`adapters/`, compiled into this binary by `build.rs`), built by `docker build` with a
//! Dockerfile `FROM` the local node image, so no registry is needed. Its tag hashes the node
//! image's tag and every adapter file, so an edited adapter builds a new image and an
//! unchanged one is reused. Only runs that name a client adapter need it.

use super::build::{BuildMethod, ImageError};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

/// One file of `adapters/`, as compiled in.
#[derive(Debug)]
pub struct AdapterFile {
    /// Relative to `adapters/` (`kazoo/adapter.py`).
    pub path: &'static str,
    pub contents: &'static [u8],
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/adapter_files.rs"));

/// Repository part of the client image's name.
pub const CLIENT_REPOSITORY: &str = "fencecheck-client";

/// `fencecheck-client:<12 hex digits of sha256 over the node tag and every adapter file>`.
pub fn client_tag_for(node_tag: &str, files: &[AdapterFile]) -> String {
    let mut h = Sha256::new();
    h.update(node_tag.as_bytes());
    for f in files {
        h.update(f.path.as_bytes());
        h.update([0, u8::from(f.executable)]);
        h.update((f.contents.len() as u64).to_le_bytes());
        h.update(f.contents);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{CLIENT_REPOSITORY}:{hex}")
}

/// The tag of the client image this binary uses.
pub fn client_image_tag() -> String {
    client_tag_for(&super::node_image_tag(), ADAPTER_FILES)
}

/// A compiled-in adapter file by its path under `adapters/`.
pub fn adapter_file(path: &str) -> Option<&'static AdapterFile> {
    ADAPTER_FILES.iter().find(|f| f.path == path)
}

/// Builds the client image unless it is present (or `force`), the node image first if it is
/// missing. Docker's build output streams to this process's stderr.
pub fn build_client(force: bool) -> Result<BuildMethod, ImageError> {
    let tag = client_image_tag();
    let node = super::node_image_tag();
    super::recipe::ensure(
        &tag,
        "shipped",
        !force,
        |_| {},
        || Ok::<(), ImageError>(()),
        |dir, ()| write_context(dir).and_then(|()| docker_build(dir, &node, &tag)),
    )
}

/// The build context: every adapter file, modes kept.
fn write_context(dir: &Path) -> Result<(), ImageError> {
    let io = |what: &str, e: std::io::Error| ImageError::Docker(format!("{what}: {e}"));
    for f in ADAPTER_FILES {
        let path = dir.join(f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(&parent.display().to_string(), e))?;
        }
        std::fs::write(&path, f.contents).map_err(|e| io(&path.display().to_string(), e))?;
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io(&path.display().to_string(), e))?;
        }
    }
    Ok(())
}

fn docker_build(dir: &Path, node: &str, tag: &str) -> Result<(), ImageError> {
    let status = Command::new("docker")
        .args(["build", "--label", "fencecheck.image=client"])
        .arg("--build-arg")
        .arg(format!("NODE_IMAGE={node}"))
        .args(["-t", tag])
        .arg(dir)
        .status()
        .map_err(|e| ImageError::NoDockerCli(e.to_string()))?;
    if status.success() {
        Ok(())
    } else {
        Err(ImageError::ClientBuild {
            tag: tag.to_string(),
            why: format!("`docker build` exited with {status}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_adapter_is_compiled_in_and_the_tag_follows_its_inputs() {
        for name in [
            "kazoo",
            "curator",
            "etcd-concurrency",
            "redis-py",
            "python-etcd3",
        ] {
            assert!(
                adapter_file(&format!("{name}/adapter.yaml")).is_some(),
                "{name}"
            );
        }
        assert!(adapter_file("Dockerfile").is_some());
        assert!(adapter_file("common/fencecheck_adapter.py").is_some());
        assert!(ADAPTER_FILES
            .iter()
            .all(|f| !f.path.contains("__pycache__")));
        assert!(adapter_file("curator/build.sh").is_some_and(|f| f.executable));
        let tag = client_image_tag();
        assert!(tag.starts_with("fencecheck-client:"));
        assert_ne!(
            client_tag_for("fencecheck-node:a", ADAPTER_FILES),
            client_tag_for("fencecheck-node:b", ADAPTER_FILES)
        );
        assert_ne!(
            client_tag_for("n", ADAPTER_FILES),
            client_tag_for("n", &ADAPTER_FILES[1..])
        );
    }
}
