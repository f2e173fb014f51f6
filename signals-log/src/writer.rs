//! The writer: one record, one line, one write, under an advisory lock.

use crate::lock;
use crate::record::WireRef;
use crate::segments;
use crate::{FsyncPolicy, LogError, LogOptions, Record};
use ahp_engine::RunRecord;
use ahp_engine::{Diagnostic, Level, Signal, SignalSink, SinkError};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// An open signal log, appending one JSON line per [`Record`].
///
/// Every append, under the handle's mutex:
///
/// 1. takes an advisory exclusive lock (`flock`) on the log file, and
///    reopens the path if the file was rotated away by another process
///    since this handle opened it (its inode differs from the path's);
/// 2. if the file does not end in `\n` — a writer crashed mid-line — starts
///    the record with a `\n`, so the torn line stays one skipped line and
///    the record starts a clean one (race-free: the lock is held);
/// 3. rotates if the record would take the file past
///    [`LogOptions::max_bytes`]: `signals.jsonl` is compressed into the
///    next numbered segment `signals.jsonl.<N>.gz` and a fresh
///    `signals.jsonl` begins; the oldest segments past
///    [`LogOptions::keep`] are dropped unless a shipper has not delivered
///    them, and records saying so open the fresh file;
/// 4. writes the (masked, see [`Masking`](crate::Masking)) line with one
///    `write` on an `O_APPEND` handle, fsyncs as
///    [`LogOptions::fsync`] says, and unlocks.
///
/// So many threads (sharing one `SignalLog` through an `Arc`) and many
/// processes (each with its own) can append at once: no line is
/// interleaved, lost or blank. `flock` locks are advisory: a process that
/// writes the file without them (an editor, `echo >>`) is not held off, and
/// network file systems may not honour them.
///
/// ```
/// use ahp_engine::{Signal, SignalSink};
/// use ahp_signals_log::SignalLog;
/// use std::sync::Arc;
///
/// # let dir = tempfile::tempdir().unwrap();
/// let log = Arc::new(SignalLog::open(dir.path().join("signals.jsonl")).unwrap());
/// // Hand it to the engine: `Engine::builder().sink(log.clone())`.
/// log.record_signal(&Signal::aid("tests live in tests/")).unwrap();
/// let text = std::fs::read_to_string(log.path()).unwrap();
/// assert_eq!(text.lines().count(), 1);
/// assert!(text.starts_with(r#"{"kind":"signal","#));
/// ```
#[derive(Debug)]
pub struct SignalLog {
    path: PathBuf,
    options: LogOptions,
    // The mutex orders this process's threads (the flock is per open file
    // description, which they share) and guards the handle, which rotation
    // replaces.
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Opened append-only (O_APPEND): writes always go to the end.
    file: File,
    /// Written since the last fsync.
    dirty: bool,
    /// Lines the last rotation left to write before the next record.
    pending: Vec<u8>,
    last_sync: Instant,
}

impl SignalLog {
    /// Opens the log at `path` with the default [`LogOptions`] (batched
    /// fsync, rotation at 64 MiB into compressed segments keeping 64, default masking).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("a/b/.ahp/signals.jsonl");
    /// let log = ahp_signals_log::SignalLog::open(&path).unwrap();
    /// assert_eq!(log.path(), path);
    /// assert!(path.is_file());
    /// ```
    pub fn open(path: impl Into<PathBuf>) -> Result<SignalLog, LogError> {
        SignalLog::open_with(path, LogOptions::default())
    }

    /// Opens (creating it and its parent directories if needed) the log at
    /// `path` for appending, with `options`.
    pub fn open_with(path: impl Into<PathBuf>, options: LogOptions) -> Result<SignalLog, LogError> {
        let path = path.into();
        let fail = |error| LogError::Open {
            path: path.clone(),
            error,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = open_append(&path).map_err(fail)?;
        Ok(SignalLog {
            path,
            options,
            state: Mutex::new(State {
                file,
                dirty: false,
                pending: Vec::new(),
                last_sync: Instant::now(),
            }),
        })
    }

    /// The log's path, as given to [`SignalLog::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &LogOptions {
        &self.options
    }

    /// Appends `record` as one line (see [`SignalLog`] for how).
    ///
    /// ```
    /// use ahp_engine::Signal;
    /// use ahp_signals_log::{Record, SignalLog};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let log = SignalLog::open(dir.path().join("signals.jsonl")).unwrap();
    /// log.append(&Record::from(Signal::block("no force-push to main"))).unwrap();
    /// ```
    pub fn append(&self, record: &Record) -> Result<(), LogError> {
        self.append_wire(record.wire())
    }

    /// Forces what was appended through this handle to disk now, whatever
    /// the policy.
    pub fn sync(&self) -> Result<(), LogError> {
        let mut state = self.lock();
        state.file.sync_data().map_err(|e| self.write_error(e))?;
        state.dirty = false;
        state.last_sync = Instant::now();
        Ok(())
    }

    fn write_error(&self, error: io::Error) -> LogError {
        LogError::Write {
            path: self.path.clone(),
            error,
        }
    }

    /// The line, with a leading `\n` (buf[0]) that repairs a torn tail and
    /// is written only when needed, in the same write as the record.
    fn encode(&self, wire: WireRef<'_>) -> Result<Vec<u8>, LogError> {
        let ser = |error| LogError::Serialize {
            kind: wire.kind(),
            error,
        };
        let mut buf = Vec::with_capacity(512);
        buf.push(b'\n');
        serde_json::to_writer(&mut buf, &wire).map_err(ser)?;
        if self.options.mask.might_match(&buf[1..]) {
            let mut value = serde_json::to_value(&wire).map_err(ser)?;
            self.options.mask.mask_value(&mut value);
            buf.truncate(1);
            // `kind` first, as in the unmasked form.
            buf.extend_from_slice(b"{\"kind\":");
            serde_json::to_writer(&mut buf, wire.kind()).map_err(ser)?;
            if let serde_json::Value::Object(map) = value {
                for (key, value) in map.iter().filter(|(k, _)| *k != "kind") {
                    buf.push(b',');
                    serde_json::to_writer(&mut buf, key).map_err(ser)?;
                    buf.push(b':');
                    serde_json::to_writer(&mut buf, value).map_err(ser)?;
                }
            }
            buf.push(b'}');
        }
        // Compact JSON escapes control characters in strings, so the line
        // has no newline of its own.
        debug_assert!(!buf[1..].contains(&b'\n'));
        buf.push(b'\n');
        Ok(buf)
    }

    fn append_wire(&self, wire: WireRef<'_>) -> Result<(), LogError> {
        let buf = self.encode(wire)?;
        let mut state = self.lock();
        self.locked(
            &mut state,
            |state, facts| {
                let torn = facts.len > 0 && ends_torn(&state.file, facts.len)?;
                let start = usize::from(!torn);
                if state.pending.is_empty() {
                    state.file.write_all(&buf[start..])?;
                } else {
                    // What the last rotation has to say, then the record.
                    let mut all = std::mem::take(&mut state.pending);
                    if torn {
                        all.insert(0, b'\n');
                    }
                    all.extend_from_slice(&buf[1..]);
                    state.file.write_all(&all)?;
                }
                state.dirty = true;
                let sync = match self.options.fsync {
                    FsyncPolicy::Always => true,
                    FsyncPolicy::Batch => state.last_sync.elapsed() >= self.options.batch_interval,
                    FsyncPolicy::Never => false,
                };
                if sync {
                    state.file.sync_data()?;
                    state.dirty = false;
                    state.last_sync = Instant::now();
                }
                Ok(())
            },
            buf.len() as u64 - 1,
        )
        .map_err(|e| self.write_error(e))
    }

    /// Runs `write` with the exclusive lock held on the file the path names,
    /// after rotating if `len` more bytes would pass the threshold.
    fn locked(
        &self,
        state: &mut State,
        write: impl FnOnce(&mut State, &lock::Facts) -> io::Result<()>,
        len: u64,
    ) -> io::Result<()> {
        loop {
            lock::lock(&state.file)?;
            let facts = match self.check(state, len) {
                Ok(Some(facts)) => facts,
                Ok(None) => continue, // reopened or rotated: lock the new file
                Err(e) => {
                    let _ = lock::unlock(&state.file);
                    return Err(e);
                }
            };
            let result = write(state, &facts);
            let unlocked = lock::unlock(&state.file);
            return result.and(unlocked);
        }
    }

    /// With the lock held on `state.file`: `Some(facts)` if it is the
    /// current file and has room; otherwise reopens (rotating first if it
    /// is full), leaving nothing locked, and returns `None`.
    fn check(&self, state: &mut State, len: u64) -> io::Result<Option<lock::Facts>> {
        let facts = lock::facts(&state.file)?;
        if lock::path_id(&self.path)? != Some(facts.id) {
            // Rotated (or deleted) by someone else since we opened it.
            lock::unlock(&state.file)?;
            self.reopen(state)?;
            return Ok(None);
        }
        let full = self
            .options
            .max_bytes
            .is_some_and(|max| facts.regular && facts.len > 0 && facts.len + len > max);
        if !full {
            return Ok(Some(facts));
        }
        if state.dirty && self.options.fsync != FsyncPolicy::Never {
            state.file.sync_data()?;
        }
        let notes = match self.rotate() {
            Ok(notes) => notes,
            // A record is never lost to rotation: the current file grows
            // past the threshold instead, and says why in the log.
            Err(e) => {
                let why = note(
                    Level::Warning,
                    format!(
                        "could not rotate {}, so it grows past log_max_bytes: {e}",
                        self.path.display()
                    ),
                );
                if let Ok(line) = self.encode(WireRef::diagnostic(&why)) {
                    state.pending.extend_from_slice(&line[1..]);
                }
                return Ok(Some(facts));
            }
        };
        // The new log is created at once, still under the old file's lock
        // and before any flush: between the removal and this open the log
        // has no file, and readers (which wait for it) should not wait long.
        let fresh = open_append(&self.path);
        lock::unlock(&state.file)?;
        state.file = fresh?;
        state.dirty = false;
        // Written with the next record, in its write: written here, they
        // would fill the fresh file before the record that rotated it.
        for d in &notes {
            if let Ok(line) = self.encode(WireRef::diagnostic(d)) {
                state.pending.extend_from_slice(&line[1..]);
            }
        }
        Ok(None)
    }

    /// Rotates the full log (its lock held): compresses it into the next
    /// numbered segment (`signals.jsonl.<N>.gz`) and removes it, then drops
    /// the oldest segments past [`LogOptions::keep`] — except those a
    /// shipper has not delivered yet. Returns the records that say what was
    /// dropped or kept past the budget, for the fresh file.
    fn rotate(&self) -> io::Result<Vec<Diagnostic>> {
        let keep = self.options.keep;
        let mut notes = Vec::new();
        let mut rotated = segments::rotated(&self.path)?;
        let cursors = crate::ship::cursors(&self.path);
        if keep == 0 && cursors.is_empty() && rotated.is_empty() {
            let size = fs::metadata(&self.path).map_or(0, |m| m.len());
            ignore_missing(fs::remove_file(&self.path))?;
            notes.push(note(
                Level::Info,
                format!(
                    "dropped {} of records from {}: log_keep is 0, so rotation keeps no history",
                    human_bytes(size),
                    self.path.display()
                ),
            ));
            return Ok(notes);
        }
        segments::migrate_legacy(&self.path, &mut rotated)?;
        let n = segments::next_number(&rotated);
        if !segments::listable(n) {
            return Err(io::Error::other(format!(
                "the next segment number, {n}, is past the highest a segment may have: {} holds a segment numbered near it",
                self.path
                    .parent()
                    .map_or_else(|| ".".into(), |p| p.display().to_string())
            )));
        }
        let path = segments::compress(&self.path, &self.path, n)?;
        fs::remove_file(&self.path)?;
        rotated.push(segments::Segment {
            path,
            kind: segments::SegmentKind::Rotated(n),
        });
        let excess = rotated.len().saturating_sub(keep);
        for (i, segment) in rotated.iter().take(excess).enumerate() {
            let number = segment.number(n.saturating_add(1));
            let name = segment.path.display();
            let size = || segment.open().map_or(u64::MAX, |(_, size)| size);
            if let Some(c) = cursors.iter().find(|c| !c.delivered(number, size())) {
                // It and every newer one: one record says so.
                notes.push(note(
                    Level::Warning,
                    format!(
                        "kept {} rotated segments past the history budget (log_keep = {keep}), from {name} on: not yet shipped to {} (run `ahp signals ship` to it, or delete its cursor in {} to stop waiting for it)",
                        excess - i,
                        c.sink,
                        crate::ship::cursor_dir(&self.path).display()
                    ),
                ));
                break;
            }
            let size = fs::metadata(&segment.path).map_or(0, |m| m.len());
            ignore_missing(fs::remove_file(&segment.path))?;
            notes.push(note(
                Level::Info,
                format!(
                    "dropped {name} ({} compressed) from the log's history: past the budget of log_keep = {keep} rotated files",
                    human_bytes(size)
                ),
            ));
        }
        Ok(notes)
    }

    fn reopen(&self, state: &mut State) -> io::Result<()> {
        if state.dirty && self.options.fsync == FsyncPolicy::Batch {
            state.file.sync_data()?;
        }
        state.file = open_append(&self.path)?;
        state.dirty = false;
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves nothing inconsistent: at
        // worst a line was half written, which readers skip and the next
        // append repairs; the flock is released when its handle closes.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for SignalLog {
    fn drop(&mut self) {
        if self.options.fsync == FsyncPolicy::Batch && self.options.sync_on_drop {
            let state = self.lock();
            if state.dirty {
                // Nobody to tell on failure; the data is in the page cache.
                let _ = state.file.sync_data();
            }
        }
    }
}

/// Opens (creating) the log for appending. The log lives in the project,
/// which may be a cloned repository: a committed symlink at its path would
/// make ahp append to whatever file it names (a shell's rc file expands
/// `$(…)` found in a logged command). So on Unix the last component must
/// not be a symlink (`O_NOFOLLOW`), the open does not wait on a FIFO
/// (`O_NONBLOCK`), and anything but a regular file is refused.
///
/// A new log is created readable by its owner only (0600): even masked,
/// it records the commands and files of every tool call. An existing one
/// that others may read is narrowed to that, where we own it.
fn open_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The flag's value fits an i32 (it is one bit of open(2)'s flags).
        options
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32 | lock::nonblock_flag())
            .mode(0o600);
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
            return io::Error::new(
                e.kind(),
                "it is a symbolic link; the log is not written through a link \
                 (a repository could point it at any of your files): remove the link",
            );
        }
        e
    })?;
    let meta = lock::ensure_regular(&file)?;
    #[cfg(unix)]
    private(&file, &meta);
    #[cfg(not(unix))]
    drop(meta);
    Ok(file)
}

/// Narrows a log that group or others may read to its owner. Best effort:
/// someone else's log (a shared project) keeps its mode.
#[cfg(unix)]
fn private(file: &File, meta: &fs::Metadata) {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o077 != 0 {
        let _ = file.set_permissions(fs::Permissions::from_mode(0o600));
    }
}

/// A diagnostic the log writes about itself.
fn note(level: Level, message: String) -> Diagnostic {
    Diagnostic {
        id: ahp_engine::Uuid::new_v4(),
        level,
        timestamp: chrono::Utc::now(),
        source: "ahp".into(),
        event: None,
        correlation_id: None,
        message,
        file: None,
        line: None,
    }
}

/// Bytes as B, KiB, MiB or GiB with one decimal: how the log and the
/// commands that read it speak of sizes.
///
/// ```
/// assert_eq!(ahp_signals_log::human_bytes(512), "512 B");
/// assert_eq!(ahp_signals_log::human_bytes(1536), "1.5 KiB");
/// ```
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn ignore_missing(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Whether the last byte of the file (of length `len` > 0) is not `\n`.
#[cfg(unix)]
fn ends_torn(file: &File, len: u64) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8; 1];
    Ok(file.read_at(&mut last, len - 1)? == 1 && last[0] != b'\n')
}

#[cfg(not(unix))]
fn ends_torn(_: &File, _: u64) -> io::Result<bool> {
    Ok(false)
}

impl SignalSink for SignalLog {
    fn record_signal(&self, signal: &Signal) -> Result<(), SinkError> {
        self.append_wire(WireRef::Signal(signal))
            .map_err(|e| SinkError(e.to_string()))
    }

    fn record_diagnostic(&self, diagnostic: &Diagnostic) -> Result<(), SinkError> {
        self.append_wire(WireRef::diagnostic(diagnostic))
            .map_err(|e| SinkError(e.to_string()))
    }

    fn record_run(&self, run: &RunRecord) -> Result<(), SinkError> {
        self.append_wire(WireRef::Run(run))
            .map_err(|e| SinkError(e.to_string()))
    }
}
