//! Specifications of the lock-history kinds: duplicate-token, token-regression, double-release,
//! concurrent-holders. Each is found where it should be and not where it should not.

mod common;
use checkers::testkit::*;
use common::*;
use results::{AnomalyKind::*, Event, Validity, WriteResult};

fn acquire(p: u32, lease: &str, token: u64) -> [Event; 2] {
    [
        invoke(p, Acquire).lock("l"),
        ok(p, Acquire)
            .lock("l")
            .lease(lease)
            .owner(&format!("w{p}"))
            .token(token),
    ]
}

fn release(p: u32, lease: &str, token: u64) -> [Event; 2] {
    [
        invoke(p, Release).lock("l").lease(lease).token(token),
        ok(p, Release)
            .lock("l")
            .lease(lease)
            .token(token)
            .result(Released),
    ]
}

fn h(parts: impl IntoIterator<Item = [Event; 2]>) -> Vec<Event> {
    history(parts.into_iter().flatten())
}

#[test]
fn a_serial_history_with_rising_tokens_is_clean() {
    let v = verdict(
        &h([
            acquire(1, "L1", 5),
            release(1, "L1", 5),
            acquire(2, "L2", 7),
            release(2, "L2", 7),
        ]),
        &[],
    );
    assert_clean(&v);
    assert_eq!(status(&v, TokenRegression), "checked");
}

#[test]
fn the_same_token_handed_out_again_is_a_duplicate_token_not_a_regression() {
    let v = verdict(
        &h([
            acquire(1, "L1", 5),
            release(1, "L1", 5),
            acquire(2, "L2", 5),
        ]),
        &[],
    );
    assert_eq!(kinds(&v), vec![DuplicateToken]);
    let e = &only(&v, DuplicateToken)[0].evidence;
    assert_eq!(e.indices, vec![1, 5]);
    assert_eq!(e.other["other_lease"], "L1");
    assert!(only(&v, DuplicateToken)[0]
        .diagnosis
        .next_action
        .contains("linearizable"));
}

#[test]
fn two_concurrent_acquisitions_with_one_token_are_a_duplicate_token() {
    let hist = history([
        invoke(1, Acquire).lock("l"),
        invoke(2, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1").token(5),
        invoke(1, Release).lock("l").lease("L1").token(5),
        ok(2, Acquire).lock("l").lease("L2").token(5),
    ]);
    assert_eq!(kinds(&verdict(&hist, &[])), vec![DuplicateToken]);
}

#[test]
fn a_lower_token_after_a_completed_higher_one_is_a_token_regression() {
    let v = verdict(
        &h([
            acquire(1, "L1", 9),
            release(1, "L1", 9),
            acquire(2, "L2", 4),
        ]),
        &[],
    );
    assert_eq!(kinds(&v), vec![TokenRegression]);
    let e = &only(&v, TokenRegression)[0].evidence;
    assert_eq!(
        (e.token, e.other["earlier_token"].as_u64()),
        (Some(4), Some(9))
    );
}

#[test]
fn a_lower_token_for_an_acquire_invoked_before_the_higher_completed_is_allowed() {
    let hist = history([
        invoke(2, Acquire).lock("l"),
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1").token(9),
        invoke(1, Release).lock("l").lease("L1").token(9),
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(9)
            .result(Released),
        ok(2, Acquire).lock("l").lease("L2").token(4),
    ]);
    assert_clean(&verdict(&hist, &[]));
}

#[test]
fn tokenless_recipes_make_token_checkers_not_applicable() {
    let hist = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1"),
        invoke(1, Release).lock("l").lease("L1"),
        ok(1, Release).lock("l").lease("L1").result(Released),
    ]);
    let v = verdict(&hist, &[]);
    assert_clean(&v);
    assert_eq!(status(&v, TokenRegression), "not applicable");
    assert_eq!(status(&v, DuplicateToken), "not applicable");
    assert!(v.stats["token-regression"]["note"]
        .as_str()
        .unwrap()
        .contains("no fence token"));
}

/// One checker judges both token kinds; each still says "not applicable" on its own grounds:
/// tokens the resource accepted make duplicate-token judge, never token-regression, and an
/// acquire `ok` naming no lock is a grant without a token to token-regression alone.
#[test]
fn each_token_kind_keeps_its_own_applicability() {
    let hist = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1"),
    ]);
    let v = verdict(
        &hist,
        &log([res("k", Some(3), "L1", WriteResult::Accepted)]),
    );
    assert_eq!(status(&v, DuplicateToken), "checked");
    assert_eq!(status(&v, TokenRegression), "not applicable");
    assert!(v.stats["token-regression"]["note"]
        .as_str()
        .unwrap()
        .contains("no fence token"));

    let v = verdict(&history([invoke(1, Acquire), ok(1, Acquire)]), &[]);
    assert!(v.stats["duplicate-token"]["note"]
        .as_str()
        .unwrap()
        .contains("no acquisition succeeded"));
    assert!(v.stats["token-regression"]["note"]
        .as_str()
        .unwrap()
        .contains("no fence token"));
}

#[test]
fn a_stale_owners_release_that_freed_the_holders_lock_is_a_double_release() {
    // A holds L1; B acquires L2 (A's lease expired while paused); A's release says released;
    // then C acquires while B still holds: the stale release freed B's lock.
    let v = verdict(
        &h([
            acquire(1, "L1", 1),
            acquire(2, "L2", 2),
            release(1, "L1", 1),
            acquire(3, "L3", 3),
        ]),
        &[],
    );
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    let e = &dr[0].evidence;
    assert_eq!(e.lease.as_deref(), Some("L1"));
    assert_eq!(e.other["holder_lease"], "L2");
    assert_eq!(e.indices, vec![1, 3, 4, 5, 7]);
    assert!(e.other["harm"]
        .as_str()
        .unwrap()
        .contains("process 3 acquired it"));
    assert_eq!(
        dr[0].at,
        Some(e.times[3]),
        "it became true at the stale release"
    );
    assert!(dr[0].diagnosis.next_action.contains("compare-and-delete"));
    assert!(only(&v, ReleaseOfLostLock).is_empty());
    assert_eq!(v.valid, Validity::Invalid);
}

#[test]
fn a_stale_release_whose_holder_then_finds_its_lock_gone_is_a_double_release() {
    let mut events: Vec<Event> = [
        acquire(1, "L1", 1),
        acquire(2, "L2", 2),
        release(1, "L1", 1),
    ]
    .into_iter()
    .flatten()
    .collect();
    events.push(invoke(2, Release).lock("l").lease("L2").token(2));
    events.push(
        fail(2, Release)
            .lock("l")
            .lease("L2")
            .token(2)
            .result(ReleaseRejectedNotOwner),
    );
    let v = verdict(&history(events), &[]);
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    assert!(dr[0].evidence.other["harm"]
        .as_str()
        .unwrap()
        .contains("rejected as not-owner"));
    assert_eq!(v.valid, Validity::Invalid);
}

/// A client library can answer `released` for a lock its expired session no
/// longer owns, removing nothing. Without harm in the history that is not a double release.
#[test]
fn a_release_that_only_says_it_succeeded_is_a_release_of_a_lost_lock_not_a_double_release() {
    let v = verdict(
        &h([
            acquire(1, "L1", 1),
            acquire(2, "L2", 2),
            release(1, "L1", 1),
            // B's own release still succeeds: its lock was never freed under it.
            release(2, "L2", 2),
        ]),
        &[],
    );
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    let lost = only(&v, ReleaseOfLostLock);
    assert_eq!(lost.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(lost[0].evidence.lease.as_deref(), Some("L1"));
    assert_eq!(lost[0].evidence.other["holder_lease"], "L2");
    assert!(!lost[0].fails);
    assert!(!lost[0]
        .diagnosis
        .observation
        .contains("removed someone else"));
    assert_eq!(status(&v, DoubleRelease), "checked");
    assert_eq!(
        v.valid,
        Validity::Valid,
        "release-of-lost-lock is observed, like concurrent-holders"
    );
    // The same release with the history ending before anything shows harm.
    let v = verdict(
        &h([
            acquire(1, "L1", 1),
            acquire(2, "L2", 2),
            release(1, "L1", 1),
        ]),
        &[],
    );
    assert_eq!(kinds(&v), vec![ReleaseOfLostLock, ConcurrentHolders]);
    // And one acknowledged after the newer holder had already released: nobody held it.
    let v = verdict(
        &h([
            acquire(1, "L1", 1),
            acquire(2, "L2", 2),
            release(2, "L2", 2),
            release(1, "L1", 1),
        ]),
        &[],
    );
    assert_eq!(kinds(&v), vec![ReleaseOfLostLock, ConcurrentHolders]);
    assert!(only(&v, ReleaseOfLostLock)[0]
        .summary
        .contains("nobody held it"));
}

/// Regression (the recipe tests without faults): the next holder is often granted between a
/// release's invoke and its `ok`. The releaser had not lost the lock when it released.
#[test]
fn a_release_acknowledged_after_the_next_holder_was_granted_is_fine() {
    let mut events: Vec<Event> = acquire(1, "L1", 1).into();
    events.push(invoke(1, Release).lock("l").lease("L1").token(1));
    events.extend(acquire(2, "L2", 2));
    events.push(
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(1)
            .result(Released),
    );
    events.extend(release(2, "L2", 2));
    let v = verdict(&history(events), &[]);
    assert_clean(&v);
}

#[test]
fn a_stale_owner_that_noticed_its_lost_lease_and_still_released_is_a_double_release() {
    // Regression (found by the replay scenarios): the worker records lease-lost when it wakes
    // from its pause, then sends the release it still holds the old handle for, and the lock
    // is then taken from under the holder.
    let mut events: Vec<Event> = [acquire(1, "L1", 1), acquire(2, "L2", 2)]
        .into_iter()
        .flatten()
        .collect();
    events.push(info(1, LeaseLost).lock("l").lease("L1").token(1));
    events.extend(release(1, "L1", 1));
    events.extend(acquire(3, "L3", 3));
    let v = verdict(&history(events), &[]);
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(dr[0].evidence.other["holder_lease"], "L2");
    assert_eq!(v.valid, Validity::Invalid);
}

#[test]
fn a_release_rejected_as_not_owner_is_not_a_double_release() {
    let hist = h([
        acquire(1, "L1", 1),
        acquire(2, "L2", 2),
        [
            invoke(1, Release).lock("l").lease("L1").token(1),
            fail(1, Release)
                .lock("l")
                .lease("L1")
                .token(1)
                .result(ReleaseRejectedNotOwner),
        ],
    ]);
    let v = verdict(&hist, &[]);
    assert!(only(&v, DoubleRelease).is_empty());
    assert_eq!(kinds(&v), vec![ConcurrentHolders]);
    assert_eq!(
        v.valid,
        Validity::Valid,
        "concurrent-holders does not fail by default"
    );
}

#[test]
fn releasing_one_acquisition_twice_is_a_double_release() {
    let v = verdict(
        &h([
            acquire(1, "L1", 1),
            release(1, "L1", 1),
            release(1, "L1", 1),
        ]),
        &[],
    );
    assert_eq!(kinds(&v), vec![DoubleRelease]);
    assert!(only(&v, DoubleRelease)[0].summary.contains("twice"));
}

#[test]
fn overlapping_certain_holds_are_concurrent_holders() {
    let v = verdict(&h([acquire(1, "L1", 1), acquire(2, "L2", 2)]), &[]);
    let ch = only(&v, ConcurrentHolders);
    assert_eq!(ch.len(), 1);
    assert_eq!(ch[0].evidence.indices, vec![1, 3]);
    assert_eq!(ch[0].evidence.other["other_lease"], "L1");
    assert!(!ch[0].fails);
}

#[test]
fn a_hold_ends_at_release_invoke_lease_lost_exit_or_info() {
    let ends = [
        invoke(1, Release).lock("l").lease("L1"),
        info(1, LeaseLost).lock("l").lease("L1"),
        info(1, Exit),
        info(1, Write).key("k"),
    ];
    for end in ends {
        let mut events: Vec<Event> = acquire(1, "L1", 1).into();
        events.push(end.clone());
        events.extend(acquire(2, "L2", 2));
        let v = verdict(&history(events), &[]);
        assert!(
            only(&v, ConcurrentHolders).is_empty(),
            "{end:?}: {:#?}",
            v.anomalies
        );
    }
}

#[test]
fn an_info_acquire_opens_no_certain_hold() {
    let hist = history([
        invoke(1, Acquire).lock("l"),
        info(1, Acquire).lock("l"),
        invoke(2, Acquire).lock("l"),
        ok(2, Acquire).lock("l").lease("L2").token(2),
    ]);
    assert!(only(&verdict(&hist, &[]), ConcurrentHolders).is_empty());
}

#[test]
fn fail_on_decides_whether_concurrent_holders_fail_the_run() {
    let hist = h([acquire(1, "L1", 1), acquire(2, "L2", 2)]);
    let cfg = checkers::CheckConfig {
        fail_on: vec![ConcurrentHolders],
        ..Default::default()
    };
    let v = checkers::check(&hist, Some(&[]), &cfg);
    assert_eq!(v.valid, Validity::Invalid);
    assert!(v.anomalies[0].fails);
}

/// Indices out of file order (a history edited by hand: `check` takes `index` as written):
/// the concurrent-reuse search must not assume order. Both cases were found by comparing this
/// engine with the one before lock ids, on fuzzed histories.
#[test]
fn duplicate_tokens_are_judged_the_same_when_indices_are_out_of_file_order() {
    let reindexed = |indices: [u64; 4], tokens: [u64; 3]| {
        let mut h = history([
            invoke(1, Acquire).lock("l"),
            ok(2, Acquire)
                .lock("l")
                .owner("w2")
                .lease("A")
                .token(tokens[0]),
            ok(3, Acquire)
                .lock("l")
                .owner("w3")
                .lease("B")
                .token(tokens[1]),
            ok(4, Acquire)
                .lock("l")
                .owner("w4")
                .lease("C")
                .token(tokens[2]),
        ]);
        for (e, i) in h.iter_mut().zip(indices) {
            e.index = i;
        }
        verdict(&h, &[])
    };
    // Token 7 from leases A (index 9) and C (index 6), completed while process 1 waited.
    let v = reindexed([1, 9, 5, 6], [7, 8, 7]);
    let dup = only(&v, DuplicateToken);
    assert_eq!(dup.len(), 1, "{:#?}", v.anomalies);
    assert!(
        dup[0].summary.contains("(lease A) at index 9"),
        "{}",
        dup[0].summary
    );
    // Token 8 from B (index 3) and C (index 1): by index both come before the pending
    // invoke (index 10), so the concurrent search has nothing; and no acquire was invoked
    // after B completed: no report (the window's order made one appear).
    let v = reindexed([10, 20, 3, 1], [7, 8, 8]);
    assert!(only(&v, DuplicateToken).is_empty(), "{:#?}", v.anomalies);
}

/// A release of `lock` by process `p`, acknowledged.
fn release_of(lock: &str, p: u32, lease: &str) -> [Event; 2] {
    [
        invoke(p, Release).lock(lock).lease(lease),
        ok(p, Release).lock(lock).lease(lease).result(Released),
    ]
}

/// The holder's release of *another* lock says nothing about this one.
#[test]
fn the_holders_release_of_another_lock_neither_shows_nor_hides_harm() {
    let mut events: Vec<Event> = vec![
        invoke(2, Acquire).lock("m"),
        ok(2, Acquire).lock("m").owner("w2").lease("M1"),
    ];
    events.extend(acquire(1, "L1", 1));
    events.extend(acquire(2, "L2", 2));
    events.extend(release(1, "L1", 1));
    events.push(invoke(2, Release).lock("m").lease("M1"));
    events.push(
        fail(2, Release)
            .lock("m")
            .lease("M1")
            .result(ReleaseRejectedNotOwner),
    );
    let v = verdict(&history(events.clone()), &[]);
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(only(&v, ReleaseOfLostLock).len(), 1, "judged at the end");
    // Nor does an `ok` release of the other lock settle this one early.
    events.truncate(events.len() - 2);
    events.extend(release_of("m", 2, "M1"));
    events.extend(acquire(3, "L3", 3));
    let v = verdict(&history(events), &[]);
    assert_eq!(only(&v, DoubleRelease).len(), 1, "{:#?}", v.anomalies);
}

/// A lease-lost is an `info` that retires nobody; the holder's release that
/// follows it, rejected as not-owner, shows the harm.
#[test]
fn a_holder_that_noticed_its_lease_gone_and_was_refused_shows_the_harm() {
    let mut events: Vec<Event> = [
        acquire(1, "L1", 1),
        acquire(2, "L2", 2),
        release(1, "L1", 1),
    ]
    .into_iter()
    .flatten()
    .collect();
    events.push(info(2, LeaseLost).lock("l").lease("L2").token(2));
    events.push(invoke(2, Release).lock("l").lease("L2").token(2));
    events.push(
        fail(2, Release)
            .lock("l")
            .lease("L2")
            .token(2)
            .result(ReleaseRejectedNotOwner),
    );
    let v = verdict(&history(events), &[]);
    assert_eq!(only(&v, DoubleRelease).len(), 1, "{:#?}", v.anomalies);
}

/// The victim may be granted while the stale release is in flight.
#[test]
fn a_holder_granted_while_the_stale_release_was_in_flight_can_be_its_victim() {
    let mut events: Vec<Event> = [
        acquire(1, "L1", 1),
        acquire(2, "L2", 2),
        release(2, "L2", 2),
    ]
    .into_iter()
    .flatten()
    .collect();
    events.push(invoke(1, Release).lock("l").lease("L1").token(1));
    events.extend(acquire(3, "L3", 3));
    events.push(
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(1)
            .result(Released),
    );
    events.extend(acquire(4, "L4", 4));
    let v = verdict(&history(events), &[]);
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(dr[0].evidence.other["holder_lease"], "L3");
}

/// When a fault hit the holder after the stale release (a pause past its
/// lease), the next grant is explained by the fault; no harm from the release is shown.
#[test]
fn a_fault_on_the_holder_explains_the_next_grant_and_no_double_release_is_claimed() {
    let mut events: Vec<Event> = [
        acquire(1, "L1", 1),
        acquire(2, "L2", 2),
        release(1, "L1", 1),
    ]
    .into_iter()
    .flatten()
    .collect();
    events.push(start("pause-holder").targets(&["w2"]));
    events.extend(acquire(3, "L3", 3));
    let v = verdict(&history(events.clone()), &[]);
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(only(&v, ReleaseOfLostLock).len(), 1);
    // A fault on another worker (the stale releaser's own pause) explains nothing.
    events[6] = start("pause-holder").targets(&["w1"]);
    let v = verdict(&history(events.clone()), &[]);
    assert_eq!(only(&v, DoubleRelease).len(), 1, "{:#?}", v.anomalies);
    // A fault of the lock service (a partition, a failover) explains it too.
    events[6] = start("halves").targets(&["etcd-1"]);
    let v = verdict(&history(events), &[]);
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
}

/// A hold ends at a lease-lost *for its lease* (docs/design.md, "Holds"). A late
/// notice about the process's earlier lease must not end the hold it has now.
#[test]
fn a_late_lease_lost_for_an_earlier_lease_does_not_end_the_current_hold() {
    let mut events: Vec<Event> = [
        acquire(1, "L1", 1),
        release(1, "L1", 1),
        acquire(1, "L2", 2),
    ]
    .into_iter()
    .flatten()
    .collect();
    events.push(info(1, LeaseLost).lock("l").lease("L1").token(1));
    events.extend(acquire(2, "L3", 3));
    let v = verdict(&history(events), &[]);
    assert_eq!(only(&v, ConcurrentHolders).len(), 1, "{:#?}", v.anomalies);
}

/// Found by an in-process pause: a worker frozen between the service's grant and
/// its own receipt (token 31) hears of its grant after a newer one (token 32) was granted to
/// another; the newer holder's release and the next grant are not harm done to the frozen one,
/// whose lease the newer grant had already superseded. Its own release is then refused.
#[test]
fn the_release_of_the_newest_lease_frees_no_holder_of_an_older_one_heard_late() {
    let mut events = vec![invoke(2, Acquire).lock("l")];
    events.extend(acquire(4, "mem-32", 32));
    events.push(
        ok(2, Acquire)
            .lock("l")
            .lease("mem-31")
            .owner("w2")
            .token(31),
    );
    events.extend(release(4, "mem-32", 32));
    events.extend(acquire(0, "mem-33", 33));
    events.push(invoke(2, Release).lock("l").lease("mem-31").token(31));
    events.push(
        fail(2, Release)
            .lock("l")
            .lease("mem-31")
            .token(31)
            .result(ReleaseRejectedNotOwner),
    );
    let v = verdict(&history(events), &[]);
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    assert!(only(&v, ReleaseOfLostLock).is_empty(), "{:#?}", v.anomalies);
    assert_ne!(v.valid, Validity::Invalid, "{:#?}", v.anomalies);
}
