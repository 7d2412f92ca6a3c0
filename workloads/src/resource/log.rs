//! The decision log, `resource.jsonl`. Each decision becomes one line handed to the kernel (one
//! `write`) before the server replies, so killing the resource loses no acknowledged decision.
//! `seq` and `time` are assigned under one lock together with the append: file order, seq order
//! and time order are the same order.
//!
//! A resource restarted after a kill reopens its log: a torn last line (the kill landed inside
//! the write, so that decision was never acknowledged) is cut off, seqs continue after the last
//! complete line, and the entries are handed back so that a stateless backend can rebuild itself.
//!
//! Per key the log also remembers how many decisions it holds and the highest accepted token:
//! the count names the next decision on a key (its *attempt*, see [`super::doubt`]), and the
//! highest is what a decision recovered from the store had as `highest_before`.

use results::jsonl::{JsonlError, JsonlWriter};
use results::{ResourceEntry, RunClock, WriteResult};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::protocol::WriteRequest;

#[derive(Debug)]
pub struct DecisionLog {
    writer: JsonlWriter,
    clock: RunClock,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_seq: u64,
    /// key -> (decisions logged, highest accepted token)
    keys: HashMap<String, (u64, Option<u64>)>,
}

impl State {
    fn note(&mut self, key: &str, token: Option<u64>, accepted: bool) {
        self.next_seq += 1;
        let k = self.keys.entry(key.to_string()).or_default();
        k.0 += 1;
        if accepted {
            k.1 = k.1.max(token);
        }
    }
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
        let mut state = State::default();
        for e in &entries {
            state.note(&e.key, e.token, e.result.is_accepted());
        }
        let log = DecisionLog {
            writer: JsonlWriter::append_to(path)?,
            clock,
            state: Mutex::new(state),
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
        let mut state = self.state();
        let seq = state.next_seq;
        self.writer
            .append(&write.entry(seq, self.clock.now(), result, highest_before))?;
        state.note(&write.key, write.token, result.is_accepted());
        Ok(seq)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many decisions the log holds.
    pub fn len(&self) -> u64 {
        self.state().next_seq
    }

    /// How many decisions on `key` the log holds.
    pub fn decisions_on(&self, key: &str) -> u64 {
        self.state().keys.get(key).map_or(0, |k| k.0)
    }

    /// The highest token the log shows accepted for `key`.
    pub fn highest(&self, key: &str) -> Option<u64> {
        self.state().keys.get(key).and_then(|k| k.1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
