//! Phase 1 of a run: its directory, the fully resolved `test.yaml` (written before anything
//! starts, so even a run that dies at once says what it was), `state.json` (running, until the
//! run says how it ended: a harness killed outright leaves it running, and its history is then
//! judged at best unknown), and the harness log.

use crate::config::TestPlan;
use anyhow::Context;
use results::layout::{self, RunDir};
use results::run_state::{RunState, Stage};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What made a run directory, which decides what its `test.yaml` holds and how it says to
/// repeat the run.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// `fencecheck run`: `test.yaml` is the fully resolved test, and re-runs as it is.
    Run,
    /// `fencecheck replay` of the scenario file at `scenario` on the plan's provider:
    /// `test.yaml` holds the plan the replay built (what `check` and the report read) and the
    /// scenario's name and step count; only the scenario file repeats the steps.
    Replay {
        scenario: &'a Path,
        name: &'a str,
        steps: usize,
    },
}

impl Origin<'_> {
    /// The command line that repeats the run, as the top of `test.yaml` says it.
    pub fn rerun_command(&self, dir: &RunDir, plan: &TestPlan) -> String {
        match self {
            Origin::Run => plan.rerun_command(&dir.file(layout::TEST_YAML)),
            Origin::Replay { scenario, .. } => format!(
                "fencecheck replay {} --provider {}",
                scenario.display(),
                plan.provider.as_str()
            ),
        }
    }
}

/// Creates the run directory of `fencecheck run`, writes `test.yaml` and marks the run as
/// running.
pub fn create_run_dir(root: &Path, plan: &TestPlan) -> anyhow::Result<RunDir> {
    create_run_dir_for(root, plan, Origin::Run)
}

/// [`create_run_dir`] for a run of any origin (a replay's `test.yaml` names its scenario).
pub fn create_run_dir_for(
    root: &Path,
    plan: &TestPlan,
    origin: Origin<'_>,
) -> anyhow::Result<RunDir> {
    let dir = RunDir::create(root, &plan.name, &layout::utc_stamp_now())
        .with_context(|| format!("cannot create a run directory under {}", root.display()))?;
    write_test_yaml(&dir, plan, origin)?;
    mark(&dir.path, Stage::Running, None)?;
    Ok(dir)
}

/// Records how the run ended in `state.json`: completed when recording ended as planned,
/// interrupted (with the reason) when it stopped early. Once SIGINT / SIGTERM arrived the run
/// is interrupted, whatever the main path saw. (The signal thread marks it interrupted too,
/// and may do so after this wrote `completed`: a Ctrl-C right at the end leaves the run
/// marked interrupted, which only ever claims less.)
pub fn finish(dir: &Path, recorded: &anyhow::Result<()>) -> anyhow::Result<()> {
    if containers::docker::interrupted() {
        return mark(dir, Stage::Interrupted, Some(INTERRUPTED.into()));
    }
    match recorded {
        Ok(()) => mark(dir, Stage::Completed, None),
        Err(e) => mark(dir, Stage::Interrupted, Some(format!("{e:#}"))),
    }
}

/// Why an interrupted run stopped, as `state.json` says it.
pub const INTERRUPTED: &str = "SIGINT / SIGTERM";

/// Writes `state.json`.
pub fn mark(dir: &Path, state: Stage, reason: Option<String>) -> anyhow::Result<()> {
    RunState::now(state, reason).write(dir).with_context(|| {
        format!(
            "cannot write {}",
            dir.join(results::run_state::STATE).display()
        )
    })
}

/// Writes `test.yaml`: the command that repeats the run (a comment the report shows), the plan
/// (its fault plan included), then a replay's scenario.
fn write_test_yaml(dir: &RunDir, plan: &TestPlan, origin: Origin<'_>) -> anyhow::Result<()> {
    let mut text = String::from(match origin {
        Origin::Run => "# The fully resolved test of this run. Re-run it with:\n",
        Origin::Replay { .. } => {
            "# The test plan a replay ran on, for `check` and the report (`run` refuses it).\n\
             # Repeat the replay with:\n"
        }
    });
    text.push_str(&format!("#   {}\n", origin.rerun_command(dir, plan)));
    let yaml = crate::config::plan_file::to_yaml(plan)
        .map_err(|e| anyhow::anyhow!("cannot serialize the test plan: {e}"))?;
    text.push_str(&yaml);
    if let Origin::Replay { name, steps, .. } = origin {
        text.push_str(&format!("replay_scenario: {name}\nreplay_steps: {steps}\n"));
    }
    let path = dir.file(layout::TEST_YAML);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// `harness.log`: what the harness did and when, line by line, shared by every phase.
#[derive(Debug, Clone)]
pub struct HarnessLog {
    file: Arc<Mutex<std::fs::File>>,
    started: std::time::Instant,
}

impl HarnessLog {
    pub fn create(dir: &RunDir) -> anyhow::Result<Self> {
        let path = dir.file(layout::HARNESS_LOG);
        let file = std::fs::File::create(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
            started: std::time::Instant::now(),
        })
    }

    /// Appends one line, prefixed with the wall seconds since the harness started.
    pub fn line(&self, text: &str) {
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(f, "[{:>8.3}s] {text}", self.started.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, RawTest};

    #[test]
    fn test_yaml_holds_the_resolved_plan_that_check_reads() {
        let root = std::env::temp_dir().join(format!("fc-prepare-{}", std::process::id()));
        let plan = validate(RawTest::default(), 42).unwrap();
        let dir = create_run_dir(&root, &plan).unwrap();
        let text = std::fs::read_to_string(dir.file(layout::TEST_YAML)).unwrap();
        assert!(text.contains("seed: 42"), "{text}");
        assert!(text.contains("ttl: 2s"), "{text}");
        assert!(text.contains("recovery_slack: 5s"), "{text}");
        assert!(text.contains("- stale-accepted-write"), "{text}");
        assert!(text.contains("fencecheck run --config "), "{text}");
        let state = RunState::read(&dir.path).unwrap().unwrap();
        assert_eq!(
            state.state,
            Stage::Running,
            "running until the run says how it ended"
        );
        // The stored test re-runs as it is: reading it back gives the same plan.
        let back = crate::config::load_file(&dir.file(layout::TEST_YAML)).unwrap();
        assert_eq!(validate(back, 0).unwrap(), plan);
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A replay's `test.yaml` cannot be re-run with `fencecheck run --config` (its
    /// `replay_*` keys are refused, and a plan has no steps): it names the scenario file.
    #[test]
    fn a_replay_s_test_yaml_says_to_replay_its_scenario_again() {
        let root = std::env::temp_dir().join(format!("fc-prepare-replay-{}", std::process::id()));
        let raw = RawTest {
            name: Some("replay-stale-fence-etcd".into()),
            ..RawTest::default()
        };
        let plan = validate(raw, 0).unwrap();
        let origin = Origin::Replay {
            scenario: Path::new("scenarios/stale-fence.yaml"),
            name: "stale-fence",
            steps: 9,
        };
        let dir = create_run_dir_for(&root, &plan, origin).unwrap();
        let text = std::fs::read_to_string(dir.file(layout::TEST_YAML)).unwrap();
        assert!(
            text.contains("#   fencecheck replay scenarios/stale-fence.yaml --provider etcd\n"),
            "{text}"
        );
        assert!(!text.contains("fencecheck run"), "{text}");
        assert!(
            text.contains("replay_scenario: stale-fence\nreplay_steps: 9\n"),
            "{text}"
        );
        // The report picks the first `fencecheck ...` comment line as its re-run line.
        let first = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| l.starts_with("fencecheck "));
        assert_eq!(
            first,
            Some("fencecheck replay scenarios/stale-fence.yaml --provider etcd")
        );
        // What `check` reads is still there; `run --config` refuses the file, as the header says.
        assert!(text.contains("ttl: 2s"), "{text}");
        assert!(crate::config::load_file(&dir.file(layout::TEST_YAML)).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
