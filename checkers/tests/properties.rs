//! Properties: random serial histories (many workers, tokens from a counter) are valid; planting
//! exactly one defect of a kind makes exactly that kind appear.

use checkers::synth::{generate, Shape, LOCKED_OUT_HOLDS};
use checkers::{check, CheckConfig};
use proptest::prelude::*;
use results::{AnomalyKind, Validity};
use std::collections::BTreeSet;
use std::time::Duration;

fn cfg() -> CheckConfig {
    CheckConfig {
        ttl: Some(Duration::from_secs(1)),
        recovery_slack: Duration::from_secs(1),
        ..CheckConfig::default()
    }
}

fn shapes() -> impl Strategy<Value = Shape> {
    (
        1u32..8,
        2usize..60,
        0u32..3,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(workers, holds, writes_per_hold, tokens, counter, contended, all_wait)| Shape {
                workers,
                holds,
                writes_per_hold,
                tokens,
                counter,
                contended,
                all_wait,
            },
        )
}

/// Whether a defect of `kind` can be planted in (and expressed by) a history of this shape.
fn plantable(kind: AnomalyKind, s: &Shape) -> bool {
    use AnomalyKind::*;
    match kind {
        // Without tokens, grant order judges: the newer holder's acquire must be invoked after
        // the older's grant, which every worker blocked in acquire from the start is not.
        StaleAcceptedWrite => s.writes_per_hold > 0 && (s.tokens || !s.all_wait),
        DuplicateToken | TokenRegression => s.tokens,
        DuplicateEffect => s.writes_per_hold > 0,
        LostUpdate => s.counter,
        DoubleRelease | ReleaseOfLostLock | ConcurrentHolders | StuckLock => s.workers > 1,
        // Grant order or a higher token shows the loss: without tokens the next holder's
        // acquire must be invoked after the older's grant, which every worker blocked in
        // acquire from the start is not.
        HeldAfterLoss => s.workers > 1 && (s.tokens || !s.all_wait),
        // Two others take turns while it fails through the history's last holds.
        LockedOutClient => s.workers >= 3 && s.holds >= LOCKED_OUT_HOLDS,
        // Judged against the service's record, which a history alone does not carry.
        GrantedGone => false,
        PhantomHolder | DeletedAnothersKey | HeldAgainstService | TokenOutOfOrder => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_serial_histories_are_valid(seed in any::<u64>(), shape in shapes()) {
        let s = generate(seed, &shape, None);
        let v = check(&s.history, Some(&s.resource), &cfg());
        prop_assert!(v.anomalies.is_empty(), "{:#?}", v.anomalies);
        prop_assert_eq!(v.valid, Validity::Valid);
    }

    #[test]
    fn one_planted_defect_shows_exactly_its_kind(
        seed in any::<u64>(),
        shape in shapes(),
        which in 0..AnomalyKind::ALL.len(),
    ) {
        let kind = AnomalyKind::ALL[which];
        prop_assume!(plantable(kind, &shape));
        let s = generate(seed, &shape, Some(kind));
        prop_assume!(s.planted.is_some());
        let v = check(&s.history, Some(&s.resource), &cfg());
        let found: BTreeSet<_> = v.anomalies.iter().map(|a| a.kind).collect();
        prop_assert_eq!(found, BTreeSet::from([kind]), "{:#?}", v.anomalies);
        let expected = if kind.observed_by_default() {
            Validity::Valid
        } else {
            Validity::Invalid
        };
        prop_assert_eq!(v.valid, expected);
        for a in &v.anomalies {
            prop_assert!(!a.diagnosis.observation.is_empty() && !a.summary.is_empty());
            prop_assert!(!a.evidence.indices.is_empty() || !a.evidence.seqs.is_empty());
        }
    }

    #[test]
    fn the_streamed_jsonl_path_agrees_with_the_in_memory_path(seed in any::<u64>(), shape in shapes(), which in 0..=AnomalyKind::ALL.len()) {
        let defect = AnomalyKind::ALL.get(which).copied().filter(|k| plantable(*k, &shape));
        let s = generate(seed, &shape, defect);
        let lines: Vec<String> = s.history.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        let res_lines: Vec<String> = s.resource.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
        let mut engine = checkers::Engine::new(&cfg());
        for l in &lines {
            engine.event(&results::EventRef::parse(l).unwrap());
        }
        for l in &res_lines {
            engine.resource(&results::ResourceRef::parse(l).unwrap());
        }
        let streamed = engine.finish();
        let direct = check(&s.history, Some(&s.resource), &cfg());
        prop_assert_eq!(streamed, direct);
    }
}
