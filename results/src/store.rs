//! Reading a stored run back for checking: the two JSONL logs, streamed line by line (so a
//! 10M-event history is never loaded whole), and the three keys of `test.yaml` the checkers need
//! (`ttl`, `recovery_slack`, `fail_on`); everything else in `test.yaml` belongs to the harness
//! and is ignored here. Every error names the file, and the line when there is one.

use crate::event_ref::{EventRef, ResourceRef};
use crate::verdict::AnomalyKind;
use serde::Deserialize;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What went wrong reading a run directory.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    /// The file's last line has no newline and cannot be read: the writer stopped mid-line (a
    /// crash, a kill). Every line before it was handed over; a checker can judge them and call
    /// the verdict unknown rather than refuse the whole run.
    #[error(
        "{path}:{line}: the last line is cut off ({message}): the writer stopped mid-line; \
         everything before it was read"
    )]
    TornTail {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

/// What the checkers read from `test.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckConfig {
    /// The lease TTL; `None` when the test has none (stuck-lock is then not applicable).
    pub ttl: Option<Duration>,
    /// How long past the TTL a lock may take to become acquirable again (default 5s).
    pub recovery_slack: Duration,
    /// Which kinds fail the run (default: [`AnomalyKind::default_fail_on`]).
    pub fail_on: Vec<AnomalyKind>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            ttl: None,
            recovery_slack: Duration::from_secs(5),
            fail_on: AnomalyKind::default_fail_on(),
        }
    }
}

#[derive(Deserialize)]
struct RawCheckConfig {
    #[serde(default)]
    ttl: Option<String>,
    #[serde(default)]
    recovery_slack: Option<String>,
    #[serde(default)]
    fail_on: Option<Vec<String>>,
}

impl CheckConfig {
    /// Parses the text of a `test.yaml`; `path` only names the file in errors.
    pub fn from_yaml(path: &Path, text: &str) -> Result<CheckConfig, StoreError> {
        let err = |message: String| StoreError::Config {
            path: path.to_path_buf(),
            message,
        };
        let raw: Option<RawCheckConfig> =
            serde_saphyr::from_str(text).map_err(|e| err(e.to_string()))?;
        let Some(raw) = raw else {
            return Ok(CheckConfig::default());
        };
        let mut cfg = CheckConfig::default();
        if let Some(t) = raw.ttl {
            cfg.ttl = Some(parse_duration(&t).map_err(|m| err(format!("ttl: {m}")))?);
        }
        if let Some(s) = raw.recovery_slack {
            cfg.recovery_slack =
                parse_duration(&s).map_err(|m| err(format!("recovery_slack: {m}")))?;
        }
        if let Some(kinds) = raw.fail_on {
            cfg.fail_on = kinds
                .iter()
                .map(|k| {
                    AnomalyKind::parse(k).ok_or_else(|| {
                        let all: Vec<_> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
                        err(format!(
                            "fail_on: unknown anomaly kind {k:?}; expected one of {}",
                            all.join(", ")
                        ))
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(cfg)
    }

    /// Reads `test.yaml` at `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<CheckConfig, StoreError> {
        match std::fs::read_to_string(path) {
            Ok(text) => CheckConfig::from_yaml(path, &text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(CheckConfig::default()),
            Err(source) => Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }
}

/// Parses `2s`, `500ms`, `1m30s`, `250us`, `10ns`, `1h` (units may be combined, largest first).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let bad = || format!("{s:?} is not a duration; write e.g. 2s or 500ms");
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let per_unit = match &rest[..unit] {
            "ns" => Duration::from_nanos(1),
            "us" | "µs" => Duration::from_micros(1),
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        let part = per_unit
            .checked_mul(u32::try_from(n).map_err(|_| bad())?)
            .ok_or_else(bad)?;
        total = total.checked_add(part).ok_or_else(bad)?;
        rest = &rest[unit..];
    }
    Ok(total)
}

/// Streams a JSONL file, calling `each(line_number, line)` for every non-blank line without
/// allocating or copying per line (lines are found with SIMD memchr in 1 MiB chunks). Returns
/// how many lines were handed over. `each` returns an error message for a line it cannot use;
/// it is reported with the file and line — as [`StoreError::TornTail`] when that line is the
/// last one and has no newline (the writer was cut off), as [`StoreError::Parse`] otherwise.
pub fn for_each_line(
    path: &Path,
    mut each: impl FnMut(u64, &str) -> Result<(), String>,
) -> Result<u64, StoreError> {
    let io_err = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut start, mut end) = (0usize, 0usize);
    let (mut line_no, mut count) = (0u64, 0u64);
    let parse_err = |line: u64, message: String| StoreError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut one = |line_no: u64, text: &str| -> Result<(), StoreError> {
        if text.as_bytes().first() != Some(&b'{') && text.trim().is_empty() {
            return Ok(());
        }
        each(line_no, text).map_err(|m| parse_err(line_no, m))?;
        count += 1;
        Ok(())
    };
    loop {
        if let Some(last) = memchr::memrchr(b'\n', &buf[start..end]) {
            let chunk = &buf[start..start + last + 1];
            // One UTF-8 check for the chunk's whole lines rather than one per line (the call
            // per short line cost more than the check). Slicing the checked text at newlines
            // cannot split a character. A chunk that fails is re-checked line by line, so the
            // error names the same line, with the same message, as before.
            if let Ok(text) = std::str::from_utf8(chunk) {
                let mut from = 0;
                for n in memchr::memchr_iter(b'\n', chunk) {
                    line_no += 1;
                    one(line_no, &text[from..n])?;
                    from = n + 1;
                }
            } else {
                for line in chunk[..last].split(|&c| c == b'\n') {
                    line_no += 1;
                    let text = std::str::from_utf8(line)
                        .map_err(|e| parse_err(line_no, format!("not UTF-8 text: {e}")))?;
                    one(line_no, text)?;
                }
            }
            start += last + 1;
        }
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
        let n = file.read(&mut buf[end..]).map_err(io_err)?;
        if n == 0 {
            if end > 0 {
                // A last line without its newline: fine if it reads; a torn write if it is
                // JSON (or UTF-8) that stops early; malformed like any other line otherwise.
                line_no += 1;
                let torn = |message: String| StoreError::TornTail {
                    path: path.to_path_buf(),
                    line: line_no,
                    message,
                };
                let text = std::str::from_utf8(&buf[..end]).map_err(|e| {
                    let message = format!("not UTF-8 text: {e}");
                    match e.error_len() {
                        None => torn(message), // a character cut in half
                        Some(_) => parse_err(line_no, message),
                    }
                })?;
                one(line_no, text).map_err(|e| match e {
                    StoreError::Parse { message, .. } if cut_short(text) => torn(message),
                    other => other,
                })?;
            }
            return Ok(count);
        }
        end += n;
    }
}

/// Whether `text` is JSON that stops before its value is complete (a write cut off), as
/// opposed to a whole value that is wrong, or text that is not JSON at all.
pub fn cut_short(text: &str) -> bool {
    matches!(
        serde_json::from_str::<serde::de::IgnoredAny>(text),
        Err(e) if e.is_eof()
    )
}

/// Streams `history.jsonl`, calling `each` with every event in file order.
pub fn stream_history(path: &Path, mut each: impl FnMut(&EventRef<'_>)) -> Result<u64, StoreError> {
    stream_history_lines(path, |_, e| each(e))
}

/// [`stream_history`], with each event's line number (from 1; blank lines are counted).
pub fn stream_history_lines(
    path: &Path,
    mut each: impl FnMut(u64, &EventRef<'_>),
) -> Result<u64, StoreError> {
    for_each_line(path, |line_no, line| {
        each(line_no, &EventRef::parse(line)?);
        Ok(())
    })
}

/// Streams `resource.jsonl`, calling `each` with every entry in file order.
pub fn stream_resource_log(
    path: &Path,
    mut each: impl FnMut(&ResourceRef<'_>),
) -> Result<u64, StoreError> {
    for_each_line(path, |_, line| {
        each(&ResourceRef::parse(line)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_people_write_them() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 250us "), Ok(Duration::from_micros(250)));
        for bad in ["", "2", "s", "2 s", "-1s", "2sec", "1.5s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_only_the_checker_keys_of_test_yaml() {
        let p = Path::new("run/test.yaml");
        let yaml = "name: t\nttl: 2s\nrecovery_slack: 500ms\nfail_on: [stale-accepted-write, stuck-lock]\nnemesis:\n  - pause\nimage: x\n";
        let c = CheckConfig::from_yaml(p, yaml).unwrap();
        assert_eq!(c.ttl, Some(Duration::from_secs(2)));
        assert_eq!(c.recovery_slack, Duration::from_millis(500));
        assert_eq!(c.fail_on.len(), 2);
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
                bytes.extend_from_slice(
                    format!("{{\"k\":\"\u{e9}t\u{e9} {i:0>90}\"}}\n").as_bytes(),
                );
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
}
