//! The specifications of `holds`.

use super::*;
use crate::locks::LockNames;
use crate::testkit::*;
use results::Event;

/// Every owner/lease combination (absent, empty, multi-byte), through fresh records and
/// through records refilled in place, some of them while another holder keeps an older one.
#[test]
fn an_acquisition_gives_back_its_owner_and_lease_exactly() {
    let names = [
        None,
        Some(""),
        Some("worker-4"),
        Some("ü🦀"),
        Some("/locks/ζ/0000000012"),
    ];
    let lock = LockNames::default().intern("l");
    let mut recycler = Recycler::<Hold>::default();
    let mut kept = Vec::new();
    for round in 0..3 * Recycler::<Hold>::KEPT {
        let (owner, lease) = (names[round % 5], names[(round / 5) % 5]);
        let mut e: Event = ok(1 + round as u32 % 3, Acquire)
            .lock("l")
            .token(round as u64);
        e.owner = owner.map(String::from);
        e.lease = lease.map(String::from);
        e.index = round as u64;
        let a = recycler
            .acquisition(&e.as_ref(), Some(lock))
            .expect("an acquire ok of a known lock");
        assert_eq!((a.owner(), a.lease()), (owner, lease), "round {round}");
        assert_eq!((a.index, a.token), (round as u64, Some(round as u64)));
        if round % 7 == 0 {
            kept.push((a, owner, lease));
        }
    }
    // The records others held were not refilled under them.
    for (a, owner, lease) in &kept {
        assert_eq!(
            (a.owner(), a.lease()),
            (*owner, *lease),
            "index {}",
            a.index
        );
    }
}

/// The lease compare of a release reads words for 8 to 16 bytes: every length around those
/// bounds, differing in the first, a middle or the last byte, or in length, agrees with `==`.
#[test]
fn a_releases_lease_matches_a_holds_exactly() {
    for n in 0..=20usize {
        let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        assert!(same_lease(&a, &a.clone()), "length {n}");
        for at in [0, n / 2, n.saturating_sub(1)]
            .into_iter()
            .filter(|_| n > 0)
        {
            let mut b = a.clone().into_bytes();
            b[at] = b'Z';
            let b = String::from_utf8(b).unwrap();
            assert!(!same_lease(&a, &b), "length {n}, byte {at}");
        }
        assert!(
            !same_lease(&a, &format!("{a}x")),
            "length {n} and {}",
            n + 1
        );
    }
}
