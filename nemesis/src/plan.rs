//! A fault plan: the exact list of faults a run will inject, when, and for how long. It is
//! built either by the seeded generator below or from an explicit timeline, and it serializes as
//! the very timeline lines that would rebuild it (`at 5s start pause-worker for 4s pick 17`), so
//! the plan a run prints into `test.yaml` can be pasted back to replay the same faults.

use crate::fault::FaultKind;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// One fault of a plan. `at` is measured from the start of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub at: Duration,
    pub fault: FaultKind,
    pub duration: Duration,
    /// A random draw fixed at plan time; the executor uses it to choose among the candidates
    /// that exist at fault time (a worker, a node, a side of a split), so one seed gives one run.
    pub pick: u64,
}

impl Step {
    pub fn end(&self) -> Duration {
        self.at + self.duration
    }
}

/// A duration as one timeline word, in the one grammar of durations (`results::Dur`): `5s`, or
/// `5878ms` when it is not whole seconds.
pub fn format_duration(d: Duration) -> String {
    results::Dur(d).to_string()
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at {} start {} for {} pick {}",
            format_duration(self.at),
            self.fault,
            format_duration(self.duration),
            self.pick
        )
    }
}

/// A step as written, before defaults and validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawStep {
    pub at: Duration,
    pub fault: String,
    pub duration: Option<Duration>,
    pub pick: Option<u64>,
}

/// What is wrong with one timeline line (the caller adds the line number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("{0}; write e.g. \"at 5s start pause-holder for 6s\"")]
    Syntax(String),
    #[error("negative duration {0:?}: times and durations must be >= 0")]
    Negative(String),
}

fn duration(word: Option<&str>, what: &str) -> Result<Duration, LineError> {
    let word = word.ok_or_else(|| LineError::Syntax(format!("missing {what}")))?;
    if word.starts_with('-') {
        return Err(LineError::Negative(word.to_string()));
    }
    results::Dur::parse(word)
        .map(results::Dur::get)
        .map_err(|e| LineError::Syntax(format!("bad {what}: {e}")))
}

impl RawStep {
    /// Parses `at <time> [start] <fault> [for <duration>] [pick <n>]`.
    pub fn parse(line: &str) -> Result<Self, LineError> {
        let mut words = line.split_whitespace().peekable();
        if words.next() != Some("at") {
            return Err(LineError::Syntax("a step starts with \"at\"".into()));
        }
        let at = duration(words.next(), "time after \"at\"")?;
        if words.peek() == Some(&"start") {
            words.next();
        }
        let fault = words
            .next()
            .ok_or_else(|| LineError::Syntax("missing fault name".into()))?
            .to_string();
        let mut step = RawStep {
            at,
            fault,
            duration: None,
            pick: None,
        };
        while let Some(word) = words.next() {
            match word {
                "for" => step.duration = Some(duration(words.next(), "duration after \"for\"")?),
                "pick" => {
                    let n = words.next().unwrap_or("");
                    step.pick = Some(n.parse().map_err(|_| {
                        LineError::Syntax(format!("bad pick {n:?}: expected an integer >= 0"))
                    })?);
                }
                other => {
                    return Err(LineError::Syntax(format!(
                        "unexpected {other:?} (expected \"for <duration>\" or \"pick <n>\")"
                    )))
                }
            }
        }
        Ok(step)
    }
}

/// The faults of one run, in start order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub steps: Vec<Step>,
}

impl Plan {
    /// The time by which every fault has stopped.
    pub fn end(&self) -> Duration {
        self.steps.iter().map(Step::end).max().unwrap_or_default()
    }

    /// The plan as timeline lines (what `test.yaml` shows).
    pub fn lines(&self) -> Vec<String> {
        self.steps.iter().map(Step::to_string).collect()
    }
}

impl Serialize for Plan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.lines().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Plan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let lines = Vec::<String>::deserialize(d)?;
        let mut steps = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            let raw = RawStep::parse(line)
                .map_err(|e| D::Error::custom(format!("step {}: {e}", i + 1)))?;
            let fault = raw.fault.parse::<FaultKind>().map_err(D::Error::custom)?;
            steps.push(Step {
                at: raw.at,
                fault,
                duration: raw.duration.ok_or_else(|| {
                    D::Error::custom(format!("step {}: a plan line needs \"for\"", i + 1))
                })?,
                pick: raw.pick.unwrap_or(0),
            });
        }
        Ok(Plan { steps })
    }
}

/// What the seeded generator draws from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    /// The faults to choose from (uniformly).
    pub faults: Vec<FaultKind>,
    /// Quiet time before the first fault and between two faults.
    pub interval: Duration,
    /// Each fault lasts a uniform draw in `[min, max]`; `None` means the fault's default.
    pub durations: Option<(Duration, Duration)>,
    /// The lock ttl (defaults are multiples of it).
    pub ttl: Duration,
    /// No fault runs past this point of the workload.
    pub time_limit: Duration,
}

impl Generator {
    /// The plan for `seed`: quiet interval, fault, quiet interval, fault ... until the time
    /// limit. Faults never overlap, so generated plans never hold two partitions at once.
    pub fn plan(&self, seed: u64) -> Plan {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut steps = Vec::new();
        let mut t = self.interval;
        if self.faults.is_empty() {
            return Plan { steps };
        }
        loop {
            let fault = self.faults[rng.random_range(0..self.faults.len())];
            let duration = match self.durations {
                Some((lo, hi)) if hi > lo => Duration::from_millis(
                    rng.random_range(lo.as_millis() as u64..=hi.as_millis() as u64),
                ),
                Some((lo, _)) => lo,
                // Only a fault whose length is drawn draws (the plans of the others stay as
                // they were for every seed).
                None => match fault.length_range(self.ttl) {
                    (lo, hi) if hi > lo => fault.drawn_length(self.ttl, rng.random()),
                    (lo, _) => lo,
                },
            };
            let pick = rng.random::<u64>() % 1_000_000;
            if t + duration > self.time_limit {
                break;
            }
            steps.push(Step {
                at: t,
                fault,
                duration,
                pick,
            });
            t += duration + self.interval;
        }
        Plan { steps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generator() -> Generator {
        Generator {
            faults: vec![
                FaultKind::PauseHolder,
                FaultKind::Halves,
                FaultKind::KillNode,
            ],
            interval: Duration::from_secs(3),
            durations: Some((Duration::from_secs(2), Duration::from_secs(8))),
            ttl: Duration::from_secs(2),
            time_limit: Duration::from_secs(60),
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_plan_and_another_seed_another() {
        let g = generator();
        assert_eq!(g.plan(42), g.plan(42));
        assert_ne!(g.plan(42), g.plan(43));
        assert!(!g.plan(42).steps.is_empty());
    }

    #[test]
    fn generated_faults_stay_inside_the_time_limit_and_do_not_overlap() {
        let plan = generator().plan(7);
        assert!(plan.end() <= Duration::from_secs(60));
        for w in plan.steps.windows(2) {
            assert!(w[0].end() + Duration::from_secs(3) <= w[1].at);
        }
    }

    #[test]
    fn a_plan_serializes_as_timeline_lines_that_rebuild_it() {
        let plan = generator().plan(42);
        let json = serde_json::to_string(&plan).unwrap();
        assert!(json.starts_with("[\"at 3s start "), "{json}");
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, plan);
    }

    #[test]
    fn lines_parse_with_optional_start_for_and_pick() {
        let s = RawStep::parse("at 15s halves for 10s").unwrap();
        assert_eq!(s.at, Duration::from_secs(15));
        assert_eq!(s.fault, "halves");
        assert_eq!(s.duration, Some(Duration::from_secs(10)));
        let s = RawStep::parse("at 500ms start pause-holder").unwrap();
        assert_eq!(
            (s.at, s.duration, s.pick),
            (Duration::from_millis(500), None, None)
        );
        assert!(matches!(
            RawStep::parse("at 5s start pause-holder for -2s"),
            Err(LineError::Negative(_))
        ));
        assert!(matches!(
            RawStep::parse("in 5s halves"),
            Err(LineError::Syntax(_))
        ));
        assert!(matches!(
            RawStep::parse("at 5s halves during 3s"),
            Err(LineError::Syntax(_))
        ));
    }
}
