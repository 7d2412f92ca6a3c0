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
}

impl ClockFaults {
    /// A jump of 5 × ttl (at least 5 s), a clock 3 × as fast.
    pub fn for_ttl(ttl: Duration) -> Self {
        Self {
            jump: (ttl * 5).max(Duration::from_secs(5)),
            skew: 3.0,
            slow: LinkShaping::slow(ttl),
        }
    }
}

/// How the link proxy shapes a target's links (see `workloads::proxy`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LinkShaping {
    pub delay_ms: u64,
    pub jitter_ms: u64,
    pub loss: f64,
}

impl LinkShaping {
    /// `slow-network`: ttl / 4 per chunk, plus up to ttl / 8.
    pub fn slow(ttl: Duration) -> Self {
        Self {
            delay_ms: (ttl / 4).as_millis() as u64,
            jitter_ms: (ttl / 8).as_millis() as u64,
            loss: 0.0,
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
