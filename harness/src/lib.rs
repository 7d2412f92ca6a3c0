//! The fencecheck harness: everything that touches Docker, processes and the command line.
//!
//! - [`commands`]: one module per subcommand of the `fencecheck` binary.
//! - [`config`]: test.yaml and flags → a validated `TestPlan`.
//! - [`matrix`]: grids of tests and their comparison table.
//! - [`replay`]: scripted incident timelines.
//! - [`run`]: the pipeline of one test.

pub mod commands;
pub mod config;
pub mod matrix;
pub mod replay;
pub mod run;
