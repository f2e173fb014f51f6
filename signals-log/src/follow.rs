//! Reading a log with its rotated files, filtered, in constant memory.

use crate::lock;
use crate::segments::{self, Segment, SegmentKind};
use crate::{Filter, LogError, Reader, Record};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many skipped-line locations a [`LogReader`] keeps (the count is
/// always exact).
const KEEP_SKIPPED: usize = 1024;

/// How long [`read_all`] waits for the log to reappear when it finds it in
/// the middle of a rotation (compressed and removed, the new file not yet
/// created).
const ROTATION_WAIT: Duration = Duration::from_millis(500);

/// Opens the log at `path` and its rotated files for reading, oldest first:
/// the compressed segments `signals.jsonl.1.gz`, `.2.gz`, … (and before
/// them the uncompressed `signals.jsonl.k` an older ahp left, the highest
/// `k` first), then `signals.jsonl`.
///
/// The set of files is fixed when this is called: it takes a shared lock
/// on the log while opening them, so a rotation by a writer cannot make it
/// read a record twice or miss a file; records appended afterwards to the
/// open current file are read too. A missing log is an error
/// ([`LogError::Open`]); a log caught in the middle of a rotation
/// (compressed and removed, the new file not created yet) is waited for,
/// up to 0.5 s.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::{read_all, Filter, LogOptions, Record, SignalLog};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("signals.jsonl");
/// let options = LogOptions { max_bytes: Some(1), ..LogOptions::default() }; // rotate every record
/// let log = SignalLog::open_with(&path, options).unwrap();
/// for i in 0..3 {
///     log.append(&Record::from(Signal::aid(format!("note {i}")))).unwrap();
/// }
/// assert!(dir.path().join("signals.jsonl.2.gz").is_file());
/// let records: Vec<_> = read_all(&path).unwrap().map(Result::unwrap).collect();
/// assert_eq!(records.len(), 3);
/// ```
pub fn read_all(path: impl AsRef<Path>) -> Result<LogReader, LogError> {
    let (files, total_bytes, unreadable) = open_files(path.as_ref())?;
    Ok(LogReader {
        files,
        current: None,
        done_bytes: 0,
        total_bytes,
        filter: Filter::default(),
        skipped: 0,
        skipped_at: Vec::new(),
        unreadable,
    })
}

/// The files of a log, each open, in reading order.
pub(crate) type Files = VecDeque<(PathBuf, Box<dyn BufRead + Send>)>;

/// A rotated segment that could not be read (a truncated or empty gzip
/// file, a link, …): the records in it before the damage are read, the
/// rest of it is left out, and the read goes on with the next file.
pub type Unreadable = (PathBuf, String);

/// Opens the files of the log at `path` as [`read_all`] describes, with
/// the number of bytes a full read yields and the rotated segments that
/// could not be opened (left out; the current file must open).
pub(crate) fn open_files(path: &Path) -> Result<(Files, u64, Vec<Unreadable>), LogError> {
    let open_fail = |error| LogError::Open {
        path: path.to_path_buf(),
        error,
    };
    // Lock the current file, and make sure it still is the current one.
    let started = Instant::now();
    let current_file = loop {
        let file = match lock::open_read(path) {
            Ok(f) => f,
            // A writer is rotating: it renamed the full log to `.1` and is
            // about to create the new one. Wait for it rather than call a
            // log with history missing.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && started.elapsed() < ROTATION_WAIT
                    && segments::rotated(path).is_ok_and(|s| !s.is_empty()) =>
            {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(e) => return Err(open_fail(e)),
        };
        lock::lock_shared(&file).map_err(open_fail)?;
        let facts = lock::facts(&file).map_err(open_fail)?;
        if lock::path_id(path).map_err(open_fail)? == Some(facts.id) {
            break file;
        }
    };
    let current = current_file.try_clone().map_err(open_fail)?;
    let mut files: Files = VecDeque::new();
    let mut total_bytes = 0;
    let mut unreadable = Vec::new();
    let listed = segments::rotated(path).map_err(open_fail);
    let opened = listed.map(|list| {
        for segment in list {
            match segments::open(&segment) {
                Ok((reader, size)) => {
                    total_bytes += size;
                    files.push_back((segment.path, reader));
                }
                // One damaged segment must not hide every other record.
                Err(error) => unreadable.push((segment.path, error.to_string())),
            }
        }
    });
    let _ = lock::unlock(&current);
    opened?;
    // The sizes now, once (the current file may grow while it is read).
    let current = Segment {
        path: path.to_path_buf(),
        kind: SegmentKind::Current,
    };
    let (reader, size) = segments::open_file(&current, current_file).map_err(open_fail)?;
    total_bytes += size;
    files.push_back((current.path, reader));
    Ok((files, total_bytes, unreadable))
}

/// The records of a log and its rotated files, oldest first (see
/// [`read_all`]), optionally filtered ([`LogReader::filter`]), streamed
/// line by line.
///
/// Unparseable lines (a torn final line left by a crash, garbage) are
/// skipped and reported: [`LogReader::skipped`] counts them,
/// [`LogReader::skipped_at`] says where.
pub struct LogReader {
    files: Files,
    current: Option<Reader<Box<dyn BufRead + Send>>>,
    /// Bytes of the files already read to the end.
    done_bytes: u64,
    total_bytes: u64,
    filter: Filter,
    skipped: usize,
    skipped_at: Vec<(PathBuf, usize)>,
    unreadable: Vec<Unreadable>,
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field(
                "files",
                &self.files.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            )
            .field("done_bytes", &self.done_bytes)
            .field("total_bytes", &self.total_bytes)
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl LogReader {
    /// Yields only the records `filter` matches.
    pub fn filter(mut self, filter: Filter) -> LogReader {
        self.filter = filter;
        self
    }

    /// How many lines read so far were skipped as unparseable, over all
    /// files.
    pub fn skipped(&self) -> usize {
        self.skipped + self.current.as_ref().map_or(0, Reader::skipped)
    }

    /// Where the skipped lines are: file and 1-based line number, in
    /// reading order; at most the first 1024.
    pub fn skipped_at(&self) -> Vec<(PathBuf, usize)> {
        let mut all = self.skipped_at.clone();
        if let Some(r) = &self.current {
            all.extend(
                r.skipped_lines()
                    .iter()
                    .map(|&l| (r.path().to_path_buf(), l)),
            );
        }
        all.truncate(KEEP_SKIPPED);
        all
    }

    /// Bytes read so far over all files (counted as lines are read, no
    /// extra system calls).
    pub fn bytes_read(&self) -> u64 {
        self.done_bytes + self.current.as_ref().map_or(0, Reader::bytes_read)
    }

    /// The rotated segments left out, whole or from where they could not
    /// be read on, with why.
    pub fn unreadable(&self) -> &[Unreadable] {
        &self.unreadable
    }

    /// The size of the log and its rotated files when [`read_all`] opened
    /// them: with [`LogReader::bytes_read`], the progress of the read (a
    /// file that grows meanwhile can take `bytes_read` past it).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    fn finish_current(&mut self) {
        if let Some(r) = self.current.take() {
            self.done_bytes += r.bytes_read();
            self.skipped += r.skipped();
            let room = KEEP_SKIPPED.saturating_sub(self.skipped_at.len());
            self.skipped_at.extend(
                r.skipped_lines()
                    .iter()
                    .take(room)
                    .map(|&l| (r.path().to_path_buf(), l)),
            );
        }
    }
}

impl Iterator for LogReader {
    type Item = Result<Record, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.current.is_none() {
                let (path, file) = self.files.pop_front()?;
                self.current = Some(Reader::new(file, path));
            }
            let reader = self.current.as_mut()?;
            match reader.next() {
                Some(Ok(record)) if self.filter.matches(&record) => return Some(Ok(record)),
                Some(Ok(_)) => {}
                // A rotated segment (the current file is read last) that
                // breaks off: what came before counts, the rest is said.
                Some(Err(e)) if !self.files.is_empty() => {
                    let path = reader.path().to_path_buf();
                    self.unreadable.push((path, e.to_string()));
                    self.finish_current();
                }
                Some(Err(e)) => return Some(Err(e)),
                None => self.finish_current(),
            }
        }
    }
}

/// Opens several logs (each with its rotated files, as [`read_all`]) to
/// read them as one: their records merged by timestamp.
///
/// Of the records at the head of each log the earliest comes first, the
/// log given first on a tie; each log's own records keep their order (a
/// log is not sorted by time: a response can be older than the run after
/// it), so what a later record of a log refers to has been read before
/// it, as in a single log.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::{read_many, Record, SignalLog};
/// use chrono::{TimeZone, Utc};
/// # let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
/// for (path, hours) in [(&a, [1, 3]), (&b, [2, 4])] {
///     let log = SignalLog::open(path).unwrap();
///     for h in hours {
///         let mut s = Signal::aid(format!("at {h}"));
///         s.header.timestamp = Utc.with_ymd_and_hms(2026, 1, 1, h, 0, 0).unwrap();
///         log.append(&Record::from(s)).unwrap();
///     }
/// }
/// let hours: Vec<u32> = read_many(&[a, b])
///     .unwrap()
///     .map(|r| chrono::Timelike::hour(&r.unwrap().timestamp()))
///     .collect();
/// assert_eq!(hours, [1, 2, 3, 4]);
/// ```
pub fn read_many<P: AsRef<Path>>(paths: &[P]) -> Result<MergedReader, LogError> {
    let readers = paths.iter().map(read_all).collect::<Result<Vec<_>, _>>()?;
    Ok(MergedReader {
        heads: readers.iter().map(|_| None).collect(),
        done: vec![false; readers.len()],
        readers,
    })
}

/// The records of several logs merged by timestamp (see [`read_many`]).
#[derive(Debug)]
pub struct MergedReader {
    readers: Vec<LogReader>,
    heads: Vec<Option<Record>>,
    done: Vec<bool>,
}

impl MergedReader {
    /// Yields only the records `filter` matches.
    pub fn filter(mut self, filter: Filter) -> MergedReader {
        self.readers = self
            .readers
            .into_iter()
            .map(|r| r.filter(filter.clone()))
            .collect();
        self
    }

    /// The reader of each log, in the order given: what each skipped.
    pub fn logs(&self) -> &[LogReader] {
        &self.readers
    }

    /// Bytes read so far over all logs.
    pub fn bytes_read(&self) -> u64 {
        self.readers.iter().map(LogReader::bytes_read).sum()
    }

    /// The size of all the logs when they were opened.
    pub fn total_bytes(&self) -> u64 {
        self.readers.iter().map(LogReader::total_bytes).sum()
    }

    /// Unparseable lines skipped so far over all logs.
    pub fn skipped(&self) -> usize {
        self.readers.iter().map(LogReader::skipped).sum()
    }
}

impl Iterator for MergedReader {
    type Item = Result<Record, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut first: Option<usize> = None;
        for i in 0..self.readers.len() {
            if self.heads[i].is_none() && !self.done[i] {
                match self.readers[i].next() {
                    Some(Ok(r)) => self.heads[i] = Some(r),
                    Some(Err(e)) => {
                        self.done[i] = true;
                        return Some(Err(e));
                    }
                    None => self.done[i] = true,
                }
            }
            if let Some(r) = &self.heads[i] {
                let earlier = match first.and_then(|f| self.heads[f].as_ref()) {
                    Some(best) => r.timestamp() < best.timestamp(),
                    None => true,
                };
                if earlier {
                    first = Some(i);
                }
            }
        }
        self.heads[first?].take().map(Ok)
    }
}
