//! How busy the machine was while a matrix ran: the 1-minute load average sampled every few
//! seconds, with the core count and the number of cells run at once. A run's timing (time to the
//! first anomaly, acquire latency) depends on it, so the table says it.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const EVERY: Duration = Duration::from_secs(5);

/// The machine's load over one matrix run (or one shard of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// The shard this machine ran (`1/2`), none for a whole matrix.
    #[serde(default)]
    pub shard: Option<String>,
    pub cores: usize,
    pub jobs: usize,
    pub wall_secs: f64,
    /// Median and maximum of the 1-minute load average, none when /proc/loadavg is unreadable.
    pub load_median: Option<f64>,
    pub load_max: Option<f64>,
}

impl Load {
    /// `2 cores, 2 cells at once, load 1.9 median / 2.6 max`.
    pub fn text(&self) -> String {
        let load = match (self.load_median, self.load_max) {
            (Some(m), Some(x)) => format!("load average {m:.1} median / {x:.1} max"),
            _ => "load average not readable".into(),
        };
        let shard = match &self.shard {
            Some(s) => format!("shard {s}: "),
            None => String::new(),
        };
        format!(
            "{shard}{} cores, {} cell{} at once, {load}, {:.0} s wall",
            self.cores,
            self.jobs,
            if self.jobs == 1 { "" } else { "s" },
            self.wall_secs
        )
    }
}

/// Samples the load average in a background thread until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<f64>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (s, v) = (stop.clone(), samples.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let (Some(l), Ok(mut v)) = (one_minute(), v.lock()) {
                    v.push(l);
                }
                let mut waited = Duration::ZERO;
                while waited < EVERY && !s.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    waited += Duration::from_millis(200);
                }
            }
        });
        Self {
            stop,
            samples,
            thread: Some(thread),
        }
    }

    pub fn finish(mut self, shard: Option<String>, jobs: usize, wall_secs: f64) -> Load {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut v = self.samples.lock().map(|v| v.clone()).unwrap_or_default();
        v.sort_by(f64::total_cmp);
        Load {
            shard,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            jobs,
            wall_secs,
            load_median: v.get(v.len() / 2).copied(),
            load_max: v.last().copied(),
        }
    }
}

fn one_minute() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
