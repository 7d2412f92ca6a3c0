//! Specifications of the kinds judged against the lock service's own record (`service.jsonl`):
//! `granted-gone`, a client granted the lock on a key the service had already deleted;
//! `phantom-holder`, a lock the service held for a client told it did not get it;
//! `deleted-anothers-key`, a release that removed another holder's key; `held-against-service`,
//! a client answering held while the service shows its key gone; `token-out-of-order`, a later
//! grant at the service with a lower token; and the service's holder that `stuck-lock` names.

mod common;
use checkers::testkit::*;
use checkers::{CheckConfig, Engine};
use common::*;
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind::*, Event, Validity, Verdict};

fn grant(p: u32, lease: &str, at_ms: u64) -> [Event; 2] {
    [
        invoke(p, Acquire).lock("l").at_ms(at_ms),
        ok(p, Acquire)
            .lock("l")
            .lease(lease)
            .owner(&format!("w{p}"))
            .at_ms(at_ms + 1),
    ]
}

fn change(what: ServiceWhat, key: &str, owner: &str, created: i64, revision: i64) -> ServiceEntry {
    let mut e = ServiceEntry::new(revision as u64 * 1_000_000, what);
    e.key = Some(key.into());
    e.owner = Some(owner.into());
    e.created = Some(created);
    e.revision = Some(revision);
    e
}

fn watching(from: i64) -> ServiceEntry {
    let mut e = ServiceEntry::new(0, ServiceWhat::Watching);
    e.revision = Some(from);
    e
}

/// Judges `events` with `record` as the service's record (none: the run has no service.jsonl).
fn judged(events: Vec<Event>, record: Option<Vec<ServiceEntry>>) -> Verdict {
    judged_with(&CheckConfig::default(), events, record)
}

fn judged_with(
    cfg: &CheckConfig,
    events: Vec<Event>,
    record: Option<Vec<ServiceEntry>>,
) -> Verdict {
    let mut engine = Engine::new(cfg);
    for e in history(events) {
        engine.event(&e.as_ref());
    }
    if let Some(record) = record {
        engine.service_log(record);
    }
    engine.finish()
}

/// /l/a (a's) is the holder; /l/b (b's) queues behind it. b's session expires while it waits:
/// the service deletes /l/b at revision `b_gone`; a releases at revision `a_gone`.
fn queue_of_two(b_gone: i64, a_gone: i64) -> (Vec<Event>, Vec<ServiceEntry>) {
    let mut events: Vec<Event> = grant(1, "/l/a@2", 0).into();
    events.extend(grant(2, "/l/b@3", 10));
    let mut record = vec![
        watching(2),
        change(ServiceWhat::Put, "/l/a", "a", 2, 2),
        change(ServiceWhat::Put, "/l/b", "b", 3, 3),
        change(ServiceWhat::Delete, "/l/b", "b", 3, b_gone),
        change(ServiceWhat::Delete, "/l/a", "a", 2, a_gone),
    ];
    record.sort_by_key(|e| e.revision);
    (events, record)
}

#[test]
fn a_waiter_granted_after_its_own_key_was_deleted_was_granted_something_gone() {
    let (events, record) = queue_of_two(4, 5);
    let v = judged(events, Some(record));
    let found = only(&v, GrantedGone);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    let ev = &found[0].evidence;
    assert_eq!(ev.key.as_deref(), Some("/l/b"));
    assert_eq!(ev.other["deleted_revision"], 4);
    assert_eq!(ev.other["turn_revision"], 5);
    assert_eq!(ev.other["ahead_key"], "/l/a");
    assert!(found[0].summary.contains("deleted that key at revision 4"));
    // Observed by default: a belief the service contradicts, not harm.
    assert_eq!(v.valid, Validity::Valid, "{:?}", v.unknown_reasons);
    assert!(!found[0].fails);
}

#[test]
fn a_waiter_whose_key_outlived_the_key_ahead_of_it_was_granted_its_own() {
    // The near miss: the same history, but the service deleted /l/a (revision 4) before /l/b.
    let (events, record) = queue_of_two(5, 4);
    let v = judged(events, Some(record));
    assert!(only(&v, GrantedGone).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(status(&v, GrantedGone), "checked");
}

#[test]
fn a_grant_the_library_dated_after_its_keys_delete_was_granted_something_gone() {
    let lease = "/l/b granted at revision 6 lease b";
    let grants = |gone: i64| {
        let events: Vec<Event> = grant(2, lease, 10).into();
        let record = vec![
            watching(2),
            change(ServiceWhat::Put, "/l/b", "b", 3, 3),
            change(ServiceWhat::Delete, "/l/b", "b", 3, gone),
        ];
        judged(events, Some(record))
    };
    let v = grants(4);
    let found = only(&v, GrantedGone);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    assert_eq!(found[0].evidence.other["created_revision"], 3);
    assert_eq!(found[0].evidence.other["turn_revision"], 6);
    // The near miss: the key went after the revision the library named.
    let v = grants(7);
    assert!(only(&v, GrantedGone).is_empty(), "{:#?}", v.anomalies);
}

#[test]
fn without_the_services_record_such_grants_are_unknown_and_other_grants_not_applicable() {
    let (events, _) = queue_of_two(4, 5);
    let v = judged(events, None);
    assert_eq!(status(&v, GrantedGone), "unknown");
    assert_eq!(v.valid, Validity::Unknown);
    assert!(
        v.unknown_reasons
            .iter()
            .any(|r| r.contains("no service.jsonl")),
        "{:?}",
        v.unknown_reasons
    );
    let v = judged(grant(1, "L1", 0).into(), None);
    assert_eq!(status(&v, GrantedGone), "not applicable");
    assert_eq!(v.valid, Validity::Valid, "{:?}", v.unknown_reasons);
}

#[test]
fn a_record_with_a_gap_decides_nothing_it_did_not_see() {
    let (events, mut record) = queue_of_two(5, 4);
    let mut gap = ServiceEntry::new(4_500_000, ServiceWhat::Gap);
    gap.error = Some("etcd compacted its history".into());
    record.insert(3, gap);
    let v = judged(events, Some(record));
    assert_eq!(status(&v, GrantedGone), "unknown");
}

/// Process 1 holds `l` and is frozen at 10 ms for the rest of the run; process 2 fails to take
/// `l` every 200 ms: with ttl and slack 1 s, a stuck lock whose window runs from 10 ms to
/// 2,010 ms.
fn frozen_holder() -> Vec<Event> {
    let mut events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        ok(1, Acquire)
            .lock("l")
            .owner("worker-1")
            .lease("worker-1:ab")
            .at_ms(5),
        start("pause-holder").targets(&["worker-1"]).at_ms(10),
    ];
    for i in 0..15u64 {
        let t = 20 + i * 200;
        events.push(invoke(2, Acquire).lock("l").at_ms(t));
        events.push(fail(2, Acquire).lock("l").at_ms(t + 5));
    }
    events
}

/// A Redis server's record of `l`'s key: set by worker-1 at 4 ms, renewed at each of
/// `renewed_ms`, expired at `expired_ms`.
fn redis_record(renewed_ms: &[u64], expired_ms: Option<u64>) -> Vec<ServiceEntry> {
    let at = |ms: u64, what: ServiceWhat| {
        let mut e = ServiceEntry::new(ms * 1_000_000, what);
        e.node = Some("redis-1".into());
        e.key = Some("fencecheck:lock:l".into());
        e.value = Some("worker-1:ab".into());
        e.ttl_ms = Some(1000);
        e
    };
    let mut watching = ServiceEntry::new(0, ServiceWhat::Watching);
    watching.node = Some("redis-1".into());
    let mut record = vec![watching, at(4, ServiceWhat::Put)];
    record.extend(renewed_ms.iter().map(|ms| at(*ms, ServiceWhat::Renewed)));
    if let Some(ms) = expired_ms {
        let mut expired = at(ms, ServiceWhat::Expired);
        expired.value = None;
        record.push(expired);
    }
    record.sort_by_key(|e| e.time);
    record
}

fn stuck_with(record: Option<Vec<ServiceEntry>>) -> results::Anomaly {
    let cfg = CheckConfig {
        ttl: Some(std::time::Duration::from_secs(1)),
        recovery_slack: std::time::Duration::from_secs(1),
        ..CheckConfig::default()
    };
    let v = judged_with(&cfg, frozen_holder(), record);
    let stuck = only(&v, StuckLock);
    assert_eq!(stuck.len(), 1, "{:#?}", v.anomalies);
    stuck[0].clone()
}

#[test]
fn a_stuck_locks_report_names_the_key_the_service_kept_and_its_renewals() {
    let a = stuck_with(Some(redis_record(&[600, 1200, 1800, 2400], None)));
    let holder = &a.evidence.other["service_holder"];
    assert_eq!(holder["key"], "fencecheck:lock:l", "{holder}");
    assert_eq!(holder["value"], "worker-1:ab");
    assert_eq!(holder["node"], "redis-1");
    assert_eq!(holder["since_ns"], 4_000_000);
    // The renewal at 2,400 ms came after the deadline.
    assert_eq!(holder["renewals_in_window"], 3);
    assert!(
        a.diagnosis
            .observation
            .contains("renewed 3 times within the window"),
        "{}",
        a.diagnosis.observation
    );
}

#[test]
fn a_stuck_locks_report_says_when_the_service_had_the_lock_free() {
    // The near miss of a held key: the service let the key expire at 1,000 ms.
    let a = stuck_with(Some(redis_record(&[600], Some(1000))));
    assert!(
        a.evidence.other["service_holder"].is_null(),
        "{:?}",
        a.evidence
    );
    assert!(
        a.diagnosis
            .observation
            .contains("the service had the lock free"),
        "{}",
        a.diagnosis.observation
    );
}

#[test]
fn a_stuck_locks_report_leaves_the_service_unsaid_where_its_record_is_blind() {
    let mut record = redis_record(&[600], None);
    let mut gap = ServiceEntry::new(700_000_000, ServiceWhat::Gap);
    gap.node = Some("redis-1".into());
    let mut back = ServiceEntry::new(900_000_000, ServiceWhat::Watching);
    back.node = Some("redis-1".into());
    record.extend([gap, back]);
    record.sort_by_key(|e| e.time);
    let a = stuck_with(Some(record));
    let holder = &a.evidence.other["service_holder"];
    assert!(
        holder["unknown"]
            .as_str()
            .is_some_and(|w| w.contains("gap")),
        "{holder}"
    );
    // Without a record the report is as before.
    let a = stuck_with(None);
    assert!(!a.evidence.other.contains_key("service_holder"));
}

/// One Redis server's (or each of `nodes`') record of `l`'s key: `lines` of (ms, what, value).
fn redis_lines(nodes: &[&str], lines: &[(u64, ServiceWhat, &str)]) -> Vec<ServiceEntry> {
    let mut record = Vec::new();
    for node in nodes {
        let mut watching = ServiceEntry::new(0, ServiceWhat::Watching);
        watching.node = Some(node.to_string());
        record.push(watching);
    }
    for (ms, what, value) in lines {
        for node in nodes {
            let mut e = ServiceEntry::new(ms * 1_000_000, *what);
            e.node = Some(node.to_string());
            e.key = Some("fencecheck:lock:l".into());
            // As the observer writes them: a delete or an expiry names only its key.
            if matches!(what, ServiceWhat::Put | ServiceWhat::Renewed) {
                e.value = Some(value.to_string());
                e.ttl_ms = Some(2000);
            }
            record.push(e);
        }
    }
    record.sort_by_key(|e| e.time);
    record
}

/// Process 1 takes and releases `l` (value v1); process 2's acquire lands (v2 set at 202 ms) but
/// is answered `info` at 1,200 ms (its reply lost); process 3 is refused at 1,305 and 1,605 ms,
/// and granted v3 at 2,305 ms, after v2 expired at 2,202 ms.
fn lost_reply() -> Vec<Event> {
    let mut events: Vec<Event> = grant(1, "v1", 0).into();
    events.extend([
        invoke(1, Release).lock("l").lease("v1").at_ms(100),
        ok(1, Release).lock("l").lease("v1").at_ms(105),
        invoke(2, Acquire).lock("l").at_ms(200),
        info(2, Acquire).lock("l").at_ms(1200),
    ]);
    for t in [1300, 1600] {
        events.push(invoke(3, Acquire).lock("l").at_ms(t));
        events.push(fail(3, Acquire).lock("l").at_ms(t + 5));
    }
    events.extend(grant(3, "v3", 2300));
    events
}

fn lost_reply_record(
    nodes: &[&str],
    v2_on: usize,
    v2_gone: (u64, ServiceWhat),
) -> Vec<ServiceEntry> {
    let mut record = redis_lines(
        nodes,
        &[
            (1, ServiceWhat::Put, "v1"),
            (103, ServiceWhat::Delete, "v1"),
            (2303, ServiceWhat::Put, "v3"),
        ],
    );
    let v2 = redis_lines(
        &nodes[..v2_on],
        &[(202, ServiceWhat::Put, "v2"), (v2_gone.0, v2_gone.1, "v2")],
    );
    record.extend(v2.into_iter().filter(|e| e.what != ServiceWhat::Watching));
    record.sort_by_key(|e| e.time);
    record
}

#[test]
fn a_key_the_service_kept_for_an_acquire_answered_info_is_a_phantom_holder() {
    let record = lost_reply_record(&["redis-1"], 1, (2202, ServiceWhat::Expired));
    let v = judged(lost_reply(), Some(record));
    let found = only(&v, PhantomHolder);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    let a = &found[0];
    assert!(!a.fails, "observed by default");
    assert_eq!(a.evidence.owner.as_deref(), Some("process-2"));
    assert_eq!(a.evidence.other["service_value"], "v2");
    // Answered at 1,200 ms, settled 100 ms later; the service let it go at 2,202 ms.
    assert_eq!(a.evidence.other["head_from_ns"], 1_300_000_000u64);
    assert_eq!(a.evidence.other["head_until_ns"], 2_202_000_000u64);
    assert_eq!(a.evidence.other["refused_meanwhile"], 2);
    // The two refused acquires were in flight while it stood; the one at 2,300 ms came after.
    assert_eq!(a.evidence.other["waiting_meanwhile"], 2);
    assert_eq!(a.evidence.other["refused_acquires"][0]["answered"], "info");
}

#[test]
fn a_key_the_library_deleted_before_it_answered_is_no_phantom() {
    // The near miss: the same acquire, its key deleted at 1,150 ms, before the answer.
    let record = lost_reply_record(&["redis-1"], 1, (1150, ServiceWhat::Delete));
    let v = judged(lost_reply(), Some(record));
    assert!(only(&v, PhantomHolder).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(status(&v, PhantomHolder), "checked");
}

#[test]
fn redlocks_phantom_holds_a_majority_of_the_masters() {
    let masters = ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"];
    let on = |n| {
        let v = judged(
            lost_reply(),
            Some(lost_reply_record(&masters, n, (2202, ServiceWhat::Expired))),
        );
        only(&v, PhantomHolder).len()
    };
    assert_eq!(on(3), 1, "three of five masters hold it");
    assert_eq!(on(2), 0, "two of five hold nothing");
}

#[test]
fn a_phantom_holder_is_judged_only_where_the_grants_are_told_apart_at_the_service() {
    let record = lost_reply_record(&["redis-1"], 1, (2202, ServiceWhat::Expired));
    // The record missed v3's put: a key no grant names may be one of theirs.
    let missed: Vec<ServiceEntry> = (record.iter())
        .filter(|e| e.value.as_deref() != Some("v3"))
        .cloned()
        .collect();
    let v = judged(lost_reply(), Some(missed));
    assert_eq!(status(&v, PhantomHolder), "unknown");
    // ... which matters only where it found one: with v2 deleted before the answer, it is checked.
    let cleaned = lost_reply_record(&["redis-1"], 1, (1150, ServiceWhat::Delete));
    let missed: Vec<ServiceEntry> = (cleaned.iter())
        .filter(|e| e.value.as_deref() != Some("v3"))
        .cloned()
        .collect();
    let v = judged(lost_reply(), Some(missed));
    assert_eq!(status(&v, PhantomHolder), "checked");
    // A client whose lease is not the service's identity: nothing to set against.
    let renamed: Vec<Event> = (lost_reply().into_iter())
        .map(|e| match e.lease.clone() {
            Some(l) => e.lease(&format!("lease {l}")),
            None => e,
        })
        .collect();
    let v = judged(renamed, Some(record));
    assert_eq!(status(&v, PhantomHolder), "not applicable");
    // Without a record (an older run, a converted history): not applicable, judged as before.
    let v = judged(lost_reply(), None);
    assert_eq!(status(&v, PhantomHolder), "not applicable");
    assert_eq!(v.valid, Validity::Valid, "{:?}", v.unknown_reasons);
}

/// A holds `l` (v1) and is paused; its key expires at 2,000 ms; B is granted v2 at 2,100 ms; A
/// wakes and releases (2,500 to 2,505 ms) with a plain delete. `releaser` is who releases.
fn stale_release(releaser: u32) -> Vec<Event> {
    let mut events: Vec<Event> = grant(1, "v1", 0).into();
    events.extend(grant(2, "v2", 2099));
    let lease = if releaser == 1 { "v1" } else { "v2" };
    events.extend([
        invoke(releaser, Release).lock("l").lease(lease).at_ms(2500),
        ok(releaser, Release).lock("l").lease(lease).at_ms(2505),
    ]);
    events
}

fn stale_release_record(gone: ServiceWhat) -> Vec<ServiceEntry> {
    let mut record = redis_lines(
        &["redis-1"],
        &[
            (1, ServiceWhat::Put, "v1"),
            (2000, ServiceWhat::Expired, "v1"),
            (2099, ServiceWhat::Put, "v2"),
        ],
    );
    let mut e = ServiceEntry::new(2_502_000_000, gone);
    e.node = Some("redis-1".into());
    e.key = Some("fencecheck:lock:l".into());
    record.push(e);
    record
}

#[test]
fn a_stale_release_that_deleted_the_next_holders_key_is_seen_at_the_service() {
    let v = judged(
        stale_release(1),
        Some(stale_release_record(ServiceWhat::Delete)),
    );
    let found = only(&v, DeletedAnothersKey);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    let a = &found[0];
    assert!(!a.fails, "observed by default");
    assert_eq!(a.evidence.owner.as_deref(), Some("process-2"));
    assert_eq!(a.evidence.lease.as_deref(), Some("v2"));
    assert_eq!(a.evidence.other["releases"][0]["process"], 1);
    assert_eq!(a.evidence.other["releases"][0]["lease"], "v1");
    assert_eq!(a.evidence.other["deleted_seen_ns"], 2_502_000_000u64);
}

#[test]
fn a_key_that_expired_or_that_its_holder_released_was_deleted_by_nobody_else() {
    // The near misses: the service expired B's key during A's release; B released its own.
    let v = judged(
        stale_release(1),
        Some(stale_release_record(ServiceWhat::Expired)),
    );
    assert!(
        only(&v, DeletedAnothersKey).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert_eq!(status(&v, DeletedAnothersKey), "checked");
    let v = judged(
        stale_release(2),
        Some(stale_release_record(ServiceWhat::Delete)),
    );
    assert!(
        only(&v, DeletedAnothersKey).is_empty(),
        "{:#?}",
        v.anomalies
    );
    // Without the record: not applicable, and the run judged as before.
    let v = judged(stale_release(1), None);
    assert_eq!(status(&v, DeletedAnothersKey), "not applicable");
    // A release answered `fail` deleted nothing.
    let mut refused = stale_release(1);
    let last = refused.len() - 1;
    refused[last] = fail(1, Release).lock("l").lease("v1").at_ms(2505);
    let v = judged(refused, Some(stale_release_record(ServiceWhat::Delete)));
    assert!(
        only(&v, DeletedAnothersKey).is_empty(),
        "{:#?}",
        v.anomalies
    );
}

#[test]
fn a_delete_on_one_of_several_servers_frees_nothing_by_itself() {
    // Redlock's masters each hold the lock: B's key deleted on one of three is no release of
    // another's lock.
    let mut record = redis_lines(
        &["redis-1", "redis-2", "redis-3"],
        &[
            (1, ServiceWhat::Put, "v1"),
            (2000, ServiceWhat::Expired, "v1"),
            (2099, ServiceWhat::Put, "v2"),
        ],
    );
    let mut e = ServiceEntry::new(2_502_000_000, ServiceWhat::Delete);
    e.node = Some("redis-1".into());
    e.key = Some("fencecheck:lock:l".into());
    record.push(e);
    let v = judged(stale_release(1), Some(record));
    assert!(
        only(&v, DeletedAnothersKey).is_empty(),
        "{:#?}",
        v.anomalies
    );
    assert_eq!(status(&v, DeletedAnothersKey), "not applicable");
}

#[test]
fn a_key_gone_before_its_grant_was_no_release_of_anothers() {
    // etcd's Mutex granted B at revision 9 after the service deleted B's key at revision 9 (its
    // lease expired while it waited): granted-gone's, though A's release was in flight.
    let mut events: Vec<Event> = grant(1, "/l/a@2", 0).into();
    events.extend([
        invoke(1, Release).lock("l").lease("/l/a@2").at_ms(100),
        invoke(2, Acquire).lock("l").at_ms(50),
        ok(2, Acquire)
            .lock("l")
            .lease("/l/b granted at revision 9 lease b")
            .at_ms(110),
        ok(1, Release).lock("l").lease("/l/a@2").at_ms(120),
    ]);
    let mut gone = change(ServiceWhat::Delete, "/l/b", "b", 3, 9);
    gone.time = 115_000_000;
    let record = vec![
        watching(2),
        change(ServiceWhat::Put, "/l/a", "a", 2, 2),
        change(ServiceWhat::Put, "/l/b", "b", 3, 3),
        gone,
    ];
    let v = judged(events, Some(record));
    assert!(
        only(&v, DeletedAnothersKey).is_empty(),
        "{:#?}",
        v.anomalies
    );
}

/// A holds `/l/a` (session s1) from 1 ms; the service expires s1 and deletes `/l/a` at 2,000 ms;
/// B's `/l/b` follows at 2,100 ms. A's library is asked at `asked_ms` and answers held.
fn belief_after_expiry(asked_ms: u64) -> (Vec<Event>, Vec<ServiceEntry>) {
    let mut events: Vec<Event> = grant(1, "/l/a", 0).into();
    events.extend([
        invoke(1, Check).lock("l").lease("/l/a").at_ms(asked_ms),
        ok(1, Check)
            .lock("l")
            .lease("/l/a")
            .held(true)
            .at_ms(asked_ms + 2),
    ]);
    let at = |ms: u64, what, key: &str, owner: &str, created| {
        let mut e = change(what, key, owner, created, 0);
        e.time = ms * 1_000_000;
        e.revision = None;
        e
    };
    let mut start = ServiceEntry::new(0, ServiceWhat::Watching);
    start.revision = None;
    let record = vec![
        start,
        at(1, ServiceWhat::Put, "/l/a", "s1", 2),
        at(2000, ServiceWhat::Delete, "/l/a", "s1", 2),
        at(2100, ServiceWhat::Put, "/l/b", "s2", 5),
    ];
    (events, record)
}

#[test]
fn a_client_that_answers_held_after_the_service_deleted_its_key_holds_against_the_service() {
    let (events, record) = belief_after_expiry(3000);
    let v = judged(events, Some(record));
    let found = only(&v, HeldAgainstService);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    let a = &found[0];
    assert!(!a.fails, "observed by default");
    assert_eq!(a.evidence.key.as_deref(), Some("/l/a"));
    assert_eq!(a.evidence.other["gone_seen_ns"], 2_000_000_000u64);
    assert_eq!(a.evidence.other["service_holder"]["key"], "/l/b");
}

#[test]
fn a_held_answer_while_the_key_stood_or_just_went_is_no_belief_against_the_service() {
    // The near misses: asked while the key stood, and asked just before its delete was seen.
    for asked in [1500, 1999] {
        let (events, record) = belief_after_expiry(asked);
        let v = judged(events, Some(record));
        assert!(
            only(&v, HeldAgainstService).is_empty(),
            "asked at {asked}: {:#?}",
            v.anomalies
        );
        assert_eq!(status(&v, HeldAgainstService), "checked");
    }
    let (events, _) = belief_after_expiry(3000);
    let v = judged(events, None);
    assert_eq!(status(&v, HeldAgainstService), "not applicable");
}

/// X (`/l/a`, token 10) is created at 10, Y (`/l/b`, token `y_token`) at 12; their acquires
/// overlap in the history, so only the service orders them.
fn two_created(y_token: u64) -> (Vec<Event>, Vec<ServiceEntry>) {
    let events = vec![
        invoke(1, Acquire).lock("l").at_ms(0),
        invoke(2, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").lease("/l/a").token(10).at_ms(20),
        ok(2, Acquire)
            .lock("l")
            .lease("/l/b")
            .token(y_token)
            .at_ms(21),
    ];
    let record = vec![
        watching(1),
        change(ServiceWhat::Put, "/l/a", "s1", 10, 10),
        change(ServiceWhat::Put, "/l/b", "s2", 12, 12),
    ];
    (events, record)
}

#[test]
fn a_grant_the_service_made_later_with_a_lower_token_is_out_of_order() {
    let (events, record) = two_created(5);
    let v = judged(events, Some(record));
    let found = only(&v, TokenOutOfOrder);
    assert_eq!(found.len(), 1, "{:#?}", v.anomalies);
    let a = &found[0];
    assert!(a.fails, "fails by default, as token-regression does");
    assert_eq!(a.evidence.token, Some(5));
    assert_eq!(a.evidence.other["earlier_token"], 10);
    assert_eq!(a.evidence.other["earlier_created"], 10);
    // The history alone cannot order them: no token-regression.
    assert!(only(&v, TokenRegression).is_empty(), "{:#?}", v.anomalies);
    // The near miss: the later creation with the higher token.
    let (events, record) = two_created(12);
    let v = judged(events, Some(record));
    assert!(only(&v, TokenOutOfOrder).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(status(&v, TokenOutOfOrder), "checked");
}

#[test]
fn on_redis_the_service_orders_a_key_put_after_the_last_one_went() {
    let grants = |y_token: u64| {
        vec![
            invoke(1, Acquire).lock("l").at_ms(0),
            ok(1, Acquire).lock("l").lease("v1").token(7).at_ms(2),
            invoke(2, Acquire).lock("l").at_ms(1),
            ok(2, Acquire)
                .lock("l")
                .lease("v2")
                .token(y_token)
                .at_ms(2200),
        ]
    };
    let record = redis_lines(
        &["redis-1"],
        &[
            (1, ServiceWhat::Put, "v1"),
            (2000, ServiceWhat::Expired, "v1"),
            (2199, ServiceWhat::Put, "v2"),
        ],
    );
    let v = judged(grants(3), Some(record.clone()));
    assert_eq!(only(&v, TokenOutOfOrder).len(), 1, "{:#?}", v.anomalies);
    let v = judged(grants(8), Some(record));
    assert!(only(&v, TokenOutOfOrder).is_empty(), "{:#?}", v.anomalies);
    // Without the record: not applicable.
    let v = judged(grants(3), None);
    assert_eq!(status(&v, TokenOutOfOrder), "not applicable");
    // A lease two grants share names neither apart: nothing is placed, nothing claimed.
    let shared: Vec<Event> = (grants(3).into_iter())
        .map(|e| match e.lease.as_deref() {
            Some(_) => e.lease("v1"),
            None => e,
        })
        .collect();
    let record = redis_lines(
        &["redis-1"],
        &[
            (1, ServiceWhat::Put, "v1"),
            (2000, ServiceWhat::Expired, "v1"),
            (2199, ServiceWhat::Put, "v1"),
        ],
    );
    let v = judged(shared, Some(record));
    assert!(only(&v, TokenOutOfOrder).is_empty(), "{:#?}", v.anomalies);
    assert_eq!(status(&v, TokenOutOfOrder), "not applicable");
}
