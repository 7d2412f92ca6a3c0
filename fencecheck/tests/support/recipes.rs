//! Shared by the `recipes_*` tests: a test bed of one real cluster, the fenced resource and
//! worker processes in containers (the `fencecheck` binary mounted in), driven from the host
//! over the published worker ports exactly as a run drives them; and the scenarios every recipe
//! must pass, each asserting on the recorded history and resource log.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

use checkers::fold::{falling_tokens, hold_spans, overlaps};
use containers::cluster::ClusterHandle;
use containers::docker::{
    list_run_containers, list_run_networks, ContainerSpec, Node, Readiness, Role, RunEnv,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use results::jsonl::{HistoryWriter, JsonlReader};
use results::Provider;
use results::{Event, OpResult, OpType, Process, ResourceEntry, RunClock, F};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use workloads::config::{RawRecipeConfig, RecipeKind};
use workloads::driver::{
    run_workload, Deadline, ProcessIds, Recorder, Session, Step, WorkerConn, WorkloadSpec,
};
use workloads::worker::WorkerLaunch;

const WORKER_PORT: u16 = 7100;
const RESOURCE_PORT: u16 = 7000;

/// One cluster + resource + workers, torn down by [`Bed::finish`] (or by `RunEnv`'s drop).
pub struct Bed {
    pub env: RunEnv,
    pub id: String,
    pub dir: tempfile::TempDir,
    pub cluster: ClusterHandle,
    pub recipe: RecipeKind,
    pub ttl: Duration,
    pub rec: Recorder,
    /// How many sessions the tests opened (each gets its own process ids).
    pub sessions: std::sync::atomic::AtomicU32,
    resource_addr: String,
    workers: std::sync::Mutex<Vec<Node>>,
}

impl Bed {
    /// Process ids for one more session of the test's own (apart from every other's).
    pub fn ids(&self) -> ProcessIds {
        let k = self
            .sessions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ProcessIds::of_worker(1000 + k, 1_000_000)
    }

    /// Starts `provider`, a register resource (strict, or `none` for tokenless recipes), and
    /// nothing else yet.
    pub async fn start(provider: Provider, recipe: RecipeKind, ttl: Duration) -> Bed {
        let id = format!(
            "t-workloads-{}-{:08x}",
            recipe.as_str(),
            rand::random::<u32>()
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let env = RunEnv::create(&id, Some(dir.path()))
            .await
            .expect("run env");
        let cluster = env.start_cluster(provider).await.expect("cluster");
        let clock = RunClock::start();
        let bin = env!("CARGO_BIN_EXE_fencecheck");
        let resource = env
            .start_container(
                ContainerSpec::fencecheck(
                    "resource",
                    bin,
                    [
                        "resource".to_string(),
                        "--backend=register".into(),
                        // Tokenless writes (Redlock) only pass an unfenced resource.
                        format!(
                            "--mode={}",
                            if recipe.has_token() { "strict" } else { "none" }
                        ),
                        "--log=/run-dir/resource.jsonl".into(),
                        format!("--clock-start={}", clock.start_ns()),
                        format!("--listen=0.0.0.0:{RESOURCE_PORT}"),
                    ],
                )
                .bind(dir.path(), "/run-dir", false)
                .port(RESOURCE_PORT)
                .role(Role::Resource)
                .ready(Readiness::Listening(RESOURCE_PORT)),
            )
            .await
            .expect("resource");
        let history = HistoryWriter::create(&dir.path().join("history.jsonl")).expect("history");
        Bed {
            env,
            id,
            dir,
            cluster,
            recipe,
            ttl,
            rec: Recorder::new(Arc::new(history), clock),
            sessions: std::sync::atomic::AtomicU32::new(0),
            resource_addr: resource.address.clone(),
            workers: std::sync::Mutex::new(vec![]),
        }
    }

    /// Starts a worker container with `discipline` and connects to it.
    pub async fn worker(&self, name: &str, discipline: &str) -> (Node, WorkerConn) {
        let bin = env!("CARGO_BIN_EXE_fencecheck");
        let config = RawRecipeConfig {
            ttl: Some(self.ttl),
            ..Default::default()
        }
        .validate(self.recipe)
        .expect("a valid recipe config");
        let mut launch = WorkerLaunch::recipe(name, config, self.cluster.network_endpoints());
        launch.discipline = discipline.parse().expect("a discipline");
        launch.resource = Some(self.resource_addr.clone());
        launch.clock_start = Some(self.rec.clock.start_ns());
        let args = harness::run::deploy::worker_args(&launch).expect("worker args");
        let node = self
            .env
            .start_container(
                ContainerSpec::fencecheck(name, bin, args)
                    .port(WORKER_PORT)
                    .role(Role::Worker)
                    .ready(Readiness::Listening(WORKER_PORT)),
            )
            .await
            .expect("worker container");
        let addr: SocketAddr = node
            .host_endpoint()
            .expect("published port")
            .parse()
            .unwrap();
        let conn = WorkerConn::connect(addr, Duration::from_secs(20), self.rec.clone())
            .await
            .expect("worker connection");
        self.workers.lock().unwrap().push(node.clone());
        (node, conn)
    }

    pub fn history(&self) -> Vec<Event> {
        read(&self.dir.path().join("history.jsonl"))
    }

    pub fn resource_log(&self) -> Vec<ResourceEntry> {
        read(&self.dir.path().join("resource.jsonl"))
    }

    /// Tears everything down and asserts nothing labelled with this run remains.
    pub async fn finish(self) {
        // Never leave a worker stopped: teardown must be able to kill it.
        for w in self.workers.lock().unwrap().iter() {
            let _ = kill(Pid::from_raw(w.host_pid as i32), Signal::SIGCONT);
        }
        self.env.teardown().await.expect("teardown");
        let docker = containers::docker::connect().await.expect("docker");
        let c = list_run_containers(&docker, Some(&self.id))
            .await
            .expect("list");
        let n = list_run_networks(&docker, Some(&self.id))
            .await
            .expect("list");
        assert!(
            c.is_empty() && n.is_empty(),
            "run {} left {c:?} {n:?}",
            self.id
        );
    }
}

fn read<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Vec<T> {
    JsonlReader::<T>::open(path)
        .expect("open")
        .map(|r| r.expect("line").1)
        .collect()
}

/// Runs `scenario` on a fresh bed and always tears it down, then re-raises its panic.
pub async fn with_bed<F, Fut>(provider: Provider, recipe: RecipeKind, ttl: Duration, scenario: F)
where
    F: FnOnce(Arc<Bed>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let bed = Arc::new(Bed::start(provider, recipe, ttl).await);
    let outcome = tokio::spawn(scenario(bed.clone())).await;
    let bed = Arc::into_inner(bed).expect("the scenario keeps no reference to the bed");
    bed.finish().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Must-show 1: `n` workers contend for `secs` without faults; holds never overlap and tokens
/// strictly increase (for recipes that have tokens); the resource accepted every write.
pub async fn contention(bed: &Bed, n: usize, secs: u64) {
    let mut conns = vec![];
    for i in 0..n {
        conns.push(bed.worker(&format!("c{i}"), "stop").await.1);
    }
    let spec = WorkloadSpec {
        lock: "contended".into(),
        key: "k-contended".into(),
        work: Duration::from_millis(5)..=Duration::from_millis(30),
        writes_per_hold: 2,
        app: workloads::App::Short,
        between: Duration::ZERO..=Duration::from_millis(20),
        until: Deadline::at(bed.rec.clock.now() + secs * 1_000_000_000),
        seed: 7,
    };
    let sums = run_workload(conns, &spec, &bed.rec)
        .await
        .expect("workload");
    let events = bed.history();
    let spans: Vec<_> = hold_spans(&events)
        .into_iter()
        .filter(|s| s.lock == "contended")
        .collect();
    eprintln!(
        "{}: {} holds by {n} workers in {secs} s: {sums:?}",
        bed.recipe,
        spans.len()
    );
    assert!(spans.len() >= 10, "only {} holds in {secs} s", spans.len());
    assert!(
        sums.iter().all(|s| s.acquired > 0),
        "a worker never got the lock: {sums:?}"
    );
    assert_eq!(overlaps(&spans, "contended"), vec![], "holds overlapped");
    if bed.recipe.has_token() {
        assert!(spans.iter().all(|h| h.hold.token.is_some()));
        assert_eq!(
            falling_tokens(&spans, "contended"),
            vec![],
            "tokens did not strictly increase"
        );
    } else {
        assert!(
            spans.iter().all(|h| h.hold.token.is_none()),
            "{} has no token",
            bed.recipe
        );
    }
    let log: Vec<_> = bed
        .resource_log()
        .into_iter()
        .filter(|e| e.key == "k-contended")
        .collect();
    let accepted = events
        .iter()
        .filter(|e| {
            e.f == F::Write && e.kind == OpType::Ok && e.key.as_deref() == Some("k-contended")
        })
        .count();
    assert_eq!(log.len(), accepted, "resource log and history disagree");
    assert!(
        log.iter().all(|e| e.result.is_accepted()),
        "a write without faults was rejected"
    );
    // The project's own checkers agree: no anomaly of any kind.
    let cfg = results::store::CheckConfig {
        ttl: Some(bed.ttl),
        ..Default::default()
    };
    let verdict = checkers::check(&events, Some(&log), &cfg);
    eprintln!("{}: checkers say {:?}", bed.recipe, verdict.valid);
    assert_eq!(
        verdict.anomalies,
        vec![],
        "checkers found anomalies without faults"
    );
}

/// What a worker did after its pause, as the history recorded it.
#[derive(Debug)]
pub struct PauseOutcome {
    pub paused_write: Event,
    pub lease_lost_before_write: bool,
    pub paused_release: Event,
    pub other_token: Option<u64>,
}

/// Must-show 2 and 3: worker A holds the lock and is SIGSTOPped (its host PID) with a write
/// pending; the pause outlives the ttl; B acquires and writes; A is SIGCONTed and its write and
/// then its stale release complete. Returns what the history says A did.
pub async fn pause_past_ttl(bed: &Bed, discipline: &str, lock: &str) -> PauseOutcome {
    let (a_node, a_conn) = bed.worker(&format!("a-{discipline}"), discipline).await;
    let (_, b_conn) = bed.worker(&format!("b-{discipline}"), "stop").await;
    let mut a = Session::new(a_conn, bed.ids(), bed.rec.clone());
    let mut b = Session::new(b_conn, bed.ids(), bed.rec.clone());
    let key = format!("k-{lock}");
    assert_eq!(
        a.acquire(lock).await.unwrap().kind(),
        Some(OpType::Ok),
        "A acquires"
    );
    assert_eq!(
        a.write(&key, 1).await.unwrap().kind(),
        Some(OpType::Ok),
        "A writes while it holds"
    );
    let pid = Pid::from_raw(a_node.host_pid as i32);
    kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
    let a_process = a.process();
    // A's next write is sent while it is frozen: the operation stays open.
    let pending = tokio::spawn(async move {
        let step = a.write(&key, 2).await.unwrap();
        (a, step)
    });
    tokio::time::sleep(bed.ttl + Duration::from_millis(500)).await;
    let got = b.acquire(lock).await.unwrap();
    assert_eq!(
        got.kind(),
        Some(OpType::Ok),
        "B gets the lock while A is paused: {got:?}"
    );
    let b_key = format!("k-{lock}");
    assert_eq!(
        b.write(&b_key, 1).await.unwrap().kind(),
        Some(OpType::Ok),
        "B writes"
    );
    kill(pid, Signal::SIGCONT).expect("SIGCONT");
    let (mut a, step) = tokio::time::timeout(Duration::from_secs(30), pending)
        .await
        .expect("A's write completes after SIGCONT")
        .expect("join");
    assert!(matches!(step, Step::Done(_)), "A survived: {step:?}");
    a.release().await.unwrap();
    b.release().await.unwrap();
    let events = bed.history();
    let of_a = |f: F| {
        events
            .iter()
            .rev()
            .find(|e| {
                e.process == Process::Worker(a_process) && e.f == f && e.kind != OpType::Invoke
            })
            .cloned()
    };
    let paused_write = of_a(F::Write).expect("A's write completion");
    let lost = events
        .iter()
        .find(|e| e.process == Process::Worker(a_process) && e.f == F::LeaseLost);
    let paused_release = of_a(F::Release).expect("A's release completion");
    let other_token = events
        .iter()
        .rev()
        .find(|e| e.f == F::Acquire && e.kind == OpType::Ok && e.lock.as_deref() == Some(lock))
        .and_then(|e| e.token);
    eprintln!(
        "{} {discipline}: write {paused_write:?}\nlease-lost {lost:?}\nrelease {paused_release:?}",
        bed.recipe
    );
    PauseOutcome {
        lease_lost_before_write: lost.is_some_and(|l| l.index < paused_write.index),
        paused_write,
        paused_release,
        other_token,
    }
}

/// The expectations of must-show 2 and 3 for a recipe: `stop` records lease-lost before any
/// further write and sends nothing; `continue` sends the write (the strict resource rejects it
/// when the recipe has tokens); the stale release is rejected unless the recipe is
/// `redis-lock-del`.
pub fn assert_pause(bed: &Bed, discipline: &str, o: &PauseOutcome) {
    if discipline == "stop" {
        assert!(
            o.lease_lost_before_write,
            "stop: no lease-lost before the write: {o:?}"
        );
        assert_eq!(
            o.paused_write.kind,
            OpType::Fail,
            "stop: the write is not sent: {o:?}"
        );
        assert_eq!(
            o.paused_write.result, None,
            "stop: the resource never saw it: {o:?}"
        );
    } else {
        assert!(
            o.paused_write.result.is_some(),
            "continue: the write went out: {o:?}"
        );
        let seen = bed
            .resource_log()
            .iter()
            .any(|e| Some(e.op_id.as_str()) == o.paused_write.op_id.as_deref());
        assert!(seen, "continue: the resource logged the stale write");
        if bed.recipe.has_token() {
            assert_eq!(
                o.paused_write.result,
                Some(OpResult::RejectedStaleFence),
                "{o:?}"
            );
        }
    }
    if bed.recipe == RecipeKind::RedisLockDel {
        assert_eq!(
            o.paused_release.result,
            Some(OpResult::Released),
            "plain DEL removes B's key: {o:?}"
        );
    } else {
        assert_eq!(
            o.paused_release.result,
            Some(OpResult::ReleaseRejectedNotOwner),
            "a stale release is rejected: {o:?}"
        );
    }
}

/// How long contention runs: `FENCECHECK_CONTENTION_SECS` (default 10; the full 30 s
/// passes too, it only costs time).
pub fn contention_secs() -> u64 {
    std::env::var("FENCECHECK_CONTENTION_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// What must hold for one recipe: 5 workers contending never overlap (and, with
/// tokens, strictly increase); a worker SIGSTOPped past the ttl loses the lock, and on SIGCONT
/// `stop` records lease-lost before any write while `continue` sends it; its stale release is
/// rejected (accepted only by `redis-lock-del`).
pub async fn must_show(provider: Provider, recipe: RecipeKind, ttl: Duration) {
    with_bed(provider, recipe, ttl, |bed| async move {
        contention(&bed, 5, contention_secs()).await;
        for discipline in ["stop", "continue"] {
            let outcome = pause_past_ttl(&bed, discipline, &format!("paused-{discipline}")).await;
            assert_pause(&bed, discipline, &outcome);
        }
    })
    .await;
}
