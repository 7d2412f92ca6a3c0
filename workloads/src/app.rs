//! The application a run models: how long a hold lasts, what the application does after its
//! lock library raised, whether it asks the library before each write, and what it does when
//! the library reports the lock lost. A lock library's renewal, retry and recovery code runs
//! only when an application gives it the chance (a job longer than the lease, a client kept
//! after an exception), so the profile is as much a part of a cell as the library and its
//! version (docs/design.md, "Driving a library as applications do"). Every fact of a profile is
//! one row of [`ROWS`].

use std::fmt;
use std::str::FromStr;

/// How long one hold lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldLength {
    /// A short critical section: the test's `work` (ttl / 4 by default), its writes at the end.
    Short,
    /// A job of several ttl (3 x ttl by default) that lives on the library's renewal, writing
    /// as it goes (one write every part of the job).
    Job,
}

/// What the application does after the library raised (an `info` outcome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// The client is gone: the adapter is killed, and a fresh one (a new session, a new
    /// connection pool) serves the next operation.
    Crash,
    /// The same client goes on: the library's own recovery (its session, its pool, its `Lock`
    /// object) serves the next operation. A timeout or a broken protocol still ends the
    /// adapter (a late reply could otherwise be taken for a new one).
    Keep,
}

/// Whether the application asks its library before it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Never: the worker's own keep-alive decides (the default shape).
    Never,
    /// Before each write, and the library's answer decides the write: the library, not the
    /// worker's clock, says how long a hold lasts (an application has nothing else to go by).
    /// Every answer is recorded, after a thaw too.
    BeforeWrite,
}

/// What the application does when the library reports the lock lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLost {
    /// The job stops: no more writes under that hold, its release as a `finally` would, the
    /// next job after the usual pause.
    Stop,
    /// The job goes on: it releases, acquires again at once and does its remaining writes
    /// under the new hold.
    Reacquire,
}

/// One application profile, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum App {
    /// Short critical sections, a crash after any error, no questions: the shape every run had
    /// before profiles existed.
    #[default]
    Short,
    /// Jobs of several ttl, a crash after an error, the library asked before each write.
    Job,
    /// [`App::Job`] whose client outlives the library's exceptions.
    JobKeep,
    /// A long-lived service: jobs, the client kept, a lost lock taken again at once.
    Daemon,
}

/// Every fact of one profile.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub app: App,
    pub name: &'static str,
    pub hold: HoldLength,
    pub on_error: OnError,
    pub ask: Ask,
    pub on_lost: OnLost,
    pub about: &'static str,
}

/// The profiles, in the order `--help` lists them.
pub const ROWS: [Row; 4] = [
    Row {
        app: App::Short,
        name: "short",
        hold: HoldLength::Short,
        on_error: OnError::Crash,
        ask: Ask::Never,
        on_lost: OnLost::Stop,
        about: "short critical sections, crash after an error, never ask the library",
    },
    Row {
        app: App::Job,
        name: "job",
        hold: HoldLength::Job,
        on_error: OnError::Crash,
        ask: Ask::BeforeWrite,
        on_lost: OnLost::Stop,
        about: "jobs of several ttl on the library's renewal, ask it before each write",
    },
    Row {
        app: App::JobKeep,
        name: "job-keep",
        hold: HoldLength::Job,
        on_error: OnError::Keep,
        ask: Ask::BeforeWrite,
        on_lost: OnLost::Stop,
        about: "as job, and the client is kept after the library raised",
    },
    Row {
        app: App::Daemon,
        name: "daemon",
        hold: HoldLength::Job,
        on_error: OnError::Keep,
        ask: Ask::BeforeWrite,
        on_lost: OnLost::Reacquire,
        about: "as job-keep, and a lost lock is taken again at once, the job going on",
    },
];

impl App {
    pub fn row(self) -> &'static Row {
        let i = match self {
            App::Short => 0,
            App::Job => 1,
            App::JobKeep => 2,
            App::Daemon => 3,
        };
        &ROWS[i]
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn hold(self) -> HoldLength {
        self.row().hold
    }

    pub fn on_error(self) -> OnError {
        self.row().on_error
    }

    pub fn ask(self) -> Ask {
        self.row().ask
    }

    pub fn on_lost(self) -> OnLost {
        self.row().on_lost
    }

    /// The names, for messages and `--help`.
    pub fn names() -> String {
        ROWS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile name fencecheck does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown application profile {got:?}: expected one of {}",
    App::names()
)]
pub struct UnknownApp {
    pub got: String,
}

impl FromStr for App {
    type Err = UnknownApp;
    fn from_str(s: &str) -> Result<Self, UnknownApp> {
        ROWS.iter()
            .find(|r| r.name == s.trim())
            .map(|r| r.app)
            .ok_or_else(|| UnknownApp { got: s.into() })
    }
}

impl serde::Serialize for App {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for App {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_its_own_profile_and_reads_back_by_name() {
        for (i, r) in ROWS.iter().enumerate() {
            assert_eq!(r.app.row().name, r.name, "row {i}");
            assert_eq!(r.name.parse::<App>(), Ok(r.app));
        }
        let err = "jobs".parse::<App>().unwrap_err().to_string();
        assert!(err.contains("short, job, job-keep, daemon"), "{err}");
        assert_eq!(App::default(), App::Short);
        assert_eq!(App::Short.ask(), Ask::Never);
        assert_eq!(App::Daemon.on_lost(), OnLost::Reacquire);
    }
}
