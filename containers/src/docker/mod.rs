//! Everything fencecheck does with the Docker engine, in one place: the connection, labels and
//! names, generic container start with readiness, log streaming, and the per-run environment
//! whose teardown runs on every exit path (normal end, error, panic, SIGINT, SIGTERM).
//!
//! Other modules never talk to bollard for lifecycle; they call [`RunEnv`].

mod connect;
mod container;
mod env;
mod guard;
mod labels;
mod logs;
pub mod outside;
mod pinned;
mod proc_net;

pub use connect::{connect, DockerError};
pub use container::{ContainerSpec, Node, Readiness, Role, FENCECHECK_IN_CONTAINER};
pub use env::RunEnv;
pub use guard::{install_signal_teardown, interrupted, on_interrupt, tearing_down};
pub use labels::{
    container_name, docker_safe, list_run_containers, list_run_networks, network_name,
    remove_by_run, CleanReport, RUN_LABEL,
};
pub use logs::tail as log_tail;
pub use pinned::sweep_temp as sweep_pinned_binaries;

/// The engine connection, for the commands that ask it directly (`image status`).
pub use bollard::Docker;
