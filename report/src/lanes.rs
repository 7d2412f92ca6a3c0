//! Who is who on the timeline: one lane per worker, not per process id. A worker whose process
//! was retired (an `info` outcome) or killed continues under a new process id, and both ids
//! share the worker's lane. The worker of a process comes from the harness when it knows
//! ([`super::ReportInput::process_workers`]), else from the `owner` fields (`worker-3`,
//! `worker-3/<suffix>`) of the process's acquisitions, releases, lease-lost events and
//! resource-log entries; a process that never named an owner gets a lane of its own.

use std::collections::{BTreeMap, HashMap};

use super::timeline::{worker_of_owner, Lane};
use super::ReportInput;
use results::Process;

/// The lanes, in natural order of their names (`worker-2` before `worker-10`), and the lane
/// index of every worker process.
pub fn lanes(input: &ReportInput<'_>) -> (Vec<Lane>, HashMap<u32, usize>) {
    let mut names: BTreeMap<u32, String> = input.process_workers.clone();
    let owners = input
        .history
        .iter()
        .filter_map(|e| match e.process {
            Process::Worker(p) => e.owner.as_deref().map(|o| (p, o)),
            Process::Nemesis => None,
        })
        .chain(input.resource.iter().map(|r| (r.process, r.owner.as_str())));
    for (p, owner) in owners {
        if let Some(w) = worker_of_owner(owner) {
            names.entry(p).or_insert(w);
        }
    }
    let mut processes: Vec<u32> = input
        .history
        .iter()
        .filter_map(|e| match e.process {
            Process::Worker(p) => Some(p),
            Process::Nemesis => None,
        })
        .chain(input.resource.iter().map(|r| r.process))
        .collect();
    processes.sort_unstable();
    processes.dedup();
    let mut by_name: BTreeMap<(String, u64, String), Lane> = BTreeMap::new();
    for p in processes {
        let name = names
            .get(&p)
            .cloned()
            .unwrap_or_else(|| format!("process {p}"));
        let lane = by_name.entry(natural_key(&name)).or_default();
        lane.name = name;
        lane.processes.push(p);
    }
    let lanes: Vec<Lane> = by_name.into_values().collect();
    let lane_of: HashMap<u32, usize> = lanes
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.processes.iter().map(move |p| (*p, i)))
        .collect();
    (lanes, lane_of)
}

/// Orders `worker-2` before `worker-10`.
fn natural_key(name: &str) -> (String, u64, String) {
    let digits_at = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (head, tail) = name.split_at(digits_at);
    let num_len = tail
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(tail.len());
    let num = tail[..num_len].parse().unwrap_or(0);
    (head.to_string(), num, tail[num_len..].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_naturally() {
        let mut names = vec!["worker-10", "process 7", "worker-2", "worker-1"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["process 7", "worker-1", "worker-2", "worker-10"]);
    }
}
