//! What a node that died or froze outside the fault plan means for the verdict. A
//! death nobody undid leaves the rest of the run unjudgeable (unknown, naming the node, when and
//! how much of the workload came after); anomalies found stand; a node started again is judged
//! as a planned kill; a freeze from outside stops stuck-lock's clock as a planned pause does.

mod common;

use checkers::testkit::*;
use common::*;
use results::fault::{NODE_DIED, NODE_FROZEN};
use results::{AnomalyKind::*, Event, Validity};

/// The fenced training timeline (valid) or the unfenced one (a stale write), with `extra`
/// nemesis events inserted by time.
fn timeline_with(fenced: bool, extra: Vec<Event>) -> (Vec<Event>, Vec<results::ResourceEntry>) {
    let (mut events, log) = training_timeline(fenced);
    for e in extra {
        let at = events
            .iter()
            .position(|x| x.time > e.time)
            .unwrap_or(events.len());
        events.insert(at, e);
    }
    (history(events), log)
}

fn last_ms(fenced: bool) -> u64 {
    training_timeline(fenced).0.last().unwrap().time / 1_000_000
}

#[test]
fn a_node_that_died_and_never_came_back_makes_a_valid_run_unknown() {
    let at = last_ms(true) / 2;
    let died = start(NODE_DIED).targets(&["redis-1"]).at_ms(at);
    let (h, r) = timeline_with(true, vec![died]);
    let v = verdict(&h, &r);
    assert_eq!(v.valid, Validity::Unknown, "{v:#?}");
    let why = v.unknown_reasons.join("; ");
    assert!(
        why.contains("node redis-1 died at") && why.contains("never came back"),
        "{why}"
    );
    assert!(
        why.contains("% of the workload's time ran after it"),
        "{why}"
    );
    assert_eq!(v.unplanned_node_exits().len(), 1);
    assert!(v.unplanned_lines()[0].contains("a fault nobody healed"));
}

#[test]
fn anomalies_found_before_the_death_still_fail_the_run() {
    let at = last_ms(false) - 1;
    let died = start(NODE_DIED).targets(&["redis-1"]).at_ms(at);
    let (h, r) = timeline_with(false, vec![died]);
    let v = verdict(&h, &r);
    assert_eq!(v.valid, Validity::Invalid, "{v:#?}");
    assert!(!only(&v, StaleAcceptedWrite).is_empty());
}

#[test]
fn a_node_started_again_is_judged_as_a_planned_kill() {
    let end = last_ms(true);
    let died = start(NODE_DIED).targets(&["redis-1"]).at_ms(end / 3);
    let back = stop(NODE_DIED).targets(&["redis-1"]).at_ms(end / 2);
    let (h, r) = timeline_with(true, vec![died, back]);
    let v = verdict(&h, &r);
    assert_eq!(v.valid, Validity::Valid, "{v:#?}");
    let line = &v.unplanned_lines()[0];
    assert!(line.contains("started again"), "{line}");
}

/// A lock held by a live holder while the service is frozen from outside for longer than ttl
/// + slack: everyone else's acquires fail meanwhile.
fn held_through_a_service_freeze(freeze: Option<(u64, u64)>) -> Vec<Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire)
            .lock("l")
            .owner("worker-1")
            .lease("L1")
            .token(1)
            .at_ms(5),
        // The holder is paused for longer than ttl + slack: the lock must come free without it.
        start("pause-holder").targets(&["worker-1"]).at_ms(10),
        stop("pause-holder").targets(&["worker-1"]).at_ms(3010),
    ];
    if let Some((from, to)) = freeze {
        events.push(start(NODE_FROZEN).targets(&["redis-1"]).at_ms(from));
        events.push(stop(NODE_FROZEN).targets(&["redis-1"]).at_ms(to));
    }
    for i in 0..30u64 {
        let t = 30 + i * 200;
        events.push(invoke(2, Acquire).lock("l").at_ms(t));
        events.push(fail(2, Acquire).lock("l").at_ms(t + 5));
    }
    events.push(invoke(1, Release).lock("l").lease("L1").at_ms(6100));
    events.push(ok(1, Release).lock("l").lease("L1").at_ms(6105));
    events.push(invoke(2, Acquire).lock("l").at_ms(6200));
    events.push(
        ok(2, Acquire)
            .lock("l")
            .owner("worker-2")
            .lease("L2")
            .token(2)
            .at_ms(6205),
    );
    events.sort_by_key(|e| e.time);
    history(events)
}

#[test]
fn a_freeze_from_outside_stops_stuck_locks_clock_and_is_shown() {
    // Unrecorded, the service's freeze is blamed on the holder's pause.
    let blind = with_ttl(&held_through_a_service_freeze(None), &[], 1000, 1000);
    let stuck = only(&blind, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", blind.anomalies);
    assert!(
        stuck[0].evidence.other["reason"]
            .as_str()
            .unwrap()
            .contains("pause-holder"),
        "{:#?}",
        stuck[0]
    );
    let frozen = with_ttl(
        &held_through_a_service_freeze(Some((25, 6050))),
        &[],
        1000,
        1000,
    );
    assert!(
        only(&frozen, StuckLock).is_empty(),
        "{:#?}",
        frozen.anomalies
    );
    let lines = frozen.unplanned_lines();
    assert!(
        lines.iter().any(|l| l.contains("node redis-1 was frozen")),
        "{lines:?}"
    );
    assert_ne!(frozen.valid, Validity::Unknown, "{frozen:#?}");
}
