//! The specifications of `store`.

use super::*;
use crate::duration::Dur;
use std::path::Path;
use std::time::Duration;

#[test]
fn the_default_slack_is_the_one_constant() {
    assert_eq!(
        CheckConfig::default().recovery_slack,
        DEFAULT_RECOVERY_SLACK.get()
    );
    assert_eq!(DEFAULT_RECOVERY_SLACK, Dur::secs(5));
    let p = Path::new("run/test.yaml");
    let c = CheckConfig::from_yaml(p, "ttl: 1.5s\n").unwrap();
    assert_eq!(c.recovery_slack, DEFAULT_RECOVERY_SLACK.get());
    assert_eq!(
        c.ttl,
        Some(Duration::from_millis(1500)),
        "the harness's grammar"
    );
}

#[test]
fn reads_only_the_checker_keys_of_test_yaml() {
    let p = Path::new("run/test.yaml");
    let yaml = "name: t\nttl: 2s\nrecovery_slack: 500ms\nfail_on: [stale-accepted-write, stuck-lock]\nnemesis:\n  - pause\nimage: x\n";
    let c = CheckConfig::from_yaml(p, yaml).unwrap();
    assert_eq!(c.ttl, Some(Duration::from_secs(2)));
    assert_eq!(c.recovery_slack, Duration::from_millis(500));
    assert_eq!(c.fail_on.len(), 2);
    assert_eq!(c.workers, None);
    let c = CheckConfig::from_yaml(p, "workers: 5\nttl: 2s\n").unwrap();
    assert_eq!(c.workers, Some(5));
    let d = CheckConfig::from_yaml(p, "name: t\n").unwrap();
    assert_eq!(d, CheckConfig::default());
    assert_eq!(
        CheckConfig::from_yaml(p, "").unwrap(),
        CheckConfig::default()
    );
}

#[test]
fn config_errors_name_the_file_and_what_is_wrong() {
    let p = Path::new("run/test.yaml");
    let e = CheckConfig::from_yaml(p, "ttl: soon\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("run/test.yaml") && e.contains("ttl"), "{e}");
    let e = CheckConfig::from_yaml(p, "fail_on: [oops]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("oops") && e.contains("stuck-lock"), "{e}");
    let e = CheckConfig::from_yaml(p, "a: 1\nttl: [1, \n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("run/test.yaml") && e.contains("line"), "{e}");
}

#[test]
fn lines_are_numbered_across_chunks_blank_lines_and_a_missing_last_newline() {
    let dir = std::env::temp_dir().join(format!("fc-store-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.jsonl");
    let long = "y".repeat(3 << 20);
    std::fs::write(&path, format!("a\n\n{long}\nb\nc")).unwrap();
    let mut seen = Vec::new();
    let n = for_each_line(&path, |no, l| {
        seen.push((no, l.len()));
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 4);
    assert_eq!(seen, vec![(1, 1), (3, 3 << 20), (4, 1), (5, 1)]);
    let err = for_each_line(
        &path,
        |no, _| if no == 4 { Err("bad".into()) } else { Ok(()) },
    )
    .unwrap_err()
    .to_string();
    assert!(err.ends_with("x.jsonl:4: bad"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_naming_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("fc-store-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.jsonl");
    // Lines with multi-byte characters over two 1 MiB chunks, one bad line in the second.
    let bad = b"{\"k\":\"ab\xffc\"}".to_vec();
    let mut bytes = Vec::new();
    for i in 1..=12_000 {
        if i == 11_000 {
            bytes.extend_from_slice(&bad);
            bytes.push(b'\n');
        } else {
            bytes.extend_from_slice(format!("{{\"k\":\"\u{e9}t\u{e9} {i:0>90}\"}}\n").as_bytes());
        }
    }
    std::fs::write(&path, &bytes).unwrap();
    let utf8 = std::str::from_utf8(&bad).unwrap_err();
    let mut seen = 0;
    let err = for_each_line(&path, |no, l| {
        assert!(l.contains("\u{e9}t\u{e9}") && l.ends_with(&format!("{no:0>90}\"}}")));
        seen += 1;
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert_eq!(seen, 10_999);
    assert!(
        err.ends_with(&format!("h.jsonl:11000: not UTF-8 text: {utf8}")),
        "{err}"
    );
    // An earlier bad line is reported first, as when lines were checked one at a time.
    let err = for_each_line(&path, |no, _| {
        if no == 10_999 {
            Err("bad".into())
        } else {
            Ok(())
        }
    })
    .unwrap_err()
    .to_string();
    assert!(err.ends_with("h.jsonl:10999: bad"), "{err}");
    // A last line cut in the middle of a character is a torn write, not a malformed file.
    std::fs::write(&path, b"{}\n\n{\"k\":\"\xc3").unwrap();
    let err = for_each_line(&path, |_, _| Ok(())).unwrap_err();
    assert!(matches!(err, StoreError::TornTail { line: 3, .. }), "{err}");
    assert!(err
        .to_string()
        .contains("h.jsonl:3: the last line is cut off (not UTF-8 text"));
    let mut seen = 0;
    std::fs::write(&path, b"{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
    let err = for_each_line(&path, |_, l| {
        if l.ends_with('}') {
            seen += 1;
            Ok(())
        } else {
            Err("EOF while parsing".into())
        }
    })
    .unwrap_err();
    assert!(matches!(err, StoreError::TornTail { line: 3, .. }), "{err}");
    assert_eq!(
        seen, 2,
        "the whole lines before the torn one are handed over"
    );
    // A whole JSON value that is wrong, or a line that is not JSON, is malformed even last.
    for bad in [
        &b"{\"a\":1}\n{\"b\":2}"[..],
        b"{\"a\":1}\nnot json",
        b"{\"a\":1}\n{\"k\":\"\xff\"}",
    ] {
        std::fs::write(&path, bad).unwrap();
        let err = for_each_line(&path, |_, l| {
            l.contains("\"a\"").then_some(()).ok_or("bad".into())
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::Parse { line: 2, .. }), "{err}");
    }
    // The same bad line with its newline is malformed input.
    std::fs::write(&path, b"{\"a\":1}\n{\"a\":\n").unwrap();
    let err = for_each_line(&path, |_, l| {
        l.ends_with('}').then_some(()).ok_or("bad".into())
    })
    .unwrap_err();
    assert!(matches!(err, StoreError::Parse { line: 2, .. }), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
