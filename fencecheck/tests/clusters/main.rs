//! Real clusters in containers: start-up, readiness, lifecycle and leftovers. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod lifecycle;
mod shared;
mod systems;
