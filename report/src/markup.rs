//! Text that goes into HTML, SVG and XML: escaping and the few number formats the report uses.
//!
//! Everything the report prints comes from a run (owners, lease handles, error messages, config
//! values) and may hold any character, so every string passes through [`esc`] on its way out —
//! including control characters that XML 1.0 forbids, which would make a JUnit file unparseable.

use std::fmt::Write as _;

/// Escapes text for HTML/SVG/XML content and attribute values (double or single quoted).
/// Characters XML 1.0 cannot carry (most C0 controls) become U+FFFD.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Nanoseconds since start → seconds, e.g. `12.345 s`.
pub fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// A duration in nanoseconds for humans: `850 µs`, `12.4 ms`, `2.31 s`.
pub fn duration(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A coordinate with at most one decimal, so SVGs stay small.
pub fn px(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// A JSON value as a short human string: strings without quotes, lists joined by ", ".
pub fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "—".to_string(),
        serde_json::Value::Array(items)
            if items.iter().all(|i| !i.is_object() && !i.is_array()) =>
        {
            items.iter().map(json_text).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

/// Flattens a configuration into `a.b.c = value` rows (objects in their map order).
pub fn flatten_config(v: &serde_json::Value) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(map) if !map.is_empty() => {
                for (k, child) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, child, out);
                }
            }
            other => out.push((prefix.to_string(), json_text(other))),
        }
    }
    let mut out = Vec::new();
    if !v.is_null() {
        walk("", v, &mut out);
    }
    out
}

/// A list of integers as `3, 17, 18`.
pub fn join_nums(nums: &[u64]) -> String {
    let mut s = String::new();
    for (i, n) in nums.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_forbidden_controls() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{1}b\tc"), "a\u{FFFD}b\tc");
    }

    #[test]
    fn formats_times_and_coordinates_compactly() {
        assert_eq!(secs(12_345_678_901), "12.346 s");
        assert_eq!(duration(850_000), "850 µs");
        assert_eq!(duration(12_400_000), "12.4 ms");
        assert_eq!(duration(2_310_000_000), "2.31 s");
        assert_eq!(px(3.0), "3");
        assert_eq!(px(12.349), "12.3");
    }

    #[test]
    fn flattens_nested_configuration_into_dotted_rows() {
        let v = serde_json::json!({"provider": "etcd", "nemesis": {"faults": ["pause", "kill"], "interval": "10s"}, "seed": 7});
        let rows = flatten_config(&v);
        assert!(rows.contains(&("provider".into(), "etcd".into())));
        assert!(rows.contains(&("nemesis.faults".into(), "pause, kill".into())));
        assert!(rows.contains(&("seed".into(), "7".into())));
    }
}
