//! Specifications of locked-out-client: a worker whose acquires keep failing or timing out for
//! longer than `ttl + recovery_slack` while the other workers are granted the lock (a client
//! that can never take the lock again, such as a library's client wedged after an exception).
//! Observed, like concurrent-holders: contention makes some acquires fail legitimately.

mod common;
use checkers::testkit::*;
use checkers::CheckConfig;
use common::*;
use results::{AnomalyKind::*, Event, OpType, Validity, Verdict};
use std::time::Duration;

/// ttl 1 s and slack 1 s: a worker must fail for more than 2 s.
fn judged(events: Vec<Event>, workers: Option<u32>) -> Verdict {
    let cfg = CheckConfig {
        ttl: Some(Duration::from_secs(1)),
        recovery_slack: Duration::from_secs(1),
        workers,
        ..CheckConfig::default()
    };
    checkers::check(&history(events), Some(&[]), &cfg)
}

/// Process `p` (worker `p % 3`, named `w<p % 3>`) takes the lock at `at` ms and releases it
/// 100 ms later.
fn grant(p: u32, token: u64, at: u64) -> Vec<Event> {
    hold(p, token, at, 100)
}

/// [`grant`], releasing `for_ms` after the grant.
fn hold(p: u32, token: u64, at: u64, for_ms: u64) -> Vec<Event> {
    let (owner, lease) = (format!("w{}", p % 3), format!("L{token}"));
    vec![
        invoke(p, Acquire).lock("l").at_ms(at),
        ok(p, Acquire)
            .lock("l")
            .owner(&owner)
            .lease(&lease)
            .token(token)
            .at_ms(at + 1),
        invoke(p, Release)
            .lock("l")
            .lease(&lease)
            .at_ms(at + for_ms),
        ok(p, Release)
            .lock("l")
            .lease(&lease)
            .result(Released)
            .at_ms(at + for_ms + 1),
    ]
}

/// Process `p` tries to take the lock at `at` ms and is answered `kind` 300 ms later.
fn attempt(p: u32, kind: OpType, at: u64) -> Vec<Event> {
    let mut done = invoke(p, Acquire)
        .lock("l")
        .error("client is closed")
        .at_ms(at + 300);
    done.kind = kind;
    vec![invoke(p, Acquire).lock("l").at_ms(at), done]
}

/// Worker 2 of 3 took the lock once, then its client wedged: from 1 s on every acquire fails
/// (once timing out, which retires process 2: the worker goes on as process 5), while workers
/// 0 and 1 take the lock three times, until 4.3 s.
fn wedged() -> Vec<Event> {
    [
        grant(2, 1, 0),
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_500),
        attempt(2, OpType::Info, 2_000),
        grant(1, 3, 2_500),
        attempt(5, OpType::Fail, 3_000),
        grant(0, 4, 3_500),
        attempt(5, OpType::Fail, 4_000),
    ]
    .concat()
}

#[test]
fn a_worker_whose_acquires_keep_failing_while_others_are_granted_is_locked_out() {
    let v = judged(wedged(), Some(3));
    let lo = only(&v, LockedOutClient);
    assert_eq!(lo.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(kinds(&v), vec![LockedOutClient]);
    let a = lo[0];
    let e = &a.evidence;
    assert_eq!(e.lock.as_deref(), Some("l"));
    assert_eq!(
        e.owner.as_deref(),
        Some("w2"),
        "its name, from its last grant"
    );
    assert_eq!(e.other["worker"], 2);
    assert_eq!(e.other["processes"], serde_json::json!([2, 5]));
    assert_eq!(e.other["attempts_total"], 4);
    assert_eq!(e.other["grants_to_others"], 3);
    let attempts = e.other["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 4);
    assert_eq!(attempts[0]["invoke"], 4);
    assert_eq!(attempts[0]["index"], 5);
    assert_eq!(attempts[0]["outcome"], "fail");
    assert_eq!(attempts[0]["error"], "client is closed");
    assert_eq!(attempts[1]["outcome"], "info");
    assert_eq!(attempts[2]["process"], 5);
    let grants = e.other["grants"].as_array().unwrap();
    let granted: Vec<_> = grants.iter().map(|g| g["process"].clone()).collect();
    assert_eq!(granted, [0, 1, 0]);
    assert_eq!(grants[1]["owner"], "w1");
    assert_eq!(grants[1]["token"], 3);
    // The failures, then the grants, in history order.
    assert_eq!(e.indices, vec![4, 5, 7, 10, 11, 13, 16, 17, 19, 22, 23]);
    // It became true with the fourth failure, the first after a grant to another that came
    // when the worker had been failing for ttl + slack (the third, at 3.3 s, saw none yet).
    assert_eq!(a.at, Some(4_300 * 1_000_000));
    assert!(!a.fails);
    assert!(a.summary.contains("worker 2"), "{}", a.summary);
    let d = &a.diagnosis;
    assert!(
        d.observation.contains("4 acquires") && d.observation.contains("3.3 s"),
        "{d:#?}"
    );
    assert!(!d.likely_boundary.is_empty() && !d.next_action.is_empty());
    assert_eq!(status(&v, LockedOutClient), "checked");
    assert_eq!(v.valid, Validity::Valid, "observed by default");
    // A test whose fail_on names it fails on it.
    let cfg = CheckConfig {
        ttl: Some(Duration::from_secs(1)),
        recovery_slack: Duration::from_secs(1),
        workers: Some(3),
        fail_on: vec![LockedOutClient],
    };
    let v = checkers::check(&history(wedged()), Some(&[]), &cfg);
    assert_eq!(v.valid, Validity::Invalid);
}

/// Contention legitimately fails some acquires: nothing is claimed for failures that span no
/// more than `ttl + slack`, fewer than three attempts, fewer than two grants to others in the
/// window or none after the worker had failed for `ttl + slack` (the lock stuck for everyone),
/// or a worker that was granted the lock in between.
#[test]
fn failures_short_of_the_window_the_attempts_or_the_grants_are_no_lockout() {
    // Within ttl + slack: 1.0 s to 2.3 s.
    let events = [
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_200),
        attempt(2, OpType::Fail, 1_500),
        grant(1, 3, 1_700),
        attempt(2, OpType::Fail, 2_000),
    ]
    .concat();
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
    // Two attempts only, 3.3 s apart.
    let events = [
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_500),
        grant(1, 3, 2_500),
        attempt(2, OpType::Fail, 4_000),
    ]
    .concat();
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
    // One grant to others in the window.
    let events = [
        grant(0, 1, 0),
        attempt(2, OpType::Fail, 1_000),
        attempt(2, OpType::Fail, 2_000),
        grant(1, 3, 2_500),
        attempt(2, OpType::Fail, 3_000),
        attempt(2, OpType::Fail, 4_000),
    ]
    .concat();
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
    // Others granted the lock early in the run only: after that nobody could take it (a
    // stuck lock, stuck-lock's to judge), and the worker's failures say nothing of its client.
    let events = [
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_400),
        grant(1, 3, 1_600),
        attempt(2, OpType::Fail, 2_000),
        attempt(2, OpType::Fail, 3_000),
        attempt(2, OpType::Fail, 4_000),
        attempt(1, OpType::Fail, 4_000),
    ]
    .concat();
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
    // The worker itself was granted the lock in between: two runs of failures, each too short.
    let events = [
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_500),
        attempt(2, OpType::Fail, 2_000),
        grant(2, 3, 2_500),
        attempt(2, OpType::Fail, 3_000),
        grant(1, 4, 3_500),
        attempt(2, OpType::Fail, 4_000),
    ]
    .concat();
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
}

/// A fault on the worker (frozen, cut off, killed) or on the lock service explains its
/// failures: a run of failures under one is not judged, and one begins again after it. A
/// fault on another worker excuses nothing.
#[test]
fn a_fault_on_the_worker_or_the_service_excuses_its_failures() {
    let under = |fault: &str, target: &str| {
        let mut events = vec![
            start(fault).targets(&[target]).at_ms(1_900),
            stop(fault).targets(&[target]).at_ms(2_100),
        ];
        events.extend(wedged());
        events.sort_by_key(|e| e.time);
        judged(events, Some(3))
    };
    assert!(only(&under("isolate-worker", "w2"), LockedOutClient).is_empty());
    assert!(only(&under("stall-service", "etcd-1"), LockedOutClient).is_empty());
    assert_eq!(only(&under("pause-worker", "w1"), LockedOutClient).len(), 1);
    // A worker never granted the lock has no name the history gives: a fault on a worker the
    // checker cannot name might be on it, and excuses it.
    let events: Vec<Event> = wedged().into_iter().skip(4).collect();
    assert_eq!(
        only(&judged(events.clone(), Some(3)), LockedOutClient).len(),
        1
    );
    let mut events = events;
    events.push(start("isolate-worker").targets(&["w2"]).at_ms(1_900));
    events.push(stop("isolate-worker").targets(&["w2"]).at_ms(2_100));
    events.sort_by_key(|e| e.time);
    assert!(only(&judged(events, Some(3)), LockedOutClient).is_empty());
}

/// Without the test's worker count a retired process cannot be joined to its successor: each
/// process is judged alone, so failures answered `fail` (which retire nobody) still show, and
/// a run broken by an `info` does not. Without a ttl the kind has no window to judge.
#[test]
fn without_the_worker_count_each_process_is_judged_alone() {
    assert!(only(&judged(wedged(), None), LockedOutClient).is_empty());
    let events = [
        attempt(2, OpType::Fail, 1_000),
        grant(0, 2, 1_500),
        attempt(2, OpType::Fail, 2_000),
        grant(1, 3, 3_100),
        attempt(2, OpType::Fail, 3_300),
    ]
    .concat();
    assert_eq!(only(&judged(events, None), LockedOutClient).len(), 1);
    let v = verdict(&history(wedged()), &[]);
    assert!(status(&v, LockedOutClient).starts_with("not applicable"));
}

/// Long holds of the others, each of worker 2's attempts answered while one of them holds the
/// lock: a waiter outwaited by long jobs, not a client that cannot take a free lock.
#[test]
fn failures_only_while_another_holds_the_lock_are_contention_not_a_lockout() {
    let long = |p: u32, token: u64, at: u64| hold(p, token, at, 1_400);
    let history = [
        long(0, 1, 0),
        attempt(2, OpType::Fail, 100),
        long(1, 2, 1_500),
        attempt(2, OpType::Fail, 1_600),
        long(0, 3, 3_000),
        attempt(2, OpType::Fail, 3_100),
        long(1, 4, 4_500),
        attempt(2, OpType::Fail, 4_600),
    ]
    .concat();
    let mut history = history;
    history.sort_by_key(|e| e.time);
    let v = judged(history, Some(3));
    assert!(only(&v, LockedOutClient).is_empty(), "{:#?}", v.anomalies);
}
