//! Specifications of why a holder lost its lock, as the history
//! tells (after a fault, or with nothing that stopped it for a whole lease: its renewal
//! failed), and a lock client that still answers `held` after another was granted the lock
//! (`held-after-loss`, observed).

mod common;
use checkers::testkit::*;
use common::*;
use results::{AnomalyKind::*, Event, Validity};

const TTL_MS: u64 = 2_000;

fn acquire(p: u32, lease: &str, token: Option<u64>, at: u64) -> [Event; 2] {
    let mut ok = ok(p, Acquire)
        .lock("l")
        .lease(lease)
        .owner(&format!("w{p}"))
        .at_ms(at + 1);
    ok.token = token;
    [invoke(p, Acquire).lock("l").at_ms(at), ok]
}

fn check(p: u32, lease: &str, held: bool, at: u64) -> [Event; 2] {
    [
        invoke(p, Check).lock("l").lease(lease).at_ms(at),
        ok(p, Check).lock("l").lease(lease).held(held).at_ms(at + 1),
    ]
}

fn judged(events: Vec<Event>) -> results::Verdict {
    with_ttl(&history(events), &[], TTL_MS, 1_000)
}

/// W1 held the lock for 5 s and nothing (no fault at all) stopped it or
/// the service; w2 was granted the lock: w1's lease lapsed because its renewal failed.
#[test]
fn a_lock_taken_from_a_holder_nothing_stopped_for_a_lease_says_its_renewal_failed() {
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert_eq!(ch.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(ch[0].evidence.other["cause"], "none");
    let d = &ch[0].diagnosis;
    assert!(
        d.likely_boundary.contains(
            "the lease lapsed while nothing that outlasts a lease stopped the holder or the \
             service: its renewal failed"
        ),
        "{d:#?}"
    );
    assert!(d
        .observation
        .contains("no fault touched process 1's worker or the lock service"));
    assert_eq!(v.valid, Validity::Valid, "observed, like before");
}

/// After a pause of the holder the diagnosis is the literature's (a lease
/// is not a mutex), naming the pause; a fault of the service within the lease, or a holder
/// younger than a lease, is not "without a cause" either.
#[test]
fn a_lock_taken_after_a_pause_or_a_service_fault_keeps_the_pause_diagnosis() {
    let pause = |target: &str, from: u64, to: u64| {
        [
            start("pause-holder").targets(&[target]).at_ms(from),
            stop("pause-holder").targets(&[target]).at_ms(to),
        ]
    };
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(pause("w1", 100, 4_100));
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert_eq!(ch.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(ch[0].evidence.other["cause"], "pause-holder");
    assert!(ch[0]
        .diagnosis
        .likely_boundary
        .contains("a lease is not a mutex"));
    assert!(!ch[0].diagnosis.likely_boundary.contains("renewal failed"));
    assert!(ch[0].diagnosis.observation.contains("pause-holder"));
    // A pause of another worker is no cause of w1's loss.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(pause("w3", 100, 4_100));
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    assert_eq!(
        only(&v, ConcurrentHolders)[0].evidence.other["cause"],
        "none"
    );
    // A clock jump on the service within the lease before the grant is a cause.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(start("clock-jump").targets(&["redis-1"]).at_ms(4_000));
    events.push(stop("clock-jump").targets(&["redis-1"]).at_ms(4_500));
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert_eq!(ch[0].evidence.other["cause"], "clock-jump");
    assert!(!ch[0].diagnosis.likely_boundary.contains("renewal failed"));
    // A hold younger than a lease: its lease need not have been renewed yet.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 1_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert!(!ch[0].evidence.other.contains_key("cause"));
    assert!(!ch[0].diagnosis.likely_boundary.contains("renewal failed"));
    // Without a ttl nothing can be said about a whole lease.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = verdict(&history(events), &[]);
    assert!(!only(&v, ConcurrentHolders)[0]
        .diagnosis
        .likely_boundary
        .contains("renewal failed"));
}

/// A fault the lease is meant to survive is no cause of a loss: a stall of the service, or a
/// pause of the holder, shorter than the lease. The holder lost its lock without a cause that
/// outlasts a lease, so its renewal failed, under that fault, which the diagnosis names.
#[test]
fn a_loss_under_a_fault_shorter_than_the_lease_says_its_renewal_failed_under_it() {
    let under = |fault: &str, target: &str, from: u64, to: Option<u64>| {
        let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
        events.push(start(fault).targets(&[target]).at_ms(from));
        events.extend(to.map(|to| stop(fault).targets(&[target]).at_ms(to)));
        events.extend(acquire(2, "L2", Some(2), 5_000));
        let v = judged(events);
        let ch = only(&v, ConcurrentHolders);
        assert_eq!(ch.len(), 1, "{:#?}", v.anomalies);
        ch[0].clone()
    };
    let a = under("stall-leader", "etcd-1", 3_000, Some(4_200));
    assert_eq!(a.evidence.other["cause"], "none");
    assert_eq!(a.evidence.other["under"], "stall-leader");
    let d = &a.diagnosis;
    assert!(d.likely_boundary.contains("its renewal failed"), "{d:#?}");
    assert!(
        d.observation.contains(
            "without a cause that outlasts its lease: its renewal failed under stall-leader of \
             1.2 s, shorter than the 2 s lease"
        ),
        "{d:#?}"
    );
    // A pause of the holder shorter than the lease.
    let a = under("pause-holder", "w1", 3_000, Some(4_500));
    assert_eq!(a.evidence.other["cause"], "none");
    assert!(
        a.diagnosis
            .observation
            .contains("its renewal failed under pause-holder of 1.5 s, shorter than the 2 s lease"),
        "{:#?}",
        a.diagnosis
    );
    // A stall still on at the other grant, shorter than a lease so far.
    let a = under("stall-service", "etcd-1", 4_501, None);
    assert_eq!(a.evidence.other["cause"], "none");
    assert!(
        a.diagnosis
            .observation
            .contains("under stall-service of 0.5 s (still on), shorter than the 2 s lease"),
        "{:#?}",
        a.diagnosis
    );
    // A hold younger than a lease under a stall only: no cause named, and no renewal blamed.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(start("stall-leader").targets(&["etcd-1"]).at_ms(200));
    events.push(stop("stall-leader").targets(&["etcd-1"]).at_ms(700));
    events.extend(acquire(2, "L2", Some(2), 1_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert!(!ch[0].evidence.other.contains_key("cause"), "{:#?}", ch[0]);
    assert!(!ch[0].diagnosis.likely_boundary.contains("renewal failed"));
}

/// A fault that can outlast the lease is the cause, named: a pause of the holder at least a
/// lease long (even one that ended more than a lease before the other grant), and a kill of a
/// node whatever its length.
#[test]
fn a_pause_of_the_holder_longer_than_the_lease_is_named_as_the_cause() {
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(start("pause-holder").targets(&["w1"]).at_ms(100));
    events.push(stop("pause-holder").targets(&["w1"]).at_ms(2_600));
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    let ch = only(&v, ConcurrentHolders);
    assert_eq!(ch[0].evidence.other["cause"], "pause-holder");
    let d = &ch[0].diagnosis;
    assert!(
        d.likely_boundary.contains("a lease is not a mutex"),
        "{d:#?}"
    );
    assert!(!d.likely_boundary.contains("renewal failed"));
    assert!(
        d.observation
            .contains("pause-holder of 2.5 s, at least the 2 s lease"),
        "{d:#?}"
    );
    // A kill of a node, short as it was.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(start("kill-node").targets(&["redis-1"]).at_ms(4_000));
    events.push(stop("kill-node").targets(&["redis-1"]).at_ms(4_100));
    events.extend(acquire(2, "L2", Some(2), 5_000));
    let v = judged(events);
    assert_eq!(
        only(&v, ConcurrentHolders)[0].evidence.other["cause"],
        "kill-node"
    );
}

/// W1's keep-alive asked its library after w2 was granted the lock (w2's
/// acquire sent after w1's grant), and the library said held: `held-after-loss`, observed.
#[test]
fn a_check_answered_held_after_another_was_granted_is_held_after_loss() {
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(check(1, "L1", true, 1_000));
    events.extend(acquire(2, "L2", Some(2), 3_000));
    events.extend(check(1, "L1", true, 3_500));
    events.extend(check(1, "L1", true, 4_500));
    let v = judged(events);
    let hal = only(&v, HeldAfterLoss);
    assert_eq!(hal.len(), 1, "once per acquisition: {:#?}", v.anomalies);
    let e = &hal[0].evidence;
    assert_eq!(e.lease.as_deref(), Some("L1"));
    assert_eq!(e.other["holder_lease"], "L2");
    assert_eq!(e.indices, vec![1, 5, 6, 7]);
    assert_eq!(hal[0].at, Some(3_500 * 1_000_000));
    assert!(!hal[0].fails);
    assert!(hal[0]
        .diagnosis
        .likely_boundary
        .contains("still answers held"));
    assert_eq!(status(&v, HeldAfterLoss), "checked");
    assert_eq!(kinds(&v), vec![ConcurrentHolders, HeldAfterLoss]);
    assert_eq!(v.valid, Validity::Valid, "observed by default");
    // A test whose fail_on names it fails on it.
    let cfg = checkers::CheckConfig {
        fail_on: vec![HeldAfterLoss],
        ..checkers::CheckConfig::default()
    };
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 3_000));
    events.extend(check(1, "L1", true, 3_500));
    let v = checkers::check(&history(events), Some(&[]), &cfg);
    assert_eq!(v.valid, Validity::Invalid);
}

/// Nothing is claimed where the loss is not certain: a check sent before
/// the other grant completed, an answer of not held, a grant whose acquire was invoked before
/// the holder's own grant (it may have come first), an older token heard late.
#[test]
fn a_held_answer_before_a_certain_loss_is_no_held_after_loss() {
    // Asked before w2's grant completed (answered after it).
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(invoke(1, Check).lock("l").lease("L1").at_ms(2_999));
    events.extend(acquire(2, "L2", Some(2), 3_000));
    events.push(ok(1, Check).lock("l").lease("L1").held(true).at_ms(3_002));
    let v = judged(events);
    assert!(only(&v, HeldAfterLoss).is_empty(), "{:#?}", v.anomalies);
    // Answered not held.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 3_000));
    events.extend(check(1, "L1", false, 3_500));
    assert!(only(&judged(events), HeldAfterLoss).is_empty());
    // w2's acquire was invoked before w1's grant: grant order cannot say who was first.
    let events = vec![
        invoke(2, Acquire).lock("l").at_ms(0),
        invoke(1, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").lease("L1").owner("w1").at_ms(2),
        ok(2, Acquire)
            .lock("l")
            .lease("L2")
            .owner("w2")
            .at_ms(3_000),
        invoke(1, Check).lock("l").lease("L1").at_ms(3_500),
        ok(1, Check).lock("l").lease("L1").held(true).at_ms(3_501),
    ];
    assert!(only(&judged(events), HeldAfterLoss).is_empty());
    // w2's token is older than w1's: its grant, heard late, superseded nothing of w1's.
    let mut events: Vec<Event> = acquire(1, "L1", Some(5), 0).into();
    events.extend(acquire(2, "L2", Some(3), 3_000));
    events.extend(check(1, "L1", true, 3_500));
    assert!(only(&judged(events), HeldAfterLoss).is_empty());
    // Without any check line the kind has nothing to judge.
    let v = judged(acquire(1, "L1", Some(1), 0).into());
    assert_eq!(status(&v, HeldAfterLoss), "not applicable");
}

/// ZooKeeper's queue: the taker of a lost lock is a waiter queued before the holder's grant
/// (its acquire invoked before A's `ok`, completed after it). Grant order cannot order the two,
/// but a higher fence token can: B's grant, completed after A's with a higher token, came after
/// A's, so a held answer after it is `held-after-loss`. A lower token proves nothing, and
/// without tokens the invoke order alone still decides.
#[test]
fn a_waiter_queued_before_the_grant_that_completes_with_a_higher_token_was_granted_after() {
    let queued = |a: Option<u64>, b: Option<u64>| {
        let mut a_ok = ok(1, Acquire).lock("l").lease("L1").owner("w1").at_ms(2);
        a_ok.token = a;
        let mut b_ok = ok(2, Acquire)
            .lock("l")
            .lease("L2")
            .owner("w2")
            .at_ms(3_000);
        b_ok.token = b;
        let mut events = vec![
            invoke(2, Acquire).lock("l").at_ms(0),
            invoke(1, Acquire).lock("l").at_ms(1),
            a_ok,
            b_ok,
        ];
        events.extend(check(1, "L1", true, 3_500));
        judged(events)
    };
    let v = queued(Some(5), Some(7));
    let hal = only(&v, HeldAfterLoss);
    assert_eq!(hal.len(), 1, "{:#?}", v.anomalies);
    let e = &hal[0].evidence;
    assert_eq!(e.other["holder_lease"], "L2");
    assert_eq!(e.other["basis"], "token");
    assert_eq!(e.indices, vec![2, 3, 4, 5]);
    assert!(
        hal[0].diagnosis.observation.contains("token 7"),
        "{:#?}",
        hal[0].diagnosis
    );
    // A lower token: B is older whatever the order its acquire completed in.
    assert!(only(&queued(Some(7), Some(5)), HeldAfterLoss).is_empty());
    // No tokens: nothing orders the two grants.
    assert!(only(&queued(None, None), HeldAfterLoss).is_empty());
    // One side without a token: nothing to compare.
    assert!(only(&queued(Some(5), None), HeldAfterLoss).is_empty());
    // Invoked after A's grant, the basis is grant order.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.extend(acquire(2, "L2", Some(2), 3_000));
    events.extend(check(1, "L1", true, 3_500));
    let v = judged(events);
    assert_eq!(
        only(&v, HeldAfterLoss)[0].evidence.other["basis"],
        "grant-order"
    );
}

/// A `check` is the keep-alive's question beside the process's own operations: whatever it is
/// answered (`info` included), it ends no hold and retires nobody (docs/design.md, "Holds").
#[test]
fn check_lines_change_no_hold() {
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(invoke(1, Check).lock("l").lease("L1").at_ms(100));
    events.push(info(1, Check).lock("l").lease("L1").at_ms(200));
    events.extend(check(1, "L1", false, 300));
    let with = history(events.clone());
    let without = history(events.into_iter().filter(|e| e.f != Check));
    let spans = |h: &[Event]| {
        checkers::fold::hold_spans(h)
            .into_iter()
            .map(|s| (s.hold.lease().map(str::to_string), s.ended_by))
            .collect::<Vec<_>>()
    };
    assert_eq!(spans(&with), spans(&without));
    // And a second acquisition while it is open is still two holders at once.
    let mut events: Vec<Event> = acquire(1, "L1", Some(1), 0).into();
    events.push(invoke(1, Check).lock("l").lease("L1").at_ms(100));
    events.push(info(1, Check).lock("l").lease("L1").at_ms(200));
    events.extend(acquire(2, "L2", Some(2), 300));
    assert_eq!(kinds(&judged(events)), vec![ConcurrentHolders]);
}
