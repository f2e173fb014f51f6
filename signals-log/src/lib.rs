//! The signal log of ahp (SPEC §8): an append-only JSONL file, by default
//! `.ahp/signals.jsonl`, with one [`Record`] a line.
//!
//! What lives here:
//!
//! - the **record format** ([`Record`]): every line is a JSON object with a
//!   `kind` field — `signal`, `response`, `warning` or `error` — followed by
//!   the fields of the [`Signal`](ahp_engine::Signal),
//!   [`SignalResponse`](ahp_engine::SignalResponse) or
//!   [`Diagnostic`](ahp_engine::Diagnostic) exactly as the engine serializes
//!   them;
//! - the **writer** ([`SignalLog`]): appends one record with one write on an
//!   `O_APPEND` handle, so many threads and processes can append at once
//!   without interleaving lines; repairs a torn final line left by a crash;
//!   implements the engine's [`SignalSink`](ahp_engine::SignalSink);
//! - a simple streaming **reader** ([`read`], [`Reader`]): constant memory,
//!   skips (and counts) torn or unparseable lines instead of failing.
//!
//! What does not (yet): cross-process locking, rotation by size, an fsync
//! policy, redaction of secrets, queries, stats, the tuning report and
//! replay. They build on the record format, which is final.
//!
//! ```
//! use ahp_engine::{Action, Signal, SignalResponse};
//! use ahp_signals_log::{read, Record, SignalLog};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join(".ahp/signals.jsonl");
//! let log = SignalLog::open(&path).unwrap();
//! let signal = Signal::prompt("this change touches 40 files");
//! let response = SignalResponse::new(&signal, Action::Acknowledge, None).unwrap();
//! log.append(&Record::Signal(signal.clone())).unwrap();
//! log.append(&Record::Response(response)).unwrap();
//!
//! let mut reader = read(&path).unwrap();
//! let kinds: Vec<&str> = reader.by_ref().map(|r| r.unwrap().kind()).collect();
//! assert_eq!(kinds, ["signal", "response"]);
//! assert_eq!(reader.skipped(), 0);
//! ```

#![warn(missing_docs)]

mod error;
pub mod history;
mod reader;
mod record;
mod writer;

pub use error::LogError;
pub use reader::{read, Reader};
pub use record::Record;
pub use writer::SignalLog;
