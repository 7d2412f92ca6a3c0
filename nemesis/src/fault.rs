//! The fault kinds are part of the history's data model (a `start-<fault>` line names one, and
//! the checkers read what it hits), so they live in [`results::fault`]; the nemesis names them
//! from here.

pub use results::fault::*;
