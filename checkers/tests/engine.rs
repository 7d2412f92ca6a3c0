//! Specifications of the composition: Invalid > Unknown > Valid, a panicking checker makes the
//! verdict unknown (never a crash), an empty history or a missing resource log is unknown.

mod common;
use checkers::testkit::*;
use checkers::{check, CheckConfig, Checker, Context, End, Engine, Findings, Outcome};
use common::*;
use results::{AnomalyKind, EventRef, Validity, WriteResult};

struct Panics;
impl Checker for Panics {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::LostUpdate
    }
    fn event(&mut self, e: &EventRef<'_>, _cx: &Context<'_>, _out: &mut Findings) {
        if e.index == 1 {
            panic!("boom at {}", e.index);
        }
    }
    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        Outcome::Checked
    }
}

fn run_with(checkers: Vec<Box<dyn Checker>>, events: &[results::Event]) -> results::Verdict {
    let cfg = CheckConfig::default();
    let mut engine = Engine::with_checkers(&cfg, checkers);
    for e in events {
        engine.event(&e.as_ref());
    }
    engine.finish()
}

#[test]
fn a_panicking_checker_makes_the_verdict_unknown_with_its_message() {
    let h = history([invoke(1, Read).key("c"), ok(1, Read).key("c").int(0)]);
    let v = run_with(vec![Box::new(Panics)], &h);
    assert_eq!(v.valid, Validity::Unknown);
    assert!(
        v.unknown_reasons[0].contains("lost-update checker panicked at history index 1: boom at 1")
    );
    assert_eq!(v.stats["lost-update"]["status"], "unknown");
}

#[test]
fn invalid_wins_over_a_panicking_checker() {
    let h = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1").token(1),
        invoke(1, Release).lock("l").lease("L1").token(1),
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(1)
            .result(Released),
        invoke(1, Release).lock("l").lease("L1").token(1),
        ok(1, Release)
            .lock("l")
            .lease("L1")
            .token(1)
            .result(Released),
    ]);
    let v = run_with(
        vec![
            Box::new(Panics),
            Box::new(checkers::kinds::DoubleRelease::default()),
        ],
        &h,
    );
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(v.unknown_reasons.len(), 1);
}

/// Records the index of every event it is given; panics at `panic_at` when set.
struct Sees {
    seen: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
    panic_at: Option<u64>,
}
impl Checker for Sees {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::LostUpdate
    }
    fn event(&mut self, e: &EventRef<'_>, _cx: &Context<'_>, _out: &mut Findings) {
        self.seen.borrow_mut().push(e.index);
        assert!(self.panic_at != Some(e.index), "planted at {}", e.index);
    }
    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        Outcome::Checked
    }
}

#[test]
fn a_checker_that_panics_mid_event_is_not_called_again_and_the_rest_see_every_event() {
    let h = history([
        invoke(1, Read).key("c"),
        ok(1, Read).key("c").int(0),
        invoke(2, Read).key("c"),
        ok(2, Read).key("c").int(0),
    ]);
    let logs: Vec<_> = (0..3).map(|_| std::rc::Rc::default()).collect();
    let sees = |i: usize, panic_at| {
        Box::new(Sees {
            seen: std::rc::Rc::clone(&logs[i]),
            panic_at,
        }) as Box<dyn Checker>
    };
    // The middle one of three panics at index 1: the one after it still sees index 1.
    let v = run_with(vec![sees(0, None), sees(1, Some(1)), sees(2, None)], &h);
    let seen = |i: usize| logs[i].borrow().clone();
    assert_eq!(seen(0), vec![0, 1, 2, 3]);
    assert_eq!(seen(1), vec![0, 1]);
    assert_eq!(seen(2), vec![0, 1, 2, 3]);
    assert_eq!(v.valid, Validity::Unknown);
    assert_eq!(v.unknown_reasons.len(), 1, "{:?}", v.unknown_reasons);
    assert!(v.unknown_reasons[0].contains("panicked at history index 1: planted at 1"));
}

#[test]
fn an_empty_history_is_unknown() {
    let v = verdict(&[], &[]);
    assert_eq!(v.valid, Validity::Unknown);
    assert!(v.unknown_reasons[0].contains("empty"));
}

#[test]
fn a_missing_resource_log_with_writes_is_unknown() {
    let h = history([
        invoke(1, Write).key("k").token(1),
        ok(1, Write).key("k").token(1).result(Accepted),
    ]);
    let v = check(&h, None, &CheckConfig::default());
    assert_eq!(v.valid, Validity::Unknown);
    assert!(v
        .unknown_reasons
        .iter()
        .any(|r| r.contains("resource.jsonl")));
    assert_eq!(status(&v, AnomalyKind::StaleAcceptedWrite), "unknown");
}

#[test]
fn a_missing_resource_log_without_writes_is_not_applicable() {
    let h = history([invoke(1, Read).key("c"), ok(1, Read).key("c").int(0)]);
    let v = check(&h, None, &CheckConfig::default());
    assert_eq!(v.valid, Validity::Valid);
    assert_eq!(status(&v, AnomalyKind::DuplicateEffect), "not applicable");
}

#[test]
fn evidence_is_capped_per_kind_but_every_anomaly_is_counted() {
    let events: Vec<_> = (0..150u32)
        .flat_map(|p| {
            [
                invoke(p, Acquire).lock("l"),
                ok(p, Acquire)
                    .lock("l")
                    .lease(&format!("L{p}"))
                    .token(u64::from(p) + 1),
            ]
        })
        .collect();
    let v = verdict(&history(events), &[]);
    assert_eq!(only(&v, AnomalyKind::ConcurrentHolders).len(), 100);
    let total = v.stats["concurrent-holders"]["count"].as_u64().unwrap();
    assert_eq!(total, (0..150u64).sum::<u64>());
    assert_eq!(v.stats["concurrent-holders"]["reported"], 100);
}

#[test]
fn the_verdict_serializes_in_the_design_format() {
    let v = verdict(&[], &[]);
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["valid"], "unknown");
    assert!(json["stats"]["stuck-lock"]["status"].is_string());
}

/// The standard engine calls the lock checkers directly and the rest through their vtables;
/// the same checkers all behind vtables (`all_checkers`) must judge every history the same.
#[test]
fn direct_and_vtable_calls_to_the_standard_checkers_give_the_same_verdict() {
    use checkers::synth::{generate, Shape};
    let cfg = CheckConfig {
        ttl: Some(std::time::Duration::from_secs(1)),
        recovery_slack: std::time::Duration::from_secs(1),
        ..CheckConfig::default()
    };
    let mut defects: Vec<Option<AnomalyKind>> =
        AnomalyKind::ALL.iter().copied().map(Some).collect();
    defects.push(None);
    let mut kinds = std::collections::BTreeSet::new();
    for (seed, defect) in defects.into_iter().enumerate() {
        for all_wait in [false, true] {
            let shape = Shape {
                holds: 60,
                all_wait,
                ..Shape::default()
            };
            let s = generate(seed as u64, &shape, defect);
            let judge = |mut engine: Engine| {
                for e in &s.history {
                    engine.event(&e.as_ref());
                }
                for r in &s.resource {
                    engine.resource(&r.as_ref());
                }
                serde_json::to_value(engine.finish()).expect("a verdict serializes")
            };
            let direct = judge(Engine::new(&cfg));
            let boxed = judge(Engine::with_checkers(&cfg, checkers::all_checkers(&cfg)));
            assert_eq!(direct, boxed, "defect {defect:?}, all_wait {all_wait}");
            for a in direct["anomalies"].as_array().expect("a list") {
                kinds.insert(a["kind"].as_str().expect("a kind").to_string());
            }
        }
    }
    // The verdicts compared hold findings of every kind a history alone can show (granted-gone
    // phantom-holder, deleted-anothers-key, held-against-service and token-out-of-order need the
    // service's record), not just "valid" twice.
    assert_eq!(
        kinds.len(),
        AnomalyKind::ALL.len() - 5,
        "kinds found: {kinds:?}"
    );
}

/// The standard set covers the sixteen kinds of docs/design.md, "Anomaly kinds", once each, in the
/// order the verdict lists them (the order of `AnomalyKind::ALL`); a paired kind comes right after
/// its checker's.
#[test]
fn the_standard_checkers_are_the_kinds_in_report_order() {
    let cfg = CheckConfig::default();
    let kinds: Vec<AnomalyKind> = checkers::all_checkers(&cfg)
        .iter()
        .flat_map(|c| std::iter::once(c.kind()).chain(c.paired_kind()))
        .collect();
    assert_eq!(kinds, AnomalyKind::ALL.to_vec());
    let v = check(&history([invoke(1, Acquire).lock("l")]), Some(&[]), &cfg);
    let listed: Vec<&str> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
    let in_stats: Vec<&str> = v
        .stats
        .keys()
        .map(String::as_str)
        .filter(|k| listed.contains(k))
        .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(in_stats, sorted, "every kind has its status in the stats");
}

/// A run that attempted acquires and got none, or attempted writes the
/// resource never decided, exercised nothing; it is unknown with that reason, never valid.
#[test]
fn a_run_that_exercised_nothing_is_unknown_with_the_reason() {
    let cfg = CheckConfig::default();
    let refused = history([
        invoke(1, Acquire).lock("l"),
        fail(1, Acquire).lock("l"),
        invoke(2, Acquire).lock("l"),
        fail(2, Acquire).lock("l"),
    ]);
    let v = check(&refused, Some(&[]), &cfg);
    assert_eq!(v.valid, Validity::Unknown);
    assert!(v.anomalies.is_empty());
    assert_eq!(
        v.unknown_reasons,
        vec!["2 acquires were attempted and none succeeded: the run exercised no hold"]
    );
    let undecided = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1"),
        invoke(1, Write).key("k").op_id("1-0"),
        fail(1, Write).key("k").op_id("1-0"),
    ]);
    let v = check(&undecided, Some(&[]), &cfg);
    assert_eq!(v.valid, Validity::Unknown);
    assert!(
        v.unknown_reasons[0].starts_with("1 writes were attempted and the resource decided none"),
        "{:?}",
        v.unknown_reasons
    );
    // One decided write, one granted acquire: the run exercised both.
    let decided = log([res("k", None, "L1", WriteResult::RejectedStaleFence)]);
    assert_eq!(
        check(&undecided, Some(&decided), &cfg).valid,
        Validity::Valid
    );
}

/// A run whose every planned fault found nothing to strike tested none of the faults it asked
/// for: unknown, with the count. One fault that landed is enough to judge the run.
#[test]
fn a_run_none_of_whose_planned_faults_landed_is_unknown() {
    let cfg = CheckConfig::default();
    let run = |starts: Vec<results::Event>| {
        let mut events = vec![
            invoke(1, Acquire).lock("l"),
            ok(1, Acquire).lock("l").lease("L1"),
        ];
        events.extend(starts);
        events.extend([invoke(1, Release).lock("l"), ok(1, Release).lock("l")]);
        check(&history(events), Some(&[]), &cfg)
    };
    let skipped = run(vec![
        start("pause-releasing").error("skipped: no release in flight"),
        start("pause-releasing").error("skipped: no release in flight"),
    ]);
    assert_eq!(skipped.valid, Validity::Unknown);
    assert!(
        skipped.unknown_reasons[0].starts_with("none of the 2 planned faults landed"),
        "{:?}",
        skipped.unknown_reasons
    );
    assert_eq!(skipped.stats["faults"]["landed"], 0);
    let one_landed = run(vec![
        start("pause-releasing").error("skipped: no release in flight"),
        start("pause-holder"),
        stop("pause-holder"),
    ]);
    assert_eq!(
        one_landed.valid,
        Validity::Valid,
        "{:?}",
        one_landed.unknown_reasons
    );
    assert_eq!(one_landed.stats["faults"]["planned"], 2);
    let per_fault = &one_landed.stats["faults"]["by_fault"];
    assert_eq!(per_fault["pause-releasing"]["landed"], 0);
    assert_eq!(per_fault["pause-holder"]["landed"], 1);
    // A cut that no reply spent struck nothing: its stop says so, and it did not land.
    let unspent = run(vec![
        start("cut-renew-reply"),
        stop("cut-renew-reply").error(&format!(
            "{}; stopped by the final heal",
            results::fault::CUT_UNSPENT
        )),
    ]);
    assert_eq!(unspent.valid, Validity::Unknown, "{:?}", unspent.stats);
    assert_eq!(
        unspent.stats["faults"]["by_fault"]["cut-renew-reply"]["landed"],
        0
    );
    let spent = run(vec![start("cut-renew-reply"), stop("cut-renew-reply")]);
    assert_eq!(spent.stats["faults"]["landed"], 1);
    // A holder freeze that reached a worker which had let go struck nothing; aimed again, it
    // was no planned start of its own.
    let aimed_again = run(vec![
        start("pause-holder"),
        stop("pause-holder").error(&format!("{} (worker-1)", results::fault::AIMED_AGAIN)),
        start("pause-holder"),
        stop("pause-holder"),
    ]);
    assert_eq!(aimed_again.stats["faults"]["planned"], 1);
    assert_eq!(aimed_again.stats["faults"]["landed"], 1);
    let gave_up = run(vec![
        start("pause-holder"),
        stop("pause-holder").error(&format!("{} (worker-1)", results::fault::HOLDER_MISSED)),
    ]);
    assert_eq!(gave_up.stats["faults"]["planned"], 1);
    assert_eq!(gave_up.valid, Validity::Unknown, "{:?}", gave_up.stats);
    // A node that died outside the plan is not a planned fault.
    let unplanned = run(vec![start("node-died"), stop("node-died")]);
    assert!(!unplanned.stats.contains_key("faults"));
}

/// Two holds overlap from the moment the second holder acquired, not from
/// the first hold's start.
#[test]
fn an_anomaly_is_dated_when_it_became_true() {
    let h = history([
        invoke(1, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").lease("L1").token(1).at_ms(2),
        invoke(2, Acquire).lock("l").at_ms(3000),
        ok(2, Acquire).lock("l").lease("L2").token(2).at_ms(3100),
    ]);
    let v = check(&h, Some(&[]), &CheckConfig::default());
    let ch = &v.anomalies[0];
    assert_eq!(ch.kind, AnomalyKind::ConcurrentHolders);
    assert_eq!(ch.evidence.times, vec![2_000_000, 3_100_000_000]);
    assert_eq!(ch.at, Some(3_100_000_000));
    assert_eq!(ch.when(), Some(3_100_000_000));
}

/// A run without the service's record, said before the history, spares the kinds that need
/// the record every event and judges exactly as when it is said after.
#[test]
fn a_record_said_missing_before_the_history_changes_no_verdict() {
    let cfg = CheckConfig::default();
    let events = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").lease("L1").token(1),
        invoke(2, Acquire).lock("l"),
        info(2, Acquire).lock("l"),
        invoke(1, Release).lock("l").lease("L1"),
        ok(1, Release).lock("l").lease("L1"),
        invoke(3, Acquire).lock("l"),
        ok(3, Acquire).lock("l").lease("L3").token(2),
    ]);
    let judge = |before: bool| {
        let mut engine = Engine::new(&cfg);
        if before {
            engine.service_log_missing("no service.jsonl".into());
        }
        for e in &events {
            engine.event(&e.as_ref());
        }
        if !before {
            engine.service_log_missing("no service.jsonl".into());
        }
        serde_json::to_value(engine.finish()).expect("a verdict serializes")
    };
    let (before, after) = (judge(true), judge(false));
    assert_eq!(before, after);
    assert_eq!(
        before["stats"]["phantom-holder"]["status"],
        "not applicable"
    );
}
