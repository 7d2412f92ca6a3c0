//! `results.json`: a run's verdict. Validity is three-valued (Invalid > Unknown > Valid when
//! merged), and every anomaly is data carrying its evidence packet and its diagnosis — never a
//! bare bool, so a reader can see exactly which operations and resource decisions prove it.

use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;

/// The anomaly kinds of docs/design.md, "Anomaly kinds".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnomalyKind {
    StaleAcceptedWrite,
    DuplicateToken,
    TokenRegression,
    DoubleRelease,
    ReleaseOfLostLock,
    ConcurrentHolders,
    LostUpdate,
    DuplicateEffect,
    StuckLock,
    HeldAfterLoss,
    LockedOutClient,
    GrantedGone,
    PhantomHolder,
    DeletedAnothersKey,
    HeldAgainstService,
    TokenOutOfOrder,
}

impl AnomalyKind {
    pub const ALL: [AnomalyKind; 16] = [
        AnomalyKind::StaleAcceptedWrite,
        AnomalyKind::DuplicateToken,
        AnomalyKind::TokenRegression,
        AnomalyKind::DoubleRelease,
        AnomalyKind::ReleaseOfLostLock,
        AnomalyKind::ConcurrentHolders,
        AnomalyKind::LostUpdate,
        AnomalyKind::DuplicateEffect,
        AnomalyKind::StuckLock,
        AnomalyKind::HeldAfterLoss,
        AnomalyKind::LockedOutClient,
        AnomalyKind::GrantedGone,
        AnomalyKind::PhantomHolder,
        AnomalyKind::DeletedAnothersKey,
        AnomalyKind::HeldAgainstService,
        AnomalyKind::TokenOutOfOrder,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            AnomalyKind::StaleAcceptedWrite => "stale-accepted-write",
            AnomalyKind::DuplicateToken => "duplicate-token",
            AnomalyKind::TokenRegression => "token-regression",
            AnomalyKind::DoubleRelease => "double-release",
            AnomalyKind::ReleaseOfLostLock => "release-of-lost-lock",
            AnomalyKind::ConcurrentHolders => "concurrent-holders",
            AnomalyKind::HeldAfterLoss => "held-after-loss",
            AnomalyKind::LostUpdate => "lost-update",
            AnomalyKind::DuplicateEffect => "duplicate-effect",
            AnomalyKind::StuckLock => "stuck-lock",
            AnomalyKind::LockedOutClient => "locked-out-client",
            AnomalyKind::GrantedGone => "granted-gone",
            AnomalyKind::PhantomHolder => "phantom-holder",
            AnomalyKind::DeletedAnothersKey => "deleted-anothers-key",
            AnomalyKind::HeldAgainstService => "held-against-service",
            AnomalyKind::TokenOutOfOrder => "token-out-of-order",
        }
    }

    pub fn parse(s: &str) -> Option<AnomalyKind> {
        AnomalyKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Kinds reported as observations: `concurrent-holders`, which the literature says cannot
    /// be prevented under pauses; `release-of-lost-lock`, a client told `released` for a lock
    /// it no longer held where the history shows no harm done by it; `held-after-loss`, a
    /// client that still answered `held` after another was granted the lock (a belief, which
    /// only the writes it goes on to make can turn into harm); and `locked-out-client`, a
    /// worker whose acquires kept failing while others took the lock (contention makes some
    /// acquires fail legitimately, and an unfair lock may starve one client for a while);
    /// `granted-gone`, a grant of a key the service had already deleted (a belief the service
    /// contradicts, harmful only through the writes it goes on to make); `phantom-holder`, a
    /// lock the service held for a client told it did not get it (a lock unavailable for a
    /// while, which `stuck-lock` fails once it outlasts ttl + slack); `deleted-anothers-key`, the
    /// service's record of a release removing another holder's key (the harm `double-release`
    /// fails a run for where the history shows it); `held-against-service`, a client answering
    /// held while the service's record shows its key gone (a belief, like `held-after-loss`).
    pub fn observed_by_default(self) -> bool {
        matches!(
            self,
            AnomalyKind::ConcurrentHolders
                | AnomalyKind::ReleaseOfLostLock
                | AnomalyKind::HeldAfterLoss
                | AnomalyKind::LockedOutClient
                | AnomalyKind::GrantedGone
                | AnomalyKind::PhantomHolder
                | AnomalyKind::DeletedAnothersKey
                | AnomalyKind::HeldAgainstService
        )
    }

    /// Whether the kind is judged from the lock service's own record (`service.jsonl`) beside
    /// the history: a run without the record leaves it not applicable.
    pub fn judged_from_service_record(self) -> bool {
        match self {
            AnomalyKind::GrantedGone
            | AnomalyKind::PhantomHolder
            | AnomalyKind::DeletedAnothersKey
            | AnomalyKind::HeldAgainstService
            | AnomalyKind::TokenOutOfOrder => true,
            AnomalyKind::ConcurrentHolders
            | AnomalyKind::StaleAcceptedWrite
            | AnomalyKind::DoubleRelease
            | AnomalyKind::ReleaseOfLostLock
            | AnomalyKind::DuplicateToken
            | AnomalyKind::TokenRegression
            | AnomalyKind::LostUpdate
            | AnomalyKind::DuplicateEffect
            | AnomalyKind::StuckLock
            | AnomalyKind::HeldAfterLoss
            | AnomalyKind::LockedOutClient => false,
        }
    }

    /// The default `fail_on`: every kind but the observed ones.
    pub fn default_fail_on() -> Vec<AnomalyKind> {
        AnomalyKind::ALL
            .into_iter()
            .filter(|k| !k.observed_by_default())
            .collect()
    }
}

impl std::fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Valid, Invalid, or Unknown (a checker could not decide). Serialized as `true`, `false`,
/// `"unknown"` as docs/design.md, "results.json", specifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Validity {
    Valid,
    Unknown,
    Invalid,
}

impl Validity {
    /// Invalid > Unknown > Valid.
    pub fn merge(self, other: Validity) -> Validity {
        use Validity::*;
        match (self, other) {
            (Invalid, _) | (_, Invalid) => Invalid,
            (Unknown, _) | (_, Unknown) => Unknown,
            _ => Valid,
        }
    }

    /// The process exit code (docs/design.md, "Exit codes"): 0 valid, 1 invalid, 2 unknown.
    pub fn exit_code(self) -> u8 {
        match self {
            Validity::Valid => 0,
            Validity::Invalid => 1,
            Validity::Unknown => 2,
        }
    }
}

impl Serialize for Validity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Validity::Valid => s.serialize_bool(true),
            Validity::Invalid => s.serialize_bool(false),
            Validity::Unknown => s.serialize_str("unknown"),
        }
    }
}

impl<'de> Deserialize<'de> for Validity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(true) => Ok(Validity::Valid),
            serde_json::Value::Bool(false) => Ok(Validity::Invalid),
            serde_json::Value::String(s) if s == "unknown" => Ok(Validity::Unknown),
            other => Err(serde::de::Error::custom(format!(
                "valid must be true, false or \"unknown\", not {other}"
            ))),
        }
    }
}

/// What a human needs to act on an anomaly (the boundary tables of the training fixture).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Diagnosis {
    pub observation: String,
    pub likely_boundary: String,
    pub what_to_check: String,
    pub next_action: String,
}

/// The evidence packet: which lock, owner, lease and token, what the resource had before, what
/// it decided, and where in the history and resource log the proof is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Evidence {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// History indices involved, in history order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indices: Vec<u64>,
    /// Resource-log seqs involved, in log order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seqs: Vec<u64>,
    /// Times (ns since start) of the events named above, earliest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub times: Vec<u64>,
    /// Other facts of this kind (the other owner, lease, token; counts for lost-update ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// One anomaly: kind, whether it fails the run under the test's `fail_on`, evidence, diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// True when this kind is in the test's `fail_on`.
    pub fails: bool,
    /// One line a human reads first.
    pub summary: String,
    /// When the anomaly became true (ns since the run's start): the second holder's acquire,
    /// the stale write's acceptance, the harmful release, the stuck lock's deadline. Absent in
    /// verdicts written before it existed; [`Anomaly::when`] then falls back to the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<u64>,
    #[serde(flatten)]
    pub evidence: Evidence,
    pub diagnosis: Diagnosis,
}

impl Anomaly {
    /// When it became true: `at`, or for an older verdict the latest time its evidence names
    /// (the moment the last piece of the proof happened).
    pub fn when(&self) -> Option<u64> {
        self.at
            .or_else(|| self.evidence.times.iter().copied().max())
    }
}

/// The `stats` entry listing nodes that died outside the fault plan: `[{"node", "at",
/// "until"}]`, `until` when someone started it again (ns since the run's start).
pub const UNPLANNED_NODE_EXITS: &str = "unplanned_node_exits";

/// The `stats` entry listing nodes frozen from outside the plan (`docker pause`): `[{"node",
/// "at", "until"}]`, `until` at the thaw.
pub const UNPLANNED_NODE_FREEZES: &str = "unplanned_node_freezes";

/// The whole `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub valid: Validity,
    pub anomalies: Vec<Anomaly>,
    /// Why the verdict is unknown, if it is (a checker panicked, the history is incomplete ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_reasons: Vec<String>,
    /// Counts and checker notes (e.g. "duplicate-token: not applicable, recipe has no token").
    #[serde(default)]
    pub stats: BTreeMap<String, serde_json::Value>,
}

impl Verdict {
    /// Nodes that died outside the fault plan: (node, when, when it came back), in ns since
    /// the run's start.
    pub fn unplanned_node_exits(&self) -> Vec<(String, u64, Option<u64>)> {
        self.outages(UNPLANNED_NODE_EXITS)
    }

    /// Nodes frozen from outside the plan: (node, when, when thawed).
    pub fn unplanned_node_freezes(&self) -> Vec<(String, u64, Option<u64>)> {
        self.outages(UNPLANNED_NODE_FREEZES)
    }

    fn outages(&self, key: &str) -> Vec<(String, u64, Option<u64>)> {
        self.stats
            .get(key)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|x| {
                let node = x["node"].as_str()?.to_string();
                Some((node, x["at"].as_u64()?, x["until"].as_u64()))
            })
            .collect()
    }

    /// One line per unplanned death or freeze of a node, for every face of the verdict.
    pub fn unplanned_lines(&self) -> Vec<String> {
        let s = |ns: u64| ns as f64 / 1e9;
        let deaths = self
            .unplanned_node_exits()
            .into_iter()
            .map(|(node, at, back)| match back {
                None => format!(
                    "node {node} died at {:.3}s outside the fault plan: a fault nobody healed \
                     (see nodes/ for its log)",
                    s(at)
                ),
                Some(back) => format!(
                    "node {node} died at {:.3}s outside the fault plan and was started again at \
                     {:.3}s (judged as a planned kill)",
                    s(at),
                    s(back)
                ),
            });
        let freezes =
            self.unplanned_node_freezes()
                .into_iter()
                .map(|(node, at, thaw)| match thaw {
                    None => format!(
                        "node {node} was frozen from outside the fault plan (docker pause) at \
                     {:.3}s and never thawed",
                        s(at)
                    ),
                    Some(thaw) => format!(
                        "node {node} was frozen from outside the fault plan (docker pause) at \
                     {:.3}s for {:.3}s",
                        s(at),
                        s(thaw.saturating_sub(at))
                    ),
                });
        deaths.chain(freezes).collect()
    }

    /// Records why the history cannot be fully judged (it was interrupted, its last line is
    /// torn ...): a valid verdict becomes unknown; anomalies found stand.
    pub fn unknown_because(&mut self, reason: String) {
        self.unknown_reasons.push(reason);
        if self.valid == Validity::Valid {
            self.valid = Validity::Unknown;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_merges_invalid_over_unknown_over_valid() {
        use Validity::*;
        assert_eq!(Valid.merge(Valid), Valid);
        assert_eq!(Valid.merge(Unknown), Unknown);
        assert_eq!(Unknown.merge(Invalid), Invalid);
        assert_eq!(Invalid.merge(Valid), Invalid);
        assert_eq!(serde_json::to_string(&Unknown).unwrap(), "\"unknown\"");
        assert_eq!(serde_json::from_str::<Validity>("false").unwrap(), Invalid);
    }

    #[test]
    fn anomaly_evidence_is_flattened_beside_kind() {
        let a = Anomaly {
            kind: AnomalyKind::StaleAcceptedWrite,
            fails: true,
            summary: "token 1 accepted after token 2".into(),
            at: Some(7),
            evidence: Evidence {
                lock: Some("report".into()),
                token: Some(1),
                highest_before: Some(2),
                seqs: vec![3, 4],
                ..Default::default()
            },
            diagnosis: Diagnosis::default(),
        };
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["kind"], "stale-accepted-write");
        assert_eq!(json["highest_before"], 2);
        assert_eq!(json["at"], 7);
        let back: Anomaly = serde_json::from_value(json).unwrap();
        assert_eq!(back, a);
        assert_eq!(AnomalyKind::default_fail_on().len(), 8);
    }
}
