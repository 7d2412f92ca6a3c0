//! "Is the server listening yet?" answered from the host without sending a packet:
//! `/proc/<host pid>/net/tcp{,6}` lists the sockets of that process's network namespace, i.e. the
//! container's. Probing the published port instead would lie: docker-proxy accepts on it even
//! when nothing listens inside.

/// True when a socket of the network namespace of `host_pid` listens on TCP `port`.
pub(crate) fn is_listening(host_pid: u32, port: u16) -> bool {
    ["tcp", "tcp6"].iter().any(|file| {
        std::fs::read_to_string(format!("/proc/{host_pid}/net/{file}"))
            .map(|table| table_has_listener(&table, port))
            .unwrap_or(false)
    })
}

/// Parses a `/proc/net/tcp` table: `sl local_address rem_address st ...`, addresses as
/// `HEXIP:HEXPORT`, state `0A` = LISTEN.
fn table_has_listener(table: &str, port: u16) -> bool {
    table.lines().skip(1).any(|line| {
        let mut fields = line.split_whitespace();
        let local = fields.nth(1);
        let state = fields.nth(1);
        match (local.and_then(|l| l.rsplit(':').next()), state) {
            (Some(hex_port), Some("0A")) => u16::from_str_radix(hex_port, 16) == Ok(port),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:0CEA 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1
";

    #[test]
    fn finds_a_listening_port_and_ignores_connected_ones() {
        assert!(table_has_listener(TABLE, 0x18EB)); // 6379
        assert!(!table_has_listener(TABLE, 0x0CEA)); // an established socket's local port
        assert!(!table_has_listener(TABLE, 2379));
    }

    #[test]
    fn our_own_process_is_not_listening_on_a_random_port() {
        assert!(!is_listening(std::process::id(), 1));
    }
}
