//! Names the checkers remember: lock names, keys, and the owners and leases of the writes and
//! holds some of them keep (an acquisition keeps its own in one buffer, see
//! [`crate::holds::Acquisition`]). They are short (`worker-4`, `lease-0`, an etcd lease id in
//! hex), so a heap `String` each was most of the checkers' allocations. A [`Name`] keeps up to
//! 24 bytes inline and only longer ones (ZooKeeper node paths) on the heap; it hashes and
//! compares as the `str` it holds, so maps keyed by it are looked up by `&str`.

/// A short string stored inline (see the module doc).
pub type Name = compact_str::CompactString;

/// A name from an optional borrowed field.
pub fn opt_name(s: Option<&str>) -> Option<Name> {
    s.map(Name::from)
}

/// An optional name as evidence text.
pub fn text(n: Option<&str>) -> Option<String> {
    n.map(str::to_string)
}
