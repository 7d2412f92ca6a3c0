//! The specifications of `engine`.

use super::*;
use crate::testkit::*;
use results::OpType;

#[test]
fn every_event_shape_has_its_own_route() {
    for r in 0..ROUTES {
        assert_eq!(route(route_bits(r)), r);
        // Four types per operation, `info` the last of them; a check's `info` retires nobody,
        // so "any info" leaves it out.
        let bits = route_bits(r);
        let retiring_info = r % 4 == 3 && !bits.meets(Interests::CHECK);
        assert_eq!(bits.meets(Interests::ANY_INFO), retiring_info, "route {r}");
        assert_eq!(bits.meets(Interests::RELEASE), r / 4 == 2, "route {r}");
        let acquire_ok = Interests::ACQUIRE.only(OpType::Ok);
        assert_eq!(bits.meets(acquire_ok), r == 1, "route {r}");
    }
    let h = history([
        invoke(1, Acquire).lock("l"),
        info(1, Write).key("k"),
        ok(2, Release).lock("l"),
    ]);
    let routes: Vec<usize> = h
        .iter()
        .map(|e| route(Interests::of(&e.as_ref())))
        .collect();
    assert_eq!(routes, vec![0, 7, 9]);
}

#[test]
fn a_broken_shared_state_stops_only_the_checkers_that_read_it() {
    let h = history([
        invoke(1, Acquire).lock("l"),
        ok(1, Acquire).lock("l").token(1),
        invoke(1, Increment).key("c"),
        ok(1, Increment).key("c"),
        invoke(2, Increment).key("c"),
        ok(2, Increment).key("c"),
        // Two increments acknowledged, then a read of 1: an update was lost.
        invoke(1, Read).key("c"),
        ok(1, Read).key("c").int(1),
    ]);
    let cfg = CheckConfig::default();
    let mut engine = Engine::new(&cfg);
    engine.break_shared_at = Some(1);
    for e in &h {
        engine.event(&e.as_ref());
    }
    engine.resource_log_missing("resource.jsonl: missing".into());
    let v = engine.finish();
    let status = |k: AnomalyKind| v.stats[k.as_str()]["status"].clone();
    assert_eq!(status(AnomalyKind::TokenRegression), "unknown");
    assert_eq!(status(AnomalyKind::ConcurrentHolders), "unknown");
    assert!(v
        .unknown_reasons
        .iter()
        .any(|r| r.contains("the shared hold book panicked at history index 1: planted failure")));
    // lost-update reads no shared state: it still finds the lost increment.
    assert_eq!(status(AnomalyKind::LostUpdate), "checked");
    assert!(v
        .anomalies
        .iter()
        .any(|a| a.kind == AnomalyKind::LostUpdate));
    assert_eq!(v.valid, Validity::Invalid);
}
