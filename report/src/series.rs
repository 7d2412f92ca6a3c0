//! Latency percentiles and throughput over time, from invoke → completion pairs of the history.
//!
//! A worker process has at most one operation outstanding (Jepsen's rule), so a completion
//! belongs to the latest invoke of the same process and `f`. Latency is placed in the time bucket
//! of its invoke; `info` completions are left out of latency (their duration is a timeout, not
//! the system's answer) but counted in throughput, where an engineer wants to see them.
//! Percentiles come from an HDR histogram per bucket (2 significant digits, in microseconds).

use hdrhistogram::Histogram;
use std::collections::HashMap;

use results::{Event, OpType, Process, F};

/// The operations whose latency the report plots.
pub const LATENCY_OPS: [F; 3] = [F::Acquire, F::Write, F::Release];

/// One bucket's latency percentiles, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyPoint {
    pub bucket: usize,
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// Latency of one operation over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct OpLatency {
    pub f: F,
    pub points: Vec<LatencyPoint>,
    /// The whole run's (count, p50, p99, max), if there was any sample.
    pub overall: Option<LatencyPoint>,
}

/// Completions per second of one kind, per bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub label: String,
    pub per_sec: Vec<f64>,
}

/// Everything the latency and throughput plots draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Bucket width in ns.
    pub bucket: u64,
    pub buckets: usize,
    pub end: u64,
    pub latency: Vec<OpLatency>,
    pub throughput: Vec<Rate>,
}

/// A bucket width giving about 60 buckets: 100 ms, 250 ms, 500 ms, 1 s, 2 s, 5 s, 10 s, 30 s, 60 s.
pub fn bucket_width(end: u64) -> u64 {
    const MS: u64 = 1_000_000;
    let target = end / 60;
    [100, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000]
        .into_iter()
        .map(|ms| ms * MS)
        .find(|w| *w >= target)
        .unwrap_or(60_000 * MS)
}

fn histogram() -> Histogram<u64> {
    // 1 µs .. 1 h at 2 significant digits: small, and exact enough for p50/p99 at a glance.
    Histogram::new_with_bounds(1, 3_600_000_000, 2)
        .expect("1 µs ..= 1 h at 2 digits is a valid histogram")
}

fn point(bucket: usize, h: &Histogram<u64>) -> LatencyPoint {
    LatencyPoint {
        bucket,
        count: h.len(),
        p50: h.value_at_quantile(0.5) * 1000,
        p99: h.value_at_quantile(0.99) * 1000,
        max: h.max() * 1000,
    }
}

impl Series {
    pub fn build(history: &[Event], end: u64) -> Series {
        let bucket = bucket_width(end);
        let buckets = (end / bucket + 1) as usize;
        let slot = |t: u64| ((t / bucket) as usize).min(buckets - 1);
        let mut hists: Vec<Vec<Option<Histogram<u64>>>> =
            vec![vec![None; buckets]; LATENCY_OPS.len()];
        let mut overall: Vec<Histogram<u64>> = LATENCY_OPS.iter().map(|_| histogram()).collect();
        let mut rates: Vec<(String, Vec<f64>)> = Vec::new();
        let mut pending: HashMap<(u32, String), u64> = HashMap::new();
        let per_op = 1e9 / bucket as f64;
        let mut bump = |label: String, t: u64| {
            let at = match rates.iter().position(|(l, _)| *l == label) {
                Some(at) => at,
                None => {
                    rates.push((label, vec![0.0; buckets]));
                    rates.len() - 1
                }
            };
            rates[at].1[slot(t)] += per_op;
        };
        for e in history {
            let Process::Worker(p) = e.process else {
                continue;
            };
            let key = (p, e.f.as_str().into_owned());
            if e.kind == OpType::Invoke {
                pending.insert(key, e.time);
                continue;
            }
            let label = match e.kind {
                OpType::Ok => format!("{} ok", e.f),
                OpType::Fail => "fail (all ops)".to_string(),
                _ => "info (all ops)".to_string(),
            };
            bump(label, e.time);
            let Some(start) = pending.remove(&key) else {
                continue;
            };
            let Some(op) = LATENCY_OPS.iter().position(|f| *f == e.f) else {
                continue;
            };
            if e.kind == OpType::Info {
                continue;
            }
            let micros = (e.time.saturating_sub(start) / 1000).clamp(1, 3_600_000_000);
            let h = hists[op][slot(start)].get_or_insert_with(histogram);
            let _ = h.record(micros);
            let _ = overall[op].record(micros);
        }
        let latency = LATENCY_OPS
            .iter()
            .zip(hists)
            .zip(overall)
            .map(|((f, per_bucket), all)| OpLatency {
                f: f.clone(),
                points: per_bucket
                    .iter()
                    .enumerate()
                    .filter_map(|(b, h)| h.as_ref().map(|h| point(b, h)))
                    .collect(),
                overall: (!all.is_empty()).then(|| point(0, &all)),
            })
            .collect();
        rates.sort_by_key(|(label, _)| order(label));
        let throughput = rates
            .into_iter()
            .map(|(label, per_sec)| Rate { label, per_sec })
            .collect();
        Series {
            bucket,
            buckets,
            end,
            latency,
            throughput,
        }
    }
}

/// Throughput lines in a fixed order: acquire, write, release, others, then fail and info.
fn order(label: &str) -> (usize, String) {
    let rank = ["acquire", "write", "release", "read", "increment"]
        .iter()
        .position(|f| label.starts_with(&format!("{f} ")));
    let rank = rank.unwrap_or(if label.starts_with("fail") {
        7
    } else if label.starts_with("info") {
        8
    } else {
        6
    });
    (rank, label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(index: u64, ms: u64, p: u32, kind: OpType, f: F) -> Event {
        let mut e = Event::new(ms * 1_000_000, Process::Worker(p), kind, f);
        e.index = index;
        e
    }

    #[test]
    fn pairs_completions_with_their_process_invoke_and_buckets_by_invoke_time() {
        let h = vec![
            ev(0, 100, 1, OpType::Invoke, F::Acquire),
            ev(1, 150, 2, OpType::Invoke, F::Acquire),
            ev(2, 110, 1, OpType::Ok, F::Acquire),
            ev(3, 1_400, 2, OpType::Ok, F::Acquire),
            ev(4, 1_500, 2, OpType::Invoke, F::Write),
            ev(5, 1_502, 2, OpType::Info, F::Write),
        ];
        let s = Series::build(&h, 60_000_000_000);
        assert_eq!(s.bucket, 1_000_000_000);
        let acquire = &s.latency[0];
        assert_eq!(
            acquire.points.len(),
            1,
            "both acquires were invoked in second 0"
        );
        let p = acquire.points[0];
        assert_eq!(p.count, 2);
        assert!((9_000_000..=11_000_000).contains(&p.p50), "p50 {}", p.p50);
        assert!(
            (1_230_000_000..=1_270_000_000).contains(&p.max),
            "max {}",
            p.max
        );
        assert!(
            s.latency[1].points.is_empty(),
            "info writes have no latency"
        );
        let labels: Vec<_> = s.throughput.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["acquire ok", "info (all ops)"]);
        assert_eq!(s.throughput[0].per_sec[0], 1.0);
        assert_eq!(s.throughput[0].per_sec[1], 1.0);
    }

    #[test]
    fn picks_about_sixty_buckets() {
        assert_eq!(bucket_width(5_000_000_000), 100_000_000);
        assert_eq!(bucket_width(60_000_000_000), 1_000_000_000);
        assert_eq!(bucket_width(600_000_000_000), 10_000_000_000);
    }
}
