//! `fencecheck matrix`: many tests, one comparison table.
//!
//! - [`spec`]: the matrix file (cells × seeds, with expectations).

pub mod spec;
