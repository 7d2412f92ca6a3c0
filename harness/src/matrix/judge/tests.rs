//! The specifications of `judge`.

use super::*;
use crate::matrix::outcome::KindSeen;

fn run(seed: u64, validity: Option<Validity>, kinds: &[(AnomalyKind, bool, u64)]) -> RunOutcome {
    let mut r = RunOutcome::failed(seed, None, String::new(), 1.0);
    r.error = validity
        .is_none()
        .then(|| "containers did not start".to_string());
    r.validity = validity;
    for &(kind, fails, t) in kinds {
        r.kinds.insert(
            kind,
            KindSeen {
                count: 1,
                fails,
                first_ns: Some(t),
            },
        );
    }
    r
}

const STALE: AnomalyKind = AnomalyKind::StaleAcceptedWrite;
const HOLDERS: AnomalyKind = AnomalyKind::ConcurrentHolders;
const INVALID: Option<Validity> = Some(Validity::Invalid);
const VALID: Option<Validity> = Some(Validity::Valid);

fn unsafe_stale() -> Expectation {
    Expectation::Unsafe {
        kind: STALE,
        min_rate: 0.9,
    }
}

#[test]
fn a_safe_cell_fails_on_one_failing_anomaly_even_beside_a_harness_error() {
    let c = summarise(
        "c",
        &Expectation::Safe,
        vec![
            run(1, VALID, &[(HOLDERS, false, 5)]),
            run(2, INVALID, &[(STALE, true, 7)]),
            run(3, None, &[]),
        ],
    );
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.reason.contains("seed 2: stale-accepted-write"),
        "{}",
        c.reason
    );
    assert_eq!((c.hits, c.decided, c.errors), (1, 2, 1));
    assert_eq!(exit_code(&[c]), 1);
}

#[test]
fn an_unsafe_cell_needs_its_kind_on_min_rate_of_the_decided_seeds() {
    let c = summarise(
        "c",
        &unsafe_stale(),
        vec![
            run(1, INVALID, &[(STALE, true, 4_000)]),
            run(2, INVALID, &[(STALE, true, 2_000)]),
            run(3, VALID, &[]),
        ],
    );
    assert_eq!(c.status, Status::Fail);
    assert_eq!(c.rate_text(), "2/3 (67%)");
    assert_eq!(c.median_first_ns, Some(3_000));
    let ok = summarise(
        "c",
        &unsafe_stale(),
        vec![
            run(1, INVALID, &[(STALE, true, 4_000)]),
            run(2, INVALID, &[(STALE, true, 2_000)]),
            run(3, INVALID, &[(STALE, true, 9_000)]),
        ],
    );
    assert_eq!((ok.status, ok.median_first_ns), (Status::Pass, Some(4_000)));
    assert_eq!(exit_code(&[ok]), 0);
}

#[test]
fn errors_and_unknowns_are_not_passes() {
    let c = summarise(
        "c",
        &unsafe_stale(),
        vec![run(1, INVALID, &[(STALE, true, 1)]), run(2, None, &[])],
    );
    assert_eq!((c.status, c.hits, c.decided), (Status::Error, 1, 1));
    assert_eq!(exit_code(&[c]), 3);
    let u = summarise(
        "c",
        &Expectation::Safe,
        vec![run(1, VALID, &[]), run(2, Some(Validity::Unknown), &[])],
    );
    assert_eq!(u.status, Status::Unknown);
    assert_eq!(exit_code(&[u]), 2);
}

#[test]
fn safe_showing_counts_a_non_failing_kind_and_observe_is_never_judged() {
    let c = summarise(
        "c",
        &Expectation::SafeShowing {
            kind: HOLDERS,
            min_rate: 0.9,
        },
        vec![
            run(1, VALID, &[(HOLDERS, false, 3)]),
            run(2, VALID, &[(HOLDERS, false, 5)]),
        ],
    );
    assert_eq!(
        (c.status, c.hits, c.median_first_ns),
        (Status::Pass, 2, Some(4))
    );
    let o = summarise(
        "o",
        &Expectation::Observe,
        vec![run(1, INVALID, &[(STALE, true, 1)])],
    );
    assert_eq!((o.status, o.hits), (Status::Observed, 1));
    assert_eq!(exit_code(&[o]), 0);
}

#[test]
fn an_expected_kind_no_checker_could_apply_fails_and_says_why() {
    let mut r = run(1, VALID, &[(HOLDERS, false, 3)]);
    r.not_applicable
        .insert(STALE, "the writes carry no fence token".into());
    let c = summarise("c", &unsafe_stale(), vec![r]);
    assert_eq!((c.status, c.rate_text()), (Status::Fail, "n/a".to_string()));
    assert!(c
        .reason
        .contains("not applicable on any seed: the writes carry no fence token"));
}

#[test]
fn an_unknown_cell_passes_only_while_every_seed_stays_undecided() {
    const UNKNOWN: Option<Validity> = Some(Validity::Unknown);
    let ok = summarise(
        "c",
        &Expectation::Unknown,
        vec![
            run(1, UNKNOWN, &[]),
            run(2, UNKNOWN, &[(HOLDERS, false, 3)]),
        ],
    );
    assert_eq!(ok.status, Status::Pass, "{}", ok.reason);
    assert_eq!(exit_code(&[ok]), 0);
    // The library got fixed: a valid seed means the expectation is out of date.
    let fixed = summarise(
        "c",
        &Expectation::Unknown,
        vec![run(1, UNKNOWN, &[]), run(2, VALID, &[])],
    );
    assert_eq!(fixed.status, Status::Fail);
    assert!(
        fixed.reason.contains("seed 2 came out valid"),
        "{}",
        fixed.reason
    );
    let harmed = summarise(
        "c",
        &Expectation::Unknown,
        vec![run(1, UNKNOWN, &[(STALE, true, 4)])],
    );
    assert_eq!(harmed.status, Status::Fail);
    assert!(
        harmed
            .reason
            .contains("expected unknown, found failing anomalies"),
        "{}",
        harmed.reason
    );
}
