//! One file per lock recipe, each implementing [`crate::client::Client`] the way its users run
//! it in production; [`connect`] builds the one a worker was started with.

pub mod etcd_keeper;
pub mod etcd_lease;
pub mod etcd_lock;
pub mod memory;
pub mod pg_advisory;
pub mod redis_conn;
pub mod redis_lock;
pub mod redis_lock_del;
pub mod redis_sentinel;
pub mod redlock;
pub mod zk_lock;

pub use memory::{MemoryBug, MemoryClient, MemoryKnobs, MemoryLockService};

use crate::client::Client;
use crate::config::{RecipeConfig, RecipeKind};
use std::sync::Arc;

/// Where a recipe's provider is: `host:port` endpoints (etcd members, ZooKeeper servers, one
/// Redis server, the Redlock masters, the sentinels, or one PostgreSQL server) and the
/// sentinels' master name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub endpoints: Vec<String>,
    pub sentinel_master: String,
}

/// Builds the recipe client `cfg.recipe` for the worker `owner`. The `memory` recipe gets a
/// private in-process service (useful only for a single worker; tests share one service).
pub async fn connect(
    target: &Target,
    owner: &str,
    cfg: RecipeConfig,
) -> Result<Arc<dyn Client>, String> {
    let eps = &target.endpoints;
    let needs_endpoints = cfg.recipe != RecipeKind::Memory;
    if needs_endpoints && eps.is_empty() {
        return Err(format!(
            "recipe {} needs --endpoints host:port,...",
            cfg.recipe
        ));
    }
    let one = || -> Result<&String, String> {
        match eps.as_slice() {
            [e] => Ok(e),
            _ => Err(format!(
                "recipe {} talks to exactly one server, got {} endpoints",
                cfg.recipe,
                eps.len()
            )),
        }
    };
    Ok(match cfg.recipe {
        RecipeKind::EtcdLease => Arc::new(etcd_lease::EtcdLease::connect(eps, owner, cfg).await?),
        RecipeKind::EtcdLock => Arc::new(etcd_lock::EtcdLock::connect(eps, owner, cfg).await?),
        RecipeKind::ZkLock => {
            let zk = zk_lock::ZkLock::new(eps, owner, cfg);
            zk.connect_now().await;
            Arc::new(zk)
        }
        RecipeKind::RedisLock => {
            let conn = redis_conn::RedisConn::direct(one()?, cfg.op_timeout)?;
            Arc::new(redis_lock::RedisLock::new(
                conn,
                owner,
                cfg,
                redis_lock::Release::CompareAndDelete,
            ))
        }
        RecipeKind::RedisLockDel => Arc::new(redis_lock_del::redis_lock_del(one()?, owner, cfg)?),
        RecipeKind::Redlock => Arc::new(redlock::Redlock::connect(eps, owner, cfg)?),
        RecipeKind::RedisSentinel => Arc::new(redis_sentinel::redis_sentinel(
            eps,
            &target.sentinel_master,
            owner,
            cfg,
        )?),
        RecipeKind::PgAdvisory => Arc::new(pg_advisory::PgAdvisory::new(one()?, owner, cfg)?),
        RecipeKind::Memory => {
            Arc::new(MemoryLockService::default().client(owner, cfg.ttl, cfg.acquire_timeout))
        }
    })
}
