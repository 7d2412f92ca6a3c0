//! Container output: streamed line by line to `<run dir>/nodes/<container>.log` for the whole life
//! of the container (restarts included, without repeating lines), searched for a readiness line,
//! and quoted in error messages.
//!
//! Docker keeps a container's log across restarts, so a stream opened after a restart would repeat
//! old lines; every line therefore carries the engine's timestamp and a [`Cursor`] (the newest
//! timestamp already handled) skips what was seen.

use bollard::query_parameters::LogsOptions;
use bollard::Docker;
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::AsyncWriteExt;

/// The newest log timestamp written so far (normalized to fixed width, so strings compare).
pub(crate) type Cursor = Arc<Mutex<Option<String>>>;

/// Docker's RFC 3339 timestamps drop trailing zeros of the fraction; pad it to 9 digits so two
/// timestamps compare as strings.
fn normalize(ts: &str) -> String {
    let body = ts.trim_end_matches('Z');
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    format!("{whole}.{fraction:0<9}Z")
}

/// Splits `"<timestamp> <text>"` as Docker sends it with `timestamps=true`.
fn split_line(raw: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(raw);
    match text.split_once(' ') {
        Some((ts, rest)) => (normalize(ts), rest.to_string()),
        None => (String::new(), text.to_string()),
    }
}

fn options(follow: bool, since: i32) -> LogsOptions {
    LogsOptions {
        follow,
        stdout: true,
        stderr: true,
        since,
        timestamps: true,
        ..Default::default()
    }
}

fn unix_now() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    i32::try_from(secs).unwrap_or(0)
}

/// Streams the container's output into `path` (appending) until the container stops. Lines at
/// or before `cursor` are skipped and the cursor advances, so call it again after a restart.
pub(crate) fn spawn_writer(docker: Docker, id: String, path: PathBuf, cursor: Cursor) {
    let since = if cursor.lock().map(|c| c.is_some()).unwrap_or(false) {
        unix_now() - 2
    } else {
        0
    };
    tokio::spawn(async move {
        let Ok(mut file) = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await
        else {
            return;
        };
        let mut stream = docker.logs(&id, Some(options(true, since)));
        while let Some(Ok(out)) = stream.next().await {
            let (ts, text) = split_line(&out.into_bytes());
            {
                let Ok(mut seen) = cursor.lock() else { return };
                if seen.as_deref().is_some_and(|s| ts.as_str() <= s) {
                    continue;
                }
                *seen = Some(ts);
            }
            if file.write_all(text.as_bytes()).await.is_err() {
                return;
            }
            let _ = file.flush().await;
        }
    });
}

/// Waits until `needle` appears in the output written after `after` (a normalized timestamp;
/// `None` = since the container was created). Returns false on timeout or when the container's
/// output ends (it stopped) without the line.
pub(crate) async fn wait_for_line(
    docker: &Docker,
    id: &str,
    needle: &str,
    after: Option<&str>,
    timeout: Duration,
) -> bool {
    let since = if after.is_some() { unix_now() - 2 } else { 0 };
    let deadline = Instant::now() + timeout;
    let search = async {
        let mut stream = docker.logs(id, Some(options(true, since)));
        while let Some(Ok(out)) = stream.next().await {
            let (ts, text) = split_line(&out.into_bytes());
            if after.is_some_and(|a| ts.as_str() <= a) {
                continue;
            }
            if text.contains(needle) {
                return true;
            }
        }
        false
    };
    tokio::time::timeout_at(deadline.into(), search)
        .await
        .unwrap_or(false)
}

/// The newest log timestamp of a container right now (normalized), to wait for lines after it.
pub(crate) async fn newest_timestamp(docker: &Docker, id: &str) -> Option<String> {
    let mut options = options(false, 0);
    options.tail = "1".to_string();
    let mut stream = docker.logs(id, Some(options));
    let mut newest = None;
    while let Some(Ok(out)) = stream.next().await {
        newest = Some(split_line(&out.into_bytes()).0);
    }
    newest
}

/// The last `n` lines of a container's output, for error messages.
pub async fn tail(docker: &Docker, id: &str, n: usize) -> String {
    let mut options = options(false, 0);
    options.tail = n.to_string();
    let mut stream = docker.logs(id, Some(options));
    let mut lines = String::new();
    while let Some(Ok(out)) = stream.next().await {
        lines.push_str("  ");
        lines.push_str(&split_line(&out.into_bytes()).1);
    }
    if lines.is_empty() {
        "  (no output)".to_string()
    } else {
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_compare_as_strings_after_normalizing() {
        let a = normalize("2026-11-29T09:04:41.5Z");
        let b = normalize("2026-11-29T09:04:41.123456789Z");
        let c = normalize("2026-11-29T09:04:41Z");
        assert!(c < b && b < a, "{c} {b} {a}");
    }

    #[test]
    fn a_docker_line_splits_into_timestamp_and_text() {
        let (ts, text) = split_line(b"2026-11-29T09:04:41.1Z ready to serve\n");
        assert_eq!(ts, "2026-11-29T09:04:41.100000000Z");
        assert_eq!(text, "ready to serve\n");
    }
}
