//! A user's own Rust adapter: a `--client-dir` folder with a `Cargo.toml`. The host's cargo
//! builds the folder's package in release, with the host's registry settings and a target folder
//! in fencecheck's cache (nothing is fetched inside a container: docs/design.md, "Platform
//! facts"), and the image is the node image plus the package's binaries in `/usr/local/bin`, so
//! `--client-cmd <binary name>` starts it. The tag hashes the node image's tag and every file of
//! the folder but `target/` and `.git/`, so an unchanged folder is reused without running cargo.

use super::version::{labelled_build, VersionError, VersionImage, OWN_LABEL};
use super::wheels::cache_root;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository of own Rust adapters' images: `fencecheck-client-own-cargo:<folder>-<hash>`.
const REPOSITORY: &str = "fencecheck-client-own-cargo";

/// The image's Dockerfile: the node image and the binaries on PATH.
fn dockerfile(node: &str) -> String {
    format!(
        "FROM {node}\nCOPY bin/ /usr/local/bin/\n\
         ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
    )
}

/// The folder's files that go into the build (not `target/`, not `.git/`), sorted, relative.
fn sources(dir: &Path) -> Result<Vec<PathBuf>, String> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let entries = std::fs::read_dir(at).map_err(|e| format!("{}: {e}", at.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", at.display()))?;
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != ".git" {
                    walk(root, &path, out)?;
                }
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// The tag of the image of folder `dir` named `name` over node image `node`.
pub fn own_crate_tag(node: &str, name: &str, dir: &Path) -> Result<String, String> {
    let mut h = Sha256::new();
    h.update(node.as_bytes());
    h.update(dockerfile(node).as_bytes());
    for rel in sources(dir)? {
        let contents =
            std::fs::read(dir.join(&rel)).map_err(|e| format!("{}: {e}", rel.display()))?;
        h.update(rel.to_string_lossy().as_bytes());
        h.update((contents.len() as u64).to_le_bytes());
        h.update(&contents);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("{REPOSITORY}:{name}-{hex}"))
}

fn error(dir: &Path, why: String) -> VersionError {
    VersionError::OwnCargo {
        folder: dir.display().to_string(),
        why,
    }
}

/// Builds the folder's package with the host's cargo (unless its image is present), then its
/// image (calling `building` with the tag first); the node image first when it is missing.
pub fn ensure(
    dir: &Path,
    name: &str,
    building: impl FnOnce(&str),
) -> Result<VersionImage, VersionError> {
    let node = super::node_image_tag();
    let tag = own_crate_tag(&node, name, dir).map_err(|why| error(dir, why))?;
    let method = super::recipe::ensure(
        &tag,
        &format!("own-{name}"),
        true,
        building,
        || cargo_build(dir, name),
        |context, binaries| docker_build(context, &node, dir, name, &binaries, &tag),
    )?;
    Ok(VersionImage { tag, method })
}

/// `cargo build --release` of the folder, its target folder under fencecheck's cache; the paths
/// of the executables it built (cargo's JSON messages name them).
fn cargo_build(dir: &Path, name: &str) -> Result<Vec<PathBuf>, VersionError> {
    let target = cache_root()
        .with_file_name("cargo")
        .join(format!("own-{name}"))
        .join("target");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "--message-format=json",
            "--manifest-path",
        ])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| error(dir, format!("cannot run cargo on this machine: {e}")))?;
    if !out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(error(dir, cargo_errors(&stdout, &stderr)));
    }
    let binaries = executables(&String::from_utf8_lossy(&out.stdout));
    if binaries.is_empty() {
        return Err(error(
            dir,
            "cargo built no binary: the package needs a [[bin]] (or src/main.rs) that speaks the \
             adapter protocol"
                .to_string(),
        ));
    }
    Ok(binaries)
}

/// The executables of cargo's `compiler-artifact` messages.
fn executables(messages: &str) -> Vec<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .collect()
}

/// What cargo said went wrong: its rendered error messages (JSON on stdout), else its stderr's
/// `error` lines.
fn cargo_errors(stdout: &str, stderr: &str) -> String {
    let rendered: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .filter_map(|m| m["message"]["rendered"].as_str().map(str::to_string))
        .take(3)
        .collect();
    if !rendered.is_empty() {
        return rendered.join("\n");
    }
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("error") || l.starts_with("Caused by") || l.contains("failed to"))
        .take(4)
        .collect();
    if lines.is_empty() {
        stderr
            .lines()
            .last()
            .unwrap_or("no output")
            .trim()
            .to_string()
    } else {
        lines.join(" ")
    }
}

fn docker_build(
    context: &Path,
    node: &str,
    dir: &Path,
    name: &str,
    binaries: &[PathBuf],
    tag: &str,
) -> Result<(), VersionError> {
    let fail = |why: String| error(dir, why);
    let bin = context.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| fail(format!("{}: {e}", bin.display())))?;
    for b in binaries {
        let file = b
            .file_name()
            .ok_or_else(|| fail(format!("{}: no file name", b.display())))?;
        std::fs::copy(b, bin.join(file)).map_err(|e| fail(format!("{}: {e}", b.display())))?;
    }
    std::fs::write(context.join("Dockerfile"), dockerfile(node))
        .map_err(|e| fail(e.to_string()))?;
    match labelled_build(context, tag, OWN_LABEL, "own", name)? {
        None => Ok(()),
        Some(output) => Err(fail(output.lines().last().unwrap_or_default().to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_follows_the_sources_and_not_the_target_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let first = own_crate_tag("n", "mine", dir.path()).unwrap();
        assert!(
            first.starts_with("fencecheck-client-own-cargo:mine-"),
            "{first}"
        );
        std::fs::create_dir_all(dir.path().join("target/release")).unwrap();
        std::fs::write(dir.path().join("target/release/a"), "binary").unwrap();
        assert_eq!(own_crate_tag("n", "mine", dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("src/main.rs"), "fn main() { }\n").unwrap();
        assert_ne!(own_crate_tag("n", "mine", dir.path()).unwrap(), first);
        assert_ne!(own_crate_tag("m", "mine", dir.path()).unwrap(), first);
    }

    #[test]
    fn cargo_s_messages_name_the_binaries_and_the_errors() {
        let out = r#"{"reason":"compiler-artifact","executable":null,"target":{"name":"dep"}}
{"reason":"compiler-artifact","executable":"/c/target/release/my-adapter"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executables(out),
            [PathBuf::from("/c/target/release/my-adapter")]
        );
        let failed = r#"{"reason":"compiler-message","message":{"level":"error","rendered":"error[E0425]: cannot find value `x`"}}"#;
        assert_eq!(
            cargo_errors(failed, ""),
            "error[E0425]: cannot find value `x`"
        );
        assert_eq!(
            cargo_errors(
                "",
                "    Updating crates.io index\nerror: no matching package named `nope` found\n"
            ),
            "error: no matching package named `nope` found"
        );
    }
}
