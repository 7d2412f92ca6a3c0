//! The specifications of `nemesis_event`: the lines its writers wrote before it existed, and one
//! reading of targets on every parse path.

use super::*;
use crate::event_ref::EventRef;
use serde_json::json;

fn line(e: &Event) -> String {
    serde_json::to_string(e).unwrap()
}

#[test]
fn writes_the_lines_the_three_writers_wrote() {
    let pause = NemesisEvent::start(FaultKind::PauseHolder, vec!["worker-3".into()]);
    assert_eq!(
        line(&pause.event(5)),
        r#"{"index":0,"time":5,"process":"nemesis","type":"info","f":"start-pause-holder","value":{"fault":"pause-holder","targets":["worker-3"]}}"#
    );
    let grudge = json!({"etcd-1": ["etcd-2"]});
    let deafen = NemesisEvent::start(FaultKind::DeafenHolder, vec!["worker-1".into()])
        .with("grudge", grudge.clone())
        .with("direction", "inbound");
    let old = json!({"fault": "deafen-holder", "targets": ["worker-1"], "grudge": grudge, "direction": "inbound"});
    assert_eq!(deafen.event(7).value, Some(old.clone()));
    let healed = deafen
        .stopped()
        .with_error("stopped by the final heal")
        .event(9);
    assert_eq!(healed.f, F::Stop("deafen-holder".into()));
    assert_eq!(healed.value, Some(old), "a stop repeats its start's value");
    assert_eq!(healed.error.as_deref(), Some("stopped by the final heal"));
    let skipped = NemesisEvent::start(FaultKind::PauseLeader, vec![])
        .with_error("skipped: no leader")
        .event(1);
    assert_eq!(
        line(&skipped),
        r#"{"index":0,"time":1,"process":"nemesis","type":"info","f":"start-pause-leader","value":{"fault":"pause-leader","targets":[]},"error":"skipped: no leader"}"#
    );
    let died = NemesisEvent::start(EventFault::NodeDied, vec!["etcd-2".into()])
        .with("container", "fc-etcd-2")
        .with("exit_code", Some(137))
        .with("planned", false)
        .event(3);
    assert_eq!(
        line(&died),
        r#"{"index":0,"time":3,"process":"nemesis","type":"info","f":"start-node-died","value":{"container":"fc-etcd-2","exit_code":137,"fault":"node-died","planned":false,"targets":["etcd-2"]}}"#
    );
    let cut = NemesisEvent::new(
        FaultPhase::Stop,
        EventFault::CutReplication,
        vec!["redis-1".into()],
    );
    assert_eq!(cut.event(0).f, F::Stop("cut-replication".into()));
}

#[test]
fn the_typed_fields_win_over_extra_keys_of_the_same_name() {
    let e = NemesisEvent::start(FaultKind::Halves, vec!["etcd-1".into()])
        .with("fault", "other")
        .with("targets", json!(["x"]))
        .event(0);
    assert_eq!(
        e.value,
        Some(json!({"fault": "halves", "targets": ["etcd-1"]}))
    );
}

#[test]
fn every_parse_path_reads_the_targets_the_constructor_wrote() {
    let e = NemesisEvent::start(
        FaultKind::IsolateWorker,
        vec!["worker-2".into(), "w".into()],
    )
    .with("grudge", json!({"worker-2": ["etcd-1"]}))
    .event(4);
    let text = line(&e);
    let parsed = EventRef::parse(&text).unwrap();
    assert_eq!(parsed, e.as_ref());
    assert_eq!(parsed.targets(), ["worker-2", "w"]);
    assert_eq!(targets(e.value.as_ref()), ["worker-2", "w"]);
}

#[test]
fn a_target_that_is_not_a_string_is_read_as_its_json_text_and_null_as_none() {
    let value = json!({"fault": "halves", "targets": ["etcd-1", 3, null, {"n": 1}, true]});
    assert_eq!(targets(Some(&value)), ["etcd-1", "3", r#"{"n":1}"#, "true"]);
    assert_eq!(targets(Some(&json!({"targets": "etcd-1"}))), ["etcd-1"]);
    assert_eq!(targets(Some(&json!({"targets": 7}))), ["7"]);
    assert!(targets(Some(&json!({"targets": null}))).is_empty());
    assert!(targets(Some(&json!({"fault": "halves"}))).is_empty());
    assert!(targets(Some(&json!("a written value"))).is_empty());
    assert!(targets(None).is_empty());
    // The same through the checkers' parse of a whole line.
    let text = r#"{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-halves","value":{"fault":"halves","targets":["etcd-1",3,null]}}"#;
    assert_eq!(EventRef::parse(text).unwrap().targets(), ["etcd-1", "3"]);
    let owned: Event = serde_json::from_str(text).unwrap();
    assert_eq!(owned.as_ref().targets(), ["etcd-1", "3"]);
}
