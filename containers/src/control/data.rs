//! A server's data on the host: a run whose servers persist (Redis with `persistence:`), or
//! whose plan restarts one without its data, binds each server's data directory to
//! `<run dir>/data/<node>/`, so that `restart-empty-*` can empty it while the server is dead (a
//! lost disk, or a machine replaced), and so that what the server wrote stays with the run. A
//! Redis server without persistence keeps nothing there, and emptying it changes nothing: it
//! restarts empty anyway.

use crate::docker::ContainerSpec;
use std::path::Path;

/// The run directory's folder of server data.
pub const DIR: &str = "data";

/// Binds `spec`'s data directory, if it has one, to `root/<its name>` (created).
pub fn bind(spec: &mut ContainerSpec, root: &Path) -> std::io::Result<()> {
    let Some(inside) = spec.data_dir else {
        return Ok(());
    };
    let host = root.join(&spec.name);
    std::fs::create_dir_all(&host)?;
    spec.binds.push((host, inside.to_string(), false));
    Ok(())
}

/// Removes everything in `target`'s data directory under `root` (nothing when it has none).
pub fn empty(root: &Path, target: &str) -> std::io::Result<()> {
    let dir = root.join(target);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emptying_removes_what_a_server_wrote_and_keeps_the_directory() {
        let root = std::env::temp_dir().join(format!("fc-data-{}", std::process::id()));
        let mut spec = ContainerSpec::new("redis-1", ["redis-server"]);
        spec.data_dir = Some("/var/lib/redis");
        bind(&mut spec, &root).expect("bind");
        let dir = root.join("redis-1");
        assert_eq!(
            spec.binds,
            [(dir.clone(), "/var/lib/redis".to_string(), false)]
        );
        std::fs::create_dir_all(dir.join("appendonlydir")).expect("mkdir");
        std::fs::write(dir.join("appendonlydir/a.aof"), "SET k v").expect("write");
        std::fs::write(dir.join("dump.rdb"), "x").expect("write");
        empty(&root, "redis-1").expect("empty");
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 0);
        empty(&root, "sentinel-1").expect("a node without data has nothing to empty");
        let _ = std::fs::remove_dir_all(&root);
    }
}
