//! The decision log, `resource.jsonl`. Each decision becomes one line handed to the kernel (one
//! `write`) before the server replies, so killing the resource loses no acknowledged decision.
//! `seq` and `time` are assigned under one lock together with the append: file order, seq order
//! and time order are the same order.
//!
//! A resource restarted after a kill reopens its log: a torn last line (the kill landed inside
//! the write, so that decision was never acknowledged) is cut off, seqs continue after the last
//! complete line, and the entries are handed back so that a stateless backend can rebuild itself.

use results::jsonl::{JsonlError, JsonlWriter};
use results::{ResourceEntry, RunClock, WriteResult};
use std::path::Path;
use std::sync::Mutex;

use super::protocol::WriteRequest;

#[derive(Debug)]
pub struct DecisionLog {
    writer: JsonlWriter,
    clock: RunClock,
    next_seq: Mutex<u64>,
}

impl DecisionLog {
    /// Opens (or creates) the log at `path`, returning the decisions already in it.
    pub fn open(path: &Path, clock: RunClock) -> Result<(Self, Vec<ResourceEntry>), JsonlError> {
        let io = |source| JsonlError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut entries = Vec::new();
        if path.exists() {
            let bytes = std::fs::read(path).map_err(io)?;
            let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            if complete < bytes.len() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io)?;
                f.set_len(complete as u64).map_err(io)?;
            }
            for (n, line) in bytes[..complete].split(|b| *b == b'\n').enumerate() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let e: ResourceEntry =
                    serde_json::from_slice(line).map_err(|e| JsonlError::Parse {
                        path: path.to_path_buf(),
                        line: n as u64 + 1,
                        message: e.to_string(),
                    })?;
                if e.seq != entries.len() as u64 {
                    return Err(JsonlError::Parse {
                        path: path.to_path_buf(),
                        line: n as u64 + 1,
                        message: format!("seq {} out of order (expected {})", e.seq, entries.len()),
                    });
                }
                entries.push(e);
            }
        }
        let log = DecisionLog {
            writer: JsonlWriter::append_to(path)?,
            clock,
            next_seq: Mutex::new(entries.len() as u64),
        };
        Ok((log, entries))
    }

    /// Records one decision and returns its seq. Returns only after the line reached the kernel.
    pub fn record(
        &self,
        write: &WriteRequest,
        result: WriteResult,
        highest_before: Option<u64>,
    ) -> Result<u64, JsonlError> {
        let mut next = self.next_seq.lock().unwrap_or_else(|p| p.into_inner());
        let seq = *next;
        self.writer
            .append(&write.entry(seq, self.clock.now(), result, highest_before))?;
        *next += 1;
        Ok(seq)
    }

    /// How many decisions the log holds.
    pub fn len(&self) -> u64 {
        *self.next_seq.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
