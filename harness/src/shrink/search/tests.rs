//! The specifications of the search, over a fake [`Tries`] whose runs show the kind exactly when
//! a rule about the test holds (and count what they were asked).

use super::*;
use crate::config::{validate, RawTest};
use crate::shrink::{Candidate, Tried, Tries};
use results::AnomalyKind::{self, StaleAcceptedWrite};

/// A memory test with four holder pauses over 30 s and five workers.
fn stored() -> Candidate {
    let timeline = nemesis::Schedule::from_yaml(
        "- at 2s start pause-holder for 4s\n- at 9s start pause-holder for 4s\n- at 16s start pause-holder for 4s\n- at 23s start pause-holder for 4s\n",
    )
    .unwrap();
    let raw = RawTest {
        name: Some("t".into()),
        provider: Some("memory".into()),
        workers: Some(5),
        time_limit: Some(results::Dur::secs(30)),
        nemesis_timeline: Some(timeline),
        seed: Some(7),
        ..RawTest::default()
    };
    Candidate::from_plan(validate(raw, 0).unwrap())
}

/// Shows the kind when `rule` holds of the test and the seed is not in `misses`.
struct Fake {
    rule: fn(&Candidate) -> bool,
    misses: Vec<u64>,
    asked: Vec<(String, u64)>,
}

impl Tries for Fake {
    fn run(&mut self, c: &Candidate) -> anyhow::Result<Tried> {
        self.asked.push((c.summary(), c.plan.seed));
        let shows = (self.rule)(c) && !self.misses.contains(&c.plan.seed);
        Ok(Tried {
            seed: c.plan.seed,
            kinds: if shows {
                vec![StaleAcceptedWrite]
            } else {
                vec![]
            },
            dir: None,
            exit: i32::from(shows),
            wall: std::time::Duration::from_secs(1),
        })
    }
}

fn budget() -> Budget {
    Budget {
        runs: 100,
        time: std::time::Duration::from_secs(3600),
        tries: 3,
        confirm: 5,
    }
}

fn shrink(fake: &mut Fake, budget: Budget) -> Shrunk {
    search(
        stored(),
        AnomalyKind::StaleAcceptedWrite,
        budget,
        fake,
        &mut |_| {},
    )
    .unwrap()
}

#[test]
fn keeps_the_one_fault_that_matters_and_the_fewest_workers_and_time_it_needs() {
    // The kind needs the pause at 9s and three workers.
    let mut fake = Fake {
        rule: |c| c.faults().steps.iter().any(|s| s.at.as_secs() == 9) && c.plan.workers >= 3,
        misses: vec![],
        asked: vec![],
    };
    let s = shrink(&mut fake, budget());
    assert!(s.reproduced());
    assert_eq!(
        s.best.faults().lines(),
        vec!["at 9s start pause-holder for 4s pick 1"]
    );
    assert_eq!(s.best.plan.workers, 3);
    // 30 s -> 15 s keeps the 9 s pause; 7.5 s would drop it.
    assert_eq!(s.best.plan.time_limit, results::Dur::secs(15));
    assert_eq!(s.rate(), (5, 5));
    assert_eq!(s.steps[0].change, "the stored test");
    assert!(s
        .steps
        .iter()
        .any(|x| x.change.starts_with("time limit 30s -> 15s") && x.kept));
    assert!(s
        .steps
        .iter()
        .any(|x| x.change == "workers 3 -> 2" && !x.kept));
    // Three tries for every step that was not kept, one for each kept one, five to confirm.
    let tried: usize = s.steps.iter().map(|x| x.tries.len()).sum();
    assert_eq!(s.runs, tried + 5);
    assert_eq!(fake.asked.len(), s.runs);
}

#[test]
fn a_candidate_is_kept_when_any_of_its_tries_shows_the_kind_and_the_stored_seed_goes_first() {
    let mut fake = Fake {
        rule: |_| true,
        misses: vec![7],
        asked: vec![],
    };
    let s = shrink(&mut fake, budget());
    assert_eq!(fake.asked[0].1, 7, "the stored seed first");
    assert_eq!(fake.asked[1].1, 8);
    assert!(s.steps[0].kept, "shown on the second try");
    assert_eq!(s.steps[0].tries.len(), 2);
    // Everything could go: no fault, two workers, the shortest time limit.
    assert!(s.best.faults().steps.is_empty());
    assert_eq!(s.best.plan.workers, 2);
    // The confirmation starts at the stored seed too: 1 miss in 5.
    assert_eq!(s.rate(), (4, 5));
}

#[test]
fn a_stored_test_that_never_shows_the_kind_is_not_shrunk() {
    let mut fake = Fake {
        rule: |_| false,
        misses: vec![],
        asked: vec![],
    };
    let s = shrink(&mut fake, budget());
    assert!(!s.reproduced());
    assert_eq!(s.runs, 3);
    assert!(s.confirm.is_empty());
    assert!(s.stopped.contains("did not show"), "{}", s.stopped);
}

#[test]
fn the_budget_of_runs_is_never_exceeded_and_keeps_the_confirmation() {
    let mut fake = Fake {
        rule: |c| c.plan.workers >= 4,
        misses: vec![],
        asked: vec![],
    };
    let small = Budget {
        runs: 9,
        ..budget()
    };
    let s = shrink(&mut fake, small);
    assert_eq!(s.runs, 9, "{:?}", fake.asked);
    assert_eq!(s.confirm.len(), 5);
    assert!(s.stopped.contains("budget"), "{}", s.stopped);
}

#[test]
fn a_shrunk_test_is_a_test_file_that_validates_again() {
    let c = stored().without_fault(0).unwrap().0;
    let text = c.to_yaml(&["made by a test".into()]).unwrap();
    assert!(text.starts_with("# made by a test\n"), "{text}");
    let raw: RawTest = serde_saphyr::from_str(&text).unwrap();
    let again = validate(raw, 0).unwrap();
    assert_eq!(again.faults.plan, c.plan.faults.plan);
    assert_eq!(again.workers, 5);
    assert_eq!(again.seed, 7);
}
