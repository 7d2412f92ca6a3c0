//! Borrowed views of one history event and one resource-log entry: what the checkers read.
//!
//! [`Event`] and [`ResourceEntry`] own their strings and keep the whole `value`; checking
//! millions of lines wants neither. [`EventRef`] and [`ResourceRef`] borrow from the line (via the
//! fast scanner in [`crate::scan`]) and keep only what a checker needs. Parsing is exactly as
//! strict as serde's: any line the fast path does not fully understand is re-parsed by serde_json,
//! whose error message is the one reported.

use crate::event::{Event, OpResult, OpType, Process, F};
use crate::resource_log::{ResourceEntry, WriteResult};
use crate::scan::{scan_object, Fallback, Raw};
use std::borrow::Cow;

/// One history event as the checkers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRef<'a> {
    pub index: u64,
    pub time: u64,
    pub process: Process,
    pub kind: OpType,
    pub f: F,
    pub lock: Option<Cow<'a, str>>,
    pub owner: Option<Cow<'a, str>>,
    pub lease: Option<Cow<'a, str>>,
    pub token: Option<u64>,
    pub key: Option<Cow<'a, str>>,
    pub op_id: Option<Cow<'a, str>>,
    pub result: Option<OpResult>,
    pub highest_before: Option<u64>,
    /// `value` when it is an integer (reads and increments of the counter workload).
    pub int_value: Option<i64>,
    /// What a nemesis event's fault hit (`value.targets`: workers, nodes); empty otherwise.
    pub targets: Vec<Cow<'a, str>>,
    /// The event's `error` (why an operation failed; a nemesis start that was skipped).
    pub error: Option<Cow<'a, str>>,
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
            int_value: self.value.as_ref().and_then(|v| v.as_i64()),
            targets: targets(self.value.as_ref())
                .map(|t| Cow::Borrowed(t.as_str()))
                .collect(),
            error: opt(&self.error),
        }
    }
}

/// The names under `value.targets` (a nemesis event's; a list, or one name), borrowed.
fn targets(value: Option<&serde_json::Value>) -> impl Iterator<Item = &String> {
    let targets = value.and_then(|v| v.get("targets"));
    let (list, one) = match targets {
        Some(serde_json::Value::Array(items)) => (items.as_slice(), None),
        Some(serde_json::Value::String(s)) => (&[][..], Some(s)),
        _ => (&[][..], None),
    };
    list.iter()
        .filter_map(|t| match t {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        })
        .chain(one)
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

fn owned(s: Option<String>) -> Option<Cow<'static, str>> {
    s.map(Cow::Owned)
}

impl EventRef<'_> {
    /// Parses one line of `history.jsonl`; the error is serde_json's message.
    // The ordered path is inlined here, building the value in place: returned through a
    // second call it cost a memcpy call per line, a tenth of the parse.
    pub fn parse(line: &str) -> Result<EventRef<'_>, String> {
        match crate::ordered::event(line) {
            Some(e) => Ok(e),
            None => Self::parse_unordered(line),
        }
    }

    #[inline(never)]
    fn parse_unordered(line: &str) -> Result<EventRef<'_>, String> {
        fast_event(line).or_else(|Fallback| {
            let e: Event = serde_json::from_str(line).map_err(|e| e.to_string())?;
            let targets = targets(e.value.as_ref())
                .map(|t| Cow::Owned(t.clone()))
                .collect();
            Ok(EventRef {
                targets,
                error: owned(e.error),
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
            })
        })
    }
}

impl ResourceRef<'_> {
    /// Parses one line of `resource.jsonl`; the error is serde_json's message.
    pub fn parse(line: &str) -> Result<ResourceRef<'_>, String> {
        match crate::ordered::resource(line) {
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
        _ => return None,
    })
}

fn fast_event(line: &str) -> Result<EventRef<'_>, Fallback> {
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
        int_value: None,
        targets: Vec::new(),
        error: None,
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
                _ => e.error = opt_str(v)?,
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

fn fast_resource(line: &str) -> Result<ResourceRef<'_>, Fallback> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path and serde must agree on every line: same value or both an error.
    fn agree(line: &str) {
        if let Some(o) = crate::ordered::event(line) {
            let s: Event = serde_json::from_str(line).expect("ordered path accepted a bad line");
            assert_eq!(o, s.as_ref(), "{line}");
        }
        let fast = fast_event(line);
        let serde = serde_json::from_str::<Event>(line);
        match (&fast, &serde) {
            (Ok(f), Ok(s)) => assert_eq!(*f, s.as_ref(), "{line}"),
            (Ok(_), Err(e)) => panic!("fast path accepted what serde rejects ({e}): {line}"),
            _ => {}
        }
        assert_eq!(EventRef::parse(line).is_ok(), serde.is_ok(), "{line}");
    }

    #[test]
    fn fast_path_matches_serde_on_good_and_bad_lines() {
        for line in [
            r#"{"index":7,"time":1500,"process":3,"type":"fail","f":"write","lock":"r","key":"k","value":"v1","token":1,"op_id":"3-1","result":"rejected-stale-fence","highest_before":2}"#,
            r#"{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-pause","value":{"fault":"pause","targets":["worker-3"]}}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"read","key":"c","value":41}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"read","key":"c","value":-4}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l","token":null,"extra":[1,2]}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l\u0041"}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","index":2}"#,
            r#"{"index":1,"time":5,"process":2,"type":"maybe","f":"acquire"}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok"}"#,
            r#"{"index":1,"time":5,"process":-2,"type":"ok","f":"acquire"}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","token":"7"}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"release","result":"nope"}"#,
            r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","error":"x"}"#,
            "not json",
        ] {
            agree(line);
        }
    }

    #[test]
    fn the_ordered_path_agrees_with_serde_at_its_edges() {
        let ok = |rest: &str| format!(r#"{{"index":1,"time":5,"process":2,"type":"ok",{rest}}}"#);
        let mut lines = vec![
            // Numbers: 19 digits (the unchecked loop), 20 (the checked one), overflow, and
            // what serde reads differently or not at all.
            r#"{"index":9999999999999999999,"time":0,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":18446744073709551615,"time":0,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":18446744073709551616,"time":0,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":99999999999999999999,"time":0,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":0,"time":00,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":0,"time":1.0,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":0,"time":1e3,"process":0,"type":"ok","f":"exit"}"#.into(),
            r#"{"index":0,"time":1,"process":4294967296,"type":"ok","f":"exit"}"#.into(),
            ok(r#""f":"acquire","token":18446744073709551615"#),
            ok(r#""f":"acquire","token":null"#),
            ok(r#""f":"read","value":9223372036854775808"#),
            // Strings around the eight-byte steps, with and without what ends a plain string.
            ok(r#""f":"acquire","lock":"1234567""#),
            ok(r#""f":"acquire","lock":"12345678""#),
            ok(r#""f":"acquire","lock":"123456789""#),
            ok(r#""f":"acquire","lock":"12345678"9""#),
            ok(r#""f":"acquire","lock":"1234567
""#),
            ok("\"f\":\"acquire\",\"lock\":\"1234567\u{7f}\u{e9}\u{1F512}\""),
            ok("\"f\":\"acquire\",\"lock\":\"12\t45678\""),
            ok(r#""f":"start-","lock":"l""#),
            ok(r#""f":"start-pause","lock":"l""#),
        ];
        // Every prefix of a full line: a key or value cut anywhere, at the end of the line.
        let full = r#"{"index":7,"time":1500,"process":3,"type":"ok","f":"write","lock":"r","owner":"o","lease":"L","token":1,"key":"k","value":"v1","op_id":"3-1","result":"accepted","highest_before":2,"error":"e"}"#;
        lines.extend((0..full.len()).map(|n| full[..n].to_string()));
        lines.push(format!("{full} \r"));
        lines.push(format!("{full}x"));
        for line in &lines {
            agree(line);
        }
        assert!(crate::ordered::event(full).is_some());
        for (line, index) in [(&lines[0], 9999999999999999999), (&lines[1], u64::MAX)] {
            assert_eq!(crate::ordered::event(line).map(|e| e.index), Some(index));
        }
        assert!(EventRef::parse(&lines[2]).is_err());
    }

    #[test]
    fn only_json_whitespace_may_follow_a_line() {
        let line = r#"{"index":0,"time":0,"process":1,"type":"invoke","f":"acquire","lock":"l"}"#;
        for ws in [" ", "\t", "\r", " \r\n"] {
            assert!(EventRef::parse(&format!("{line}{ws}")).is_ok(), "{ws:?}");
        }
        // Unicode spaces are not JSON whitespace: serde rejects them, so every path must.
        for ws in ["\u{b}", "\u{c}", "\u{85}", "\u{a0}", "\u{2028}"] {
            let l = format!("{line}{ws}");
            assert!(serde_json::from_str::<Event>(&l).is_err(), "{ws:?}");
            assert_eq!(crate::ordered::event(&l), None, "{ws:?}");
            assert!(EventRef::parse(&l).is_err(), "{ws:?}");
        }
    }

    #[test]
    fn resource_lines_parse_on_both_paths() {
        let line = r#"{"seq":4,"time":99,"key":"report:417","process":2,"owner":"worker-A","lease":"lease-1","token":1,"op_id":"2-7","value":"v1","highest_before":2,"result":"rejected-stale-fence"}"#;
        let fast = fast_resource(line).unwrap();
        let serde: ResourceEntry = serde_json::from_str(line).unwrap();
        assert_eq!(fast, serde.as_ref());
        let no_value = r#"{"seq":4,"time":99,"key":"k","process":2,"owner":"a","lease":"l","op_id":"x","result":"accepted"}"#;
        assert!(ResourceRef::parse(no_value).unwrap_err().contains("value"));
        let escaped = r#"{"seq":4,"time":99,"key":"k\n","process":2,"owner":"a","lease":"l","op_id":"x","value":1,"result":"accepted"}"#;
        assert_eq!(ResourceRef::parse(escaped).unwrap().key, "k\n");
    }

    #[test]
    fn lines_as_our_writers_serialize_them_take_the_ordered_path() {
        let mut e = Event::new(12, Process::Worker(4), OpType::Ok, F::Write);
        e.index = 3;
        e.lock = Some("l".into());
        e.owner = Some("w".into());
        e.lease = Some("L".into());
        e.token = Some(9);
        e.key = Some("k".into());
        e.value = Some("v".into());
        e.op_id = Some("4-1".into());
        e.result = Some(OpResult::Accepted);
        e.highest_before = Some(8);
        e.error = Some("none".into());
        let mut n = Event::new(5, Process::Nemesis, OpType::Info, F::Start("pause".into()));
        n.value = Some(serde_json::json!({"targets": ["worker-1"]}));
        let mut c = Event::new(5, Process::Worker(1), OpType::Ok, F::Read);
        c.value = Some(7.into());
        for ev in [
            e,
            c,
            Event::new(0, Process::Worker(0), OpType::Invoke, F::Exit),
        ] {
            let line = serde_json::to_string(&ev).unwrap();
            assert_eq!(crate::ordered::event(&line), Some(ev.as_ref()), "{line}");
        }
        let line = serde_json::to_string(&n).unwrap();
        assert_eq!(
            crate::ordered::event(&line),
            None,
            "nested values go to the scanner"
        );
        assert_eq!(EventRef::parse(&line).unwrap(), n.as_ref());
        let r = ResourceEntry {
            seq: 1,
            time: 2,
            key: "k".into(),
            process: 3,
            owner: "o".into(),
            lease: "L".into(),
            token: None,
            op_id: "x".into(),
            value: "v".into(),
            highest_before: Some(4),
            result: WriteResult::RejectedDuplicate,
        };
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(crate::ordered::resource(&line), Some(r.as_ref()), "{line}");
    }
}
