//! One run of `fencecheck bench soak`: started as a user would start it (the `fencecheck run`
//! command, its own process), ended the drawn [`Way`], then looked at from outside — its exit,
//! a re-check's exit, its history and state, what it left on the machine — and judged against
//! what the project promises for that way.

use anyhow::Context;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use results::run_state::Stage;
use results::store::RunReader;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How a soak run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Left to finish.
    Finish,
    /// Ctrl-C (SIGINT) to the harness mid-workload.
    Sigint,
    /// SIGKILL to the harness, then `fencecheck clean --run`.
    Sigkill,
    /// A lock-service node killed from outside (`docker kill`), never started again.
    NodeKilled,
    /// A lock-service node frozen from outside for 6 s (`docker pause`, then `unpause`).
    NodeFrozen,
}

impl Way {
    pub const ALL: [Way; 5] = [
        Way::Finish,
        Way::Sigint,
        Way::Sigkill,
        Way::NodeKilled,
        Way::NodeFrozen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Way::Finish => "finish",
            Way::Sigint => "sigint",
            Way::Sigkill => "sigkill",
            Way::NodeKilled => "node-killed",
            Way::NodeFrozen => "node-frozen",
        }
    }

    /// A way by its name; the error lists them.
    pub fn parse(s: &str) -> Result<Way, String> {
        Way::ALL.into_iter().find(|w| w.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Way::ALL.iter().map(|w| w.name()).collect();
            format!("unknown way {s:?}: expected one of {}", names.join(", "))
        })
    }
}

/// What one run left and said.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub recipe: &'static str,
    pub way: Way,
    pub exit: Option<i32>,
    pub recheck: Option<i32>,
    pub state: String,
    pub torn: bool,
    pub leftovers: u32,
    pub stopped: u32,
    /// The expectation this run broke, if it broke one.
    pub wrong: Option<String>,
}

impl Outcome {
    pub fn header() -> String {
        format!(
            "{:>4} {:<11} {:<14} {:>5} {:>8} {:<12} {:>5} {:>10} {:>8}  verdict class",
            "run", "recipe", "way", "exit", "recheck", "state", "torn", "leftovers", "stopped"
        )
    }

    pub fn row(&self, i: u32) -> String {
        let code = |c: Option<i32>| c.map_or("-".to_string(), |c| c.to_string());
        format!(
            "{:>4} {:<11} {:<14} {:>5} {:>8} {:<12} {:>5} {:>10} {:>8}  {}",
            i,
            self.recipe,
            self.way.name(),
            code(self.exit),
            code(self.recheck),
            self.state,
            if self.torn { "yes" } else { "no" },
            self.leftovers,
            self.stopped,
            self.wrong.as_deref().unwrap_or("as expected")
        )
    }
}

/// Runs one soak run and looks at what it left.
#[allow(clippy::too_many_arguments)]
pub fn soak_one(
    runtime: &tokio::runtime::Runtime,
    bin: &Path,
    root: &Path,
    name: &str,
    recipe: &'static str,
    node: &str,
    way: Way,
    after_ms: u64,
    seed: u64,
) -> anyhow::Result<Outcome> {
    let runs = root.join(name);
    let log = std::fs::File::create(root.join(format!("{name}.log")))?;
    let mut child = Command::new(bin)
        .args(["run", "--quiet", "--name", name, "--recipe", recipe])
        .args(["--time-limit", "14s", "--seed", &seed.to_string()])
        .arg("--runs")
        .arg(&runs)
        .stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .context("starting fencecheck run")?;
    let run_id = containers::docker::docker_safe(name);
    let container = containers::docker::container_name(&run_id, node);
    let (dir, way) = if way == Way::Finish {
        (None, way)
    } else {
        let dir = wait_for_workload(&runs, &mut child)?;
        std::thread::sleep(Duration::from_millis(after_ms));
        // A run that ended before it could be disturbed (its containers are gone: a `docker
        // kill` would fail and end the soak) is judged as one left to finish.
        if child.try_wait()?.is_some() {
            (dir, Way::Finish)
        } else {
            act(runtime, &mut child, way, &container)?;
            (dir, way)
        }
    };
    let status = child.wait().context("waiting for the run")?;
    if way == Way::Sigkill {
        let clean = Command::new(bin)
            .args(["clean", "--run", &run_id])
            .output()
            .context("fencecheck clean")?;
        anyhow::ensure!(
            clean.status.success(),
            "fencecheck clean --run {run_id} failed"
        );
    }
    let dir = match dir {
        Some(d) => d,
        None => std::fs::canonicalize(runs.join("latest")).context("the run's directory")?,
    };
    let recheck = Command::new(bin)
        .arg("check")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("fencecheck check")?
        .code();
    let reader = RunReader::open(&dir);
    let stage = reader.state().ok().flatten().map(|s| s.state);
    let state = stage.map_or("none".into(), |s| format!("{s:?}").to_lowercase());
    let history = std::fs::read_to_string(dir.join(results::layout::HISTORY)).unwrap_or_default();
    let torn = torn(
        &dir.join(results::layout::HISTORY),
        stage == Some(Stage::Completed),
    );
    let leftovers = runtime.block_on(leftovers(&run_id));
    let stopped = stopped_processes(&run_id);
    let mut outcome = Outcome {
        recipe,
        way,
        exit: status.code(),
        recheck,
        state,
        torn,
        leftovers,
        stopped,
        wrong: None,
    };
    outcome.wrong = judge(&outcome, stage, &history, node);
    Ok(outcome)
}

/// Waits until the run records a granted acquire; returns its directory.
fn wait_for_workload(runs: &Path, child: &mut Child) -> anyhow::Result<Option<std::path::PathBuf>> {
    let started = Instant::now();
    loop {
        if let Ok(dir) = std::fs::canonicalize(runs.join("latest")) {
            let h = std::fs::read_to_string(dir.join(results::layout::HISTORY)).unwrap_or_default();
            if h.contains("\"type\":\"ok\",\"f\":\"acquire\"") {
                return Ok(Some(dir));
            }
        }
        if child.try_wait()?.is_some() {
            return Ok(None); // it ended before its workload: judged as it stands
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(180),
            "the run never granted an acquire within 180 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Ends or disturbs the run the drawn way.
fn act(
    runtime: &tokio::runtime::Runtime,
    child: &mut Child,
    way: Way,
    container: &str,
) -> anyhow::Result<()> {
    let pid = Pid::from_raw(child.id() as i32);
    match way {
        Way::Finish => {}
        Way::Sigint => kill(pid, Signal::SIGINT).context("SIGINT to the run")?,
        Way::Sigkill => kill(pid, Signal::SIGKILL).context("SIGKILL to the run")?,
        Way::NodeKilled => runtime.block_on(containers::docker::outside::kill(container))?,
        Way::NodeFrozen => {
            runtime.block_on(containers::docker::outside::pause(container))?;
            std::thread::sleep(Duration::from_secs(6));
            runtime.block_on(containers::docker::outside::unpause(container))?;
        }
    }
    Ok(())
}

/// Containers and networks of the run still there.
async fn leftovers(run_id: &str) -> u32 {
    let Ok(docker) = containers::docker::connect().await else {
        return u32::MAX;
    };
    let c = containers::docker::list_run_containers(&docker, Some(run_id))
        .await
        .map_or(u32::MAX as usize, |c| c.len());
    let n = containers::docker::list_run_networks(&docker, Some(run_id))
        .await
        .map_or(u32::MAX as usize, |n| n.len());
    (c + n) as u32
}

/// The expectation a run of this way broke, if any.
fn judge(o: &Outcome, stage: Option<Stage>, history: &str, node: &str) -> Option<String> {
    let node = node.to_string();
    let died = history.contains("start-node-died");
    let died_here = history
        .lines()
        .any(|l| l.contains("start-node-died") && l.contains(&format!("\"{node}\"")));
    let wrong = |why: String| Some(why);
    match o.way {
        Way::Finish if !matches!(o.exit, Some(0..=2)) => wrong(format!("exit {:?}", o.exit)),
        Way::Finish if o.recheck != o.exit => wrong(format!("re-check {:?}", o.recheck)),
        Way::Finish if stage != Some(Stage::Completed) => wrong("not completed".into()),
        Way::Sigint if o.exit != Some(130) => wrong(format!("exit {:?} after SIGINT", o.exit)),
        Way::Sigint if !matches!(o.recheck, Some(1 | 2)) => {
            wrong(format!("interrupted run re-checked {:?}", o.recheck))
        }
        Way::Sigint if died => wrong("the run's teardown was recorded as a death".into()),
        Way::Sigkill if !matches!(o.recheck, Some(1 | 2)) => {
            wrong(format!("killed run re-checked {:?}", o.recheck))
        }
        Way::NodeKilled if !died_here => wrong(format!("the death of {node} not recorded")),
        Way::NodeKilled if !matches!(o.exit, Some(1 | 2)) => {
            wrong(format!("exit {:?} although {node} never came back", o.exit))
        }
        Way::NodeFrozen
            if !(history.contains("start-node-frozen") && history.contains("stop-node-frozen")) =>
        {
            wrong(format!("the freeze of {node} not recorded"))
        }
        Way::NodeFrozen if died => wrong("a freeze recorded as a death".into()),
        _ if o.way != Way::NodeKilled && o.way != Way::Sigkill && died => {
            wrong("a death nobody caused".into())
        }
        _ => None,
    }
}

/// Processes stopped (state T) on this machine that are this run's to resume: a pause nobody
/// resumed. Stopped processes inside the containers of *other* fencecheck runs (a matrix
/// running beside the soak pauses its own holders) are theirs, not this run's, and are not
/// counted; any other stopped process is.
fn stopped_processes(run_id: &str) -> u32 {
    let ids = |filter: &str| -> Vec<String> {
        std::process::Command::new("docker")
            .args(["ps", "-aq", "--no-trunc", "--filter", filter])
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let ours = ids(&format!("label=fencecheck.run={run_id}"));
    let others: Vec<String> = ids("label=fencecheck.run")
        .into_iter()
        .filter(|id| !ours.contains(id))
        .collect();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            // `pid (comm) S ...`: the state follows the last ')'.
            std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|st| {
                    st.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().starts_with('T'))
                })
                .unwrap_or(false)
        })
        .filter(|e| {
            let cgroup = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default();
            !others.iter().any(|id| cgroup.contains(id.as_str()))
        })
        .count() as u32
}

/// Whether a history has a line that is not JSON before its end (a torn middle), or any torn
/// line at all when the run says it completed.
fn torn(history: &Path, completed: bool) -> bool {
    let Ok(text) = std::fs::read_to_string(history) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    let bad: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| serde_json::from_str::<serde_json::Value>(l).is_err())
        .map(|(i, _)| i)
        .collect();
    // A SIGKILLed harness may leave its last line half-written; nothing before it may be.
    bad.iter().any(|&i| completed || i + 1 < lines.len()) || (completed && !text.ends_with('\n'))
}
