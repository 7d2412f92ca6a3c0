//! Specifications of a stale release that removed the next holder's lock
//! stays a failing `double-release` in each of the three forms of harm docs/design.md lists for
//! it, with the test's ttl given and faults in the history; a case of exactly the other shape
//! (no harm shown, or a loss a fault explains) is `release-of-lost-lock`, observed.

mod common;
use checkers::testkit::*;
use common::*;
use results::{AnomalyKind::*, Event, Validity};

const TTL_MS: u64 = 2_000;

fn acquire(p: u32, lease: &str, token: u64, at: u64) -> [Event; 2] {
    [
        invoke(p, Acquire).lock("l").at_ms(at),
        ok(p, Acquire)
            .lock("l")
            .lease(lease)
            .owner(&format!("w{p}"))
            .token(token)
            .at_ms(at + 1),
    ]
}

fn release(p: u32, lease: &str, token: u64, at: u64) -> [Event; 2] {
    [
        invoke(p, Release)
            .lock("l")
            .lease(lease)
            .token(token)
            .at_ms(at),
        ok(p, Release)
            .lock("l")
            .lease(lease)
            .token(token)
            .result(Released)
            .at_ms(at + 1),
    ]
}

fn refused(p: u32, lease: &str, token: u64, at: u64) -> [Event; 2] {
    [
        invoke(p, Release)
            .lock("l")
            .lease(lease)
            .token(token)
            .at_ms(at),
        fail(p, Release)
            .lock("l")
            .lease(lease)
            .token(token)
            .result(ReleaseRejectedNotOwner)
            .at_ms(at + 1),
    ]
}

/// The classic stale owner: w1 holds L1 and is paused past its lease; w2 takes L2 (at 3 s);
/// w1 wakes and releases by name at 3.5 s. Then `then`.
fn stale_release_then(then: Vec<Event>) -> Vec<Event> {
    let mut events: Vec<Event> = acquire(1, "L1", 1, 0).into();
    events.push(start("pause-holder").targets(&["w1"]).at_ms(10));
    events.extend(acquire(2, "L2", 2, 3_000));
    events.push(stop("pause-holder").targets(&["w1"]).at_ms(3_400));
    events.extend(release(1, "L1", 1, 3_500));
    events.extend(then);
    history(events)
}

fn judged(h: &[Event]) -> results::Verdict {
    with_ttl(h, &[], TTL_MS, 1_000)
}

/// Form 1: the same acquisition's release acknowledged twice.
#[test]
fn the_same_acquisition_released_twice_is_a_failing_double_release() {
    let mut events: Vec<Event> = acquire(1, "L1", 1, 0).into();
    events.extend(release(1, "L1", 1, 100));
    events.extend(release(1, "L1", 1, 200));
    let v = judged(&history(events));
    assert_eq!(kinds(&v), vec![DoubleRelease]);
    assert!(only(&v, DoubleRelease)[0].summary.contains("twice"));
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(v.valid.exit_code(), 1);
}

/// Form 2: another acquisition completed after the stale release while w2's hold was open.
#[test]
fn another_grant_while_the_next_holder_still_held_is_a_failing_double_release() {
    let v = judged(&stale_release_then(acquire(3, "L3", 3, 3_600).into()));
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(dr[0].evidence.other["holder_lease"], "L2");
    assert!(dr[0].evidence.other["harm"]
        .as_str()
        .unwrap()
        .contains("process 3 acquired it"));
    assert!(only(&v, ReleaseOfLostLock).is_empty());
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(v.valid.exit_code(), 1);
}

/// Form 3: w2's own release refused as not-owner while its lease was still valid (granted at
/// 3 s, refused at 3.7 s, ttl 2 s), with no fault on w2's worker or the service since its
/// grant: the stale release removed w2's lock.
#[test]
fn the_next_holders_own_release_refused_while_its_lease_was_valid_is_a_failing_double_release() {
    let v = judged(&stale_release_then(refused(2, "L2", 2, 3_700).into()));
    let dr = only(&v, DoubleRelease);
    assert_eq!(dr.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(dr[0].evidence.other["holder_lease"], "L2");
    assert!(dr[0].evidence.other["harm"]
        .as_str()
        .unwrap()
        .contains("rejected as not-owner"));
    assert!(dr[0].fails);
    assert!(only(&v, ReleaseOfLostLock).is_empty());
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(v.valid.exit_code(), 1);
    // The same, with w2 having noticed its lock gone first (a lease-lost, then the refusal).
    let mut then: Vec<Event> = vec![info(2, LeaseLost)
        .lock("l")
        .lease("L2")
        .token(2)
        .at_ms(3_650)];
    then.extend(refused(2, "L2", 2, 3_700));
    let v = judged(&stale_release_then(then));
    assert_eq!(only(&v, DoubleRelease).len(), 1, "{:#?}", v.anomalies);
    assert_eq!(v.valid, Validity::Invalid);
}

/// Exactly the other shape: the next holder's own release succeeds (nothing was freed under
/// it), or its refusal follows a fault on its worker that explains its loss anyway.
#[test]
fn a_stale_release_without_shown_harm_is_an_observed_release_of_lost_lock() {
    let v = judged(&stale_release_then(release(2, "L2", 2, 3_700).into()));
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    let lost = only(&v, ReleaseOfLostLock);
    assert_eq!(lost.len(), 1, "{:#?}", v.anomalies);
    assert!(!lost[0].fails);
    assert_eq!(v.valid, Validity::Valid, "{:?}", v.unknown_reasons);
    assert_eq!(v.valid.exit_code(), 0);
    // A pause of w2 after its grant explains a refusal: no harm from w1's release is shown.
    let then: Vec<Event> = [
        start("pause-holder").targets(&["w2"]).at_ms(3_550),
        stop("pause-holder").targets(&["w2"]).at_ms(3_650),
    ]
    .into_iter()
    .chain(refused(2, "L2", 2, 3_700))
    .collect();
    let v = judged(&stale_release_then(then));
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(only(&v, ReleaseOfLostLock).len(), 1);
    assert!(!v.anomalies.iter().any(|a| a.fails), "{:#?}", v.anomalies);
}

/// A grant of what the service no longer held: w2's acquire is frozen past its session, the
/// library grants it anyway and the adapter's read-back finds w2's key gone. w1, the holder at
/// the service all along, then releases its own lock and w3 takes it. Nothing was freed under
/// w2 (it held nothing there): no release is a double release or of a lost lock; w2 and w3
/// both believing they hold is the concurrent holders it is. The same history with w2's grant
/// read back whole is the stale release it then is.
#[test]
fn a_release_after_a_grant_whose_key_was_already_gone_frees_only_the_releasers_own_lock() {
    let with_w2_granted = |w2_grant: Event| {
        let mut events: Vec<Event> = acquire(1, "L1", 1, 0).into();
        events.push(invoke(2, Acquire).lock("l").at_ms(100));
        events.push(start("pause-acquiring").targets(&["w2"]).at_ms(1_000));
        events.push(stop("pause-acquiring").targets(&["w2"]).at_ms(4_000));
        events.push(w2_grant.at_ms(4_005));
        events.extend(release(1, "L1", 1, 4_500));
        events.extend(acquire(3, "L3", 3, 4_600));
        judged(&history(events))
    };
    let granted = ok(2, Acquire).lock("l").lease("L2").owner("w2");
    let v = with_w2_granted(granted.clone().read_back("key L2 gone"));
    assert!(only(&v, DoubleRelease).is_empty(), "{:#?}", v.anomalies);
    assert!(only(&v, ReleaseOfLostLock).is_empty(), "{:#?}", v.anomalies);
    assert!(
        !only(&v, ConcurrentHolders).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert!(!v.anomalies.iter().any(|a| a.fails), "{:#?}", v.anomalies);
    let v = with_w2_granted(granted);
    assert_eq!(only(&v, DoubleRelease).len(), 1, "{:#?}", v.anomalies);
    assert_eq!(v.valid, Validity::Invalid);
}
