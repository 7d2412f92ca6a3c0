//! The pipeline of a test, between the command line (the `fencecheck` crate) and the systems
//! in containers (the `containers` crate).
//!
//! - [`config`]: test.yaml and flags → a validated, typed `TestPlan`.
//! - [`run`]: the pipeline of one test, over one seam for where it runs.
//! - [`replay`]: scripted incident timelines, on the same sessions and site.
//! - [`matrix`]: grids of tests and their comparison table.
//! - [`reproduce`]: a replay scenario made from one anomaly of a stored run.
//! - [`shrink`]: the smallest test that still shows a stored run's failing kind.

pub mod config;
pub mod matrix;
pub mod replay;
pub mod reproduce;
pub mod run;
pub mod shrink;
