//! Ownership as a state machine, not a flag: held → suspect (cannot confirm: renewal failing,
//! session disconnected) → lost (certainly gone, or its validity ran out). [`Ownership`] is the
//! pure machine (time passed in, so tests need no clock); [`Tracker`] drives it with the recipe's
//! renewals, in a background task or inline before each write, and announces `lease-lost` once.
//! When the client's keep-alive is a question rather than a renewal ([`Client::check`]: an
//! adapter with `check` and no `renew`), each question and its answer also go out as a
//! [`CheckNotice`], stamped on the run's clock here, for the history's `f = check` lines.
//! Validity is measured on CLOCK_MONOTONIC from the moment a request was *sent*, so a process
//! that was SIGSTOPped past its ttl sees its hold as lost the instant it runs again. Where the
//! application asks its library before each write ([`Ask::BeforeWrite`]) and the library judges
//! its own hold (a library behind its adapter), the library's answer decides instead: the hold
//! lasts until the library says it is gone, and each answer is recorded, after a thaw too.

use crate::app::Ask;
use crate::client::{within, Belief, Client, Completion, Grant};
use crate::config::{Discipline, OnSuspect, RecipeConfig, Renewal};
use results::RunClock;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Where a hold stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnershipState {
    Held,
    Suspect,
    Lost,
}

/// The pure state machine of one hold.
#[derive(Debug, Clone)]
pub struct Ownership {
    state: OwnershipState,
    valid_until: Instant,
    last_renewal: Instant,
    why_lost: Option<String>,
}

impl Ownership {
    /// A hold confirmed by a request sent at `sent_at`, valid until `valid_until`.
    pub fn new(sent_at: Instant, valid_until: Instant) -> Self {
        Self {
            state: OwnershipState::Held,
            valid_until,
            last_renewal: sent_at,
            why_lost: None,
        }
    }

    /// The state at `now`: a hold whose validity has run out is lost, whatever was last heard.
    pub fn state_at(&mut self, now: Instant) -> OwnershipState {
        if self.state != OwnershipState::Lost && now >= self.valid_until {
            self.lose("validity ran out before a renewal confirmed the hold".into());
        }
        self.state
    }

    /// Applies the outcome of a renewal sent at `sent_at`.
    pub fn observe(&mut self, sent_at: Instant, outcome: &Completion<Duration>) {
        self.last_renewal = sent_at;
        if self.state == OwnershipState::Lost {
            return;
        }
        match outcome {
            Completion::Ok(validity) => {
                self.valid_until = self.valid_until.max(sent_at + *validity);
                self.state = OwnershipState::Held;
            }
            Completion::Info(_) | Completion::Exception(_) => self.state = OwnershipState::Suspect,
            Completion::Fail(why) => self.lose(why.clone()),
        }
    }

    pub fn renewal_due(&self, now: Instant, interval: Duration) -> bool {
        now.duration_since(self.last_renewal) >= interval
    }

    pub fn why_lost(&self) -> Option<&str> {
        self.why_lost.as_deref()
    }

    fn lose(&mut self, why: String) {
        self.state = OwnershipState::Lost;
        self.why_lost = Some(why);
    }
}

/// A worker's announcement that it noticed it lost a hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostNotice {
    pub process: u32,
    pub hold: Grant,
    pub why: String,
}

/// The keep-alive asked the lock client whether it still holds `hold`: when (run clock, ns,
/// stamped before the question left and after the answer came) and what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckNotice {
    pub process: u32,
    pub hold: Grant,
    pub asked: u64,
    pub answered: u64,
    pub answer: Completion<Belief>,
}

/// What the tracker tells the worker's connection, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Lost(LostNotice),
    Checked(CheckNotice),
}

/// Where a tracker's notices go, and the clock its checks are stamped with.
#[derive(Debug, Clone)]
pub struct Notices {
    pub tx: mpsc::UnboundedSender<Notice>,
    pub clock: RunClock,
}

/// Whether a write may go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteGate {
    Go,
    /// Not sent: the reason is recorded as the write's `fail` error.
    Refuse(String),
}

/// How a worker keeps and questions a hold: the client discipline, and whether the application
/// asks its library before each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keeping {
    pub discipline: Discipline,
    pub ask: Ask,
}

impl Keeping {
    /// The discipline alone, never asking (fencecheck's recipes, the default shape).
    pub fn of(discipline: Discipline) -> Self {
        Keeping {
            discipline,
            ask: Ask::Never,
        }
    }
}

struct Shared {
    machine: Ownership,
    announced: bool,
}

/// How long a hold the library judges itself is taken to last on the worker's side: for as
/// long as the run (the library's answers end it).
const LIBRARY_JUDGES: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Drives one hold's [`Ownership`] with renewals and announces its loss once.
pub struct Tracker {
    hold: Grant,
    process: u32,
    client: Arc<dyn Client>,
    cfg: RecipeConfig,
    discipline: Discipline,
    /// The application asks the library before each write, and its answer decides.
    asks: bool,
    shared: Arc<Mutex<Shared>>,
    notices: Notices,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracker").field("hold", &self.hold).finish()
    }
}

impl Tracker {
    /// Starts tracking a hold acquired by a request sent at `sent_at`.
    pub fn start(
        client: Arc<dyn Client>,
        hold: Grant,
        process: u32,
        sent_at: Instant,
        cfg: RecipeConfig,
        keeping: Keeping,
        notices: Notices,
    ) -> Self {
        let discipline = keeping.discipline;
        let asks = keeping.ask == Ask::BeforeWrite && client.judges_its_own_hold();
        let valid_until = if asks {
            Instant::now() + LIBRARY_JUDGES
        } else {
            hold.valid_until
        };
        let shared = Arc::new(Mutex::new(Shared {
            machine: Ownership::new(sent_at, valid_until),
            announced: false,
        }));
        let mut t = Tracker {
            hold,
            process,
            client,
            cfg,
            discipline,
            asks,
            shared,
            notices,
            task: None,
        };
        if discipline.renewal == Renewal::Background {
            t.task = Some(tokio::spawn(t.background()));
        }
        t
    }

    pub fn hold(&self) -> &Grant {
        &self.hold
    }

    /// The state now (announcing a loss if this is the first to see it).
    pub fn state(&self) -> OwnershipState {
        let state = lock(&self.shared).machine.state_at(Instant::now());
        self.announce_if_lost();
        state
    }

    /// Decides whether a write may go out: the application's question to its library first
    /// where it asks one, else a renewal under the inline discipline.
    pub async fn gate_write(&self) -> WriteGate {
        if self.asks {
            if let Some(ask) = self.client.ask(&self.hold) {
                let sent = Instant::now();
                let answer = self.asked(ask).await;
                let not_held = matches!(answer, Completion::Ok(b) if !b.held);
                let outcome = crate::client::checked_renewal(answer, self.cfg.ttl);
                lock(&self.shared).machine.observe(sent, &outcome);
                if not_held {
                    // The application asked and heard "not held": it does not write, whatever
                    // its discipline does with a hold it merely cannot confirm.
                    self.announce_if_lost();
                    return WriteGate::Refuse(
                        "not sent: the library says it no longer holds the lock".into(),
                    );
                }
            }
        } else if self.discipline.renewal == Renewal::Inline {
            let due = {
                let mut s = lock(&self.shared);
                let now = Instant::now();
                s.machine.state_at(now) != OwnershipState::Lost
                    && s.machine.renewal_due(now, self.cfg.renew_interval)
            };
            if due {
                let who = (self.process, &self.notices);
                renew_once(&self.client, &self.hold, &self.cfg, &self.shared, who).await;
            }
        }
        let state = self.state();
        match (self.discipline.on_suspect, state) {
            (OnSuspect::Continue, _) | (OnSuspect::Stop, OwnershipState::Held) => WriteGate::Go,
            (OnSuspect::Stop, OwnershipState::Suspect) => {
                WriteGate::Refuse("not sent: ownership suspect (renewal unconfirmed)".into())
            }
            (OnSuspect::Stop, OwnershipState::Lost) => WriteGate::Refuse(format!(
                "not sent: lease lost ({})",
                lock(&self.shared).machine.why_lost().unwrap_or("unknown")
            )),
        }
    }

    /// Stops renewing (before release or abandon).
    pub fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }

    /// Asks, and tells the history the question and its answer.
    async fn asked(
        &self,
        question: futures::future::BoxFuture<'_, Completion<Belief>>,
    ) -> Completion<Belief> {
        ask_and_tell(
            question,
            self.cfg.op_timeout,
            self.process,
            &self.hold,
            &self.notices,
        )
        .await
    }

    fn announce_if_lost(&self) {
        announce(&self.shared, &self.notices, self.process, &self.hold);
    }

    fn background(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (client, hold, cfg) = (self.client.clone(), self.hold.clone(), self.cfg.clone());
        let (shared, notices, process) = (self.shared.clone(), self.notices.clone(), self.process);
        async move {
            loop {
                tokio::time::sleep(cfg.renew_interval).await;
                let lost = lock(&shared).machine.state_at(Instant::now()) == OwnershipState::Lost;
                if !lost {
                    renew_once(&client, &hold, &cfg, &shared, (process, &notices)).await;
                }
                if announce(&shared, &notices, process, &hold) || lost {
                    return;
                }
            }
        }
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// One keep-alive step: the client's check where its keep-alive is one (told to `notices`,
/// for the history), else its renewal.
async fn renew_once(
    client: &Arc<dyn Client>,
    hold: &Grant,
    cfg: &RecipeConfig,
    shared: &Mutex<Shared>,
    (process, notices): (u32, &Notices),
) {
    let sent = Instant::now();
    let outcome = match client.check(hold) {
        Some(check) => {
            let answer = ask_and_tell(check, cfg.op_timeout, process, hold, notices).await;
            crate::client::checked_renewal(answer, cfg.ttl)
        }
        None => within(cfg.op_timeout, "renew", client.renew(hold)).await,
    };
    let mut s = lock(shared);
    s.machine.observe(sent, &outcome);
    s.machine.state_at(Instant::now());
}

/// Asks the client whether it holds `hold` (within `limit`) and tells `notices` the question
/// and its answer, stamped on the run's clock, for the history's `f = check` lines.
async fn ask_and_tell(
    question: futures::future::BoxFuture<'_, Completion<Belief>>,
    limit: Duration,
    process: u32,
    hold: &Grant,
    notices: &Notices,
) -> Completion<Belief> {
    let asked = notices.clock.now();
    let answer = within(limit, "check", question).await;
    let _ = notices.tx.send(Notice::Checked(CheckNotice {
        process,
        hold: hold.clone(),
        asked,
        answered: notices.clock.now(),
        answer: answer.clone(),
    }));
    answer
}

/// Sends the lost notice once; true when the hold is lost (announced now or before).
fn announce(shared: &Mutex<Shared>, notices: &Notices, process: u32, hold: &Grant) -> bool {
    let mut s = lock(shared);
    if s.machine.state_at(Instant::now()) != OwnershipState::Lost {
        return false;
    }
    if !s.announced {
        s.announced = true;
        let why = s.machine.why_lost().unwrap_or("unknown").to_string();
        let _ = notices.tx.send(Notice::Lost(LostNotice {
            process,
            hold: hold.clone(),
            why,
        }));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(3);

    #[test]
    fn unconfirmed_renewal_makes_it_suspect_and_a_confirmation_heals_it() {
        let t0 = Instant::now();
        let mut o = Ownership::new(t0, t0 + TTL);
        o.observe(t0 + Duration::from_secs(1), &Completion::info("timeout"));
        assert_eq!(
            o.state_at(t0 + Duration::from_secs(1)),
            OwnershipState::Suspect
        );
        o.observe(t0 + Duration::from_secs(2), &Completion::Ok(TTL));
        assert_eq!(
            o.state_at(t0 + Duration::from_secs(4)),
            OwnershipState::Held
        );
        assert_eq!(
            o.state_at(t0 + Duration::from_secs(5)),
            OwnershipState::Lost
        );
    }

    #[test]
    fn a_pause_past_the_validity_is_lost_without_any_reply() {
        let t0 = Instant::now();
        let mut o = Ownership::new(t0, t0 + TTL);
        assert_eq!(
            o.state_at(t0 + Duration::from_secs(10)),
            OwnershipState::Lost
        );
        o.observe(t0 + Duration::from_secs(10), &Completion::Ok(TTL));
        assert_eq!(
            o.state_at(t0 + Duration::from_secs(10)),
            OwnershipState::Lost,
            "lost is final"
        );
    }

    #[test]
    fn a_definite_renewal_failure_is_lost_with_its_reason() {
        let t0 = Instant::now();
        let mut o = Ownership::new(t0, t0 + TTL);
        o.observe(t0, &Completion::fail("lease not found"));
        assert_eq!(o.state_at(t0), OwnershipState::Lost);
        assert_eq!(o.why_lost(), Some("lease not found"));
    }
}
