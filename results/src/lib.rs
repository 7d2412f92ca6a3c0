//! The data model of a fencecheck run, shared by every other crate.
//!
//! - [`event`]: one line of `history.jsonl` (Jepsen operation semantics).
//! - [`resource_log`]: one line of `resource.jsonl`, the resource's own ground truth.
//! - [`jsonl`]: crash-safe appenders and streaming readers for both files.
//! - [`layout`]: the run directory, its file names, and `results/runs/latest`.
//! - [`clock`]: run-relative CLOCK_MONOTONIC time shared by host and containers.
//! - [`verdict`]: `results.json` — validity, anomalies with evidence and diagnosis.

pub mod clock;
pub mod event;
pub mod jsonl;
pub mod layout;
pub mod resource_log;
pub mod verdict;

pub use clock::RunClock;
pub use event::{Event, OpResult, OpType, Process, F};
pub use resource_log::{ResourceEntry, WriteResult};
pub use verdict::{Anomaly, AnomalyKind, Diagnosis, Evidence, Validity, Verdict};
