//! A library release fetched from its package registry on the host, with the host's own pip
//! settings (its CA bundle, its index), for the client image's interpreter (Debian bookworm's
//! CPython 3.11 on x86-64): inside a container a download from the index fails, so the image
//! build installs what this fetched with no network (docs/design.md, "Platform facts").
//!
//! Each release is kept in a cache folder named by what was asked for; a complete folder is
//! reused without asking the registry again, so a second run of the same version needs no
//! network and hashes the same files into the same image tag.

use super::pin;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to fetch: a package at one version, and the other packages pinned with it; or, for a
/// user's own adapter, the lines of its `requirements.txt` alone (an empty `version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The registry's name of the package (`kazoo`, `python-redis-lock`); for a user's list,
    /// the name of its folder.
    pub package: String,
    /// Empty for a user's list, which has no package of its own.
    pub version: String,
    /// Further requirements fetched with it (a dependency's release known to work, or every
    /// line of a user's list).
    pub with: Vec<String>,
}

impl Requirement {
    /// A user's `requirements.txt`: its requirement lines (comments and blank lines dropped).
    /// Options (`-r`, `-e`, `--index-url`, ...) are refused with the file and line, since the
    /// host's pip fetches with its own settings and the image installs offline.
    pub fn from_list(folder: &str, path: &Path, text: &str) -> Result<Requirement, String> {
        let mut with = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split(" #").next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with('-') || line.contains("://") {
                return Err(format!(
                    "{}:{}: `{line}`: only requirement lines (name==version, name>=version, ...) \
                     are read; the host's pip fetches from PyPI with its own settings",
                    path.display(),
                    n + 1
                ));
            }
            with.push(line.to_string());
        }
        if with.is_empty() {
            return Err(format!("{}: names no requirement", path.display()));
        }
        Ok(Requirement {
            package: folder.to_string(),
            version: String::new(),
            with,
        })
    }

    /// The pip requirement strings, the package first (a user's list: its lines).
    pub fn pins(&self) -> Vec<String> {
        let mut all = Vec::new();
        if !self.version.is_empty() {
            all.push(format!("{}=={}", self.package, self.version));
        }
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
    /// A pin of a dependency (the adapter's, the run's `with`, or a line of a user's list)
    /// that PyPI cannot satisfy.
    #[error(
        "the pin {pin} is not on PyPI for Python 3.11 (pip: {answer}); pin a release PyPI has"
    )]
    NoSuchPin { pin: String, answer: String },
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
    // Its own folder per fetch: two threads of one process (a matrix with --jobs) may fetch at
    // once, and a version's dots must not be taken for an extension.
    static FETCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = FETCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut partial = dir.clone().into_os_string();
    partial.push(format!(".partial-{}-{n}", std::process::id()));
    let partial = PathBuf::from(partial);
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
    // pip names the requirement it could not satisfy: the adapter's library is named by its
    // version, anything else (a pinned dependency, a line of a user's list) by its pin.
    let missing = missing_pin(&answer);
    let lacking = answer.contains("Could not find a version that satisfies")
        || answer.contains("No matching distribution");
    match missing {
        Some(m) if lacking && pin::normalized(&m.package) != pin::normalized(&req.package) => {
            FetchError::NoSuchPin {
                pin: m.requirement,
                answer,
            }
        }
        Some(m) if lacking => FetchError::NoSuchVersion {
            package: m.package,
            version: m.version,
            answer,
        },
        None if lacking => FetchError::NoSuchVersion {
            package: req.package.clone(),
            version: req.version.clone(),
            answer,
        },
        _ => FetchError::Failed {
            package: req.package.clone(),
            version: req.version.clone(),
            answer,
        },
    }
}

/// What pip's answer says it could not find.
struct Missing {
    /// As pip wrote it (`six==0.0.1`).
    requirement: String,
    package: String,
    /// `(any version)` when the requirement names none exactly.
    version: String,
}

/// `No matching distribution found for NAME==VERSION` in pip's answer.
fn missing_pin(answer: &str) -> Option<Missing> {
    let (_, rest) = answer.rsplit_once("No matching distribution found for ")?;
    let requirement = rest.split([';', ' ']).next()?.trim().to_string();
    let (package, version) = match requirement.split_once("==") {
        Some((name, version)) => (name.to_string(), version.to_string()),
        None => {
            let name: String = requirement
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                .collect();
            (name, "(any version)".to_string())
        }
    };
    Some(Missing {
        requirement,
        package,
        version,
    })
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
        // A dependency's pin that PyPI lacks is named, not the adapter's library.
        let mut with = kazoo("2.11.0");
        with.with.push("six==0.0.1".into());
        let e = classify(
            &with,
            "ERROR: No matching distribution found for six==0.0.1\n",
        );
        assert!(matches!(e, FetchError::NoSuchPin { .. }));
        assert!(
            e.to_string()
                .starts_with("the pin six==0.0.1 is not on PyPI")
                && e.to_string()
                    .contains("pip: No matching distribution found for six==0.0.1"),
            "{e}"
        );
    }

    #[test]
    fn a_users_list_keeps_its_requirement_lines_and_refuses_options_by_line() {
        let path = Path::new("mine/requirements.txt");
        let r = Requirement::from_list(
            "mine",
            path,
            "# my lock's libraries\nredis==8.1.0\n\nportalocker>=4.4  # fenced\n",
        )
        .unwrap();
        assert_eq!(r.pins(), ["redis==8.1.0", "portalocker>=4.4"]);
        assert_eq!(r.version, "");
        let e = Requirement::from_list("mine", path, "redis==8.1.0\n-r other.txt\n").unwrap_err();
        assert!(
            e.starts_with("mine/requirements.txt:2: `-r other.txt`"),
            "{e}"
        );
        let e = Requirement::from_list("mine", path, "# nothing\n").unwrap_err();
        assert!(e.contains("names no requirement"), "{e}");
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
