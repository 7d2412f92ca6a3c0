//! One file per lock recipe, each implementing [`crate::client::Client`] the way its users run
//! it in production.

pub mod memory;

pub use memory::{MemoryClient, MemoryKnobs, MemoryLockService};
