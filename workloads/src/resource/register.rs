//! The built-in resource: an in-memory map per key of value + highest accepted token (+ applied
//! op_ids), decided by [`rule::decide`]. It keeps no state of its own worth losing: after a kill
//! it rebuilds the map by replaying the accepted entries of its own log.

use futures::future::BoxFuture;
use results::ResourceEntry;
use std::collections::HashMap;
use std::sync::Mutex;

use super::rule::{self, Decision, KeyState, Mode};
use super::{Resource, ResourceError, WriteRequest};

#[derive(Debug)]
pub struct Register {
    mode: Mode,
    keys: Mutex<HashMap<String, KeyState>>,
}

impl Register {
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            keys: Mutex::new(HashMap::new()),
        }
    }

    /// A register holding exactly what `log` (a previous life's decisions) accepted.
    pub fn recovered(mode: Mode, log: &[ResourceEntry]) -> Self {
        let reg = Self::new(mode);
        {
            let mut keys = reg.keys.lock().unwrap_or_else(|p| p.into_inner());
            for e in log.iter().filter(|e| e.result.is_accepted()) {
                let s = keys.entry(e.key.clone()).or_default();
                s.highest = s.highest.max(e.token);
                s.value = Some(e.value.clone());
                s.applied.insert(e.op_id.clone());
            }
        }
        reg
    }

    /// The current value of `key` (for tests and the counter-style reads of a fake).
    pub fn value(&self, key: &str) -> Option<serde_json::Value> {
        let keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.get(key).and_then(|s| s.value.clone())
    }
}

impl Resource for Register {
    fn decide<'a>(
        &'a self,
        w: &'a WriteRequest,
        _attempt: u64,
    ) -> BoxFuture<'a, Result<Decision, ResourceError>> {
        Box::pin(async move {
            rule::check_token(self.mode, w.token).map_err(ResourceError::Invalid)?;
            let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
            let state = keys.entry(w.key.clone()).or_default();
            let (result, highest_before) =
                rule::decide(self.mode, state, w.token, &w.op_id, &w.value);
            Ok(Decision {
                result,
                highest_before,
                store_order: None,
            })
        })
    }

    /// A register killed mid-decision lost that decision with its memory: it was never made.
    fn resolve<'a>(
        &'a self,
        _w: &'a WriteRequest,
        _attempt: u64,
    ) -> BoxFuture<'a, Result<Option<results::WriteResult>, ResourceError>> {
        Box::pin(async { Ok(None) })
    }

    fn name(&self) -> &'static str {
        "register"
    }
}
