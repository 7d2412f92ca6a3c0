//! The small pieces of the drawing: labels fitted to the width they get, a write's tooltip,
//! the time grid and its ticks.

use super::*;

/// Labels for a span `at` = (start ns, duration ns, x px of start, y px), longest first: each is shown
/// only while the span is wide enough for it and too narrow for the one before, so zooming in
/// reveals more detail (the page script applies the same `data-min` / `data-max` rule).
pub(super) fn fitted_labels(
    s: &mut String,
    at: (u64, u64, f64, f64),
    width_px: f64,
    labels: &[String],
    style: &str,
) {
    let (start, dur, sx, ly) = at;
    let dx = 5.0;
    let mut max: Option<usize> = None;
    for label in labels {
        let min = label.chars().count() * 7 + 8;
        if max.is_some_and(|m| min >= m) {
            continue;
        }
        let shown = width_px >= min as f64 && max.is_none_or(|m| width_px < m as f64);
        let _ = write!(
            s,
            r##"<text data-t="{:.4}" data-dx="{}" data-w="{:.4}" data-min="{min}"{} x="{}" y="{}" {style} pointer-events="none"{}>{}</text>"##,
            start as f64 / 1e9,
            dx,
            dur as f64 / 1e9,
            max.map(|m| format!(r#" data-max="{m}""#))
                .unwrap_or_default(),
            px(sx + dx),
            px(ly),
            if shown { "" } else { r#" display="none""# },
            esc(label)
        );
        max = Some(min);
    }
}

pub(super) fn hidden(width_px: f64, min: usize) -> &'static str {
    if width_px < min as f64 {
        r#" display="none""#
    } else {
        ""
    }
}

pub(super) fn short_fault(name: &str) -> String {
    match results::fault::Family::of(name) {
        results::fault::Family::Pause => "paused".to_string(),
        results::fault::Family::Partition => "partitioned".to_string(),
        results::fault::Family::Kill => "killed".to_string(),
        results::fault::Family::Hang => "work hung".to_string(),
        results::fault::Family::Starve => "starved".to_string(),
        _ => name.to_string(),
    }
}

pub(super) fn write_title(w: &WriteMark) -> String {
    let mut t = format!(
        "write {} · token {} · highest_before {}",
        w.outcome.as_str(),
        crate::timeline::opt(w.token),
        crate::timeline::opt(w.highest_before)
    );
    if let Some(k) = &w.key {
        let _ = write!(t, " · key {k}");
    }
    if let Some(op) = &w.op_id {
        let _ = write!(t, " · op {op}");
    }
    let _ = write!(t, " · {} · process {}", secs(w.time), w.process);
    if let Some(seq) = w.seq {
        let _ = write!(t, " · resource seq {seq}");
    }
    if let Some(i) = w.index {
        let _ = write!(t, " · history #{i}");
    }
    t
}

/// A tick step (s) that leaves at least ~90 px between labels.
pub fn tick_step(pps: f64) -> f64 {
    [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
    ]
    .into_iter()
    .find(|s| s * pps >= 90.0)
    .unwrap_or(3600.0)
}

pub(super) fn grid(t: &Timeline, pps: f64, h: f64) -> String {
    let step = tick_step(pps);
    let end_s = t.end as f64 / 1e9;
    let mut s = String::from(r#"<g id="tl-grid">"#);
    let mut k = 0.0;
    while k <= end_s + 1e-9 {
        let gx = X0 + k * pps;
        let _ = write!(
            s,
            r##"<line x1="{0}" x2="{0}" y1="{1}" y2="{2}" stroke="#e2e8f0"/><text x="{3}" y="16" font-size="11" fill="#64748b">{4}</text><text x="{3}" y="{5}" font-size="11" fill="#64748b">{4}</text>"##,
            px(gx),
            AXIS_H - 4.0,
            px(h - AXIS_H + 4.0),
            px(gx + 3.0),
            fmt_tick(k, step),
            px(h - 6.0)
        );
        k += step;
    }
    s.push_str("</g>");
    s
}

pub(super) fn fmt_tick(k: f64, step: f64) -> String {
    if step < 1.0 {
        format!("{k:.1} s")
    } else {
        format!("{k:.0} s")
    }
}
