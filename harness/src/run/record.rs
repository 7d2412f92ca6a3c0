//! Phases 2–8 of a run in containers: image → cluster → resource → workers → workload and
//! nemesis for the time limit → heal and recovery → stop. Everything recorded goes to the
//! history as it happens; the containers are removed on every path (teardown here, the
//! environment's guard on a panic, its signal thread on Ctrl-C).

use super::deploy::{self, Deployment, WORKER_PORT};
use super::live::Live;
use super::prepare::HarnessLog;
use super::progress::Progress;
use crate::config::{TestPlan, Workload};
use crate::control::topology::{targets, ClusterRestart, RunTopology};
use crate::control::DockerControl;
use crate::docker::{DockerError, Node, RunEnv};
use anyhow::Context;
use nemesis::{Generator, Nemesis, Plan};
use results::fault::NODE_DIED;
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use results::{Event, OpType, Process, RunClock, F};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use workloads::driver::{
    final_read, run_counter_worker, run_worker, ProcessAllocator, Recorder, Session, WorkerConn,
    WorkloadSpec,
};

/// The run's fault plan: the explicit timeline if the test has one, else drawn from the seed.
/// Either way it is checked against what the provider supports (and printed into `test.yaml`).
pub fn fault_plan(plan: &TestPlan) -> anyhow::Result<Plan> {
    let fault_plan = match &plan.nemesis_timeline {
        Some(lines) => serde_json::from_value::<Plan>(serde_json::json!(lines))
            .context("reading the validated nemesis timeline back")?,
        None => {
            let faults = plan
                .nemesis
                .iter()
                .map(|f| f.parse::<nemesis::FaultKind>())
                .collect::<Result<Vec<_>, _>>()?;
            Generator {
                faults,
                interval: plan.nemesis_interval.get(),
                durations: plan.fault_duration.map(|d| (d.get(), d.get())),
                ttl: plan.ttl.get(),
                time_limit: plan.time_limit.get(),
            }
            .plan(plan.seed)
        }
    };
    if plan.provider != crate::config::Provider::Memory {
        let ctx = nemesis::Context {
            system: plan.provider.as_str().to_string(),
            ttl: plan.ttl.get(),
            time_limit: Some(plan.time_limit.get()),
        };
        fault_plan.validate("the fault plan", &ctx)?;
    }
    Ok(fault_plan)
}

/// Records one run in containers. Returns after teardown; the error (if any) is the first thing
/// that went wrong, teardown problems included.
pub async fn record(
    plan: &TestPlan,
    dir: &RunDir,
    log: &HarnessLog,
    progress: &mut Progress,
    faults: &Plan,
) -> anyhow::Result<()> {
    progress.phase("cluster");
    let run_id = deploy::run_id(plan);
    let env = match RunEnv::create(&run_id, Some(&dir.path)).await {
        Err(DockerError::ImageMissing { image }) => {
            progress.phase("image");
            log.line(&format!("node image {image} missing: building it"));
            progress.println(&format!("fencecheck: the node image {image} is missing; building it (about 2 minutes, once)"));
            tokio::task::spawn_blocking(|| {
                crate::image::build(&crate::image::BuildOptions::node_image())
            })
            .await
            .context("building the node image")??;
            progress.phase("cluster");
            RunEnv::create(&run_id, Some(&dir.path)).await
        }
        other => other,
    };
    let env = Arc::new(env.context("creating the run's Docker environment")?);
    log.line(&format!("network {} created", env.network()));
    let outcome = run_in(&env, plan, dir, log, progress, faults).await;
    progress.phase("teardown");
    let torn = env.teardown().await;
    log.line(&format!("teardown: {torn:?}"));
    outcome?;
    torn.context("tearing down the run's containers")?;
    Ok(())
}

async fn run_in(
    env: &Arc<RunEnv>,
    plan: &TestPlan,
    dir: &RunDir,
    log: &HarnessLog,
    progress: &mut Progress,
    faults: &Plan,
) -> anyhow::Result<()> {
    let (lock, stores) = deploy::start_clusters(env, plan).await?;
    log.line(&format!(
        "cluster {} up: {:?}",
        lock.system,
        lock.endpoints()
    ));
    let clock = RunClock::start();
    // The counter workload writes to its store directly: no resource server to start.
    let resource = if plan.workload == Workload::FencedWrite {
        progress.phase("resource");
        let node =
            deploy::start_resource(env, plan, &dir.path, &lock, &stores, clock.start_ns()).await?;
        log.line(&format!("resource up at {}", node.address));
        Some(node)
    } else {
        None
    };
    progress.phase("workers");
    let workers = deploy::start_workers_with(
        env,
        plan,
        &lock,
        &stores,
        resource.as_ref(),
        clock.start_ns(),
    )
    .await?;
    log.line(&format!("{} workers up", workers.len()));
    let deployment = Deployment {
        cluster: Arc::new(RwLock::new(lock)),
        stores,
        resource,
        workers,
    };

    let holder = Arc::new(Mutex::new(None));
    let live = Live::new(holder.clone());
    let observer = live.clone();
    let history = Arc::new(
        HistoryWriter::create_observed(&dir.history(), Box::new(move |e| observer.observe(e)))
            .context("creating history.jsonl")?,
    );
    let recorder = Recorder::new(history.clone(), clock);
    let worker_names: Vec<String> = (0..deployment.workers.len())
        .map(deploy::worker_name)
        .collect();
    let mut topology = RunTopology::new(
        env,
        deployment.cluster.clone(),
        worker_names.clone(),
        deployment.resource.as_ref().map(|_| "resource".into()),
    );
    topology.holder = holder;
    let restart = Arc::new(ClusterRestart {
        env: env.clone(),
        cluster: deployment.cluster.clone(),
        others: Mutex::new(
            deployment
                .workers
                .iter()
                .cloned()
                .chain(deployment.resource.clone())
                .collect(),
        ),
    });
    let mut names: BTreeMap<String, String> = {
        let cluster = deployment.cluster.read().unwrap_or_else(|p| p.into_inner());
        targets(env, cluster.nodes.iter())
    };
    names.extend(targets(
        env,
        deployment.workers.iter().chain(&deployment.resource),
    ));
    for store in &deployment.stores {
        names.extend(targets(env, store.nodes.iter()));
    }
    let control = DockerControl::new(
        env.docker().clone(),
        env.network(),
        names.clone(),
        restart.clone(),
    );
    // Until this returns (before teardown): nodes that die outside the plan are recorded as
    // faults nobody healed.
    let _deaths = watch_deaths(env, &names, &worker_names, &control, &history, clock, log);
    let nemesis =
        Nemesis::new(&control, &topology, &history, clock).ending_at(plan.time_limit.get());

    progress.phase("workload");
    let limit = plan.time_limit.get();
    let until = limit + plan.recovery.get();
    // The workload and the fault plan start together, now: the plan's times (and its end, the
    // time limit) count from this moment, so the workload's end does too. Counted from the
    // clock's start instead, the containers' start-up time came out of the recovery time.
    let started = clock.now();
    let spec = WorkloadSpec {
        lock: plan.lock.clone(),
        key: "k0".into(),
        work: plan.work.get() / 2..=plan.work.get() * 3 / 2,
        writes_per_hold: plan.writes_per_hold,
        between: Duration::ZERO..=plan.ttl.get() / 10,
        until_ns: started + until.as_nanos() as u64,
        seed: plan.seed,
    };
    let alloc = ProcessAllocator::new(deployment.workers.len() as u32);
    let counter = plan.workload == crate::config::Workload::Counter;
    let loops = deployment.workers.iter().enumerate().map(|(i, node)| {
        supervise(
            i as u32,
            node.name.clone(),
            restart.clone(),
            &spec,
            &alloc,
            &recorder,
            counter,
        )
    });
    let workload = futures::future::join_all(loops);
    let faults_run = nemesis.run(faults, std::future::pending::<()>());
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let elapsed = Duration::from_nanos(clock.now().saturating_sub(started));
            progress.workload(elapsed, until, live.ops(), &live.faults());
        }
    };
    let (results, nemesis_summary) = tokio::select! {
        both = async { tokio::join!(workload, faults_run) } => both,
        () = ticker => unreachable!("the ticker never ends"),
    };
    log.line(&format!("nemesis: {nemesis_summary:?}"));
    let mut sessions = vec![];
    for r in results {
        sessions.extend(r?);
    }
    nemesis_summary.context("the nemesis failed (every fault was healed)")?;
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

/// Records every node (not worker) that dies outside the fault plan as `start-node-died`, with
/// no stop: a fault nobody healed (DESIGN.md: stuck-lock treats it as a service fault).
fn watch_deaths(
    env: &RunEnv,
    names: &BTreeMap<String, String>,
    workers: &[String],
    control: &DockerControl,
    history: &Arc<HistoryWriter>,
    clock: RunClock,
    log: &HarnessLog,
) -> crate::control::deaths::Watch {
    let nodes: BTreeMap<String, String> = names
        .iter()
        .filter(|(target, _)| !workers.contains(target))
        .map(|(target, container)| (container.clone(), target.clone()))
        .collect();
    let (history, log) = (history.clone(), log.clone());
    crate::control::deaths::watch(
        env.docker().clone(),
        env.run_id(),
        nodes,
        control.planned_deaths(),
        move |death| {
            let mut e = Event::new(
                clock.now(),
                Process::Nemesis,
                OpType::Info,
                F::Start(NODE_DIED.into()),
            );
            e.value = Some(serde_json::json!({
                "fault": NODE_DIED,
                "targets": [death.target],
                "container": death.container,
                "exit_code": death.exit_code,
                "planned": false,
            }));
            log.line(&format!(
                "{} ({}) died outside the fault plan, exit code {:?}",
                death.target, death.container, death.exit_code
            ));
            if let Err(err) = history.record(e) {
                log.line(&format!("recording the death of {}: {err}", death.target));
            }
        },
    )
}

/// One worker's loop for the whole run: when its process dies (killed by the nemesis) and the
/// nemesis brings the container back, it reconnects and goes on under a new process id. With
/// the counter workload it runs the counter loop and returns its live session (for the final
/// read).
async fn supervise(
    first_process: u32,
    container: String,
    restart: Arc<ClusterRestart>,
    spec: &WorkloadSpec,
    alloc: &ProcessAllocator,
    recorder: &Recorder,
    counter: bool,
) -> anyhow::Result<Option<Session>> {
    let mut process = first_process;
    loop {
        let Some(addr) = worker_addr(&restart, &container) else {
            anyhow::bail!("{container}: no published worker port");
        };
        let conn = match WorkerConn::connect(addr, Duration::from_secs(30), recorder.clone()).await
        {
            Ok(c) => c,
            // Not back before the end of the workload: nothing left to do.
            Err(_) if recorder.clock.now() >= spec.until_ns => return Ok(None),
            Err(e) => anyhow::bail!("{container}: {e}"),
        };
        let mut session = Session::new(conn, process, alloc.clone(), recorder.clone());
        let (summary, kept) = if counter {
            (run_counter_worker(&mut session, spec).await?, Some(session))
        } else {
            (run_worker(session, spec).await?, None)
        };
        if !summary.exited || recorder.clock.now() >= spec.until_ns {
            return Ok(kept);
        }
        // Killed: wait for the nemesis to restart the container (new host port), then go on.
        let before = addr;
        while worker_addr(&restart, &container) == Some(before)
            && recorder.clock.now() < spec.until_ns
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if recorder.clock.now() >= spec.until_ns {
            return Ok(None);
        }
        process = alloc.next();
    }
}

fn worker_addr(restart: &ClusterRestart, container: &str) -> Option<std::net::SocketAddr> {
    let others = restart.others.lock().unwrap_or_else(|p| p.into_inner());
    let node: &Node = others.iter().find(|n| n.name == container)?;
    let port = node.host_port(WORKER_PORT)?;
    Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}
