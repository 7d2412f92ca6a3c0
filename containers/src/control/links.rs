//! The control side of the run's link proxy (`fencecheck proxy`, `workloads::proxy`): a link
//! fault sends one JSON line to the proxy's control port, published on 127.0.0.1, and waits for
//! its `ok`.

use nemesis::LinkShaping;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The proxy's control port as the host reaches it (`127.0.0.1:<published port>`).
#[derive(Debug, Clone)]
pub struct LinkProxy {
    pub control: String,
    /// The command whose next reply a cut strikes (the test's `cut_reply_to`); `None`: the
    /// next reply.
    pub cut_reply_to: Option<String>,
}

impl LinkProxy {
    /// Shapes every link with `tag` at one end (`None`: back to a plain relay).
    pub async fn shape(&self, tag: &str, shaping: Option<LinkShaping>) -> Result<(), String> {
        let s = shaping.unwrap_or_default();
        let line = serde_json::json!({
            "tag": tag,
            "delay_ms": s.delay_ms,
            "jitter_ms": s.jitter_ms,
            "loss": s.loss,
            "replies_only": s.replies_only,
            "cut_next_reply": s.cut_next_reply,
            "cut_reply_to": self.cut_reply_to.as_ref().filter(|_| s.cut_next_reply),
        });
        self.send(&line.to_string()).await.map(drop)
    }

    /// Whether the cut last armed on `tag`'s links was spent on a reply (`false`: still armed,
    /// or none armed).
    pub async fn cut_spent(&self, tag: &str) -> Result<bool, String> {
        let line = serde_json::json!({ "tag": tag, "cut": "?" });
        Ok(self.send(&line.to_string()).await? == "spent")
    }

    /// Every link back to a plain relay.
    pub async fn heal(&self) -> Result<(), String> {
        self.send(r#"{"heal":true}"#).await.map(drop)
    }

    /// One control line; what the proxy said after its `ok`.
    async fn send(&self, line: &str) -> Result<String, String> {
        let what = |e: std::io::Error| format!("link proxy at {}: {e}", self.control);
        let mut conn = tokio::net::TcpStream::connect(&self.control)
            .await
            .map_err(what)?;
        conn.write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(what)?;
        let mut answer = String::new();
        BufReader::new(conn)
            .read_line(&mut answer)
            .await
            .map_err(what)?;
        match answer.trim().strip_prefix("ok") {
            Some(said) => Ok(said.trim().to_string()),
            None => Err(format!("link proxy at {}: {}", self.control, answer.trim())),
        }
    }
}
