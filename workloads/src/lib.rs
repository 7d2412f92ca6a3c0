//! Lock recipes, the worker process, and the fenced resource.
//!
//! (Modules are added by the issues that build them: recipes and the worker by the "workers and
//! lock recipes" issue, the resource and the counter workload by the "fenced resources" issue.)

pub mod counter;
pub mod resource;
