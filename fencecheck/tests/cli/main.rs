//! The command line: `check` of stored runs, replay and reproduce on the in-process site, and the errors a user meets (exit 3, naming the file, flag or engine). One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod check;
mod docs;
mod errors;
mod replay_memory;
mod reproduce;
