//! Lock recipes, the worker process, and the fenced resource.
//!
//! (Modules are added by the issues that build them: recipes and the worker by the "workers and
//! lock recipes" issue, the resource and the counter workload by the "fenced resources" issue.)

pub mod adapter;
pub mod client;
pub mod config;
pub mod counter;
pub mod counter_guard;
pub mod driver;
pub mod fenced_write;
pub mod kinds;
pub mod ownership;
pub mod pg;
pub mod protocol;
pub mod proxy;
pub mod recipes;
pub mod resource;
pub mod worker;
