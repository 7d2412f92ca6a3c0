//! The service's lane of the timeline, from its own record (`service.jsonl`): each key that
//! holds one of the run's locks, read as the checkers read it ([`checkers::service_keys`]), from
//! its put to its delete or expiry, coloured by the worker whose grant names it, or marked as
//! named by none (a key the service held for nobody who knew it).

use super::super::timeline::{Lane, MasterSwitch, ServiceBar, ServiceLane, Span};
use super::super::ReportInput;
use checkers::service_keys::{holds_lock, names};
use results::service_log::{ServiceEntry, ServiceWhat};
use results::F;
use std::collections::{BTreeMap, BTreeSet};

/// The lane, or `None` when the run has no record.
pub(super) fn lane(input: &ReportInput<'_>, lanes: &[Lane], end: u64) -> Option<ServiceLane> {
    let record = input.service;
    if record.is_empty() {
        return None;
    }
    let locks: BTreeSet<&str> = (input.history.iter())
        .filter(|e| e.f == F::Acquire)
        .filter_map(|e| e.lock.as_deref())
        .collect();
    let ours = |e: &ServiceEntry| locks.iter().any(|l| holds_lock(e, l));
    let mut nodes: Vec<Option<String>> = Vec::new();
    let mut row_of = |node: &Option<String>| match nodes.iter().position(|n| n == node) {
        Some(row) => row,
        None => {
            nodes.push(node.clone());
            nodes.len() - 1
        }
    };
    let mut keys = Vec::new();
    let mut standing: BTreeMap<(Option<String>, String), (&ServiceEntry, usize)> = BTreeMap::new();
    let mut blind = Vec::new();
    let mut cut_since: Option<u64> = None;
    let began = record
        .iter()
        .find(|e| e.what == ServiceWhat::Watching)
        .map_or(end, |e| e.time);
    if began > 0 {
        blind.push(Span {
            start: 0,
            end: began,
            label: "before the record began".into(),
        });
    }
    let bar = |put: &ServiceEntry, row: usize, end: u64, ended: &'static str| ServiceBar {
        start: put.time,
        end: end.max(put.time),
        row,
        key: put.key.clone().unwrap_or_default(),
        holder: put.owner.clone().or_else(|| put.value.clone()),
        lane: lane_naming(lanes, put),
        ended,
    };
    for e in record {
        match e.what {
            ServiceWhat::Gap => {
                cut_since.get_or_insert(e.time);
            }
            ServiceWhat::Watching => {
                if let Some(since) = cut_since.take() {
                    blind.push(Span {
                        start: since.min(e.time),
                        end: e.time,
                        label: "the record has a gap".into(),
                    });
                }
            }
            _ => {}
        }
        let Some(key) = e.key.clone().filter(|_| ours(e)) else {
            continue;
        };
        let at = (e.node.clone(), key);
        match e.what {
            ServiceWhat::Put => {
                let same = standing
                    .get(&at)
                    .is_some_and(|(s, _)| s.created == e.created && s.value == e.value);
                if !same {
                    if let Some((put, row)) = standing.remove(&at) {
                        keys.push(bar(put, row, e.time, "replaced"));
                    }
                    let row = row_of(&e.node);
                    standing.insert(at, (e, row));
                }
            }
            ServiceWhat::Delete | ServiceWhat::Expired => {
                if let Some((put, row)) = standing.remove(&at) {
                    let ended = if e.what == ServiceWhat::Delete {
                        "deleted"
                    } else {
                        "expired"
                    };
                    keys.push(bar(put, row, e.time, ended));
                }
            }
            _ => {}
        }
    }
    for (put, row) in standing.into_values() {
        keys.push(bar(put, row, end, "still there"));
    }
    // A gap written as the run ended may come after the last event the drawing spans.
    if let Some(since) = cut_since {
        blind.push(Span {
            start: since.min(end),
            end,
            label: "the record has a gap".into(),
        });
    }
    if nodes.is_empty() {
        nodes.push(None);
    }
    keys.sort_by_key(|k| (k.row, k.start));
    let masters = (record.iter())
        .filter(|e| e.what == ServiceWhat::Master)
        .map(|e| MasterSwitch {
            at: e.time,
            sentinel: e.node.clone().unwrap_or_default(),
            master: e.value.clone().unwrap_or_default(),
        })
        .collect();
    Some(ServiceLane {
        nodes,
        keys,
        blind,
        masters,
    })
}

/// The lane whose grant (a hold's lease) names the key the service put.
fn lane_naming(lanes: &[Lane], put: &ServiceEntry) -> Option<usize> {
    lanes.iter().position(|lane| {
        lane.holds
            .iter()
            .any(|h| h.lease.as_deref().is_some_and(|l| names(l, put)))
    })
}
