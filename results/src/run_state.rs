//! `state.json`: whether a run finished. A harness killed with SIGKILL leaves a history that
//! looks like a short, clean run; judged as it stands it could pass. So the run directory says
//! where the run is as it goes — `running` when recording starts, `completed` or `interrupted`
//! when it ends — and a check of a run that never finished is at best unknown. A directory
//! without the file (made by hand, converted from another tool) is judged as it stands.

use crate::store::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name in a run directory.
pub const STATE: &str = "state.json";

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Recording; still the state when the harness died without a word.
    Running,
    /// Recording ended as planned (time limit and recovery window reached, teardown done).
    Completed,
    /// Recording ended early: Ctrl-C / SIGTERM, or an error part-way (the reason says which).
    Interrupted,
}

/// The content of `state.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    pub state: Stage,
    /// The harness process that recorded the run (to tell a killed harness from a live one).
    pub harness_pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RunState {
    /// A state written by this process.
    pub fn now(state: Stage, reason: Option<String>) -> RunState {
        RunState {
            state,
            harness_pid: std::process::id(),
            reason,
        }
    }

    /// Writes `dir/state.json` through a temporary file (a reader never sees half of it).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let path = dir.join(STATE);
        let tmp = dir.join(format!(".{STATE}.{}.tmp", std::process::id()));
        let text = serde_json::to_string(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, path)
    }

    /// Reads `dir/state.json`; `None` when the directory has none.
    pub fn read(dir: &Path) -> Result<Option<RunState>, StoreError> {
        let path = dir.join(STATE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Invalid {
                path,
                message: format!(
                    "{e}; expected e.g. {{\"state\":\"completed\",\"harness_pid\":1}}"
                ),
            })
    }

    /// Why a verdict on this run can be at best unknown, or `None` when it completed.
    pub fn unfinished_because(&self) -> Option<String> {
        match self.state {
            Stage::Completed => None,
            Stage::Running => Some(format!(
                "the run never finished: {STATE} still says running (its harness, pid {}, was \
                 killed or is still recording), so the history stops wherever the harness did",
                self.harness_pid
            )),
            Stage::Interrupted => Some(format!(
                "the run was interrupted ({}): the history is partial",
                self.reason.as_deref().unwrap_or("no reason recorded")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_never_finished_is_said_so_and_a_completed_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(RunState::read(dir.path()).unwrap(), None);
        RunState::now(Stage::Running, None)
            .write(dir.path())
            .unwrap();
        let running = RunState::read(dir.path()).unwrap().unwrap();
        let why = running.unfinished_because().unwrap();
        assert!(
            why.contains("never finished") && why.contains("pid"),
            "{why}"
        );
        RunState::now(Stage::Interrupted, Some("SIGINT".into()))
            .write(dir.path())
            .unwrap();
        let why = RunState::read(dir.path())
            .unwrap()
            .unwrap()
            .unfinished_because()
            .unwrap();
        assert!(why.contains("interrupted (SIGINT)"), "{why}");
        RunState::now(Stage::Completed, None)
            .write(dir.path())
            .unwrap();
        let done = RunState::read(dir.path()).unwrap().unwrap();
        assert_eq!(done.unfinished_because(), None);
        std::fs::write(dir.path().join(STATE), "{\"state\":\"dancing\"}").unwrap();
        let e = RunState::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("state.json") && e.contains("dancing"), "{e}");
    }
}
