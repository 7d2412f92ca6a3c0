//! `fencecheck replay` as a specification of its exits: a malformed scenario is rejected with
//! its file:line and exit 3 before any container starts; a scenario whose expectation does not
//! hold exits 1 and names the step and why (this one runs real containers).

use crate::support::infra::labelled_containers;

use std::path::Path;
use std::process::{Command, Output};

const STALE: &str = "name: NAME
providers: [redis]
resource: strict
ttl: 1s
workers: [A, B]
steps:
  - A: acquire
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
";

fn replay(dir: &Path, name: &str, text: &str) -> (Output, String) {
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, text.replace("NAME", name)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("replay")
        .arg(&file)
        .arg("--runs")
        .arg(dir.join("runs"))
        .output()
        .unwrap();
    (out, file.display().to_string())
}

fn rejected(name: &str, text: &str, line: u32, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (out, file) = replay(dir.path(), name, text);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("{file}:{line}: ")), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
    assert!(labelled_containers(&format!("replay-{name}-redis")).is_empty());
    assert!(
        !dir.path().join("runs").exists(),
        "a run directory was created"
    );
}

#[test]
fn an_unknown_worker_is_rejected_with_its_line_before_anything_starts() {
    let text = STALE.replace("  - B: write v2", "  - C: write v2");
    rejected("t-replay-unknown-worker", &text, 12, "unknown worker \"C\"");
}

#[test]
fn a_write_before_the_first_acquire_is_rejected_with_its_line() {
    let text = STALE.replace("  - A: acquire\n", "  - A: write v0\n");
    rejected(
        "t-replay-before-acquire",
        &text,
        7,
        "before its first acquire",
    );
}

#[test]
fn an_unknown_action_is_rejected_with_its_line() {
    let text = STALE.replace("  - A: pause", "  - A: nap");
    rejected(
        "t-replay-unknown-action",
        &text,
        8,
        "unknown action \"nap\"",
    );
}

#[test]
fn a_provider_the_scenario_cannot_run_on_is_a_harness_error() {
    let dir = tempfile::tempdir().unwrap();
    let text = STALE.replace("providers: [redis]", "providers: [etcd]");
    let (out, _) = replay(dir.path(), "t-replay-etcd-ttl", &text);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("minimum of 2s"), "{stderr}");
    assert!(labelled_containers("replay-t-replay-etcd-ttl-etcd").is_empty());
}

#[test]
fn a_wrong_expectation_exits_1_naming_the_step_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let text = STALE.replace(
        "  - A: write v1\n    expect: rejected-stale-fence",
        "  - A: write v1\n    expect: accepted",
    );
    let (out, _) = replay(dir.path(), "t-replay-wrong", &text);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("✗ step 7 (line 15) A write v1: expected accepted, got rejected-stale-fence"),
        "{stdout}"
    );
    assert!(stdout.contains("EXPECTATIONS FAILED"), "{stdout}");
    // The steps after the failing one still ran.
    assert!(
        stdout.contains("release-rejected-not-owner | ✓"),
        "{stdout}"
    );
    assert!(labelled_containers("replay-t-replay-wrong-redis").is_empty());
}

/// A step's fault the run would refuse (a client clock step on a Go client, which libfaketime
/// cannot reach; a step on the links on Sentinel, whose clients pass no link proxy; a member
/// restarted without its data on etcd) is refused before anything starts, naming its line.
#[test]
fn a_fault_step_the_provider_or_client_cannot_take_is_refused_with_its_line() {
    for (name, text, says) in [
        (
            "t-replay-go-clock",
            STALE
                .replace("providers: [redis]\n", "client: etcd-concurrency\n")
                .replace("ttl: 1s", "ttl: 2s")
                .replace("  - A: pause\n", "  - A: client-clock-jump 10s\n"),
            "line 8: a client clock step cannot act on client etcd-concurrency: its lock client is a Go program",
        ),
        (
            "t-replay-sentinel-slow",
            STALE
                .replace("providers: [redis]", "providers: [redis-sentinel]")
                .replace("  - A: pause\n", "  - A: slow-reply\n"),
            "line 8: slow-reply cannot act on redis-sentinel",
        ),
        (
            "t-replay-sentinel-cut",
            STALE
                .replace("providers: [redis]", "providers: [redis-sentinel]")
                .replace("  - A: pause\n", "  - A: cut-renew-reply\n"),
            "line 8: cut-renew-reply cannot act on redis-sentinel",
        ),
        (
            "t-replay-etcd-empty",
            STALE
                .replace("providers: [redis]", "providers: [etcd]")
                .replace("ttl: 1s", "ttl: 2s")
                .replace("  - A: pause\n", "  - nemesis: restart-empty leader\n"),
            "line 8: restart-empty-leader cannot act on etcd: ",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (out, file) = replay(dir.path(), name, &text);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{name}: {stderr}");
        assert!(stderr.contains(&file), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(
            !dir.path().join("runs").exists(),
            "{name}: a run directory was created"
        );
    }
}
