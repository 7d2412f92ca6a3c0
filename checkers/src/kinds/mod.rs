//! The checkers of docs/design.md, "Anomaly kinds": one per kind, but for two that judge a
//! paired kind too (double-release: release-of-lost-lock; duplicate-token: token-regression).

pub mod concurrent_holders;
pub mod deleted_anothers_key;
mod disturbances;
pub mod double_release;
pub mod duplicate_effect;
pub mod duplicate_token;
pub mod granted_gone;
pub mod held_after_loss;
pub mod held_against_service;
pub mod locked_out_client;
pub mod lost_update;
mod outages;
pub mod phantom_holder;
mod release_suspects;
mod resource_presence;
pub mod stale_write;
pub mod stuck_lock;
pub mod token_out_of_order;
pub mod token_regression;

pub use concurrent_holders::ConcurrentHolders;
pub use deleted_anothers_key::DeletedAnothersKey;
pub use double_release::DoubleRelease;
pub use duplicate_effect::DuplicateEffect;
pub use duplicate_token::DuplicateToken;
pub use granted_gone::GrantedGone;
pub use held_after_loss::HeldAfterLoss;
pub use held_against_service::HeldAgainstService;
pub use locked_out_client::LockedOutClient;
pub use lost_update::LostUpdate;
pub use phantom_holder::PhantomHolder;
pub use stale_write::StaleAcceptedWrite;
pub use stuck_lock::StuckLock;
pub use token_out_of_order::TokenOutOfOrder;
