//! The processes of a container, seen from the host: found through `/proc/<pid>/cgroup` (every
//! process of a container sits in a cgroup named after its id), signalled with `kill(2)`, and
//! checked through `/proc/<pid>/status` (`State: T (stopped)`). No Docker call is needed, so this
//! also works on the emergency path of a `Drop`.

use nemesis::Signal;
use nix::sys::signal::{kill, Signal as NixSignal};
use nix::unistd::Pid;

/// The host PIDs of every process in the container with this full id.
pub fn container_pids(container_id: &str) -> Vec<i32> {
    if container_id.len() < 12 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
                .is_ok_and(|cg| cg.contains(container_id))
        })
        .collect();
    pids.sort_unstable();
    pids
}

fn nix_signal(signal: Signal) -> NixSignal {
    match signal {
        Signal::Stop => NixSignal::SIGSTOP,
        Signal::Cont => NixSignal::SIGCONT,
        Signal::Kill => NixSignal::SIGKILL,
    }
}

/// Sends `signal` to each pid; a pid that has exited meanwhile is not an error. Returns how many
/// processes received it, or the first real error.
pub fn signal_all(pids: &[i32], signal: Signal) -> Result<usize, String> {
    let mut sent = 0;
    for &pid in pids {
        match kill(Pid::from_raw(pid), nix_signal(signal)) {
            Ok(()) => sent += 1,
            Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => return Err(format!("kill({pid}, {signal:?}): {e}")),
        }
    }
    Ok(sent)
}

/// The one-letter state of a process (`R`, `S`, `T` stopped, `Z` ...), `None` if it is gone.
pub fn process_state(pid: i32) -> Option<char> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .and_then(|s| s.trim().chars().next())
}

/// The command name of a process, for messages.
pub fn process_name(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The processes of a container that are stopped (state `T`), as `(pid, name)`.
pub fn stopped_in(container_id: &str) -> Vec<(i32, String)> {
    container_pids(container_id)
        .into_iter()
        .filter(|&pid| process_state(pid) == Some('T'))
        .map(|pid| (pid, process_name(pid)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_and_continue_a_real_process_and_read_its_state() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = child.id() as i32;
        assert_eq!(signal_all(&[pid], Signal::Stop), Ok(1));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(process_state(pid), Some('T'));
        assert_eq!(signal_all(&[pid], Signal::Cont), Ok(1));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_ne!(process_state(pid), Some('T'));
        assert_eq!(process_name(pid), "sleep");
        signal_all(&[pid], Signal::Kill).expect("kill");
        child.wait().expect("reaped");
        assert_eq!(
            signal_all(&[pid], Signal::Cont),
            Ok(0),
            "a gone pid is not an error"
        );
        assert!(container_pids("short").is_empty());
    }
}
