//! Specifications of lost-update (counter workload) and stuck-lock (liveness after a holder dies
//! or after the final heal).

mod common;
use checkers::testkit::*;
use common::*;
use results::{AnomalyKind::*, Event, Validity};

fn increments(p: u32, oks: usize) -> Vec<Event> {
    (0..oks)
        .flat_map(|_| [invoke(p, Increment).key("c"), ok(p, Increment).key("c")])
        .collect()
}

fn read(p: u32, v: i64) -> [Event; 2] {
    [invoke(p, Read).key("c"), ok(p, Read).key("c").int(v)]
}

#[test]
fn a_read_below_the_acknowledged_increments_is_a_lost_update() {
    let mut events = increments(1, 3);
    events.extend(read(2, 2));
    let v = verdict(&history(events), &[]);
    let lu = only(&v, LostUpdate);
    assert_eq!(lu.len(), 1);
    assert_eq!(lu[0].evidence.other["acknowledged_before_read"], 3);
    assert_eq!(lu[0].evidence.other["read_value"], 2);
    assert_eq!(v.valid, Validity::Invalid);
}

#[test]
fn a_read_that_sees_every_acknowledged_increment_is_fine() {
    let mut events = increments(1, 3);
    events.extend(read(2, 3));
    let v = verdict(&history(events), &[]);
    assert_clean(&v);
    assert_eq!(status(&v, LostUpdate), "checked");
}

#[test]
fn info_increments_may_or_may_not_count_but_not_twice() {
    let mut events = increments(1, 2);
    events.extend([invoke(3, Increment).key("c"), info(3, Increment).key("c")]);
    for (seen, lost) in [(2, false), (3, false), (4, true), (1, true)] {
        let mut e = events.clone();
        e.extend(read(2, seen));
        let v = verdict(&history(e), &[]);
        assert_eq!(!only(&v, LostUpdate).is_empty(), lost, "read {seen}");
    }
}

#[test]
fn an_increment_concurrent_with_the_read_may_be_seen_or_not() {
    let events = history([
        invoke(1, Increment).key("c"),
        invoke(2, Read).key("c"),
        ok(1, Increment).key("c"),
        ok(2, Read).key("c").int(0),
    ]);
    assert_clean(&verdict(&events, &[]));
}

fn holder_dies_then_others_try(acquired_at_ms: Option<u64>) -> Vec<Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire).lock("l").lease("L1").token(1).at_ms(5),
        info(1, Exit).at_ms(10),
    ];
    for i in 0..15u64 {
        let t = 20 + i * 200;
        if acquired_at_ms.is_some_and(|a| t >= a) {
            events.push(invoke(2, Acquire).lock("l").at_ms(t));
            events.push(ok(2, Acquire).lock("l").lease("L2").token(2).at_ms(t + 5));
            break;
        }
        events.push(invoke(2, Acquire).lock("l").at_ms(t));
        events.push(fail(2, Acquire).lock("l").at_ms(t + 5));
    }
    history(events)
}

#[test]
fn a_lock_nobody_gets_within_ttl_and_slack_after_its_holder_died_is_stuck() {
    let v = with_ttl(&holder_dies_then_others_try(None), &[], 1000, 1000);
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    let e = &stuck[0].evidence;
    assert_eq!(e.lease.as_deref(), Some("L1"));
    assert_eq!(e.indices, vec![2]);
    assert!(e.other["reason"].as_str().unwrap().contains("exited"));
    assert_eq!(v.valid, Validity::Invalid);
}

#[test]
fn a_lock_recovered_within_ttl_and_slack_is_not_stuck() {
    let v = with_ttl(&holder_dies_then_others_try(Some(1500)), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

#[test]
fn nobody_trying_means_nothing_to_say() {
    let h = history([
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire).lock("l").lease("L1").at_ms(5),
        info(1, Exit).at_ms(10),
        invoke(2, Read).key("c").at_ms(5000),
    ]);
    assert!(only(&with_ttl(&h, &[], 1000, 1000), StuckLock).is_empty());
}

#[test]
fn without_a_ttl_stuck_lock_is_not_applicable() {
    let v = verdict(&holder_dies_then_others_try(None), &[]);
    assert_eq!(status(&v, StuckLock), "not applicable");
}

fn partition_then_tries(heal_ms: Option<u64>) -> Vec<Event> {
    let mut events = vec![start("partition").at_ms(0)];
    for i in 0..20u64 {
        let t = 10 + i * 200;
        if heal_ms.is_some_and(|h| h + 200 > t && h <= t) {
            events.push(stop("partition").at_ms(heal_ms.unwrap_or(0)));
        }
        events.push(invoke(2, Acquire).lock("l").at_ms(t));
        events.push(fail(2, Acquire).lock("l").at_ms(t + 5));
    }
    history(events)
}

#[test]
fn a_lock_still_unacquirable_long_after_the_final_heal_is_stuck() {
    let v = with_ttl(&partition_then_tries(Some(500)), &[], 1000, 1000);
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    assert!(stuck[0].evidence.other["reason"]
        .as_str()
        .unwrap()
        .contains("healed"));
}

#[test]
fn while_a_fault_is_active_the_lock_may_stay_unavailable() {
    let v = with_ttl(&partition_then_tries(None), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

#[test]
fn a_deadline_passed_with_only_unrelated_events_after_it_is_judged_at_the_end() {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire).lock("l").lease("L1").at_ms(5),
        info(1, Exit).at_ms(10),
    ];
    for i in 0..8u64 {
        events.push(invoke(2, Acquire).lock("l").at_ms(20 + i * 200));
        events.push(fail(2, Acquire).lock("l").at_ms(25 + i * 200));
    }
    events.push(invoke(3, Read).key("c").at_ms(5000));
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert_eq!(only(&v, StuckLock).len(), 1, "{:#?}", v.anomalies);
}

/// worker-1 (process 1) holds `l` from 5 ms; the nemesis hits it with `fault` at 10 ms; worker-2
/// tries (and fails) every 200 ms for 3 s; `stop_ms` ends the fault, if ever.
fn holder_fault_then_others_try(fault: &str, exit: bool, stop_ms: Option<u64>) -> Vec<Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire)
            .lock("l")
            .owner("worker-1")
            .lease("L1")
            .at_ms(5),
        start(fault).targets(&["worker-1"]).at_ms(10),
    ];
    if exit {
        events.push(info(1, Exit).at_ms(11));
    }
    for i in 0..15u64 {
        let t = 20 + i * 200;
        if let Some(s) = stop_ms.filter(|s| (t..t + 200).contains(s)) {
            events.push(stop(fault).targets(&["worker-1"]).at_ms(s));
        }
        events.push(invoke(2, Acquire).lock("l").at_ms(t));
        events.push(fail(2, Acquire).lock("l").at_ms(t + 5));
    }
    history(events)
}

/// A killed holder with no `stop-kill-holder` after it used to suspend the
/// clock for the rest of the run. Faults on workers never suspend it: a crashed holder is what
/// stuck-lock exists for.
#[test]
fn a_killed_holder_does_not_suspend_the_clock_and_its_lock_left_held_is_stuck() {
    let v = with_ttl(
        &holder_fault_then_others_try("kill-holder", true, None),
        &[],
        1000,
        1000,
    );
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    assert!(stuck[0].evidence.other["reason"]
        .as_str()
        .unwrap()
        .contains("holder process 1 exited"));
    // It became true at the deadline: the exit (11 ms) + ttl + slack.
    assert_eq!(stuck[0].at, Some(2_011_000_000));
    assert_eq!(v.valid, Validity::Invalid);
}

#[test]
fn a_holder_frozen_past_ttl_and_slack_while_others_try_leaves_a_stuck_lock() {
    let v = with_ttl(
        &holder_fault_then_others_try("pause-holder", false, None),
        &[],
        1000,
        1000,
    );
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    assert!(stuck[0].evidence.other["reason"]
        .as_str()
        .unwrap()
        .contains("pause-holder froze or cut off holder process 1"));
    // A pause that ends before the deadline gives the holder back: nothing to judge.
    let v = with_ttl(
        &holder_fault_then_others_try("pause-holder", false, Some(1500)),
        &[],
        1000,
        1000,
    );
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

/// A holder that runs on under its fault (its links slowed, made lossy, its replies held or
/// cut, its CPU starved, its own clock moved) still reaches the service and may keep its lease
/// as it should, through a job longer than ttl + slack: nobody else getting the lock meanwhile is
/// the lock held, not stuck. The same history with the holder frozen is stuck (above).
#[test]
fn a_holder_that_runs_on_under_its_fault_keeps_its_lock_without_it_being_stuck() {
    for fault in [
        "lossy-network",
        "slow-network",
        "slow-reply",
        "cut-renew-reply",
        "starve-worker",
        "client-clock-jump",
    ] {
        let v = with_ttl(
            &holder_fault_then_others_try(fault, false, None),
            &[],
            1000,
            1000,
        );
        assert!(
            only(&v, StuckLock).is_empty(),
            "{fault}: {:#?}",
            v.anomalies
        );
    }
}

#[test]
fn isolating_a_worker_that_holds_nothing_cuts_a_trying_client_off_and_suspends_the_clock() {
    let mut events = holder_fault_then_others_try("kill-holder", true, None);
    // The same history, but a partition cuts the trying worker-2 off the service first.
    events.insert(2, start("isolate-worker").targets(&["worker-2"]).at_ms(6));
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
    // Isolating the holder itself is a fault on a worker: its lock must become free.
    let v = with_ttl(
        &holder_fault_then_others_try("isolate-worker", false, None),
        &[],
        1000,
        1000,
    );
    assert_eq!(only(&v, StuckLock).len(), 1, "{:#?}", v.anomalies);
}

/// A node that died outside the plan is a fault of the
/// service nobody healed.
#[test]
fn a_node_that_died_outside_the_plan_suspends_the_clock_like_any_service_fault() {
    let mut events = holder_fault_then_others_try("kill-holder", true, None);
    events.insert(
        2,
        start(results::fault::NODE_DIED)
            .targets(&["etcd-2"])
            .at_ms(6),
    );
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

#[test]
fn a_fault_start_the_nemesis_skipped_changes_nothing() {
    let mut events = holder_fault_then_others_try("kill-holder", true, None);
    events.insert(
        2,
        start("halves")
            .error("skipped: the system reports no leader")
            .at_ms(6),
    );
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert_eq!(only(&v, StuckLock).len(), 1, "{:#?}", v.anomalies);
}

/// A client library reports every timeout as `info`; each used to restart
/// the obligation's clock, so a lock left held by a dead holder was never judged.
#[test]
fn acquires_that_keep_ending_info_do_not_push_the_deadline_back() {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire)
            .lock("l")
            .owner("worker-1")
            .lease("L1")
            .at_ms(5),
        info(1, Exit).at_ms(10),
    ];
    for k in 0..10u64 {
        let p = 2 + k as u32;
        events.push(invoke(p, Acquire).lock("l").at_ms(20 + k * 1000));
        events.push(info(p, Acquire).lock("l").at_ms(1010 + k * 1000));
    }
    let v = with_ttl(&history(events), &[], 1000, 1000);
    let stuck = only(&v, StuckLock);
    assert!(!stuck.is_empty(), "{:#?}", v.anomalies);
    assert_eq!(
        stuck[0].at,
        Some(2_010_000_000),
        "the exit's deadline stands"
    );
    assert!(stuck[0].summary.contains("holder process 1 exited"));
}

/// Two faults of one name may overlap; the clock restarts when both ended.
#[test]
fn overlapping_service_faults_of_one_name_suspend_until_the_last_one_ends() {
    let mut events = holder_fault_then_others_try("kill-holder", true, None);
    events.insert(2, start("kill-node").targets(&["etcd-1"]).at_ms(6));
    events.insert(3, start("kill-node").targets(&["etcd-2"]).at_ms(7));
    let at = events.iter().position(|e| e.time >= 500_000_000).unwrap();
    events.insert(at, stop("kill-node").targets(&["etcd-1"]).at_ms(500));
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

/// A pause of the only trying worker keeps it from getting the lock;
/// nobody can blame the lock for that.
#[test]
fn pausing_a_worker_that_holds_nothing_suspends_the_clock() {
    let mut events = holder_fault_then_others_try("kill-holder", true, None);
    events.insert(4, start("pause-worker").targets(&["worker-2"]).at_ms(15));
    let v = with_ttl(&history(events), &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}

/// Process 1 certainly holds `l` (work longer than ttl + slack) when process 2's acquire ends
/// `info`; process 3 keeps trying; 1 releases at `release_ms`; 3 gets the lock at `next_ms`.
fn info_acquire_under_a_long_hold(release_ms: u64, next_ms: Option<u64>) -> Vec<Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire).lock("l").lease("L1").token(1).at_ms(5),
        invoke(2, Acquire).lock("l").at_ms(10),
        info(2, Acquire).lock("l").at_ms(100),
    ];
    let mut released = false;
    for i in 0..40u64 {
        let t = 200 + i * 200;
        if !released && t >= release_ms {
            events.push(invoke(1, Release).lock("l").lease("L1").at_ms(release_ms));
            events.push(ok(1, Release).lock("l").lease("L1").at_ms(release_ms + 5));
            released = true;
        }
        if next_ms.is_some_and(|n| t >= n) {
            events.push(invoke(3, Acquire).lock("l").at_ms(t));
            events.push(ok(3, Acquire).lock("l").lease("L3").token(3).at_ms(t + 5));
            break;
        }
        events.push(invoke(3, Acquire).lock("l").at_ms(t));
        events.push(fail(3, Acquire).lock("l").at_ms(t + 5));
    }
    history(events)
}

#[test]
fn an_info_acquire_under_a_certain_live_hold_starts_its_clock_when_that_hold_ends() {
    // Seen with kazoo (work 8 s, ttl 2 s, slack 5 s): the holder's own work outlasted ttl +
    // slack after a contender's acquire timed out, and the lock was called stuck while held.
    let held_long = info_acquire_under_a_long_hold(4000, Some(4400));
    let v = with_ttl(&held_long, &[], 1000, 1000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
    // After the certain hold ends, the clock runs: nobody gets it within ttl + slack → stuck.
    let never = info_acquire_under_a_long_hold(4000, None);
    let v = with_ttl(&never, &[], 1000, 1000);
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    assert!(stuck[0].evidence.other["reason"]
        .as_str()
        .unwrap()
        .contains("ended info"));
}

/// Nobody holds the lock (w1 released it), yet every acquire fails for
/// longer than ttl + slack: w2's acquire answered `fail` although its request had landed, and
/// the key it left is nobody's to release. The diagnosis names the acquires that tell it.
#[test]
fn a_lock_nobody_holds_that_acquires_keep_failing_to_take_is_stuck_naming_its_last_acquire() {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire)
            .lock("l")
            .owner("w1")
            .lease("L1")
            .token(1)
            .at_ms(1),
        invoke(1, Release).lock("l").lease("L1").token(1).at_ms(100),
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(1)
            .result(Released)
            .at_ms(101),
        invoke(2, Acquire).lock("l").at_ms(150),
        fail(2, Acquire)
            .lock("l")
            .error("timed out waiting for the reply")
            .at_ms(400),
    ];
    for (i, at) in (500..4_000).step_by(500).enumerate() {
        let p = 3 + (i as u32 % 2);
        events.push(invoke(p, Acquire).lock("l").at_ms(at));
        events.push(
            fail(p, Acquire)
                .lock("l")
                .error("lock taken")
                .at_ms(at + 400),
        );
    }
    let v = with_ttl(&history(events), &[], 1_000, 1_000);
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    let e = &stuck[0].evidence;
    assert!(e.other["reason"]
        .as_str()
        .unwrap()
        .contains("the last hold of it (process 1, lease L1) ended at index 2"));
    assert_eq!(e.other["first_acquire_after_hold"], 5);
    let obs = &stuck[0].diagnosis.observation;
    assert!(
        obs.contains(
            "the first acquire after its last hold ended: process 2's acquire at index 5 \
             answered fail (timed out waiting for the reply)"
        ),
        "{obs}"
    );
    assert!(obs.contains("the last acquire of it: process "), "{obs}");
    assert!(obs.contains("answered fail (lock taken)"), "{obs}");
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(v.valid.exit_code(), 1);
}

/// The same release followed by a grant within the window is fine, and so
/// are failures while a fault of the lock service is on (its heal restarts the clock).
#[test]
fn a_free_lock_taken_again_in_time_or_failing_under_a_service_fault_is_not_stuck() {
    let released = || {
        vec![
            invoke(1, Acquire).lock("l").at_ms(0),
            ok(1, Acquire)
                .lock("l")
                .owner("w1")
                .lease("L1")
                .token(1)
                .at_ms(1),
            invoke(1, Release).lock("l").lease("L1").token(1).at_ms(100),
            ok(1, Release)
                .lock("l")
                .lease("L1")
                .token(1)
                .result(Released)
                .at_ms(101),
        ]
    };
    let mut events = released();
    for at in (200..1_800).step_by(400) {
        events.push(invoke(2, Acquire).lock("l").at_ms(at));
        events.push(fail(2, Acquire).lock("l").at_ms(at + 300));
    }
    events.push(invoke(3, Acquire).lock("l").at_ms(1_900));
    events.push(
        ok(3, Acquire)
            .lock("l")
            .owner("w3")
            .lease("L3")
            .token(2)
            .at_ms(1_950),
    );
    events.push(invoke(2, Acquire).lock("l").at_ms(5_000));
    let v = with_ttl(&history(events), &[], 1_000, 1_000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
    let mut events = released();
    events.push(start("halves").at_ms(150));
    for at in (200..4_000).step_by(400) {
        events.push(invoke(2, Acquire).lock("l").at_ms(at));
        events.push(fail(2, Acquire).lock("l").at_ms(at + 300));
    }
    events.push(stop("halves").at_ms(4_000));
    events.push(invoke(3, Acquire).lock("l").at_ms(4_100));
    events.push(
        ok(3, Acquire)
            .lock("l")
            .owner("w3")
            .lease("L3")
            .token(2)
            .at_ms(4_200),
    );
    let v = with_ttl(&history(events), &[], 1_000, 1_000);
    assert!(only(&v, StuckLock).is_empty(), "{:#?}", v.anomalies);
}
