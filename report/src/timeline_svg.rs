//! The timeline drawn: one lane per worker with hold bars, writes (shape and colour say accepted /
//! rejected / unknown), lease-lost and exit marks, faults hatched on the lanes they hit and banded
//! across all lanes, and one numbered flag per anomaly linking to its evidence on the page.
//!
//! Every element placed in time carries `data-t` (seconds) and, for spans, `data-d`, so the page's
//! zoom control can re-place it without re-rendering; the static positions written here are the
//! "fit to width" layout, which is what a reader without JavaScript (or a screenshot) sees.

use std::fmt::Write as _;

use super::glyphs::{
    family_color, fault_color, hatch_of, legend, mark_shape, ring, write_shape, HATCHES,
};
use super::markup::{esc, px, secs};
use super::timeline::{HoldEnd, ServiceLane, Timeline, WriteMark};

mod parts;
use parts::*;

pub const LABEL_W: f64 = 128.0;
pub const PLOT_W: f64 = 1160.0;
/// Left padding of the plot so a marker at t=0 is not cut in half; right padding likewise.
pub const X0: f64 = 10.0;
pub const PAD: f64 = 14.0;
const AXIS_H: f64 = 24.0;
const NEMESIS_Y: f64 = 28.0;
const LANES_Y: f64 = 58.0;
const LANE_H: f64 = 50.0;
const FLAG_ROW_H: f64 = 20.0;

/// Total height of the drawing.
pub fn height(t: &Timeline) -> f64 {
    LANES_Y + t.rows() as f64 * LANE_H + flag_rows(t) as f64 * FLAG_ROW_H + 8.0 + AXIS_H
}

/// Pixels per second of the fit-to-width layout.
pub fn base_pps(t: &Timeline) -> f64 {
    PLOT_W / (t.end as f64 / 1e9)
}

fn flag_rows(t: &Timeline) -> usize {
    flag_layout(t).into_iter().max().map_or(1, |r| r + 1)
}

/// Row of each anomaly flag: the first row where it does not collide with the previous flag.
fn flag_layout(t: &Timeline) -> Vec<usize> {
    let pps = base_pps(t);
    let mut last_x: Vec<f64> = Vec::new();
    let mut order: Vec<usize> = (0..t.anomalies.len()).collect();
    order.sort_by_key(|i| t.anomalies[*i].time);
    let mut rows = vec![0; t.anomalies.len()];
    for i in order {
        let x = t.anomalies[i].time as f64 / 1e9 * pps;
        let row = last_x
            .iter()
            .position(|lx| x - lx > 34.0)
            .unwrap_or(last_x.len().min(3));
        if row == last_x.len() {
            last_x.push(x);
        } else {
            last_x[row] = x;
        }
        rows[i] = row;
    }
    rows
}

/// The lane labels (left column), drawn separately so they stay put while the plot scrolls.
pub fn labels(t: &Timeline) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" class="tl-rowlabel" font-size="11" fill="#475569" font-weight="600">nemesis</text>"##,
        8,
        px(NEMESIS_Y + 15.0)
    );
    for (i, lane) in t.lanes.iter().enumerate() {
        let y = LANES_Y + i as f64 * LANE_H;
        let procs = lane
            .processes
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            s,
            r##"<rect x="0" y="{}" width="{LABEL_W}" height="{LANE_H}" fill="{}"/><text x="8" y="{}" font-size="13" font-weight="600" fill="#0f172a">{}</text><text x="8" y="{}" font-size="10.5" fill="#64748b">process {}</text>"##,
            px(y),
            if i % 2 == 0 { "#f8fafc" } else { "#fff" },
            px(y + 22.0),
            esc(&lane.name),
            px(y + 37.0),
            esc(&procs)
        );
    }
    if let Some(service) = &t.service {
        let y = LANES_Y + t.lanes.len() as f64 * LANE_H;
        let servers = match service.nodes.as_slice() {
            [None] => "its own record".to_string(),
            [Some(node)] => node.clone(),
            nodes => format!("{} servers", nodes.len()),
        };
        let _ = write!(
            s,
            r##"<rect x="0" y="{}" width="{LABEL_W}" height="{LANE_H}" fill="#f0fdf4"/><text x="8" y="{}" font-size="13" font-weight="600" fill="#065f46">lock service</text><text x="8" y="{}" font-size="10.5" fill="#64748b">{}</text>"##,
            px(y),
            px(y + 22.0),
            px(y + 37.0),
            esc(&servers)
        );
    }
    let ay = LANES_Y + t.rows() as f64 * LANE_H;
    let _ = write!(
        s,
        r##"<text x="8" y="{}" font-size="11" fill="#475569" font-weight="600">anomalies</text>"##,
        px(ay + 17.0)
    );
    s
}

/// The time-placed content (x = 0 is `X0` px before t = 0).
pub fn plot(t: &Timeline) -> String {
    let pps = base_pps(t);
    let x = |ns: u64| X0 + ns as f64 / 1e9 * pps;
    let ts = |ns: u64| format!("{:.4}", ns as f64 / 1e9);
    let h = height(t);
    let lanes_bottom = LANES_Y + t.rows() as f64 * LANE_H;
    let width = X0 + PLOT_W + PAD;
    let mut s = String::with_capacity(64 * 1024);
    s.push_str(r##"<defs>"##);
    for (name, family) in HATCHES {
        let (strong, light) = family_color(family);
        let _ = write!(
            s,
            r##"<pattern id="hatch-{name}" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="{light}"/><rect width="2.5" height="7" fill="{strong}" opacity=".35"/></pattern>"##
        );
    }
    s.push_str("</defs>");
    for i in 0..t.lanes.len() {
        let y = LANES_Y + i as f64 * LANE_H;
        let _ = write!(
            s,
            r##"<rect x="0" y="{}" width="{}" height="{LANE_H}" fill="{}" class="tl-lanebg"/>"##,
            px(y),
            px(width),
            if i % 2 == 0 { "#f8fafc" } else { "#fff" }
        );
    }
    // Faults: a faint band across every lane, and the band in the nemesis row.
    for f in &t.faults {
        let (strong, light) = fault_color(&f.name);
        let (fx, fw) = (x(f.start), ((f.end - f.start) as f64 / 1e9 * pps).max(1.5));
        let title = format!(
            "{} · {} → {} · targets: {}",
            f.name,
            secs(f.start),
            secs(f.end),
            if f.targets.is_empty() {
                "—".into()
            } else {
                f.targets.join(", ")
            }
        );
        let _ = write!(
            s,
            r##"<rect data-t="{}" data-d="{}" x="{}" y="{NEMESIS_Y}" width="{}" height="{}" fill="{light}" opacity=".55"/>"##,
            ts(f.start),
            ts(f.end - f.start),
            px(fx),
            px(fw),
            px(lanes_bottom - NEMESIS_Y)
        );
        let _ = write!(
            s,
            r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="20" rx="3" fill="{strong}" class="tl-fault"><title>{}</title></rect>"##,
            ts(f.start),
            ts(f.end - f.start),
            px(fx),
            px(NEMESIS_Y + 1.0),
            px(fw),
            esc(&title)
        );
        let full = format!("{} → {}", f.name, f.targets.join(", "));
        let tiny = f.name.split('-').next().unwrap_or("").to_string();
        let at = (f.start, f.end - f.start, fx, NEMESIS_Y + 15.0);
        fitted_labels(
            &mut s,
            at,
            fw,
            &[full, f.name.clone(), tiny],
            r##"font-size="11" fill="#fff" font-weight="600""##,
        );
    }
    s.push_str(&grid(t, pps, h));
    for (i, lane) in t.lanes.iter().enumerate() {
        let y = LANES_Y + i as f64 * LANE_H;
        for f in &lane.faulted {
            let class = hatch_of(&f.label);
            let w = ((f.end - f.start) as f64 / 1e9 * pps).max(1.5);
            let _ = write!(
                s,
                r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="{}" fill="url(#hatch-{class})"><title>{} {} · {} → {}</title></rect>"##,
                ts(f.start),
                ts(f.end - f.start),
                px(x(f.start)),
                px(y + 1.0),
                px(w),
                px(LANE_H - 2.0),
                esc(&f.label),
                esc(&lane.name),
                secs(f.start),
                secs(f.end)
            );
            let _ = write!(
                s,
                r##"<text data-t="{}" data-dx="3" data-w="{}" data-min="50" x="{}" y="{}" font-size="9.5" font-weight="700" fill="{}"{}>{}</text>"##,
                ts(f.start),
                ts(f.end - f.start),
                px(x(f.start) + 3.0),
                px(y + 11.0),
                fault_color(&f.label).0,
                hidden(w, 50),
                esc(&short_fault(&f.label))
            );
        }
    }
    for a in &t.anomalies {
        let colour = if a.fails { "#dc2626" } else { "#d97706" };
        let (t0, lx, y2) = (ts(a.time), px(x(a.time)), px(lanes_bottom + 4.0));
        let _ = write!(
            s,
            r##"<line data-t="{t0}" x1="{lx}" x2="{lx}" y1="{LANES_Y}" y2="{y2}" stroke="{colour}" stroke-width="1.2" stroke-dasharray="4 3" opacity=".7"/>"##
        );
    }
    for (i, lane) in t.lanes.iter().enumerate() {
        // Writes in a row above the hold bar, so bars and their token labels stay visible.
        let (wy, cy) = (
            LANES_Y + i as f64 * LANE_H + 13.0,
            LANES_Y + i as f64 * LANE_H + 32.0,
        );
        for w in &lane.waits {
            let _ = write!(
                s,
                r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="2" fill="#cbd5e1"><title>{} · {} → {}</title></rect>"##,
                ts(w.start),
                ts(w.end - w.start),
                px(x(w.start)),
                px(cy - 1.0),
                px(((w.end - w.start) as f64 / 1e9 * pps).max(1.0)),
                esc(&w.label),
                secs(w.start),
                secs(w.end)
            );
        }
        for hd in &lane.holds {
            let w = ((hd.end - hd.start) as f64 / 1e9 * pps).max(1.5);
            let (fill, why) = match hd.ended_by {
                HoldEnd::Release => ("#2563eb", "release"),
                HoldEnd::LeaseLost => ("#2563eb", "lease-lost"),
                HoldEnd::Exit => ("#1e40af", "process exit"),
                HoldEnd::Retired => ("#1e40af", "indeterminate outcome (process retired)"),
                HoldEnd::HistoryEnd => ("#60a5fa", "end of run"),
            };
            let title = format!("hold {} · token {} · lease {} · owner {} · {} → {} ({}) · ended by {why} · history #{}", hd.lock.as_deref().unwrap_or(""), super::timeline::opt(hd.token), hd.lease.as_deref().unwrap_or("—"), hd.owner.as_deref().unwrap_or("—"), secs(hd.start), secs(hd.end), super::markup::duration(hd.end - hd.start), hd.index);
            let _ = write!(
                s,
                r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="16" rx="3" fill="{fill}" class="tl-hold"><title>{}</title></rect>"##,
                ts(hd.start),
                ts(hd.end - hd.start),
                px(x(hd.start)),
                px(cy - 8.0),
                px(w),
                esc(&title)
            );
            if let Some(tok) = hd.token {
                let long = format!(
                    "token {tok} · lease {} · {}",
                    hd.lease.as_deref().unwrap_or("—"),
                    hd.owner.as_deref().unwrap_or("")
                );
                let at = (hd.start, hd.end - hd.start, x(hd.start), cy + 3.5);
                fitted_labels(
                    &mut s,
                    at,
                    w,
                    &[long, format!("token {tok}"), format!("t{tok}")],
                    r##"font-size="10" font-weight="700" fill="#fff""##,
                );
            }
        }
        for m in &lane.marks {
            let _ = write!(
                s,
                r##"<g data-t="{}" data-y="{}" transform="translate({},{})" class="tl-mark"><title>{} · {} · history #{}</title>{}{}</g>"##,
                ts(m.time),
                px(cy),
                px(x(m.time)),
                px(cy),
                esc(&m.detail),
                secs(m.time),
                m.index,
                mark_shape(m.kind),
                ring(&m.anomalies)
            );
        }
        for w in &lane.writes {
            let _ = write!(
                s,
                r##"<g data-t="{}" data-y="{}" transform="translate({},{})" class="tl-write"><title>{}</title>{}{}</g>"##,
                ts(w.time),
                px(wy),
                px(x(w.time)),
                px(wy),
                esc(&write_title(w)),
                write_shape(w.outcome),
                ring(&w.anomalies)
            );
        }
    }
    if let Some(service) = &t.service {
        s.push_str(&service_row(t, service, pps));
    }
    let rows = flag_layout(t);
    for (a, row) in t.anomalies.iter().zip(rows) {
        let colour = if a.fails { "#dc2626" } else { "#d97706" };
        let fy = lanes_bottom + 4.0 + row as f64 * FLAG_ROW_H;
        let n = a.number + 1;
        let _ = write!(
            s,
            r##"<a href="#anomaly-{n}"><g id="tl-anomaly-{n}" class="tl-flag" data-t="{}" data-y="{}" transform="translate({},{})"><title>#{n} {} at {} — click for its evidence</title><path d="M0 0V17" stroke="{colour}" stroke-width="1.5"/><rect x="0" y="1" width="{}" height="15" rx="2" fill="{colour}"/><text x="4" y="12" font-size="10.5" font-weight="700" fill="#fff">#{n}</text></g></a>"##,
            ts(a.time),
            px(fy),
            px(x(a.time)),
            px(fy),
            a.kind,
            secs(a.time),
            12 + n.to_string().len() * 7
        );
    }
    s
}

/// The service's row: each key of a lock as the service held it, one sub-row per server, green
/// where a worker's grant names it and amber where none does; hatched where the record is blind.
fn service_row(t: &Timeline, service: &ServiceLane, pps: f64) -> String {
    let mut s = String::new();
    let x = |ns: u64| X0 + ns as f64 / 1e9 * pps;
    let ts = |ns: u64| format!("{:.4}", ns as f64 / 1e9);
    let y = LANES_Y + t.lanes.len() as f64 * LANE_H;
    let _ = write!(
        s,
        r##"<rect x="0" y="{}" width="{}" height="{LANE_H}" fill="#f0fdf4" class="tl-lanebg"/>"##,
        px(y),
        px(X0 + PLOT_W + PAD)
    );
    for b in &service.blind {
        let _ = write!(
            s,
            r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="{}" fill="url(#hatch-other)" opacity=".6"><title>lock service: {} · {} → {}</title></rect>"##,
            ts(b.start),
            ts(b.end.saturating_sub(b.start)),
            px(x(b.start)),
            px(y + 1.0),
            px(((b.end.saturating_sub(b.start)) as f64 / 1e9 * pps).max(1.0)),
            px(LANE_H - 2.0),
            esc(&b.label),
            secs(b.start),
            secs(b.end)
        );
    }
    let h = ((LANE_H - 8.0) / service.nodes.len() as f64).min(16.0);
    for k in &service.keys {
        let (fill, whose) = match k.lane {
            Some(i) => ("#059669", format!("granted to {}", t.lanes[i].name)),
            None => ("#f59e0b", "no grant names it".to_string()),
        };
        let node = service.nodes[k.row].as_deref().unwrap_or("");
        let title = format!(
            "{} {} · {} · {}{} → {} ({}) · {}",
            k.key,
            k.holder.as_deref().unwrap_or(""),
            whose,
            if node.is_empty() {
                String::new()
            } else {
                format!("{node} · ")
            },
            secs(k.start),
            secs(k.end),
            k.ended,
            super::markup::duration(k.end.saturating_sub(k.start))
        );
        let _ = write!(
            s,
            r##"<rect data-t="{}" data-d="{}" x="{}" y="{}" width="{}" height="{}" rx="2" fill="{fill}" class="tl-service"><title>{}</title></rect>"##,
            ts(k.start),
            ts(k.end.saturating_sub(k.start)),
            px(x(k.start)),
            px(y + 4.0 + k.row as f64 * h),
            px(((k.end.saturating_sub(k.start)) as f64 / 1e9 * pps).max(1.5)),
            px((h - 2.0).max(2.0)),
            esc(&title)
        );
    }
    for m in &service.masters {
        let _ = write!(
            s,
            r##"<line data-t="{t}" x1="{x}" x2="{x}" y1="{top}" y2="{bottom}" stroke="#7c3aed" stroke-width="2" class="tl-service"><title>{who} now calls {master} the master · {at}</title></line>"##,
            t = ts(m.at),
            x = px(x(m.at)),
            top = px(y + 1.0),
            bottom = px(y + LANE_H - 1.0),
            who = esc(&m.sentinel),
            master = esc(&m.master),
            at = secs(m.at)
        );
    }
    s
}

/// The timeline as one standalone SVG file (labels + plot + legend).
pub fn standalone(t: &Timeline) -> String {
    let h = height(t);
    let legend_h = 30.0;
    let w = LABEL_W + X0 + PLOT_W + PAD;
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {0} {1}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif"><rect width="100%" height="100%" fill="#fff"/>"##,
        px(w),
        px(h + legend_h)
    );
    s.push_str(&labels(t));
    let _ = write!(
        s,
        r##"<g transform="translate({LABEL_W},0)">{}</g><g transform="translate(8,{})">"##,
        plot(t),
        px(h + 8.0)
    );
    let mut lx = 0.0;
    for (shape, label) in legend() {
        let _ = write!(
            s,
            r##"<g transform="translate({},8)">{shape}</g><text x="{}" y="12" font-size="11" fill="#334155">{}</text>"##,
            px(lx + 8.0),
            px(lx + 20.0),
            esc(label)
        );
        lx += 28.0 + label.len() as f64 * 6.6;
    }
    s.push_str("</g></svg>");
    s
}
