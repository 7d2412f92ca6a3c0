//! One relayed link: where the proxy listens, where it forwards, and the tags a fault can
//! target it by (the worker at its client end, the node at its server end).

/// A link `worker-2>etcd-1` listening on `0.0.0.0:7301`, forwarding to `fc-run-etcd-1:2379`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub worker: String,
    pub node: String,
    pub listen: String,
    pub upstream: String,
}

/// `worker-2>etcd-1=0.0.0.0:7301->fc-run-etcd-1:2379,...`.
pub fn parse_routes(text: &str) -> Result<Vec<Route>, String> {
    text.split(',')
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            let bad = || format!("route {r:?}: write worker-1>etcd-1=0.0.0.0:7301->host:2379");
            let (names, addrs) = r.trim().split_once('=').ok_or_else(bad)?;
            let (worker, node) = names.split_once('>').ok_or_else(bad)?;
            let (listen, upstream) = addrs.split_once("->").ok_or_else(bad)?;
            if [worker, node, listen, upstream]
                .iter()
                .any(|s| s.is_empty())
            {
                return Err(bad());
            }
            Ok(Route {
                worker: worker.into(),
                node: node.into(),
                listen: listen.into(),
                upstream: upstream.into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_back_and_bad_ones_are_named() {
        let r = parse_routes("worker-2>etcd-1=0.0.0.0:7301->fc-x-etcd-1:2379").unwrap();
        assert_eq!(r[0].worker, "worker-2");
        assert_eq!(r[0].upstream, "fc-x-etcd-1:2379");
        let e = parse_routes("worker-2=0.0.0.0:1->h:2").unwrap_err();
        assert!(e.contains("worker-2=0.0.0.0:1->h:2"), "{e}");
    }
}
