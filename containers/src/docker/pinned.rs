//! The `fencecheck` binary that a run's containers execute, pinned for the whole run.
//!
//! Containers bind-mount the harness's own binary. Mounting the build artifact itself
//! (`target/debug/fencecheck`) broke runs whenever cargo rebuilt it meanwhile: a container
//! started during the rebuild failed with "exec …: permission denied", and one started after it
//! ran a different build than its siblings. So the first container of a run pins the binary:
//! a hard link next to the run (the linker and cargo replace the file rather than rewrite it,
//! so the link keeps this build's inode), or a copy where a link is impossible. Every container
//! of the run, restarts included, mounts the pinned file; teardown removes it.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often, and how long apart, pinning retries while the binary is being replaced.
const ATTEMPTS: u32 = 20;
const RETRY: Duration = Duration::from_millis(250);

/// Where run `run_id` pins its binary in `dir` (its run directory, or the temp dir).
pub(crate) fn path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(format!(".fencecheck-{run_id}"))
}

/// Pins `binary` as [`path`] and returns that path.
pub(crate) async fn pin(binary: &Path, dir: &Path, run_id: &str) -> io::Result<PathBuf> {
    pin_tries(binary, dir, run_id, ATTEMPTS).await
}

async fn pin_tries(binary: &Path, dir: &Path, run_id: &str, tries: u32) -> io::Result<PathBuf> {
    // Absolute: Docker takes a relative bind source for a volume name.
    let pinned = path(&std::fs::canonicalize(dir)?, run_id);
    let mut last = None;
    for attempt in 0..tries {
        if attempt > 0 {
            tokio::time::sleep(RETRY).await;
        }
        let _ = std::fs::remove_file(&pinned);
        match std::fs::hard_link(binary, &pinned)
            .or_else(|_| std::fs::copy(binary, &pinned).map(drop)) // copy keeps the permissions
            .or_else(|e| match running_build(binary) {
                Some(exe) => std::fs::copy(exe, &pinned).map(drop),
                None => Err(e),
            }) {
            Ok(()) => return Ok(pinned),
            // Absent for a moment while cargo swaps a rebuilt binary in.
            Err(e) => last = Some(e),
        }
    }
    let e = last.unwrap_or_else(|| io::Error::other("no attempt made"));
    Err(io::Error::new(
        e.kind(),
        format!(
            "pinning {} as {} for the run's containers: {e}",
            binary.display(),
            pinned.display()
        ),
    ))
}

/// Where the running build can still be read when `binary` names it but was replaced since it
/// started (Linux then reports `current_exe()` as `… (deleted)`).
fn running_build(binary: &Path) -> Option<&'static Path> {
    binary
        .to_string_lossy()
        .ends_with(" (deleted)")
        .then_some(Path::new("/proc/self/exe"))
}

/// Removes pins in the temp dir (runs without a run directory) left by a harness that was
/// killed: all of them, or run `run_id`'s. Returns how many.
pub fn sweep_temp(run_id: Option<&str>) -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| match run_id {
            Some(id) => e.file_name() == *path(Path::new(""), id).as_os_str(),
            None => e.file_name().to_string_lossy().starts_with(".fencecheck-"),
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pinned_binary_survives_the_original_being_replaced() {
        let dir = std::env::temp_dir().join(format!("fc-pin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("fencecheck");
        std::fs::write(&bin, b"build 1").unwrap();
        let pinned = pin(&bin, &dir, "r1").await.unwrap();
        assert!(pinned.is_absolute());
        assert_eq!(
            pinned,
            std::fs::canonicalize(&dir).unwrap().join(".fencecheck-r1")
        );
        // What cargo does on a rebuild: a new file takes the old one's name.
        std::fs::remove_file(&bin).unwrap();
        std::fs::write(&bin, b"build 2").unwrap();
        assert_eq!(std::fs::read(&pinned).unwrap(), b"build 1");
        let e = pin_tries(&dir.join("missing"), &dir, "r2", 1)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        // The running build, replaced on disk since it started, is copied from /proc.
        let gone = dir.join("fencecheck (deleted)");
        let copied = pin_tries(&gone, &dir, "r3", 1).await.unwrap();
        let exe = std::fs::read("/proc/self/exe").unwrap();
        assert_eq!(std::fs::read(copied).unwrap(), exe);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
