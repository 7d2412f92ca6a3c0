//! A generator of realistic lock histories for report tests: N workers contend for one lock for a
//! whole run, the holder writes to a fenced (or unfenced) resource every ~200 ms, and three
//! incidents happen: the holder is paused past its TTL and writes with its old token after waking
//! (rejected by a fenced resource, accepted by an unfenced one), a second paused holder releases
//! with its old lease and removes its successor's lock (a double release), and a holder is
//! killed and comes back under a new process id. The verdict is built by hand from what the
//! generator knows it did, the way the checkers would report it.
#![allow(dead_code)]

use results::{
    Anomaly, AnomalyKind, Diagnosis, Event, Evidence, OpResult, OpType, Process, ResourceEntry,
    Validity, Verdict, WriteResult, F,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const TTL: u64 = 2 * S;

/// What to generate.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub workers: u32,
    pub duration: u64,
    /// A strictly fenced resource rejects stale tokens; an unfenced one accepts them.
    pub fenced: bool,
    pub seed: u64,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            workers: 5,
            duration: 60 * S,
            fenced: false,
            seed: 42,
        }
    }
}

/// A generated run.
#[derive(Debug, Clone)]
pub struct Run {
    pub history: Vec<Event>,
    pub resource: Vec<ResourceEntry>,
    pub verdict: Verdict,
    pub checked: Vec<AnomalyKind>,
}

struct Gen {
    ev: Vec<Event>,
    res: Vec<ResourceEntry>,
    rng: u64,
    token: u64,
    highest: Option<u64>,
    pid: Vec<u32>,
    next_pid: u32,
    ops: u64,
    fenced: bool,
}

/// A hold the generator handed out.
#[derive(Debug, Clone)]
struct Held {
    worker: usize,
    start: u64,
    token: u64,
    lease: String,
}

impl Gen {
    fn rand(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        lo + self.rng % (hi - lo).max(1)
    }

    fn push(&mut self, t: u64, w: usize, kind: OpType, f: F) -> &mut Event {
        self.ev
            .push(Event::new(t, Process::Worker(self.pid[w]), kind, f));
        let e = self.ev.last_mut().expect("just pushed");
        e.lock = Some("report".into());
        e
    }

    fn nemesis(&mut self, t: u64, f: F, fault: &str, target: usize) {
        let mut e = Event::new(t, Process::Nemesis, OpType::Info, f);
        e.value = Some(
            serde_json::json!({"fault": fault, "targets": [format!("worker-{}", target + 1)]}),
        );
        self.ev.push(e);
    }

    fn acquire_ok(&mut self, t: u64, w: usize) -> Held {
        self.token += 1;
        let lease = format!("{:x}", 0x694d_0000_0000u64 + self.token * 7919);
        let token = self.token;
        let e = self.push(t, w, OpType::Ok, F::Acquire);
        e.owner = Some(format!("worker-{}", w + 1));
        e.lease = Some(lease.clone());
        e.token = Some(token);
        Held {
            worker: w,
            start: t,
            token,
            lease,
        }
    }

    /// A write invoked at `t`, decided by the resource at `decide`, answered at `decide + 1ms`.
    fn write(&mut self, t: u64, decide: u64, h: &Held) -> (u64, bool) {
        self.ops += 1;
        let op_id = format!("{}-{}", self.pid[h.worker], self.ops);
        let value = format!("v{}", self.ops);
        let fill = |e: &mut Event| {
            e.key = Some("report:417".into());
            e.value = Some(value.clone().into());
            e.token = Some(h.token);
            e.op_id = Some(op_id.clone());
        };
        fill(self.push(t, h.worker, OpType::Invoke, F::Write));
        let highest_before = self.highest;
        let accepted = !self.fenced || highest_before.is_none_or(|hb| h.token >= hb);
        let result = if accepted {
            WriteResult::Accepted
        } else {
            WriteResult::RejectedStaleFence
        };
        if accepted {
            self.highest = Some(highest_before.map_or(h.token, |hb| hb.max(h.token)));
        }
        self.res.push(ResourceEntry {
            seq: 0,
            time: decide,
            key: "report:417".into(),
            process: self.pid[h.worker],
            owner: format!("worker-{}", h.worker + 1),
            lease: h.lease.clone(),
            token: Some(h.token),
            op_id: op_id.clone(),
            value: value.clone().into(),
            highest_before,
            result,
        });
        let kind = if accepted { OpType::Ok } else { OpType::Fail };
        let e = self.push(decide + MS, h.worker, kind, F::Write);
        fill(e);
        e.result = Some(result.into());
        e.highest_before = highest_before;
        (decide, accepted)
    }

    fn release(&mut self, t: u64, h: &Held) {
        for (at, kind) in [(t, OpType::Invoke), (t + 2 * MS, OpType::Ok)] {
            let e = self.push(at, h.worker, kind, F::Release);
            e.owner = Some(format!("worker-{}", h.worker + 1));
            e.lease = Some(h.lease.clone());
            e.token = Some(h.token);
            if kind == OpType::Ok {
                e.result = Some(OpResult::Released);
            }
        }
    }

    /// Writes every ~200 ms from `from` until `until`.
    fn work(&mut self, h: &Held, from: u64, until: u64) {
        let mut t = from + self.rand(20, 60) * MS;
        while t + 10 * MS < until {
            let d = t + self.rand(1, 4) * MS;
            self.write(t, d, h);
            t += self.rand(150, 260) * MS;
        }
    }
}

fn index_of(h: &[Event], t: u64, f: F, kind: OpType) -> u64 {
    h.iter()
        .find(|e| e.time == t && e.f == f && e.kind == kind)
        .map(|e| e.index)
        .expect("generated event")
}

/// Generates the run (deterministic for a seed).
pub fn generate(sc: &Scenario) -> Run {
    let n = sc.workers as usize;
    let mut g = Gen {
        ev: Vec::new(),
        res: Vec::new(),
        rng: sc.seed | 1,
        token: 0,
        highest: None,
        pid: (1..=sc.workers).collect(),
        next_pid: sc.workers + 1,
        ops: 0,
        fenced: sc.fenced,
    };
    let pauses = [sc.duration * 3 / 10, sc.duration * 2 / 3];
    let kill_at = sc.duration * 5 / 6;
    for w in 0..n {
        g.push(5 * MS + w as u64 * 3 * MS, w, OpType::Invoke, F::Acquire);
    }
    let mut t = 12 * MS;
    let mut w = 0usize;
    let mut out_until = vec![0u64; n];
    let mut incidents = Vec::new();
    // The killed worker, back under a new process id, takes the lock as soon as it can.
    let mut prefer = None;
    while t + 3 * S < sc.duration {
        let h = g.acquire_ok(t, w);
        let planned = t + g.rand(1200, 2800) * MS;
        let pause = pauses
            .iter()
            .copied()
            .enumerate()
            .find(|(_, p)| *p > t && *p < planned);
        let next_start;
        if let Some((which, p)) = pause {
            g.work(&h, t, p);
            g.nemesis(p, F::Start("pause-holder".into()), "pause", w);
            let wake = p + 5 * S;
            g.nemesis(wake, F::Stop("pause-holder".into()), "pause", w);
            next_start = p + TTL + 40 * MS;
            incidents.push((which, h.clone(), p, wake));
            out_until[w] = wake + 200 * MS;
        } else if t < kill_at && kill_at < planned {
            g.work(&h, t, kill_at);
            g.nemesis(kill_at, F::Start("kill".into()), "kill", w);
            g.push(kill_at + 3 * MS, w, OpType::Info, F::Exit).error =
                Some("killed by the nemesis (SIGKILL)".into());
            g.nemesis(kill_at + S, F::Stop("kill".into()), "kill", w);
            g.pid[w] = g.next_pid;
            g.next_pid += 1;
            g.push(kill_at + S + 300 * MS, w, OpType::Invoke, F::Acquire);
            next_start = kill_at + TTL + 40 * MS;
            out_until[w] = kill_at + S + 300 * MS;
            prefer = Some(w);
        } else {
            g.work(&h, t, planned);
            g.release(planned, &h);
            g.push(planned + 3 * MS, w, OpType::Invoke, F::Acquire);
            next_start = planned + 4 * MS;
        }
        t = next_start;
        let candidates: Vec<usize> = (0..n).filter(|c| *c != w && out_until[*c] <= t).collect();
        w = match prefer.filter(|p| candidates.contains(p)) {
            Some(p) => {
                prefer = None;
                p
            }
            None => candidates[g.rand(0, candidates.len() as u64) as usize],
        };
    }
    // The paused holders wake: each sends the write it had in flight with its old token.
    let mut stale = Vec::new();
    for (which, h, p, wake) in &incidents {
        let (decided, accepted) = g.write(*p - 2 * MS, wake + 2 * MS, h);
        stale.push((*which, h.clone(), decided, accepted));
        if *which == 0 {
            let e = g.push(wake + 50 * MS, h.worker, OpType::Info, F::LeaseLost);
            e.owner = Some(format!("worker-{}", h.worker + 1));
            e.lease = Some(h.lease.clone());
        } else {
            g.release(wake + 80 * MS, h);
        }
        g.push(wake + 200 * MS, h.worker, OpType::Invoke, F::Acquire);
    }
    finish(g, sc, &incidents, &stale)
}

fn finish(
    mut g: Gen,
    sc: &Scenario,
    incidents: &[(usize, Held, u64, u64)],
    stale: &[(usize, Held, u64, bool)],
) -> Run {
    g.ev.sort_by_key(|e| e.time);
    for (i, e) in g.ev.iter_mut().enumerate() {
        e.index = i as u64;
    }
    g.res.sort_by_key(|r| r.time);
    // Writes were generated holder by holder, so decide them again in time order, as the
    // resource did, and tell each worker the same answer.
    let mut highest: Option<u64> = None;
    let mut answers = std::collections::HashMap::new();
    for (i, r) in g.res.iter_mut().enumerate() {
        r.seq = i as u64;
        r.highest_before = highest;
        let accepted = !sc.fenced || highest.is_none_or(|hb| r.token >= Some(hb));
        r.result = if accepted {
            WriteResult::Accepted
        } else {
            WriteResult::RejectedStaleFence
        };
        if accepted {
            highest = highest.max(r.token);
        }
        answers.insert(r.op_id.clone(), (r.result, r.highest_before));
    }
    for e in
        g.ev.iter_mut()
            .filter(|e| e.f == F::Write && e.kind != OpType::Invoke)
    {
        if let Some((result, hb)) = e.op_id.as_ref().and_then(|op| answers.get(op)) {
            e.kind = if result.is_accepted() {
                OpType::Ok
            } else {
                OpType::Fail
            };
            e.result = Some((*result).into());
            e.highest_before = *hb;
        }
    }
    let h = &g.ev;
    let mut anomalies = Vec::new();
    for (which, held, p, wake) in incidents {
        let next = h
            .iter()
            .find(|e| e.f == F::Acquire && e.kind == OpType::Ok && e.time > *p)
            .expect("a successor acquired");
        anomalies.push(Anomaly {
            kind: AnomalyKind::ConcurrentHolders,
            fails: false,
            at: Some(next.time),
            summary: format!("worker-{} (token {}) still held the lock when {} acquired it with token {}", held.worker + 1, held.token, next.owner.as_deref().unwrap_or("?"), next.token.unwrap_or(0)),
            evidence: Evidence { lock: Some("report".into()), owner: Some(format!("worker-{}", held.worker + 1)), lease: Some(held.lease.clone()), token: Some(held.token), indices: vec![index_of(h, held.start, F::Acquire, OpType::Ok), next.index], times: vec![held.start, next.time], other: [("other_owner".to_string(), serde_json::json!(next.owner)), ("other_token".to_string(), serde_json::json!(next.token))].into(), ..Default::default() },
            diagnosis: Diagnosis { observation: "two acquisitions' hold intervals overlap while the first holder was paused past its TTL".into(), likely_boundary: "leases cannot prevent two holders under process pauses (expected)".into(), what_to_check: "that the resource fences every write by token".into(), next_action: "none if no stale write was accepted".into() },
        });
        if *which == 1 {
            let rel = index_of(h, wake + 80 * MS + 2 * MS, F::Release, OpType::Ok);
            let holder = h
                .iter()
                .rev()
                .find(|e| e.f == F::Acquire && e.kind == OpType::Ok && e.time < wake + 80 * MS)
                .expect("current holder");
            anomalies.push(Anomaly {
                kind: AnomalyKind::DoubleRelease,
                fails: true,
                at: Some(wake + 80 * MS),
                summary: format!("stale owner worker-{} released lease {} while {} held the lock (token {})", held.worker + 1, held.lease, holder.owner.as_deref().unwrap_or("?"), holder.token.unwrap_or(0)),
                evidence: Evidence { lock: Some("report".into()), owner: Some(format!("worker-{}", held.worker + 1)), lease: Some(held.lease.clone()), token: Some(held.token), result: Some("released".into()), indices: vec![holder.index, index_of(h, wake + 80 * MS, F::Release, OpType::Invoke), rel], times: vec![holder.time, wake + 80 * MS], ..Default::default() },
                diagnosis: Diagnosis { observation: "a release by a stale owner returned `released` and removed the current holder's lock".into(), likely_boundary: "release is not bound to the lease handle (DEL instead of compare-and-delete)".into(), what_to_check: "the release script compares the stored owner value with the caller's".into(), next_action: "compare-and-delete on the exact lease".into() },
            });
        }
    }
    for (_, held, decided, _) in stale {
        let r = g
            .res
            .iter()
            .find(|r| r.time == *decided)
            .expect("stale decision");
        if !r.result.is_accepted() {
            continue;
        }
        let prior = g
            .res
            .iter()
            .rev()
            .find(|p| p.seq < r.seq && p.result.is_accepted() && p.token > r.token)
            .expect("a newer accepted token");
        anomalies.push(Anomaly {
            kind: AnomalyKind::StaleAcceptedWrite,
            fails: true,
            at: Some(r.time),
            summary: format!(
                "resource accepted token {} for report:417 after it had accepted token {}",
                held.token,
                prior.token.unwrap_or(0)
            ),
            evidence: Evidence {
                lock: Some("report".into()),
                key: Some("report:417".into()),
                owner: Some(r.owner.clone()),
                lease: Some(r.lease.clone()),
                token: r.token,
                highest_before: r.highest_before,
                result: Some("accepted".into()),
                seqs: vec![prior.seq, r.seq],
                times: vec![prior.time, r.time],
                ..Default::default()
            },
            diagnosis: Diagnosis {
                observation: format!(
                    "token {} accepted after token {}",
                    held.token,
                    prior.token.unwrap_or(0)
                ),
                likely_boundary: "the resource does not compare tokens atomically with the write"
                    .into(),
                what_to_check: "the resource's write path: compare-and-set on the highest token"
                    .into(),
                next_action: "add resource-side fencing; do not retry the old write".into(),
            },
        });
    }
    anomalies.sort_by_key(|a| a.evidence.times.first().copied());
    let valid = if anomalies.iter().any(|a| a.fails) {
        Validity::Invalid
    } else {
        Validity::Valid
    };
    let checked = AnomalyKind::ALL
        .into_iter()
        .filter(|k| *k != AnomalyKind::LostUpdate)
        .collect();
    let stats = [
        ("history_events".to_string(), serde_json::json!(g.ev.len())),
        (
            "lost-update".to_string(),
            serde_json::json!("not applicable: lock workload, no counter"),
        ),
        ("seed".to_string(), serde_json::json!(sc.seed)),
    ]
    .into();
    Run {
        history: g.ev,
        resource: g.res,
        verdict: Verdict {
            valid,
            anomalies,
            unknown_reasons: vec![],
            stats,
        },
        checked,
    }
}

/// Writes the run as a stored run directory (test.yaml, history.jsonl, resource.jsonl,
/// results.json), as the harness would.
pub fn store(run: &Run, dir: &std::path::Path, test_yaml: &str) {
    let lines = |items: Vec<String>| items.join("\n") + "\n";
    let history = lines(
        run.history
            .iter()
            .map(|e| serde_json::to_string(e).expect("event"))
            .collect(),
    );
    let resource = lines(
        run.resource
            .iter()
            .map(|r| serde_json::to_string(r).expect("entry"))
            .collect(),
    );
    std::fs::write(dir.join("test.yaml"), test_yaml).expect("test.yaml");
    std::fs::write(dir.join("history.jsonl"), history).expect("history.jsonl");
    std::fs::write(dir.join("resource.jsonl"), resource).expect("resource.jsonl");
    std::fs::write(
        dir.join("results.json"),
        serde_json::to_string_pretty(&run.verdict).expect("verdict"),
    )
    .expect("results.json");
}

/// The resolved test.yaml of the generated run.
pub const TEST_YAML: &str = "# The fully resolved test of this run. Re-run it with:
#   fencecheck run --provider etcd --recipe etcd-lease --resource none --nemesis pause-holder,kill --seed 42
name: etcd-lease-pause-holder
provider: etcd
recipe: etcd-lease
resource: none
workers: 5
ttl: 2s
recovery_slack: 5s
time_limit: 60s
nemesis:
  faults: [pause-holder, kill]
  interval: 15s
image: fencecheck-node:aaa6d39320ef
seed: 42
fail_on: [stale-accepted-write, duplicate-token, token-regression, double-release, duplicate-effect, stuck-lock]
";
