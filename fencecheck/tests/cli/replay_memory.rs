//! `fencecheck replay` and `fencecheck reproduce` on the in-process site, in a plain `cargo
//! test` with no Docker: a scenario on the memory provider runs its steps against the
//! in-process lock service and workers, its faults struck and lifted by the nemesis executor
//! itself, and a memory run's anomaly becomes a scenario that replays there with the run's
//! planted bug.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FENCECHECK: &str = env!("CARGO_BIN_EXE_fencecheck");

const STALE: &str = "name: mem-stale
provider: memory
resource: strict
ttl: 1s
workers: [A, B]
steps:
  - A: acquire
    expect: acquired
  - A: pause
  - wait: lease-expired A
  - B: acquire
    expect: token > A.token
  - B: write v2
    expect: accepted
  - A: resume
  - A: write v1
    expect: rejected-stale-fence
  - A: release
    expect: release-rejected-not-owner
  - B: release
    expect: released
";

fn root(name: &str) -> PathBuf {
    crate::support::infra::fresh_root("replay-memory", name)
}

fn explain(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn replay(root: &Path, text: &str) -> Output {
    let file = root.join("scenario.yaml");
    std::fs::write(&file, text).unwrap();
    Command::new(FENCECHECK)
        .arg("replay")
        .arg(&file)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap()
}

/// The one directory in `dir` (a link named `latest` aside).
fn only_dir(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap() != "latest")
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// The one run under `runs` (one test, run once), its directory.
fn only_run(runs: &Path) -> PathBuf {
    only_dir(&only_dir(runs))
}

/// The nemesis lines of a run's history: (`f`, targets, error).
fn faults(run: &Path) -> Vec<(String, Vec<String>, Option<String>)> {
    std::fs::read_to_string(run.join("history.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["process"] == "nemesis")
        .map(|e| {
            let targets = e["value"]["targets"]
                .as_array()
                .map(|t| t.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            let error = e["value"]["error"].as_str().map(str::to_string);
            (e["f"].as_str().unwrap().to_string(), targets, error)
        })
        .collect()
}

#[test]
fn a_scenario_replays_on_the_in_process_site() {
    let r = root("stale");
    let out = replay(&r, STALE);
    let said = explain(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("== mem-stale on memory =="), "{said}");
    assert!(said.contains("every expectation held"), "{said}");
    // The paused worker's late write met the fence, its stale release was refused.
    assert!(said.contains("| rejected-stale-fence       | rejected-stale-fence"));
    let run = only_run(&r.join("runs"));
    let a = vec!["A".to_string()];
    assert_eq!(
        faults(&run),
        [
            ("start-pause-worker".to_string(), a.clone(), None),
            ("stop-pause-worker".to_string(), a, None)
        ]
    );
    let verdict: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    assert_eq!(verdict["valid"], true, "{verdict}");
    assert_eq!(verdict["stats"]["faults"]["landed"], 1, "{verdict}");
}

#[test]
fn a_killed_worker_stays_dead_and_an_expectation_that_fails_exits_1() {
    let r = root("kill");
    let text = "name: mem-kill
provider: memory
ttl: 500ms
workers: [A, B]
steps:
  - A: acquire
  - A: kill
  - wait: lease-expired A
  - B: acquire
    expect: acquired
  - B: write v2
    expect: rejected-stale-fence
";
    let out = replay(&r, text);
    let said = explain(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("expected rejected-stale-fence, got accepted"),
        "{said}"
    );
    let run = only_run(&r.join("runs"));
    let a = vec!["A".to_string()];
    // Its stop is recorded at once, with no restart and nothing for the final heal to undo.
    assert_eq!(
        faults(&run),
        [
            ("start-kill-worker".to_string(), a.clone(), None),
            ("stop-kill-worker".to_string(), a, None)
        ]
    );
}

#[test]
fn a_memory_runs_planted_bug_is_reproduced_and_replayed_in_process() {
    let r = root("reproduce");
    let yaml = "provider: memory
workers: 3
ttl: 300ms
time_limit: 4s
recovery: 1s
recovery_slack: 1s
seed: 5
memory_bugs: [release-without-owner-check]
nemesis_timeline:
  - at 500ms start pause-holder for 800ms
  - at 2s start pause-holder for 800ms
";
    let out = crate::support::infra::run_config(&r, yaml, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let run = std::fs::canonicalize(r.join("runs/latest")).unwrap();
    let out = Command::new(FENCECHECK)
        .arg("reproduce")
        .arg(&run)
        .arg("--runs")
        .arg(r.join("replays"))
        .output()
        .unwrap();
    let said = explain(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("reproduced: double-release came back"),
        "{said}"
    );
    let scenario = std::fs::read_to_string(run.join("reproduce-1.yaml")).unwrap();
    assert!(scenario.contains("provider: memory\n"), "{scenario}");
    assert!(
        scenario.contains("memory_bugs: [release-without-owner-check]\n"),
        "{scenario}"
    );
    let replayed = only_run(&r.join("replays"));
    assert!(faults(&replayed)
        .iter()
        .any(|(f, t, _)| f == "start-pause-worker" && t == &["A".to_string()]));
}

#[test]
fn a_step_the_in_process_site_cannot_take_is_refused_naming_its_line() {
    let r = root("refused");
    let text = "name: mem-isolate
provider: memory
workers: [A, B]
steps:
  - A: acquire
  - A: isolate
";
    let out = replay(&r, text);
    let said = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.contains("line 6: isolate-worker cannot act on memory"),
        "{said}"
    );
    assert!(!r.join("runs").exists(), "a run directory was made: {said}");
}
