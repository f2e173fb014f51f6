//! Shipping a log to a sink: a persisted cursor per log and sink, batches
//! read from it, delivered at least once.
//!
//! The shipper reads; it never takes the writers' lock except to rename an
//! older ahp's rotated files, so it cannot slow a hook call. Where it got
//! to is a small JSON file per sink in `<log>.ship/` — segment number and
//! byte offset past the last delivered line, and that line's record id —
//! written (atomically, synced) only after the sink acknowledged the batch.
//! A shipper killed mid-batch starts again at the cursor and sends the
//! batch again; a sink that deduplicates by record id (every record has
//! one, see [`Record::id`](crate::Record::id)) then holds every record
//! exactly once.
//!
//! Segments keep their numbers for life (see [`segments`](crate::segments)),
//! so a cursor survives rotation. The writer reads the cursors before it
//! drops an old segment past its budget, and keeps one that a sink has not
//! been delivered yet.

use crate::segments::{self, Segment, SegmentKind};
use crate::{LogError, Record};
use ahp_engine::Uuid;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where a sink's delivery of a log got to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The sink, as shown to people (no password).
    pub sink: String,
    /// The segment the next record is read from (see [`Segment::number`]).
    pub segment: u64,
    /// The byte offset in that segment (uncompressed) past the last
    /// delivered line.
    pub offset: u64,
    /// The id of the last delivered record: a resumed shipper checks that
    /// the line before `offset` still is that record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_id: Option<Uuid>,
    /// When the cursor last moved.
    pub updated_at: DateTime<Utc>,
}

impl Cursor {
    /// A cursor at the very start of the log.
    pub fn start(sink: impl Into<String>) -> Cursor {
        Cursor {
            sink: sink.into(),
            segment: 0,
            offset: 0,
            last_id: None,
            updated_at: Utc::now(),
        }
    }

    /// Whether every record of segment `number`, `size` bytes long
    /// (uncompressed), has been delivered.
    pub fn delivered(&self, number: u64, size: u64) -> bool {
        self.segment > number || self.segment == number && self.offset >= size
    }
}

/// The folder of the cursors of the log at `log`: `<log>.ship/`.
pub fn cursor_dir(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".ship");
    name.into()
}

/// The cursor file of sink `key` (a file name: letters, digits, `-`, `_`,
/// `.`).
pub fn cursor_path(log: &Path, key: &str) -> PathBuf {
    cursor_dir(log).join(format!("{key}.json"))
}

/// The most a cursor file is read: a cursor is a few hundred bytes.
const MAX_CURSOR_BYTES: u64 = 64 * 1024;

/// Every sink's cursor of the log at `log`, as the writer sees them before
/// it drops a segment. A file that is not a cursor (unreadable, a link, not
/// JSON) holds nothing back: otherwise any file committed there would
/// switch the history budget off.
pub(crate) fn cursors(log: &Path) -> Vec<Cursor> {
    let Ok(entries) = std::fs::read_dir(cursor_dir(log)) else {
        return Vec::new();
    };
    // Runs inside a hook call's append, in a folder a cloned repository
    // may have committed: only small regular files, never through a link
    // or into a FIFO, and what is not a cursor is not one.
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            let file = crate::lock::open_read_nofollow(&e.path()).ok()?;
            let mut bytes = Vec::new();
            file.take(MAX_CURSOR_BYTES).read_to_end(&mut bytes).ok()?;
            serde_json::from_slice(&bytes).ok()
        })
        .collect()
}

/// Reads the cursor of sink `key`: `None` when it has never shipped.
pub fn load_cursor(log: &Path, key: &str) -> Result<Option<Cursor>, ShipError> {
    let path = cursor_path(log, key);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| ShipError::Cursor {
                path,
                error: io::Error::new(io::ErrorKind::InvalidData, e),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ShipError::Cursor { path, error }),
    }
}

/// Writes the cursor of sink `key`: to a temporary file, synced, then
/// renamed over the old one, so a crash leaves the old cursor or the new.
pub fn save_cursor(log: &Path, key: &str, cursor: &Cursor) -> Result<(), ShipError> {
    let path = cursor_path(log, key);
    let fail = |error| ShipError::Cursor {
        path: path.clone(),
        error,
    };
    let dir = cursor_dir(log);
    // The log may live in a cloned repository: a committed link at the
    // cursors' folder would make ahp write wherever it points.
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(fail(io::Error::new(
            io::ErrorKind::InvalidInput,
            "its folder is a symbolic link; cursors are not written through a link: remove it",
        )));
    }
    std::fs::create_dir_all(&dir).map_err(fail)?;
    let bytes = serde_json::to_vec_pretty(cursor).map_err(|e| fail(io::Error::other(e)))?;
    // It names the sink: as private as the log.
    let private = ahp_engine::paths::owner_only();
    ahp_engine::paths::replace_file(&path, &bytes, private).map_err(fail)
}

/// A shipping failure on the log's side (the sink's are [`SinkError`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShipError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A cursor could not be read or written.
    #[error("cannot use the ship cursor `{}`: {error}", path.display())]
    Cursor {
        /// The cursor file.
        path: PathBuf,
        /// What went wrong.
        error: io::Error,
    },
    /// The sink refused the batch for good, or kept failing.
    #[error("{0}")]
    Sink(SinkError),
}

/// What a sink says when it could not take a batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkError {
    /// Worth trying again (a connection failure, a 503): after `after`
    /// if the sink said when.
    #[error("{message}")]
    Retry {
        /// What happened.
        message: String,
        /// When the sink asked to be retried.
        after: Option<Duration>,
    },
    /// Trying again will not help (a bad request, a refused login).
    #[error("{0}")]
    Fatal(String),
}

/// One line of the log to deliver.
#[derive(Debug, Clone)]
pub struct Line {
    /// The record's stable id.
    pub id: Uuid,
    /// Its kind.
    pub kind: &'static str,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
    /// The record as written (masked), with its id filled in.
    pub value: serde_json::Value,
    /// The segment it was read from.
    pub segment: u64,
    /// The byte offset just past it in that segment (uncompressed): the
    /// line order within a log, and where the cursor moves once it is
    /// delivered.
    pub offset: u64,
}

/// A destination for log records.
pub trait Sink {
    /// Delivers a batch, all or nothing as far as the sink can tell; must
    /// be idempotent per [`Line::id`] (the same batch can come twice).
    fn deliver(&mut self, batch: &[Line]) -> Result<(), SinkError>;
}

/// How [`ship`] batches and retries.
#[derive(Clone)]
pub struct ShipOptions {
    /// The most records in one batch.
    pub batch: usize,
    /// Tries of one batch before giving up (at least 1).
    pub tries: u32,
    /// The first wait between tries; it doubles, up to `max_backoff`.
    pub backoff: Duration,
    /// The longest wait between tries.
    pub max_backoff: Duration,
    /// Told about each failed try that will be retried (what failed, how
    /// long until the next try), e.g. to print it.
    pub on_retry: fn(&str, Duration),
}

impl Default for ShipOptions {
    fn default() -> ShipOptions {
        ShipOptions {
            batch: 500,
            tries: 6,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(30),
            on_retry: |_, _| {},
        }
    }
}

/// What one [`ship`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shipped {
    /// Records delivered.
    pub records: u64,
    /// Batches delivered.
    pub batches: u64,
    /// Lines skipped as unparseable.
    pub skipped: u64,
    /// Tries that failed and were retried.
    pub retries: u64,
    /// The cursor did not match the log (its record was not where it
    /// said): shipping started again from the oldest segment, relying on
    /// the sink's deduplication.
    pub restarted: bool,
}

/// Delivers every complete record of the log at `log` after sink `key`'s
/// cursor to `sink`, in batches, moving the cursor after each delivered
/// batch. Returns when it reached the end of the current file. A batch the
/// sink keeps failing to take ends it with [`ShipError::Sink`], the cursor
/// at the last delivered batch.
pub fn ship(
    log: &Path,
    key: &str,
    label: &str,
    sink: &mut dyn Sink,
    options: &ShipOptions,
) -> Result<Shipped, ShipError> {
    let mut done = Shipped::default();
    let mut cursor = match load_cursor(log, key)? {
        Some(c) => c,
        None => {
            // Saved before anything is read: from now on rotation keeps
            // what this sink has not received.
            let c = Cursor::start(label);
            save_cursor(log, key, &c)?;
            c
        }
    };
    cursor.sink = label.to_string();
    let (segments, next, mut current) = list(log)?;
    let mut plan = plan(&segments, next, &cursor);
    if plan.is_none() {
        done.restarted = true;
        cursor = Cursor::start(label);
        plan = plan_from_start(&segments, next);
    }
    let mut batch: Vec<Line> = Vec::with_capacity(options.batch.min(1024));
    let Some(plan) = plan else {
        return Ok(done);
    };
    for (i, (segment, number)) in plan.iter().enumerate() {
        let start = if *number == cursor.segment {
            cursor.offset
        } else {
            0
        };
        let opened = match segment.kind {
            // The file that was current when the segments were listed, even
            // if it has been rotated since: its number is the one it got.
            SegmentKind::Current => match current.take() {
                Some(file) => segments::open_file(segment, file),
                None => continue,
            },
            _ => segments::open(segment),
        };
        let mut lines = match opened.and_then(|(inner, _)| {
            SegmentLines::open(inner, segment, *number, start, cursor.last_id)
        }) {
            Ok(l) => l,
            // A segment dropped or rotated under us: the next listing has it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(ShipError::Log(LogError::Read {
                    path: segment.path.clone(),
                    error,
                }));
            }
        };
        if !lines.verified && i == 0 && start > 0 {
            // The cursor's record is not where it says: start over.
            done.restarted = true;
            drop(lines);
            return ship_again(log, key, label, sink, options, done);
        }
        loop {
            match lines.next_line() {
                Ok(Some(line)) => batch.push(line),
                Ok(None) => break,
                Err(error) => {
                    return Err(ShipError::Log(LogError::Read {
                        path: segment.path.clone(),
                        error,
                    }));
                }
            }
            if batch.len() >= options.batch {
                deliver(log, key, &mut cursor, sink, &mut batch, options, &mut done)?;
            }
        }
        done.skipped += lines.skipped;
        // A rotated segment read to its end is delivered once its last
        // batch is: the cursor moves on to the next segment.
        deliver(log, key, &mut cursor, sink, &mut batch, options, &mut done)?;
        if let (SegmentKind::Rotated(_), Some((_, following))) = (segment.kind, plan.get(i + 1)) {
            cursor.segment = *following;
            cursor.offset = 0;
            cursor.updated_at = Utc::now();
            save_cursor(log, key, &cursor)?;
        } else if matches!(segment.kind, SegmentKind::Current) && cursor.segment != *number {
            // Nothing was in the current file yet: name it, so that the
            // segments before it can go.
            cursor.segment = *number;
            cursor.offset = 0;
            cursor.last_id = None;
            cursor.updated_at = Utc::now();
            save_cursor(log, key, &cursor)?;
        }
    }
    Ok(done)
}

fn ship_again(
    log: &Path,
    key: &str,
    label: &str,
    sink: &mut dyn Sink,
    options: &ShipOptions,
    done: Shipped,
) -> Result<Shipped, ShipError> {
    save_cursor(log, key, &Cursor::start(label))?;
    let mut again = ship(log, key, label, sink, options)?;
    again.records += done.records;
    again.batches += done.batches;
    again.retries += done.retries;
    again.restarted = true;
    Ok(again)
}

/// Sends `batch` (if any) with retries, then moves and saves the cursor.
fn deliver(
    log: &Path,
    key: &str,
    cursor: &mut Cursor,
    sink: &mut dyn Sink,
    batch: &mut Vec<Line>,
    options: &ShipOptions,
    done: &mut Shipped,
) -> Result<(), ShipError> {
    let Some(last) = batch.last() else {
        return Ok(());
    };
    let mut wait = options.backoff;
    let mut tries = 0;
    loop {
        tries += 1;
        match sink.deliver(batch) {
            Ok(()) => break,
            Err(SinkError::Retry { message, after }) if tries < options.tries.max(1) => {
                done.retries += 1;
                let pause = after.unwrap_or(wait).min(options.max_backoff);
                (options.on_retry)(&message, pause);
                std::thread::sleep(pause);
                wait = (wait * 2).min(options.max_backoff);
            }
            Err(SinkError::Retry { message, .. }) => {
                return Err(ShipError::Sink(SinkError::Retry {
                    message: format!("{message} (gave up after {tries} tries)"),
                    after: None,
                }));
            }
            Err(e) => return Err(ShipError::Sink(e)),
        }
    }
    cursor.segment = last.segment;
    cursor.offset = last.offset;
    cursor.last_id = Some(last.id);
    cursor.updated_at = Utc::now();
    done.records += batch.len() as u64;
    done.batches += 1;
    batch.clear();
    save_cursor(log, key, cursor)
}

/// The log's segments and the number of the current file; an older ahp's
/// rotated files are first given numbers (under the writers' lock), so a
/// cursor can name every file.
fn list(log: &Path) -> Result<(Vec<Segment>, u64, Option<std::fs::File>), ShipError> {
    let open = |error| LogError::Open {
        path: log.to_path_buf(),
        error,
    };
    segments::migrate(log).map_err(open)?;
    // The current file is opened and the segments listed under a shared
    // lock, as a reader does: a rotation in between would make the file
    // read as "current" a newer one than its number says.
    let current = loop {
        let file = match crate::lock::open_read(log) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => break None,
            Err(e) => return Err(open(e).into()),
        };
        crate::lock::lock_shared(&file).map_err(open)?;
        let facts = crate::lock::facts(&file).map_err(open)?;
        if crate::lock::path_id(log).map_err(open)? == Some(facts.id) {
            break Some(file);
        }
    };
    let listed = segments::rotated(log).map_err(open);
    if let Some(f) = &current {
        let _ = crate::lock::unlock(f);
    }
    let mut segments = listed?;
    let next = segments::next_number(&segments);
    segments.push(Segment {
        path: log.to_path_buf(),
        kind: SegmentKind::Current,
    });
    Ok((segments, next, current))
}

type Plan<'a> = Vec<(&'a Segment, u64)>;

/// The segments to read from `cursor` on, each with its number; `None` if
/// the cursor names a segment that is gone (dropped, or a log that started
/// over).
fn plan<'a>(segments: &'a [Segment], next: u64, cursor: &Cursor) -> Option<Plan<'a>> {
    if cursor.segment == 0 && cursor.offset == 0 {
        return plan_from_start(segments, next);
    }
    let numbered: Plan<'a> = segments
        .iter()
        .map(|s| (s, s.number(next)))
        .filter(|(s, _)| !matches!(s.kind, SegmentKind::Legacy(_)))
        .collect();
    if !numbered.iter().any(|(_, n)| *n == cursor.segment) {
        return None;
    }
    Some(
        numbered
            .into_iter()
            .filter(|(_, n)| *n >= cursor.segment)
            .collect(),
    )
}

fn plan_from_start(segments: &[Segment], next: u64) -> Option<Plan<'_>> {
    Some(segments.iter().map(|s| (s, s.number(next))).collect())
}

/// The complete lines of one segment from a byte offset on.
struct SegmentLines {
    inner: Box<dyn BufRead + Send>,
    number: u64,
    /// Offset of the next byte to read.
    offset: u64,
    buf: Vec<u8>,
    skipped: u64,
    /// The line before the start offset was the cursor's record (or there
    /// was nothing to check).
    verified: bool,
    current: bool,
}

impl SegmentLines {
    fn open(
        inner: Box<dyn BufRead + Send>,
        segment: &Segment,
        number: u64,
        start: u64,
        last: Option<Uuid>,
    ) -> io::Result<SegmentLines> {
        let mut lines = SegmentLines {
            inner,
            number,
            offset: 0,
            buf: Vec::new(),
            skipped: 0,
            verified: start == 0,
            current: matches!(segment.kind, SegmentKind::Current),
        };
        // Skip to `start` line by line, remembering the last line's id.
        let mut last_seen = None;
        while lines.offset < start {
            lines.buf.clear();
            let n = (&mut lines.inner)
                .take(start - lines.offset)
                .read_until(b'\n', &mut lines.buf)?;
            if n == 0 {
                break;
            }
            lines.offset += n as u64;
            last_seen = Some(id_of(&lines.buf));
        }
        if start > 0 {
            lines.verified = lines.offset == start
                && match (last, last_seen) {
                    (Some(want), Some(Some(have))) => want == have,
                    _ => false,
                };
        }
        Ok(lines)
    }

    /// The next complete record line, or `None` at the end (a final line
    /// without its `\n` — being written now — is left for the next run).
    fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            self.buf.clear();
            let n = self.inner.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            if self.buf.last() != Some(&b'\n') && self.current {
                return Ok(None);
            }
            self.offset += n as u64;
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let Ok(mut record) = serde_json::from_slice::<Record>(text) else {
                self.skipped += 1;
                continue;
            };
            record.derive_id(text);
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(text) else {
                self.skipped += 1;
                continue;
            };
            let id = record.id();
            if let Some(map) = value.as_object_mut()
                && !matches!(record, Record::Signal(_))
                && !map.contains_key("id")
            {
                map.insert("id".into(), serde_json::Value::String(id.to_string()));
            }
            return Ok(Some(Line {
                id,
                kind: record.kind(),
                timestamp: record.timestamp(),
                value,
                segment: self.number,
                offset: self.offset,
            }));
        }
    }
}

/// The id of a line, if it is a record.
fn id_of(line: &[u8]) -> Option<Uuid> {
    let text = line.trim_ascii();
    let mut record = serde_json::from_slice::<Record>(text).ok()?;
    record.derive_id(text);
    Some(record.id())
}
