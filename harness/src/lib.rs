//! The pipeline of a test, between the command line (the `fencecheck` crate) and the systems
//! in containers (the `containers` crate).
//!
//! - [`config`]: test.yaml and flags → a validated, typed `TestPlan`.
//! - [`run`]: the pipeline of one test, over one seam for where it runs.
//! - [`replay`]: scripted incident timelines, on the same sessions and site.
//! - [`matrix`]: grids of tests and their comparison table.

pub mod config;
pub mod matrix;
pub mod replay;
pub mod run;
