//! The specifications of `RunReader`: what a run directory reads as, and errors that name the
//! file (and line) to open.

use super::*;
use crate::event::{OpType, Process, F};
use crate::fault::FaultKind;
use crate::nemesis_event::NemesisEvent;
use crate::verdict::Validity;

fn event_line(e: &Event) -> String {
    serde_json::to_string(e).unwrap() + "\n"
}

fn history() -> String {
    let mut acquire = Event::new(1, Process::Worker(1), OpType::Invoke, F::Acquire);
    acquire.lock = Some("l".into());
    let pause = NemesisEvent::start(FaultKind::PauseHolder, vec!["worker-1".into()]).event(2);
    event_line(&acquire) + &event_line(&pause)
}

fn verdict() -> String {
    serde_json::json!({"valid": true, "anomalies": [], "stats": {}}).to_string()
}

#[test]
fn reads_a_run_streamed_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunReader::open(dir.path());
    std::fs::write(
        run.file(TEST_YAML),
        "# re-run with:\n#   fencecheck run --seed 7\nname: t\nseed: 7\nrecovery_slack: 1s\n",
    )
    .unwrap();
    std::fs::write(run.file(HISTORY), history()).unwrap();
    std::fs::write(run.file(RESULTS), verdict()).unwrap();
    let yaml = run.test_yaml().unwrap();
    assert!(yaml.text.starts_with("# re-run with:"));
    assert_eq!(yaml.value["seed"], 7);
    assert_eq!(
        run.check_config().unwrap().recovery_slack,
        std::time::Duration::from_secs(1)
    );
    assert_eq!(run.verdict().unwrap().valid, Validity::Valid);
    assert_eq!(run.state().unwrap(), None);
    let whole = run.history().unwrap();
    assert_eq!(whole.len(), 2);
    let mut streamed = Vec::new();
    let n = run
        .stream_history(|line, e| streamed.push((line, e.targets().len())))
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(streamed, [(1, 0), (2, 1)]);
    assert!(!run.has_resource_log());
    assert!(run.resource_log().unwrap().is_empty());
}

#[test]
fn a_missing_test_yaml_reads_as_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunReader::open(dir.path());
    let yaml = run.test_yaml().unwrap();
    assert_eq!(
        (yaml.text.as_str(), yaml.value),
        ("", serde_json::Value::Null)
    );
    assert_eq!(run.check_config().unwrap(), CheckConfig::default());
}

#[test]
fn a_torn_last_line_is_left_out_of_the_whole_history_and_reported_when_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunReader::open(dir.path());
    std::fs::write(run.file(HISTORY), history() + "{\"index\":2,\"ti").unwrap();
    assert_eq!(run.history().unwrap().len(), 2);
    let mut seen = 0;
    let err = run.stream_history(|_, _| seen += 1).unwrap_err();
    assert!(matches!(err, StoreError::TornTail { line: 3, .. }), "{err}");
    assert_eq!(seen, 2);
}

#[test]
fn every_error_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunReader::open(dir.path());
    let err = run.verdict().unwrap_err().to_string();
    assert!(err.contains("results.json"), "{err}");
    std::fs::write(run.file(RESULTS), "{\"valid\": \"maybe\"}").unwrap();
    let err = run.verdict().unwrap_err().to_string();
    assert!(
        err.contains("results.json: ") && err.contains("maybe"),
        "{err}"
    );
    std::fs::write(run.file(TEST_YAML), "name: [t\n").unwrap();
    let err = run.test_yaml().unwrap_err().to_string();
    assert!(err.contains("test.yaml: "), "{err}");
    std::fs::write(run.file(TEST_YAML), "ttl: soon\n").unwrap();
    let err = run.check_config().unwrap_err().to_string();
    assert!(err.contains("test.yaml: ttl: "), "{err}");
    let err = run.history().unwrap_err().to_string();
    assert!(err.contains("history.jsonl: "), "{err}");
    std::fs::write(run.file(HISTORY), history() + "not json\n" + &history()).unwrap();
    let err = run.history().unwrap_err().to_string();
    assert!(err.contains("history.jsonl:3: "), "{err}");
    let err = run.stream_history(|_, _| {}).unwrap_err().to_string();
    assert!(err.contains("history.jsonl:3: "), "{err}");
    std::fs::write(run.file(RESOURCE_LOG), "{}\n").unwrap();
    let err = run.resource_log().unwrap_err().to_string();
    assert!(
        err.contains("resource.jsonl:1: ") && err.contains("missing field"),
        "{err}"
    );
    std::fs::write(run.dir().join("state.json"), "{}").unwrap();
    let err = run.state().unwrap_err().to_string();
    assert!(err.contains("state.json: "), "{err}");
}
