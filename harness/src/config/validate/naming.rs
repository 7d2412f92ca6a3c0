//! The names a test carries: its own (the run directory and Docker run id), the lock's, the
//! client discipline, the application profile, the anomaly kinds that fail it, and the bugs planted in the memory
//! provider.

use super::{err, ConfigError};
use crate::config::clients::LockClient;
use crate::config::plan::{Discipline, Faults, MemoryBug, Provider, ResourceKind};
use crate::config::raw::RawTest;
use results::AnomalyKind;
use workloads::config::{OnSuspect, Renewal};
use workloads::App;

/// The named pieces of a plan.
#[derive(Debug, Clone)]
pub struct Names {
    pub name: String,
    pub lock: String,
    pub discipline: Discipline,
    pub fail_on: Vec<AnomalyKind>,
    pub memory_bugs: Vec<MemoryBug>,
}

pub fn naming(
    raw: &RawTest,
    provider: Provider,
    client: &LockClient,
    resource: ResourceKind,
    faults: &Faults,
    app: App,
) -> Result<Names, ConfigError> {
    let lock = raw.lock.clone().unwrap_or_else(|| "fencecheck-lock".into());
    if lock.is_empty() || lock.contains(char::is_whitespace) {
        return Err(err(
            "lock",
            format!("lock name {lock:?} must be non-empty without spaces"),
        ));
    }
    let name = raw.name.clone().unwrap_or_else(|| {
        let drawn: Vec<&str> = faults.drawn.iter().map(|k| k.name()).collect();
        let faults = if drawn.is_empty() {
            "no-faults".to_string()
        } else {
            drawn.join("+")
        };
        // The default profile keeps the names runs always had.
        match app {
            App::Short => format!("{}-{resource}-{faults}", client.name()),
            other => format!("{}-{resource}-{faults}-{other}", client.name()),
        }
    });
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(err(
            "name",
            format!("test name {name:?} must be a plain file name"),
        ));
    }
    Ok(Names {
        name,
        lock,
        discipline: discipline(raw)?,
        fail_on: fail_on(raw)?,
        memory_bugs: memory_bugs(raw, provider)?,
    })
}

/// The application profile (`app:`, `--app`); `short` when the test names none.
pub fn app(raw: &RawTest) -> Result<App, ConfigError> {
    match &raw.app {
        None => Ok(App::default()),
        Some(name) => name.parse().map_err(|e: workloads::app::UnknownApp| {
            err(
                "app",
                format!("{e} (docs/design.md, \"Driving a library as applications do\")"),
            )
        }),
    }
}

fn discipline(raw: &RawTest) -> Result<Discipline, ConfigError> {
    let on_suspect = match raw.discipline.as_deref().unwrap_or("continue") {
        "stop" => OnSuspect::Stop,
        "continue" => OnSuspect::Continue,
        d => {
            return Err(err(
                "discipline",
                format!("unknown discipline {d:?}; use stop or continue"),
            ))
        }
    };
    let renewal = match raw.renewal.as_deref().unwrap_or("background") {
        "background" => Renewal::Background,
        "inline" => Renewal::Inline,
        r => {
            return Err(err(
                "renewal",
                format!("unknown renewal {r:?}; use background or inline"),
            ))
        }
    };
    Ok(Discipline {
        renewal,
        on_suspect,
    })
}

fn fail_on(raw: &RawTest) -> Result<Vec<AnomalyKind>, ConfigError> {
    let Some(list) = &raw.fail_on else {
        return Ok(AnomalyKind::default_fail_on());
    };
    list.iter()
        .map(|k| {
            AnomalyKind::parse(k).ok_or_else(|| {
                let names: Vec<_> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
                err(
                    "fail_on",
                    format!(
                        "unknown anomaly kind {k:?}; use any of {}",
                        names.join(", ")
                    ),
                )
            })
        })
        .collect()
}

fn memory_bugs(raw: &RawTest, provider: Provider) -> Result<Vec<MemoryBug>, ConfigError> {
    let named = raw.memory_bugs.clone().unwrap_or_default();
    if !named.is_empty() && provider != Provider::Memory {
        return Err(err(
            "memory_bugs",
            "bugs can only be planted in the memory provider; add provider: memory",
        ));
    }
    named
        .iter()
        .map(|bug| {
            MemoryBug::parse(bug).ok_or_else(|| {
                let names: Vec<_> = MemoryBug::ALL.iter().map(|b| b.as_str()).collect();
                err(
                    "memory_bugs",
                    format!("unknown bug {bug:?}; use any of {}", names.join(", ")),
                )
            })
        })
        .collect()
}
