//! The data model of a fencecheck run, shared by every other crate.
//!
//! - [`event`]: one line of `history.jsonl` (Jepsen operation semantics).
//! - [`resource_log`]: one line of `resource.jsonl`, the resource's own ground truth.
//! - [`service_log`]: one line of `service.jsonl`, the lock service's own record of its keys.
//! - [`jsonl`]: crash-safe appenders and streaming readers for both files.
//! - [`layout`]: the run directory, its file names, and `results/runs/latest`.
//! - [`clock`]: run-relative CLOCK_MONOTONIC time shared by host and containers.
//! - [`duration`]: `2s` / `500ms` durations: one type and grammar for test files and stored runs.
//! - [`fault`]: the fault kinds the history names, and what each hits.
//! - [`nemesis_event`]: the nemesis's history line: its one constructor, its one reading of
//!   targets.
//! - [`provider`]: every system fencecheck knows, and what each offers to the nemesis.
//! - [`persistence`]: how a Redis server keeps what it acknowledged across a restart.
//! - [`run_state`]: `state.json`, whether a run finished.
//! - [`event_ref`]: borrowed views of both logs; [`parse`]: reading lines into them, fast and
//!   as strict as serde.
//! - [`store`]: the one reader of a run directory (logs streamed or whole, `test.yaml`,
//!   `results.json`), the one error of a run's files, the one default `recovery_slack`.
//! - [`verdict`]: `results.json` — validity, anomalies with evidence and diagnosis.
//! - [`reach`]: what a run reached of its lock client's renewal, retry and recovery code.
//! - [`landing`]: which of a run's planned faults landed.

pub mod clock;
pub mod duration;
pub mod event;
pub mod event_ref;
pub mod fault;
pub mod jsonl;
pub mod landing;
pub mod layout;
pub mod nemesis_event;
pub mod parse;
pub mod persistence;
pub mod provider;
pub mod reach;
pub mod resource_log;
pub mod run_state;
pub mod service_log;
pub mod store;
pub mod verdict;

pub use clock::RunClock;
pub use duration::Dur;
pub use event::{Event, OpResult, OpType, Process, F};
pub use event_ref::{Detail, EventRef, ResourceRef};
pub use nemesis_event::{EventFault, FaultPhase, NemesisEvent};
pub use provider::{Capabilities, Provider, ProviderError};
pub use resource_log::{ResourceEntry, WriteResult};
pub use verdict::{Anomaly, AnomalyKind, Diagnosis, Evidence, Validity, Verdict};
