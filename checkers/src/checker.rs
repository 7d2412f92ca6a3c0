//! The seam every checker implements: a pure, streaming consumer of history events and resource
//! decisions that reports anomalies of one kind. No I/O, no clock, no randomness: the same input
//! always gives the same findings. Streaming (one event at a time) keeps memory bounded by what a
//! checker must remember (open holds, pending operations), not by the history's length.

use results::{Anomaly, AnomalyKind, Diagnosis, EventRef, Evidence, ResourceRef};

/// How many anomalies of one kind keep their full evidence; the rest are only counted, so a
/// thoroughly broken run cannot exhaust memory with millions of evidence packets.
pub const MAX_REPORTED_PER_KIND: usize = 100;

/// Whether the resource log was there to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceLog {
    Present,
    /// Missing or unreadable, with the reason (naming the file).
    Missing(String),
}

/// What a checker learns when the streams end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub resource_log: ResourceLog,
    /// Time of the last history event (ns since start), if any.
    pub last_time: Option<u64>,
}

/// How a checker's judgement ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It looked at everything it needed; its anomalies (possibly none) are the answer.
    Checked,
    /// The run has nothing this checker can judge (e.g. no fence tokens): not the same as valid.
    NotApplicable(String),
    /// It could not decide (e.g. the resource log is missing): makes the verdict unknown.
    Unknown(String),
}

/// The anomalies one checker found: the first [`MAX_REPORTED_PER_KIND`] in full, and a count.
#[derive(Debug, Clone)]
pub struct Findings {
    pub kind: AnomalyKind,
    pub reported: Vec<Anomaly>,
    pub total: u64,
}

impl Findings {
    pub fn new(kind: AnomalyKind) -> Self {
        Findings {
            kind,
            reported: Vec::new(),
            total: 0,
        }
    }

    /// Records one anomaly. `fails` is decided later by the test's `fail_on`.
    pub fn push(&mut self, summary: String, evidence: Evidence, diagnosis: Diagnosis) {
        self.total += 1;
        if self.reported.len() < MAX_REPORTED_PER_KIND {
            self.reported.push(Anomaly {
                kind: self.kind,
                fails: false,
                summary,
                evidence,
                diagnosis,
            });
        }
    }
}

/// One anomaly kind's checker.
pub trait Checker {
    /// The kind it reports (every anomaly it pushes has this kind).
    fn kind(&self) -> AnomalyKind;

    /// One history event, in file order.
    fn event(&mut self, e: &EventRef<'_>, out: &mut Findings);

    /// One resource-log entry, in file order (after the whole history).
    fn resource(&mut self, _r: &ResourceRef<'_>, _out: &mut Findings) {}

    /// Both streams ended: report what is still pending and say how the judgement ended.
    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome;
}
