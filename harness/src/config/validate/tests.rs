//! The rules of validation, case by case: the default test, nonsense rejected with the field and
//! what to write instead, and the typed pieces a valid test resolves to.

use super::*;
use crate::config::clients::Release;
use crate::config::plan::{Provider, RecipeKind, ResourceKind};
use crate::config::{Dur, LockClient};
use containers::image::version::Holder;
use nemesis::FaultKind;
use results::AnomalyKind;

fn raw() -> RawTest {
    RawTest::default()
}

#[test]
fn the_default_test_is_etcd_lease_strict_with_holder_pauses() {
    let p = validate(raw(), 7).unwrap();
    assert_eq!(p.client, LockClient::Recipe(RecipeKind::EtcdLease));
    assert_eq!(p.provider, Provider::Etcd);
    assert_eq!(p.resource, ResourceKind::Strict);
    assert_eq!(p.workers, 5);
    assert_eq!(p.ttl(), Dur::secs(2));
    assert_eq!(p.time_limit, Dur::secs(60));
    assert_eq!(p.faults.drawn, vec![FaultKind::PauseHolder]);
    assert_eq!(
        p.faults.duration, None,
        "each fault's default: a holder pause is 2 x ttl"
    );
    assert!(
        !p.faults.plan.steps.is_empty(),
        "the plan is drawn at validation"
    );
    assert_eq!(p.seed, 7);
    assert!(!p.fail_on.contains(&AnomalyKind::ConcurrentHolders));
    assert!(p
        .rerun_command(std::path::Path::new("t.yaml"))
        .ends_with("--config t.yaml"));
}

#[test]
fn the_default_recovery_slack_is_the_one_a_stored_run_reads_without_it() {
    let p = validate(raw(), 7).unwrap();
    assert_eq!(p.recovery_slack, results::store::DEFAULT_RECOVERY_SLACK);
    assert_eq!(
        results::store::CheckConfig::default().recovery_slack,
        p.recovery_slack.get()
    );
}

#[test]
fn nonsense_is_rejected_with_the_field_and_what_to_write() {
    let cases: Vec<(RawTest, &str, &str)> = vec![
        (
            RawTest {
                ttl: Some(Dur::secs(0)),
                ..raw()
            },
            "ttl",
            "2s",
        ),
        (
            RawTest {
                ttl: Some(Dur::secs(2)),
                renew_interval: Some(Dur::secs(1)),
                ..raw()
            },
            "renew_interval",
            "under half",
        ),
        (
            RawTest {
                provider: Some("consul".into()),
                ..raw()
            },
            "provider",
            "etcd, zookeeper, redis, redlock, redis-sentinel, postgres, memory",
        ),
        (
            RawTest {
                recipe: Some("mutex".into()),
                ..raw()
            },
            "recipe",
            "etcd-lease",
        ),
        (
            RawTest {
                provider: Some("etcd".into()),
                recipe: Some("zk-lock".into()),
                ..raw()
            },
            "recipe",
            "zookeeper",
        ),
        (
            RawTest {
                resource: Some("s3".into()),
                ..raw()
            },
            "resource",
            "strict",
        ),
        (
            RawTest {
                workers: Some(0),
                ..raw()
            },
            "workers",
            "1 to 64",
        ),
        (
            RawTest {
                nemesis: Some(vec!["meteor".into()]),
                ..raw()
            },
            "nemesis",
            "pause-holder",
        ),
        (
            RawTest {
                nemesis: Some(vec!["failover".into()]),
                ..raw()
            },
            "nemesis",
            "etcd",
        ),
        (
            RawTest {
                nemesis: Some(vec!["clock-jump".into()]),
                ..raw()
            },
            "nemesis",
            "libfaketime cannot reach them",
        ),
        (
            RawTest {
                client: Some("etcd-concurrency".into()),
                nemesis: Some(vec!["client-clock-jump".into()]),
                ..raw()
            },
            "nemesis",
            "client-clock-jump cannot act on client etcd-concurrency: its lock client is a Go program",
        ),
        (
            RawTest {
                provider: Some("redis-sentinel".into()),
                nemesis: Some(vec!["slow-reply".into()]),
                ..raw()
            },
            "nemesis",
            "past the link proxy",
        ),
        (
            RawTest {
                provider: Some("redlock".into()),
                resource: Some("none".into()),
                nemesis: Some(vec!["stall-leader".into()]),
                ..raw()
            },
            "nemesis",
            "no leader",
        ),
        (
            RawTest {
                fail_on: Some(vec!["oops".into()]),
                ..raw()
            },
            "fail_on",
            "stale-accepted-write",
        ),
        (
            RawTest {
                workload: Some("counter".into()),
                nemesis: Some(vec!["pause-holder".into(), "isolate-resource".into()]),
                ..raw()
            },
            "nemesis",
            "counter workload has none",
        ),
        (
            RawTest {
                counter_store: Some("redis".into()),
                ..raw()
            },
            "counter_store",
            "workload",
        ),
        (
            RawTest {
                provider: Some("redis".into()),
                workload: Some("counter".into()),
                counter_store: Some("etcd-guard".into()),
                ..raw()
            },
            "counter_store",
            "provider etcd",
        ),
        (
            RawTest {
                workload: Some("counter".into()),
                counter_store: Some("mongo".into()),
                ..raw()
            },
            "counter_store",
            "etcd-guard",
        ),
        // Redlock's writes carry no token, and the default resource
        // (strict) refuses every one of them.
        (
            RawTest {
                recipe: Some("redlock".into()),
                ..raw()
            },
            "resource",
            "Use resource none",
        ),
    ];
    for (r, field, hint) in cases {
        let e = validate(r, 1).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(hint), "{e} should mention {hint}");
    }
}

#[test]
fn provider_alone_picks_its_default_recipe() {
    let p = validate(
        RawTest {
            provider: Some("zookeeper".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(p.client, LockClient::Recipe(RecipeKind::ZkLock));
    let p = validate(
        RawTest {
            nemesis: Some(vec!["none".into()]),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert!(p.faults.drawn.is_empty() && p.faults.plan.steps.is_empty());
    assert!(p.name.ends_with("no-faults"));
}

fn from_yaml(text: &str) -> Result<TestPlan, ConfigError> {
    validate(serde_saphyr::from_str::<RawTest>(text).unwrap(), 1)
}

#[test]
fn an_explicit_timeline_replaces_the_drawn_faults() {
    let p = from_yaml(
    "time_limit: 30s\nnemesis_timeline:\n  - at 5s start pause-holder for 6s\n  - at 15s start halves for 10s\n",
    )
    .unwrap();
    assert!(p.faults.drawn.is_empty() && p.faults.explicit);
    let lines = p.faults.plan.lines();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with("at 15s start halves for 10s"),
        "{lines:?}"
    );
}

#[test]
fn a_bad_timeline_is_rejected_with_its_line() {
    let cases = [
    ("nemesis_timeline:\n  - at 5s start pause-holder for 6s\n  - at 9s start failover for 5s\n", "line 3"),
    ("nemesis_timeline:\n  - at 5s start halves for 10s\n  - at 9s start majorities-ring for 5s\n", "overlaps"),
    ("nemesis_timeline:\n  - at 5s start pause-holder for -2s\n", "line 2"),
    ("nemesis_timeline:\n  - at 5s start meteor for 2s\n", "meteor"),
    ("nemesis: [kill-worker]\nnemesis_timeline:\n  - at 5s start halves for 2s\n", "not both"),
    ];
    for (yaml, hint) in cases {
        let e = from_yaml(yaml).unwrap_err();
        assert_eq!(e.field, "nemesis_timeline", "{e}");
        assert!(e.message.contains(hint), "{e} should mention {hint}");
    }
}

#[test]
fn the_recipes_own_rules_apply_before_anything_starts() {
    // etcd leases are granted in whole seconds of at least 2 s.
    let e = validate(
        RawTest {
            ttl: Some(Dur::from_millis(1500)),
            ..raw()
        },
        1,
    )
    .unwrap_err();
    assert_eq!(e.field, "ttl", "{e}");
    assert!(e.message.contains("etcd-lease"), "{e}");
    assert!(validate(
        RawTest {
            recipe: Some("redis-lock".into()),
            ttl: Some(Dur::from_millis(1500)),
            ..raw()
        },
        1
    )
    .is_ok());
}

#[test]
fn a_shipped_client_brings_its_provider_and_its_token_and_runs_in_the_client_image() {
    let p = validate(
        RawTest {
            client: Some("kazoo".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(p.provider, Provider::Zookeeper);
    let a = p.client.adapter().unwrap();
    assert_eq!((a.token, a.shipped), (Some(true), true));
    assert!(a.command.contains("/adapters/kazoo/"));
    assert!(p.name.starts_with("kazoo-strict-"));
    // The default is PyPI's pinned release, whose image is made when the run starts.
    assert_eq!(p.client_image, None);
    assert!(a.command.starts_with("/venv/bin/python "), "{}", a.command);
    assert!(matches!(&a.release, Some(Release::Pypi(r)) if r.package == "kazoo"));
    let debian = validate(
        RawTest {
            client: Some("kazoo@debian".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    let a = debian.client.adapter().unwrap();
    assert_eq!(a.release, Some(Release::Debian));
    assert!(a.command.starts_with("python3 /adapters/kazoo/"));
    assert_eq!(
        debian.client_image,
        Some(containers::image::client_image_tag())
    );
    let pinned = validate(
        RawTest {
            client: Some("kazoo@2.10.0".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(
        pinned
            .client
            .built_release()
            .map(|(n, r)| (n, r.version.as_str())),
        Some((Holder::Shipped("kazoo"), "2.10.0"))
    );
    // The in-process adapter needs no image.
    let m = validate(
        RawTest {
            client: Some("memory".into()),
            nemesis: Some(vec!["none".into()]),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!((m.provider, m.client_image), (Provider::Memory, None));
}

#[test]
fn clients_that_cannot_work_are_refused_naming_the_field() {
    let bad = |r: RawTest| validate(r, 1).unwrap_err();
    let e = bad(RawTest {
        client: Some("redis-py".into()),
        ..raw()
    });
    assert_eq!(e.field, "resource");
    assert!(
        e.message
            .contains("client redis-py hands out no fence token"),
        "{e}"
    );
    assert!(validate(
        RawTest {
            client: Some("redis-py".into()),
            resource: Some("none".into()),
            ..raw()
        },
        1
    )
    .is_ok());
    let e = bad(RawTest {
        client: Some("kazoo".into()),
        recipe: Some("zk-lock".into()),
        ..raw()
    });
    assert!(e.message.contains("keep one"), "{e}");
    let e = bad(RawTest {
        client: Some("kazoo".into()),
        provider: Some("etcd".into()),
        ..raw()
    });
    assert_eq!(e.field, "client");
    assert!(e.message.contains("runs on provider zookeeper"), "{e}");
    let e = bad(RawTest {
        client: Some("jedis".into()),
        ..raw()
    });
    assert!(
        e.message.contains("kazoo") && e.message.contains("client_cmd"),
        "{e}"
    );
    let e = bad(RawTest {
        client_cmd: Some("python3 a.py".into()),
        ..raw()
    });
    assert!(
        e.field == "client_cmd" && e.message.contains("--provider"),
        "{e}"
    );
    let e = bad(RawTest {
        client_image: Some("x".into()),
        ..raw()
    });
    assert_eq!(e.field, "client_image");
    let e = bad(RawTest {
        client_dir: Some("/tmp".into()),
        ..raw()
    });
    assert_eq!(e.field, "client_dir");
    let e = bad(RawTest {
        client: Some("etcd-concurrency".into()),
        workload: Some("counter".into()),
        counter_store: Some("etcd-guard".into()),
        ..raw()
    });
    assert_eq!(e.field, "counter_store");
}

#[test]
fn an_own_folder_with_requirements_gets_an_image_of_its_own_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mine");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("requirements.txt"),
        "# mine\nportalocker==4.4.2\n",
    )
    .unwrap();
    let own = || RawTest {
        client_cmd: Some("python3 my_lock.py".into()),
        client_dir: Some(folder.clone()),
        provider: Some("redis".into()),
        ..raw()
    };
    let p = validate(own(), 1).unwrap();
    // The image is made from what the host fetched, when the run starts.
    assert_eq!(p.client_image, None);
    match p.client.built_release() {
        Some((Holder::Own, r)) => assert_eq!(r.pins(), ["portalocker==4.4.2"]),
        other => panic!("{other:?}"),
    }
    let e = validate(
        RawTest {
            client_image: Some("mine:1".into()),
            ..own()
        },
        1,
    )
    .unwrap_err();
    assert_eq!(e.field, "client_image");
    std::fs::write(
        folder.join("requirements.txt"),
        "redis==8.1.0\n--index-url x\n",
    )
    .unwrap();
    let e = validate(own(), 1).unwrap_err();
    assert!(
        e.field == "client_dir" && e.message.contains("requirements.txt:2: `--index-url x`"),
        "{e}"
    );
}

#[test]
fn an_own_folder_with_a_cargo_toml_is_built_by_the_host_s_cargo_and_not_with_requirements() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mine-rs");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("Cargo.toml"), "[package]\nname = \"mine\"\n").unwrap();
    let own = || RawTest {
        client_cmd: Some("mine".into()),
        client_dir: Some(folder.clone()),
        provider: Some("redis".into()),
        ..raw()
    };
    let p = validate(own(), 1).unwrap();
    assert_eq!(p.client_image, None, "made when the run starts");
    assert_eq!(p.client.own_crate().map(|(name, _)| name), Some("mine-rs"));
    assert!(p.client.built_release().is_none());
    let e = validate(
        RawTest {
            client_image: Some("mine:1".into()),
            ..own()
        },
        1,
    )
    .unwrap_err();
    assert_eq!(e.field, "client_image");
    std::fs::write(folder.join("requirements.txt"), "redis==8.1.0\n").unwrap();
    let e = validate(own(), 1).unwrap_err();
    assert!(
        e.field == "client_dir"
            && e.message
                .contains("both a requirements.txt and a Cargo.toml"),
        "{e}"
    );
}

#[test]
fn an_adapter_over_several_backends_runs_on_the_one_provider_names() {
    let on = |provider: Option<&str>| {
        validate(
            RawTest {
                client: Some("tooz".into()),
                provider: provider.map(str::to_string),
                resource: Some("none".into()),
                ..raw()
            },
            1,
        )
    };
    assert_eq!(on(None).unwrap().provider, Provider::Zookeeper);
    assert_eq!(on(Some("etcd")).unwrap().provider, Provider::Etcd);
    assert_eq!(on(Some("redis")).unwrap().provider, Provider::Redis);
    let e = on(Some("redlock")).unwrap_err();
    assert!(e.message.contains("runs on provider zookeeper"), "{e}");
}

#[test]
fn an_own_adapter_is_named_after_its_folder_and_its_token_is_left_to_its_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my-lock");
    std::fs::create_dir(&folder).unwrap();
    let own = |d: std::path::PathBuf| RawTest {
        client_cmd: Some("python3 my_lock.py".into()),
        client_dir: Some(d),
        provider: Some("etcd".into()),
        ..raw()
    };
    let p = validate(own(folder.clone()), 1).unwrap();
    let a = p.client.adapter().unwrap();
    assert_eq!(
        (a.name.as_str(), a.token, a.shipped),
        ("my-lock", None, false)
    );
    assert_eq!(
        a.dir.as_deref(),
        Some(folder.canonicalize().unwrap().as_path())
    );
    // A strict resource is allowed: the worker refuses a tokenless adapter at its handshake.
    assert_eq!(p.resource, ResourceKind::Strict);
    let e = validate(own(dir.path().join("missing")), 1).unwrap_err();
    assert!(
        e.field == "client_dir" && e.message.contains("missing"),
        "{e}"
    );
    // A client named on the command line replaces the file's.
    let file = RawTest {
        recipe: Some("zk-lock".into()),
        ..raw()
    };
    let both = file.overlay(RawTest {
        client: Some("kazoo".into()),
        ..raw()
    });
    assert!(validate(both, 1).is_ok());
}

#[test]
fn a_release_that_cannot_be_had_here_is_refused_naming_the_client() {
    let bad = |client: &str, image: Option<&str>| {
        validate(
            RawTest {
                client: Some(client.into()),
                client_image: image.map(str::to_string),
                resource: Some("none".into()),
                ..raw()
            },
            1,
        )
        .unwrap_err()
    };
    let e = bad("curator@5.7.0", None);
    assert_eq!(e.field, "client");
    assert!(e.to_string().contains("only from Debian's build"), "{e}");
    let e = bad("python-redis-lock@debian", None);
    assert!(e.to_string().contains("has no Debian build"), "{e}");
    let e = bad("kazoo@2.11 0", None);
    assert!(e.to_string().contains("is not a version of kazoo"), "{e}");
    let e = bad("kazoo@", None);
    assert!(e.to_string().contains("is not a version of kazoo"), "{e}");
    let e = bad("kazoo@2.11.0", Some("mine"));
    assert_eq!(e.field, "client_image");
    assert!(e.to_string().contains("kazoo@debian"), "{e}");
    assert!(validate(
        RawTest {
            client: Some("kazoo@debian".into()),
            client_image: Some("mine".into()),
            ..raw()
        },
        1
    )
    .is_ok());
}

/// A client clock fault starts the workers (not the servers) under libfaketime, so
/// it runs on etcd, whose Go servers libfaketime cannot reach; a client that libfaketime reaches
/// (a Rust crate, a Python library) is accepted.
#[test]
fn client_clock_faults_fake_the_workers_clocks_not_the_servers() {
    let p = validate(
        RawTest {
            nemesis: Some(vec!["client-clock-skew".into()]),
            ..raw()
        },
        7,
    )
    .unwrap();
    assert!(p.fake_client_clocks && !p.fake_clocks);
    let p = validate(
        RawTest {
            client: Some("rslock".into()),
            resource: Some("none".into()),
            nemesis: Some(vec!["client-clock-jump".into(), "stall-service".into()]),
            ..raw()
        },
        7,
    )
    .unwrap();
    assert!(p.fake_client_clocks);
    // Python adapters are accepted: the fake clock's shim keeps their sleeps working under
    // libfaketime 0.9.10 (containers/shim/monotonic_sleep.c).
    for client in [
        "kazoo",
        "redis-py",
        "redis-py@debian",
        "python-redis-lock",
        "pottery",
        "redis-py-asyncio",
    ] {
        let p = validate(
            RawTest {
                client: Some(client.into()),
                resource: Some("none".into()),
                nemesis: Some(vec!["client-clock-skew".into()]),
                ..raw()
            },
            7,
        )
        .unwrap_or_else(|e| panic!("{client}: {e}"));
        assert!(p.fake_client_clocks, "{client}");
    }
    let stall = p
        .faults
        .plan
        .steps
        .iter()
        .find(|s| s.fault == FaultKind::StallService)
        .expect("a stall drawn in 60 s");
    let ttl = p.ttl().get();
    assert!((ttl / 4..=ttl * 3 / 4).contains(&stall.duration), "{stall}");
}

#[test]
fn a_runs_pins_replace_the_adapters_own_and_are_written_back() {
    let pins = |list: &[&str]| Some(list.iter().map(|p| p.parse().unwrap()).collect());
    let p = validate(
        RawTest {
            client: Some("pottery".into()),
            with: pins(&["redis==5.0.8", "hiredis==3.0.0"]),
            resource: Some("none".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(
        p.client.pins(),
        [
            "redis==5.0.8",
            "mmh3==5.3.1",
            "typing_extensions==4.16.0",
            "hiredis==3.0.0"
        ]
    );
    match p.client.built_release() {
        Some((Holder::Shipped("pottery"), r)) => assert_eq!(r.version, "3.0.1"),
        other => panic!("pottery's release from PyPI, not {other:?}"),
    }
    // The resolved test names every pin, and reads back to the same set.
    let yaml = crate::config::plan_file::to_yaml(&p).unwrap();
    assert!(
        yaml.contains("client: pottery@3.0.1\nwith:\n- redis==5.0.8\n"),
        "{yaml}"
    );
    let again: RawTest = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(validate(again, 1).unwrap().client.pins(), p.client.pins());
    // Without pins of its own a run installs the adapter's, and a recipe none.
    let default = validate(
        RawTest {
            client: Some("python-redis-lock".into()),
            resource: Some("none".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(default.client.pins(), ["redis==8.1.0"]);
    assert!(validate(raw(), 1).unwrap().client.pins().is_empty());
}

#[test]
fn pins_are_refused_where_nothing_comes_from_pypi_or_they_contradict() {
    let pinned = |client: Option<&str>, list: &[&str]| {
        let with = Some(list.iter().map(|p| p.parse().unwrap()).collect());
        validate(
            RawTest {
                client: client.map(str::to_string),
                with,
                resource: Some("none".into()),
                ..raw()
            },
            1,
        )
        .unwrap_err()
    };
    let cases = [
        (None, "recipe etcd-lease is fencecheck's own code"),
        (Some("redis-py@debian"), "redis-py@debian is Debian's build"),
        (Some("rslock"), "rslock is a Rust adapter"),
        (Some("memory"), "the in-process adapter installs nothing"),
    ];
    for (client, needle) in cases {
        let e = pinned(client, &["redis==5.0.8"]);
        assert_eq!(e.field, "with", "{client:?}");
        assert!(e.message.contains(needle), "{client:?}: {e}");
    }
    let e = pinned(Some("python-redis-lock"), &["redis==5.0.8", "Redis==8.1.0"]);
    assert!(e.message.contains("redis is pinned twice"), "{e}");
    let e = pinned(Some("python-redis-lock"), &["python_redis_lock==3.7.0"]);
    assert!(
        e.message
            .contains("name its release in client (python-redis-lock@3.7.0)"),
        "{e}"
    );
    // A client named on the command line drops the file's pins with the file's client.
    let file = RawTest {
        client: Some("pottery".into()),
        with: Some(vec!["mmh3==4.0.0".parse().unwrap()]),
        ..raw()
    };
    let both = file.overlay(RawTest {
        client: Some("kazoo".into()),
        ..raw()
    });
    assert_eq!(both.with, None);
}

#[test]
fn a_malformed_pin_in_a_test_file_names_the_line_and_what_to_write() {
    let e = serde_saphyr::from_str::<RawTest>(
        "client: pottery\nwith:\n  - redis==5.0.8\n  - redis=5\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`redis=5` is not a pin: write redis==5"), "{e}");
    assert!(e.contains("line 4"), "{e}");
}

#[test]
fn a_job_profile_holds_for_several_leases_and_writes_as_it_goes() {
    let short = validate(raw(), 1).unwrap();
    assert_eq!(short.app, workloads::App::Short);
    assert_eq!(
        short.work,
        Dur::from_millis(500),
        "a quarter of the 2 s lease"
    );
    assert_eq!(short.writes_per_hold, 1);
    let job = validate(
        RawTest {
            app: Some("job".into()),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!(
        job.work,
        Dur::secs(6),
        "three leases: it lives on the renewal"
    );
    assert_eq!(job.writes_per_hold, 4);
    assert!(job.name.ends_with("-job"), "{}", job.name);
    let yaml = crate::config::plan_file::to_yaml(&job).unwrap();
    assert!(yaml.contains("app: job"), "{yaml}");
    // A test's own work and writes win over the profile's.
    let own = validate(
        RawTest {
            app: Some("daemon".into()),
            work: Some(Dur::secs(1)),
            writes_per_hold: Some(2),
            ..raw()
        },
        1,
    )
    .unwrap();
    assert_eq!((own.work, own.writes_per_hold), (Dur::secs(1), 2));
    let e = validate(
        RawTest {
            app: Some("batch".into()),
            ..raw()
        },
        1,
    )
    .unwrap_err();
    assert_eq!(e.field, "app");
    assert!(e.message.contains("short, job, job-keep, daemon"), "{e}");
}

/// `cut_reply_to` names a command of a protocol the link proxy reads (a Redis command, upper-
/// cased; a ZooKeeper operation, in its own spelling) and needs a cut fault to strike with;
/// etcd's gRPC is not read, an unknown operation names the known ones.
#[test]
fn cut_reply_to_names_a_readable_command_for_a_cut_fault() {
    let with = |provider: &str, command: &str, nemesis: &str| RawTest {
        provider: Some(provider.into()),
        cut_reply_to: Some(command.into()),
        nemesis: Some(vec![nemesis.into()]),
        ..raw()
    };
    let zk = validate(with("zookeeper", "DELETE", "cut-release-reply"), 1).unwrap();
    assert_eq!(zk.cut_reply_to.as_deref(), Some("delete"));
    let redis = validate(with("redis", "evalsha", "cut-renew-reply"), 1).unwrap();
    assert_eq!(redis.cut_reply_to.as_deref(), Some("EVALSHA"));
    assert_eq!(validate(raw(), 1).unwrap().cut_reply_to, None);
    for (test, says) in [
        (
            with("etcd", "Put", "cut-release-reply"),
            "etcd is not read by command",
        ),
        (
            with("zookeeper", "remove", "cut-release-reply"),
            "use one of create, delete",
        ),
        (
            with("redis", "EVAL SHA", "cut-release-reply"),
            "not a Redis command",
        ),
        (
            with("redis", "DEL", "pause-holder"),
            "this test's plan has none",
        ),
    ] {
        let e = validate(test, 1).unwrap_err().to_string();
        assert!(e.contains("cut_reply_to") && e.contains(says), "{e}");
    }
}
