// Token: INCR of "<lock>:fence" right after SET NX succeeds (the classic pattern): a Redis
// counter that grows with every acquisition.
//! An example fencecheck client adapter (protocol 1) in Rust: your own Redis lock on the raw
//! `redis` crate, the same lock as docs/example-adapter/my_lock.py.
//!
//! Acquire: SET <lock> <random value> NX PX <ttl>, then INCR <lock>:fence for the fence token.
//! Release: a Lua compare-and-delete of the exact value. Requests on stdin, replies on stdout.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant, SystemTime};

const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                       return redis.call('del', KEYS[1]) else return 0 end";

struct Lock {
    conn: redis::Connection,
    lock: String,
    ttl_ms: u64,
    timeout: Duration,
    value: String,
    count: u64,
}

fn init(req: &Value) -> redis::RedisResult<Lock> {
    let endpoint = req["endpoints"][0].as_str().unwrap_or_default();
    let client = redis::Client::open(format!("redis://{endpoint}"))?;
    let mut conn = client.get_connection_with_timeout(Duration::from_secs(5))?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    redis::cmd("PING").query::<String>(&mut conn)?;
    Ok(Lock {
        conn,
        lock: req["lock"].as_str().unwrap_or_default().to_string(),
        ttl_ms: req["ttl_ms"].as_u64().unwrap_or(2000),
        timeout: Duration::from_millis(req["acquire_timeout_ms"].as_u64().unwrap_or(10_000)),
        value: String::new(),
        count: 0,
    })
}

impl Lock {
    fn acquire(&mut self, reply: &mut Value) -> redis::RedisResult<()> {
        let deadline = Instant::now() + self.timeout;
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        self.count += 1;
        self.value = format!("{}-{nanos:x}-{}", std::process::id(), self.count);
        loop {
            let set: Option<String> = redis::cmd("SET")
                .arg(&self.lock)
                .arg(&self.value)
                .arg("NX")
                .arg("PX")
                .arg(self.ttl_ms)
                .query(&mut self.conn)?;
            if set.is_some() {
                let token: u64 = redis::cmd("INCR")
                    .arg(format!("{}:fence", self.lock))
                    .query(&mut self.conn)?;
                reply["lease"] = json!(self.value);
                reply["token"] = json!(token);
                return Ok(());
            }
            if Instant::now() >= deadline {
                reply["type"] = json!("fail");
                reply["error"] = json!("lock held by another client");
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn release(&mut self, reply: &mut Value) -> redis::RedisResult<()> {
        let deleted: u64 = redis::cmd("EVAL")
            .arg(RELEASE)
            .arg(1)
            .arg(&self.lock)
            .arg(&self.value)
            .query(&mut self.conn)?;
        if deleted != 1 {
            reply["type"] = json!("fail");
            reply["reason"] = json!("not-owner");
            reply["error"] = json!("the key holds another value or none");
        }
        Ok(())
    }
}

fn main() {
    let mut lock: Option<Lock> = None;
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let req: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let mut reply = json!({"id": req["id"], "type": "ok"});
        let outcome = match (req["op"].as_str(), lock.as_mut()) {
            (Some("init"), _) => init(&req).map(|l| {
                lock = Some(l);
                reply["library"] = json!("my-lock (redis crate)");
                reply["version"] = json!(env!("CARGO_PKG_VERSION"));
                reply["token"] = json!("INCR <lock>:fence after SET NX");
                reply["capabilities"] = json!(["release"]);
            }),
            (Some("acquire"), Some(l)) => l.acquire(&mut reply),
            (Some("release"), Some(l)) => l.release(&mut reply),
            _ => {
                reply["type"] = json!("fail");
                reply["error"] = json!("unsupported op, or no init yet");
                Ok(())
            }
        };
        // Connection errors and timeouts: the outcome is unknown.
        if let Err(e) = outcome {
            reply["type"] = json!("info");
            reply["error"] = json!(e.to_string());
        }
        let mut out = stdout.lock();
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}
