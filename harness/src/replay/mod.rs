//! `fencecheck replay`: an incident's exact order of events, replayed against a real provider.
//!
//! - [`scenario`]: the scenario file, parsed and validated before anything starts.
//! - [`execute`]: one scenario on one provider: stage, steps, heal, teardown, check.
//! - [`stage`]: the worker containers, named after the scenario's workers.
//! - [`actor`]: one worker's operations, recorded; open across a pause.
//! - [`steps`]: each step applied, its row of the table filled and its expectation checked.
//! - [`faults`]: the nemesis and wait steps, and the final heal, struck and lifted through the
//!   site's fault executor (`nemesis::OneStep`); `wait: lease-expired` asks the site's lock
//!   service (`run::lease_expiry`).
//! - [`worker_faults`]: a worker step's fault at a weak moment (in flight, slow replies, its
//!   client's clock).
//! - [`standing`]: the faults the steps struck and no step lifted yet, and which step lifts
//!   each.
//! - [`rows`]: the rows of the step table.
//! - [`table`]: the step table and the evidence of each anomaly, as printed.

pub mod actor;
pub mod execute;
pub mod faults;
pub mod rows;
pub mod scenario;
pub mod stage;
pub mod standing;
pub mod steps;
pub mod table;
pub mod worker_faults;
