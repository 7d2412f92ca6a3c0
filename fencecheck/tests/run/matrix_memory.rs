//! `fencecheck matrix` end to end over the in-process memory provider (no Docker, seconds): a
//! safe cell and a planted-bug cell over two seeds give the right rates, kinds and links in
//! matrix.md / .html / .json and exit 0; a cell expected unsafe that is actually safe fails the
//! matrix (exit 1) and is named; a malformed matrix file exits 3 naming the file and line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fc-matrix-memory-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn matrix(root: &Path, yaml: &str) -> Output {
    let config = root.join("matrix.yaml");
    std::fs::write(&config, yaml).unwrap();
    Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["matrix", "--config"])
        .arg(&config)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap()
}

fn explain(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const GRID: &str = "name: t-matrix-mem
seeds: [1, 2]
defaults: { provider: memory, workers: 4, ttl: 300ms, time_limit: 2s, recovery: 1s, recovery_slack: 1s }
cells:
  - { name: clean, expect: safe }
  - { name: tokens, memory_bugs: [tokens-not-monotonic], expect: \"unsafe: token-regression\" }
";

fn latest(root: &Path) -> PathBuf {
    std::fs::canonicalize(root.join("runs/matrix/t-matrix-mem/latest")).expect("latest matrix")
}

#[test]
fn a_safe_and_an_unsafe_cell_are_judged_and_tabled() {
    let r = root("grid");
    let out = matrix(&r, GRID);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("matrix: cell 2/2 seed 2 (run 4/4) tokens"),
        "a progress line per cell and seed: {stderr}"
    );
    let dir = latest(&r);

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(json["exit_code"], 0);
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let (clean, tokens) = (&cells[0], &cells[1]);
    assert_eq!(clean["label"], "clean");
    assert_eq!(clean["status"], "pass");
    assert_eq!(
        (clean["hits"].as_u64(), clean["decided"].as_u64()),
        (Some(0), Some(2))
    );
    assert!(clean["median_first_ns"].is_null());
    assert!(clean["acquires"].as_u64().unwrap() > 0, "{clean}");
    assert!(clean["acquire_p99_us"].as_u64() >= clean["acquire_p50_us"].as_u64());
    assert_eq!(tokens["status"], "pass");
    assert_eq!(tokens["rate_kind"], "token-regression");
    assert_eq!(
        (tokens["hits"].as_u64(), tokens["decided"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(tokens["kinds"]["token-regression"]["seeds"], 2);
    assert_eq!(tokens["kinds"]["duplicate-token"]["fails"], true);
    let first = tokens["median_first_ns"]
        .as_u64()
        .expect("a median first time");
    assert!(first < 4_000_000_000, "found within the run: {first}");
    for run in tokens["runs"].as_array().unwrap() {
        let run_dir = Path::new(run["dir"].as_str().unwrap());
        assert!(run_dir.join("report.html").is_file(), "{run}");
        assert!(run_dir.parent().unwrap().ends_with("t-matrix-mem-tokens"));
    }

    let md = std::fs::read_to_string(dir.join("matrix.md")).unwrap();
    assert!(
        md.contains("| `clean` | safe | ✅ pass | 0/2 (0%) failing |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| `tokens` | unsafe: token-regression | ✅ pass | 2/2 (100%) token-regression |"
        ),
        "{md}"
    );
    // Report links are relative to the matrix directory and resolve.
    let link = md
        .split("](")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("a report link");
    assert!(link.starts_with("../../../t-matrix-mem-clean/"), "{link}");
    assert!(dir.join(link).is_file(), "{link}");

    let html = std::fs::read_to_string(dir.join("matrix.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("</html>"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    assert!(html.contains("token-regression") && html.contains(link));
    let _ = std::fs::remove_dir_all(&r);
}

#[test]
fn an_unsafe_cell_that_turned_safe_fails_the_matrix_by_name() {
    let r = root("regressed");
    let yaml = GRID.replace(
        "memory_bugs: [tokens-not-monotonic], expect: \"unsafe: token-regression\"",
        "expect: \"unsafe: stale-accepted-write\"",
    );
    let out = matrix(&r, &yaml);
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let md = std::fs::read_to_string(latest(&r).join("matrix.md")).unwrap();
    assert!(
        md.contains("- `tokens` (FAIL): expected stale-accepted-write on at least 90% of seeds, found on 0 of 2"),
        "{md}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("exit 1 (a cell broke its expectation)"));
    let _ = std::fs::remove_dir_all(&r);
}

#[test]
fn a_malformed_matrix_exits_3_naming_the_file_and_line() {
    let r = root("bad");
    let out = matrix(
        &r,
        &GRID.replace("seeds: [1, 2]", "seeds: [1, 2]\nsedes: [3]"),
    );
    assert_eq!(out.status.code(), Some(3), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("matrix.yaml") && err.contains("sedes"),
        "{err}"
    );
    assert!(err.contains("line 3"), "the line of the typo: {err}");

    let out = matrix(&r, &GRID.replace("ttl: 300ms", "ttl: 0s"));
    assert_eq!(out.status.code(), Some(3), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("matrix.yaml: cell 1: ttl"), "{err}");
    assert!(!r.join("runs").exists(), "nothing ran");

    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["matrix", "--config"])
        .arg(r.join("missing.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.yaml: cannot read"));
    let _ = std::fs::remove_dir_all(&r);
}
