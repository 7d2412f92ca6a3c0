//! One line of `resource.jsonl`: the protected resource's own record of a write it decided.
//! This, not a worker's view, is the ground truth of what was accepted: a worker can die after
//! the resource accepted its write, and its history then shows only `info`.

use serde::{Deserialize, Serialize};

/// The resource's decision on one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteResult {
    Accepted,
    RejectedStaleFence,
    RejectedDuplicate,
}

impl WriteResult {
    pub fn as_str(&self) -> &'static str {
        match self {
            WriteResult::Accepted => "accepted",
            WriteResult::RejectedStaleFence => "rejected-stale-fence",
            WriteResult::RejectedDuplicate => "rejected-duplicate",
        }
    }

    pub fn is_accepted(&self) -> bool {
        *self == WriteResult::Accepted
    }
}

impl From<WriteResult> for crate::OpResult {
    fn from(r: WriteResult) -> Self {
        match r {
            WriteResult::Accepted => crate::OpResult::Accepted,
            WriteResult::RejectedStaleFence => crate::OpResult::RejectedStaleFence,
            WriteResult::RejectedDuplicate => crate::OpResult::RejectedDuplicate,
        }
    }
}

/// One write as the resource decided it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceEntry {
    /// 0.. in decision order (file order).
    pub seq: u64,
    /// Nanoseconds since the run's start, when the resource decided.
    pub time: u64,
    pub key: String,
    /// The worker process id that sent the write.
    pub process: u32,
    pub owner: String,
    pub lease: String,
    /// Absent for tokenless recipes (Redlock) writing to an unfenced resource.
    #[serde(default)]
    pub token: Option<u64>,
    pub op_id: String,
    pub value: serde_json::Value,
    /// Highest token the resource had accepted for `key` before deciding (null: none yet).
    #[serde(default)]
    pub highest_before: Option<u64>,
    pub result: WriteResult,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_format() {
        let line = r#"{"seq":4,"time":99,"key":"report:417","process":2,"owner":"worker-A","lease":"lease-1","token":1,"op_id":"2-7","value":"v1","highest_before":2,"result":"rejected-stale-fence"}"#;
        let e: ResourceEntry = serde_json::from_str(line).unwrap();
        assert_eq!(e.result, WriteResult::RejectedStaleFence);
        assert_eq!(e.highest_before, Some(2));
        assert_eq!(
            crate::OpResult::from(e.result).as_str(),
            "rejected-stale-fence"
        );
    }
}
