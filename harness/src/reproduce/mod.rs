//! `fencecheck reproduce`: from one anomaly of a stored run to a replay scenario that makes it
//! happen again, step by step. The evidence names the acquisitions involved; the history says
//! what happened to them (the faults on their workers or on the service, their writes as the
//! resource decided them, their releases); the scenario replays exactly that, with the run's
//! provider, lock client and settings, and expects the resource's answers and the anomaly.
//!
//! - [`stored`]: the run directory read back (test, verdict, both logs), and the anomaly chosen.
//! - [`refusal`]: what a replay cannot express, and why (exit 3).
//! - [`actors`]: the acquisitions the evidence names, as the scenario's workers A, B, ...
//! - [`timeline`]: what happened to them, in the order it happened, up to the anomaly.
//! - [`steps`]: the timeline as scenario steps: the waits that matter, the expectations.
//! - [`witness`]: what the lock service's own record said of the same acquisitions, expected too.
//! - [`text`]: the scenario file, with where each step came from.

pub mod actors;
pub mod refusal;
pub mod steps;
pub mod stored;
pub mod text;
pub mod timeline;
pub mod witness;

pub use refusal::Refusal;
pub use stored::Stored;

/// A scenario made from one anomaly.
#[derive(Debug, Clone)]
pub struct Made {
    /// The scenario file's text (parsed back by `replay::scenario::parse` before it is kept).
    pub text: String,
    pub kind: results::AnomalyKind,
    /// The scenario's workers and the acquisitions they stand for, one line each.
    pub cast: Vec<String>,
    pub steps: usize,
}

/// The scenario of anomaly `number` (1-based, as `--anomaly` counts) of the stored run, named
/// `name` (the file it goes to), or after the run's test and the kind.
pub fn make(stored: &Stored, number: usize, name: Option<&str>) -> Result<Made, Refusal> {
    let anomaly = stored.anomaly(number)?;
    refusal::check(stored, anomaly)?;
    let cast = actors::cast(stored, anomaly)?;
    let events = timeline::of(stored, anomaly, &cast)?;
    let made = steps::steps(stored, anomaly, &cast, &events);
    let witnesses = witness::beside(stored, anomaly, &cast);
    let text = text::render(stored, number, anomaly, &cast, &made, &witnesses, name);
    if let Err(e) = crate::replay::scenario::parse(&text) {
        // A scenario this module wrote that replay cannot read is this module's bug.
        return Err(Refusal::new(format!(
            "the scenario made from anomaly {number} does not parse (line {}: {}); this is a \
             bug of fencecheck reproduce",
            e.line, e.message
        )));
    }
    Ok(Made {
        text,
        kind: anomaly.kind,
        cast: cast.iter().map(actors::Actor::describe).collect(),
        steps: made.len(),
    })
}

/// Up to when the run is read: the last moment the evidence names (the harm of a double
/// release comes after the release that `at` dates), or when the anomaly became true.
pub fn until(anomaly: &results::Anomaly) -> u64 {
    let named = anomaly.evidence.times.iter().copied().max();
    match (named, anomaly.when()) {
        (None, None) => u64::MAX,
        (a, b) => a.max(b).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
mod tests;
