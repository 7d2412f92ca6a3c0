//! One image per shipped Rust adapter and release of the crate it tests: the host compiles the
//! adapter's own cargo package (`adapters/<name>/`, compiled into this binary) with its own
//! cargo and registry settings, and the image is the node image plus that one binary. Host and
//! image are both Debian bookworm, so the glibc the binary links against is the image's; no
//! toolchain goes into the image and nothing is fetched inside the build (docs/design.md,
//! "Platform facts").
//!
//! The pinned default release builds `--locked` from the adapter's `Cargo.lock`; another
//! release (`--client rslock@0.9.0`) rewrites the exact pin in its `Cargo.toml` and lets cargo
//! resolve, so a version the registry lacks is cargo's "failed to select a version" answer,
//! exit 3 before any container starts. The tag hashes the node image's tag, the adapter's files
//! and the release, so an unchanged release is reused without running cargo at all.

use super::client::ADAPTER_FILES;
use super::version::{
    labelled_build, VersionError, VersionImage, VERSION_LABEL, VERSION_REPOSITORY_PREFIX,
};
use super::wheels::cache_root;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A release of the crate a Rust adapter tests, and how to build the adapter over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateRelease {
    /// The crate's name on the registry (`rslock`).
    pub package: String,
    /// The release to build against.
    pub version: String,
    /// The release the adapter's `Cargo.toml` and `Cargo.lock` pin: built `--locked`.
    pub default: String,
    /// The adapter's binary (`[[bin]]` name), copied to `/adapters/<adapter>/` in the image.
    pub binary: String,
}

/// The image's Dockerfile: the node image and the binary.
fn dockerfile(node: &str, adapter: &str) -> String {
    format!("FROM {node}\nCOPY adapter/ /adapters/{adapter}/\n")
}

/// `fencecheck-client-<adapter>:<version>-<12 hex digits>` over the node tag, the Dockerfile,
/// the adapter's files and the release.
pub fn crate_tag(node: &str, adapter: &str, release: &CrateRelease) -> String {
    let mut h = Sha256::new();
    h.update(node.as_bytes());
    h.update(dockerfile(node, adapter).as_bytes());
    for f in files_of(adapter) {
        h.update(f.0.as_bytes());
        h.update((f.1.len() as u64).to_le_bytes());
        h.update(f.1);
    }
    h.update(format!("{}=={}", release.package, release.version).as_bytes());
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{VERSION_REPOSITORY_PREFIX}{adapter}:{}-{hex}",
        release.version
    )
}

/// The adapter's compiled-in files, relative to its folder.
fn files_of(adapter: &str) -> Vec<(&'static str, &'static [u8])> {
    let prefix = format!("{adapter}/");
    ADAPTER_FILES
        .iter()
        .filter_map(|f| f.path.strip_prefix(&prefix).map(|p| (p, f.contents)))
        .collect()
}

/// Builds the adapter over the release on the host (unless its image is present), then its
/// image (calling `building` with the tag first); the node image first when it is missing.
pub fn ensure(
    adapter: &str,
    release: &CrateRelease,
    building: impl FnOnce(&str),
) -> Result<VersionImage, VersionError> {
    if files_of(adapter).is_empty() {
        return Err(VersionError::NoAdapter {
            adapter: adapter.to_string(),
        });
    }
    let node = super::node_image_tag();
    let tag = crate_tag(&node, adapter, release);
    let method = super::recipe::ensure(
        &tag,
        &format!("{adapter}-{}", release.version),
        true,
        building,
        || cargo_build(adapter, release),
        |dir, binary| docker_build(dir, &node, adapter, release, &binary, &tag),
    )?;
    Ok(VersionImage { tag, method })
}

fn error(release: &CrateRelease, adapter: &str, why: String) -> VersionError {
    VersionError::Cargo {
        adapter: adapter.to_string(),
        package: release.package.clone(),
        version: release.version.clone(),
        why,
    }
}

/// The adapter's package written to `<cache>/cargo/<adapter>-<version>/` (a file only when its
/// contents changed, so cargo's target folder there stays warm), built in release; the path of
/// its binary.
fn cargo_build(adapter: &str, release: &CrateRelease) -> Result<PathBuf, VersionError> {
    let fail = |why: String| error(release, adapter, why);
    let dir = cache_root()
        .with_file_name("cargo")
        .join(format!("{adapter}-{}", release.version));
    let pinned = release.version == release.default;
    for (path, contents) in files_of(adapter) {
        if !pinned && path == "Cargo.lock" {
            continue;
        }
        let contents = match path {
            "Cargo.toml" if !pinned => repin(contents, release).map_err(fail)?,
            _ => contents.to_vec(),
        };
        write_if_changed(&dir.join(path), &contents).map_err(fail)?;
    }
    if !pinned {
        let _ = std::fs::remove_file(dir.join("Cargo.lock"));
    }
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(dir.join("target"));
    if pinned {
        cmd.arg("--locked");
    }
    let out = cmd
        .output()
        .map_err(|e| fail(format!("cannot run cargo on this machine: {e}")))?;
    if !out.status.success() {
        return Err(fail(cargo_answer(&String::from_utf8_lossy(&out.stderr))));
    }
    Ok(dir.join("target").join("release").join(&release.binary))
}

/// `Cargo.toml` with the crate's exact pin (`"=<default>"`) changed to the release asked for.
fn repin(toml: &[u8], release: &CrateRelease) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(toml);
    let from = format!("\"={}\"", release.default);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&release.package) && l.contains(&from))
        .ok_or_else(|| format!("its Cargo.toml pins no {} {from}", release.package))?;
    let to = line.replace(&from, &format!("\"={}\"", release.version));
    Ok(text.replacen(line, &to, 1).into_bytes())
}

fn write_if_changed(path: &Path, contents: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == contents) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, contents).map_err(|e| format!("{}: {e}", path.display()))
}

/// cargo's `error:` lines (and what follows the first), else its last line.
fn cargo_answer(stderr: &str) -> String {
    match stderr.find("error") {
        Some(at) => stderr[at..]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(4)
            .collect::<Vec<_>>()
            .join(" "),
        None => stderr
            .lines()
            .last()
            .unwrap_or("no output")
            .trim()
            .to_string(),
    }
}

fn docker_build(
    dir: &Path,
    node: &str,
    adapter: &str,
    release: &CrateRelease,
    binary: &Path,
    tag: &str,
) -> Result<(), VersionError> {
    let fail = |why: String| error(release, adapter, why);
    let into = dir.join("adapter");
    std::fs::create_dir_all(&into).map_err(|e| fail(format!("{}: {e}", into.display())))?;
    std::fs::copy(binary, into.join(&release.binary))
        .map_err(|e| fail(format!("{}: {e}", binary.display())))?;
    std::fs::write(dir.join("Dockerfile"), dockerfile(node, adapter))
        .map_err(|e| fail(e.to_string()))?;
    match labelled_build(dir, tag, VERSION_LABEL, adapter, &release.version)? {
        None => Ok(()),
        Some(output) => Err(fail(cargo_answer(&output))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(v: &str) -> CrateRelease {
        CrateRelease {
            package: "rslock".into(),
            version: v.into(),
            default: "0.10.0".into(),
            binary: "rslock-adapter".into(),
        }
    }

    #[test]
    fn another_release_rewrites_the_exact_pin_and_only_it() {
        let toml = b"[dependencies]\nrslock = { version = \"=0.10.0\", features = [\"tokio-comp\"] }\nredis = \"=0.10.0\"\n";
        let out = String::from_utf8(repin(toml, &release("0.9.0")).unwrap()).unwrap();
        assert!(out.contains("rslock = { version = \"=0.9.0\""), "{out}");
        assert!(out.contains("redis = \"=0.10.0\""), "{out}");
        assert!(repin(b"rslock = \"0.10\"\n", &release("0.9.0")).is_err());
    }

    #[test]
    fn the_tag_names_the_release_and_cargos_error_is_the_answer() {
        let a = crate_tag("n", "rslock", &release("0.10.0"));
        assert!(a.starts_with("fencecheck-client-rslock:0.10.0-"), "{a}");
        assert_ne!(a, crate_tag("n", "rslock", &release("0.9.0")));
        assert_ne!(a, crate_tag("m", "rslock", &release("0.10.0")));
        let answer = cargo_answer(
            "    Updating crates.io index\nerror: failed to select a version for the requirement `rslock = \"=0.0.99\"`\ncandidate versions found which didn't match: 0.10.0\n",
        );
        assert!(
            answer.starts_with(
                "error: failed to select a version for the requirement `rslock = \"=0.0.99\"`"
            ),
            "{answer}"
        );
    }

    #[test]
    fn the_shipped_rust_adapter_pins_its_default_in_cargo_toml_and_cargo_lock() {
        let files = files_of("rslock");
        let toml = files
            .iter()
            .find(|f| f.0 == "Cargo.toml")
            .expect("Cargo.toml");
        assert!(repin(toml.1, &release("0.9.0")).is_ok());
        let lock = files
            .iter()
            .find(|f| f.0 == "Cargo.lock")
            .expect("Cargo.lock");
        let lock = String::from_utf8_lossy(lock.1);
        assert!(
            lock.contains("name = \"rslock\"\nversion = \"0.10.0\""),
            "{lock}"
        );
    }
}
