//! The lock clients a test can run: one of fencecheck's own recipes, a shipped adapter for a
//! library people adopt (`adapters/<name>/adapter.yaml`, compiled in), the user's own adapter
//! (`client_cmd`), or the in-process adapter of the pipeline test. One type, [`LockClient`], so
//! everything downstream asks the same questions of each: its provider, whether it gives a
//! token, how a worker starts it.

use containers::image::client::{adapter_file, ADAPTER_FILES};
pub use containers::image::crate_build::CrateRelease;
use containers::image::version::Holder;
pub use containers::image::wheels::Requirement;
use serde::Deserialize;
use std::path::PathBuf;
use workloads::kinds::{Provider, RecipeKind};

/// Where a user's own adapter folder is mounted in the worker's container.
pub const CLIENT_DIR_IN_CONTAINER: &str = "/client";

/// The name of the in-process adapter (provider `memory`): the protocol in a plain `cargo test`.
pub const IN_PROCESS_ADAPTER: &str = "memory";

/// A shipped adapter, as its `adapter.yaml` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedAdapter {
    pub name: String,
    /// The provider a bare `--client <name>` runs on.
    pub provider: Provider,
    /// Every provider it can run on, `provider` first (one library over several backends, as
    /// tooz: `--provider` picks one).
    pub providers: Vec<Provider>,
    pub library: String,
    /// Where its token comes from; `None` when the library gives none.
    pub token: Option<String>,
    /// Why that token (or none), in one line.
    pub why: String,
    /// Debian bookworm's build of the library, in the client image (`@debian`).
    pub debian: Option<DebianBuild>,
    /// Releases from PyPI, one image each (`@<version>`); the default when present.
    pub pypi: Option<PypiReleases>,
    /// Releases of the crate a Rust adapter tests, built by the host's cargo, one image each.
    pub cargo: Option<CargoReleases>,
    /// Why libfaketime cannot move its lock client's wall clock (a Go program reads the clock
    /// through the vDSO, not libc): the client clock faults are refused for it.
    pub no_fake_clock: Option<String>,
}

/// The releases of the crate a Rust adapter is compiled against.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CargoReleases {
    /// The crate's name on the registry.
    pub package: String,
    /// The release its `Cargo.toml` and `Cargo.lock` pin: what a bare name runs.
    pub default: String,
    /// The releases it is known to work with.
    #[serde(default)]
    pub known: Vec<String>,
    /// The adapter's binary, as its `Cargo.toml` names it.
    pub binary: String,
    /// How the worker starts it inside the release's image.
    pub command: String,
}

/// The library as Debian builds it, installed in the client image.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebianBuild {
    /// The Debian package that installs the library.
    pub package: String,
    /// How the worker starts the adapter inside the client image.
    pub command: String,
}

/// The library's releases on PyPI.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PypiReleases {
    /// The registry's name of the package.
    pub package: String,
    /// The release a bare `--client <name>` runs: the current one, pinned.
    pub default: String,
    /// The releases it is known to work with.
    #[serde(default)]
    pub known: Vec<String>,
    /// Other `name==version` pins installed with it (a dependency's release).
    #[serde(default)]
    pub with: Vec<String>,
    /// How the worker starts the adapter inside the release's image (its venv's python).
    pub command: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdapter {
    name: String,
    provider: String,
    #[serde(default)]
    providers: Vec<String>,
    library: String,
    token: String,
    why: String,
    debian: Option<DebianBuild>,
    pypi: Option<PypiReleases>,
    cargo: Option<CargoReleases>,
    no_fake_clock: Option<String>,
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
    let provider = Provider::parse_lock(&raw.provider).ok()?;
    let mut providers = vec![provider];
    for p in &raw.providers {
        let p = Provider::parse_lock(p).ok()?;
        if !providers.contains(&p) {
            providers.push(p);
        }
    }
    Some(ShippedAdapter {
        provider,
        providers,
        token: (raw.token != "none").then_some(raw.token),
        name: raw.name,
        library: raw.library,
        why: raw.why,
        debian: raw.debian,
        pypi: raw.pypi,
        cargo: raw.cargo,
        no_fake_clock: raw.no_fake_clock,
    })
}

impl ShippedAdapter {
    /// The release a bare name runs: PyPI's (or the crate registry's) pinned default when the
    /// adapter has one, else Debian's build.
    pub fn default_release(&self) -> Release {
        match (&self.pypi, &self.cargo) {
            (Some(p), _) => Release::Pypi(self.requirement(p, &p.default)),
            (None, Some(c)) => Release::Crate(Box::new(self.crate_release(c, &c.default))),
            (None, None) => Release::Debian,
        }
    }

    /// One release of a Rust adapter's crate.
    pub fn crate_release(&self, cargo: &CargoReleases, version: &str) -> CrateRelease {
        CrateRelease {
            package: cargo.package.clone(),
            version: version.to_string(),
            default: cargo.default.clone(),
            binary: cargo.binary.clone(),
        }
    }

    /// The requirement of one PyPI release (with the adapter's other pins).
    pub fn requirement(&self, pypi: &PypiReleases, version: &str) -> Requirement {
        Requirement {
            package: pypi.package.clone(),
            version: version.to_string(),
            with: pypi.with.clone(),
        }
    }

    /// How the worker starts it for this release (`None`: the release has no build here).
    pub fn command(&self, release: &Release) -> Option<&str> {
        match release {
            Release::Debian => self.debian.as_ref().map(|d| d.command.as_str()),
            Release::Pypi(_) => self.pypi.as_ref().map(|p| p.command.as_str()),
            Release::Crate(_) => self.cargo.as_ref().map(|c| c.command.as_str()),
            Release::Requirements(_) | Release::OwnCrate => None,
        }
    }
}

/// Which build of a client's libraries runs: a shipped adapter's (`--client name@release`), or
/// the `requirements.txt` of a user's own adapter folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// Debian bookworm's build, in the client image (`@debian`).
    Debian,
    /// A release fetched from PyPI, in its own image (`@<version>`).
    Pypi(Requirement),
    /// A user's folder's `requirements.txt`, fetched the same way, in an image of its own.
    Requirements(Requirement),
    /// A release of the crate a Rust adapter tests, compiled by the host's cargo, in its own
    /// image (`@<version>`).
    Crate(Box<CrateRelease>),
    /// A user's folder's `Cargo.toml`: its package compiled by the host's cargo, its binaries
    /// on PATH in an image of their own.
    OwnCrate,
}

/// The word that names Debian's build after `@`.
pub const DEBIAN_RELEASE: &str = "debian";

impl Release {
    /// What follows `@` in a client's name for this release.
    pub fn label(&self) -> &str {
        match self {
            Release::Debian => DEBIAN_RELEASE,
            Release::Pypi(r) => &r.version,
            Release::Crate(r) => &r.version,
            Release::Requirements(_) => "requirements.txt",
            Release::OwnCrate => "Cargo.toml",
        }
    }
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
    /// A shipped adapter's release of its library, or a user's folder's requirements; `None`
    /// for the others.
    pub release: Option<Release>,
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
    /// provider's default recipe (etcd leases are whole seconds for every etcd client).
    pub fn rules(&self) -> RecipeKind {
        match self {
            LockClient::Recipe(r) => *r,
            LockClient::Adapter(a) => RecipeKind::default_for(a.provider),
        }
    }

    /// Why a fault on its wall clock cannot act on it, if it cannot: a shipped adapter whose
    /// library libfaketime does not reach (its `no_fake_clock`, as a Go program). fencecheck's
    /// recipes (Rust) and every other adapter read the clock through libc; Python's sleeps, which
    /// libfaketime 0.9.10 breaks, pass through the fake clock's shim
    /// (`containers/shim/monotonic_sleep.c`).
    pub fn no_fake_clock(&self) -> Option<String> {
        match self {
            LockClient::Adapter(a) => shipped_adapter(&a.name).and_then(|s| s.no_fake_clock),
            LockClient::Recipe(_) => None,
        }
    }

    pub fn adapter(&self) -> Option<&AdapterPlan> {
        match self {
            LockClient::Adapter(a) => Some(a),
            LockClient::Recipe(_) => None,
        }
    }

    /// The libraries fetched from PyPI that its workers need an image of their own for (a
    /// shipped adapter's release, or a user's folder's requirements): whose, and what to fetch.
    pub fn built_release(&self) -> Option<(Holder<'_>, &Requirement)> {
        match self {
            LockClient::Adapter(AdapterPlan {
                name,
                release: Some(Release::Pypi(r)),
                ..
            }) => Some((Holder::Shipped(name), r)),
            LockClient::Adapter(AdapterPlan {
                release: Some(Release::Requirements(r)),
                ..
            }) => Some((Holder::Own, r)),
            _ => None,
        }
    }

    /// The `name==version` pins installed with a shipped adapter's release from PyPI (its
    /// adapter's own, with the test's `with` in place); empty for any other client.
    pub fn pins(&self) -> &[String] {
        match self.built_release() {
            Some((Holder::Shipped(_), r)) => &r.with,
            Some((Holder::Own, _)) | None => &[],
        }
    }

    /// A shipped Rust adapter's crate release: its name and what to build.
    pub fn crate_release(&self) -> Option<(&str, &CrateRelease)> {
        match self {
            LockClient::Adapter(AdapterPlan {
                name,
                release: Some(Release::Crate(r)),
                ..
            }) => Some((name, r)),
            _ => None,
        }
    }

    /// A user's adapter folder with a `Cargo.toml`: the adapter's name and the folder.
    pub fn own_crate(&self) -> Option<(&str, &std::path::Path)> {
        match self {
            LockClient::Adapter(AdapterPlan {
                name,
                release: Some(Release::OwnCrate),
                dir: Some(dir),
                ..
            }) => Some((name, dir)),
            _ => None,
        }
    }

    /// Whether its workers' image is made when the run starts (from what the host fetched or
    /// built), rather than named by the plan.
    pub fn image_made_at_start(&self) -> bool {
        self.built_release().is_some()
            || self.crate_release().is_some()
            || self.own_crate().is_some()
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
        release: None,
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
                "aetcd",
                "curator",
                "etcd-concurrency",
                "etcd3gw",
                "kazoo",
                "portalocker",
                "pottery",
                "python-etcd3",
                "python-redis-lock",
                "redis-py-asyncio",
                "redis-py",
                "rslock",
                "tooz"
            ]
        );
        for a in &all {
            let commands = [a.command(&Release::Debian), a.command(&a.default_release())];
            for c in commands.into_iter().flatten() {
                assert!(c.contains(&format!("/adapters/{}/", a.name)), "{a:?}");
            }
            assert!(
                a.debian.is_some() || a.pypi.is_some() || a.cargo.is_some(),
                "{a:?}"
            );
            if let Some(p) = &a.pypi {
                assert!(p.command.starts_with("/venv/bin/python "), "{a:?}");
                assert!(p.known.contains(&p.default), "{a:?}");
                // Its pins are exact, so a run's `with` replaces them by package and a stored
                // test.yaml reads them back.
                for pin in &p.with {
                    let parsed = containers::image::pin::Pin::parse(pin);
                    assert!(parsed.is_ok_and(|p| p.to_string() == *pin), "{a:?}");
                }
            }
            assert!(!a.why.is_empty());
        }
        let kazoo = shipped_adapter("kazoo").unwrap();
        assert_eq!(kazoo.provider, Provider::Zookeeper);
        assert!(kazoo.token.is_some());
        assert_eq!(shipped_adapter("redis-py").unwrap().token, None);
        assert_eq!(shipped_adapter("nope"), None);
        match kazoo.default_release() {
            Release::Pypi(r) => assert_eq!(r.package, "kazoo"),
            other => panic!("kazoo's default is a PyPI release, not {other:?}"),
        }
        let lock = shipped_adapter("python-redis-lock").unwrap();
        assert_eq!((lock.debian, lock.token), (None, None));
        assert_eq!(lock.pypi.unwrap().with, ["redis==8.1.0"]);
        assert_eq!(
            shipped_adapter("curator").unwrap().default_release(),
            Release::Debian
        );
        let tooz = shipped_adapter("tooz").unwrap();
        assert_eq!(
            tooz.providers,
            [
                Provider::Zookeeper,
                Provider::Redis,
                Provider::Etcd,
                Provider::Postgres
            ]
        );
        assert_eq!(kazoo.providers, [Provider::Zookeeper]);
        let rslock = shipped_adapter("rslock").unwrap();
        match rslock.default_release() {
            Release::Crate(r) => {
                assert_eq!((r.package.as_str(), &r.version), ("rslock", &r.default))
            }
            other => panic!("rslock's default is a crate release, not {other:?}"),
        }
        assert!(shipped_adapter("portalocker").unwrap().token.is_some());
    }
}
