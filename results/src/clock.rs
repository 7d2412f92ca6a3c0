//! Run-relative time. Every timestamp in a run is CLOCK_MONOTONIC nanoseconds minus the run's
//! start; containers share the host's kernel and so its monotonic clock, which lets the harness,
//! the workers and the resource stamp events on one time axis without any clock sync.

use nix::time::{clock_gettime, ClockId};

/// Nanoseconds of CLOCK_MONOTONIC now, as an absolute value (used once to fix a run's start).
pub fn monotonic_now_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail on Linux for a valid clock id; fall back to 0 rather than panic.
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| (t.tv_sec() as u64) * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// The clock of one run: converts the shared monotonic clock to nanoseconds since start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunClock {
    start_ns: u64,
}

impl RunClock {
    /// Starts a run's clock now.
    pub fn start() -> Self {
        Self {
            start_ns: monotonic_now_ns(),
        }
    }

    /// The clock of a run that started at `start_ns` (passed by the harness to every process).
    pub fn from_start(start_ns: u64) -> Self {
        Self { start_ns }
    }

    /// The absolute monotonic start, to hand to processes the harness starts.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Nanoseconds since the run started (0 if called before the start, which cannot happen
    /// for processes sharing one kernel).
    pub fn now(&self) -> u64 {
        monotonic_now_ns().saturating_sub(self.start_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_time_is_monotonic_and_relative() {
        let clock = RunClock::start();
        let a = clock.now();
        let b = clock.now();
        assert!(b >= a);
        assert!(a < 1_000_000_000, "a fresh clock reads less than a second");
        let later = RunClock::from_start(clock.start_ns() + 10_000_000_000_000);
        assert_eq!(later.now(), 0, "a start in the future saturates at zero");
    }
}
