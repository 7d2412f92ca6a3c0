//! The link proxy for slow and lossy networks (this kernel has no `tc netem`): a userspace TCP
//! relay on the run's network between each worker and each lock-service node. A worker's
//! endpoints point at its own routes, so a fault can slow or break exactly the links of one
//! worker. Shaping acts per chunk relayed, in both directions (or, for `slow-reply`, only on what
//! the lock service sends back): a delay (fixed + jitter) before a chunk is passed on, and a
//! loss probability with which a connection is reset instead.
//! Control is one JSON object per line on a TCP port (`{"tag":"worker-2","delay_ms":200,
//! "jitter_ms":50,"loss":0.0}`, `{"heal":true}`), answered `ok` or an error line.
//!
//! Only runs whose plan has a network fault start it: the default test does not pay for it.

pub mod route;
pub mod shaping;

pub use route::{parse_routes, Route};
pub use shaping::{Shaping, Shapings};

use rand::Rng;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Serves every route and the control port until the process ends.
pub async fn serve(routes: Vec<Route>, control: &str) -> std::io::Result<()> {
    let shapings = Arc::new(Shapings::default());
    for route in routes {
        let listener = TcpListener::bind(&route.listen).await?;
        let shapings = shapings.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let (route, shapings) = (route.clone(), shapings.clone());
                tokio::spawn(async move {
                    let _ = relay(client, &route, &shapings).await;
                });
            }
        });
    }
    let listener = TcpListener::bind(control).await?;
    loop {
        let (conn, _) = listener.accept().await?;
        let shapings = shapings.clone();
        tokio::spawn(async move {
            let (read, mut write) = conn.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let answer = match shapings.apply(&line) {
                    Ok(()) => "ok\n".to_string(),
                    Err(e) => format!("error: {e}\n"),
                };
                if write.write_all(answer.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
    }
}

async fn relay(client: TcpStream, route: &Route, shapings: &Shapings) -> std::io::Result<()> {
    let upstream = TcpStream::connect(&route.upstream).await?;
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    tokio::select! {
        r = pump(cr, uw, route, shapings, Way::Request) => r,
        r = pump(ur, cw, route, shapings, Way::Reply) => r,
    }
}

/// Which way a pump copies: worker to node, or node to worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Request,
    Reply,
}

/// Copies one direction chunk by chunk, shaping each chunk by the route's current setting.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    route: &Route,
    shapings: &Shapings,
    way: Way,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let s = shapings.for_route(route);
        if s.replies_only && way == Way::Request {
            to.write_all(&buf[..n]).await?;
            continue;
        }
        if s.loss > 0.0 && rand::rng().random_bool(s.loss.min(1.0)) {
            // A lost chunk on TCP is a broken connection: reset both sides.
            return Err(std::io::Error::other("dropped by lossy-network"));
        }
        let delay = s.delay_ms + rand::rng().random_range(0..=s.jitter_ms);
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        to.write_all(&buf[..n]).await?;
    }
}
