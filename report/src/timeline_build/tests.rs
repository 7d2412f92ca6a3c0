//! The specifications of the timeline's reading of nemesis events: the targets it draws are the
//! ones the checkers read, for every line a writer makes and for a foreign one.

use super::fault_targets;
use results::fault::FaultKind;
use results::{Event, EventFault, EventRef, NemesisEvent};

#[test]
fn the_report_and_the_checkers_read_the_same_targets() {
    let written = [
        NemesisEvent::start(FaultKind::Halves, vec!["etcd-1".into(), "etcd-2".into()])
            .with("grudge", serde_json::json!({"etcd-1": ["etcd-3"]})),
        NemesisEvent::start(EventFault::NodeDied, vec!["etcd-2".into()]).with("exit_code", 137),
        NemesisEvent::start(FaultKind::PauseLeader, vec![]).with_error("skipped: no leader"),
    ];
    let mut lines: Vec<String> = written
        .iter()
        .flat_map(|n| [n.event(1), n.stopped().event(2)])
        .map(|e| serde_json::to_string(&e).unwrap())
        .collect();
    lines.push(
        r#"{"index":9,"time":9,"process":"nemesis","type":"info","f":"start-kill","value":{"fault":"kill","targets":["worker-1",3,null,{"n":1}]}}"#
            .into(),
    );
    for line in &lines {
        let event: Event = serde_json::from_str(line).unwrap();
        let parsed = EventRef::parse(line).unwrap();
        assert_eq!(fault_targets(&event), parsed.targets(), "{line}");
    }
    let foreign: Event = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(fault_targets(&foreign), ["worker-1", "3", r#"{"n":1}"#]);
}
