//! The generator's state while it writes one history: the clock, indices and seqs, the token
//! counter, what the resource accepted, and the few kinds of line it emits.

use super::{Item, Rng};
use results::{Event, OpType, Process, ResourceEntry, WriteResult, F};

pub(super) const LOCK: &str = "l";
pub(super) const KEY: &str = "k";

pub(super) struct Gen<'s> {
    pub(super) rng: Rng,
    pub(super) sink: &'s mut dyn FnMut(Item),
    pub(super) index: u64,
    pub(super) seq: u64,
    pub(super) now: u64,
    pub(super) token: u64,
    pub(super) highest: Option<u64>,
    pub(super) count: i64,
    pub(super) tokens: bool,
    /// Per worker, the next `n` of its `<process>-<n>` op_ids (as the real workers number them).
    pub(super) ops: std::collections::BTreeMap<u32, u64>,
}

#[derive(Clone)]
pub(super) struct HoldInfo {
    pub(super) worker: u32,
    pub(super) lease: String,
    pub(super) token: Option<u64>,
}

impl Gen<'_> {
    pub(super) fn emit(&mut self, mut e: Event) {
        self.now += 1_000;
        e.index = self.index;
        e.time = self.now;
        self.index += 1;
        (self.sink)(Item::Event(e));
    }

    pub(super) fn op(&mut self, p: u32, kind: OpType, f: F, h: Option<&HoldInfo>) -> Event {
        let mut e = Event::new(0, Process::Worker(p), kind, f);
        e.lock = Some(LOCK.into());
        if let Some(h) = h {
            e.owner = Some(format!("worker-{}", h.worker));
            e.lease = Some(h.lease.clone());
            e.token = h.token;
        }
        e
    }

    pub(super) fn next_op_id(&mut self, p: u32) -> String {
        let n = self.ops.entry(p).or_default();
        *n += 1;
        format!("{p}-{}", *n - 1)
    }

    pub(super) fn next_token(&mut self) -> Option<u64> {
        self.token += 2 + self.rng.below(3);
        self.tokens.then_some(self.token)
    }

    /// One write under `h` by process `p`, decided by the resource as `result`.
    pub(super) fn write(
        &mut self,
        p: u32,
        h: &HoldInfo,
        op_id: String,
        result: WriteResult,
        done: OpType,
    ) {
        let mut inv = self.op(p, OpType::Invoke, F::Write, Some(h));
        inv.key = Some(KEY.into());
        inv.value = Some(op_id.clone().into());
        inv.op_id = Some(op_id.clone());
        self.emit(inv.clone());
        let entry = ResourceEntry {
            seq: self.seq,
            time: self.now + 500,
            key: KEY.into(),
            process: p,
            owner: format!("worker-{}", h.worker),
            lease: h.lease.clone(),
            token: h.token,
            op_id,
            value: inv.value.clone().unwrap_or_default(),
            highest_before: self.highest,
            result,
        };
        self.seq += 1;
        if result.is_accepted() && h.token > self.highest {
            self.highest = h.token;
        }
        let mut end = inv;
        end.kind = done;
        end.result = (done != OpType::Info).then_some(result.into());
        end.highest_before = entry.highest_before;
        (self.sink)(Item::Resource(entry));
        self.emit(end);
    }

    pub(super) fn duplicate_last_entry(&mut self, mut entry: ResourceEntry) {
        entry.seq = self.seq;
        entry.highest_before = self.highest;
        self.seq += 1;
        (self.sink)(Item::Resource(entry));
    }
}
