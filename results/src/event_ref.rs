//! Borrowed views of one history event and one resource-log entry: what the checkers read.
//!
//! [`Event`] and [`ResourceEntry`] own their strings and keep the whole `value`; checking
//! millions of lines wants neither. [`EventRef`] and [`ResourceRef`] borrow from the line and
//! keep only what a checker needs. This file holds the types and the views of owned values;
//! reading them from a line is [`crate::parse`]'s.

use crate::event::{Event, OpResult, OpType, Process, F};
use crate::nemesis_event::targets;
use crate::resource_log::{ResourceEntry, WriteResult};
use std::borrow::Cow;

/// One history event as the checkers see it.
///
/// In the order written here (`repr(C)`): the fields every event's check reads first (which
/// event, whose, which operation, its token and lock, the holder's owner and lease), then those
/// of writes and counters and the rare ones. A check that holds its events in memory streams
/// them through the cache; with the compiler's order the fields a lock event is judged by were
/// spread over the whole record (vs_porcupine's engine: 12.17 M first-level cache misses in
/// the compiler's order, 10.72 M in this one, callgrind's cache simulation).
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C)]
pub struct EventRef<'a> {
    pub index: u64,
    pub time: u64,
    pub process: Process,
    pub kind: OpType,
    pub result: Option<OpResult>,
    /// A `check`'s answer (`held`).
    pub held: Option<bool>,
    /// The client library raised what it does not document (see [`Event::exception`]).
    pub exception: bool,
    /// An acquire `ok` whose adapter read its node or key back after the grant and did not find
    /// it (`value.read_back`): the library granted what the service may no longer hold.
    pub read_back: bool,
    pub token: Option<u64>,
    pub f: F,
    pub lock: Option<Cow<'a, str>>,
    pub owner: Option<Cow<'a, str>>,
    pub lease: Option<Cow<'a, str>>,
    pub key: Option<Cow<'a, str>>,
    pub op_id: Option<Cow<'a, str>>,
    pub highest_before: Option<u64>,
    /// `value` when it is an integer (reads and increments of the counter workload).
    pub int_value: Option<i64>,
    /// What few events carry ([`Detail`]), out of line: read through [`EventRef::targets`] and
    /// [`EventRef::error`].
    pub detail: Option<Box<Detail<'a>>>,
}

/// The fields of an event that few events have: a nemesis event's targets, an error. Kept out of
/// line, the events a check holds are smaller, and an event with neither costs no allocation
/// (one with either, one): the check of a history held in memory streams every event's bytes
/// through the cache (the measurement is in docs/performance.md).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Detail<'a> {
    /// What a nemesis event's fault hit (`value.targets`: workers, nodes, read by
    /// [`crate::nemesis_event::targets`]); empty otherwise.
    pub targets: Vec<Cow<'a, str>>,
    /// The event's `error` (why an operation failed; a nemesis start that was skipped).
    pub error: Option<Cow<'a, str>>,
}

impl<'a> Detail<'a> {
    /// The detail of an event with these targets and this error; none when it has neither.
    pub fn of(targets: Vec<Cow<'a, str>>, error: Option<Cow<'a, str>>) -> Option<Box<Detail<'a>>> {
        (!targets.is_empty() || error.is_some()).then(|| Box::new(Detail { targets, error }))
    }

    /// The detail of a worker's event with an error (no targets), for the parse's fast paths:
    /// `error.map(Detail::error)` costs a line without one a single test. Through
    /// [`Detail::of`] it was a call per line, 17 instructions (0.8% of the check of the large
    /// history), and always inlined, a drop of the unused parts, 18.
    pub fn error(error: Cow<'a, str>) -> Box<Detail<'a>> {
        Box::new(Detail {
            targets: Vec::new(),
            error: Some(error),
        })
    }
}

impl<'a> EventRef<'a> {
    /// What a nemesis event's fault hit; empty for any other event.
    pub fn targets(&self) -> &[Cow<'a, str>] {
        self.detail.as_ref().map_or(&[], |d| &d.targets)
    }

    /// The event's `error`, if it has one.
    pub fn error(&self) -> Option<&str> {
        self.detail.as_ref().and_then(|d| d.error.as_deref())
    }
}

/// One resource-log entry as the checkers see it (`value` is not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef<'a> {
    pub seq: u64,
    pub time: u64,
    pub key: Cow<'a, str>,
    pub process: u32,
    pub owner: Cow<'a, str>,
    pub lease: Cow<'a, str>,
    pub token: Option<u64>,
    pub op_id: Cow<'a, str>,
    pub highest_before: Option<u64>,
    pub result: WriteResult,
}

fn opt(s: &Option<String>) -> Option<Cow<'_, str>> {
    s.as_deref().map(Cow::Borrowed)
}

impl Event {
    /// The checkers' view of this event, borrowing its strings.
    pub fn as_ref(&self) -> EventRef<'_> {
        EventRef {
            index: self.index,
            time: self.time,
            process: self.process,
            kind: self.kind,
            f: self.f.clone(),
            lock: opt(&self.lock),
            owner: opt(&self.owner),
            lease: opt(&self.lease),
            token: self.token,
            key: opt(&self.key),
            op_id: opt(&self.op_id),
            result: self.result,
            highest_before: self.highest_before,
            held: self.held,
            int_value: self.value.as_ref().and_then(|v| v.as_i64()),
            exception: self.exception,
            read_back: read_back(self.value.as_ref()),
            detail: Detail::of(targets(self.value.as_ref()), opt(&self.error)),
        }
    }
}

/// Whether an event's `value` carries an acquire's read-back (`{"read_back": ...}`).
pub(crate) fn read_back(value: Option<&serde_json::Value>) -> bool {
    value.is_some_and(|v| v.get("read_back").is_some())
}

impl ResourceEntry {
    /// The checkers' view of this entry, borrowing its strings.
    pub fn as_ref(&self) -> ResourceRef<'_> {
        ResourceRef {
            seq: self.seq,
            time: self.time,
            key: Cow::Borrowed(&self.key),
            process: self.process,
            owner: Cow::Borrowed(&self.owner),
            lease: Cow::Borrowed(&self.lease),
            token: self.token,
            op_id: Cow::Borrowed(&self.op_id),
            highest_before: self.highest_before,
            result: self.result,
        }
    }
}
