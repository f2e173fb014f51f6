//! A streaming reader that skips what it cannot parse.

use crate::{LogError, Record};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// How many skipped line numbers a [`Reader`] keeps (the count is always
/// exact), so a file of garbage cannot make it grow without bound.
const KEEP_SKIPPED_LINES: usize = 1024;

/// Opens the log at `path` for reading, record by record.
///
/// A log that does not exist is an error ([`LogError::Open`]); whether that
/// means "no records" is the caller's call.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::{read, Record, SignalLog};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("signals.jsonl");
/// let log = SignalLog::open(&path).unwrap();
/// log.append(&Record::from(Signal::prompt("large diff"))).unwrap();
/// for record in read(&path).unwrap() {
///     assert_eq!(record.unwrap().kind(), "signal");
/// }
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<Reader, LogError> {
    let path = path.as_ref();
    let file = crate::lock::open_read(path).map_err(|error| LogError::Open {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(Reader::new(BufReader::new(file), path))
}

/// The records of a log, in file order, line by line in constant memory
/// (one line's worth).
///
/// A line that is not a record — torn by a crash, invalid UTF-8, an unknown
/// `kind` — is skipped and counted ([`Reader::skipped`]), not an error; so
/// is a final line still being written by another process. Empty lines are
/// ignored. The only errors are failures to read the file; after one, the
/// iterator ends.
///
/// ```
/// use ahp_signals_log::Reader;
/// let text = "{\"kind\":\"signal\",\"hea\n\n";
/// let mut reader = Reader::new(text.as_bytes(), "signals.jsonl");
/// assert!(reader.next().is_none());
/// assert_eq!(reader.skipped(), 1);
/// assert_eq!(reader.skipped_lines(), [1]);
/// ```
#[derive(Debug)]
pub struct Reader<R = BufReader<File>> {
    inner: R,
    path: PathBuf,
    buf: Vec<u8>,
    line: usize,
    bytes: u64,
    skipped: usize,
    skipped_lines: Vec<usize>,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    /// Reads records from `inner`; `path` names it in error messages.
    pub fn new(inner: R, path: impl Into<PathBuf>) -> Reader<R> {
        Reader {
            inner,
            path: path.into(),
            buf: Vec::new(),
            line: 0,
            bytes: 0,
            skipped: 0,
            skipped_lines: Vec::new(),
            done: false,
        }
    }

    /// The path given to [`read`] or [`Reader::new`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many lines read so far were skipped as unparseable.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// The (1-based) numbers of the skipped lines, in order; at most the
    /// first 1024 of them.
    pub fn skipped_lines(&self) -> &[usize] {
        &self.skipped_lines
    }

    /// How many bytes have been read so far (counted as lines are read, no
    /// extra system calls): with the file's size, the progress of a read.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.inner.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(n) => {
                    self.line += 1;
                    self.bytes += n as u64;
                    let line = self.buf.trim_ascii();
                    if line.is_empty() {
                        continue;
                    }
                    match serde_json::from_slice::<Record>(line) {
                        Ok(mut record) => {
                            record.derive_id(line);
                            return Some(Ok(record));
                        }
                        Err(_) => {
                            self.skipped += 1;
                            if self.skipped_lines.len() < KEEP_SKIPPED_LINES {
                                self.skipped_lines.push(self.line);
                            }
                        }
                    }
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(LogError::Read {
                        path: self.path.clone(),
                        error,
                    }));
                }
            }
        }
        None
    }
}
