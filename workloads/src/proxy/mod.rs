//! The link proxy for slow and lossy networks (this kernel has no `tc netem`): a userspace TCP
//! relay on the run's network between each worker and each lock-service node. A worker's
//! endpoints point at its own routes, so a fault can slow or break exactly the links of one
//! worker. Shaping acts per chunk relayed, in both directions (or, for `slow-reply`, only on what
//! the lock service sends back): a delay (fixed + jitter) before a chunk is passed on, and a
//! loss probability with which a connection is reset instead; or, for the `cut-*-reply` faults,
//! the next reply closes its connection instead of passing, once (with `cut_reply_to`, the next
//! reply to that command, where `frames` can read the protocol).
//! Control is one JSON object per line on a TCP port (`{"tag":"worker-2","delay_ms":200,
//! "jitter_ms":50,"loss":0.0}`, `{"heal":true}`), answered `ok` or an error line.
//!
//! Only runs whose plan has a network fault start it: the default test does not pay for it.

pub mod frames;
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
                    if let Err(e) = relay(client, &route, &shapings).await {
                        // The run keeps the proxy's stderr: what each fault did to a link.
                        eprintln!("{}>{}: {e}", route.worker, route.node);
                    }
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
                    Ok(said) if said.is_empty() => "ok\n".to_string(),
                    Ok(said) => format!("ok {said}\n"),
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
    let frames = std::sync::Mutex::new(frames::Frames::new());
    tokio::select! {
        r = pump(cr, uw, route, shapings, &frames, Way::Request) => r,
        r = pump(ur, cw, route, shapings, &frames, Way::Reply) => r,
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
    frames: &std::sync::Mutex<frames::Frames>,
    way: Way,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let s = shapings.for_route(route);
        if let Some(at) = cut_at(&buf[..n], &s, frames, way) {
            if shapings.take_cut(route) {
                // The request this answers has landed; its connection dies before the answer
                // (the replies before it in this chunk pass).
                to.write_all(&buf[..at]).await?;
                return Err(std::io::Error::other("reply cut by a cut-reply fault"));
            }
        }
        if (s.replies_only || s.cut_next_reply) && way == Way::Request {
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

/// Where in `chunk` a cut armed by `s` strikes, reading the connection's frames as they pass:
/// at the reply to the named command where the protocol can be read and one begins here, else
/// (no command named, or a protocol not read) at the chunk's start, the next reply.
fn cut_at(
    chunk: &[u8],
    s: &Shaping,
    frames: &std::sync::Mutex<frames::Frames>,
    way: Way,
) -> Option<usize> {
    let mut f = frames.lock().unwrap_or_else(|p| p.into_inner());
    if way == Way::Request {
        f.request(chunk);
        return None;
    }
    let named = s.cut_reply_to.as_deref().filter(|_| s.cut_next_reply);
    let found = f.reply_to(chunk, named);
    match (s.cut_next_reply, named) {
        (false, _) => None,
        (true, Some(_)) if f.readable() => found,
        (true, _) => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn free_port() -> u16 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    }

    /// An upstream on loopback that reports every request it receives and echoes it back.
    async fn echo() -> (u16, mpsc::UnboundedReceiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = conn.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let _ = tx.send(String::from_utf8_lossy(&buf[..n]).to_string());
                        if conn.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        (port, rx)
    }

    async fn ask(port: u16, request: &str) -> String {
        let mut conn = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        conn.write_all(request.as_bytes()).await.expect("write");
        let mut buf = vec![0u8; 64];
        let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
            .await
            .expect("an answer or a closed connection in time")
            .unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).to_string()
    }

    #[tokio::test]
    async fn a_cut_reply_lets_the_request_land_closes_its_connection_and_is_spent_once() {
        let (upstream, mut landed) = echo().await;
        let (listen, control) = (free_port(), free_port());
        let routes = parse_routes(&format!(
            "worker-1>n1=127.0.0.1:{listen}->127.0.0.1:{upstream}"
        ))
        .expect("route");
        let control_addr = format!("127.0.0.1:{control}");
        tokio::spawn(async move { serve(routes, &control_addr).await });
        let mut ctl = loop {
            match TcpStream::connect(("127.0.0.1", control)).await {
                Ok(c) => break BufReader::new(c),
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        };
        ctl.get_mut()
            .write_all(b"{\"tag\":\"worker-1\",\"cut_next_reply\":true}\n")
            .await
            .expect("control");
        let mut ok = String::new();
        ctl.read_line(&mut ok).await.expect("answer");
        assert_eq!(ok, "ok\n");
        assert_eq!(ask(listen, "acquire").await, "", "the reply was cut");
        assert_eq!(
            landed.recv().await.as_deref(),
            Some("acquire"),
            "the request landed"
        );
        assert_eq!(ask(listen, "retry").await, "retry", "the cut was spent");
    }
}
