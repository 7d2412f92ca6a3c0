//! Reading the two logs' lines into [`crate::EventRef`] and [`crate::ResourceRef`], as fast as
//! the check needs and exactly as strict as serde: first a line in our writers' own field order
//! ([`ordered`]), then any field order through the strict scanner ([`scan`], in [`fast`]), and
//! otherwise serde_json, whose error message is the one reported. The parse entry points are
//! `EventRef::parse` and `ResourceRef::parse`.

mod fast;
mod ordered;
pub mod scan;

#[cfg(test)]
mod tests;
