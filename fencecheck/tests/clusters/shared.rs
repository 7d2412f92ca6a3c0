//! The matrix's pool of shared clusters against real containers: a whole cluster is taken
//! again by the next run, with a lock name no run on it took before; a cluster that is hurt
//! (a node paused, a node stopped) fails its check and is never used again: the next run gets
//! a fresh one and the hurt one is removed. A plan whose faults reach the nodes gets none.

use crate::support::infra::containers_labelled;
use harness::matrix::pool::Pool;
use harness::matrix::spec;
use std::process::Command;

/// The first run of the matrix `yaml`'s first cell.
fn plan(yaml: &str) -> harness::config::TestPlan {
    let m = spec::parse(yaml).expect("matrix");
    m.cells[0].plans[0].clone()
}

const SHAREABLE: &str = "name: t-shared
seeds: [1]
cells:
  - { recipe: redis-lock, resource: strict, nemesis: [pause-holder], ttl: 1s, time_limit: 14s, expect: safe }
";

fn docker(args: &[&str]) {
    let out = Command::new("docker").args(args).output().expect("docker");
    assert!(out.status.success(), "docker {args:?}: {out:?}");
}

/// Takes a cluster for `plan`, says which and with what lock, and gives it back.
fn take(pool: &Pool, plan: &harness::config::TestPlan) -> (String, String, String) {
    let c = pool
        .checkout(plan)
        .expect("a plan that may share")
        .expect("a cluster");
    let node = c.on.lock.nodes[0].name.clone();
    pool.checkin(&c.on.id);
    (c.on.id, c.lock, node)
}

#[test]
fn a_whole_cluster_is_reused_and_a_hurt_one_is_replaced_by_a_fresh_one() {
    let logs = tempfile::tempdir().expect("tempdir");
    let pool = Pool::new(logs.path()).expect("pool");
    let plan = plan(SHAREABLE);
    let (first, lock1, node) = take(&pool, &plan);
    let (again, lock2, _) = take(&pool, &plan);
    assert_eq!(first, again, "a whole, idle cluster is taken again");
    assert_ne!(
        lock1, lock2,
        "each run on a cluster takes a lock name of its own"
    );

    // A paused node: the check fails closed, the next run starts on a fresh cluster.
    docker(&["pause", &node]);
    let (fresh, _, fresh_node) = take(&pool, &plan);
    assert_ne!(
        fresh, first,
        "a cluster with a paused node is not used again"
    );
    assert!(
        containers_labelled(&first).is_empty(),
        "the hurt cluster is removed once nobody is on it: {}",
        containers_labelled(&first)
    );

    // A stopped node: the same.
    docker(&["stop", "-t", "0", &fresh_node]);
    let (third, _, _) = take(&pool, &plan);
    assert_ne!(
        third, fresh,
        "a cluster with a stopped node is not used again"
    );
    assert!(containers_labelled(&fresh).is_empty());

    assert!(pool.finish().is_empty(), "every cluster torn down");
    assert!(containers_labelled(&third).is_empty());
    assert!(
        logs.path().join(&third).join("nodes").is_dir(),
        "the nodes' output is kept"
    );
}

#[test]
fn a_plan_whose_faults_reach_the_nodes_gets_no_shared_cluster() {
    let logs = tempfile::tempdir().expect("tempdir");
    let pool = Pool::new(logs.path()).expect("pool");
    for nemesis in ["stall-service", "mute-holder"] {
        let yaml = SHAREABLE.replace("pause-holder", nemesis);
        assert!(pool.checkout(&plan(&yaml)).is_none(), "{nemesis}");
    }
    assert!(pool.clusters().is_empty(), "nothing started");
}
