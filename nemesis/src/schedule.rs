//! The explicit YAML timeline and the one validation every schedule passes before anything
//! starts. A timeline is a YAML list of lines such as `at 5s start pause-holder for 6s`; every
//! error names the YAML line it comes from, so a bad schedule is fixed in one edit.

use crate::fault::{FaultKind, UnknownFault};
use crate::plan::{LineError, Plan, RawStep, Step};
use results::{Capabilities, Provider};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::time::Duration;

/// A timeline as it sits in a config file: each step remembers its YAML line. Embed it as a
/// field of a config struct parsed with serde-saphyr, or parse a standalone list with
/// [`Schedule::from_yaml`].
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct Schedule(pub Vec<Spanned<String>>);

/// Where a schedule was written: a YAML line, or a flag / generator for seeded schedules.
pub type Place = String;

/// Why a schedule is rejected. Every variant names where it was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("{place}: {source}")]
    Line { place: Place, source: LineError },
    #[error("{place}: {source}")]
    UnknownFault { place: Place, source: UnknownFault },
    #[error("{place}: {fault} is not supported by {provider}: {why}")]
    Unsupported {
        place: Place,
        fault: FaultKind,
        provider: Provider,
        why: String,
    },
    #[error("{place}: partition {fault} overlaps partition {other} of {other_place}; only one partition can be active at a time, start this one after the other stops")]
    OverlappingPartitions {
        place: Place,
        fault: FaultKind,
        other: FaultKind,
        other_place: Place,
    },
    #[error("{place}: {fault} ends at {end}, after the time limit {limit}")]
    PastTimeLimit {
        place: Place,
        fault: FaultKind,
        end: String,
        limit: String,
    },
    #[error("{place}: a {fault} of 0s does nothing; give it a duration with \"for <duration>\"")]
    ZeroDuration { place: Place, fault: FaultKind },
    #[error("nemesis timeline: {0}")]
    Yaml(String),
}

/// What a schedule is checked against.
#[derive(Debug, Clone)]
pub struct Context {
    /// What the system under test offers (`Provider::capabilities`).
    pub capabilities: Capabilities,
    pub ttl: Duration,
    /// The workload's time limit; no fault may end after it.
    pub time_limit: Option<Duration>,
}

impl Schedule {
    /// Parses a YAML document that is a list of timeline lines.
    pub fn from_yaml(text: &str) -> Result<Self, ScheduleError> {
        serde_saphyr::from_str(text).map_err(|e| ScheduleError::Yaml(e.to_string()))
    }

    /// Turns the timeline into a plan, or says which line is wrong and why.
    pub fn validate(&self, ctx: &Context) -> Result<Plan, ScheduleError> {
        let mut placed = Vec::with_capacity(self.0.len());
        for spanned in &self.0 {
            let place = format!("line {}", spanned.referenced.line());
            let raw = RawStep::parse(&spanned.value).map_err(|source| ScheduleError::Line {
                place: place.clone(),
                source,
            })?;
            let fault =
                raw.fault
                    .parse::<FaultKind>()
                    .map_err(|source| ScheduleError::UnknownFault {
                        place: place.clone(),
                        source,
                    })?;
            let pick = raw.pick.unwrap_or(placed.len() as u64);
            let step = Step {
                at: raw.at,
                fault,
                // A line without "for": the fault's default, or its length drawn from the
                // step's pick (a stall of the service).
                duration: raw
                    .duration
                    .unwrap_or_else(|| fault.drawn_length(ctx.ttl, length_draw(pick))),
                pick,
            };
            placed.push((place, step));
        }
        check(&placed, ctx)?;
        let mut steps: Vec<Step> = placed.into_iter().map(|(_, s)| s).collect();
        steps.sort_by_key(|s| s.at);
        Ok(Plan { steps })
    }
}

/// The random number a step's drawn length comes from, fixed by its pick.
fn length_draw(pick: u64) -> u64 {
    use rand::{Rng, SeedableRng};
    rand_chacha::ChaCha8Rng::seed_from_u64(pick).random()
}

impl Plan {
    /// Validates a generated plan (places are named `what`, e.g. `--nemesis`, plus the step).
    pub fn validate(&self, what: &str, ctx: &Context) -> Result<(), ScheduleError> {
        let placed: Vec<(Place, Step)> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("{what} (step {}: {s})", i + 1), *s))
            .collect();
        check(&placed, ctx)
    }
}

/// Checks every step against the system, the time limit and every other step.
fn check(steps: &[(Place, Step)], ctx: &Context) -> Result<(), ScheduleError> {
    let caps = &ctx.capabilities;
    for (place, step) in steps {
        if let Some(why) = step.fault.unsupported_because(caps) {
            return Err(ScheduleError::Unsupported {
                place: place.clone(),
                fault: step.fault,
                provider: caps.provider,
                why,
            });
        }
        if step.duration.is_zero() {
            return Err(ScheduleError::ZeroDuration {
                place: place.clone(),
                fault: step.fault,
            });
        }
        if let Some(limit) = ctx.time_limit {
            if step.end() > limit {
                return Err(ScheduleError::PastTimeLimit {
                    place: place.clone(),
                    fault: step.fault,
                    end: crate::plan::format_duration(step.end()),
                    limit: crate::plan::format_duration(limit),
                });
            }
        }
    }
    for (i, (place, a)) in steps.iter().enumerate() {
        for (other_place, b) in &steps[..i] {
            let overlap = a.at < b.end() && b.at < a.end();
            if a.fault.is_partition() && b.fault.is_partition() && overlap {
                return Err(ScheduleError::OverlappingPartitions {
                    place: place.clone(),
                    fault: a.fault,
                    other: b.fault,
                    other_place: other_place.clone(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(provider: Provider) -> Context {
        Context {
            capabilities: provider.capabilities(),
            ttl: Duration::from_secs(2),
            time_limit: Some(Duration::from_secs(60)),
        }
    }

    fn validate(yaml: &str, provider: Provider) -> Result<Plan, ScheduleError> {
        Schedule::from_yaml(yaml)?.validate(&ctx(provider))
    }

    #[test]
    fn a_good_timeline_becomes_a_sorted_plan_with_defaults() {
        let plan = validate(
            "- at 15s halves for 10s\n- at 5s start pause-holder\n",
            Provider::Etcd,
        )
        .unwrap();
        assert_eq!(plan.steps[0].fault, FaultKind::PauseHolder);
        assert_eq!(plan.steps[0].duration, Duration::from_secs(4), "2 x ttl");
        assert_eq!(plan.steps[1].at, Duration::from_secs(15));
    }

    #[test]
    fn an_unknown_fault_names_its_line() {
        let err = validate(
            "- at 1s pause-holder for 1s\n- at 5s start explode for 6s\n",
            Provider::Etcd,
        )
        .unwrap_err();
        assert!(matches!(err, ScheduleError::UnknownFault { .. }));
        assert!(
            err.to_string()
                .starts_with("line 2: unknown fault \"explode\""),
            "{err}"
        );
    }

    #[test]
    fn failover_on_etcd_is_unsupported_with_its_line() {
        let err = validate(
            "# faults\n\n- at 5s start failover for 6s\n",
            Provider::Etcd,
        )
        .unwrap_err();
        assert!(matches!(err, ScheduleError::Unsupported { .. }));
        assert!(
            err.to_string()
                .starts_with("line 3: failover is not supported by etcd"),
            "{err}"
        );
        assert!(validate("- at 5s failover for 6s\n", Provider::RedisSentinel).is_ok());
    }

    #[test]
    fn overlapping_partitions_are_rejected_naming_both_lines() {
        let err = validate(
            "- at 5s halves for 10s\n- at 12s isolate-leader for 5s\n",
            Provider::Etcd,
        )
        .unwrap_err();
        assert!(matches!(err, ScheduleError::OverlappingPartitions { .. }));
        let msg = err.to_string();
        assert!(
            msg.starts_with("line 2: partition isolate-leader overlaps partition halves of line 1"),
            "{msg}"
        );
        // A pause during a partition is fine, and so is a partition right after another.
        validate(
            "- at 5s halves for 10s\n- at 6s pause-holder for 3s\n- at 15s isolate-leader for 5s\n",
            Provider::Etcd,
        )
        .unwrap();
    }

    #[test]
    fn negative_and_zero_durations_are_rejected() {
        let err = validate("- at 5s pause-holder for -3s\n", Provider::Etcd).unwrap_err();
        assert!(matches!(
            err,
            ScheduleError::Line {
                source: LineError::Negative(_),
                ..
            }
        ));
        assert!(
            err.to_string()
                .starts_with("line 1: negative duration \"-3s\""),
            "{err}"
        );
        let err = validate("- at -5s pause-holder for 3s\n", Provider::Etcd).unwrap_err();
        assert!(err.to_string().contains("negative"), "{err}");
        let err = validate("- at 5s pause-holder for 0s\n", Provider::Etcd).unwrap_err();
        assert!(matches!(err, ScheduleError::ZeroDuration { .. }));
    }

    #[test]
    fn faults_past_the_time_limit_and_bad_yaml_are_rejected() {
        let err = validate("- at 55s halves for 10s\n", Provider::Etcd).unwrap_err();
        assert!(matches!(err, ScheduleError::PastTimeLimit { .. }), "{err}");
        let err = validate("- at 5s halves\n  oops: [\n", Provider::Etcd).unwrap_err();
        assert!(matches!(err, ScheduleError::Yaml(_)), "{err}");
    }

    #[test]
    fn a_plan_written_into_yaml_reads_back_as_the_same_plan() {
        let plan = crate::plan::Generator {
            faults: vec![FaultKind::PauseHolder, FaultKind::Halves],
            interval: Duration::from_secs(3),
            durations: Some((Duration::from_millis(1500), Duration::from_secs(6))),
            ttl: Duration::from_secs(2),
            time_limit: Duration::from_secs(60),
        }
        .plan(2026);
        let yaml = serde_saphyr::to_string(&plan).unwrap();
        assert!(
            yaml.contains("start pause-holder") || yaml.contains("start halves"),
            "{yaml}"
        );
        assert_eq!(validate(&yaml, Provider::Zookeeper).unwrap(), plan);
    }

    #[test]
    fn a_generated_plan_is_checked_too() {
        let plan = crate::plan::Generator {
            faults: vec![FaultKind::Failover],
            interval: Duration::from_secs(5),
            durations: None,
            ttl: Duration::from_secs(2),
            time_limit: Duration::from_secs(60),
        }
        .plan(1);
        let err = plan
            .validate("--nemesis", &ctx(Provider::Etcd))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--nemesis (step 1: at 5s start failover"),
            "{err}"
        );
    }
}
