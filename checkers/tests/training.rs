//! The training timeline as a golden test (worker-A paused past its TTL, worker-B takes over,
//! A wakes and writes with its old token, then releases with its old handle).

mod common;
use checkers::testkit::training_timeline;
use common::*;
use results::{AnomalyKind::*, Validity};

#[test]
fn with_a_fencing_resource_the_run_is_valid_and_concurrent_holders_is_reported() {
    let (h, r) = training_timeline(true);
    let v = verdict(&h, &r);
    assert_eq!(v.valid, Validity::Valid, "{:#?}", v);
    assert_eq!(kinds(&v), vec![ConcurrentHolders]);
    let ch = &only(&v, ConcurrentHolders)[0];
    assert!(!ch.fails);
    assert_eq!(ch.evidence.lock.as_deref(), Some("report:417:rebuild"));
    assert_eq!(ch.evidence.lease.as_deref(), Some("training-lease-2"));
    assert_eq!(ch.evidence.other["other_lease"], "training-lease-1");
    // A's write was rejected by the resource, with the newer token as its reason.
    assert_eq!(r[1].result.as_str(), "rejected-stale-fence");
    assert_eq!(r[1].highest_before, Some(2));
    assert_eq!(
        h[11].result.map(|x| x.as_str()),
        Some("release-rejected-not-owner")
    );
    assert_eq!(status(&v, StaleAcceptedWrite), "checked");
    assert_eq!(status(&v, DoubleRelease), "checked");
    assert!(only(&v, ReleaseOfLostLock).is_empty());
}

#[test]
fn without_fencing_the_run_is_invalid_with_stale_write_and_double_release() {
    let (h, r) = training_timeline(false);
    let v = verdict(&h, &r);
    assert_eq!(v.valid, Validity::Invalid);
    assert_eq!(
        kinds(&v),
        vec![StaleAcceptedWrite, DoubleRelease, ConcurrentHolders]
    );

    let stale = &only(&v, StaleAcceptedWrite)[0];
    assert!(stale.fails);
    let e = &stale.evidence;
    assert_eq!(e.key.as_deref(), Some("report:417"));
    assert_eq!(e.owner.as_deref(), Some("worker-A"));
    assert_eq!(e.lease.as_deref(), Some("training-lease-1"));
    assert_eq!((e.token, e.highest_before), (Some(1), Some(2)));
    assert_eq!(e.result.as_deref(), Some("accepted"));
    assert_eq!(e.seqs, vec![0, 1]);
    assert_eq!(e.times, vec![2_125_000_000, 6_015_000_000]);
    assert_eq!(e.other["newer_lease"], "training-lease-2");
    assert!(stale
        .diagnosis
        .likely_boundary
        .contains("does not store or compare"));

    let dr = &only(&v, DoubleRelease)[0];
    assert!(dr.fails);
    let e = &dr.evidence;
    assert_eq!(e.lock.as_deref(), Some("report:417:rebuild"));
    assert_eq!(e.lease.as_deref(), Some("training-lease-1"));
    assert_eq!(e.token, Some(1));
    assert_eq!(e.result.as_deref(), Some("released"));
    assert_eq!(e.other["holder_lease"], "training-lease-2");
    // A's grant, B's grant, A's release invoke and ok, B's release rejected: the harm.
    assert_eq!(e.indices, vec![1, 4, 10, 11, 13]);
    assert_eq!(dr.at, Some(6_040_000_000), "true from the stale release on");
    assert!(dr
        .diagnosis
        .likely_boundary
        .contains("not bound to the exact lease"));
}
