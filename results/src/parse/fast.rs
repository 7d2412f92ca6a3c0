//! The fast path of parsing: the strict scanner of [`super::scan`] over a line whose fields may
//! come in any order, borrowing every string. Any line outside its subset is handed to
//! serde_json, whose verdict (and error message) is the authoritative one.

use super::scan::{scan_object, Fallback, Raw};
use crate::event::{Event, OpResult, OpType, Process, F};
use crate::event_ref::{read_back, Detail, EventRef, ResourceRef};
use crate::nemesis_event::targets;
use crate::resource_log::{ResourceEntry, WriteResult};
use std::borrow::Cow;

fn owned(s: Option<String>) -> Option<Cow<'static, str>> {
    s.map(Cow::Owned)
}

impl EventRef<'_> {
    /// Parses one line of `history.jsonl`; the error is serde_json's message.
    // The ordered path is inlined here, building the value in place: returned through a
    // second call it cost a memcpy call per line, a tenth of the parse.
    pub fn parse(line: &str) -> Result<EventRef<'_>, String> {
        match super::ordered::event(line) {
            Some(e) => Ok(e),
            None => Self::parse_unordered(line),
        }
    }

    #[inline(never)]
    fn parse_unordered(line: &str) -> Result<EventRef<'_>, String> {
        fast_event(line).or_else(|Fallback| {
            let e: Event = serde_json::from_str(line).map_err(|e| e.to_string())?;
            let targets = targets(e.value.as_ref())
                .into_iter()
                .map(|t| Cow::Owned(t.into_owned()))
                .collect();
            Ok(EventRef {
                detail: Detail::of(targets, owned(e.error)),
                exception: e.exception,
                read_back: read_back(e.value.as_ref()),
                index: e.index,
                time: e.time,
                process: e.process,
                kind: e.kind,
                int_value: e.value.as_ref().and_then(|v| v.as_i64()),
                f: e.f,
                lock: owned(e.lock),
                owner: owned(e.owner),
                lease: owned(e.lease),
                token: e.token,
                key: owned(e.key),
                op_id: owned(e.op_id),
                result: e.result,
                highest_before: e.highest_before,
                held: e.held,
            })
        })
    }
}

impl ResourceRef<'_> {
    /// Parses one line of `resource.jsonl`; the error is serde_json's message.
    pub fn parse(line: &str) -> Result<ResourceRef<'_>, String> {
        match super::ordered::resource(line) {
            Some(r) => Ok(r),
            None => Self::parse_unordered(line),
        }
    }

    #[inline(never)]
    fn parse_unordered(line: &str) -> Result<ResourceRef<'_>, String> {
        fast_resource(line).or_else(|Fallback| {
            let e: ResourceEntry = serde_json::from_str(line).map_err(|e| e.to_string())?;
            Ok(ResourceRef {
                seq: e.seq,
                time: e.time,
                key: Cow::Owned(e.key),
                process: e.process,
                owner: Cow::Owned(e.owner),
                lease: Cow::Owned(e.lease),
                token: e.token,
                op_id: Cow::Owned(e.op_id),
                highest_before: e.highest_before,
                result: e.result,
            })
        })
    }
}

/// Marks a field as seen; a second occurrence is serde's "duplicate field" error.
fn once(seen: &mut u32, bit: u32) -> Result<(), Fallback> {
    if *seen & bit != 0 {
        return Err(Fallback);
    }
    *seen |= bit;
    Ok(())
}

fn opt_str(v: Raw<'_>) -> Result<Option<Cow<'_, str>>, Fallback> {
    match v {
        Raw::Str(s) => Ok(Some(Cow::Borrowed(s))),
        Raw::Null => Ok(None),
        _ => Err(Fallback),
    }
}

fn opt_u64(v: Raw<'_>) -> Result<Option<u64>, Fallback> {
    match v {
        Raw::UInt(n) => Ok(Some(n)),
        Raw::Null => Ok(None),
        _ => Err(Fallback),
    }
}

fn req_u64(v: Raw<'_>) -> Result<u64, Fallback> {
    match v {
        Raw::UInt(n) => Ok(n),
        _ => Err(Fallback),
    }
}

fn req_str(v: Raw<'_>) -> Result<&str, Fallback> {
    match v {
        Raw::Str(s) => Ok(s),
        _ => Err(Fallback),
    }
}

fn op_result(s: &str) -> Result<OpResult, Fallback> {
    Ok(match s {
        "accepted" => OpResult::Accepted,
        "rejected-stale-fence" => OpResult::RejectedStaleFence,
        "rejected-duplicate" => OpResult::RejectedDuplicate,
        "released" => OpResult::Released,
        "release-rejected-not-owner" => OpResult::ReleaseRejectedNotOwner,
        _ => return Err(Fallback),
    })
}

/// The position of a known history field (a `match` compiles to a length switch, which is
/// what makes the fast path fast).
fn event_field(k: &str) -> Option<u32> {
    Some(match k {
        "index" => 0,
        "time" => 1,
        "process" => 2,
        "type" => 3,
        "f" => 4,
        "lock" => 5,
        "owner" => 6,
        "lease" => 7,
        "token" => 8,
        "key" => 9,
        "value" => 10,
        "op_id" => 11,
        "result" => 12,
        "highest_before" => 13,
        "error" => 14,
        "exception" => 15,
        "held" => 16,
        _ => return None,
    })
}

pub(super) fn fast_event(line: &str) -> Result<EventRef<'_>, Fallback> {
    let (mut index, mut time, mut process, mut kind, mut f) = (None, None, None, None, None);
    let mut e = EventRef {
        index: 0,
        time: 0,
        process: Process::Nemesis,
        kind: OpType::Info,
        f: F::Exit,
        lock: None,
        owner: None,
        lease: None,
        token: None,
        key: None,
        op_id: None,
        result: None,
        highest_before: None,
        held: None,
        int_value: None,
        exception: false,
        read_back: false,
        detail: None,
    };
    let mut seen = 0u32;
    scan_object(
        line,
        |k| k == "value" || event_field(k).is_none(),
        |k, v| {
            let Some(pos) = event_field(k) else {
                return Ok(()); // serde ignores unknown fields
            };
            once(&mut seen, 1 << pos)?;
            match pos {
                0 => index = Some(req_u64(v)?),
                1 => time = Some(req_u64(v)?),
                2 => {
                    process = Some(match v {
                        Raw::UInt(p) => Process::Worker(u32::try_from(p).map_err(|_| Fallback)?),
                        Raw::Str("nemesis") => Process::Nemesis,
                        _ => return Err(Fallback),
                    })
                }
                3 => {
                    kind = Some(match req_str(v)? {
                        "invoke" => OpType::Invoke,
                        "ok" => OpType::Ok,
                        "fail" => OpType::Fail,
                        "info" => OpType::Info,
                        _ => return Err(Fallback),
                    })
                }
                4 => f = Some(F::parse(req_str(v)?).ok_or(Fallback)?),
                5 => e.lock = opt_str(v)?,
                6 => e.owner = opt_str(v)?,
                7 => e.lease = opt_str(v)?,
                8 => e.token = opt_u64(v)?,
                9 => e.key = opt_str(v)?,
                10 => {
                    e.int_value = match v {
                        Raw::UInt(n) => Some(i64::try_from(n).map_err(|_| Fallback)?),
                        // An object (an acquire's read-back) or a number this path does not
                        // read: serde's, and such lines are few.
                        Raw::Skipped => return Err(Fallback),
                        _ => None,
                    }
                }
                11 => e.op_id = opt_str(v)?,
                12 => {
                    e.result = match v {
                        Raw::Null => None,
                        v => Some(op_result(req_str(v)?)?),
                    }
                }
                13 => e.highest_before = opt_u64(v)?,
                14 => e.detail = opt_str(v)?.map(Detail::error),
                16 => {
                    e.held = match v {
                        Raw::Bool(b) => Some(b),
                        Raw::Null => None,
                        _ => return Err(Fallback),
                    }
                }
                _ => {
                    e.exception = match v {
                        Raw::Bool(b) => b,
                        _ => return Err(Fallback),
                    }
                }
            }
            Ok(())
        },
    )?;
    e.index = index.ok_or(Fallback)?;
    e.time = time.ok_or(Fallback)?;
    e.process = process.ok_or(Fallback)?;
    if e.process == Process::Nemesis {
        // Its `value` names what the fault hit, which only serde reads (nemesis lines are few).
        return Err(Fallback);
    }
    e.kind = kind.ok_or(Fallback)?;
    e.f = f.ok_or(Fallback)?;
    Ok(e)
}

fn resource_field(k: &str) -> Option<u32> {
    Some(match k {
        "seq" => 0,
        "time" => 1,
        "key" => 2,
        "process" => 3,
        "owner" => 4,
        "lease" => 5,
        "token" => 6,
        "op_id" => 7,
        "value" => 8,
        "highest_before" => 9,
        "result" => 10,
        _ => return None,
    })
}

pub(super) fn fast_resource(line: &str) -> Result<ResourceRef<'_>, Fallback> {
    let (mut seq, mut time, mut key, mut process, mut owner, mut lease) =
        (None, None, None, None, None, None);
    let (mut token, mut op_id, mut highest_before, mut result) = (None, None, None, None);
    let mut seen = 0u32;
    scan_object(
        line,
        |k| k == "value" || resource_field(k).is_none(),
        |k, v| {
            let Some(pos) = resource_field(k) else {
                return Ok(());
            };
            once(&mut seen, 1 << pos)?;
            match pos {
                0 => seq = Some(req_u64(v)?),
                1 => time = Some(req_u64(v)?),
                2 => key = Some(req_str(v)?),
                3 => process = Some(u32::try_from(req_u64(v)?).map_err(|_| Fallback)?),
                4 => owner = Some(req_str(v)?),
                5 => lease = Some(req_str(v)?),
                6 => token = opt_u64(v)?,
                7 => op_id = Some(req_str(v)?),
                8 => {}
                9 => highest_before = opt_u64(v)?,
                _ => {
                    result = Some(match req_str(v)? {
                        "accepted" => WriteResult::Accepted,
                        "rejected-stale-fence" => WriteResult::RejectedStaleFence,
                        "rejected-duplicate" => WriteResult::RejectedDuplicate,
                        _ => return Err(Fallback),
                    })
                }
            }
            Ok(())
        },
    )?;
    if seen & (1 << 8) == 0 {
        return Err(Fallback); // `value` is required: let serde say so
    }
    Ok(ResourceRef {
        seq: seq.ok_or(Fallback)?,
        time: time.ok_or(Fallback)?,
        key: Cow::Borrowed(key.ok_or(Fallback)?),
        process: process.ok_or(Fallback)?,
        owner: Cow::Borrowed(owner.ok_or(Fallback)?),
        lease: Cow::Borrowed(lease.ok_or(Fallback)?),
        token,
        op_id: Cow::Borrowed(op_id.ok_or(Fallback)?),
        highest_before,
        result: result.ok_or(Fallback)?,
    })
}
