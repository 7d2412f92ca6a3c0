//! Who takes the lock: the provider and the recipe (either implies the other; both given must
//! agree), and how many workers contend.

use super::{err, ConfigError};
use crate::config::plan::{Provider, RecipeKind};
use crate::config::raw::RawTest;

/// The provider and the recipe; with neither, the default test's (etcd's lease recipe).
pub fn provider_and_recipe(raw: &RawTest) -> Result<(Provider, RecipeKind), ConfigError> {
    let provider = match raw.provider.as_deref() {
        Some(p) => Some(Provider::parse(p).ok_or_else(|| {
            err(
                "provider",
                format!("unknown provider {p:?}; use one of {}", Provider::names()),
            )
        })?),
        None => None,
    };
    let recipe = match raw.recipe.as_deref() {
        Some(r) => Some(
            r.parse::<RecipeKind>()
                .map_err(|e| err("recipe", e.to_string()))?,
        ),
        None => None,
    };
    match (recipe, provider) {
        (Some(r), Some(p)) if r.provider() != p => Err(err(
            "recipe",
            format!(
                "recipe {r} runs on provider {}, not {p}; drop --provider or pick a {p} recipe",
                r.provider()
            ),
        )),
        (Some(r), _) => Ok((r.provider(), r)),
        (None, Some(p)) => Ok((p, p.default_recipe())),
        (None, None) => Ok((Provider::Etcd, RecipeKind::EtcdLease)),
    }
}

/// How many workers contend for the lock.
pub fn workers(raw: &RawTest) -> Result<u32, ConfigError> {
    let workers = raw.workers.unwrap_or(5);
    if !(1..=64).contains(&workers) {
        return Err(err("workers", format!("{workers} workers: use 1 to 64")));
    }
    Ok(workers)
}
