//! Clock and link faults as data: what a node's wall clock should read relative to the real one. The
//! harness makes it so with libfaketime (a timestamp file each faked server re-reads on every
//! call); the nemesis only says which setting each target gets and when.

use serde::Serialize;
use std::time::Duration;

/// A node's wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockSetting {
    /// The real time (the heal).
    Real,
    /// The real time plus this many seconds, from now on.
    Ahead { secs: f64 },
    /// Runs `factor` times as fast as the real clock from now on (continuous at the start).
    Fast { factor: f64 },
}

/// How far clock faults move a clock; derived from the lock's ttl so that a jump outlasts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockFaults {
    /// `clock-jump`: how far the wall clock leaps forward.
    pub jump: Duration,
    /// `clock-skew`: how many times as fast the clock runs.
    pub skew: f64,
    /// `slow-network`: the delay added to the holder's links.
    pub slow: LinkShaping,
    /// `slow-reply`: the delay added to the replies the holder's links carry.
    pub slow_reply: LinkShaping,
}

impl ClockFaults {
    /// A jump of 5 × ttl (at least 5 s), a clock 3 × as fast, replies held back for twice the
    /// default operation timeout (ttl / 2, at most 2 s).
    pub fn for_ttl(ttl: Duration) -> Self {
        Self::for_timing(ttl, (ttl / 2).min(Duration::from_secs(2)))
    }

    /// [`ClockFaults::for_ttl`] for a client whose operations time out after `op_timeout`.
    pub fn for_timing(ttl: Duration, op_timeout: Duration) -> Self {
        Self {
            jump: (ttl * 5).max(Duration::from_secs(5)),
            skew: 3.0,
            slow: LinkShaping::slow(ttl),
            slow_reply: LinkShaping::slow_reply(op_timeout),
        }
    }
}

/// How the link proxy shapes a target's links (see `workloads::proxy`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LinkShaping {
    pub delay_ms: u64,
    pub jitter_ms: u64,
    pub loss: f64,
    /// Only what the service sends back is shaped; requests pass at once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replies_only: bool,
    /// The next reply closes its connection instead of passing, once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_next_reply: bool,
}

impl LinkShaping {
    /// `slow-network`: ttl / 4 per chunk, plus up to ttl / 8.
    pub fn slow(ttl: Duration) -> Self {
        Self {
            delay_ms: (ttl / 4).as_millis() as u64,
            jitter_ms: (ttl / 8).as_millis() as u64,
            ..Self::default()
        }
    }

    /// `slow-reply`: every reply waits twice the client's operation timeout, so that each
    /// request lands and its client gives up before it hears the answer.
    pub fn slow_reply(op_timeout: Duration) -> Self {
        Self {
            delay_ms: (op_timeout * 2).as_millis() as u64,
            replies_only: true,
            ..Self::default()
        }
    }

    /// The `cut-*-reply` faults: the next reply closes its connection, once.
    pub fn cut_reply() -> Self {
        Self {
            cut_next_reply: true,
            ..Self::default()
        }
    }

    /// `lossy-network`: a chunk breaks its connection with probability 0.2.
    pub fn lossy() -> Self {
        Self {
            loss: 0.2,
            ..Self::default()
        }
    }
}
