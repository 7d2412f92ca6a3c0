//! `fencecheck replay`: an incident's exact order of events, replayed against a real provider.
//!
//! - [`scenario`]: the scenario file, parsed and validated before anything starts.

pub mod scenario;
