//! Reading a stored run back: [`RunReader`], the one reader of a run directory (its logs
//! streamed or whole, `test.yaml`, `results.json`, `state.json`), over [`lines`]' streaming of
//! a JSONL file and [`CheckConfig`], what the checkers take from `test.yaml`. Every error is a
//! [`StoreError`] naming the file, and the line when there is one.

mod check_config;
mod error;
pub mod lines;
mod run;

pub use check_config::{CheckConfig, DEFAULT_RECOVERY_SLACK};
pub use error::StoreError;
pub use lines::{
    cut_short, for_each_line, stream_history, stream_history_lines, stream_resource_log,
};
pub use run::{RunReader, TestYaml};

#[cfg(test)]
mod tests;
