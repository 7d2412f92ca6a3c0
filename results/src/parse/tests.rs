//! The parse paths against serde, line by line: same value or both an error.

use super::fast::{fast_event, fast_resource};
use crate::event::{Event, OpResult, OpType, Process, F};
use crate::event_ref::{EventRef, ResourceRef};
use crate::resource_log::{ResourceEntry, WriteResult};

/// The fast path and serde must agree on every line: same value or both an error.
fn agree(line: &str) {
    if let Some(o) = super::ordered::event(line) {
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
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l","value":{"read_back":"key gone"}}"#,
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
    assert!(super::ordered::event(full).is_some());
    for (line, index) in [(&lines[0], 9999999999999999999), (&lines[1], u64::MAX)] {
        assert_eq!(super::ordered::event(line).map(|e| e.index), Some(index));
    }
    assert!(EventRef::parse(&lines[2]).is_err());
}

/// An acquire whose adapter read its node or key back and found it gone says so on every path.
#[test]
fn a_grants_read_back_is_read_whichever_order_its_fields_come_in() {
    let gone = [
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l","owner":"w","lease":"x","value":{"read_back":"key x gone"}}"#,
        r#"{"value":{"read_back":"key x gone"},"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l"}"#,
    ];
    for line in gone {
        assert!(EventRef::parse(line).unwrap().read_back, "{line}");
    }
    let held = r#"{"index":1,"time":5,"process":2,"type":"ok","f":"acquire","lock":"l","owner":"w","lease":"x","token":3}"#;
    assert!(!EventRef::parse(held).unwrap().read_back);
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
        assert_eq!(super::ordered::event(&l), None, "{ws:?}");
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
        assert_eq!(super::ordered::event(&line), Some(ev.as_ref()), "{line}");
    }
    let line = serde_json::to_string(&n).unwrap();
    assert_eq!(
        super::ordered::event(&line),
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
    assert_eq!(super::ordered::resource(&line), Some(r.as_ref()), "{line}");
}

/// A keep-alive's `check` lines, as the writer serializes them and in other field
/// orders, read the same by every path; `held` must be a boolean (or null).
#[test]
fn check_lines_read_the_same_on_every_path() {
    let mut ask = Event::new(40, Process::Worker(3), OpType::Invoke, F::Check);
    ask.lock = Some("l".into());
    ask.owner = Some("worker-3".into());
    ask.lease = Some("/l/n_0000000007".into());
    ask.token = Some(4294967315);
    let mut held = ask.clone();
    (held.kind, held.held) = (OpType::Ok, Some(true));
    let mut not_held = held.clone();
    not_held.held = Some(false);
    let mut unanswered = ask.clone();
    (unanswered.kind, unanswered.error) = (OpType::Info, Some("timed out".into()));
    for e in [&ask, &held, &not_held, &unanswered] {
        let line = serde_json::to_string(e).unwrap();
        let ordered = super::ordered::event(&line).expect("the writer's own order");
        assert_eq!(ordered, e.as_ref(), "{line}");
        assert_eq!(ordered.held, e.held);
        agree(&line);
    }
    for line in [
        r#"{"held":true,"index":1,"time":5,"process":2,"type":"ok","f":"check","lock":"l"}"#,
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"check","held":null}"#,
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"check","held":"yes"}"#,
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"check","held":1}"#,
        r#"{"index":1,"time":5,"process":2,"type":"ok","f":"check","held":true,"held":false}"#,
    ] {
        agree(line);
    }
    let line = r#"{"held":false,"index":1,"time":5,"process":2,"type":"ok","f":"check"}"#;
    assert_eq!(EventRef::parse(line).unwrap().held, Some(false));
}

/// A check of a history held in memory (vs_porcupine's, a test's) streams every event's bytes
/// through the cache: the fields few events have stay out of line ([`crate::Detail`]), and a
/// fault's name is a boxed `str`. 232 bytes before the run-state fields came, 280 with them
/// inline.
#[cfg(target_pointer_width = "64")]
#[test]
fn an_event_stays_within_232_bytes() {
    assert!(std::mem::size_of::<EventRef<'_>>() <= 232);
}

#[test]
fn an_event_without_targets_or_error_has_no_detail_and_one_with_either_has_it() {
    let plain = r#"{"index":0,"time":0,"process":1,"type":"fail","f":"acquire","lock":"l"}"#;
    let e = EventRef::parse(plain).unwrap();
    assert!(e.detail.is_none() && e.error().is_none() && e.targets().is_empty());
    let failed =
        r#"{"index":0,"time":0,"process":1,"type":"fail","f":"acquire","lock":"l","error":"busy"}"#;
    let e = EventRef::parse(failed).unwrap();
    assert_eq!((e.error(), e.targets().len()), (Some("busy"), 0));
    let skipped = r#"{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-halves","value":{"targets":["etcd-1"]},"error":"skipped"}"#;
    let e = EventRef::parse(skipped).unwrap();
    assert_eq!(
        (e.error(), e.targets()),
        (Some("skipped"), &["etcd-1".into()][..])
    );
}
