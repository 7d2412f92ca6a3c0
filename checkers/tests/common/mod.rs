//! Helpers shared by the checker specifications: run all checkers, list what they found.
#![allow(dead_code)]

use checkers::{check, CheckConfig};
use results::{Anomaly, AnomalyKind, Event, ResourceEntry, Validity, Verdict};
use std::time::Duration;

pub fn verdict(h: &[Event], r: &[ResourceEntry]) -> Verdict {
    check(h, Some(r), &CheckConfig::default())
}

pub fn with_ttl(h: &[Event], r: &[ResourceEntry], ttl_ms: u64, slack_ms: u64) -> Verdict {
    let cfg = CheckConfig {
        ttl: Some(Duration::from_millis(ttl_ms)),
        recovery_slack: Duration::from_millis(slack_ms),
        ..CheckConfig::default()
    };
    check(h, Some(r), &cfg)
}

pub fn kinds(v: &Verdict) -> Vec<AnomalyKind> {
    v.anomalies.iter().map(|a| a.kind).collect()
}

pub fn only(v: &Verdict, kind: AnomalyKind) -> Vec<&Anomaly> {
    v.anomalies.iter().filter(|a| a.kind == kind).collect()
}

pub fn status(v: &Verdict, kind: AnomalyKind) -> String {
    v.stats[kind.as_str()]["status"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

pub fn assert_clean(v: &Verdict) {
    assert!(v.anomalies.is_empty(), "{:#?}", v.anomalies);
    assert_eq!(v.valid, Validity::Valid, "{:?}", v.unknown_reasons);
}

/// A history with one harmless event, for specifications about the resource log alone
/// (an empty history is itself a reason for an unknown verdict).
pub fn idle() -> Vec<Event> {
    use checkers::testkit::*;
    history([invoke(9, Read).key("unrelated")])
}
