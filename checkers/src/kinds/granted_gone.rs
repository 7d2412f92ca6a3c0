//! `granted-gone`: a client was told "acquired" for a key the lock service had already deleted
//! before the lock could be its: the service's own record (`service.jsonl`) shows the grant's key
//! deleted while a key ahead of it in the lock's queue still stood. Observed by default, like
//! `held-after-loss`: a belief the service contradicts, whose harm (a write the client then makes)
//! `stale-accepted-write` judges.
//!
//! Which grants it can judge: those whose lease names the service's key in the service's own
//! order (etcd's concurrency.Mutex, docs/adapters.md), in one of two forms:
//! - `<key>@<create revision>`: such a lock is a queue of keys under one prefix, each created
//!   with its holder's lease; a client owns the lock once every key of that prefix created
//!   before its own is gone. So the lock became the client's at the revision that deleted the
//!   last of the keys ahead of it (its own creation, if none was ahead), and a key deleted
//!   before that revision was never the lock holder's key;
//! - `<key> granted at revision <R> lease <hex>` (the adapter could not read its key back): the
//!   library concluded at revision R that the lock was its; the key's life is its latest
//!   creation with that lease at or before R, and a delete of it at or before R came first.
//!
//! The comparison is of revisions, the service's own order: no clock of the run takes part, so
//! an observer's lag cannot make it.
//!
//! Unknown when grants of that form exist and the run has no `service.jsonl` (older runs,
//! converted histories), or the record has a gap; a grant whose key was created before the
//! record began is left undecided and counted.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::collections::BTreeMap;

/// How a grant names its place in the service's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// `<key>@<create revision>`.
    Created(i64),
    /// `<key> granted at revision <R> lease <hex>`.
    GrantedAt { at: i64, lease: String },
}

/// One grant that names its key in the service's order.
#[derive(Debug, Clone)]
struct Grant {
    index: u64,
    time: u64,
    process: u32,
    lease: String,
    key: String,
    named: Named,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct GrantedGone {
    grants: Vec<Grant>,
}

/// The key and its place in the service's order, as an adapter reports an etcd
/// concurrency.Mutex grant (see the module doc).
pub fn key_and_revision(lease: &str) -> Option<(&str, Named)> {
    // Every grant's lease is asked, and most are neither form: one pass over its bytes finds
    // whether it has a space (the first form) and its last `@` (the second), before any
    // substring search is set up.
    let (mut spaced, mut last_at) = (false, None);
    for (i, b) in lease.bytes().enumerate() {
        match b {
            b' ' => spaced = true,
            b'@' => last_at = Some(i),
            _ => {}
        }
    }
    if let Some((key, rest)) = spaced
        .then(|| lease.split_once(" granted at revision "))
        .flatten()
    {
        let (at, lease) = rest.split_once(" lease ")?;
        let at: i64 = at.parse().ok()?;
        let ok = !key.is_empty() && at > 0 && !lease.is_empty();
        return ok.then(|| {
            let lease = lease.to_string();
            (key, Named::GrantedAt { at, lease })
        });
    }
    let (key, rev) = (&lease[..last_at?], &lease[last_at? + 1..]);
    let rev: i64 = rev.parse().ok()?;
    (!key.is_empty() && rev > 0).then_some((key, Named::Created(rev)))
}

/// The queue a key waits in: everything before its last `/`.
fn queue(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(q, _)| q)
}

/// One key's life at the service, from the record.
#[derive(Debug, Clone)]
struct Life {
    /// The lease it was created with (hex), if any.
    owner: Option<String>,
    /// The revision and observer time of its delete, if it was deleted.
    deleted: Option<(i64, u64)>,
}

/// Lives by (key, create revision).
type Lives<'a> = BTreeMap<(&'a str, i64), Life>;

/// What the record says of one grant.
enum Judged {
    /// Its key's creation is not in the record.
    Undecided,
    /// Its key stood until the lock was its.
    Kept,
    Gone(Gone),
}

/// A grant's key gone before the lock was its.
struct Gone {
    created: i64,
    deleted: i64,
    seen: u64,
    /// The revision at which the lock became the client's, and why: the key ahead whose delete
    /// it waited for (with its creation), or the library's own word.
    turn: Option<i64>,
    ahead: Option<(String, i64)>,
}

fn judge(g: &Grant, began: i64, lives: &Lives<'_>) -> Judged {
    match &g.named {
        Named::Created(created) => {
            let created = *created;
            if created < began {
                return Judged::Undecided;
            }
            let Some(life) = lives.get(&(g.key.as_str(), created)) else {
                return Judged::Undecided;
            };
            let Some((deleted, seen)) = life.deleted else {
                return Judged::Kept;
            };
            // The key ahead in the queue when this one was created that went last.
            let blocker = lives
                .iter()
                .filter(|((k, c), l)| {
                    queue(k) == queue(&g.key)
                        && *c < created
                        && *k != g.key.as_str()
                        && l.deleted.is_none_or(|(d, _)| d > created)
                })
                .max_by_key(|(_, l)| l.deleted.map_or(i64::MAX, |(d, _)| d));
            let Some(((ahead, ahead_created), ahead_life)) = blocker else {
                return Judged::Kept;
            };
            let turn = ahead_life.deleted.map(|(d, _)| d);
            if turn.is_some_and(|t| t < deleted) {
                return Judged::Kept;
            }
            Judged::Gone(Gone {
                created,
                deleted,
                seen,
                turn,
                ahead: Some((ahead.to_string(), *ahead_created)),
            })
        }
        Named::GrantedAt { at, lease } => {
            let life = lives
                .range((g.key.as_str(), i64::MIN)..=(g.key.as_str(), *at))
                .rev()
                .find(|(_, l)| l.owner.as_deref() == Some(lease.as_str()));
            let Some(((_, created), life)) = life else {
                return Judged::Undecided;
            };
            if *created < began {
                return Judged::Undecided;
            }
            match life.deleted {
                Some((deleted, seen)) if deleted <= *at => Judged::Gone(Gone {
                    created: *created,
                    deleted,
                    seen,
                    turn: Some(*at),
                    ahead: None,
                }),
                _ => Judged::Kept,
            }
        }
    }
}

impl Checker for GrantedGone {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::GrantedGone
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE.only(OpType::Ok)
    }

    fn uses_shared(&self) -> bool {
        false
    }

    fn event(&mut self, e: &EventRef<'_>, _cx: &Context<'_>, _out: &mut Findings) {
        let (Process::Worker(process), F::Acquire, OpType::Ok) = (e.process, &e.f, e.kind) else {
            return;
        };
        let Some(lease) = e.lease.as_deref() else {
            return;
        };
        if let Some((key, named)) = key_and_revision(lease) {
            self.grants.push(Grant {
                index: e.index,
                time: e.time,
                process,
                lease: lease.to_string(),
                key: key.to_string(),
                named,
            });
        }
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        if self.grants.is_empty() {
            return Outcome::NotApplicable(
                "no grant names its key in the service's order (etcd's concurrency.Mutex): the \
                 service's record cannot be set against any"
                    .into(),
            );
        }
        let record = match &end.service_log {
            ServiceLog::Present(record) => record,
            ServiceLog::Missing(why) => {
                return Outcome::Unknown(format!(
                    "{} grant(s) name their key and revision, and {why}",
                    self.grants.len()
                ))
            }
        };
        let gaps = record.iter().filter(|s| s.what == ServiceWhat::Gap).count();
        let Some(began) = record
            .iter()
            .find(|s| s.what == ServiceWhat::Watching)
            .and_then(|s| s.revision)
        else {
            return Outcome::Unknown(
                "service.jsonl never says from which revision it watched".into(),
            );
        };
        let lives = lives(record);
        let mut undecided = 0;
        for g in &self.grants {
            match judge(g, began, &lives) {
                Judged::Undecided => undecided += 1,
                Judged::Kept => {}
                Judged::Gone(gone) => report(g, &gone, out),
            }
        }
        out.stats.insert("grants".into(), json!(self.grants.len()));
        if undecided > 0 {
            out.stats.insert("undecided".into(), json!(undecided));
            out.note = Some(format!(
                "{undecided} grant(s) name a key the record does not show created (before the \
                 observer began, or not a lock key it watched)"
            ));
        }
        if gaps > 0 && out.total == 0 {
            return Outcome::Unknown(format!(
                "service.jsonl has {gaps} gap(s): the service's changes there are unknown"
            ));
        }
        Outcome::Checked
    }
}

/// Every key's creation (key, create revision) the record shows, with its delete.
fn lives(record: &[ServiceEntry]) -> Lives<'_> {
    let mut lives: Lives<'_> = BTreeMap::new();
    for s in record {
        let (Some(key), Some(created)) = (s.key.as_deref(), s.created) else {
            continue;
        };
        match s.what {
            ServiceWhat::Put | ServiceWhat::Delete => {
                let life = lives.entry((key, created)).or_insert(Life {
                    owner: s.owner.clone(),
                    deleted: None,
                });
                if s.what == ServiceWhat::Delete {
                    life.deleted = s.revision.map(|r| (r, s.time));
                }
            }
            _ => {}
        }
    }
    lives
}

fn report(g: &Grant, gone: &Gone, out: &mut Findings) {
    let mut evidence = Evidence {
        key: Some(g.key.clone()),
        lease: Some(g.lease.clone()),
        owner: Some(format!("process-{}", g.process)),
        indices: vec![g.index],
        times: vec![gone.seen.min(g.time), gone.seen.max(g.time)],
        ..Evidence::default()
    };
    let other = &mut evidence.other;
    other.insert("created_revision".into(), json!(gone.created));
    other.insert("deleted_revision".into(), json!(gone.deleted));
    other.insert("delete_seen_ns".into(), json!(gone.seen));
    other.insert("turn_revision".into(), json!(gone.turn));
    let turn = gone.turn.map_or("never, in the record".to_string(), |t| {
        format!("revision {t}")
    });
    let why = match &gone.ahead {
        Some((ahead, ahead_created)) => {
            other.insert("ahead_key".into(), json!(ahead));
            other.insert("ahead_created_revision".into(), json!(ahead_created));
            format!("while {ahead}, ahead of it in the queue, stood until {turn}")
        }
        None => format!("before {turn}, where the library concluded the lock was its"),
    };
    let observation = format!(
        "process {} was granted the lock on {} (created at revision {}), but the service \
         deleted that key at revision {} {why}",
        g.process, g.key, gone.created, gone.deleted
    );
    out.push(
        g.time,
        observation.clone(),
        evidence,
        diagnosis::granted_gone(observation),
    );
}

#[cfg(test)]
mod tests {
    use super::{key_and_revision, Named};

    #[test]
    fn a_lease_names_its_key_in_either_form_or_not_at_all() {
        assert_eq!(
            key_and_revision("/l/a@7"),
            Some(("/l/a", Named::Created(7)))
        );
        assert_eq!(
            key_and_revision("k@x@12"),
            Some(("k@x", Named::Created(12)))
        );
        assert_eq!(
            key_and_revision("/l/a granted at revision 9 lease 694d"),
            Some((
                "/l/a",
                Named::GrantedAt {
                    at: 9,
                    lease: "694d".into()
                }
            ))
        );
        for neither in [
            "lease-0",
            "x@",
            "@5",
            "/l/a@0",
            "/l/a@-3",
            "a b@c",
            "/l/a granted at revision 0 lease 1",
            "/l/a granted at revision 9 lease ",
        ] {
            assert_eq!(key_and_revision(neither), None, "{neither}");
        }
    }
}
