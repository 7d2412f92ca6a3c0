//! The raw test description: what a user wrote in `test.yaml` and on the command line, before
//! anything is checked. Every field is optional; [`super::validate`] turns it into a
//! [`super::TestPlan`], the only type that can start a test.

use super::duration::Dur;
use containers::image::pin::Pin;
use serde::Deserialize;

/// A test as written. Unknown keys are errors (a typo must not silently fall back to a default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct RawTest {
    pub name: Option<String>,
    pub provider: Option<String>,
    pub recipe: Option<String>,
    /// A shipped client adapter (`fencecheck clients`): the library under test.
    pub client: Option<String>,
    /// The user's own adapter: the command a worker starts (`sh -c`, in `client_dir`).
    pub client_cmd: Option<String>,
    /// The user's adapter folder, mounted into each worker at `/client`.
    pub client_dir: Option<std::path::PathBuf>,
    /// Passed to the adapter's `init` as `options`, unchanged.
    pub client_options: Option<serde_json::Value>,
    /// The image adapter workers run in (default: the client image of this binary).
    pub client_image: Option<String>,
    /// Pins of the client library's dependencies (`redis==5.0.8`), each in place of the shipped
    /// adapter's own pin of that package, the others added: for a release from PyPI only.
    pub with: Option<Vec<Pin>>,
    /// The application profile: how long a hold lasts, what the application does after the
    /// library raised, whether it asks the library before each write, what it does when the
    /// library reports the lock lost (docs/design.md, "Driving a library as applications do").
    pub app: Option<String>,
    pub resource: Option<String>,
    pub workload: Option<String>,
    pub counter_store: Option<String>,
    pub workers: Option<u32>,
    pub ttl: Option<Dur>,
    pub renew_interval: Option<Dur>,
    pub session_timeout: Option<Dur>,
    pub op_timeout: Option<Dur>,
    pub acquire_timeout: Option<Dur>,
    pub discipline: Option<String>,
    pub renewal: Option<String>,
    pub time_limit: Option<Dur>,
    pub work: Option<Dur>,
    pub writes_per_hold: Option<u32>,
    pub lock: Option<String>,
    pub nemesis: Option<Vec<String>>,
    pub nemesis_interval: Option<Dur>,
    pub fault_duration: Option<Dur>,
    pub seed: Option<u64>,
    pub fail_on: Option<Vec<String>>,
    pub recovery_slack: Option<Dur>,
    pub recovery: Option<Dur>,
    pub image: Option<String>,
    /// The lock service's Redis servers' persistence: `none` (the default), `everysec`,
    /// `always`.
    pub persistence: Option<String>,
    /// The command whose next reply a `cut-*-reply` strikes (a RESP command such as `EVALSHA`,
    /// a ZooKeeper operation such as `delete`), rather than whatever reply comes next.
    pub cut_reply_to: Option<String>,
    pub memory_bugs: Option<Vec<String>>,
    /// An explicit fault schedule, one line per fault: `at 5s start pause-holder for 6s`.
    /// (A stored `test.yaml` writes it back as the resolved plan lines.)
    pub nemesis_timeline: Option<nemesis::Schedule>,
    /// The fault plan a stored `test.yaml` shows. It is drawn from the seed, so reading it back
    /// changes nothing; it is accepted so that a run's own `test.yaml` re-runs as it is.
    #[serde(default, skip_serializing)]
    pub fault_plan: Option<Vec<String>>,
}

impl RawTest {
    /// Overlays `other` (the command line) on `self` (the file): a flag given wins. `other` is
    /// destructured exhaustively, so a new field cannot be forgotten here.
    pub fn overlay(mut self, other: RawTest) -> RawTest {
        // A lock client named on the command line replaces the file's (a recipe, a shipped
        // adapter and an own adapter exclude each other), and the pins of its dependencies.
        if other.recipe.is_some() || other.client.is_some() || other.client_cmd.is_some() {
            self.recipe = None;
            self.client = None;
            self.client_cmd = None;
            self.client_dir = None;
            self.with = None;
        }
        macro_rules! overlay {
            ($($f:ident),* $(,)?) => {
                let RawTest { $($f),* } = other;
                $( if $f.is_some() { self.$f = $f; } )*
            };
        }
        overlay!(
            name,
            provider,
            recipe,
            client,
            client_cmd,
            client_dir,
            client_options,
            client_image,
            with,
            app,
            resource,
            workload,
            counter_store,
            workers,
            ttl,
            renew_interval,
            session_timeout,
            op_timeout,
            acquire_timeout,
            discipline,
            renewal,
            time_limit,
            work,
            writes_per_hold,
            lock,
            nemesis,
            nemesis_interval,
            fault_duration,
            seed,
            fail_on,
            recovery_slack,
            recovery,
            image,
            persistence,
            cut_reply_to,
            memory_bugs,
            nemesis_timeline,
            fault_plan
        );
        self
    }
}
