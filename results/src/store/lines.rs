//! A JSONL file of a run streamed line by line (so a 10M-event history is never loaded whole),
//! and the two logs read through it into the checkers' borrowed views.

use super::StoreError;
use crate::event_ref::{EventRef, ResourceRef};
use std::fs::File;
use std::io::Read;
use std::path::Path;

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
