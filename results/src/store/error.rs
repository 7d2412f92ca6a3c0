//! The one error of a run's files. Reading a run directory back (the check, the report) and
//! appending to its logs (the recorders) fail the same few ways, and every message names the
//! file, and the line when there is one, so a user can open it there.

use std::io;
use std::path::PathBuf;

/// What went wrong with a file of a run: reading any of them, or appending to a log.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// A whole file (`test.yaml`, `results.json`, `state.json`) that does not read as what it
    /// should be, or a value that cannot be written as a line.
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// The file's last line has no newline and cannot be read: the writer stopped mid-line (a
    /// crash, a kill). Every line before it was handed over; a checker can judge them and call
    /// the verdict unknown rather than refuse the whole run.
    #[error(
        "{path}:{line}: the last line is cut off ({message}): the writer stopped mid-line; \
         everything before it was read"
    )]
    TornTail {
        path: PathBuf,
        line: u64,
        message: String,
    },
}
