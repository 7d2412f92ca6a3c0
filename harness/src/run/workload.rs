//! Phases 6–7 of every run, wherever its [`Site`] put things: each worker loops acquire → work
//! → write → release (or the counter's increment) while the nemesis runs the fault plan, for the
//! time limit; every fault is healed; the recovery tail follows, in which the workload goes on
//! (liveness: `stuck-lock` and `locked-out-client` look there) until every worker has taken the
//! lock again and let it go ([`super::settle`]), at most the configured recovery. The history is
//! written as it happens.

use super::live::LiveView;
use super::prepare::HarnessLog;
use super::progress::Progress;
use super::settle::Settling;
use super::site::Site;
use crate::config::{TestPlan, Workload};
use anyhow::Context;
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use workloads::driver::{
    final_read, run_counter_worker, run_worker, Deadline, Hangs, ProcessIds, Recorder, Session,
    WorkloadSpec,
};

/// Records the workload of `site` into the run directory's history.
pub async fn record(
    site: &dyn Site,
    plan: &TestPlan,
    dir: &RunDir,
    log: &HarnessLog,
    progress: &mut Progress,
    live: &LiveView,
) -> anyhow::Result<()> {
    let clock = site.clock();
    let observer = live.clone();
    let settling = Arc::new(Mutex::new(Settling::new(site.workers())));
    let follower = settling.clone();
    let history = Arc::new(
        HistoryWriter::create_observed(
            &dir.history(),
            Box::new(move |e| {
                observer.observe(e);
                lock(&follower).observe(e);
            }),
        )
        .context("creating history.jsonl")?,
    );
    let recorder = Recorder::new(history.clone(), clock);
    let hangs = Hangs::default();
    // Until recording ends: what nobody planned (a node that dies) goes into the history.
    let _watch = site.watch(&history);
    // Until recording ends: what the lock service itself held.
    let _observer = site.observe(&dir.service_log()).await?;
    progress.phase("workload");
    let until = plan.time_limit.get() + plan.recovery.get();
    // The workload and the fault plan start together, now: the plan's times (and its end, the
    // time limit) count from this moment, so the workload's end does too. Counted from the
    // clock's start instead, the containers' start-up time came out of the recovery time.
    let started = clock.now();
    let spec = WorkloadSpec {
        lock: plan.lock.clone(),
        key: "k0".into(),
        work: plan.work.get() / 2..=plan.work.get() * 3 / 2,
        writes_per_hold: plan.writes_per_hold,
        app: plan.app,
        between: Duration::ZERO..=plan.ttl().get() / 10,
        until: Deadline::at(started + until.as_nanos() as u64),
        seed: plan.seed,
    };
    let counter = matches!(plan.workload, Workload::Counter(_));
    let loops = (0..site.workers())
        .map(|i| supervise(site, i, &spec, (&recorder, &hangs), log, live, counter));
    // The first worker that cannot record (a full disk) ends the workload and the fault plan
    // at once: nothing after it could be kept, and every fault is healed on the way out.
    let failed = Arc::new(tokio::sync::Notify::new());
    let stopped = failed.clone();
    let workload = async {
        let all = futures::future::try_join_all(loops).await;
        if all.is_err() {
            failed.notify_one();
        }
        all
    };
    let limit = started + plan.time_limit.get().as_nanos() as u64;
    let faults = async {
        let cancel = Box::pin(async move { stopped.notified().await });
        let nemesis = site
            .faults(&plan.faults.plan, &history, &hangs, cancel)
            .await;
        // Every fault is healed: the tail's cycles count from here, or from the time limit.
        lock(&settling).healed_at(clock.now().max(limit));
        nemesis
    };
    let ticker = async {
        let mut settled = false;
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let now = clock.now();
            let elapsed = Duration::from_nanos(now.saturating_sub(started));
            progress.workload(elapsed, until, live.ops(), &live.faults());
            if !settled && lock(&settling).settled() {
                // The checks have what they need: no worker starts another cycle.
                settled = true;
                spec.until.bring_forward(now);
                log.line(&format!(
                    "recovery settled at {elapsed:.1?}: every worker took the lock after the \
                     final heal and let it go"
                ));
            }
        }
    };
    let (results, nemesis) = tokio::select! {
        both = async { tokio::join!(workload, faults) } => both,
        () = ticker => unreachable!("the ticker never ends"),
    };
    log.line(&format!("nemesis: {nemesis:?}"));
    let mut sessions: Vec<Session> = results?.into_iter().flatten().collect();
    nemesis.context("the nemesis failed (every fault was healed)")?;
    if counter {
        // Every fault is healed and every loop is over: one last read of the counter.
        let value = final_read(&mut sessions, &spec.key)
            .await
            .context("recording the final read")?;
        log.line(&format!("final counter read: {value:?}"));
    }
    history.sync().context("syncing history.jsonl")?;
    progress.phase("stop");
    Ok(())
}

/// Worker `i`'s loop for the whole run: when its process dies (killed by the nemesis) and the
/// site brings it back, it reconnects and goes on under the next of its own process ids. With
/// the counter workload it returns its live session (for the final read).
async fn supervise(
    site: &dyn Site,
    i: usize,
    spec: &WorkloadSpec,
    (recorder, hangs): (&Recorder, &Hangs),
    log: &HarnessLog,
    live: &LiveView,
    counter: bool,
) -> anyhow::Result<Option<Session>> {
    let mut ids = ProcessIds::of_worker(i as u32, site.workers() as u32);
    loop {
        let Some(conn) = site.connect(i, recorder, spec.until.get()).await? else {
            return Ok(None);
        };
        // The worker's hello names its client: the recipe, or the library and its version.
        log.line(&format!("{}: connected, client {}", conn.name, conn.recipe));
        live.saw_client(&conn.recipe);
        live.saw_worker(i, site.workers(), &conn.name);
        let mut session = Session::new(conn, ids, recorder.clone())
            .on_error(spec.app.on_error())
            .hung_by(hangs);
        let summary = if counter {
            run_counter_worker(&mut session, spec).await?
        } else {
            run_worker(&mut session, spec).await?
        };
        if !summary.exited || recorder.clock.now() >= spec.until.get() {
            return Ok(counter.then_some(session));
        }
        // Killed: wait for the site to bring the worker back, then go on.
        ids = session.ids();
        if !site.restarted(i, spec.until.get()).await {
            return Ok(None);
        }
    }
}

fn lock(settling: &Mutex<Settling>) -> MutexGuard<'_, Settling> {
    settling.lock().unwrap_or_else(|p| p.into_inner())
}
