//! The code that runs a lock client and the resource it protects, on both sides of the worker
//! protocol. Grouped by role; other crates name what they use by its module's path
//! (`workloads::driver::Session`), so this list is the crate's face.
//!
//! **What a test is made of** (closed sets of names, validated settings)
//! - [`kinds`]: provider, recipe, resource and counter store names.
//! - [`config`]: a recipe's timing (`RawRecipeConfig` → the validated
//!   [`config::RecipeConfig`]) and the client [`config::Discipline`].
//! - [`app`]: the application a run models (how long it holds, what it does after an error,
//!   whether it asks the library), one row per profile.
//!
//! **The lock client** (the system under test)
//! - [`client`]: the `Client` seam and its three outcomes.
//! - [`recipes`]: fencecheck's own recipes (the textbook baselines), one file each, and the
//!   in-process memory lock service with its planted bugs.
//! - [`adapter`]: a library behind its adapter (the client-adapter protocol).
//! - [`ownership`]: held → suspect → lost, and the renewals that drive it.
//!
//! **The worker process** (in a container, or in the harness's process)
//! - [`worker`]: a worker made from its launch ([`worker::WorkerLaunch`], one value made from the
//!   plan),
//!   serving the control protocol; the in-process freeze gate.
//! - [`protocol`]: the harness ↔ worker control protocol.
//!
//! **The protected side**
//! - [`fenced_write`]: a worker's write with its token, and the in-process register.
//! - [`resource`]: the fenced resource server, its backends (register, etcd, PostgreSQL,
//!   Redis) and the rule that decides a write.
//! - [`counter`], [`counter_guard`]: the counter workload's stores, plain or guarded.
//! - [`pg`]: a PostgreSQL connection that reopens after the server closed it.
//!
//! **The host side**
//! - [`driver`]: connections to workers, the workload loops, the recorder of the history.
//! - [`proxy`]: the link proxy for slow and lossy networks.

pub mod adapter;
pub mod app;
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

pub use app::App;
