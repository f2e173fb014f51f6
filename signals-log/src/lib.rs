//! The signal log of ahp (SPEC §8): an append-only JSONL file, by default
//! `.ahp/signals.jsonl`, with one [`Record`] a line.
//!
//! What lives here:
//!
//! - the **record format** ([`Record`]): every line is a JSON object with a
//!   `kind` field — `signal`, `response`, `info`, `warning`, `error`, `run`
//!   or `release` — followed by
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
//! - **options** ([`LogOptions`]): an fsync policy ([`FsyncPolicy`]),
//!   rotation by size, and [`Masking`] of secrets before anything is
//!   written; every append holds an advisory `flock` on the file, so
//!   processes rotate and repair torn tails without racing;
//! - a **rotation-following reader** ([`read_all`], [`LogReader`]) with a
//!   [`Filter`].
//!
//! - **analytics** ([`analytics`]): queries, the per-source statistics, the tuning
//!   suggestions and the HTML report over a [`Selection`] of signals that
//!   keeps their responses; the escalation history ([`history`]).
//!
//! Replay lives with the CLI: it needs the policy loader and the oracles,
//! which this crate does not depend on.
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
#![forbid(unsafe_code)]

pub mod analytics;
mod error;
mod filter;
mod follow;
mod fxhash;
pub mod history;
mod lean;
mod lock;
mod mask;
mod options;
mod reader;
mod recent;
mod record;
mod release;
pub mod scan;
pub mod segments;
pub mod ship;
mod view;
mod writer;

pub use error::LogError;
pub use filter::{Filter, Selection};
pub use follow::{LogReader, MergedReader, Unreadable, read_all, read_many};
pub use mask::{MASK, Masking, SENSITIVE_KEYS};
pub use options::{FsyncPolicy, LogOptions};
pub use reader::{Reader, read};
pub use recent::Recent;
pub use record::Record;
pub use release::Release;
pub use writer::{SignalLog, human_bytes};
