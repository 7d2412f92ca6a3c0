//! A worker's launch made from the plan, once: who takes the lock (a recipe, or a library behind
//! its adapter, with the test's client options), the validated timing, the discipline and the
//! lock. Where the worker then runs fills in only what the place decides (endpoints, the
//! resource's address, the counter store, the run's clock): [`super::deploy`] for a container,
//! [`super::in_process`] for this process.

use crate::config::clients::CLIENT_DIR_IN_CONTAINER;
use crate::config::{LockClient, TestPlan, Workload};
use workloads::worker::{AdapterLaunch, ClientLaunch, WorkerLaunch};

/// The launch of the worker named `owner` (the owner of its acquisitions).
pub fn worker_launch(plan: &TestPlan, owner: &str) -> WorkerLaunch {
    let client = match &plan.client {
        LockClient::Recipe(_) => ClientLaunch::Recipe,
        LockClient::Adapter(a) => ClientLaunch::Adapter(AdapterLaunch {
            name: a.name.clone(),
            release: a
                .release
                .as_ref()
                .map(|r| r.label().to_string())
                .unwrap_or_default(),
            command: a.command.clone(),
            // The user's own folder is mounted there in the worker's container.
            dir: a.dir.as_ref().map(|_| CLIENT_DIR_IN_CONTAINER.into()),
            options: a.options.clone(),
            require_token: plan.workload == Workload::FencedWrite && plan.resource.needs_token(),
        }),
    };
    WorkerLaunch {
        app: plan.app,
        ..WorkerLaunch::new(
            owner,
            client,
            &plan.lock,
            plan.client_timing.clone(),
            plan.discipline,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, Dur, RawTest};

    #[test]
    fn the_launch_carries_the_timing_the_test_recorded() {
        let plan = validate(
            RawTest {
                provider: Some("zookeeper".into()),
                acquire_timeout: Some(Dur::from_millis(1500)),
                session_timeout: Some(Dur::secs(3)),
                ..RawTest::default()
            },
            1,
        )
        .unwrap();
        let launch = worker_launch(&plan, "worker-2");
        assert_eq!(launch.name, "worker-2");
        assert_eq!(launch.config, plan.client_timing);
        assert_eq!(launch.config.acquire_timeout, Dur::from_millis(1500).get());
        assert_eq!(launch.config.session_timeout, Dur::secs(3).get());
        assert_eq!(launch.client, ClientLaunch::Recipe);
        let yaml = crate::config::plan_file::to_yaml(&plan).unwrap();
        assert!(yaml.contains("acquire_timeout: 1500ms"), "{yaml}");
        assert!(yaml.contains("session_timeout: 3s"), "{yaml}");
    }
}
