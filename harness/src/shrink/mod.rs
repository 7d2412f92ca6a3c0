//! `fencecheck shrink`: the smallest test that still shows a stored run's failing anomaly kind.
//! It reruns the stored test (its own seed first), then tries it smaller — the time limit
//! halved, each fault of the plan removed in turn, one worker fewer — keeping a reduction when
//! one of its tries (up to K, seeds counted up from the test's) shows the kind again, until
//! nothing more can go or the budget of runs or time is spent. The smallest test is then run
//! a few more times for its reproduction rate, and written as a test file.
//!
//! - [`candidate`]: a test and its reductions, written as a test file.
//! - [`tries`]: the seam that runs one try of a candidate (a `fencecheck run` of its file).
//! - [`search`]: the order of the reductions, the tries and the budget.
//! - [`table`]: each step as printed.

pub mod candidate;
pub mod search;
pub mod table;
pub mod tries;

pub use candidate::Candidate;
pub use search::{search, Budget, Shrunk, Step};
pub use tries::{Subprocess, Tried, Tries};
