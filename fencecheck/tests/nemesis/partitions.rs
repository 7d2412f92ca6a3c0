//! The partitions that involve the client side, against real containers on the run's network:
//! `isolate-worker` cuts one worker off from every lock-service node, by rules in the worker's
//! namespace alone, but leaves it the resource;
//! `isolate-resource` cuts the resource off from workers and nodes. Reachability is asked from
//! inside the containers (`nc -z`), and the heal leaves no rule behind.

use crate::support::nemesis::{fixture, plan, reaches, wait_for_events};
use containers::docker::{ContainerSpec, Readiness, Role};
use nemesis::Nemesis;
use results::Provider;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolate_worker_keeps_the_resource_and_isolate_resource_cuts_it_from_everyone() {
    let worker = ContainerSpec::new("worker-1", ["sleep", "600"]).role(Role::Worker);
    // Started only once redis-server listens: the baseline below asks for it at once.
    let resource = ContainerSpec::new(
        "resource",
        ["redis-server", "--port", "6379", "--protected-mode", "no"],
    )
    .role(Role::Resource)
    .ready(Readiness::Listening(6379));
    let fx = fixture(Provider::Etcd, "cut", vec![worker, resource]).await;
    let name = |short: &str| fx.env.container_name(short);
    let (w, r, e1) = (name("worker-1"), name("resource"), name("etcd-1"));
    tokio::task::block_in_place(|| {
        assert!(
            reaches(&w, &e1, 2379) && reaches(&w, &r, 6379),
            "all reachable before"
        );
    });

    let nemesis = Nemesis::new(&fx.control, &fx.topology, &fx.history, fx.clock);
    let plan = plan(
        Provider::Etcd,
        "- at 0s isolate-worker for 5s\n- at 7s isolate-resource for 5s\n",
    );
    let check = async {
        wait_for_events(&fx, 1).await;
        // The worker holds every rule of its cut; the nodes hold none (a cluster shared with
        // other runs is never touched by one run's cut).
        let docker = fx.env.docker();
        let rules = |c: String| async move {
            containers::control::audit::audit(docker, &[c])
                .await
                .expect("audit")
                .rules
        };
        let (on_worker, on_node) = (rules(w.clone()).await, rules(e1.clone()).await);
        assert!(
            !on_worker.is_empty() && on_node.is_empty(),
            "{on_worker:?} {on_node:?}"
        );
        let during_worker_cut = tokio::task::block_in_place(|| {
            (
                reaches(&w, &e1, 2379),
                reaches(&w, &r, 6379),
                reaches(&e1, &r, 6379),
            )
        });
        wait_for_events(&fx, 3).await;
        let during_resource_cut = tokio::task::block_in_place(|| {
            (
                reaches(&w, &e1, 2379),
                reaches(&w, &r, 6379),
                reaches(&e1, &r, 6379),
            )
        });
        (during_worker_cut, during_resource_cut)
    };
    let (summary, (worker_cut, resource_cut)) =
        tokio::join!(nemesis.run(&plan, std::future::pending()), check);
    summary.expect("nemesis run");
    assert_eq!(
        worker_cut,
        (false, true, true),
        "worker->etcd cut, worker->resource kept"
    );
    assert_eq!(
        resource_cut,
        (true, false, false),
        "resource cut from worker and nodes"
    );
    let fs: Vec<String> = fx.events().iter().map(|e| e.f.to_string()).collect();
    assert_eq!(
        fs,
        [
            "start-isolate-worker",
            "stop-isolate-worker",
            "start-isolate-resource",
            "stop-isolate-resource"
        ]
    );
    fx.assert_healed().await;
    tokio::task::block_in_place(|| {
        assert!(
            reaches(&w, &e1, 2379) && reaches(&w, &r, 6379),
            "all reachable after heal"
        );
    });
    fx.teardown().await;
}
