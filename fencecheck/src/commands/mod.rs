//! One module per `fencecheck` subcommand. Each has a clap `Args` and a `run(Args) ->
//! anyhow::Result<u8>` returning the process exit code (errors become exit 3 in `main`).

pub mod bench;
pub mod bench_recipes;
pub mod bench_resource;
pub mod bench_soak;
pub mod bench_startup;
pub mod check;
pub mod clean;
pub mod clients;
pub mod cluster;
pub mod image;
pub mod matrix;
pub mod proxy;
pub mod replay;
pub mod reproduce;
pub mod resource;
pub mod run;
pub mod shrink;
pub mod soak_way;
pub mod worker;
