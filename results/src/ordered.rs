//! The fastest path for reading our own logs: lines exactly as our writers serialize them
//! (serde writes a struct's fields in declaration order, skipping absent options), read by
//! comparing the expected key literals in order instead of looking each key up.
//!
//! It accepts a strict subset of what [`crate::scan`] accepts and builds the identical value;
//! any deviation (another order, whitespace, an escape, a nested value) returns `None` and the
//! caller falls back to the general scanner, then to serde_json. So it changes speed, never
//! what is valid or what a line means.

use crate::event::{OpResult, OpType, Process, F};
use crate::event_ref::{EventRef, ResourceRef};
use crate::resource_log::WriteResult;
use crate::scan::STOP;
use std::borrow::Cow;

struct Cur<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cur<'a> {
    #[inline]
    fn lit(&mut self, l: &str) -> bool {
        // A byte loop, not `starts_with`: these literals are short, and a libc memcmp call per
        // key was a tenth of the parse time.
        let (b, l) = (&self.s.as_bytes()[self.i..], l.as_bytes());
        if b.len() < l.len() || b.iter().zip(l).any(|(x, y)| x != y) {
            return false;
        }
        self.i += l.len();
        true
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    #[inline]
    fn u64(&mut self) -> Option<u64> {
        let b = self.s.as_bytes();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(self.i) {
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            self.i += 1;
        }
        let len = self.i - start;
        if len == 0
            || (len > 1 && b[start] == b'0')
            || matches!(b.get(self.i), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        Some(v)
    }

    #[inline]
    fn str(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        if b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let n = b[start..].iter().position(|&c| STOP[usize::from(c)])?;
        if b[start + n] != b'"' {
            return None;
        }
        self.i = start + n + 1;
        Some(&self.s[start..start + n])
    }

    #[inline]
    fn opt_str(&mut self, key: &str) -> Option<Option<Cow<'a, str>>> {
        if self.lit(key) {
            Some(Some(Cow::Borrowed(self.str()?)))
        } else {
            Some(None)
        }
    }

    #[inline]
    fn opt_u64(&mut self, key: &str) -> Option<Option<u64>> {
        if !self.lit(key) {
            return Some(None);
        }
        if self.lit("null") {
            return Some(None);
        }
        Some(Some(self.u64()?))
    }

    /// The closing brace, then nothing but whitespace.
    fn end(&mut self) -> Option<()> {
        if !self.lit("}") {
            return None;
        }
        (self.i == self.s.len() || self.s[self.i..].trim().is_empty()).then_some(())
    }
}

fn op_result(s: &str) -> Option<OpResult> {
    Some(match s {
        "accepted" => OpResult::Accepted,
        "rejected-stale-fence" => OpResult::RejectedStaleFence,
        "rejected-duplicate" => OpResult::RejectedDuplicate,
        "released" => OpResult::Released,
        "release-rejected-not-owner" => OpResult::ReleaseRejectedNotOwner,
        _ => return None,
    })
}

/// A history line in `Event`'s serialization order, or `None`.
pub(crate) fn event(line: &str) -> Option<EventRef<'_>> {
    let mut c = Cur { s: line, i: 0 };
    if !c.lit("{\"index\":") {
        return None;
    }
    let index = c.u64()?;
    c.lit(",\"time\":").then_some(())?;
    let time = c.u64()?;
    c.lit(",\"process\":").then_some(())?;
    let process = if c.lit("\"nemesis\"") {
        Process::Nemesis
    } else {
        Process::Worker(u32::try_from(c.u64()?).ok()?)
    };
    c.lit(",\"type\":").then_some(())?;
    let kind = match c.str()? {
        "invoke" => OpType::Invoke,
        "ok" => OpType::Ok,
        "fail" => OpType::Fail,
        "info" => OpType::Info,
        _ => return None,
    };
    c.lit(",\"f\":").then_some(())?;
    let f = F::parse(c.str()?)?;
    let lock = c.opt_str(",\"lock\":")?;
    let owner = c.opt_str(",\"owner\":")?;
    let lease = c.opt_str(",\"lease\":")?;
    let token = c.opt_u64(",\"token\":")?;
    let key = c.opt_str(",\"key\":")?;
    let mut int_value = None;
    if c.lit(",\"value\":") {
        match c.peek()? {
            b'"' => drop(c.str()?),
            b'0'..=b'9' => int_value = Some(i64::try_from(c.u64()?).ok()?),
            _ => return None,
        }
    }
    let op_id = c.opt_str(",\"op_id\":")?;
    let result = match c.opt_str(",\"result\":")? {
        Some(r) => Some(op_result(&r)?),
        None => None,
    };
    let highest_before = c.opt_u64(",\"highest_before\":")?;
    let _error = c.opt_str(",\"error\":")?;
    c.end()?;
    Some(EventRef {
        index,
        time,
        process,
        kind,
        f,
        lock,
        owner,
        lease,
        token,
        key,
        op_id,
        result,
        highest_before,
        int_value,
    })
}

/// A resource-log line in `ResourceEntry`'s serialization order, or `None`.
pub(crate) fn resource(line: &str) -> Option<ResourceRef<'_>> {
    let mut c = Cur { s: line, i: 0 };
    if !c.lit("{\"seq\":") {
        return None;
    }
    let seq = c.u64()?;
    c.lit(",\"time\":").then_some(())?;
    let time = c.u64()?;
    c.lit(",\"key\":").then_some(())?;
    let key = c.str()?;
    c.lit(",\"process\":").then_some(())?;
    let process = u32::try_from(c.u64()?).ok()?;
    c.lit(",\"owner\":").then_some(())?;
    let owner = c.str()?;
    c.lit(",\"lease\":").then_some(())?;
    let lease = c.str()?;
    let token = c.opt_u64(",\"token\":")?;
    c.lit(",\"op_id\":").then_some(())?;
    let op_id = c.str()?;
    c.lit(",\"value\":").then_some(())?;
    match c.peek()? {
        b'"' => drop(c.str()?),
        b'0'..=b'9' => drop(c.u64()?),
        _ => return None,
    }
    let highest_before = c.opt_u64(",\"highest_before\":")?;
    c.lit(",\"result\":").then_some(())?;
    let result = match c.str()? {
        "accepted" => WriteResult::Accepted,
        "rejected-stale-fence" => WriteResult::RejectedStaleFence,
        "rejected-duplicate" => WriteResult::RejectedDuplicate,
        _ => return None,
    };
    c.end()?;
    Some(ResourceRef {
        seq,
        time,
        key: Cow::Borrowed(key),
        process,
        owner: Cow::Borrowed(owner),
        lease: Cow::Borrowed(lease),
        token,
        op_id: Cow::Borrowed(op_id),
        highest_before,
        result,
    })
}
