//! A library release fetched from its package registry on the host, with the host's own pip
//! settings (its CA bundle, its index), for the client image's interpreter (Debian bookworm's
//! CPython 3.11 on x86-64): inside a container a download from the index fails, so the image
//! build installs what this fetched with no network (docs/design.md, "Platform facts").
//!
//! Each release is kept in a cache folder named by what was asked for; a complete folder is
//! reused without asking the registry again, so a second run of the same version needs no
//! network and hashes the same files into the same image tag.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to fetch: a package at one version, and the other packages pinned with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The registry's name of the package (`kazoo`, `python-redis-lock`).
    pub package: String,
    pub version: String,
    /// Further `name==version` pins fetched with it (a dependency's release known to work).
    pub with: Vec<String>,
}

impl Requirement {
    /// The pip requirement strings, the package first.
    pub fn pins(&self) -> Vec<String> {
        let mut all = vec![format!("{}=={}", self.package, self.version)];
        all.extend(self.with.iter().cloned());
        all
    }
}

/// Why a release could not be fetched: names the package, the version and the registry's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error(
        "{package} {version} is not on PyPI for Python 3.11 (pip: {answer}); `fencecheck clients` \
         lists the versions known to work"
    )]
    NoSuchVersion {
        package: String,
        version: String,
        answer: String,
    },
    #[error("fetching {package} {version} from PyPI failed (pip: {answer})")]
    Failed {
        package: String,
        version: String,
        answer: String,
    },
    #[error("cannot run `python3 -m pip download` on this machine ({0}): install pip (Debian: python3-pip)")]
    NoPip(String),
    #[error("wheel cache {path}: {message}")]
    Cache { path: String, message: String },
}

/// A fetched release: its folder of wheels and their file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub dir: PathBuf,
    /// File names in `dir`, sorted.
    pub files: Vec<String>,
}

impl Fetched {
    /// sha256 over every file's name and contents, in name order: what went into the image.
    pub fn digest(&self) -> Result<[u8; 32], FetchError> {
        let mut h = Sha256::new();
        for name in &self.files {
            let path = self.dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| cache_error(&path, e))?;
            h.update(name.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
        Ok(h.finalize().into())
    }
}

/// The client image's interpreter (Debian bookworm's python3), for pip's wheel checks.
pub const PYTHON_VERSION: &str = "3.11.2";

/// The pip that fetches: the host's Debian python3 when there is one. pip evaluates a
/// dependency's markers (redis-py's `python_full_version < "3.11.3"` for async-timeout) with
/// the interpreter it runs on, whatever `--python-version` says, so only bookworm's own python3
/// fetches exactly what the image's 3.11.2 needs; another one may leave a dependency out, and
/// the offline install then fails naming it.
fn host_python() -> &'static str {
    if Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// The marker a complete cache folder holds (a fetch cut short leaves none).
const COMPLETE: &str = ".complete";

/// The cache of fetched releases: `$XDG_CACHE_HOME/fencecheck/wheels`, else
/// `~/.cache/fencecheck/wheels`, else the temp folder's.
pub fn cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("fencecheck").join("wheels")
}

/// The cache folder of one requirement: readable, and distinct for every set of pins.
pub fn cache_dir(root: &Path, req: &Requirement) -> PathBuf {
    let key = format!("python {PYTHON_VERSION}\n{}", req.pins().join("\n"));
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    root.join(format!("{}-{}-{hex}", req.package, req.version))
}

/// The wheels of `req` (and of everything they depend on), from the cache when it holds them,
/// else fetched from PyPI by the host's pip.
pub fn fetch(req: &Requirement) -> Result<Fetched, FetchError> {
    let dir = cache_dir(&cache_root(), req);
    if dir.join(COMPLETE).is_file() {
        return list(&dir);
    }
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| cache_error(&partial, e))?;
    let result = pip_download(req, &partial);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    std::fs::write(partial.join(COMPLETE), req.pins().join("\n"))
        .map_err(|e| cache_error(&partial, e))?;
    // Another fetch of the same release may have finished first: either folder is complete.
    if std::fs::rename(&partial, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    list(&dir)
}

fn cache_error(path: &Path, e: std::io::Error) -> FetchError {
    FetchError::Cache {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn list(dir: &Path) -> Result<Fetched, FetchError> {
    let entries = std::fs::read_dir(dir).map_err(|e| cache_error(dir, e))?;
    let mut files: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n != COMPLETE)
        .collect();
    files.sort();
    Ok(Fetched {
        dir: dir.to_path_buf(),
        files,
    })
}

/// `pip download` of wheels for the container's interpreter. The environment's extra wheel
/// folder (`PIP_FIND_LINKS`) is the host's, not the registry's: it is left out so that only the
/// registry answers.
fn pip_download(req: &Requirement, dest: &Path) -> Result<(), FetchError> {
    let out = Command::new(host_python())
        .args(["-m", "pip", "download", "--disable-pip-version-check"])
        .arg("--dest")
        .arg(dest)
        .args(["--only-binary=:all:", "--python-version", PYTHON_VERSION])
        .args([
            "--platform",
            "manylinux2014_x86_64",
            "--implementation",
            "cp",
        ])
        .args(req.pins())
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_NO_INDEX")
        .output()
        .map_err(|e| FetchError::NoPip(e.to_string()))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named pip") {
        return Err(FetchError::NoPip(stderr.trim().to_string()));
    }
    Err(classify(req, &stderr))
}

/// The registry's answer, from pip's error lines.
fn classify(req: &Requirement, stderr: &str) -> FetchError {
    let errors: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ERROR:"))
        .map(|l| l.trim_start_matches("ERROR:").trim())
        .collect();
    let answer = if errors.is_empty() {
        stderr
            .lines()
            .last()
            .unwrap_or("no output")
            .trim()
            .to_string()
    } else {
        errors.join("; ")
    };
    let (package, version) = (req.package.clone(), req.version.clone());
    if answer.contains("Could not find a version that satisfies")
        || answer.contains("No matching distribution")
    {
        FetchError::NoSuchVersion {
            package,
            version,
            answer,
        }
    } else {
        FetchError::Failed {
            package,
            version,
            answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kazoo(v: &str) -> Requirement {
        Requirement {
            package: "kazoo".into(),
            version: v.into(),
            with: vec![],
        }
    }

    #[test]
    fn a_missing_version_names_the_package_the_version_and_pips_answer() {
        let stderr = "ERROR: Could not find a version that satisfies the requirement kazoo==0.0.99 \
                      (from versions: 2.10.0, 2.11.0)\nERROR: No matching distribution found for kazoo==0.0.99\n";
        let e = classify(&kazoo("0.0.99"), stderr);
        assert!(matches!(e, FetchError::NoSuchVersion { .. }));
        let text = e.to_string();
        assert!(
            text.contains("kazoo 0.0.99") && text.contains("from versions: 2.10.0, 2.11.0"),
            "{text}"
        );
        let other = classify(&kazoo("2.11.0"), "ERROR: HTTP error 503\n");
        assert!(matches!(other, FetchError::Failed { .. }));
    }

    #[test]
    fn each_set_of_pins_has_its_own_cache_folder() {
        let root = Path::new("/c");
        let mut with = kazoo("2.11.0");
        with.with.push("six==1.16.0".into());
        assert_ne!(cache_dir(root, &kazoo("2.11.0")), cache_dir(root, &with));
        assert_ne!(
            cache_dir(root, &kazoo("2.11.0")),
            cache_dir(root, &kazoo("2.10.0"))
        );
        assert!(cache_dir(root, &kazoo("2.11.0"))
            .to_string_lossy()
            .starts_with("/c/kazoo-2.11.0-"));
        assert_eq!(with.pins(), ["kazoo==2.11.0", "six==1.16.0"]);
    }

    #[test]
    fn the_digest_follows_names_and_contents() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.whl"), b"1").unwrap();
        let f = |files: &[&str]| Fetched {
            dir: dir.path().to_path_buf(),
            files: files.iter().map(|s| s.to_string()).collect(),
        };
        let one = f(&["a.whl"]).digest().unwrap();
        std::fs::write(dir.path().join("a.whl"), b"2").unwrap();
        assert_ne!(one, f(&["a.whl"]).digest().unwrap());
        assert!(f(&["missing.whl"]).digest().is_err());
    }
}
