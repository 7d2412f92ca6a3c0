//! The one reader of a run directory. `fencecheck check` streams the logs through the checkers,
//! the report takes them whole with `test.yaml` and `results.json`, the matrix and the check ask
//! `state.json` whether the run finished: all through here, so a file is found, parsed and
//! complained about one way.

use super::lines::{for_each_line, stream_history_lines, stream_resource_log};
use super::{CheckConfig, StoreError};
use crate::event::Event;
use crate::event_ref::{EventRef, ResourceRef};
use crate::layout::{CLIENTS, HISTORY, RESOURCE_LOG, RESULTS, SERVICE_LOG, TEST_YAML};
use crate::resource_log::ResourceEntry;
use crate::run_state::RunState;
use crate::service_log::ServiceEntry;
use crate::verdict::Verdict;
use serde::de::DeserializeOwned;
use std::io;
use std::path::{Path, PathBuf};

/// A run directory to read; nothing is read until asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReader {
    dir: PathBuf,
}

/// `test.yaml` as stored: its text, comments included (the harness writes how to re-run the
/// test there), and its keys as a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TestYaml {
    /// Empty when the directory has no `test.yaml`.
    pub text: String,
    /// `Null` when the file is absent or holds nothing.
    pub value: serde_json::Value,
}

impl RunReader {
    pub fn open(dir: &Path) -> RunReader {
        RunReader {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of one of the run's files (see [`crate::layout`] for the names).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether the run has a resource log (a test without a resource has none).
    pub fn has_resource_log(&self) -> bool {
        self.file(RESOURCE_LOG).is_file()
    }

    /// A file's text; `None` when it does not exist.
    fn text(&self, name: &str) -> Result<Option<String>, StoreError> {
        let path = self.file(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { path, source }),
        }
    }

    /// `test.yaml`; a directory without one reads as an empty file.
    pub fn test_yaml(&self) -> Result<TestYaml, StoreError> {
        let text = self.text(TEST_YAML)?.unwrap_or_default();
        let value = if text.trim().is_empty() {
            serde_json::Value::Null
        } else {
            serde_saphyr::from_str(&text).map_err(|e| StoreError::Invalid {
                path: self.file(TEST_YAML),
                message: e.to_string(),
            })?
        };
        Ok(TestYaml { text, value })
    }

    /// What the checkers take from `test.yaml`; its defaults when there is none.
    pub fn check_config(&self) -> Result<CheckConfig, StoreError> {
        CheckConfig::load(&self.file(TEST_YAML))
    }

    /// `results.json`, which exists once the run has been checked.
    pub fn verdict(&self) -> Result<Verdict, StoreError> {
        let path = self.file(RESULTS);
        let text = std::fs::read_to_string(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::Invalid {
            path,
            message: e.to_string(),
        })
    }

    /// The libraries the adapters reported (`clients.txt`); empty for a recipe's run, or a run
    /// whose workers never finished a handshake.
    pub fn clients(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .text(CLIENTS)?
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// `state.json`; `None` when the directory has none (made by hand, or by an older build).
    pub fn state(&self) -> Result<Option<RunState>, StoreError> {
        RunState::read(&self.dir)
    }

    /// Streams `history.jsonl` in file order with each event's line number. A torn last line
    /// is [`StoreError::TornTail`] after every whole line was handed over: the caller decides
    /// whether it only makes the history incomplete.
    pub fn stream_history(&self, each: impl FnMut(u64, &EventRef<'_>)) -> Result<u64, StoreError> {
        stream_history_lines(&self.file(HISTORY), each)
    }

    /// Streams `resource.jsonl` in file order, as [`RunReader::stream_history`] does.
    pub fn stream_resource_log(
        &self,
        each: impl FnMut(&ResourceRef<'_>),
    ) -> Result<u64, StoreError> {
        stream_resource_log(&self.file(RESOURCE_LOG), each)
    }

    /// The whole history, every field kept (for the report). A torn last line is left out: the
    /// check that wrote `results.json` already said the history was cut off.
    pub fn history(&self) -> Result<Vec<Event>, StoreError> {
        whole(&self.file(HISTORY))
    }

    /// The whole resource log, as [`RunReader::history`]; empty when the run has none.
    pub fn resource_log(&self) -> Result<Vec<ResourceEntry>, StoreError> {
        if !self.has_resource_log() {
            return Ok(Vec::new());
        }
        whole(&self.file(RESOURCE_LOG))
    }

    /// The lock service's record (`service.jsonl`), whole (it holds only the lock keys'
    /// changes); `None` when the run has none (recorded without an observer, or converted).
    pub fn service_log(&self) -> Result<Option<Vec<ServiceEntry>>, StoreError> {
        let path = self.file(SERVICE_LOG);
        if !path.is_file() {
            return Ok(None);
        }
        whole(&path).map(Some)
    }
}

/// Every whole line of a JSONL file, parsed as strictly as serde does.
fn whole<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::new();
    let read = for_each_line(path, |_, line| {
        out.push(serde_json::from_str(line).map_err(|e| e.to_string())?);
        Ok(())
    });
    match read {
        Ok(_) | Err(StoreError::TornTail { .. }) => Ok(out),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
