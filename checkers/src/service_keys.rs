//! How the checkers read the lock service's own record (`service.jsonl`, docs/design.md) against
//! the history: which of the service's keys hold a lock, and which grant a key is. One reading,
//! so every kind judged against the record means the same key by "the lock's key" and the same
//! client by "its grant".

use results::service_log::{ServiceEntry, ServiceWhat};

/// Whether record line `e` is of a key that holds `lock` at the service: the lock's name is part
/// of the key (every shipped recipe's and library's key; PostgreSQL's advisory keys are hashes,
/// so none of them is), and a `put` of it is tied by the service to a lease, a session, a
/// backend or an expiry. A lock's directory node and a fence counter carry the lock's name but
/// no such tie: they hold nothing. Every other line of such a key (its delete, expiry, renewal)
/// counts whatever it carries: a delete names its key and, on Redis, nothing else.
pub fn holds_lock(e: &ServiceEntry, lock: &str) -> bool {
    e.key.as_deref().is_some_and(|k| names_lock(k, lock))
        && (e.what != ServiceWhat::Put
            || e.owner.is_some()
            || e.ttl_ms.is_some()
            || e.error.is_some())
}

/// The least settling time after an answer: a change the observer saw up to this long after
/// the answer may have been made before it.
pub const SETTLE_FLOOR_NS: u64 = 100_000_000;

/// The settling time of a record: twice its largest measured lag, at least [`SETTLE_FLOOR_NS`].
pub fn settle(record: &[ServiceEntry]) -> u64 {
    let lag = (record.iter()).filter_map(|e| e.lag_ns).max().unwrap_or(0);
    lag.saturating_mul(2).max(SETTLE_FLOOR_NS)
}

/// Whether the record was cut off (a `gap` not yet followed by its stream's `watching`) at any
/// moment of [from, to], on any server.
pub fn blind_between(record: &[ServiceEntry], from: u64, to: u64) -> bool {
    // Since when each stream (by node; `None`: every one) has been cut off.
    let mut cut: std::collections::BTreeMap<Option<&str>, u64> = Default::default();
    for e in record.iter().take_while(|e| e.time <= to) {
        match e.what {
            ServiceWhat::Gap => {
                cut.entry(e.node.as_deref()).or_insert(e.time);
            }
            ServiceWhat::Watching => {
                let ended = match e.node.as_deref() {
                    Some(node) => cut.remove(&Some(node)).into_iter().collect::<Vec<_>>(),
                    None => std::mem::take(&mut cut).into_values().collect(),
                };
                if !ended.is_empty() && e.time >= from {
                    return true;
                }
            }
            _ => {}
        }
    }
    !cut.is_empty()
}

/// Whether `key` has `lock` as one of its parts: bounded by the key's ends or by `/`, `:`, `{`,
/// `}` (so lock `l` is part of `fencecheck:lock:l` and `/locks/l/n-1`, not of `fencecheck:lock:m`).
pub fn names_lock(key: &str, lock: &str) -> bool {
    let apart = |c: Option<char>| c.is_none_or(|c| matches!(c, '/' | ':' | '{' | '}'));
    !lock.is_empty()
        && key.match_indices(lock).any(|(at, _)| {
            apart(key[..at].chars().next_back()) && apart(key[at + lock.len()..].chars().next())
        })
}

/// Whether a grant's `lease` (an acquire `ok`'s handle) names record line `e`, in one of the
/// forms the recipes and adapters report (docs/adapters.md): the key itself (a ZooKeeper node's
/// path), the value written (a Redis lock's random value), the owner (an etcd lease ID in hex),
/// `pid <owner> ...` (a PostgreSQL backend), `<key>@<create revision>` or `<key> granted at
/// revision <R> lease <owner>` (etcd's concurrency.Mutex).
pub fn names(lease: &str, e: &ServiceEntry) -> bool {
    let is = |field: &Option<String>| field.as_deref() == Some(lease);
    if is(&e.key) || is(&e.value) || is(&e.owner) {
        return true;
    }
    if let (Some(pid), Some(owner)) = (lease.strip_prefix("pid "), e.owner.as_deref()) {
        if pid.split(' ').next() == Some(owner) {
            return true;
        }
    }
    match crate::kinds::granted_gone::key_and_revision(lease) {
        Some((key, crate::kinds::granted_gone::Named::Created(created))) => {
            e.key.as_deref() == Some(key) && e.created == Some(created)
        }
        Some((key, crate::kinds::granted_gone::Named::GrantedAt { lease, .. })) => {
            e.key.as_deref() == Some(key) && e.owner.as_deref() == Some(lease.as_str())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &str, value: Option<&str>, owner: Option<&str>, ttl: Option<u64>) -> ServiceEntry {
        let mut e = ServiceEntry::new(0, ServiceWhat::Put);
        e.key = Some(key.into());
        e.value = value.map(str::to_string);
        e.owner = owner.map(str::to_string);
        e.ttl_ms = ttl;
        e.created = Some(7);
        e
    }

    #[test]
    fn a_lock_directory_and_a_fence_counter_hold_nothing() {
        assert!(!holds_lock(
            &put("/fencecheck/locks/l", None, None, None),
            "l"
        ));
        assert!(!holds_lock(
            &put("fencecheck:fence:l", Some("3"), None, None),
            "l"
        ));
        assert!(holds_lock(
            &put("/fencecheck/locks/l/x-1", None, Some("ab"), None),
            "l"
        ));
        assert!(holds_lock(
            &put("fencecheck:lock:l", Some("v"), None, Some(2000)),
            "l"
        ));
        assert!(!holds_lock(
            &put("fencecheck:lock:m", Some("v"), None, Some(2000)),
            "l"
        ));
        assert!(names_lock("{l}:x", "l") && names_lock("l", "l") && !names_lock("l2", "l"));
        // A delete names its key and nothing else.
        let mut gone = ServiceEntry::new(0, ServiceWhat::Delete);
        gone.key = Some("fencecheck:lock:l".into());
        assert!(holds_lock(&gone, "l"));
    }

    #[test]
    fn each_reported_form_of_a_lease_names_its_key() {
        let e = put("/l/a", Some("v1"), Some("694d"), None);
        for lease in [
            "/l/a",
            "v1",
            "694d",
            "pid 694d key l",
            "/l/a@7",
            "/l/a granted at revision 9 lease 694d",
        ] {
            assert!(names(lease, &e), "{lease}");
        }
        for lease in [
            "/l/b",
            "v2",
            "pid 12 key l",
            "/l/a@8",
            "/l/a granted at revision 9 lease 1",
        ] {
            assert!(!names(lease, &e), "{lease}");
        }
    }
}
