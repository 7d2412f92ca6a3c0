//! Who the lock service itself says held a stuck lock, from its own record (`service.jsonl`,
//! docs/design.md): the key naming the lock that stood from before the window to its deadline,
//! first in its queue (the lowest creation, else the earliest put), with its owner, value,
//! creation, since when it stood, and how often the service shows it renewed in the window. Or
//! that no such key stood: the service had the lock free while clients failed to take it.
//!
//! What the record can say: a key "names" the lock when it holds the lock at the service
//! ([`crate::service_keys::holds_lock`]: the lock's name is part of it and a lease, session or
//! expiry ties it; PostgreSQL's advisory keys are hashes, so there the record says nothing).
//! Renewals show where the service records them: a Redis `PEXPIRE`; an etcd lease or a
//! ZooKeeper session renewed, which renews every key it owns. A window that a gap of the record touches is left unsaid.

use results::service_log::{ServiceEntry, ServiceWhat};
use results::Anomaly;
use serde_json::json;
use std::collections::BTreeMap;

/// A key standing at the service, as the record shows it.
#[derive(Debug, Clone)]
struct Standing<'a> {
    entry: &'a ServiceEntry,
    since: u64,
    renewals: u64,
}

/// What the record says of one window.
#[derive(Debug)]
enum Said<'a> {
    /// The record cannot tell (why).
    Unsaid(String),
    /// No key naming the lock stood through the window.
    Free,
    Held(Standing<'a>),
}

/// Adds the service's holder to a stuck-lock anomaly's evidence and diagnosis.
pub(super) fn amend(anomaly: &mut Anomaly, record: &[ServiceEntry]) {
    let Some(lock) = anomaly.evidence.lock.clone() else {
        return;
    };
    let window = |name: &str| anomaly.evidence.other.get(name).and_then(|v| v.as_u64());
    let (Some(start), Some(deadline)) = (window("window_start"), window("deadline")) else {
        return;
    };
    let said = judge(record, &lock, start, deadline);
    let obs = &mut anomaly.diagnosis.observation;
    match said {
        Said::Unsaid(why) => {
            anomaly
                .evidence
                .other
                .insert("service_holder".into(), json!({ "unknown": why }));
        }
        Said::Free => {
            anomaly
                .evidence
                .other
                .insert("service_holder".into(), json!(null));
            obs.push_str(
                "; the lock service's own record shows no key of this lock standing through the \
                 window: the service had the lock free while the clients failed to take it",
            );
        }
        Said::Held(h) => {
            let e = h.entry;
            let mut holder = json!({
                "key": e.key,
                "since_ns": h.since,
                "renewals_in_window": h.renewals,
            });
            for (name, value) in [
                ("owner", json!(e.owner)),
                ("value", json!(e.value)),
                ("created", json!(e.created)),
                ("node", json!(e.node)),
            ] {
                if !value.is_null() {
                    holder[name] = value;
                }
            }
            anomaly
                .evidence
                .other
                .insert("service_holder".into(), holder);
            let who = e
                .owner
                .as_deref()
                .or(e.value.as_deref())
                .map_or(String::new(), |w| format!(" of {w}"));
            obs.push_str(&format!(
                "; the lock service's own record shows {}{who} standing from t={}ns through the \
                 deadline",
                e.key.as_deref().unwrap_or("the lock's key"),
                h.since
            ));
            if h.renewals > 0 {
                obs.push_str(&format!(
                    ", renewed {} time{} within the window: its holder's client kept the lease \
                     alive while nobody else could take the lock",
                    h.renewals,
                    if h.renewals == 1 { "" } else { "s" }
                ));
            }
        }
    }
}

fn judge<'a>(record: &'a [ServiceEntry], lock: &str, start: u64, deadline: u64) -> Said<'a> {
    let names = |e: &ServiceEntry| crate::service_keys::holds_lock(e, lock);
    if !record.iter().any(names) {
        return Said::Unsaid("no key of the service's record names the lock".into());
    }
    if let Some(why) = blind(record, start, deadline) {
        return Said::Unsaid(why);
    }
    // Keys standing, by (node, key).
    let mut standing: BTreeMap<(Option<&str>, &str), Standing<'a>> = BTreeMap::new();
    for e in record.iter().take_while(|e| e.time <= deadline) {
        // An etcd lease's or a ZooKeeper session's renewal renews every key it owns.
        if (e.what, &e.key) == (ServiceWhat::Renewed, &None) {
            let tied = |s: &&mut Standing<'_>| e.owner.is_some() && s.entry.owner == e.owner;
            for s in standing.values_mut().filter(tied) {
                if e.time >= start {
                    s.renewals += 1;
                }
            }
            continue;
        }
        let Some(key) = e.key.as_deref().filter(|_| names(e)) else {
            continue;
        };
        let at = (e.node.as_deref(), key);
        match e.what {
            ServiceWhat::Put => {
                let same = standing
                    .get(&at)
                    .is_some_and(|s| s.entry.created == e.created && s.entry.value == e.value);
                if !same {
                    standing.insert(
                        at,
                        Standing {
                            entry: e,
                            since: e.time,
                            renewals: 0,
                        },
                    );
                }
            }
            ServiceWhat::Renewed => {
                if let Some(s) = standing.get_mut(&at) {
                    if e.time >= start {
                        s.renewals += 1;
                    }
                }
            }
            ServiceWhat::Delete | ServiceWhat::Expired => {
                standing.remove(&at);
            }
            ServiceWhat::Watching
            | ServiceWhat::Gap
            | ServiceWhat::Progress
            | ServiceWhat::Granted
            | ServiceWhat::Ended
            | ServiceWhat::Master => {}
        }
    }
    standing
        .into_values()
        .filter(|s| s.since <= start)
        .min_by_key(|s| (s.entry.created.unwrap_or(i64::MAX), s.since))
        .map_or(Said::Free, Said::Held)
}

/// Why the record cannot speak for [start, deadline]: it began after `start`, or a stream was
/// cut off at some time within it.
fn blind(record: &[ServiceEntry], start: u64, deadline: u64) -> Option<String> {
    let began = record.iter().find(|e| e.what == ServiceWhat::Watching);
    if began.is_none_or(|b| b.time > start) {
        return Some("the service's record began after the window started".into());
    }
    match crate::service_keys::gap_between(record, start, deadline)? {
        (since, Some(until)) => Some(format!(
            "the service's record has a gap from t={since}ns to t={until}ns"
        )),
        (since, None) => Some(format!(
            "the service's record has a gap from t={since}ns on"
        )),
    }
}
