//! The run pipeline end to end: in process, in containers, the counter workload, replay and the matrix. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod adapter_memory;
mod client_clock;
mod counter;
mod cut_reply;
mod durability;
mod hang_work;
mod matrix_memory;
mod matrix_shared;
mod memory;
mod memory_faults;
mod new_faults;
mod pipeline;
mod replay_cli;
mod replay_library;
mod reproduce_cli;
mod service_record;
mod shrink_memory;
mod unplanned;
mod weak_moments;
