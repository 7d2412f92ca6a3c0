//! The lock clients a test can run: one of fencecheck's own recipes, a shipped adapter for a
//! library people adopt (`adapters/<name>/adapter.yaml`, compiled in), the user's own adapter
//! (`client_cmd`), or the in-process adapter of the pipeline test. One type, [`LockClient`], so
//! everything downstream asks the same questions of each: its provider, whether it gives a
//! token, how a worker starts it.

use super::plan::{Provider, RecipeKind};
use containers::image::client::{adapter_file, ADAPTER_FILES};
use serde::Deserialize;
use std::path::PathBuf;

/// Where a user's own adapter folder is mounted in the worker's container.
pub const CLIENT_DIR_IN_CONTAINER: &str = "/client";

/// The name of the in-process adapter (provider `memory`): the protocol in a plain `cargo test`.
pub const IN_PROCESS_ADAPTER: &str = "memory";

/// A shipped adapter, as its `adapter.yaml` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedAdapter {
    pub name: String,
    pub provider: Provider,
    /// How the worker starts it inside the client image.
    pub command: String,
    pub library: String,
    /// The Debian package that installs the library.
    pub package: String,
    /// Where its token comes from; `None` when the library gives none.
    pub token: Option<String>,
    /// Why that token (or none), in one line.
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdapter {
    name: String,
    provider: String,
    command: String,
    library: String,
    package: String,
    token: String,
    why: String,
}

/// Every shipped adapter, in name order.
pub fn shipped() -> Vec<ShippedAdapter> {
    ADAPTER_FILES
        .iter()
        .filter_map(|f| f.path.strip_suffix("/adapter.yaml"))
        .filter_map(shipped_adapter)
        .collect()
}

/// The shipped adapter of this name, if there is one.
pub fn shipped_adapter(name: &str) -> Option<ShippedAdapter> {
    let file = adapter_file(&format!("{name}/adapter.yaml"))?;
    let text = std::str::from_utf8(file.contents).ok()?;
    // A broken adapter.yaml is caught by the test below, before it ships.
    let raw: RawAdapter = serde_saphyr::from_str(text).ok()?;
    Some(ShippedAdapter {
        provider: Provider::parse_lock(&raw.provider).ok()?,
        token: (raw.token != "none").then_some(raw.token),
        name: raw.name,
        command: raw.command,
        library: raw.library,
        package: raw.package,
        why: raw.why,
    })
}

/// A library behind its adapter, as a worker starts it.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterPlan {
    /// The shipped adapter's name, or the user's (their folder's name, else `own`).
    pub name: String,
    pub provider: Provider,
    /// `sh -c` command inside the worker's container.
    pub command: String,
    /// The user's adapter folder on the host, mounted at [`CLIENT_DIR_IN_CONTAINER`].
    pub dir: Option<PathBuf>,
    /// Whether the library gives a fence token: known for shipped adapters, `None` for a user's
    /// own until its handshake says (the worker then refuses a tokenless one where a token is
    /// needed).
    pub token: Option<bool>,
    /// Whether this is a shipped adapter (the others are the user's own or in-process).
    pub shipped: bool,
    /// Passed to the adapter's `init` unchanged.
    pub options: serde_json::Value,
}

/// Who takes the lock in a test.
#[derive(Debug, Clone, PartialEq)]
pub enum LockClient {
    /// One of fencecheck's own recipes (the textbook baselines).
    Recipe(RecipeKind),
    /// A client library behind its adapter.
    Adapter(AdapterPlan),
}

impl LockClient {
    pub fn provider(&self) -> Provider {
        match self {
            LockClient::Recipe(r) => r.provider(),
            LockClient::Adapter(a) => a.provider,
        }
    }

    /// Its name: the recipe's, or the adapter's.
    pub fn name(&self) -> &str {
        match self {
            LockClient::Recipe(r) => r.as_str(),
            LockClient::Adapter(a) => &a.name,
        }
    }

    /// Whether it gives a fence token (`None`: a user's adapter, known at its handshake).
    pub fn has_token(&self) -> Option<bool> {
        match self {
            LockClient::Recipe(r) => Some(r.has_token()),
            LockClient::Adapter(a) => a.token,
        }
    }

    /// The recipe whose rules the timing follows: the recipe itself, or for an adapter its
    /// provider's default recipe (etcd leases are whole seconds for every etcd client); none for
    /// an adapter of a provider that is no lock service.
    pub fn rules(&self) -> Option<RecipeKind> {
        match self {
            LockClient::Recipe(r) => Some(*r),
            LockClient::Adapter(a) => RecipeKind::default_for(a.provider),
        }
    }

    pub fn adapter(&self) -> Option<&AdapterPlan> {
        match self {
            LockClient::Adapter(a) => Some(a),
            LockClient::Recipe(_) => None,
        }
    }

    /// Whether its workers run in the client image (every adapter in a container does).
    pub fn needs_client_image(&self) -> bool {
        matches!(self, LockClient::Adapter(a) if a.provider != Provider::Memory)
    }
}

/// The shipped adapters' names, for messages.
pub fn shipped_names() -> String {
    let mut names: Vec<String> = shipped().into_iter().map(|a| a.name).collect();
    names.push(IN_PROCESS_ADAPTER.to_string());
    names.join(", ")
}

/// The in-process adapter as a client (provider `memory`).
pub fn in_process_adapter() -> AdapterPlan {
    AdapterPlan {
        name: IN_PROCESS_ADAPTER.to_string(),
        provider: Provider::Memory,
        command: String::new(),
        dir: None,
        token: Some(true),
        shipped: false,
        options: serde_json::json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_adapter_yaml_parses_and_names_its_folder() {
        let all = shipped();
        let names: Vec<&str> = all.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "curator",
                "etcd-concurrency",
                "kazoo",
                "python-etcd3",
                "redis-py"
            ]
        );
        for a in &all {
            assert!(
                a.command.contains(&format!("/adapters/{}/", a.name)),
                "{a:?}"
            );
            assert!(!a.why.is_empty());
        }
        let kazoo = shipped_adapter("kazoo").unwrap();
        assert_eq!(kazoo.provider, Provider::Zookeeper);
        assert!(kazoo.token.is_some());
        assert_eq!(shipped_adapter("redis-py").unwrap().token, None);
        assert_eq!(shipped_adapter("nope"), None);
    }
}
