//! The closed sets of names a test is made of, one enum and one list of names each: the lock
//! service ([`Provider`], the data model's table of systems, beside the sets that name it), the
//! recipe ([`RecipeKind`], which knows its provider and whether it hands out a fence token, and
//! is the default of each lock provider), the protected resource ([`ResourceKind`]) and the
//! counter workload's store ([`CounterStore`]). Validation parses names into these once; nothing
//! downstream compares strings again.

mod counter_store;
mod recipe;
mod resource;

pub use counter_store::CounterStore;
pub use recipe::RecipeKind;
pub use resource::ResourceKind;
pub use results::Provider;

/// A name that is not one of its set's; the message lists the set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}; use one of {expected}")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    pub expected: String,
}

/// Finds `name` among `all` by `as_str`, or says which names there are.
fn find<T: Copy>(
    what: &'static str,
    name: &str,
    all: &[T],
    as_str: impl Fn(T) -> &'static str,
) -> Result<T, UnknownName> {
    all.iter()
        .copied()
        .find(|k| as_str(*k) == name)
        .ok_or_else(|| UnknownName {
            what,
            name: name.to_string(),
            expected: all
                .iter()
                .map(|k| as_str(*k))
                .collect::<Vec<_>>()
                .join(", "),
        })
}
