//! Who takes the lock: the provider and the lock client — one of fencecheck's recipes, a
//! shipped adapter at one release of its library (`name@<version>` from PyPI, `name@debian`, or
//! the adapter's pinned default), or the user's own adapter (the provider follows from a recipe
//! or a shipped adapter; both given must agree; its folder's `requirements.txt` names the
//! libraries its image gets) — and how many workers contend.

use super::{err, ConfigError};
use crate::config::clients::{
    in_process_adapter, shipped_adapter, shipped_names, AdapterPlan, LockClient, Release,
    Requirement, ShippedAdapter, DEBIAN_RELEASE, IN_PROCESS_ADAPTER,
};
use crate::config::plan::{Provider, RecipeKind};
use crate::config::raw::RawTest;
use std::path::Path;

/// The provider and the lock client; with neither, the default test's (etcd's lease recipe).
pub fn provider_and_client(raw: &RawTest) -> Result<(Provider, LockClient), ConfigError> {
    let provider = match raw.provider.as_deref() {
        Some(p) => Some(Provider::parse_lock(p).map_err(|e| err("provider", e.to_string()))?),
        None => None,
    };
    let named = [
        ("recipe", raw.recipe.is_some()),
        ("client", raw.client.is_some()),
        ("client_cmd", raw.client_cmd.is_some()),
    ];
    let given: Vec<&str> = named.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect();
    if given.len() > 1 {
        return Err(err(
            given[1],
            format!("{} each name a lock client: keep one", given.join(" and ")),
        ));
    }
    for field in ["client_dir", "client_options"] {
        let set = match field {
            "client_dir" => raw.client_dir.is_some(),
            _ => raw.client_options.is_some(),
        };
        if set && raw.client.is_none() && raw.client_cmd.is_none() {
            return Err(err(
                field,
                "is for a client adapter: give client or client_cmd too",
            ));
        }
    }
    if raw.client_dir.is_some() && raw.client.is_some() {
        return Err(err(
            "client_dir",
            "a shipped adapter is in the client image; client_dir mounts your own (with client_cmd)",
        ));
    }
    let client = if let Some(name) = &raw.client {
        LockClient::Adapter(shipped(name, provider, raw)?)
    } else if let Some(command) = &raw.client_cmd {
        LockClient::Adapter(own(command, provider, raw)?)
    } else {
        let recipe = match raw.recipe.as_deref() {
            Some(r) => r
                .parse::<RecipeKind>()
                .map_err(|e| err("recipe", e.to_string()))?,
            None => provider.map_or(RecipeKind::EtcdLease, RecipeKind::default_for),
        };
        LockClient::Recipe(recipe)
    };
    let client = super::pins::pinned(client, raw.with.as_deref().unwrap_or_default())?;
    match provider {
        Some(p) if p != client.provider() => Err(err(
            given.first().copied().unwrap_or("provider"),
            format!(
                "{} {} runs on provider {}, not {p}; drop --provider or pick a {p} client",
                given.first().copied().unwrap_or("recipe"),
                client.name(),
                client.provider()
            ),
        )),
        _ => Ok((client.provider(), client)),
    }
}

fn options(raw: &RawTest) -> Result<serde_json::Value, ConfigError> {
    match &raw.client_options {
        None => Ok(serde_json::json!({})),
        Some(v) if v.is_object() => Ok(v.clone()),
        Some(v) => Err(err("client_options", format!("must be a map, got {v}"))),
    }
}

fn shipped(
    client: &str,
    provider: Option<Provider>,
    raw: &RawTest,
) -> Result<AdapterPlan, ConfigError> {
    if client == IN_PROCESS_ADAPTER {
        return Ok(AdapterPlan {
            options: options(raw)?,
            ..in_process_adapter()
        });
    }
    let (name, asked) = match client.split_once('@') {
        Some((n, r)) => (n, Some(r)),
        None => (client, None),
    };
    let a = shipped_adapter(name).ok_or_else(|| {
        err(
            "client",
            format!(
                "unknown client {name:?}; use one of {} (`fencecheck clients` lists them), or \
                 your own adapter with client_cmd",
                shipped_names()
            ),
        )
    })?;
    let release = match asked {
        None => a.default_release(),
        Some(r) => release(&a, r)?,
    };
    let command = a.command(&release).ok_or_else(|| {
        err(
            "client",
            format!("{name} has no Debian build: name a release ({name}@<version>)"),
        )
    })?;
    // An adapter over several backends runs on the one `--provider` names (the check below
    // refuses any other); the others on their own.
    let provider = provider
        .filter(|p| a.providers.contains(p))
        .unwrap_or(a.provider);
    Ok(AdapterPlan {
        name: a.name.clone(),
        provider,
        command: command.to_string(),
        dir: None,
        token: Some(a.token.is_some()),
        shipped: true,
        release: Some(release),
        options: options(raw)?,
    })
}

/// The release after `@`: `debian`, or a version of the adapter's PyPI package (whether the
/// registry has it is asked when the run starts, before any container).
fn release(a: &ShippedAdapter, asked: &str) -> Result<Release, ConfigError> {
    let name = &a.name;
    if asked == DEBIAN_RELEASE {
        return Ok(Release::Debian);
    }
    let (release, registry) = match (&a.pypi, &a.cargo) {
        (Some(p), _) => (Release::Pypi(a.requirement(p, asked)), "PyPI"),
        (None, Some(c)) => (
            Release::Crate(Box::new(a.crate_release(c, asked))),
            "the crate registry",
        ),
        (None, None) => {
            return Err(err(
                "client",
                format!(
                    "{name}@{asked}: {name}'s library comes only from Debian's build here \
                     ({name}@debian, or plain {name}); releases from a registry are for the \
                     Python and Rust adapters"
                ),
            ))
        }
    };
    let valid = !asked.is_empty()
        && asked.len() <= 64
        && asked.starts_with(|c: char| c.is_ascii_alphanumeric())
        && asked
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-' | '_'));
    if !valid {
        return Err(err(
            "client",
            format!(
                "{name}@{asked:?} is not a version of {}'s library on {registry} (say {name}@{})",
                name,
                a.default_release().label()
            ),
        ));
    }
    Ok(release)
}

fn own(
    command: &str,
    provider: Option<Provider>,
    raw: &RawTest,
) -> Result<AdapterPlan, ConfigError> {
    if command.trim().is_empty() {
        return Err(err(
            "client_cmd",
            "is empty: give the command that starts your adapter",
        ));
    }
    let provider = provider.ok_or_else(|| {
        err(
            "client_cmd",
            "your adapter's provider is not known: give --provider (etcd, zookeeper, redis, ...)",
        )
    })?;
    if provider == Provider::Memory {
        return Err(err(
            "client_cmd",
            "the memory provider's lock service lives in the harness: an adapter cannot reach it; \
             pick a provider that runs in containers",
        ));
    }
    let dir = match &raw.client_dir {
        None => None,
        Some(d) => {
            let full = std::fs::canonicalize(d)
                .map_err(|e| err("client_dir", format!("{}: {e}", d.display())))?;
            if !full.is_dir() {
                return Err(err(
                    "client_dir",
                    format!("{} is not a folder", d.display()),
                ));
            }
            Some(full)
        }
    };
    let name = dir
        .as_ref()
        .and_then(|d| d.file_name())
        .map(|n| containers::docker::docker_safe(&n.to_string_lossy()))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "own".to_string());
    let release = match &dir {
        Some(d) => dependencies(d, &name)?,
        None => None,
    };
    Ok(AdapterPlan {
        name,
        provider,
        command: command.to_string(),
        dir,
        token: None,
        shipped: false,
        release,
        options: options(raw)?,
    })
}

/// What the folder's own dependencies file asks for: a `requirements.txt` (its libraries
/// fetched from PyPI by the host and installed offline into an image of their own, as a shipped
/// adapter's release is) or a `Cargo.toml` (the package built by the host's cargo, its binaries
/// on PATH in an image of their own); neither: the adapter runs in the client image.
fn dependencies(dir: &Path, name: &str) -> Result<Option<Release>, ConfigError> {
    let path = dir.join("requirements.txt");
    let cargo = dir.join("Cargo.toml");
    match (path.is_file(), cargo.is_file()) {
        (true, true) => {
            return Err(err(
                "client_dir",
                format!(
                    "{} has both a requirements.txt and a Cargo.toml: an adapter is in one \
                     language; keep the one it needs",
                    dir.display()
                ),
            ))
        }
        (false, true) => return Ok(Some(Release::OwnCrate)),
        (false, false) => return Ok(None),
        (true, false) => {}
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| err("client_dir", format!("{}: {e}", path.display())))?;
    Requirement::from_list(name, &path, &text)
        .map(|r| Some(Release::Requirements(r)))
        .map_err(|m| err("client_dir", m))
}

/// How many workers contend for the lock.
pub fn workers(raw: &RawTest) -> Result<u32, ConfigError> {
    let workers = raw.workers.unwrap_or(5);
    if !(1..=64).contains(&workers) {
        return Err(err("workers", format!("{workers} workers: use 1 to 64")));
    }
    Ok(workers)
}
