//! Whole logs through the engine: in memory (tests, replay) or streamed line by line (a stored
//! run), the first input error stopping the check.

use super::Engine;
use results::store::CheckConfig;
use results::{Event, ResourceEntry, Verdict};
use std::borrow::Borrow;

/// Checks in-memory logs (tests, replay): `resource` is `None` when there is no resource log.
pub fn check(history: &[Event], resource: Option<&[ResourceEntry]>, cfg: &CheckConfig) -> Verdict {
    check_stream(
        history.iter().map(Ok::<_, std::convert::Infallible>),
        resource.map(|r| r.iter().map(Ok)),
        cfg,
    )
    .unwrap_or_else(|never| match never {})
}

/// Checks streamed logs; the first input error stops the check and is returned (a malformed
/// line is the caller's error to report with its file and line, not an anomaly).
pub fn check_stream<E, H: Borrow<Event>, R: Borrow<ResourceEntry>>(
    history: impl Iterator<Item = Result<H, E>>,
    resource: Option<impl Iterator<Item = Result<R, E>>>,
    cfg: &CheckConfig,
) -> Result<Verdict, E> {
    let mut engine = Engine::new(cfg);
    for e in history {
        engine.event(&e?.borrow().as_ref());
    }
    match resource {
        Some(entries) => {
            for r in entries {
                engine.resource(&r?.borrow().as_ref());
            }
        }
        None => engine.resource_log_missing("resource.jsonl: missing".into()),
    }
    Ok(engine.finish())
}
