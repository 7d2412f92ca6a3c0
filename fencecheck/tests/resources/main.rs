//! The fenced resource and its real backends: decisions, logs, restarts after a kill. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod backends;
mod kill;
mod register;
