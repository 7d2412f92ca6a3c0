//! Names the checkers remember per acquisition: lock, owner, lease, key. They are short
//! (`worker-4`, `lease-0`, an etcd lease id in hex) and one is copied for every acquisition by
//! several checkers, so a heap `String` each was most of the checkers' allocations. A
//! [`Name`] keeps up to 24 bytes inline and only longer ones (ZooKeeper node paths) on the
//! heap; it hashes and compares as the `str` it holds, so maps keyed by it are looked up by
//! `&str`.

/// A short string stored inline (see the module doc).
pub type Name = compact_str::CompactString;

/// A name from an optional borrowed field.
pub fn opt_name(s: Option<&str>) -> Option<Name> {
    s.map(Name::from)
}

/// An optional name as evidence text.
pub fn text(n: &Option<Name>) -> Option<String> {
    n.as_ref().map(ToString::to_string)
}
