//! The writer: one record, one line, one write.

use crate::record::WireRef;
use crate::{LogError, Record};
use ahp_engine::RunRecord;
use ahp_engine::{Diagnostic, Signal, SignalSink, SinkError};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// An open signal log, appending one JSON line per [`Record`].
///
/// Every append is a single `write` of `line + "\n"` on a handle opened with
/// `O_APPEND`, so the kernel places each line at the end of the file whole:
/// many threads (sharing one `SignalLog` through an `Arc`) and many
/// processes (each with its own) can append at once without interleaving or
/// losing lines. This holds on local file systems for records of ordinary
/// size; network file systems (NFS) do not guarantee it.
///
/// Nothing is fsynced: a record is in the OS's page cache when `append`
/// returns, which survives a crash of the process, not of the machine.
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
    // A Mutex, although O_APPEND alone already keeps single `write`s whole
    // (and is all that separates processes): `write_all` may need several
    // `write` calls after a short write (a signal, a nearly full disk), and
    // the lock keeps other threads' lines out of the gap; the tail check
    // below seeks the shared handle, which must not race; and rotation and
    // the fsync policy will keep their state here. An uncontended lock
    // costs nanoseconds next to the write syscall it guards.
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Opened read + append: writes always go to the end (O_APPEND); reads
    /// are used once, for the tail check.
    file: File,
    /// Whether this handle has already made sure the file ends in `\n`.
    tail_checked: bool,
}

impl SignalLog {
    /// Opens (creating it and its parent directories if needed) the log at
    /// `path` for appending.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("a/b/.ahp/signals.jsonl");
    /// let log = ahp_signals_log::SignalLog::open(&path).unwrap();
    /// assert_eq!(log.path(), path);
    /// assert!(path.is_file());
    /// ```
    pub fn open(path: impl Into<PathBuf>) -> Result<SignalLog, LogError> {
        let path = path.into();
        let fail = |error| LogError::Open {
            path: path.clone(),
            error,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(fail)?;
        Ok(SignalLog {
            path,
            state: Mutex::new(State {
                file,
                tail_checked: false,
            }),
        })
    }

    /// The log's path, as given to [`SignalLog::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` as one line.
    ///
    /// The first append through this handle first makes sure the file ends
    /// in a newline: if a crash left a torn final line, the new record
    /// starts on a line of its own (readers skip the torn one).
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

    fn append_wire(&self, wire: WireRef<'_>) -> Result<(), LogError> {
        // buf[0] is the newline that repairs a torn tail; it is written only
        // when needed, in the same write as the record.
        let mut buf = Vec::with_capacity(512);
        buf.push(b'\n');
        serde_json::to_writer(&mut buf, &wire).map_err(|error| LogError::Serialize {
            kind: wire.kind(),
            error,
        })?;
        // Compact JSON escapes control characters in strings, so the line
        // has no newline of its own.
        debug_assert!(!buf[1..].contains(&b'\n'));
        buf.push(b'\n');

        let fail = |error| LogError::Write {
            path: self.path.clone(),
            error,
        };
        let mut state = self.lock();
        let mut start = 1;
        if !state.tail_checked {
            if ends_torn(&mut state.file).map_err(fail)? {
                start = 0;
            }
            state.tail_checked = true;
        }
        state.file.write_all(&buf[start..]).map_err(fail)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves nothing inconsistent: at
        // worst a line was half written, which readers skip.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether the file is non-empty and its last byte is not `\n`. Several
/// writers may see the same torn tail and each add a newline; the empty
/// lines that leaves are ignored by readers.
fn ends_torn(file: &mut File) -> io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    Ok(file.read(&mut last)? == 1 && last[0] != b'\n')
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
