//! What a person watching a run sees: the phase, elapsed / limit, operations recorded so far
//! and the faults in force. With `--quiet` (or no terminal) it prints one line per phase instead,
//! which is what a CI log wants.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Progress display of one run.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    phase_started: Instant,
    phase: String,
    /// Wall time per finished phase, for the phase table at the end.
    pub phases: Vec<(String, Duration)>,
}

impl Progress {
    pub fn new(quiet: bool, limit: Duration) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(limit.as_millis() as u64);
            bar.set_style(
                ProgressStyle::with_template("{prefix:>10} [{bar:30}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Self {
            bar,
            started: Instant::now(),
            phase_started: Instant::now(),
            phase: String::new(),
            phases: Vec::new(),
        }
    }

    /// Ends the current phase (recording its duration) and starts `phase`.
    pub fn phase(&mut self, phase: &str) {
        self.finish_phase();
        self.phase = phase.to_string();
        self.phase_started = Instant::now();
        match &self.bar {
            Some(bar) => {
                bar.set_prefix(phase.to_string());
                bar.set_message(String::new());
            }
            None => eprintln!("[{:>6.1}s] {phase}", self.started.elapsed().as_secs_f64()),
        }
    }

    fn finish_phase(&mut self) {
        if !self.phase.is_empty() {
            self.phases
                .push((self.phase.clone(), self.phase_started.elapsed()));
            self.phase.clear();
        }
    }

    /// Updates the workload line: elapsed of the limit, operations so far, current faults.
    pub fn workload(&self, elapsed: Duration, limit: Duration, ops: u64, faults: &[String]) {
        let faults = if faults.is_empty() {
            "-".to_string()
        } else {
            faults.join(", ")
        };
        let msg = format!(
            "{:.0}/{:.0}s  ops {ops}  faults {faults}",
            elapsed.as_secs_f64(),
            limit.as_secs_f64()
        );
        if let Some(bar) = &self.bar {
            bar.set_position(elapsed.as_millis().min(limit.as_millis()) as u64);
            bar.set_message(msg);
        }
    }

    /// Prints a line above the bar (or plainly).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Ends the display and returns the phase table.
    pub fn finish(&mut self) -> String {
        self.finish_phase();
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        let mut out = String::from("phase          wall\n");
        for (name, d) in &self.phases {
            out.push_str(&format!("{name:<12} {:>7.1}s\n", d.as_secs_f64()));
        }
        out.push_str(&format!(
            "{:<12} {:>7.1}s\n",
            "total",
            self.started.elapsed().as_secs_f64()
        ));
        out
    }
}
