//! The data model of a fencecheck run, shared by every other crate.
//!
//! - [`event`]: one line of `history.jsonl` (Jepsen operation semantics).
//! - [`resource_log`]: one line of `resource.jsonl`, the resource's own ground truth.
//! - [`jsonl`]: crash-safe appenders and streaming readers for both files.
//! - [`layout`]: the run directory, its file names, and `results/runs/latest`.
//! - [`clock`]: run-relative CLOCK_MONOTONIC time shared by host and containers.
//! - [`fault`]: the fault kinds the history names, and what each hits.
//! - [`provider`]: every system fencecheck knows, and what each offers to the nemesis.
//! - [`run_state`]: `state.json`, whether a run finished.
//! - [`event_ref`]: borrowed views of both logs; [`parse`]: reading lines into them, fast and
//!   as strict as serde.
//! - [`store`]: streaming a stored run back (logs, and `test.yaml`'s checker keys).
//! - [`verdict`]: `results.json` — validity, anomalies with evidence and diagnosis.

pub mod clock;
pub mod event;
pub mod event_ref;
pub mod fault;
pub mod jsonl;
pub mod layout;
pub mod parse;
pub mod provider;
pub mod resource_log;
pub mod run_state;
pub mod store;
pub mod verdict;

pub use clock::RunClock;
pub use event::{Event, OpResult, OpType, Process, F};
pub use event_ref::{EventRef, ResourceRef};
pub use provider::{Capabilities, Provider, ProviderError};
pub use resource_log::{ResourceEntry, WriteResult};
pub use verdict::{Anomaly, AnomalyKind, Diagnosis, Evidence, Validity, Verdict};
