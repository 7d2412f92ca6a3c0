//! The fencecheck harness: everything that touches Docker, processes and the command line.
//!
//! - [`commands`]: one module per subcommand of the `fencecheck` binary.

pub mod commands;
