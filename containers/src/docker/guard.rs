//! Teardown on the exit paths that skip `RunEnv::teardown().await`: a panic or an early `?`
//! (Drop), and SIGINT / SIGTERM (a signal thread). Both work from a thread of their own with a
//! fresh Docker connection, so they neither need nor block the caller's Tokio runtime.
//!
//! A SIGKILLed harness cannot clean up; `fencecheck clean` removes what it left, by label.

use super::{connect, labels::remove_by_run, pinned};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Run ids whose environment exists in this process and is not torn down yet, with their run
/// directories.
static LIVE: Mutex<BTreeMap<String, Option<PathBuf>>> = Mutex::new(BTreeMap::new());
static SIGNAL_THREAD: OnceLock<()> = OnceLock::new();

type InterruptHook = Box<dyn Fn(&Path) + Send + Sync>;
static ON_INTERRUPT: OnceLock<InterruptHook> = OnceLock::new();
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Run ids whose teardown has begun: what happens to their containers from then on is the run
/// removing them, not a fault.
static TEARING_DOWN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Marks run `run_id`'s teardown as begun (before anything is removed).
pub(crate) fn begin_teardown(run_id: &str) {
    if let Ok(mut t) = TEARING_DOWN.lock() {
        t.insert(run_id.to_string());
    }
}

/// Whether run `run_id` is being torn down by this process (its end, a panic, or Ctrl-C):
/// a watch of unplanned events then hears its own removals, which are no deaths.
pub fn tearing_down(run_id: &str) -> bool {
    interrupted() || TEARING_DOWN.lock().is_ok_and(|t| t.contains(run_id))
}

/// Whether SIGINT / SIGTERM arrived: the main path, which may still check and report while the
/// signal thread tears down, must then call its verdict interrupted too.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sets (once per process) what runs for each interrupted run's directory after its teardown
/// and before the process exits: `run` checks the partial history and writes `results.json`.
pub fn on_interrupt(hook: impl Fn(&Path) + Send + Sync + 'static) {
    let _ = ON_INTERRUPT.set(Box::new(hook));
}

pub(crate) fn register(run_id: &str, run_dir: Option<&Path>) {
    if let Ok(mut live) = LIVE.lock() {
        live.insert(run_id.to_string(), run_dir.map(Path::to_path_buf));
    }
    // A new environment of a reused run id (a matrix's next seed) is not being torn down.
    if let Ok(mut t) = TEARING_DOWN.lock() {
        t.remove(run_id);
    }
    install_signal_teardown();
}

pub(crate) fn unregister(run_id: &str) {
    if let Ok(mut live) = LIVE.lock() {
        live.remove(run_id);
    }
}

fn live_runs() -> Vec<(String, Option<PathBuf>)> {
    LIVE.lock()
        .map(|l| l.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// Removes the run's containers and network from a separate thread and waits for it. Safe to
/// call inside or outside a Tokio runtime (it is what `Drop` uses).
pub(crate) fn blocking_teardown(run_ids: Vec<String>) {
    let worker = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            let Ok(docker) = connect().await else { return };
            for id in &run_ids {
                begin_teardown(id);
                if let Err(e) = remove_by_run(&docker, Some(id)).await {
                    eprintln!("fencecheck: teardown of run {id} failed: {e}; run `fencecheck clean --run {id}`");
                }
                unregister(id);
            }
        });
    });
    let _ = worker.join();
}

/// Installs (once per process) a thread that, on SIGINT or SIGTERM, removes the containers and
/// networks of every live run environment and exits with 130 / 143. [`super::RunEnv::create`]
/// calls it; a second signal during teardown exits at once.
pub fn install_signal_teardown() {
    SIGNAL_THREAD.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("fencecheck-signals".to_string())
            .spawn(signal_loop);
    });
}

fn signal_loop() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async {
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        INTERRUPTED.store(true, Ordering::SeqCst);
        let runs = live_runs();
        let ids: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
        eprintln!(
            "fencecheck: interrupted; removing the containers of run(s) {}",
            ids.join(", ")
        );
        let after = tokio::task::spawn_blocking(move || {
            blocking_teardown(ids);
            for (id, dir) in &runs {
                let pinned_in = dir.clone().unwrap_or_else(std::env::temp_dir);
                let _ = std::fs::remove_file(pinned::path(&pinned_in, id));
                if let (Some(dir), Some(hook)) = (dir, ON_INTERRUPT.get()) {
                    let hook = std::panic::AssertUnwindSafe(hook);
                    if std::panic::catch_unwind(|| hook(dir)).is_err() {
                        eprintln!(
                            "fencecheck: checking the partial run failed; run `fencecheck check {}`",
                            dir.display()
                        );
                    }
                }
            }
        });
        tokio::select! {
            _ = after => {}
            _ = int.recv() => eprintln!("fencecheck: second interrupt, exiting without teardown"),
            _ = term.recv() => {}
        }
        std::process::exit(code);
    });
}
