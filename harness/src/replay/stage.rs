//! How a replay names its workers: one container per scenario worker, named after it
//! (`worker-a` serves the owner `A`), so a reader of the history and of `docker ps` can tell A
//! from B. The containers themselves are started by the run pipeline's
//! `run::deploy::start_named_workers`.

/// The container short name of scenario worker `name` (`A` -> `worker-a`).
pub fn container_of(name: &str) -> String {
    format!("worker-{}", containers::docker::docker_safe(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_named_after_the_scenario() {
        assert_eq!(container_of("A"), "worker-a");
        assert_eq!(container_of("client 2"), "worker-client-2");
    }
}
