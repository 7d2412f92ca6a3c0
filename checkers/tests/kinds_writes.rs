//! Specifications of the resource-log kinds: stale-accepted-write, duplicate-effect, and the
//! resource side of duplicate-token. The resource log is the ground truth.

mod common;
use checkers::testkit::*;
use common::*;
use results::{AnomalyKind::*, Validity, WriteResult};

#[test]
fn a_lower_token_accepted_after_a_higher_one_is_a_stale_accepted_write() {
    let mut late = res("k", Some(1), "lease-1", WriteResult::Accepted);
    late.highest_before = Some(2);
    let r = log([res("k", Some(2), "lease-2", WriteResult::Accepted), late]);
    let v = verdict(&idle(), &r);
    let stale = only(&v, StaleAcceptedWrite);
    assert_eq!(stale.len(), 1);
    let e = &stale[0].evidence;
    assert_eq!((e.token, e.highest_before), (Some(1), Some(2)));
    assert_eq!(e.seqs, vec![0, 1]);
    assert_eq!(e.lease.as_deref(), Some("lease-1"));
    assert_eq!(e.result.as_deref(), Some("accepted"));
    assert_eq!(e.other["newer_lease"], "lease-2");
    assert!(stale[0].fails);
    assert!(stale[0].diagnosis.next_action.contains("do not retry"));
}

#[test]
fn a_stale_token_the_resource_rejected_is_fencing_working() {
    let mut late = res("k", Some(1), "lease-1", WriteResult::RejectedStaleFence);
    late.highest_before = Some(2);
    let h = history([invoke(1, Write).key("k").token(1)]);
    let v = verdict(
        &h,
        &log([res("k", Some(2), "lease-2", WriteResult::Accepted), late]),
    );
    assert!(only(&v, StaleAcceptedWrite).is_empty());
    assert_eq!(status(&v, StaleAcceptedWrite), "checked");
}

#[test]
fn different_keys_do_not_fence_each_other() {
    let r = log([
        res("a", Some(2), "lease-2", WriteResult::Accepted),
        res("b", Some(1), "lease-1", WriteResult::Accepted),
    ]);
    assert!(only(&verdict(&idle(), &r), StaleAcceptedWrite).is_empty());
}

#[test]
fn an_info_write_the_log_shows_accepted_still_counts() {
    // Worker 1 never learned the outcome of its write (info), but the resource accepted it.
    let h = history([
        invoke(1, Write).key("k").token(1).op_id("1-1"),
        info(1, Write).key("k").token(1).op_id("1-1"),
    ]);
    let r = log([
        res("k", Some(2), "lease-2", WriteResult::Accepted),
        res("k", Some(1), "lease-1", WriteResult::Accepted),
    ]);
    let v = verdict(&h, &r);
    assert_eq!(only(&v, StaleAcceptedWrite).len(), 1);
    assert_eq!(v.valid, Validity::Invalid);
}

/// Two tokenless grants of lock l: L1, then L2 invoked `after_ms` (L1's grant completes at 2 ms).
fn tokenless_grants(after_ms: u64) -> Vec<results::Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").owner("w1").lease("L1").at_ms(2),
        invoke(2, Acquire).lock("l").at_ms(after_ms),
        ok(2, Acquire).lock("l").owner("w2").lease("L2").at_ms(10),
    ];
    events.sort_by_key(|e| e.time);
    history(events)
}

/// Resource decisions made after both grants (11 ms on), as a real run's come after its grants.
fn after_the_grants(
    entries: impl IntoIterator<Item = results::ResourceEntry>,
) -> Vec<results::ResourceEntry> {
    let mut r = log(entries);
    for (i, e) in r.iter_mut().enumerate() {
        e.time = (11 + i as u64) * 1_000_000;
    }
    r
}

/// Redlock and most client libraries hand out no token. Real time orders
/// their generations: L1's grant completed before L2's acquire was invoked, so L1's write
/// accepted after L2's is stale.
#[test]
fn a_tokenless_write_of_an_older_grant_accepted_after_a_newer_ones_is_a_stale_accepted_write() {
    let r = after_the_grants([
        res("k", None, "L1", WriteResult::Accepted),
        res("k", None, "L2", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
    ]);
    let v = verdict(&tokenless_grants(3), &r);
    let stale = only(&v, StaleAcceptedWrite);
    assert_eq!(stale.len(), 1, "{:#?}", v.anomalies);
    let e = &stale[0].evidence;
    assert_eq!(e.other["basis"], "grant-order");
    assert_eq!(e.lock.as_deref(), Some("l"));
    assert_eq!(e.lease.as_deref(), Some("L1"));
    assert_eq!(e.other["newer_lease"], "L2");
    // Both acquisitions (L1's grant, L2's invoke and grant) and both writes.
    assert_eq!(e.indices, vec![1, 2, 3]);
    assert_eq!(e.seqs, vec![1, 2]);
    assert_eq!(stale[0].at, Some(r[2].time));
    assert!(stale[0]
        .diagnosis
        .likely_boundary
        .contains("no fence token"));
    assert!(stale[0]
        .diagnosis
        .next_action
        .contains("issues a fence token"));
    assert!(stale[0].fails);
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(status(&v, DuplicateToken), "not applicable");
}

#[test]
fn tokenless_writes_of_overlapping_grants_cannot_be_ordered_and_are_not_reported() {
    // L2's acquire was invoked before L1's grant completed: neither is older.
    let r = after_the_grants([
        res("k", None, "L2", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
    ]);
    let v = verdict(&tokenless_grants(1), &r);
    assert!(
        only(&v, StaleAcceptedWrite).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert_eq!(status(&v, StaleAcceptedWrite), "checked");
    // Writes whose acquisitions the history does not show are left alone too; with none
    // tied to a grant, nothing was judged (not "checked").
    let v = verdict(&idle(), &r);
    assert!(only(&v, StaleAcceptedWrite).is_empty());
    assert_eq!(status(&v, StaleAcceptedWrite), "not applicable");
    // The token rule still marks its evidence.
    let mut late = res("k", Some(1), "lease-1", WriteResult::Accepted);
    late.highest_before = Some(2);
    let v = verdict(
        &idle(),
        &log([res("k", Some(2), "lease-2", WriteResult::Accepted), late]),
    );
    assert_eq!(
        only(&v, StaleAcceptedWrite)[0].evidence.other["basis"],
        "token"
    );
}

/// A lease string may come back (a session-scoped handle); each write is
/// ordered by the latest grant of its lease before it, not by the last one seen.
#[test]
fn a_lease_that_comes_back_is_ordered_by_its_grant_before_the_write() {
    let h = history([
        invoke(1, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").lease("S").at_ms(2),
        invoke(1, Release).lock("l").lease("S").at_ms(3),
        ok(1, Release)
            .lock("l")
            .lease("S")
            .result(Released)
            .at_ms(4),
        invoke(2, Acquire).lock("l").at_ms(5),
        ok(2, Acquire).lock("l").lease("Y").at_ms(6),
        invoke(2, Release).lock("l").lease("Y").at_ms(8),
        ok(2, Release)
            .lock("l")
            .lease("Y")
            .result(Released)
            .at_ms(9),
        invoke(1, Acquire).lock("l").at_ms(10),
        ok(1, Acquire).lock("l").lease("S").at_ms(11),
    ]);
    let mut r = log([
        res("k", None, "S", WriteResult::Accepted),
        res("k", None, "Y", WriteResult::Accepted),
        res("k", None, "S", WriteResult::Accepted),
    ]);
    for (e, (ms, p)) in r.iter_mut().zip([(3, 1), (7, 2), (12, 1)]) {
        e.time = ms * 1_000_000;
        e.process = p;
    }
    let v = verdict(&h, &r);
    assert!(
        only(&v, StaleAcceptedWrite).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert_eq!(status(&v, StaleAcceptedWrite), "checked");
}

#[test]
fn the_same_op_id_accepted_twice_is_a_duplicate_effect() {
    let mut again = res("k", Some(2), "lease-2", WriteResult::Accepted);
    again.op_id = "op-lease-2-2".into();
    let r = log([res("k", Some(2), "lease-2", WriteResult::Accepted), again]);
    let v = verdict(&idle(), &r);
    let dup = only(&v, DuplicateEffect);
    assert_eq!(dup.len(), 1);
    assert_eq!(dup[0].evidence.seqs, vec![0, 1]);
    assert_eq!(dup[0].evidence.other["op_id"], "op-lease-2-2");
    assert!(kinds(&v).iter().all(|k| *k == DuplicateEffect));
}

#[test]
fn a_repeat_the_resource_rejected_as_duplicate_is_not_an_effect() {
    let r = log([
        res("k", Some(2), "lease-2", WriteResult::Accepted),
        res("k", Some(2), "lease-2", WriteResult::RejectedDuplicate),
    ]);
    assert_clean(&verdict(&idle(), &r));
}

#[test]
fn one_token_accepted_from_two_leases_is_a_duplicate_token() {
    let r = log([
        res("k", Some(3), "lease-a", WriteResult::Accepted),
        res("k", Some(3), "lease-a", WriteResult::Accepted),
        res("k", Some(3), "lease-b", WriteResult::Accepted),
    ]);
    let v = verdict(&idle(), &r);
    let dup = only(&v, DuplicateToken);
    assert_eq!(dup.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(dup[0].evidence.seqs, vec![0, 2]);
    assert_eq!(dup[0].evidence.other["other_lease"], "lease-a");
}

/// Each write its own op_id (as a worker numbers them), so that no duplicate effect shows.
fn one_op_each(mut r: Vec<results::ResourceEntry>) -> Vec<results::ResourceEntry> {
    for e in &mut r {
        e.op_id = format!("op-{}", e.seq);
    }
    r
}

/// When the acquires overlapped, grant order cannot say which generation
/// is the newer; but writes L1, L2, L1 to one key are stale whichever came first (L1 first:
/// its second write followed the newer L2's; L2 first: L2's write followed the newer L1's).
#[test]
fn tokenless_writes_alternating_twice_between_overlapping_holds_are_stale_in_every_order() {
    let r = one_op_each(after_the_grants([
        res("k", None, "L1", WriteResult::Accepted),
        res("k", None, "L2", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
    ]));
    let v = verdict(&tokenless_grants(1), &r);
    let stale = only(&v, StaleAcceptedWrite);
    assert_eq!(stale.len(), 1, "{:#?}", v.anomalies);
    let e = &stale[0].evidence;
    assert_eq!(e.other["basis"], "every-order");
    assert_eq!(e.lock.as_deref(), Some("l"));
    assert_eq!(e.lease.as_deref(), Some("L1"));
    assert_eq!(e.other["other_lease"], "L2");
    // Both acquisitions (invoke and grant of each) and the three writes.
    assert_eq!(e.indices, vec![0, 2, 1, 3]);
    assert_eq!(e.seqs, vec![0, 1, 2]);
    let orders = e.other["orders"].as_array().expect("both orders");
    assert_eq!(orders.len(), 2);
    assert_eq!(
        (&orders[0]["older"], &orders[0]["stale_seq"]),
        (&"L1".into(), &2.into())
    );
    assert_eq!(
        (&orders[1]["older"], &orders[1]["stale_seq"]),
        (&"L2".into(), &1.into())
    );
    assert_eq!(stale[0].at, Some(r[2].time));
    assert!(stale[0].fails);
    assert_eq!(v.valid, Validity::Invalid);
    assert!(v.stats["stale-accepted-write"]
        .get("undecided_overlaps")
        .is_none());
}

/// L1 then L2 only is stale only if L2 was the older: nothing is claimed,
/// and the stats say the overlap left the pair undecided.
#[test]
fn tokenless_writes_of_overlapping_holds_in_one_order_only_are_undecided_not_claimed() {
    let r = one_op_each(after_the_grants([
        res("k", None, "L1", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
        res("k", None, "L2", WriteResult::Accepted),
    ]));
    let v = verdict(&tokenless_grants(1), &r);
    assert!(
        only(&v, StaleAcceptedWrite).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert_eq!(v.valid, Validity::Valid, "{:#?}", v.anomalies);
    let stat = &v.stats["stale-accepted-write"];
    assert_eq!(stat["status"], "checked");
    assert_eq!(stat["undecided_overlaps"], 1);
    assert!(stat["note"]
        .as_str()
        .unwrap()
        .contains("overlap left it undecided"));
    // The same alternation between holds that grant order does order is judged by it, not
    // left undecided.
    let v = verdict(&tokenless_grants(3), &r);
    assert!(only(&v, StaleAcceptedWrite).is_empty());
    assert!(v.stats["stale-accepted-write"]
        .get("undecided_overlaps")
        .is_none());
}

/// The rule is about one key and about two generations; a third writer
/// (its acquire overlapping L1's too) between them does not hide the pattern, and a write to
/// another key does not make one.
#[test]
fn every_order_looks_past_other_writers_and_not_across_keys() {
    let mut events = tokenless_grants(1);
    events.extend(history([
        invoke(3, Acquire).lock("l").at_ms(0),
        ok(3, Acquire).lock("l").owner("w3").lease("L3").at_ms(9),
    ]));
    events.sort_by_key(|e| e.time);
    let h = history(events);
    let r = one_op_each(after_the_grants([
        res("k", None, "L1", WriteResult::Accepted),
        res("other", None, "L2", WriteResult::Accepted),
        res("k", None, "L3", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
    ]));
    let v = verdict(&h, &r);
    let stale = only(&v, StaleAcceptedWrite);
    assert_eq!(stale.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(stale[0].evidence.other["other_lease"], "L3");
    assert_eq!(stale[0].evidence.seqs, vec![0, 2, 3]);
}

/// Acquires that overlapped but holds one after the other (w2 blocked in
/// acquire while w1 held the lock, granted after w1's release: the hand-off of a blocking
/// acquire) never competed: neither claimed in every order nor counted undecided.
#[test]
fn holds_one_after_the_other_are_not_judged_in_every_order_nor_undecided() {
    let h = history([
        invoke(1, Acquire).lock("l").at_ms(1),
        invoke(2, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").owner("w1").lease("L1").at_ms(2),
        invoke(1, Release).lock("l").lease("L1").at_ms(5),
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .result(Released)
            .at_ms(6),
        ok(2, Acquire).lock("l").owner("w2").lease("L2").at_ms(7),
    ]);
    let r = one_op_each(after_the_grants([
        res("k", None, "L1", WriteResult::Accepted),
        res("k", None, "L2", WriteResult::Accepted),
        res("k", None, "L1", WriteResult::Accepted),
    ]));
    let v = verdict(&h, &r);
    assert!(
        only(&v, StaleAcceptedWrite).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert!(v.stats["stale-accepted-write"]
        .get("undecided_overlaps")
        .is_none());
}
