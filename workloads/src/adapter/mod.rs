//! Client adapters: the lock library under test behind the [`crate::client::Client`] seam. An
//! adapter is a small program in the library's own language that the in-container worker
//! starts as a child and talks to in JSON lines (protocol version 1, `docs/adapters.md`): a
//! handshake, acquire / release and the optional renew and check, and the lease events the
//! library reports. The worker does the fenced writes with the token the adapter reports and
//! records the history; the adapter only calls its library.
//!
//! - [`wire`]: the protocol's lines;
//! - [`link`]: one running adapter, its reader, how a call ends when the adapter misbehaves;
//! - [`client`]: the adapter as a `Client` (deadlines, restarts, library exceptions);
//! - [`fake`]: an adapter in this process, so the pipeline test speaks the protocol.

pub mod client;
pub mod fake;
pub mod link;
pub mod wire;

pub use client::{AdapterClient, Described, INIT_DEADLINE};
pub use fake::InProcessAdapter;
pub use link::{Launch, Launched, Program};
pub use wire::{Init, PROTOCOL};
