//! The four keys of `test.yaml` the checkers need (`ttl`, `recovery_slack`, `fail_on`,
//! `workers`); everything else in `test.yaml` belongs to the harness and is ignored here. It
//! holds the one default of `recovery_slack`, which the harness's validation uses too.

use super::StoreError;
use crate::duration::Dur;
use crate::verdict::AnomalyKind;
use serde::Deserialize;
use std::io;
use std::path::Path;
use std::time::Duration;

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
    /// How many workers the test ran: worker `i` of `n` is process `i`, then `i + n`, ... after
    /// each retirement (docs/design.md, "history.jsonl"), which is how locked-out-client follows
    /// one worker across its process ids. `None` when `test.yaml` does not say: each process is
    /// then judged alone.
    pub workers: Option<u32>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            ttl: None,
            recovery_slack: DEFAULT_RECOVERY_SLACK.get(),
            fail_on: AnomalyKind::default_fail_on(),
            workers: None,
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
    #[serde(default)]
    workers: Option<u32>,
}

impl CheckConfig {
    /// Parses the text of a `test.yaml`; `path` only names the file in errors.
    pub fn from_yaml(path: &Path, text: &str) -> Result<CheckConfig, StoreError> {
        let err = |message: String| StoreError::Invalid {
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
        cfg.workers = raw.workers.filter(|&n| n > 0);
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
