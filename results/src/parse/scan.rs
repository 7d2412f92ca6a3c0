//! A fast scanner for the flat JSON objects of `history.jsonl` and `resource.jsonl`.
//!
//! Checking millions of events per second leaves no room for a general JSON parser building
//! owned strings. Both files are flat objects whose values are plain strings and integers, so
//! this scanner walks one line, borrowing every string, and hands each `key: value` to a
//! callback. It accepts only a strict subset of JSON (no escapes, no floats, no nested values
//! except where the caller allows skipping them); anything outside that subset returns
//! [`Fallback`], and the caller re-parses the line with serde_json, which either accepts it or
//! produces the authoritative error message. So the fast path never changes what is valid.

/// The line is outside the fast subset (or malformed): re-parse it with serde_json.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

/// One scalar value of a flat object, borrowed from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raw<'a> {
    /// A string without escapes or control characters.
    Str(&'a str),
    /// A non-negative integer that fits u64.
    UInt(u64),
    Null,
    Bool(bool),
    /// A nested object or array, a negative number or a float: skipped, never interpreted.
    /// Produced only for keys for which `skippable` returned true.
    Skipped,
}

/// Walks one JSON object line, calling `field(key, value)` for each member in order.
/// `skippable(key)` says whether a complex value under that key may be skipped (it is then
/// validated only structurally, which is fine because serde would ignore or only loosely type it).
pub fn scan_object<'a>(
    line: &'a str,
    skippable: impl Fn(&str) -> bool,
    mut field: impl FnMut(&'a str, Raw<'a>) -> Result<(), Fallback>,
) -> Result<(), Fallback> {
    let b = line.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err(Fallback);
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            let (key, next) = string(line, i)?;
            i = skip_ws(b, next);
            if b.get(i) != Some(&b':') {
                return Err(Fallback);
            }
            i = skip_ws(b, i + 1);
            let (value, next) = scalar(line, i, || skippable(key))?;
            field(key, value)?;
            i = skip_ws(b, next);
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return Err(Fallback),
            }
        }
    }
    if skip_ws(b, i) != b.len() {
        return Err(Fallback);
    }
    Ok(())
}

/// Bytes that end the plain part of a string: the closing quote, an escape, a control character.
pub(crate) const STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
            break;
        }
        i += 1;
    }
    i
}

/// A string starting at `i` (the opening quote); returns its contents and the index after it.
fn string(line: &str, i: usize) -> Result<(&str, usize), Fallback> {
    let b = line.as_bytes();
    if b.get(i) != Some(&b'"') {
        return Err(Fallback);
    }
    let start = i + 1;
    let rest = b.get(start..).ok_or(Fallback)?;
    match rest.iter().position(|&c| STOP[usize::from(c)]) {
        Some(n) if rest[n] == b'"' => Ok((&line[start..start + n], start + n + 1)),
        _ => Err(Fallback),
    }
}

fn scalar(
    line: &str,
    i: usize,
    skippable: impl Fn() -> bool,
) -> Result<(Raw<'_>, usize), Fallback> {
    let b = line.as_bytes();
    match b.get(i) {
        Some(b'"') => string(line, i).map(|(s, n)| (Raw::Str(s), n)),
        Some(b'0'..=b'9') => {
            let mut j = i;
            let mut v: u64 = 0;
            while let Some(&c @ b'0'..=b'9') = b.get(j) {
                v = v
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(c - b'0')))
                    .ok_or(Fallback)?;
                j += 1;
            }
            // Leading zeros, fractions and exponents are serde's business.
            if (b[i] == b'0' && j - i > 1) || matches!(b.get(j), Some(b'.' | b'e' | b'E')) {
                return Err(Fallback);
            }
            Ok((Raw::UInt(v), j))
        }
        Some(b'n') if line[i..].starts_with("null") => Ok((Raw::Null, i + 4)),
        Some(b't') if line[i..].starts_with("true") => Ok((Raw::Bool(true), i + 4)),
        Some(b'f') if line[i..].starts_with("false") => Ok((Raw::Bool(false), i + 5)),
        Some(b'{' | b'[') if skippable() => skip_nested(line, i).map(|n| (Raw::Skipped, n)),
        _ => Err(Fallback),
    }
}

/// Skips a nested object or array, checking only that brackets balance outside strings and
/// that strings are plain; anything subtler (escapes) goes to serde.
fn skip_nested(line: &str, i: usize) -> Result<usize, Fallback> {
    let b = line.as_bytes();
    let mut depth = 0usize;
    let mut j = i;
    while let Some(&c) = b.get(j) {
        match c {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(j + 1);
                }
            }
            b'"' => {
                let (_, n) = string(line, j)?;
                j = n;
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    Err(Fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(line: &str) -> Result<Vec<(String, Raw<'_>)>, Fallback> {
        let mut out = Vec::new();
        scan_object(
            line,
            |k| k == "value",
            |k, v| {
                out.push((k.to_string(), v));
                Ok(())
            },
        )?;
        Ok(out)
    }

    #[test]
    fn reads_a_flat_object_borrowing_strings() {
        let got =
            collect(r#" {"a":"x", "b":12,"c":null,"d":true,"value":{"t":["w-1"]}} "#).unwrap();
        assert_eq!(got[0], ("a".into(), Raw::Str("x")));
        assert_eq!(got[1], ("b".into(), Raw::UInt(12)));
        assert_eq!(got[2].1, Raw::Null);
        assert_eq!(got[3].1, Raw::Bool(true));
        assert_eq!(got[4].1, Raw::Skipped);
        assert_eq!(collect("{}").unwrap().len(), 0);
    }

    #[test]
    fn anything_outside_the_subset_falls_back() {
        for line in [
            "",
            "not json",
            r#"{"a":"x\"y"}"#,
            r#"{"a":1.5}"#,
            r#"{"a":01}"#,
            r#"{"a":-1}"#,
            r#"{"a":1e3}"#,
            r#"{"a":99999999999999999999}"#,
            r#"{"a":{"b":1}}"#,
            r#"{"a":1} x"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"value":{"b":1}"#,
            r#"{"a":nul}"#,
        ] {
            assert_eq!(collect(line), Err(Fallback), "{line}");
        }
    }
}
