//! Fake wall clocks for clock faults. A node of a run with clock faults starts its server under
//! libfaketime (`LD_PRELOAD`), reading its offset from a timestamp file in a directory the host
//! bind-mounts into the container, re-read on every call (`FAKETIME_NO_CACHE`); monotonic clocks
//! stay real (`FAKETIME_DONT_FAKE_MONOTONIC`). Only the server's command carries the variables,
//! not the container's environment, so `docker exec` probes keep the real time.
//!
//! Before libfaketime each such process preloads a shim from the same directory
//! (`shim/monotonic_sleep.c`, compiled into this binary by the build script): Debian bookworm's
//! libfaketime 0.9.10 fails every `clock_nanosleep` to an absolute CLOCK_MONOTONIC deadline
//! with EINVAL when the monotonic clock is kept real (a libfaketime bug, its tracker's number 426), which is how
//! Python 3.11's `time.sleep()` sleeps. The shim passes exactly those calls to the kernel
//! unchanged and every other call to libfaketime, so the wall clock a program reads is still
//! the fault's and its monotonic sleeps work again.
//!
//! A jump writes one offset. A fast clock is the offset stepped every [`TICK`] by
//! `(factor - 1) × TICK`: continuous from the fault's start, whatever libfaketime's own rate
//! option counts from. Every write is a rename, so a server never reads half a file.

use crate::docker::ContainerSpec;
use nemesis::ClockSetting;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a node sees its clock directory.
pub const CLOCK_DIR_IN_CONTAINER: &str = "/fencecheck-clock";
/// The timestamp file libfaketime reads, in that directory.
pub const CLOCK_FILE: &str = "faketime";
/// Debian's libfaketime, the thread-safe build (servers are multi-threaded), after glibc's
/// debug malloc: Redis allocates with jemalloc, whose start-up reads the clock, and libfaketime's
/// own start-up allocates, so under jemalloc the two recurse ("Cannot recover from unexpected
/// recursive calls to clock_gettime()") and redis-server never listens. Preloading glibc's
/// malloc first keeps jemalloc out of libfaketime's way (seen on bookworm's redis 7.0).
pub const PRELOAD: &str = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 \
                           /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
/// The shim that undoes libfaketime 0.9.10's absolute monotonic sleeps, in the clock directory;
/// first in `LD_PRELOAD`, so its `clock_nanosleep` is found before libfaketime's.
pub const SHIM_FILE: &str = "monotonic_sleep.so";
const SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/monotonic_sleep.so"));
/// How often a fast clock's offset steps.
pub const TICK: Duration = Duration::from_millis(100);

/// The command that runs `cmd` under libfaketime with its offset in [`CLOCK_DIR_IN_CONTAINER`].
pub fn faked_command(cmd: &[String]) -> Vec<String> {
    let mut out: Vec<String> = vec![
        "env".into(),
        format!("LD_PRELOAD={CLOCK_DIR_IN_CONTAINER}/{SHIM_FILE} {PRELOAD}"),
        format!("FAKETIME_TIMESTAMP_FILE={CLOCK_DIR_IN_CONTAINER}/{CLOCK_FILE}"),
        "FAKETIME_NO_CACHE=1".into(),
        "FAKETIME_DONT_FAKE_MONOTONIC=1".into(),
        // The JVM (ZooKeeper) hangs at start-up with libfaketime's monotonic fix on.
        "FAKETIME_FORCE_MONOTONIC_FIX=0".into(),
    ];
    out.extend(cmd.iter().cloned());
    out
}

/// The timestamp file's text for an offset of `secs` (libfaketime's relative form).
pub fn offset_text(secs: f64) -> String {
    format!("{secs:+.3}\n")
}

fn write_offset(dir: &Path, secs: f64) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{CLOCK_FILE}.tmp"));
    std::fs::write(&tmp, offset_text(secs))?;
    std::fs::rename(&tmp, dir.join(CLOCK_FILE))
}

/// Makes `spec` start under a fake clock kept in `host_dir` (created, set to the real time).
pub fn fake(spec: &mut ContainerSpec, host_dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(host_dir)?;
    // Servers that drop root (PostgreSQL) must still read it.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(host_dir, std::fs::Permissions::from_mode(0o755))?;
    write_offset(host_dir, 0.0)?;
    // By rename: a process of a restarted container may still have the old file mapped.
    let tmp = host_dir.join(format!(".{SHIM_FILE}.tmp"));
    std::fs::write(&tmp, SHIM)?;
    std::fs::rename(&tmp, host_dir.join(SHIM_FILE))?;
    // Docker takes a relative path for a volume name: bind the absolute one.
    let host_dir = std::fs::canonicalize(host_dir)?;
    spec.cmd = faked_command(&spec.cmd);
    spec.binds
        .push((host_dir, CLOCK_DIR_IN_CONTAINER.into(), true));
    Ok(())
}

/// The fake clocks of one run: `<root>/<node>/faketime`.
#[derive(Debug)]
pub struct FakeClocks {
    root: PathBuf,
    /// node -> the stop flag of its fast-clock ticker.
    fast: Mutex<BTreeMap<String, Arc<std::sync::atomic::AtomicBool>>>,
    /// nodes whose clock is not the real one.
    moved: Mutex<std::collections::BTreeSet<String>>,
}

impl FakeClocks {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            fast: Mutex::new(BTreeMap::new()),
            moved: Mutex::new(Default::default()),
        }
    }

    /// The host directory of `node`'s clock.
    pub fn dir(&self, node: &str) -> PathBuf {
        self.root.join(node)
    }

    /// Sets `node`'s clock. A node started without a fake clock is an error naming it.
    pub fn set(&self, node: &str, setting: ClockSetting) -> Result<(), String> {
        let dir = self.dir(node);
        if !dir.join(CLOCK_FILE).is_file() {
            return Err(format!(
                "{node} was not started with a fake clock (no {})",
                dir.join(CLOCK_FILE).display()
            ));
        }
        self.stop_ticker(node);
        let io = |e: std::io::Error| format!("{}: {e}", dir.display());
        match setting {
            ClockSetting::Real => {
                write_offset(&dir, 0.0).map_err(io)?;
                lock(&self.moved).remove(node);
            }
            ClockSetting::Ahead { secs } => {
                lock(&self.moved).insert(node.to_string());
                write_offset(&dir, secs).map_err(io)?;
            }
            ClockSetting::Fast { factor } => {
                lock(&self.moved).insert(node.to_string());
                let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
                lock(&self.fast).insert(node.to_string(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("clock-{node}"))
                    .spawn(move || {
                        let start = Instant::now();
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            let ahead = start.elapsed().as_secs_f64() * (factor - 1.0);
                            let _ = write_offset(&dir, ahead);
                            std::thread::sleep(TICK);
                        }
                    })
                    .map_err(|e| format!("starting the clock thread of {node}: {e}"))?;
            }
        }
        Ok(())
    }

    fn stop_ticker(&self, node: &str) {
        if let Some(stop) = lock(&self.fast).remove(node) {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            // Let a write in flight land before the caller's own.
            std::thread::sleep(TICK / 10);
        }
    }

    /// Whether some clock is not the real one.
    pub fn any_moved(&self) -> bool {
        !lock(&self.moved).is_empty()
    }

    /// Every clock back to the real time (the path for `Drop` and signal handlers).
    pub fn reset_all(&self) {
        let nodes: Vec<String> = lock(&self.moved).iter().cloned().collect();
        for node in nodes {
            let _ = self.set(&node, ClockSetting::Real);
        }
    }
}

impl Drop for FakeClocks {
    fn drop(&mut self) {
        for stop in lock(&self.fast).values() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_command_is_wrapped_and_the_offset_written_whole() {
        let cmd = faked_command(&["redis-server".into(), "--port".into(), "6379".into()]);
        assert_eq!(cmd[0], "env");
        let preload = cmd
            .iter()
            .find_map(|w| w.strip_prefix("LD_PRELOAD="))
            .expect("a preload");
        let libs: Vec<&str> = preload.split(' ').collect();
        assert_eq!(
            libs.first(),
            Some(&"/fencecheck-clock/monotonic_sleep.so"),
            "the shim comes before libfaketime: {preload}"
        );
        assert!(
            libs.last().unwrap().ends_with("libfaketimeMT.so.1"),
            "{preload}"
        );
        assert_eq!(&cmd[cmd.len() - 3..], ["redis-server", "--port", "6379"]);
        assert_eq!(offset_text(10.0), "+10.000\n");
        assert_eq!(offset_text(-0.25), "-0.250\n");
    }

    #[test]
    fn a_fast_clock_steps_ahead_and_the_heal_sets_it_back() {
        let t = tempfile::tempdir().unwrap();
        let clocks = FakeClocks::new(t.path().to_path_buf());
        let mut spec = ContainerSpec::new("redis-1", ["redis-server"]);
        fake(&mut spec, &clocks.dir("redis-1")).unwrap();
        assert!(spec.binds.iter().any(|b| b.1 == CLOCK_DIR_IN_CONTAINER));
        let shim = std::fs::read(clocks.dir("redis-1").join(SHIM_FILE)).unwrap();
        assert!(shim.starts_with(b"\x7fELF"), "the shim is a shared object");
        let read = || std::fs::read_to_string(clocks.dir("redis-1").join(CLOCK_FILE)).unwrap();
        assert_eq!(read(), "+0.000\n");
        clocks
            .set("redis-1", ClockSetting::Fast { factor: 3.0 })
            .unwrap();
        std::thread::sleep(Duration::from_millis(450));
        let ahead: f64 = read().trim().parse().unwrap();
        assert!(
            ahead > 0.3,
            "3× as fast: ~0.8 s ahead after 0.4 s, read {ahead}"
        );
        assert!(clocks.any_moved());
        clocks.reset_all();
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(read(), "+0.000\n", "no ticker writes after the heal");
        assert!(!clocks.any_moved());
        let e = clocks.set("etcd-1", ClockSetting::Real).unwrap_err();
        assert!(
            e.contains("etcd-1 was not started with a fake clock"),
            "{e}"
        );
    }
}
