//! `fencecheck reproduce` against a real provider (Redis in containers): a stored run whose
//! unfenced resource accepted a paused holder's late write (recorded by replaying the unfenced
//! stale-fence timeline, so the stored run fails the same way every time) becomes a scenario
//! with the holder's pause, the wait for its lease, the newer holder's write and the late
//! write; replayed, the anomaly comes back and every expectation holds (exit 0), and the run
//! leaves no container behind.

use crate::support::infra::labelled_containers;
use std::process::Command;

const UNFENCED: &str = "name: t-reproduce-source
providers: [redis]
resource: none
ttl: 1s
workers: [A, B]
steps:
  - A: acquire
  - A: pause
  - wait: lease-expired A
  - B: acquire
  - B: write v2
  - A: resume
  - A: write v1
expect_anomalies: [stale-accepted-write]
";

/// `fencecheck replay <scenario> --runs <runs>`, expected to hold every expectation: the run
/// it stored.
fn replayed(scenario: &std::path::Path, runs: &std::path::Path) -> std::path::PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("replay")
        .arg(scenario)
        .arg("--runs")
        .arg(runs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    std::fs::canonicalize(runs.join("latest")).unwrap()
}

/// `fencecheck reproduce <stored> -o <scenario> --runs <runs>`, expected to exit 0: its
/// standard output and the scenario it wrote.
fn reproduced(
    stored: &std::path::Path,
    scenario: &std::path::Path,
    runs: &std::path::Path,
) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("reproduce")
        .arg(stored)
        .arg("-o")
        .arg(scenario)
        .arg("--runs")
        .arg(runs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, std::fs::read_to_string(scenario).unwrap())
}

#[test]
fn a_stored_stale_write_becomes_a_scenario_that_shows_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.yaml");
    std::fs::write(&source, UNFENCED).unwrap();
    let runs = dir.path().join("runs");
    let stored = replayed(&source, &runs);
    let scenario = dir.path().join("made.yaml");
    let (stdout, text) = reproduced(&stored, &scenario, &runs);
    assert!(
        stdout.contains("reproduced: stale-accepted-write came back"),
        "{stdout}"
    );
    for line in [
        "provider: redis",
        "resource: none",
        "expect_anomalies: [stale-accepted-write]",
        "  - A: pause",
        "  - wait: lease-expired A",
        "  - B: write v2",
        "  - A: write v1",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(labelled_containers("replay-t-reproduce-source").is_empty());
}

/// The stored run of a release that deleted the lock by its name alone: its double-release
/// comes back in a scenario that also expects what the lock service's own record showed of the
/// same acquisitions (the new holder's key deleted by the stale release), and the replay shows
/// both.
#[test]
fn a_double_release_carries_the_services_record_of_it_into_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let stored = replayed(&repo.join("scenarios").join("redis-lock-del.yaml"), &runs);
    // Its own name: a replay's containers are named after its scenario.
    let scenario = dir.path().join("made-double-release.yaml");
    let (stdout, text) = reproduced(&stored, &scenario, &runs);
    assert!(
        stdout.contains("reproduced: double-release came back, every expectation held"),
        "{stdout}"
    );
    for line in [
        "expect_anomalies: [double-release, deleted-anothers-key]",
        "# The lock service's own record showed beside it",
        "#   deleted-anothers-key: ",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(labelled_containers("replay-redis-lock-del").is_empty());
}
