//! The nemesis: faults as data, and their application. It never touches Docker: it speaks to the
//! world through [`NodeControl`] and learns about it through [`Topology`], both implemented by
//! the harness (and faked in [`fake`]).
//!
//! - [`fault`]: the fault kinds, what each needs from a system, default durations.
//! - [`grudge`]: partitions as data, built by pure functions (isolate, halves, majorities ring).
//! - [`plan`]: a fault plan, its timeline-line form, and the seeded generator.
//! - [`timeline`]: the explicit YAML timeline and the validation every schedule passes.
//! - [`control`]: the `NodeControl` and `Topology` seams.
//! - `targets`: what a fault hits at its start time (holder, leader, a drawn member, a grudge).
//! - [`executor`]: runs a plan, records nemesis events, heals everything on every exit.
//! - [`fake`]: in-memory control and topology for fast tests.

pub mod control;
pub mod executor;
pub mod fake;
pub mod fault;
pub mod grudge;
pub mod plan;
mod targets;
pub mod timeline;

pub use control::{ControlError, NodeControl, Signal, Topology};
pub use executor::{Nemesis, NemesisError, Summary};
pub use fault::{Capabilities, FaultKind, UnknownFault, ALL_FAULTS};
pub use grudge::Grudge;
pub use plan::{Generator, Plan, Step};
pub use timeline::{Context, ScheduleError, Timeline};
