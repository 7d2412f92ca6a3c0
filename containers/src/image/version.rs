//! One image per shipped adapter and library release: the node image, Debian's `python3-venv`,
//! a virtual environment at `/venv` with the release's wheels installed from a folder with no
//! network (`pip install --no-index --find-links`), and the adapter's own files. It is `FROM`
//! the node image, not the client image, so a Python release never waits for the Go and Java
//! builds; one venv per image keeps conflicting pins apart (system Python is externally
//! managed). Its tag hashes everything that went in (the node image's tag, the Dockerfile, the
//! adapter's files with the helper they share, every wheel), so an unchanged release is reused
//! and any change builds anew.
//! Why pip cannot run inside the build: docs/design.md, "Platform facts".

use super::build::{BuildMethod, ImageError};
use super::client::ADAPTER_FILES;
use super::wheels::{self, FetchError, Fetched, Requirement};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

/// Repository prefix of the per-release images: `fencecheck-client-<adapter>:<version>-<hash>`.
pub const VERSION_REPOSITORY_PREFIX: &str = "fencecheck-client-";

/// The label every per-release image carries (for `fencecheck clients`).
pub const VERSION_LABEL: &str = "fencecheck.image=client-version";

/// Where the virtual environment is in the image.
pub const VENV: &str = "/venv";

/// Why a release's image could not be had; names the package and the version.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(
        "building the image of {package} {version} for adapter {adapter} failed ({why}); the \
         release's wheels are in {wheels}"
    )]
    Build {
        adapter: String,
        package: String,
        version: String,
        wheels: String,
        why: String,
    },
    #[error(
        "building adapter {adapter} over {package} {version} with the host's cargo failed ({why}); \
         `fencecheck clients` lists the releases known to work"
    )]
    Cargo {
        adapter: String,
        package: String,
        version: String,
        why: String,
    },
    #[error("building your adapter in {folder} with the host's cargo failed: {why}")]
    OwnCargo { folder: String, why: String },
    #[error("adapter {adapter} has no files compiled into this binary")]
    NoAdapter { adapter: String },
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// A built (or reused) per-release image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionImage {
    pub tag: String,
    pub method: BuildMethod,
}

/// Whose libraries an image holds: a shipped adapter's release (its files copied in), or the
/// requirements of a user's own adapter folder (mounted at run time, so nothing of it is
/// copied; its `python3` is the venv's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder<'a> {
    Shipped(&'a str),
    Own,
}

impl Holder<'_> {
    /// The name in the image's repository: the adapter's, or `own`.
    fn name(&self) -> &str {
        match self {
            Holder::Shipped(adapter) => adapter,
            Holder::Own => OWN,
        }
    }
}

/// The repository name of an own adapter's image: `fencecheck-client-own:<folder>-<hash>`.
const OWN: &str = "own";

/// The label an own adapter's image carries (not listed by `fencecheck clients`).
pub const OWN_LABEL: &str = "fencecheck.image=client-own";

/// The folder under `adapters/` of the helper every shipped Python adapter imports (the protocol
/// loop, replies, init parsing); a shipped adapter's image holds it beside the adapter's own
/// folder, at `/adapters/common/`, where the adapter finds it relative to its own file.
pub const COMMON: &str = "common";

/// The Dockerfile of one release's image (or of an own adapter's requirements).
pub fn dockerfile(node: &str, holder: Holder, req: &Requirement) -> String {
    let tail = match holder {
        Holder::Shipped(adapter) => {
            format!("COPY {COMMON}/ /adapters/{COMMON}/\nCOPY adapter/ /adapters/{adapter}/\n")
        }
        Holder::Own => format!(
            "ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
        ),
    };
    format!(
        "FROM {node}\n\
         RUN apt-get update \\\n \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv \\\n \
         && rm -rf /var/lib/apt/lists/*\n\
         COPY wheels/ /wheels/\n\
         RUN python3 -m venv {VENV} \\\n \
         && {VENV}/bin/pip install --no-index --no-cache-dir --disable-pip-version-check \
         --find-links /wheels {pins}\n\
         {tail}",
        pins = req
            .pins()
            .iter()
            .map(|p| shell_quote(p))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// A requirement as one shell word (`redis>=5` must not become a redirection).
fn shell_quote(word: &str) -> String {
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "=._-+".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Docker allows `[A-Za-z0-9_.-]` in a tag: anything else in a version becomes `_`.
fn tag_safe(version: &str) -> String {
    version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `fencecheck-client-<adapter>:<version>-<12 hex digits>` over the node tag, the Dockerfile,
/// the adapter's files, the shared helper's files and the wheels' digest.
pub fn version_tag(
    node: &str,
    holder: Holder,
    req: &Requirement,
    wheels_digest: &[u8; 32],
) -> String {
    let mut h = Sha256::new();
    h.update(node.as_bytes());
    h.update(dockerfile(node, holder, req).as_bytes());
    let shipped = match holder {
        Holder::Shipped(adapter) => adapter,
        Holder::Own => "",
    };
    let files = adapter_files(shipped).chain(adapter_files(COMMON));
    for f in files.filter(|_| !shipped.is_empty()) {
        h.update(f.path.as_bytes());
        h.update([0, u8::from(f.executable)]);
        h.update((f.contents.len() as u64).to_le_bytes());
        h.update(f.contents);
    }
    h.update(wheels_digest);
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    let version = match holder {
        Holder::Shipped(_) => &req.version,
        Holder::Own => &req.package,
    };
    format!(
        "{VERSION_REPOSITORY_PREFIX}{}:{}-{hex}",
        holder.name(),
        tag_safe(version)
    )
}

fn adapter_files(adapter: &str) -> impl Iterator<Item = &'static super::client::AdapterFile> + '_ {
    let prefix = format!("{adapter}/");
    ADAPTER_FILES
        .iter()
        .filter(move |f| f.path.starts_with(&prefix))
}

/// Fetches the release on the host (or takes it from the cache), then builds its image unless
/// one with the same tag is present (calling `building` with the tag first); the node image
/// first when it is missing.
pub fn ensure(
    holder: Holder,
    req: &Requirement,
    building: impl FnOnce(&str),
) -> Result<VersionImage, VersionError> {
    if let Holder::Shipped(adapter) = holder {
        if adapter_files(adapter).next().is_none() {
            return Err(VersionError::NoAdapter {
                adapter: adapter.to_string(),
            });
        }
    }
    let adapter = holder.name();
    let fetched = wheels::fetch(req)?;
    let node = super::node_image_tag();
    let tag = version_tag(&node, holder, req, &fetched.digest()?);
    let method = super::recipe::ensure(
        &tag,
        &format!("{adapter}-{}", tag_safe(&req.version)),
        true,
        building,
        || Ok::<(), VersionError>(()),
        |dir, ()| {
            write_context(dir, holder, &fetched)
                .map_err(|why| build_error(adapter, req, &fetched, why))
                .and_then(|()| docker_build(dir, &node, holder, req, &tag, &fetched))
        },
    )?;
    Ok(VersionImage { tag, method })
}

fn build_error(adapter: &str, req: &Requirement, fetched: &Fetched, why: String) -> VersionError {
    VersionError::Build {
        adapter: adapter.to_string(),
        package: req.package.clone(),
        version: req.version.clone(),
        wheels: fetched.dir.display().to_string(),
        why,
    }
}

/// The build context: `wheels/` (the fetched files) and, for a shipped adapter, `adapter/` (its
/// own files) and `common/` (the helper it imports).
fn write_context(dir: &Path, holder: Holder, fetched: &Fetched) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let wheels = dir.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| io(&wheels, e))?;
    for name in &fetched.files {
        let to = wheels.join(name);
        std::fs::copy(fetched.dir.join(name), &to).map_err(|e| io(&to, e))?;
    }
    let Holder::Shipped(adapter) = holder else {
        return Ok(());
    };
    let prefix = format!("{adapter}/");
    let own = adapter_files(adapter).map(|f| {
        (
            f,
            dir.join("adapter")
                .join(f.path.strip_prefix(&prefix).unwrap_or(f.path)),
        )
    });
    let common = adapter_files(COMMON).map(|f| (f, dir.join(f.path)));
    for (f, path) in own.chain(common) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, f.contents).map_err(|e| io(&path, e))?;
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io(&path, e))?;
        }
    }
    Ok(())
}

/// `docker build`, its output kept: on failure its last error lines are the answer.
fn docker_build(
    dir: &Path,
    node: &str,
    holder: Holder,
    req: &Requirement,
    tag: &str,
    fetched: &Fetched,
) -> Result<(), VersionError> {
    let adapter = holder.name();
    std::fs::write(dir.join("Dockerfile"), dockerfile(node, holder, req))
        .map_err(|e| build_error(adapter, req, fetched, e.to_string()))?;
    let label = match holder {
        Holder::Shipped(_) => VERSION_LABEL,
        Holder::Own => OWN_LABEL,
    };
    match labelled_build(dir, tag, label, adapter, &req.version)? {
        None => Ok(()),
        Some(output) => Err(build_error(adapter, req, fetched, build_answer(&output))),
    }
}

/// `docker build -t <tag>` of `dir` with the labels `fencecheck clients` reads back (the kind of
/// image, its adapter and version); `Some(output)` when the build failed.
pub(super) fn labelled_build(
    dir: &Path,
    tag: &str,
    kind: &str,
    adapter: &str,
    version: &str,
) -> Result<Option<String>, ImageError> {
    let out = Command::new("docker")
        .args(["build", "--label", kind])
        .arg("--label")
        .arg(format!("fencecheck.adapter={adapter}"))
        .arg("--label")
        .arg(format!("fencecheck.version={version}"))
        .args(["-t", tag])
        .arg(dir)
        .output()
        .map_err(|e| ImageError::NoDockerCli(e.to_string()))?;
    Ok((!out.status.success()).then(|| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }))
}

/// The lines of a failed build's output that say why (pip's `ERROR:` lines, docker's errors),
/// else its last line.
fn build_answer(output: &str) -> String {
    // Docker colours pip's errors: keep the words, not the escape codes.
    let plain = output.replace("\u{1b}[91m", "").replace("\u{1b}[0m", "");
    let lines: Vec<&str> = plain
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("ERROR") || l.contains("error:") || l.starts_with("E:"))
        .collect();
    let picked = if lines.is_empty() {
        output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .into_iter()
            .collect()
    } else {
        lines
    };
    picked.join("; ")
}

/// The per-release images present here: (adapter, version, tag), sorted.
pub fn built() -> Vec<(String, String, String)> {
    let Ok(out) = Command::new("docker")
        .args(["image", "ls", "--filter"])
        .arg(format!("label={VERSION_LABEL}"))
        .args(["--format", "{{.Repository}}:{{.Tag}}"])
        .output()
    else {
        return Vec::new();
    };
    let mut all: Vec<(String, String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(parse_tag)
        .collect();
    all.sort();
    all.dedup();
    all
}

/// (adapter, version, tag) of a per-release image's tag.
fn parse_tag(tag: &str) -> Option<(String, String, String)> {
    let (repo, version_hash) = tag.trim().split_once(':')?;
    let adapter = repo.strip_prefix(VERSION_REPOSITORY_PREFIX)?;
    let (version, _hash) = version_hash.rsplit_once('-')?;
    Some((
        adapter.to_string(),
        version.to_string(),
        tag.trim().to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(v: &str) -> Requirement {
        Requirement {
            package: "kazoo".into(),
            version: v.into(),
            with: vec![],
        }
    }

    #[test]
    fn the_dockerfile_installs_the_pins_offline_into_a_venv_from_the_node_image() {
        let mut r = req("2.11.0");
        r.with.push("redis==8.1.0".into());
        let text = dockerfile("fencecheck-node:abc", Holder::Shipped("kazoo"), &r);
        assert!(text.starts_with("FROM fencecheck-node:abc\n"), "{text}");
        assert!(text.contains("install -y --no-install-recommends python3-venv"));
        assert!(text.contains("python3 -m venv /venv"));
        assert!(text.contains("--no-index"), "{text}");
        assert!(text.contains("--find-links /wheels kazoo==2.11.0 redis==8.1.0"));
        assert!(text.contains("COPY adapter/ /adapters/kazoo/"));
        assert!(text.contains("COPY common/ /adapters/common/"), "{text}");
        assert!(!text.contains("ENV PATH"));
    }

    #[test]
    fn an_own_list_installs_its_lines_quoted_and_puts_the_venv_first_on_path() {
        let r = Requirement::from_list(
            "mine",
            Path::new("requirements.txt"),
            "redis>=5\nportalocker==4.4.2\n",
        )
        .unwrap();
        let text = dockerfile("fencecheck-node:abc", Holder::Own, &r);
        assert!(
            text.contains("--find-links /wheels 'redis>=5' portalocker==4.4.2\n"),
            "{text}"
        );
        assert!(text.contains("ENV PATH=/venv/bin:"), "{text}");
        assert!(!text.contains("COPY adapter/"), "{text}");
        assert!(!text.contains("COPY common/"), "{text}");
        let tag = version_tag("n", Holder::Own, &r, &[0; 32]);
        assert!(tag.starts_with("fencecheck-client-own:mine-"), "{tag}");
        assert_ne!(tag, version_tag("n", Holder::Own, &r, &[1; 32]));
    }

    #[test]
    fn the_tag_names_the_release_and_hashes_what_went_in() {
        let kazoo = Holder::Shipped("kazoo");
        let a = version_tag("n", kazoo, &req("2.11.0"), &[0; 32]);
        assert!(a.starts_with("fencecheck-client-kazoo:2.11.0-"), "{a}");
        assert_ne!(a, version_tag("n", kazoo, &req("2.11.0"), &[1; 32]));
        assert_ne!(a, version_tag("m", kazoo, &req("2.11.0"), &[0; 32]));
        assert_ne!(
            a,
            version_tag("n", Holder::Shipped("redis-py"), &req("2.11.0"), &[0; 32])
        );
        assert_eq!(
            parse_tag(&a).map(|(ad, v, _)| (ad, v)),
            Some(("kazoo".into(), "2.11.0".into()))
        );
        // Two runs with different pins never share an image, even before any wheel differs.
        let mut pinned = req("2.11.0");
        pinned.with.push("six==1.16.0".into());
        assert_ne!(a, version_tag("n", kazoo, &pinned, &[0; 32]));
        assert_eq!(tag_safe("1.0+local"), "1.0_local");
        assert_eq!(parse_tag("fencecheck-node:abc"), None);
    }

    #[test]
    fn a_failed_build_answers_with_its_error_lines() {
        let out = "Step 5/6\nERROR: Could not find a version that satisfies the requirement six\n\
                   The command returned a non-zero code: 1\n";
        assert!(build_answer(out).starts_with("ERROR: Could not find"));
        assert_eq!(build_answer("a\nlast words\n\n"), "last words");
    }
}
