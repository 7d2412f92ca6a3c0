//! The nemesis: faults as data, and their application. It never touches Docker: it speaks to the
//! world through [`NodeControl`] and learns about it through [`Topology`], both implemented by
//! the harness (and faked in [`fake`]).
//!
//! - [`fault`]: the fault kinds, re-exported from their home in `results::fault` (the table of
//!   faults: each one's mechanism, aim, family, length and needs).
//! - [`grudge`]: partitions as data, built by pure functions (isolate, halves, majorities ring).
//! - [`plan`]: a fault plan, its timeline-line form, and the seeded generator.
//! - [`schedule`]: the explicit YAML timeline and the validation every schedule passes.
//! - [`clock`]: clock and link settings as data (a node's wall clock ahead or fast, a link's
//!   shaping).
//! - [`control`]: the `NodeControl` and `Topology` seams.
//! - [`Resolved`] (`targets`): what a fault hits at its start time (by its aim) and what it does to it (by
//!   its mechanism).
//! - [`executor`]: runs a plan, records nemesis events, heals everything on every exit; strikes
//!   and lifts one fault at a time for a replay ([`OneStep`]).
//! - [`fake`]: in-memory control and topology for fast tests.
//!
//! ```no_run
//! use nemesis::fake::{FakeControl, StaticTopology};
//! use nemesis::{Context, Nemesis, Schedule};
//! # async fn demo(history: &results::jsonl::HistoryWriter) -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = Context {
//!     capabilities: results::Provider::Etcd.capabilities(),
//!     ttl: std::time::Duration::from_secs(2),
//!     time_limit: None,
//! };
//! let plan = Schedule::from_yaml("- at 5s start pause-holder for 6s\n- at 15s halves for 10s\n")?
//!     .validate(&ctx)?; // a bad line is a ScheduleError naming it
//! let (control, topology) = (FakeControl::new(), StaticTopology::new(5, 3));
//! let nemesis = Nemesis::new(&control, &topology, history, results::RunClock::start());
//! let ctrl_c = async { let _ = tokio::signal::ctrl_c().await; };
//! nemesis.run(&plan, ctrl_c).await?; // heals on every path, Ctrl-C included
//! # Ok(()) }
//! ```

pub mod clock;
pub mod control;
pub mod executor;
pub mod fake;
pub mod fault;
pub mod grudge;
pub mod plan;
pub mod schedule;
mod targets;

pub use clock::{ClockFaults, ClockSetting, LinkShaping};
pub use control::{ControlError, InFlight, Moments, NodeControl, Signal, Topology};
pub use executor::{Nemesis, NemesisError, OneStep, Struck, Summary};
pub use fault::{FaultKind, UnknownFault, ALL_FAULTS};
pub use grudge::Grudge;
pub use plan::{Generator, Plan, Step};
pub use schedule::{Context, Schedule, ScheduleError};
pub use targets::{Resolved, STARVED_CPUS};
