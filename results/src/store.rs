//! Reading a stored run back for checking: the two JSONL logs, streamed line by line (so a
//! 10M-event history is never loaded whole), and the three keys of `test.yaml` the checkers need
//! (`ttl`, `recovery_slack`, `fail_on`); everything else in `test.yaml` belongs to the harness
//! and is ignored here. Every error names the file, and the line when there is one.

use crate::duration::Dur;
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

/// How long past the TTL a lock may take to become acquirable again when a test does not say:
/// the one default, of the harness validating a test and of a stored run read back without it.
pub const DEFAULT_RECOVERY_SLACK: Dur = Dur::secs(5);

/// What the checkers read from `test.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckConfig {
    /// The lease TTL; `None` when the test has none (stuck-lock is then not applicable).
    pub ttl: Option<Duration>,
    /// How long past the TTL a lock may take to become acquirable again
    /// ([`DEFAULT_RECOVERY_SLACK`] when `test.yaml` gives none).
    pub recovery_slack: Duration,
    /// Which kinds fail the run (default: [`AnomalyKind::default_fail_on`]).
    pub fail_on: Vec<AnomalyKind>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            ttl: None,
            recovery_slack: DEFAULT_RECOVERY_SLACK.get(),
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
            cfg.ttl = Some(Dur::parse(&t).map_err(|m| err(format!("ttl: {m}")))?.get());
        }
        if let Some(s) = raw.recovery_slack {
            cfg.recovery_slack = Dur::parse(&s)
                .map_err(|m| err(format!("recovery_slack: {m}")))?
                .get();
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
mod tests;
