//! One running adapter: the child process (or, in tests, anything that speaks the protocol over
//! a pair of streams), a reader task that hands replies to the caller and events to the
//! [`LeaseWatch`], and how a call ends when the adapter misbehaves: a deadline passed, a line
//! that is not protocol, the adapter gone. The harness stamps every time; the adapter's clock
//! is never read.

use super::wire::{parse_line, Line, Reply};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// A started adapter's streams (and its process, when it is one).
pub struct Launched {
    pub input: Box<dyn AsyncWrite + Send + Unpin>,
    pub output: Box<dyn AsyncRead + Send + Unpin>,
    /// Killed when the link is dropped.
    pub child: Option<tokio::process::Child>,
}

/// How to start an adapter, again after a crash or a kill.
pub trait Launch: Send + Sync {
    fn launch(&self) -> std::io::Result<Launched>;
}

/// An adapter that is a program: `sh -c <command>` in `dir`, its stderr the worker's own
/// (the worker's node log). It runs in its own process group, so killing it kills what it
/// started too (a shell's child, a JVM's helpers).
#[derive(Debug, Clone)]
pub struct Program {
    pub command: String,
    pub dir: Option<PathBuf>,
}

impl Launch for Program {
    fn launch(&self) -> std::io::Result<Launched> {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn()?;
        let input = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin"))?;
        let output = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        Ok(Launched {
            input: Box::new(input),
            output: Box::new(output),
            child: Some(child),
        })
    }
}

/// The lease events the library reported: how many `lost` so far, and the last one's detail.
#[derive(Debug, Default)]
pub struct LeaseWatch {
    lost: AtomicU64,
    detail: Mutex<Option<String>>,
}

impl LeaseWatch {
    pub fn lost_count(&self) -> u64 {
        self.lost.load(Ordering::SeqCst)
    }

    pub fn last_detail(&self) -> Option<String> {
        self.detail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// How a call ended when it got no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// No reply within the deadline (indeterminate: the library may still be at it).
    Timeout(Duration),
    /// A line that is not protocol, or a reply to another request.
    Protocol(String),
    /// The adapter went away.
    Exited(String),
}

/// The worker's end of one running adapter.
pub struct Link {
    input: Box<dyn AsyncWrite + Send + Unpin>,
    replies: mpsc::UnboundedReceiver<Result<Reply, Broken>>,
    child: Option<tokio::process::Child>,
    reader: tokio::task::JoinHandle<()>,
    next_id: u64,
    /// The request sent and not yet answered: set only while a call is in flight, so still set
    /// when a call was cancelled (its caller gave up), and its late reply may yet arrive.
    awaiting: Option<u64>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(child) = &mut self.child {
            if let Some(pid) = child.id() {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.start_kill();
        }
    }
}

impl Link {
    /// Starts reading a launched adapter; `name` names it in stderr lines about its events.
    pub fn start(launched: Launched, name: &str, watch: Arc<LeaseWatch>) -> Link {
        let (tx, replies) = mpsc::unbounded_channel();
        let name = name.to_string();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(launched.output).lines();
            let mut n = 0u64;
            loop {
                let line = match lines.next_line().await {
                    Ok(Some(l)) => l,
                    Ok(None) => {
                        return drop(tx.send(Err(Broken::Exited("closed its stdout".into()))))
                    }
                    Err(e) => return drop(tx.send(Err(Broken::Exited(format!("stdout: {e}"))))),
                };
                n += 1;
                if line.trim().is_empty() {
                    continue;
                }
                match parse_line(&line) {
                    Ok(Line::Reply(r)) => drop(tx.send(Ok(r))),
                    Ok(Line::Event(e)) => {
                        let detail = e.detail.clone().unwrap_or_default();
                        eprintln!("adapter {name}: event {}: {detail}", e.event);
                        if e.event == "lost" {
                            *watch.detail.lock().unwrap_or_else(|p| p.into_inner()) = Some(detail);
                            watch.lost.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Err(why) => drop(tx.send(Err(Broken::Protocol(format!(
                        "line {n} of its output is {why}: {line:?}"
                    ))))),
                }
            }
        });
        Link {
            input: launched.input,
            replies,
            child: launched.child,
            reader,
            next_id: 0,
            awaiting: None,
        }
    }

    /// Whether a call was given up on before its reply came (the caller's own deadline): the
    /// adapter may still answer it, so this link can no longer pair replies with requests.
    pub fn abandoned(&self) -> bool {
        self.awaiting.is_some()
    }

    /// Sends `op` (a JSON object without an `id`) and waits up to `deadline` for its reply.
    pub async fn call(
        &mut self,
        op: serde_json::Value,
        deadline: Duration,
    ) -> Result<Reply, Broken> {
        let result = self.exchange(op, deadline).await;
        self.awaiting = None;
        result
    }

    async fn exchange(
        &mut self,
        mut op: serde_json::Value,
        deadline: Duration,
    ) -> Result<Reply, Broken> {
        let id = self.next_id;
        self.awaiting = Some(id);
        self.next_id += 1;
        op["id"] = serde_json::json!(id);
        let mut line = serde_json::to_vec(&op).map_err(|e| Broken::Protocol(e.to_string()))?;
        line.push(b'\n');
        let sent = async {
            self.input.write_all(&line).await?;
            self.input.flush().await
        };
        if let Err(e) = sent.await {
            return Err(Broken::Exited(format!("stdin: {e}{}", self.status())));
        }
        match tokio::time::timeout(deadline, self.replies.recv()).await {
            Err(_) => Err(Broken::Timeout(deadline)),
            Ok(None) => Err(Broken::Exited(format!("its reader ended{}", self.status()))),
            Ok(Some(Err(Broken::Exited(why)))) => {
                Err(Broken::Exited(format!("{why}{}", self.status())))
            }
            Ok(Some(Err(broken))) => Err(broken),
            Ok(Some(Ok(r))) if r.id != id => Err(Broken::Protocol(format!(
                "answered request {} while request {id} was waiting",
                r.id
            ))),
            Ok(Some(Ok(r))) => Ok(r),
        }
    }

    /// `, exit status N` once the process has ended.
    fn status(&mut self) -> String {
        let Some(child) = &mut self.child else {
            return String::new();
        };
        // It may be ending: give it a moment to be reaped.
        for _ in 0..20 {
            if let Ok(Some(status)) = child.try_wait() {
                return format!(", {status}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        String::new()
    }
}
