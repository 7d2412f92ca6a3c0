//! Writes in doubt: the store may have decided them, but the log does not say so. That happens
//! when the store's reply is lost (a timeout, a dropped connection) or when the resource is
//! killed between the store's commit and the log line. Left alone, the store would hold an
//! accepted token that the log never shows, and every later `highest_before` for that key would
//! contradict the log — the log would stop being the ground truth.
//!
//! So before a write goes to the store, its *intent* is appended to `<log>.intents.jsonl`
//! together with its *attempt*: the number this decision will have among the key's decisions
//! (decisions logged on the key + 1). The stores record the attempt of each decision they make
//! (PostgreSQL's ledger, a Redis key set by the script, an etcd key put in the txn). A write in
//! doubt is settled — before the next write to its key, and for every key at start-up — by
//! asking the store whether it decided that attempt: if it did, the decision is logged late
//! (its writer got an error and must treat the write as indeterminate anyway); if not, nothing.
//! An attempt the log already holds needs no question: the resource died after logging it.
//!
//! What remains: a request still travelling to the store when the store is asked (e.g. its
//! bytes sit unread in the store's socket buffer of a dead connection) can be decided after the
//! answer "not decided". The store's own locks close this for PostgreSQL in flight (the question
//! waits for the key's row lock); for the rest the window is the store's read latency.

use results::jsonl::{JsonlError, JsonlWriter};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::log::DecisionLog;
use super::protocol::WriteRequest;
use super::{Resource, ResourceError};

/// One line of the intents file: a write about to be sent to the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    /// The decision's number among its key's decisions (1-based), if it is logged.
    pub attempt: u64,
    pub write: WriteRequest,
}

#[derive(Debug)]
pub struct Intents {
    writer: JsonlWriter,
    doubts: Mutex<HashMap<String, Intent>>,
}

impl Intents {
    /// Where the intents of the log at `log` live (`resource.jsonl` → `resource.intents.jsonl`).
    pub fn path_for(log: &Path) -> PathBuf {
        log.with_extension("intents.jsonl")
    }

    /// Opens the intents file, returning the last intent of every key (the only one that can be
    /// in doubt: writes to a key go to the store one at a time). The file is rewritten with just
    /// those, so it does not grow across restarts.
    pub fn open(path: &Path) -> Result<(Self, Vec<Intent>), JsonlError> {
        let mut last: HashMap<String, Intent> = HashMap::new();
        if let Ok(text) = std::fs::read(path) {
            // A torn last line (killed mid-write) is an intent that never reached the store.
            for line in text.split(|b| *b == b'\n') {
                if let Ok(i) = serde_json::from_slice::<Intent>(line) {
                    last.insert(i.write.key.clone(), i);
                }
            }
        }
        let writer = JsonlWriter::create(path)?;
        let candidates: Vec<Intent> = last.into_values().collect();
        for i in &candidates {
            writer.append(i)?;
        }
        Ok((
            Self {
                writer,
                doubts: Mutex::new(HashMap::new()),
            },
            candidates,
        ))
    }

    /// Records that `write` is about to be sent as `attempt` (on disk before it is sent).
    pub fn intend(&self, attempt: u64, write: &WriteRequest) -> Result<(), JsonlError> {
        self.writer.append(&Intent {
            attempt,
            write: write.clone(),
        })
    }

    /// Remembers a write whose decision is unknown; its key's next write settles it first.
    pub fn doubt(&self, intent: Intent) {
        self.lock().insert(intent.write.key.clone(), intent);
    }

    pub fn take_doubt(&self, key: &str) -> Option<Intent> {
        self.lock().remove(key)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Intent>> {
        self.doubts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Settles one intent: logs the store's decision on it if the store made one the log lacks.
/// Returns whether it logged anything.
pub async fn settle(
    resource: &dyn Resource,
    log: &DecisionLog,
    intent: &Intent,
) -> Result<bool, ResourceError> {
    let key = &intent.write.key;
    if intent.attempt <= log.decisions_on(key) {
        return Ok(false);
    }
    match resource.resolve(&intent.write, intent.attempt).await? {
        None => Ok(false),
        Some(result) => {
            log.record(&intent.write, result, log.highest(key))
                .map_err(|e| {
                    ResourceError::Invalid(format!("logging a recovered decision: {e}"))
                })?;
            Ok(true)
        }
    }
}
