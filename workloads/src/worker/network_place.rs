//! The [`Place`] of a worker in its own container (`fencecheck worker`): the lock service, the
//! resource and the counter store are reached over the run's network at the launch's
//! addresses, and an adapter is a child program.

use super::launch::{AdapterLaunch, Place, WorkerLaunch};
use crate::adapter::{Launch, Program};
use crate::client::Client;
use crate::counter_guard::Counter;
use crate::fenced_write::{MemoryMode, MemoryResource, ResourceWriter};
use crate::recipes::Target;
use futures::future::BoxFuture;
use results::RunClock;
use std::sync::Arc;
use std::time::Duration;

/// How long the worker waits for the resource server to answer (it may start just after).
const RESOURCE_PATIENCE: Duration = Duration::from_secs(30);

/// A worker reaching everything over the network.
#[derive(Debug, Clone, Copy)]
pub struct NetworkPlace {
    /// The run's clock (a private register without a resource stamps with it).
    pub clock: RunClock,
}

impl Place for NetworkPlace {
    fn recipe_client<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Arc<dyn Client>, String>> {
        Box::pin(async move {
            let target = Target {
                endpoints: launch.endpoints.clone(),
                sentinel_master: launch.sentinel_master.clone(),
            };
            crate::recipes::connect(&target, &launch.name, launch.config.clone()).await
        })
    }

    fn adapter(&self, _launch: &WorkerLaunch, adapter: &AdapterLaunch) -> Box<dyn Launch> {
        Box::new(Program {
            command: adapter.command.clone(),
            dir: adapter.dir.clone(),
        })
    }

    fn resource<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Box<dyn ResourceWriter>, String>> {
        Box::pin(async move {
            let Some(addr) = &launch.resource else {
                // Useful for benchmarks and smoke tests only: nobody else sees this register.
                return Ok(
                    Box::new(MemoryResource::new(MemoryMode::Strict, self.clock))
                        as Box<dyn ResourceWriter>,
                );
            };
            let deadline = tokio::time::Instant::now() + RESOURCE_PATIENCE;
            loop {
                match crate::resource::ResourceClient::connect(addr).await {
                    Ok(c) => return Ok(Box::new(c) as Box<dyn ResourceWriter>),
                    Err(e) if tokio::time::Instant::now() >= deadline => return Err(e.to_string()),
                    Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                }
            }
        })
    }

    fn counter<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Option<Arc<dyn Counter>>, String>> {
        Box::pin(async move {
            let Some(target) = &launch.counter_store else {
                return Ok(None);
            };
            crate::counter_guard::open(target, &launch.endpoints)
                .await
                .map(Some)
                .map_err(|e| e.to_string())
        })
    }
}
