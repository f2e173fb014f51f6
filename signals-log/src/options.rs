//! How a [`SignalLog`](crate::SignalLog) writes: fsync policy, rotation,
//! masking.

use crate::Masking;
use std::time::Duration;

/// When appended records are forced to stable storage (`fsync`).
///
/// The trade-off is durability against speed; no policy ever lets a crash
/// tear a record *before* the last one (every record is one `write`, and a
/// torn final line is skipped by readers and repaired by the next writer):
///
/// - [`FsyncPolicy::Always`]: `fdatasync` after every record. A record is
///   on disk when `append` returns — durable across power loss — and every
///   append pays a disk flush: the slowest by far.
/// - [`FsyncPolicy::Batch`] (the default): `fdatasync` at most once every
///   [`LogOptions::batch_interval`], on rotation and when the log is
///   dropped (unless [`LogOptions::sync_on_drop`] is off). A crash of the
///   *process* loses nothing (the records are in the OS's page cache); a
///   crash of the *machine* can lose the last moments' records.
/// - [`FsyncPolicy::Never`]: leave it to the OS (which writes dirty pages
///   back within seconds on Linux). Fastest; a machine crash can lose more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FsyncPolicy {
    /// Sync after every record.
    Always,
    /// Sync at most once per batch interval, on rotation and on drop.
    #[default]
    Batch,
    /// Never sync explicitly.
    Never,
}

/// Options for [`SignalLog::open_with`](crate::SignalLog::open_with).
///
/// ```
/// use ahp_signals_log::{FsyncPolicy, LogOptions, SignalLog};
/// # let dir = tempfile::tempdir().unwrap();
/// let options = LogOptions {
///     fsync: FsyncPolicy::Always,
///     max_bytes: Some(1 << 20),
///     keep: 3,
///     ..LogOptions::default()
/// };
/// let log = SignalLog::open_with(dir.path().join("signals.jsonl"), options).unwrap();
/// assert_eq!(log.options().keep, 3);
/// ```
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// When records are fsynced (default [`FsyncPolicy::Batch`]).
    pub fsync: FsyncPolicy,
    /// Rotate when an append would make the file larger than this many
    /// bytes (default 64 MiB); `None` never rotates. A single record larger
    /// than the threshold is still written, to a fresh file.
    pub max_bytes: Option<u64>,
    /// The history budget: how many rotated, compressed segments
    /// (`signals.jsonl.<N>.gz`) are kept (default 64: with the default
    /// `max_bytes`, 4 GiB of records, a few hundred MiB on disk). Past it
    /// the oldest is dropped, and a record in the log says so — unless a
    /// shipper has not delivered it yet ([`ship`](crate::ship)): then it is
    /// kept, and a warning record says that instead. `0` keeps none when
    /// nothing ships the log.
    pub keep: usize,
    /// For [`FsyncPolicy::Batch`]: the longest time between two syncs while
    /// records are being appended (default 200 ms).
    pub batch_interval: Duration,
    /// What is masked before a record is written.
    pub mask: Masking,
    /// For [`FsyncPolicy::Batch`]: sync what is unsynced when the log is
    /// dropped (default `true`). A process that appends one record and
    /// exits — `ahp hook`, once per tool call — turns this off: otherwise
    /// every call would pay a disk flush, which is [`FsyncPolicy::Always`]
    /// in all but name.
    pub sync_on_drop: bool,
}

impl LogOptions {
    /// The default rotation threshold: 64 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
    /// The default number of rotated segments kept: 64.
    pub const DEFAULT_KEEP: usize = 64;
}

impl Default for LogOptions {
    fn default() -> LogOptions {
        LogOptions {
            fsync: FsyncPolicy::default(),
            max_bytes: Some(LogOptions::DEFAULT_MAX_BYTES),
            keep: LogOptions::DEFAULT_KEEP,
            batch_interval: Duration::from_millis(200),
            mask: Masking::default(),
            sync_on_drop: true,
        }
    }
}
