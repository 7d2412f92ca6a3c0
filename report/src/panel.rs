//! One chart panel: a titled plot area with its legend, x axis in run seconds, y axis linear or
//! log (nanoseconds), every fault period shaded in its colour, and lines that break where a
//! bucket has no sample (a gap in the data is shown as a gap, not interpolated across).

use std::fmt::Write as _;

use super::glyphs::fault_color;
use super::markup::{esc, px};
use super::timeline::Fault;

pub const HEIGHT: f64 = 264.0;
const M_LEFT: f64 = 62.0;
const M_RIGHT: f64 = 12.0;
const M_TOP: f64 = 44.0;
const M_BOTTOM: f64 = 26.0;

pub struct Line {
    pub label: String,
    pub color: &'static str,
    pub dash: &'static str,
    pub width: f64,
    /// (x in seconds, y value, bucket) — a gap between buckets breaks the line.
    pub points: Vec<(f64, f64, usize)>,
    /// Radius of a dot at every point (0: none); isolated buckets show only as dots.
    pub dot: f64,
}

pub enum Scale {
    /// Nanoseconds, log10.
    LogNs {
        lo: f64,
        hi: f64,
    },
    Linear {
        hi: f64,
    },
}

impl Scale {
    fn frac(&self, v: f64) -> f64 {
        match self {
            Scale::LogNs { lo, hi } => (v.max(1.0).log10() - lo) / (hi - lo),
            Scale::Linear { hi } => v / hi,
        }
    }

    fn ticks(&self) -> Vec<(f64, String)> {
        match self {
            Scale::LogNs { lo, hi } => (lo.round() as i32..=hi.round() as i32)
                .map(|d| (10f64.powi(d), decade(d)))
                .collect(),
            Scale::Linear { hi } => {
                let step = nice_step(*hi / 4.0);
                let mut out = Vec::new();
                let mut v = 0.0;
                while v <= *hi + 1e-9 {
                    out.push((
                        v,
                        if step < 1.0 {
                            format!("{v:.1}")
                        } else {
                            format!("{v:.0}")
                        },
                    ));
                    v += step;
                }
                out
            }
        }
    }
}

/// A power of ten nanoseconds as a short label: `1 µs`, `10 ms`, `100 s`.
pub fn decade(d: i32) -> String {
    let units = [(9, "s"), (6, "ms"), (3, "µs"), (0, "ns")];
    let (exp, unit) = units
        .into_iter()
        .find(|(e, _)| d >= *e)
        .unwrap_or((0, "ns"));
    format!("{} {unit}", 10u64.pow((d - exp).clamp(0, 18) as u32))
}

pub fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

#[allow(clippy::too_many_arguments)]
pub fn panel(
    s: &mut String,
    ox: f64,
    w: f64,
    title: &str,
    lines: &[Line],
    scale: &Scale,
    faults: &[Fault],
    end_s: f64,
    y_title: &str,
) {
    let (pl, pt) = (ox + M_LEFT, M_TOP);
    let (pw, ph) = (w - M_LEFT - M_RIGHT, HEIGHT - M_TOP - M_BOTTOM);
    let xs = |sec: f64| pl + sec / end_s * pw;
    let ys = |v: f64| pt + ph - scale.frac(v).clamp(0.0, 1.0) * ph;
    let _ = write!(
        s,
        r##"<text x="{}" y="18" font-size="13" font-weight="700" fill="#0f172a">{}</text>"##,
        px(pl),
        esc(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fff" stroke="#e2e8f0"/>"##,
        px(pl),
        px(pt),
        px(pw),
        px(ph)
    );
    for f in faults {
        let (strong, light) = fault_color(&f.name);
        let (a, b) = (xs(f.start as f64 / 1e9), xs(f.end as f64 / 1e9));
        let _ = write!(
            s,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{light}" opacity=".8"><title>{} {} → {}</title></rect><rect x="{}" y="{}" width="{}" height="3" fill="{strong}"/>"##,
            px(a),
            px(pt),
            px((b - a).max(1.0)),
            px(ph),
            esc(&f.name),
            super::markup::secs(f.start),
            super::markup::secs(f.end),
            px(a),
            px(pt),
            px((b - a).max(1.0))
        );
    }
    for (v, label) in scale.ticks() {
        let y = ys(v);
        let (x1, x2, yy, tx, ty) = (px(pl), px(pl + pw), px(y), px(pl - 5.0), px(y + 3.5));
        let _ = write!(
            s,
            r##"<line x1="{x1}" x2="{x2}" y1="{yy}" y2="{yy}" stroke="#eef2f7"/><text x="{tx}" y="{ty}" font-size="10" fill="#64748b" text-anchor="end">{}</text>"##,
            esc(&label)
        );
    }
    let step = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0]
        .into_iter()
        .find(|st| st / end_s * pw >= 60.0)
        .unwrap_or(600.0);
    let mut k = 0.0;
    while k <= end_s + 1e-9 {
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="10" fill="#64748b" text-anchor="middle">{k:.0} s</text>"##,
            px(xs(k)),
            px(pt + ph + 15.0)
        );
        k += step;
    }
    let _ = write!(
        s,
        r##"<text transform="translate({},{}) rotate(-90)" font-size="10" fill="#64748b" text-anchor="middle">{}</text>"##,
        px(ox + 10.0),
        px(pt + ph / 2.0),
        esc(y_title)
    );
    for l in lines {
        let mut d = String::new();
        let mut prev: Option<usize> = None;
        for (sec, v, b) in &l.points {
            let cmd = if prev.is_some_and(|p| p + 1 == *b) {
                'L'
            } else {
                'M'
            };
            let _ = write!(d, "{cmd}{} {}", px(xs(*sec)), px(ys(*v)));
            prev = Some(*b);
        }
        if l.width > 0.0 {
            let _ = write!(
                s,
                r##"<path d="{d}" fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" stroke-linejoin="round"><title>{}</title></path>"##,
                l.color,
                l.width,
                l.dash,
                esc(&l.label)
            );
        }
        if l.dot > 0.0 {
            let opacity = if l.width > 0.0 { 1.0 } else { 0.5 };
            for (sec, v, _) in &l.points {
                let _ = write!(
                    s,
                    r##"<circle cx="{}" cy="{}" r="{}" fill="{}" opacity="{opacity}"/>"##,
                    px(xs(*sec)),
                    px(ys(*v)),
                    l.dot,
                    l.color
                );
            }
        }
    }
    // The legend: one line under the title, left-aligned with the plot.
    let mut lx = pl;
    for l in lines {
        let sample = if l.width == 0.0 {
            format!(
                r##"<circle cx="{}" cy="30" r="2.5" fill="{}"/>"##,
                px(lx + 9.0),
                l.color
            )
        } else {
            format!(
                r##"<line x1="{}" x2="{}" y1="30" y2="30" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>"##,
                px(lx),
                px(lx + 18.0),
                l.color,
                l.dash
            )
        };
        let _ = write!(
            s,
            r##"{sample}<text x="{}" y="34" font-size="10.5" fill="#334155">{}</text>"##,
            px(lx + 22.0),
            esc(&l.label)
        );
        lx += l.label.chars().count() as f64 * 6.4 + 36.0;
    }
}
