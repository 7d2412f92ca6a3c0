//! Partition rules inside a container's network namespace. The host enters the namespace with
//! `nsenter -t <host pid> -n iptables ...` in a child process (the container needs no capability,
//! and no Tokio thread ever calls setns). All rules live in one chain, `FENCECHECK`, jumped to
//! from INPUT and OUTPUT, so a heal removes exactly what fencecheck added and nothing else.

use std::process::Command;

/// The chain that holds every fencecheck rule in a namespace.
pub const CHAIN: &str = "FENCECHECK";

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// The iptables invocations that make a namespace drop all traffic from and to `peers` (IPs):
/// create the chain, hook it into INPUT and OUTPUT, one DROP per peer and direction.
pub fn install_commands(peers: &[String]) -> Vec<Vec<String>> {
    let mut cmds = vec![
        args(&["-N", CHAIN]),
        args(&["-I", "INPUT", "-j", CHAIN]),
        args(&["-I", "OUTPUT", "-j", CHAIN]),
    ];
    for ip in peers {
        cmds.push(args(&["-A", CHAIN, "-s", ip, "-j", "DROP"]));
        cmds.push(args(&["-A", CHAIN, "-d", ip, "-j", "DROP"]));
    }
    cmds
}

/// The iptables invocations of a one-way cut: the namespace drops what arrives from `peers`
/// (INPUT only); what it sends them still leaves and arrives.
pub fn install_inbound_commands(peers: &[String]) -> Vec<Vec<String>> {
    let mut cmds = vec![args(&["-N", CHAIN]), args(&["-I", "INPUT", "-j", CHAIN])];
    for ip in peers {
        cmds.push(args(&["-A", CHAIN, "-s", ip, "-j", "DROP"]));
    }
    cmds
}

/// The invocations that remove everything [`install_commands`] added. Each may fail harmlessly
/// when there is nothing to remove.
pub fn flush_commands() -> Vec<Vec<String>> {
    vec![
        args(&["-D", "INPUT", "-j", CHAIN]),
        args(&["-D", "OUTPUT", "-j", CHAIN]),
        args(&["-F", CHAIN]),
        args(&["-X", CHAIN]),
    ]
}

/// Runs `iptables -w <args>` in the network namespace of `host_pid`; returns stdout, or stderr
/// as the error. Blocking: call from `spawn_blocking` (or from a `Drop`).
pub fn run(host_pid: u32, iptables_args: &[String]) -> Result<String, String> {
    let out = Command::new("nsenter")
        .args(["-t", &host_pid.to_string(), "-n", "iptables", "-w"])
        .args(iptables_args)
        .output()
        .map_err(|e| format!("nsenter: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "iptables {}: {}",
            iptables_args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Installs a fresh set of drops in one namespace (removing any previous fencecheck rules).
pub fn install(host_pid: u32, peers: &[String]) -> Result<(), String> {
    flush(host_pid);
    install_commands(peers)
        .iter()
        .try_for_each(|c| run(host_pid, c).map(|_| ()))
}

/// Installs a fresh one-way cut in one namespace (see [`install_inbound_commands`]).
pub fn install_inbound(host_pid: u32, peers: &[String]) -> Result<(), String> {
    flush(host_pid);
    install_inbound_commands(peers)
        .iter()
        .try_for_each(|c| run(host_pid, c).map(|_| ()))
}

/// Removes every fencecheck rule of one namespace. Errors mean "nothing to remove".
pub fn flush(host_pid: u32) {
    for c in flush_commands() {
        let _ = run(host_pid, &c);
    }
}

/// Every rule of the namespace (`iptables -S`) that is not a default policy line: after a heal
/// this must be empty, as the node image installs no rules of its own.
pub fn rules(host_pid: u32) -> Result<Vec<String>, String> {
    let text = run(host_pid, &args(&["-S"]))?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with("-P "))
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_drops_both_directions_in_its_own_chain() {
        let cmds = install_commands(&["10.0.0.3".into()]);
        let lines: Vec<String> = cmds.iter().map(|c| c.join(" ")).collect();
        assert_eq!(
            lines,
            [
                "-N FENCECHECK",
                "-I INPUT -j FENCECHECK",
                "-I OUTPUT -j FENCECHECK",
                "-A FENCECHECK -s 10.0.0.3 -j DROP",
                "-A FENCECHECK -d 10.0.0.3 -j DROP",
            ]
        );
    }

    #[test]
    fn flush_unhooks_before_deleting_the_chain() {
        let lines: Vec<String> = flush_commands().iter().map(|c| c.join(" ")).collect();
        let delete = lines
            .iter()
            .position(|l| l == "-X FENCECHECK")
            .expect("deletes");
        assert!(lines[..delete].contains(&"-D INPUT -j FENCECHECK".to_string()));
        assert!(lines[..delete].contains(&"-D OUTPUT -j FENCECHECK".to_string()));
    }
}
