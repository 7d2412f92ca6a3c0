//! The fencecheck harness: everything that touches Docker, processes and the command line.
//!
//! - [`cluster`]: real etcd / ZooKeeper / Redis / PostgreSQL clusters in containers.
//! - [`commands`]: one module per subcommand of the `fencecheck` binary.
//! - [`config`]: test.yaml and flags → a validated `TestPlan`.
//! - [`docker`]: the per-run Docker environment (network, containers, logs, teardown).
//! - [`image`]: the node image (tag from the package list; Dockerfile or debootstrap build).
//! - [`matrix`]: grids of tests and their comparison table.
//! - [`replay`]: scripted incident timelines.
//! - [`run`]: the pipeline of one test.

pub mod cluster;
pub mod commands;
pub mod config;
pub mod control;
pub mod docker;
pub mod image;
pub mod matrix;
pub mod replay;
pub mod run;
