//! Tiny history builders, so tests read as specifications:
//!
//! ```
//! use checkers::testkit::*;
//! let h = history([
//!     invoke(1, Acquire).lock("l"),
//!     ok(1, Acquire).lock("l").lease("L1").token(1),
//!     invoke(1, Release).lock("l").lease("L1").token(1),
//!     ok(1, Release).lock("l").lease("L1").token(1).result(Released),
//! ]);
//! assert_eq!(h[3].index, 3);
//! ```
//! Times advance 1 ms per event unless set with `.at_ms(..)`; resource entries are built with
//! [`res`] and numbered by [`log`]. Also the training timeline of the fencing literature.

pub use results::OpResult::{
    Accepted, RejectedDuplicate, RejectedStaleFence, ReleaseRejectedNotOwner, Released,
};
pub use results::F::{Acquire, Check, Exit, Increment, LeaseLost, Read, Release, Write};
use results::{Event, OpResult, OpType, Process, ResourceEntry, WriteResult, F};

const AUTO: u64 = u64::MAX;
const MS: u64 = 1_000_000;

fn ev(p: u32, kind: OpType, f: F) -> Event {
    Event::new(AUTO, Process::Worker(p), kind, f)
}

pub fn invoke(p: u32, f: F) -> Event {
    ev(p, OpType::Invoke, f)
}
pub fn ok(p: u32, f: F) -> Event {
    ev(p, OpType::Ok, f)
}
pub fn fail(p: u32, f: F) -> Event {
    ev(p, OpType::Fail, f)
}
pub fn info(p: u32, f: F) -> Event {
    ev(p, OpType::Info, f)
}
/// The nemesis begins a fault (`start-<fault>`).
pub fn start(fault: &str) -> Event {
    Event::new(AUTO, Process::Nemesis, OpType::Info, F::Start(fault.into()))
}
/// The nemesis heals a fault (`stop-<fault>`).
pub fn stop(fault: &str) -> Event {
    Event::new(AUTO, Process::Nemesis, OpType::Info, F::Stop(fault.into()))
}

/// Chainable setters for the fields of an event.
pub trait EventExt: Sized {
    fn lock(self, l: &str) -> Self;
    fn owner(self, o: &str) -> Self;
    fn lease(self, l: &str) -> Self;
    fn token(self, t: u64) -> Self;
    fn key(self, k: &str) -> Self;
    fn value(self, v: &str) -> Self;
    fn int(self, v: i64) -> Self;
    fn op_id(self, id: &str) -> Self;
    fn result(self, r: OpResult) -> Self;
    fn highest_before(self, t: u64) -> Self;
    fn at_ms(self, ms: u64) -> Self;
    /// A nemesis event's targets (`value: {"fault": .., "targets": [..]}`).
    fn targets(self, names: &[&str]) -> Self;
    fn error(self, why: &str) -> Self;
    /// A `check`'s answer.
    fn held(self, held: bool) -> Self;
    /// An acquire's read-back after the grant that did not find its node or key
    /// (`value: {"read_back": ..}`).
    fn read_back(self, found: &str) -> Self;
}

impl EventExt for Event {
    fn lock(mut self, l: &str) -> Self {
        self.lock = Some(l.into());
        self
    }
    fn owner(mut self, o: &str) -> Self {
        self.owner = Some(o.into());
        self
    }
    fn lease(mut self, l: &str) -> Self {
        self.lease = Some(l.into());
        self
    }
    fn token(mut self, t: u64) -> Self {
        self.token = Some(t);
        self
    }
    fn key(mut self, k: &str) -> Self {
        self.key = Some(k.into());
        self
    }
    fn value(mut self, v: &str) -> Self {
        self.value = Some(v.into());
        self
    }
    fn int(mut self, v: i64) -> Self {
        self.value = Some(v.into());
        self
    }
    fn op_id(mut self, id: &str) -> Self {
        self.op_id = Some(id.into());
        self
    }
    fn result(mut self, r: OpResult) -> Self {
        self.result = Some(r);
        self
    }
    fn highest_before(mut self, t: u64) -> Self {
        self.highest_before = Some(t);
        self
    }
    fn at_ms(mut self, ms: u64) -> Self {
        self.time = ms * MS;
        self
    }
    fn targets(mut self, names: &[&str]) -> Self {
        let fault = match &self.f {
            F::Start(f) | F::Stop(f) => f.to_string(),
            other => other.as_str().into_owned(),
        };
        self.value = Some(serde_json::json!({ "fault": fault, "targets": names }));
        self
    }
    fn error(mut self, why: &str) -> Self {
        self.error = Some(why.into());
        self
    }
    fn held(mut self, held: bool) -> Self {
        self.held = Some(held);
        self
    }
    fn read_back(mut self, found: &str) -> Self {
        self.value = Some(serde_json::json!({ "read_back": found }));
        self
    }
}

/// Numbers events in order; an event without an explicit time comes 1 ms after the previous.
pub fn history(events: impl IntoIterator<Item = Event>) -> Vec<Event> {
    let mut now = 0;
    events
        .into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            e.index = i as u64;
            if e.time == AUTO {
                e.time = now + MS;
            }
            now = e.time;
            e
        })
        .collect()
}

/// A resource decision on `key` for a write with `token` under `lease`.
pub fn res(key: &str, token: Option<u64>, lease: &str, result: WriteResult) -> ResourceEntry {
    ResourceEntry {
        seq: 0,
        time: AUTO,
        key: key.into(),
        process: 0,
        owner: format!("owner-of-{lease}"),
        lease: lease.into(),
        token,
        op_id: format!("op-{lease}-{}", token.unwrap_or(0)),
        value: "v".into(),
        highest_before: None,
        result,
    }
}

/// Numbers resource entries in order (1 ms apart unless their time is set).
pub fn log(entries: impl IntoIterator<Item = ResourceEntry>) -> Vec<ResourceEntry> {
    let mut now = 0;
    entries
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.seq = i as u64;
            if r.time == AUTO {
                r.time = now + MS;
            }
            now = r.time;
            r
        })
        .collect()
}

/// The training timeline: worker-A (process 1) takes lease-1 with token 1 and is paused past
/// the TTL; worker-B (process 2) takes lease-2 with token 2 and writes v2; A wakes, writes v1,
/// then releases with its old handle; B releases last. With a fencing resource and an
/// owner-checked release, A's write is rejected-stale-fence, A's release
/// release-rejected-not-owner and B's release released; without, A's write and release are both
/// accepted, and B's release finds its lease gone (A's delete by name removed it).
pub fn training_timeline(fenced: bool) -> (Vec<Event>, Vec<ResourceEntry>) {
    let lock = "report:417:rebuild";
    let key = "report:417";
    let a = |e: Event| {
        e.lock(lock)
            .owner("worker-A")
            .lease("training-lease-1")
            .token(1)
    };
    let b = |e: Event| {
        e.lock(lock)
            .owner("worker-B")
            .lease("training-lease-2")
            .token(2)
    };
    let (a_write, a_high, a_release) = if fenced {
        (WriteResult::RejectedStaleFence, 2, ReleaseRejectedNotOwner)
    } else {
        (WriteResult::Accepted, 2, Released)
    };
    let a_write_kind = if fenced { fail } else { ok };
    let a_release_kind = if fenced { fail } else { ok };
    let (b_release_kind, b_release) = if fenced {
        (ok as fn(u32, F) -> Event, Released)
    } else {
        (fail as fn(u32, F) -> Event, ReleaseRejectedNotOwner)
    };
    let h = history([
        invoke(1, Acquire).lock(lock).at_ms(0),
        a(ok(1, Acquire)).at_ms(10),
        start("pause-holder").targets(&["worker-A"]).at_ms(20),
        invoke(2, Acquire).lock(lock).at_ms(2100),
        b(ok(2, Acquire)).at_ms(2110),
        b(invoke(2, Write))
            .key(key)
            .value("v2")
            .op_id("2-1")
            .at_ms(2120),
        b(ok(2, Write))
            .key(key)
            .value("v2")
            .op_id("2-1")
            .result(Accepted)
            .at_ms(2130),
        stop("pause-holder").targets(&["worker-A"]).at_ms(6000),
        a(invoke(1, Write))
            .key(key)
            .value("v1")
            .op_id("1-1")
            .at_ms(6010),
        a(a_write_kind(1, Write))
            .key(key)
            .value("v1")
            .op_id("1-1")
            .result(a_write.into())
            .highest_before(a_high)
            .at_ms(6020),
        a(invoke(1, Release)).at_ms(6030),
        a(a_release_kind(1, Release)).result(a_release).at_ms(6040),
        b(invoke(2, Release)).at_ms(6050),
        b(b_release_kind(2, Release)).result(b_release).at_ms(6060),
    ]);
    let mut r2 = res(key, Some(2), "training-lease-2", WriteResult::Accepted);
    r2.owner = "worker-B".into();
    r2.process = 2;
    r2.op_id = "2-1".into();
    r2.value = "v2".into();
    r2.time = 2125 * MS;
    let mut r1 = res(key, Some(1), "training-lease-1", a_write);
    r1.owner = "worker-A".into();
    r1.process = 1;
    r1.op_id = "1-1".into();
    r1.value = "v1".into();
    r1.highest_before = Some(2);
    r1.time = 6015 * MS;
    (h, log([r2, r1]))
}
