//! Building the node image: a Dockerfile from a Debian base image when the engine has (or can
//! pull) one, else `debootstrap` of the package list into a directory and `docker import` of it
//! (the only way on a machine without any registry). Both shell out to the `docker` CLI and
//! stream its output, since a build is minutes of apt output a user wants to see.

use super::packages;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What went wrong building or finding the image; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("docker: {0}")]
    Docker(String),
    #[error(
        "the `docker` command is not available ({0}): install the Docker CLI (Debian: docker.io)"
    )]
    NoDockerCli(String),
    #[error(
        "could not build {tag}:\n  - Dockerfile from {base}: {dockerfile}\n  - debootstrap + docker \
         import: {debootstrap}\nTo fix: make a Debian base image available (`docker pull {base}` or \
         `docker load`), or install debootstrap (`apt-get install debootstrap`), run as root with \
         the Debian mirror reachable, then run `fencecheck image build` again"
    )]
    BothFailed {
        tag: String,
        base: String,
        dockerfile: String,
        debootstrap: String,
    },
    #[error(
        "could not build the client image {tag} ({why}): its Dockerfile installs Debian packages \
         inside a container FROM the node image, so the Debian mirror must be reachable from \
         containers; see the build output above, then run `fencecheck image build --client` again"
    )]
    ClientBuild { tag: String, why: String },
}

/// How the image came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildMethod {
    /// It was already there.
    Reused,
    Dockerfile,
    Debootstrap,
}

/// What to build. [`BuildOptions::node_image`] is the node image of this binary.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The package list file's text (its hash is in `tag`).
    pub packages_txt: String,
    pub tag: String,
    /// Build even when the tag is present.
    pub force: bool,
    /// Base image of the Dockerfile attempt.
    pub base_image: String,
    /// Debian mirror for debootstrap; `None` reads it from the host's apt sources.
    pub mirror: Option<String>,
    /// Where debootstrap unpacks the root file system (removed afterwards).
    pub work_dir: PathBuf,
}

impl BuildOptions {
    pub fn node_image() -> Self {
        BuildOptions {
            packages_txt: super::PACKAGES_TXT.to_string(),
            tag: super::node_image_tag(),
            force: false,
            base_image: "debian:bookworm-slim".to_string(),
            mirror: None,
            work_dir: std::env::temp_dir()
                .join(format!("fencecheck-rootfs-{}", std::process::id())),
        }
    }
}

/// True when the engine has `tag` locally.
pub fn image_present(tag: &str) -> Result<bool, ImageError> {
    let out = Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", tag])
        .output()
        .map_err(|e| ImageError::NoDockerCli(e.to_string()))?;
    if out.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No such image") || stderr.contains("No such object") {
        Ok(false)
    } else {
        Err(ImageError::Docker(stderr.trim().to_string()))
    }
}

/// Builds the image unless it is present (or `force`): Dockerfile first, debootstrap second.
pub fn build(options: &BuildOptions) -> Result<BuildMethod, ImageError> {
    if !options.force && image_present(&options.tag)? {
        return Ok(BuildMethod::Reused);
    }
    let list = packages(&options.packages_txt);
    let dockerfile = match build_with_dockerfile(&options.base_image, &list, &options.tag) {
        Ok(()) => return Ok(BuildMethod::Dockerfile),
        Err(e) => e,
    };
    eprintln!(
        "fencecheck: Dockerfile build failed ({dockerfile}); trying debootstrap + docker import"
    );
    match build_with_debootstrap(options, &list) {
        Ok(()) => Ok(BuildMethod::Debootstrap),
        Err(debootstrap) => Err(ImageError::BothFailed {
            tag: options.tag.clone(),
            base: options.base_image.clone(),
            dockerfile,
            debootstrap,
        }),
    }
}

fn dockerfile(base: &str, packages: &[&str]) -> String {
    format!(
        "FROM {base}\nRUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \
         --no-install-recommends {} && rm -rf /var/lib/apt/lists/*\n",
        packages.join(" ")
    )
}

fn build_with_dockerfile(base: &str, packages: &[&str], tag: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("docker")
        .args(["build", "--label", "fencecheck.image=node", "-t", tag, "-"])
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run docker: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(dockerfile(base, packages).as_bytes())
            .map_err(|e| e.to_string())?;
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`docker build` exited with {status}"))
    }
}

/// The Debian mirror the host's apt uses (deb822 `URIs:` or one-line `deb` format).
fn host_mirror() -> String {
    let deb822 =
        std::fs::read_to_string("/etc/apt/sources.list.d/debian.sources").unwrap_or_default();
    let one_line = std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
    let from_deb822 = deb822
        .lines()
        .find_map(|l| l.strip_prefix("URIs:"))
        .and_then(|u| u.split_whitespace().next());
    let from_one_line = one_line
        .lines()
        .filter(|l| l.starts_with("deb ") && !l.contains("security"))
        .find_map(|l| l.split_whitespace().find(|w| w.starts_with("http")));
    from_deb822
        .or(from_one_line)
        .unwrap_or("http://deb.debian.org/debian")
        .to_string()
}

/// Effective uid 0, read from /proc (no extra nix feature for one call).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

fn build_with_debootstrap(options: &BuildOptions, packages: &[&str]) -> Result<(), String> {
    if !running_as_root() {
        return Err("debootstrap needs root".to_string());
    }
    let mirror = options.mirror.clone().unwrap_or_else(host_mirror);
    let dir = &options.work_dir;
    let result = debootstrap_and_import(dir, &mirror, packages, &options.tag);
    let _ = std::fs::remove_dir_all(dir);
    result
}

fn debootstrap_and_import(
    dir: &Path,
    mirror: &str,
    packages: &[&str],
    tag: &str,
) -> Result<(), String> {
    let status = Command::new("debootstrap")
        .arg("--variant=minbase")
        .arg(format!("--include={}", packages.join(",")))
        .arg("bookworm")
        .arg(dir)
        .arg(mirror)
        .status()
        .map_err(|e| {
            format!("cannot run debootstrap ({e}): install it (apt-get install debootstrap)")
        })?;
    if !status.success() {
        return Err(format!("debootstrap from {mirror} exited with {status}"));
    }
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(dir)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let tar_out = tar.stdout.take().ok_or("tar has no stdout")?;
    let import = Command::new("docker")
        .args([
            "import",
            "--change",
            "LABEL fencecheck.image=node",
            "-",
            tag,
        ])
        .stdin(tar_out)
        .status()
        .map_err(|e| format!("cannot run docker import: {e}"))?;
    let tar_status = tar.wait().map_err(|e| e.to_string())?;
    if import.success() && tar_status.success() {
        Ok(())
    } else {
        Err(format!(
            "tar ({tar_status}) | docker import ({import}) failed"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dockerfile_installs_every_package_from_the_base() {
        let text = dockerfile("debian:bookworm-slim", &["etcd-server", "redis-server"]);
        assert!(text.starts_with("FROM debian:bookworm-slim\n"));
        assert!(text.contains("install -y --no-install-recommends etcd-server redis-server"));
    }

    #[test]
    fn the_mirror_is_a_url() {
        assert!(host_mirror().starts_with("http"));
    }
}
