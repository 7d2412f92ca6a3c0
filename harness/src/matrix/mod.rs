//! `fencecheck matrix`: many tests, one comparison table.
//!
//! - [`spec`]: the matrix file (cells × seeds, with expectations); [`sweep`]: a cell's axes
//!   (releases, dependency releases, options, application profiles) crossed into labelled rows.
//! - [`execute`]: runs every cell × seed through the run pipeline and writes the matrix files.
//! - [`outcome`]: one run read back from its directory (kinds, first times, acquire latency).
//! - [`judge`]: a cell's runs → its row and whether it kept its expectation; the exit code.
//! - [`table`], [`html`]: `matrix.md` and the self-contained `matrix.html`.
//! - [`next`]: the `fencecheck shrink` command of a cell that broke its expectation.
//! - [`pool`]: the clusters runs share, each checked before a run takes it.
//! - [`plan`]: `--plan`, what a matrix will run and how long it should take, before it starts.
//! - [`shard`]: `--shard I/N`, the deterministic share of cells one CI job runs; [`merge`]
//!   joins the shards; [`load`]: how busy the machine was.

pub mod execute;
pub mod html;
pub mod judge;
pub mod load;
pub mod merge;
pub mod next;
pub mod outcome;
pub mod plan;
pub mod pool;
pub mod shard;
pub mod spec;
pub mod sweep;
pub mod table;

pub use execute::{execute, MatrixReport, Options};
