//! What a run reached of its lock client's machinery: holds that outlived the lease (so the
//! library's renewal, heartbeat or keep-alive carried them), the questions asked of the library
//! and its answers, the errors it raised, and the renewals its adapter saw it make. A valid
//! verdict over a run that reached none of these says nothing about the library's renewal,
//! retry and recovery code, and the summary, the report, JUnit and the matrix say so
//! (docs/design.md, "Driving a library as applications do"). Counted from the same stream of
//! events the checkers read, and from the adapters' `renewed` and `retry` events in the
//! workers' logs.

use crate::{EventRef, OpType, Process, F};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The counts of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// Acquisitions granted.
    pub holds: u64,
    /// Holds that lasted longer than the lease.
    pub holds_past_ttl: u64,
    /// Questions asked of the lock client (`f = check`).
    pub checks: u64,
    /// Of those, answered "not held".
    pub checks_not_held: u64,
    /// Acquires, releases and checks that ended `info` (the library raised or timed out).
    pub library_errors: u64,
    /// Of all outcomes, those marked as an error the library does not document.
    pub exceptions: u64,
    /// Renewals the adapters saw their library make (`renewed` events).
    pub renewals_seen: u64,
    /// Retries the adapters saw their library make (`retry` events).
    pub retries_seen: u64,
}

/// Counts a run's events as they stream past.
#[derive(Debug)]
pub struct ReachCounter {
    ttl_ns: u64,
    open: HashMap<u32, u64>,
    reach: Reach,
}

impl ReachCounter {
    pub fn new(ttl: std::time::Duration) -> Self {
        ReachCounter {
            ttl_ns: ttl.as_nanos() as u64,
            open: HashMap::new(),
            reach: Reach::default(),
        }
    }

    /// One event, in history order.
    pub fn see(&mut self, e: &EventRef<'_>) {
        let Process::Worker(p) = e.process else {
            return;
        };
        let r = &mut self.reach;
        r.exceptions += u64::from(e.exception);
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) => {
                r.holds += 1;
                self.open.insert(p, e.time);
            }
            (F::Check, OpType::Invoke) => r.checks += 1,
            (F::Check, OpType::Ok) => r.checks_not_held += u64::from(e.held == Some(false)),
            (F::Check, OpType::Info) => r.library_errors += 1,
            (F::Check, _) => {}
            (F::Acquire | F::Release, OpType::Info) => {
                r.library_errors += 1;
                self.close(p, e.time);
            }
            (F::Release, OpType::Invoke) | (F::LeaseLost | F::Exit, _) | (_, OpType::Info) => {
                self.close(p, e.time)
            }
            _ => {}
        }
    }

    /// The counts, every hold still open ending at `end` (ns), the adapters' events read from
    /// the workers' logs under `nodes` (absent for a history alone).
    pub fn finish(mut self, end: u64, nodes: Option<&Path>) -> Reach {
        for (_, since) in std::mem::take(&mut self.open) {
            self.past_ttl(since, end);
        }
        if let Some(dir) = nodes {
            let (renewed, retried) = adapter_events(dir);
            self.reach.renewals_seen = renewed;
            self.reach.retries_seen = retried;
        }
        self.reach
    }

    fn close(&mut self, process: u32, at: u64) {
        if let Some(since) = self.open.remove(&process) {
            self.past_ttl(since, at);
        }
    }

    fn past_ttl(&mut self, since: u64, until: u64) {
        self.reach.holds_past_ttl += u64::from(until.saturating_sub(since) > self.ttl_ns);
    }
}

/// The `renewed` and `retry` events the workers' adapters reported, as the worker logs them
/// (`adapter <name>: event renewed: ...`).
fn adapter_events(nodes: &Path) -> (u64, u64) {
    let Ok(dir) = std::fs::read_dir(nodes) else {
        return (0, 0);
    };
    let (mut renewed, mut retried) = (0, 0);
    for entry in dir.flatten() {
        let name = entry.file_name();
        // `<container>.log`, the container named `...-worker-<n>`.
        if !name.to_string_lossy().contains("worker-") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        for line in text.lines().filter(|l| l.contains("adapter ")) {
            renewed += u64::from(line.contains(": event renewed"));
            retried += u64::from(line.contains(": event retry"));
        }
    }
    (renewed, retried)
}

impl Reach {
    /// What a run's `results.json` says it reached, if it says.
    pub fn of(verdict: &crate::Verdict) -> Option<Reach> {
        serde_json::from_value(verdict.stats.get("reach")?.clone()).ok()
    }

    /// Whether the run reached none of the library's renewal, retry or recovery paths.
    pub fn nothing(&self) -> bool {
        self.holds_past_ttl == 0
            && self.checks == 0
            && self.library_errors == 0
            && self.renewals_seen == 0
            && self.retries_seen == 0
    }

    /// One line for the summary and the report.
    pub fn line(&self) -> String {
        if self.nothing() {
            return format!(
                "none of the client's renewal, retry or recovery paths: no hold of {} outlived \
                 the lease, no check asked, no library error, no renewal seen",
                self.holds
            );
        }
        format!(
            "{} of {} holds outlived the lease · {} checks asked ({} answered not held) · {} \
             library errors ({} undocumented) · {} renewals and {} retries seen",
            self.holds_past_ttl,
            self.holds,
            self.checks,
            self.checks_not_held,
            self.library_errors,
            self.exceptions,
            self.renewals_seen,
            self.retries_seen
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;

    fn ev(index: u64, time_s: u64, p: u32, kind: OpType, f: F) -> Event {
        let mut e = Event::new(time_s * 1_000_000_000, Process::Worker(p), kind, f);
        e.index = index;
        e
    }

    fn count(events: &[Event], end_s: u64) -> Reach {
        let mut c = ReachCounter::new(std::time::Duration::from_secs(2));
        for e in events {
            c.see(&e.as_ref());
        }
        c.finish(end_s * 1_000_000_000, None)
    }

    #[test]
    fn short_holds_and_no_questions_reach_nothing_and_say_so() {
        let h = [
            ev(0, 1, 0, OpType::Invoke, F::Acquire),
            ev(1, 1, 0, OpType::Ok, F::Acquire),
            ev(2, 2, 0, OpType::Invoke, F::Release),
            ev(3, 2, 0, OpType::Ok, F::Release),
        ];
        let r = count(&h, 10);
        assert_eq!((r.holds, r.holds_past_ttl), (1, 0));
        assert!(r.nothing());
        assert!(r.line().starts_with("none of the client's"), "{}", r.line());
    }

    #[test]
    fn the_adapters_renewals_and_retries_are_read_from_the_workers_logs() {
        let dir = tempfile::tempdir().unwrap();
        let log = "adapter tooz: event renewed: heartbeat\nadapter tooz: event retry: again\n\
                   adapter tooz: event renewed: heartbeat\nother line\n";
        std::fs::write(dir.path().join("fc-t-1234-j1-worker-2.log"), log).unwrap();
        std::fs::write(dir.path().join("fc-t-1234-j1-zk-1.log"), log).unwrap();
        let c = ReachCounter::new(std::time::Duration::from_secs(2));
        let r = c.finish(0, Some(dir.path()));
        assert_eq!(
            (r.renewals_seen, r.retries_seen),
            (2, 1),
            "the workers' logs only"
        );
    }

    #[test]
    fn a_hold_past_the_lease_a_check_and_an_info_are_each_counted() {
        let mut not_held = ev(4, 5, 0, OpType::Ok, F::Check);
        not_held.held = Some(false);
        let h = [
            ev(0, 1, 0, OpType::Invoke, F::Acquire),
            ev(1, 1, 0, OpType::Ok, F::Acquire),
            ev(2, 4, 0, OpType::Invoke, F::Check),
            not_held,
            ev(5, 6, 0, OpType::Invoke, F::Release),
            ev(6, 6, 0, OpType::Info, F::Release),
            ev(7, 7, 1, OpType::Invoke, F::Acquire),
            ev(8, 7, 1, OpType::Ok, F::Acquire),
        ];
        let r = count(&h, 12);
        assert_eq!(r.holds, 2);
        assert_eq!(
            r.holds_past_ttl, 2,
            "5 s, and the hold still open at the end"
        );
        assert_eq!((r.checks, r.checks_not_held), (1, 1));
        assert_eq!(r.library_errors, 1);
        assert!(!r.nothing());
    }
}
