//! `fencecheck check <run-dir>` as a user runs it: the real binary on temporary run
//! directories. Exit codes are those of docs/design.md, "Exit codes"; malformed input names the file and line, never
//! panics.

use checkers::testkit::training_timeline;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary run directory, removed when the test ends.
struct TempRun(PathBuf);

impl std::ops::Deref for TempRun {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_dir(name: &str) -> TempRun {
    let dir = std::env::temp_dir().join(format!("fc-check-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempRun(dir)
}

fn jsonl<T: serde::Serialize>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| serde_json::to_string(i).unwrap() + "\n")
        .collect()
}

/// A run directory holding the training timeline (fenced or not).
fn training_dir(name: &str, fenced: bool) -> TempRun {
    let dir = run_dir(name);
    let (h, r) = training_timeline(fenced);
    std::fs::write(dir.join("history.jsonl"), jsonl(&h)).unwrap();
    std::fs::write(dir.join("resource.jsonl"), jsonl(&r)).unwrap();
    std::fs::write(dir.join("test.yaml"), "name: training\nttl: 2s\nseed: 7\n").unwrap();
    dir
}

fn check(dir: &Path) -> (u8, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("check")
        .arg(dir)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&stdout).to_string(),
        String::from_utf8_lossy(&stderr).to_string(),
    );
    assert!(!err.contains("panicked"), "{err}");
    (status.code().unwrap() as u8, out, err)
}

#[test]
fn a_fenced_run_is_valid_and_results_json_is_written() {
    let dir = training_dir("fenced", true);
    let (code, out, err) = check(&dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("concurrent-holders"), "{out}");
    assert!(out.contains("verdict: VALID"), "{out}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(written["valid"], true);
    assert_eq!(written["anomalies"][0]["kind"], "concurrent-holders");
}

#[test]
fn an_unfenced_run_is_invalid_with_evidence_in_results_json() {
    let dir = training_dir("unfenced", false);
    let (code, out, _) = check(&dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("stale-accepted-write") && out.contains("INVALID"),
        "{out}"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(written["valid"], false);
    assert_eq!(written["anomalies"][0]["highest_before"], 2);
}

#[test]
fn a_history_whose_indices_go_backwards_is_judged_with_a_warning() {
    let dir = training_dir("reordered", true);
    let (h, _) = training_timeline(true);
    let line = |i: usize| serde_json::to_string(&h[i]).unwrap();
    let write = |lines: Vec<String>| {
        std::fs::write(dir.join("history.jsonl"), lines.join("\n") + "\n").unwrap();
        let (_, out, err) = check(&dir);
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        (out + &err, written["stats"]["indices_out_of_order"].clone())
    };
    // In order: nothing said.
    let (out, stat) = write((0..h.len()).map(line).collect());
    assert!(!out.contains("warning"), "{out}");
    assert!(stat.is_null(), "{stat}");
    // A blank line (counted), then two lines swapped by hand: the first is line 5.
    let mut lines: Vec<String> = (0..h.len()).map(line).collect();
    lines.swap(2, 3);
    lines.insert(1, String::new());
    let (out, stat) = write(lines.clone());
    assert!(
        out.contains(
            "warning: the history's indices go backwards or repeat at 1 event \
             (first: line 5, index 2 after index 3)"
        ),
        "{out}"
    );
    assert_eq!(
        stat,
        serde_json::json!({"count": 1, "line": 5, "index": 2, "after": 3})
    );
    // And a repeated line: two events.
    lines.push(lines.last().unwrap().clone());
    let (out, stat) = write(lines);
    assert!(out.contains("repeat at 2 events (first: line 5,"), "{out}");
    assert_eq!(stat["count"], 2);
}

fn with_history(name: &str, history: &str) -> (u8, String, String) {
    let dir = training_dir(name, true);
    std::fs::write(dir.join("history.jsonl"), history).unwrap();
    check(&dir)
}

#[test]
fn malformed_lines_exit_3_naming_file_and_line() {
    let good = r#"{"index":0,"time":0,"process":1,"type":"invoke","f":"acquire","lock":"l"}"#;
    let cases = [
        ("notjson", format!("{good}\n\nnot json\n"), "history.jsonl:3:", "expected"),
        (
            "missing",
            format!("{good}\n{{\"index\":1,\"time\":5,\"type\":\"ok\",\"f\":\"acquire\"}}\n"),
            "history.jsonl:2:",
            "missing field `process`",
        ),
        (
            "badtype",
            format!("{good}\n{{\"index\":1,\"time\":5,\"process\":1,\"type\":\"maybe\",\"f\":\"acquire\"}}\n"),
            "history.jsonl:2:",
            "maybe",
        ),
    ];
    for (name, text, place, what) in cases {
        let (code, out, err) = with_history(name, &text);
        assert_eq!(code, 3, "{name}: {out}{err}");
        assert!(err.contains(place) && err.contains(what), "{name}: {err}");
    }
}

#[test]
fn a_torn_last_line_is_unknown_and_what_came_before_is_judged() {
    // The unfenced training run, cut off in the middle of a final line: its stale write (before
    // the cut) is still found; a fenced one becomes unknown, not valid, naming the line.
    for (fenced, expected) in [(false, 1), (true, 2)] {
        let dir = training_dir(&format!("torn-{fenced}"), fenced);
        let mut text = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
        let lines = text.lines().count();
        text.push_str(r#"{"index":99,"time":99,"process":1,"ty"#);
        std::fs::write(dir.join("history.jsonl"), &text).unwrap();
        let (code, out, err) = check(&dir);
        assert_eq!(code, expected, "fenced {fenced}: {out}{err}");
        let place = format!("history.jsonl:{}: the last line is cut off", lines + 1);
        assert!(out.contains(&place), "fenced {fenced}: {out}");
        let results = std::fs::read_to_string(dir.join("results.json")).unwrap();
        assert!(results.contains("cut off"), "{results}");
        // The same line with its newline is malformed input, not a torn write.
        std::fs::write(dir.join("history.jsonl"), text + "\n").unwrap();
        let (code, _, err) = check(&dir);
        assert_eq!(code, 3, "{err}");
    }
}

#[test]
fn an_empty_history_is_unknown() {
    let (code, out, _) = with_history("empty", "");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("history is empty"), "{out}");
}

#[test]
fn a_missing_resource_log_is_unknown_and_named() {
    let dir = training_dir("nores", true);
    std::fs::remove_file(dir.join("resource.jsonl")).unwrap();
    let (code, out, _) = check(&dir);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("resource.jsonl: missing"), "{out}");
}

#[test]
fn a_malformed_resource_line_exits_3() {
    let dir = training_dir("badres", true);
    std::fs::write(dir.join("resource.jsonl"), "{\"seq\":0}\n").unwrap();
    let (code, _, err) = check(&dir);
    assert_eq!(code, 3);
    assert!(
        err.contains("resource.jsonl:1:") && err.contains("missing field"),
        "{err}"
    );
}

#[test]
fn unusable_run_directories_exit_3() {
    let (code, _, err) = check(Path::new("/nonexistent/fencecheck/run"));
    assert_eq!(code, 3);
    assert!(err.contains("not a run directory"), "{err}");

    let dir = training_dir("nohistory", true);
    std::fs::remove_file(dir.join("history.jsonl")).unwrap();
    let (code, _, err) = check(&dir);
    assert_eq!(code, 3);
    assert!(err.contains("history.jsonl: missing"), "{err}");

    let dir = training_dir("badyaml", true);
    std::fs::write(dir.join("test.yaml"), "ttl: soon\n").unwrap();
    let (code, _, err) = check(&dir);
    assert_eq!(code, 3);
    assert!(err.contains("test.yaml") && err.contains("ttl"), "{err}");
}
