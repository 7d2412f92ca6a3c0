//! Latency percentiles (p50, p99, max per time bucket; log scale) for acquire / write / release,
//! and throughput per operation, drawn as SVG with every fault period shaded so a reader sees at
//! once whether a latency spike or a throughput hole lines up with a pause or a partition.

use super::markup::duration;
use super::panel::{nice_step, panel, Line, Scale, HEIGHT};
use super::series::Series;
use super::timeline::Fault;

pub const WIDTH: f64 = 1312.0;

/// The colour of an operation (by `f` name or throughput label).
pub fn op_color(label: &str) -> &'static str {
    let palette = [
        ("acquire", "#2563eb"),
        ("write", "#16a34a"),
        ("release", "#9333ea"),
        ("read", "#0891b2"),
        ("increment", "#ca8a04"),
        ("fail", "#dc2626"),
        ("info", "#64748b"),
    ];
    palette
        .iter()
        .find(|(k, _)| label.starts_with(k))
        .map_or("#334155", |(_, c)| c)
}

fn open(height: f64) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif"><rect width="100%" height="100%" fill="#fff"/>"##
    )
}

/// p50 / p99 / max latency per bucket for acquire, write and release, side by side.
pub fn latency_svg(series: &Series, faults: &[Fault]) -> String {
    let mut s = open(HEIGHT);
    let end_s = (series.end as f64 / 1e9).max(1e-3);
    let bucket_s = series.bucket as f64 / 1e9;
    let gap = 14.0;
    let w = (WIDTH - gap * 2.0) / 3.0;
    let all = series.latency.iter().flat_map(|o| &o.points);
    let (lo, hi) = all.fold((f64::MAX, 1.0f64), |(lo, hi), p| {
        (lo.min(p.p50.max(1) as f64), hi.max(p.max as f64))
    });
    let scale = Scale::LogNs {
        lo: if lo == f64::MAX {
            5.0
        } else {
            lo.log10().floor()
        },
        hi: hi.log10().ceil().max(6.0),
    };
    for (i, op) in series.latency.iter().enumerate() {
        let color = op_color(&op.f.as_str());
        let at = |v: fn(&super::series::LatencyPoint) -> u64| {
            op.points
                .iter()
                .map(|p| ((p.bucket as f64 + 0.5) * bucket_s, v(p) as f64, p.bucket))
                .collect::<Vec<_>>()
        };
        let lines = [
            Line {
                label: "p50".into(),
                color,
                dash: "",
                width: 2.2,
                points: at(|p| p.p50),
                dot: 2.2,
            },
            Line {
                label: "p99".into(),
                color,
                dash: "5 3",
                width: 1.4,
                points: at(|p| p.p99),
                dot: 1.5,
            },
            Line {
                label: "max".into(),
                color,
                dash: "",
                width: 0.0,
                points: at(|p| p.max),
                dot: 1.8,
            },
        ];
        let title = match &op.overall {
            Some(o) => format!(
                "{} latency — n={} p50 {} p99 {}",
                op.f,
                o.count,
                duration(o.p50),
                duration(o.p99)
            ),
            None => format!("{} latency — no completed operations", op.f),
        };
        panel(
            &mut s,
            i as f64 * (w + gap),
            w,
            &title,
            &lines,
            &scale,
            faults,
            end_s,
            "latency (log)",
        );
    }
    s.push_str("</svg>");
    s
}

/// Completions per second, per operation (ok), plus all failures and unknowns.
pub fn throughput_svg(series: &Series, faults: &[Fault]) -> String {
    let mut s = open(HEIGHT);
    let end_s = (series.end as f64 / 1e9).max(1e-3);
    let bucket_s = series.bucket as f64 / 1e9;
    let hi = series
        .throughput
        .iter()
        .flat_map(|r| &r.per_sec)
        .fold(1.0f64, |a, b| a.max(*b));
    let scale = Scale::Linear {
        hi: nice_step(hi * 1.1 / 4.0) * 4.0,
    };
    let lines: Vec<Line> = series
        .throughput
        .iter()
        .map(|r| Line {
            label: r.label.clone(),
            color: op_color(&r.label),
            dash: if r.label.starts_with("fail") || r.label.starts_with("info") {
                "4 3"
            } else {
                ""
            },
            width: 1.8,
            points: r
                .per_sec
                .iter()
                .enumerate()
                .map(|(b, v)| ((b as f64 + 0.5) * bucket_s, *v, b))
                .collect(),
            dot: 0.0,
        })
        .collect();
    let total: f64 = series
        .throughput
        .iter()
        .flat_map(|r| &r.per_sec)
        .sum::<f64>()
        * bucket_s;
    panel(
        &mut s,
        0.0,
        WIDTH,
        &format!(
            "throughput — {total:.0} completions, per {} bucket",
            duration(series.bucket)
        ),
        &lines,
        &scale,
        faults,
        end_s,
        "ops / s",
    );
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glyphs::fault_color;
    use crate::panel::decade;

    #[test]
    fn log_axis_labels_are_round_decades() {
        assert_eq!(decade(3), "1 µs");
        assert_eq!(decade(7), "10 ms");
        assert_eq!(decade(11), "100 s");
    }

    #[test]
    fn fault_periods_are_shaded_in_every_panel() {
        let series = Series::build(&[], 10_000_000_000);
        let faults = [Fault {
            name: "halves".into(),
            start: 2_000_000_000,
            end: 4_000_000_000,
            targets: vec![],
        }];
        let svg = latency_svg(&series, &faults);
        assert_eq!(svg.matches(fault_color("halves").1).count(), 3);
        assert!(svg.contains("no completed operations"));
        assert_eq!(
            throughput_svg(&series, &faults)
                .matches(fault_color("halves").1)
                .count(),
            1
        );
    }
}
