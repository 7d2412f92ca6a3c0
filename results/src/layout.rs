//! Where a run lives: `results/runs/<test-name>/<UTC timestamp>/` with the file names of docs/design.md, "A stored run",
//! and `results/runs/latest` pointing at the newest run. Creating the directory is the first
//! thing a run does, so everything after it (history included) has a place to land.

use std::io;
use std::path::{Path, PathBuf};

pub const TEST_YAML: &str = "test.yaml";
pub const HISTORY: &str = "history.jsonl";
pub const RESOURCE_LOG: &str = "resource.jsonl";
pub const SERVICE_LOG: &str = "service.jsonl";
pub const RESULTS: &str = "results.json";
pub const REPORT: &str = "report.html";
pub const JUNIT: &str = "junit.xml";
pub const HARNESS_LOG: &str = "harness.log";
/// The lock libraries the workers' adapters named at their handshake, one line each
/// (`kazoo (kazoo 2.11.0)`): which library and which version ran, as it reports itself.
pub const CLIENTS: &str = "clients.txt";
pub const NODES_DIR: &str = "nodes";

/// A run directory that exists on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// Creates `<root>/<test_name>/<UTC timestamp>/` (and `nodes/`), and points `<root>/latest`
    /// at it. Two runs in the same second get `-2`, `-3` ... suffixes rather than sharing a dir.
    pub fn create(root: &Path, test_name: &str, utc_stamp: &str) -> io::Result<RunDir> {
        let parent = root.join(test_name);
        std::fs::create_dir_all(&parent)?;
        let mut path = parent.join(utc_stamp);
        let mut n = 1;
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    n += 1;
                    path = parent.join(format!("{utc_stamp}-{n}"));
                }
                Err(e) => return Err(e),
            }
        }
        std::fs::create_dir_all(path.join(NODES_DIR))?;
        let latest = root.join("latest");
        let target = Path::new(test_name).join(path.file_name().unwrap_or_default());
        // One temporary name per call: runs in several threads (matrix --jobs) must not take
        // each other's half-made link.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = root.join(format!(".latest-{}-{n}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&target, &tmp)?;
        std::fs::rename(&tmp, &latest)?;
        Ok(RunDir { path })
    }

    /// An existing run directory (for `check`, the report ...).
    pub fn open(path: &Path) -> RunDir {
        RunDir {
            path: path.to_path_buf(),
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn history(&self) -> PathBuf {
        self.file(HISTORY)
    }

    pub fn resource_log(&self) -> PathBuf {
        self.file(RESOURCE_LOG)
    }

    pub fn service_log(&self) -> PathBuf {
        self.file(SERVICE_LOG)
    }

    pub fn nodes(&self) -> PathBuf {
        self.file(NODES_DIR)
    }
}

/// A UTC timestamp usable as a directory name, e.g. `2026-11-29T09-30-05Z`.
pub fn utc_stamp_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_stamp(secs)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH-MM-SSZ` (civil-from-days, proleptic
/// Gregorian), without pulling a date crate into the data model.
pub fn utc_stamp(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if mo <= 2 { 1 } else { 0 };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}-{m:02}-{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(0), "1970-01-01T00-00-00Z");
        assert_eq!(utc_stamp(951_782_400), "2000-02-29T00-00-00Z");
        assert_eq!(utc_stamp(1_795_942_245), "2026-11-29T08-50-45Z");
    }

    #[test]
    fn runs_get_their_own_dirs_and_latest_follows_the_newest() {
        let root = std::env::temp_dir().join(format!("fc-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let a = RunDir::create(&root, "t", "2026-01-01T00-00-00Z").unwrap();
        let b = RunDir::create(&root, "t", "2026-01-01T00-00-00Z").unwrap();
        assert_ne!(a.path, b.path);
        assert!(b.path.ends_with("2026-01-01T00-00-00Z-2"));
        assert!(b.nodes().is_dir());
        let latest = std::fs::canonicalize(root.join("latest")).unwrap();
        assert_eq!(latest, std::fs::canonicalize(&b.path).unwrap());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
