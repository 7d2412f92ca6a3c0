//! fencecheck's own lock recipes against real providers: exclusion, tokens, pauses past the ttl. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod etcd;
mod pg;
mod redis;
mod redlock;
mod sentinel;
mod zk;
