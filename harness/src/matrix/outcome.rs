//! What one run of a matrix cell left behind, read back from its run directory: the verdict's
//! anomaly kinds with the earliest evidence time of each, and the acquire latencies of its
//! history. The matrix reads the stored files (not the run's in-memory state) so that a table can
//! always be traced to, and rebuilt from, the runs it links to.

use anyhow::Context;
use hdrhistogram::Histogram;
use results::landing::Landing;
use results::reach::Reach;
use results::store::RunReader;
use results::{AnomalyKind, OpType, Process, Validity, Verdict, F};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One kind of anomaly as a run saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindSeen {
    /// How many anomalies of this kind.
    pub count: usize,
    /// Whether this kind fails the run (the test's `fail_on`).
    pub fails: bool,
    /// When the first anomaly of this kind became true (ns of test time since the run's
    /// start; see `Anomaly::when`).
    pub first_ns: Option<u64>,
}

/// One cell × seed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    pub seed: u64,
    /// The run directory (absent when the harness failed before creating it).
    pub dir: Option<PathBuf>,
    /// The verdict (absent on a harness error without results).
    #[serde(serialize_with = "ser_validity")]
    pub validity: Option<Validity>,
    /// Anomaly kinds found, with count, whether they fail, and first time.
    pub kinds: BTreeMap<AnomalyKind, KindSeen>,
    /// Kinds the checkers said do not apply to this run, with their note (e.g. stale-accepted-write
    /// when the writes carry no fence token).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_applicable: BTreeMap<AnomalyKind, String>,
    /// Why the verdict is unknown, when it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_reasons: Vec<String>,
    /// A harness or configuration failure (containers, image, I/O ...), with its context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Acquire invoke → ok latencies, µs.
    #[serde(skip, default = "latency_histogram")]
    pub acquire_us: Histogram<u64>,
    /// Wall seconds the run took, cluster start and teardown included.
    pub wall_secs: f64,
    /// The libraries the run's adapters named (`clients.txt`): which version really ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
    /// What the run reached of its lock client's renewal, retry and recovery code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
    /// Which of its planned faults landed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landing: Option<Landing>,
    /// The shared cluster the run used (its Docker run id); none: a cluster of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

fn ser_validity<S: serde::Serializer>(v: &Option<Validity>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => v.serialize(s),
        None => s.serialize_none(),
    }
}

/// An empty latency histogram (1 µs .. 1 h, 3 significant digits).
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds are valid")
}

impl RunOutcome {
    /// A run that produced nothing to read (the harness failed before the history existed).
    pub fn failed(seed: u64, dir: Option<PathBuf>, error: String, wall_secs: f64) -> Self {
        Self {
            seed,
            dir,
            validity: None,
            kinds: BTreeMap::new(),
            not_applicable: BTreeMap::new(),
            unknown_reasons: Vec::new(),
            error: Some(error),
            acquire_us: latency_histogram(),
            wall_secs,
            clients: Vec::new(),
            reach: None,
            landing: None,
            cluster: None,
        }
    }

    /// Reads `results.json` and `history.jsonl` of a finished run.
    pub fn read(seed: u64, dir: &Path, wall_secs: f64) -> anyhow::Result<Self> {
        let run = RunReader::open(dir);
        let verdict = run.verdict()?;
        let reach = Reach::of(&verdict);
        let landing = Landing::of(&verdict);
        Ok(Self {
            seed,
            dir: Some(dir.to_path_buf()),
            validity: Some(verdict.valid),
            kinds: kinds(&verdict),
            not_applicable: not_applicable(&verdict),
            unknown_reasons: verdict.unknown_reasons,
            error: None,
            acquire_us: acquire_latencies(&run)?,
            wall_secs,
            clients: run.clients()?,
            reach,
            landing,
            cluster: None,
        })
    }

    /// Whether any anomaly that fails the run was found.
    pub fn failed_anomaly(&self) -> bool {
        self.kinds.values().any(|k| k.fails)
    }

    /// The kinds that fail the run, in kind order.
    pub fn failing_kinds(&self) -> impl Iterator<Item = AnomalyKind> + '_ {
        self.kinds
            .iter()
            .filter(|(_, k)| k.fails)
            .map(|(kind, _)| *kind)
    }

    /// When the first failing anomaly became true.
    pub fn first_failing_ns(&self) -> Option<u64> {
        self.kinds
            .values()
            .filter(|k| k.fails)
            .filter_map(|k| k.first_ns)
            .min()
    }
}

/// The verdict's anomalies grouped by kind.
pub fn kinds(verdict: &Verdict) -> BTreeMap<AnomalyKind, KindSeen> {
    let mut out: BTreeMap<AnomalyKind, KindSeen> = BTreeMap::new();
    for a in &verdict.anomalies {
        let first = a.when();
        let seen = out.entry(a.kind).or_insert(KindSeen {
            count: 0,
            fails: false,
            first_ns: None,
        });
        seen.count += 1;
        seen.fails |= a.fails;
        seen.first_ns = match (seen.first_ns, first) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    out
}

/// The kinds whose checker reported `"status": "not applicable"` in the verdict's stats.
pub fn not_applicable(verdict: &Verdict) -> BTreeMap<AnomalyKind, String> {
    AnomalyKind::ALL
        .into_iter()
        .filter_map(|k| {
            let stat = verdict.stats.get(k.as_str())?;
            (stat.get("status")?.as_str()? == "not applicable").then(|| {
                let note = stat
                    .get("note")
                    .and_then(|n| n.as_str())
                    .unwrap_or_default();
                (k, note.to_string())
            })
        })
        .collect()
}

/// Acquire latencies (µs) of a history: each worker process has at most one operation in
/// flight (Jepsen semantics), so an acquire `ok` completes the process's last acquire `invoke`.
/// Failed and indeterminate acquires are not latencies of a granted lock and are left out.
pub fn acquire_latencies(run: &RunReader) -> anyhow::Result<Histogram<u64>> {
    let mut hist = latency_histogram();
    let mut pending: HashMap<u32, u64> = HashMap::new();
    let read = run.stream_history(|_, e| {
        let Process::Worker(p) = e.process else {
            return;
        };
        if e.f != F::Acquire {
            if e.kind == OpType::Invoke {
                pending.remove(&p);
            }
            return;
        }
        match e.kind {
            OpType::Invoke => {
                pending.insert(p, e.time);
            }
            OpType::Ok => {
                if let Some(start) = pending.remove(&p) {
                    let us = (e.time.saturating_sub(start) / 1_000).max(1);
                    let _ = hist.record(us);
                }
            }
            OpType::Fail | OpType::Info => {
                pending.remove(&p);
            }
        }
    });
    match read {
        // A torn last line: the latencies before it stand (the verdict says the rest).
        Ok(_) | Err(results::store::StoreError::TornTail { .. }) => Ok(hist),
        Err(e) => Err(e)
            .with_context(|| format!("reading acquire latencies from {}", run.dir().display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Anomaly, Diagnosis, Evidence};

    fn anomaly(kind: AnomalyKind, fails: bool, times: Vec<u64>) -> Anomaly {
        Anomaly {
            kind,
            fails,
            summary: String::new(),
            at: times.last().copied(),
            evidence: Evidence {
                times,
                ..Default::default()
            },
            diagnosis: Diagnosis::default(),
        }
    }

    #[test]
    fn kinds_keep_when_the_first_became_true_and_whether_any_fails() {
        let v = Verdict {
            valid: Validity::Invalid,
            anomalies: vec![
                anomaly(AnomalyKind::StaleAcceptedWrite, true, vec![9, 12]),
                anomaly(AnomalyKind::StaleAcceptedWrite, true, vec![4, 20]),
                anomaly(AnomalyKind::ConcurrentHolders, false, vec![]),
            ],
            unknown_reasons: vec![],
            stats: Default::default(),
        };
        let k = kinds(&v);
        assert_eq!(k[&AnomalyKind::StaleAcceptedWrite].count, 2);
        // The first became true at 12 (its evidence starts at 9), the second at 20.
        assert_eq!(k[&AnomalyKind::StaleAcceptedWrite].first_ns, Some(12));
        assert!(!k[&AnomalyKind::ConcurrentHolders].fails);
        assert_eq!(k[&AnomalyKind::ConcurrentHolders].first_ns, None);
    }

    #[test]
    fn kinds_a_checker_could_not_apply_are_kept_with_their_note() {
        let v: Verdict = serde_json::from_str(
            r#"{"valid": true, "anomalies": [], "stats": {
                "stale-accepted-write": {"count": 0, "status": "not applicable", "note": "the writes carry no fence token"},
                "double-release": {"count": 0, "status": "checked"}, "events": 3}}"#,
        )
        .unwrap();
        let na = not_applicable(&v);
        assert_eq!(na.len(), 1);
        assert_eq!(
            na[&AnomalyKind::StaleAcceptedWrite],
            "the writes carry no fence token"
        );
    }

    #[test]
    fn acquire_latency_pairs_invoke_with_ok_per_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let lines = [
            r#"{"index":0,"time":1000000,"process":1,"type":"invoke","f":"acquire","lock":"l"}"#,
            r#"{"index":1,"time":2000000,"process":2,"type":"invoke","f":"acquire","lock":"l"}"#,
            r#"{"index":2,"time":3000000,"process":1,"type":"ok","f":"acquire","lock":"l","owner":"w1","lease":"a","token":1}"#,
            r#"{"index":3,"time":9000000,"process":2,"type":"info","f":"acquire","lock":"l"}"#,
            r#"{"index":4,"time":9500000,"process":"nemesis","type":"info","f":"start-pause","value":{}}"#,
            r#"{"index":5,"time":10000000,"process":3,"type":"invoke","f":"acquire","lock":"l"}"#,
            r#"{"index":6,"time":15000000,"process":3,"type":"ok","f":"acquire","lock":"l","owner":"w3","lease":"b","token":2}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let h = acquire_latencies(&RunReader::open(dir.path())).unwrap();
        assert_eq!(h.len(), 2, "the indeterminate acquire is no latency");
        assert_eq!(h.min(), 2000);
        assert!(h.max() >= 4995 && h.max() <= 5005, "{}", h.max());
    }
}
