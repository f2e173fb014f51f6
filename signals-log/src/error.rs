//! Errors of the signal log.

use std::io;
use std::path::PathBuf;

/// A failure to open, write or read the signal log, or to serialize a
/// record.
///
/// The IO variants name the log's path. The underlying error is part of the
/// message (the engine's [`SinkError`](ahp_engine::SinkError) carries only a
/// message) and kept in the `error` field for matching on its kind; it is
/// deliberately not also exposed as [`std::error::Error::source`], so that
/// error chains do not print it twice.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let err = ahp_signals_log::SignalLog::open(dir.path()).unwrap_err();
/// assert!(err.to_string().starts_with("cannot open signal log `"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The log (or its parent directory) could not be created or opened.
    #[error("cannot open signal log `{}`: {error}", path.display())]
    Open {
        /// The log's path.
        path: PathBuf,
        /// What the OS said.
        error: io::Error,
    },
    /// A record could not be written.
    #[error("cannot write to signal log `{}`: {error}", path.display())]
    Write {
        /// The log's path.
        path: PathBuf,
        /// What the OS said.
        error: io::Error,
    },
    /// The log could not be read (an unparseable line is not an error: the
    /// reader skips it).
    #[error("cannot read signal log `{}`: {error}", path.display())]
    Read {
        /// The log's path.
        path: PathBuf,
        /// What the OS said.
        error: io::Error,
    },
    /// A record could not be serialized.
    #[error("cannot serialize a `{kind}` record: {error}")]
    Serialize {
        /// The record's kind.
        kind: &'static str,
        /// What serde_json said.
        error: serde_json::Error,
    },
}
