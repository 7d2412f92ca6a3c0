//! The fastest path for reading our own logs: lines exactly as our writers serialize them
//! (serde writes a struct's fields in declaration order, skipping absent options), read by
//! comparing the expected key literals in order instead of looking each key up.
//!
//! It accepts a strict subset of what [`crate::scan`] accepts and builds the identical value;
//! any deviation (another order, whitespace, an escape, a nested value) returns `None` and the
//! caller falls back to the general scanner, then to serde_json. So it changes speed, never
//! what is valid or what a line means.

use super::scan::STOP;
use crate::event::{OpResult, OpType, Process, F};
use crate::event_ref::{Detail, EventRef, ResourceRef};
use crate::resource_log::WriteResult;
use std::borrow::Cow;

/// A position in one line. Its methods are all inlined into the one function parsing a line,
/// so that the position stays in a register: as calls, `str` and `u64` alone cost a third of
/// the parse (saving and restoring registers, and reloading the position from memory).
struct Cur<'a> {
    s: &'a str,
    i: usize,
}

/// Where in `w` (eight bytes, little-endian) the first byte that ends a plain string is, as
/// a mask with that byte's high bit set (0 when there is none): a quote, a backslash or a
/// control character, as in [`STOP`]. Each test below may also flag bytes above its first real
/// hit (a borrow carries upward), never below, so the lowest flag of the union is exact.
#[inline(always)]
fn stop_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    control | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')))
}

/// How many bytes of `b` come before the first [`STOP`] byte (all of them when none does),
/// eight at a time: our strings are mostly shorter than that, so one step usually finds it.
#[inline(always)]
fn plain_len(b: &[u8]) -> usize {
    let mut n = 0;
    while let Some(w) = b.get(n..).and_then(<[u8]>::first_chunk::<8>) {
        let m = stop_mask(u64::from_le_bytes(*w));
        if m != 0 {
            return n + (m.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    while n < b.len() && !STOP[usize::from(b[n])] {
        n += 1;
    }
    n
}

impl<'a> Cur<'a> {
    /// Compares a key literal as one fixed-size array (a few word compares once inlined): a
    /// byte loop over these literals, or a libc memcmp call per key, was a tenth of the parse.
    #[inline(always)]
    fn lit<const N: usize>(&mut self, l: &[u8; N]) -> bool {
        match self.s.as_bytes()[self.i..].first_chunk::<N>() {
            Some(b) if b == l => {
                self.i += N;
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    /// A non-negative integer as serde reads it into a u64, or `None` (leading zero, fraction,
    /// exponent, overflow: serde's business).
    #[inline(always)]
    fn u64(&mut self) -> Option<u64> {
        let b = &self.s.as_bytes()[self.i..];
        let mut n = 0;
        let mut v: u64 = 0;
        // 19 digits cannot overflow (u64::MAX has 20), so those need no checked arithmetic.
        while n < 19 {
            match b.get(n) {
                Some(&c @ b'0'..=b'9') => v = v * 10 + u64::from(c - b'0'),
                _ => break,
            }
            n += 1;
        }
        while let Some(&c @ b'0'..=b'9') = b.get(n) {
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            n += 1;
        }
        if n == 0 || (n > 1 && b[0] == b'0') || matches!(b.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.i += n;
        Some(v)
    }

    #[inline(always)]
    fn str(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        if b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let n = plain_len(&b[start..]);
        if b.get(start + n) != Some(&b'"') {
            return None;
        }
        self.i = start + n + 1;
        Some(&self.s[start..start + n])
    }

    #[inline(always)]
    fn opt_str<const N: usize>(&mut self, key: &[u8; N]) -> Option<Option<Cow<'a, str>>> {
        if self.lit(key) {
            Some(Some(Cow::Borrowed(self.str()?)))
        } else {
            Some(None)
        }
    }

    #[inline(always)]
    fn opt_u64<const N: usize>(&mut self, key: &[u8; N]) -> Option<Option<u64>> {
        if !self.lit(key) {
            return Some(None);
        }
        if self.lit(b"null") {
            return Some(None);
        }
        Some(Some(self.u64()?))
    }

    /// The closing brace, then nothing but JSON whitespace (`str::trim` would also take
    /// Unicode spaces, which serde rejects).
    #[inline(always)]
    fn end(&mut self) -> Option<()> {
        if !self.lit(b"}") {
            return None;
        }
        self.s.as_bytes()[self.i..]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .then_some(())
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
#[inline(always)]
pub(crate) fn event(line: &str) -> Option<EventRef<'_>> {
    let mut c = Cur { s: line, i: 0 };
    if !c.lit(b"{\"index\":") {
        return None;
    }
    let index = c.u64()?;
    c.lit(b",\"time\":").then_some(())?;
    let time = c.u64()?;
    c.lit(b",\"process\":").then_some(())?;
    let process = if c.lit(b"\"nemesis\"") {
        Process::Nemesis
    } else {
        Process::Worker(u32::try_from(c.u64()?).ok()?)
    };
    c.lit(b",\"type\":").then_some(())?;
    let kind = match c.str()? {
        "invoke" => OpType::Invoke,
        "ok" => OpType::Ok,
        "fail" => OpType::Fail,
        "info" => OpType::Info,
        _ => return None,
    };
    c.lit(b",\"f\":").then_some(())?;
    let f = F::parse(c.str()?)?;
    // The optional fields: absent ones are skipped, each a failed key compare; most lines end
    // early (an acquire invoke names a lock and an owner, no more), and one look for the
    // closing brace between groups spares the compares of the rest (2% of the parse).
    let (mut lock, mut owner, mut lease, mut token, mut key) = (None, None, None, None, None);
    let (mut int_value, mut op_id, mut result, mut highest_before) = (None, None, None, None);
    let (mut held, mut error, mut exception) = (None, None, false);
    'fields: {
        if c.peek() == Some(b'}') {
            break 'fields;
        }
        lock = c.opt_str(b",\"lock\":")?;
        owner = c.opt_str(b",\"owner\":")?;
        lease = c.opt_str(b",\"lease\":")?;
        if c.peek() == Some(b'}') {
            break 'fields;
        }
        token = c.opt_u64(b",\"token\":")?;
        key = c.opt_str(b",\"key\":")?;
        if c.lit(b",\"value\":") {
            match c.peek()? {
                b'"' => drop(c.str()?),
                b'0'..=b'9' => int_value = Some(i64::try_from(c.u64()?).ok()?),
                _ => return None,
            }
        }
        if c.peek() == Some(b'}') {
            break 'fields;
        }
        op_id = c.opt_str(b",\"op_id\":")?;
        result = match c.opt_str(b",\"result\":")? {
            Some(r) => Some(op_result(&r)?),
            None => None,
        };
        highest_before = c.opt_u64(b",\"highest_before\":")?;
        if c.peek() == Some(b'}') {
            break 'fields;
        }
        held = if c.lit(b",\"held\":true") {
            Some(true)
        } else if c.lit(b",\"held\":false") {
            Some(false)
        } else {
            None
        };
        error = c.opt_str(b",\"error\":")?;
        exception = c.lit(b",\"exception\":true");
    }
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
        held,
        int_value,
        exception,
        read_back: false,
        detail: error.map(Detail::error),
    })
}

/// A resource-log line in `ResourceEntry`'s serialization order, or `None`.
#[inline(always)]
pub(crate) fn resource(line: &str) -> Option<ResourceRef<'_>> {
    let mut c = Cur { s: line, i: 0 };
    if !c.lit(b"{\"seq\":") {
        return None;
    }
    let seq = c.u64()?;
    c.lit(b",\"time\":").then_some(())?;
    let time = c.u64()?;
    c.lit(b",\"key\":").then_some(())?;
    let key = c.str()?;
    c.lit(b",\"process\":").then_some(())?;
    let process = u32::try_from(c.u64()?).ok()?;
    c.lit(b",\"owner\":").then_some(())?;
    let owner = c.str()?;
    c.lit(b",\"lease\":").then_some(())?;
    let lease = c.str()?;
    let token = c.opt_u64(b",\"token\":")?;
    c.lit(b",\"op_id\":").then_some(())?;
    let op_id = c.str()?;
    c.lit(b",\"value\":").then_some(())?;
    match c.peek()? {
        b'"' => drop(c.str()?),
        b'0'..=b'9' => drop(c.u64()?),
        _ => return None,
    }
    let highest_before = c.opt_u64(b",\"highest_before\":")?;
    c.lit(b",\"result\":").then_some(())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_len_stops_where_the_byte_table_does() {
        let naive = |b: &[u8]| {
            b.iter()
                .position(|&c| STOP[usize::from(c)])
                .unwrap_or(b.len())
        };
        // Each byte value at each position of strings up to 20 bytes, amid plain ASCII and
        // amid bytes with the high bit set (which must never stop a string).
        for len in 0..20 {
            for fill in [b'a', 0xc3, 0x7f, 0xff] {
                for at in 0..len {
                    for c in 0..=255u8 {
                        let mut b = vec![fill; len];
                        b[at] = c;
                        assert_eq!(plain_len(&b), naive(&b), "{b:?}");
                    }
                }
            }
        }
        // Two bytes near the edges of the tests (a borrow out of one must not hide the other).
        let edge = [
            0, 1, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x80, 0xa2, 0xdc, 0xff,
        ];
        for at in 0..10 {
            for at2 in at + 1..12 {
                for &c in &edge {
                    for &c2 in &edge {
                        let mut b = vec![b'a'; 12];
                        (b[at], b[at2]) = (c, c2);
                        assert_eq!(plain_len(&b), naive(&b), "{b:?}");
                    }
                }
            }
        }
    }
}
