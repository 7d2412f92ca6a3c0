//! Pure analysis of a fencecheck run: the history and the resource log in, a [`Verdict`] out.
//! No I/O, no clock, no randomness; every checker streams, so memory follows what is open
//! (holds, pending operations), not how long the history is — with one exception: a tokenless
//! recipe's grants are kept until the resource log is read, to order its writes by grant.
//!
//! - [`checker`]: the [`Checker`] trait, findings and outcomes.
//! - [`kinds`]: one checker per anomaly kind.
//! - [`applied`]: the accepted op_ids, compressed into per-process runs.
//! - [`holds`]: certain hold intervals, shared by the hold-based checkers; [`fold`]: the same
//!   holds for the report and the live tracker (docs/design.md, "Holds", in one place).
//! - [`name`]: short names (lock, owner, lease) kept inline, not on the heap.
//! - [`locks`], [`procs`]: lock names as dense ids, and per-lock and per-process state in
//!   vectors indexed by them.
//! - [`diagnosis`]: what each anomaly tells a human to check and do.
//! - `dispatch`: the standard set of checkers, the hot ones called directly.
//! - [`engine`]: composition into one verdict (Invalid > Unknown > Valid), panics caught.
//! - [`testkit`]: tiny history builders for tests (`invoke(p, Acquire)`, `ok(..)`, `info(..)`).
//! - [`synth`]: seeded generators of long valid histories and planted defects (tests, benches).

pub mod applied;
pub mod checker;
pub mod diagnosis;
mod dispatch;
pub mod engine;
pub mod fold;
pub mod hashing;
pub mod holds;
pub mod kinds;
pub mod locks;
pub mod name;
pub mod procs;
pub mod service_keys;
pub mod synth;
pub mod testkit;

pub use checker::{Checker, Context, End, Findings, Interests, Outcome, ResourceLog, ServiceLog};
pub use engine::{check, check_stream, Engine};
pub use results::store::CheckConfig;
pub use results::Verdict;

/// The nine checkers (eleven kinds), configured from the test.
pub fn all_checkers(cfg: &CheckConfig) -> Vec<Box<dyn Checker>> {
    dispatch::standard(cfg)
        .into_iter()
        .map(dispatch::Dispatch::boxed)
        .collect()
}
