//! Analytics over one or several logs at full speed: the lines of each log
//! are read (and decompressed) by a thread of their own, parsed in chunks
//! on every core, and folded in order on the caller's thread.
//!
//! The fold sees exactly what [`crate::read_many`] yields — the same
//! records in the same order, the same lines skipped — but reads only the
//! fields analytics needs ([`crate::lean`]). Memory stays bounded: each
//! log has a fixed number of chunk buffers, handed back by the fold when it
//! is done with them, so a reader that runs ahead waits.

use crate::analytics::stats::{Stats, StatsBuilder};
use crate::follow::{Files, Unreadable, open_files};
use crate::lean::Chunk;
use crate::view::View;
use crate::{Filter, LogError, Selection};
use chrono::{DateTime, Utc};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{BufRead, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

/// How many skipped-line locations are kept per log (the count is exact).
const KEEP_SKIPPED: usize = 1024;

/// Chunk buffers in flight over all logs: enough to keep every core busy
/// while the fold works through one.
const BUFFERS: usize = 16;

/// The size of a chunk for one log. Smaller chunks for many logs keep the
/// memory of all their buffers bounded.
const CHUNK_BYTES: usize = 512 * 1024;

/// The smallest chunk, however many logs.
const MIN_CHUNK_BYTES: usize = 64 * 1024;

/// Logs opened for analytics: [`open`].
pub struct Logs {
    logs: Vec<(PathBuf, Files, Vec<Unreadable>)>,
    total_bytes: u64,
}

impl std::fmt::Debug for Logs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logs")
            .field(
                "logs",
                &self.logs.iter().map(|(p, _, _)| p).collect::<Vec<_>>(),
            )
            .field("total_bytes", &self.total_bytes)
            .finish_non_exhaustive()
    }
}

/// What a log's read skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// The log, as given to [`open`].
    pub log: PathBuf,
    /// How many unparseable lines were skipped in it and its rotated files.
    pub count: usize,
    /// Where: file and 1-based line number, in reading order; at most the
    /// first 1024.
    pub at: Vec<(PathBuf, usize)>,
    /// Its rotated segments left out, whole or from where they could not
    /// be read on (see [`crate::LogReader::unreadable`]).
    pub unreadable: Vec<Unreadable>,
}

/// Opens the logs at `paths`, each with its rotated files, to be read as
/// one, merged by timestamp as [`crate::read_many`] merges them.
///
/// Every log must exist ([`LogError::Open`] names the first that does not).
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::{scan, Filter, Record, SignalLog};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("signals.jsonl");
/// let log = SignalLog::open(&path).unwrap();
/// log.append(&Record::from(Signal::block("no"))).unwrap();
/// let logs = scan::open(&[&path]).unwrap();
/// let (stats, skipped) = logs.stats(Filter::default(), |_, _| {}).unwrap();
/// assert_eq!(stats.signals, 1);
/// assert_eq!(skipped[0].count, 0);
/// ```
pub fn open<P: AsRef<Path>>(paths: &[P]) -> Result<Logs, LogError> {
    let mut logs = Vec::with_capacity(paths.len());
    let mut total_bytes = 0;
    for path in paths {
        let (files, size, unreadable) = open_files(path.as_ref())?;
        total_bytes += size;
        logs.push((path.as_ref().to_path_buf(), files, unreadable));
    }
    Ok(Logs { logs, total_bytes })
}

impl Logs {
    /// The size of all the logs and their rotated files when opened: with
    /// the bytes a progress callback is given, the share read.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The statistics of the records `filter` selects (a [`Selection`]:
    /// the responses of selected signals are kept), with what each log
    /// skipped; the same figures as [`StatsBuilder`] fed every record of
    /// [`crate::read_many`] that the selection matches.
    ///
    /// `progress` is called now and then with the bytes read so far and
    /// the records folded.
    pub fn stats(
        self,
        filter: Filter,
        progress: impl FnMut(u64, u64),
    ) -> Result<(Stats, Vec<Skipped>), LogError> {
        let mut select = Selection::new(filter);
        let all = select.selects_all();
        let mut b = StatsBuilder::new();
        let skipped = self.fold(
            |v| {
                if all || select.matches_view(v) {
                    b.add_view(v);
                }
            },
            progress,
        )?;
        Ok((b.finish(), skipped))
    }

    /// Feeds every record of the logs to `f`, merged and in order.
    pub(crate) fn fold(
        self,
        mut f: impl FnMut(&View<'_>),
        mut progress: impl FnMut(u64, u64),
    ) -> Result<Vec<Skipped>, LogError> {
        let n = self.logs.len();
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8);
        let per_log = (BUFFERS / n.max(1)).max(3);
        let chunk_bytes =
            (CHUNK_BYTES * BUFFERS / (per_log * n.max(1))).clamp(MIN_CHUNK_BYTES, CHUNK_BYTES);
        std::thread::scope(|scope| {
            let (job_tx, job_rx) = channel::<Job>();
            let (done_tx, done_rx) = channel::<Msg>();
            let job_rx = Arc::new(Mutex::new(job_rx));
            let mut states = Vec::with_capacity(n);
            for (log, (path, files, unreadable)) in self.logs.into_iter().enumerate() {
                let (free_tx, free_rx) = channel::<Chunk>();
                for _ in 0..per_log {
                    let _ = free_tx.send(Chunk::default());
                }
                let names: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
                let (jobs, done) = (job_tx.clone(), done_tx.clone());
                scope.spawn(move || produce(log, files, chunk_bytes, free_rx, jobs, done));
                states.push(LogState {
                    skipped: Skipped {
                        log: path,
                        unreadable,
                        ..Skipped::default()
                    },
                    files: names,
                    free: free_tx,
                    pending: BTreeMap::new(),
                    next: 0,
                    end: None,
                    current: None,
                    at: 0,
                });
            }
            drop(job_tx);
            for _ in 0..workers {
                let (jobs, done) = (Arc::clone(&job_rx), done_tx.clone());
                scope.spawn(move || parse(&jobs, &done));
            }
            drop(done_tx);
            let mut merge = Merge {
                states,
                done: done_rx,
                bytes: 0,
                records: 0,
            };
            let result = merge.run(&mut f, &mut progress);
            // Dropping the channels ends every thread, whatever it waits on.
            let skipped = merge.states.into_iter().map(|s| s.skipped).collect();
            drop(merge.done);
            result.map(|()| skipped)
        })
    }
}

/// Lines of a log to parse.
struct Job {
    log: usize,
    seq: u64,
    chunk: Chunk,
}

/// What comes back to the fold.
enum Msg {
    /// A parsed chunk.
    Parsed(Job),
    /// A log was read to its end in `chunks` chunks.
    End { log: usize, chunks: u64 },
    /// A log could not be read.
    Failed(LogError),
    /// A rotated segment of a log broke off; the read went on.
    Unreadable { log: usize, file: Unreadable },
    /// A parser failed on a chunk of this log (a bug): the read stops
    /// rather than count without those lines.
    Panicked { log: usize },
}

/// Reads the files of one log into chunks of whole lines.
fn produce(
    log: usize,
    files: Files,
    chunk_bytes: usize,
    free: Receiver<Chunk>,
    jobs: Sender<Job>,
    done: Sender<Msg>,
) {
    let mut seq = 0;
    let last = files.len().saturating_sub(1);
    for (file, (path, mut reader)) in files.into_iter().enumerate() {
        let mut line = 1;
        let mut eof = false;
        while !eof {
            let Ok(mut chunk) = free.recv() else { return };
            chunk.clear();
            chunk.file = file;
            chunk.first_line = line;
            if let Err(error) = fill(&mut reader, &mut chunk.bytes, chunk_bytes, &mut eof) {
                // The current file is read last; a rotated segment that
                // breaks off keeps what was read, and the read goes on.
                if file == last {
                    let _ = done.send(Msg::Failed(LogError::Read { path, error }));
                    return;
                }
                let file = (path.clone(), error.to_string());
                if done.send(Msg::Unreadable { log, file }).is_err() {
                    return;
                }
                eof = true;
            }
            line += memchr::memchr_iter(b'\n', &chunk.bytes).count();
            if chunk.bytes.last().is_some_and(|&b| b != b'\n') {
                line += 1;
            }
            if jobs.send(Job { log, seq, chunk }).is_err() {
                return;
            }
            seq += 1;
        }
    }
    let _ = done.send(Msg::End { log, chunks: seq });
}

/// Appends lines from `reader` to `bytes` until they hold at least
/// `want` bytes ending at a line's end, or the file ends.
fn fill(
    reader: &mut Box<dyn BufRead + Send>,
    bytes: &mut Vec<u8>,
    want: usize,
    eof: &mut bool,
) -> std::io::Result<()> {
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            *eof = true;
            return Ok(());
        }
        if bytes.len() + buf.len() >= want
            && let Some(i) = memchr::memrchr(b'\n', buf)
        {
            bytes.extend_from_slice(&buf[..=i]);
            reader.consume(i + 1);
            return Ok(());
        }
        let n = buf.len();
        bytes.extend_from_slice(buf);
        reader.consume(n);
    }
}

/// A worker: parses chunks until there are no more.
fn parse(jobs: &Mutex<Receiver<Job>>, done: &Sender<Msg>) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut job) = job else { return };
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.chunk.parse()));
        let msg = match parsed {
            Ok(()) => Msg::Parsed(job),
            Err(_) => Msg::Panicked { log: job.log },
        };
        if done.send(msg).is_err() {
            return;
        }
    }
}

/// The fold's view of one log.
struct LogState {
    skipped: Skipped,
    files: Vec<PathBuf>,
    /// Where finished chunks go back to.
    free: Sender<Chunk>,
    /// Parsed chunks that came early, by sequence number.
    pending: BTreeMap<u64, Chunk>,
    /// The sequence number of the chunk to fold next.
    next: u64,
    /// How many chunks the log has, once read to the end.
    end: Option<u64>,
    current: Option<Chunk>,
    /// The next record of `current`.
    at: usize,
}

/// The k-way merge of the logs' parsed chunks.
struct Merge {
    states: Vec<LogState>,
    done: Receiver<Msg>,
    bytes: u64,
    records: u64,
}

impl Merge {
    fn run(
        &mut self,
        f: &mut impl FnMut(&View<'_>),
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<(), LogError> {
        // The head of each log: its earliest, ties to the log given first.
        let mut heads: BinaryHeap<Reverse<(DateTime<Utc>, usize)>> = BinaryHeap::new();
        for log in 0..self.states.len() {
            if let Some(t) = self.head(log, progress)? {
                heads.push(Reverse((t, log)));
            }
        }
        while let Some(Reverse((_, log))) = heads.pop() {
            loop {
                let state = &mut self.states[log];
                if let Some(chunk) = &state.current
                    && let Some(r) = chunk.records.get(state.at)
                {
                    f(&chunk.view(r));
                    state.at += 1;
                    self.records += 1;
                }
                let Some(t) = self.head(log, progress)? else {
                    break;
                };
                // Still the earliest head (always, for one log): go on
                // without a round through the heap.
                if heads.peek().is_none_or(|Reverse(other)| (t, log) < *other) {
                    continue;
                }
                heads.push(Reverse((t, log)));
                break;
            }
        }
        Ok(())
    }

    /// The error that stops a read of `log` that cannot go on.
    fn broken(&self, log: usize, why: &str) -> LogError {
        LogError::Read {
            path: self.states[log].skipped.log.clone(),
            error: std::io::Error::other(why),
        }
    }

    /// The timestamp of the next record of `log`, waiting for its chunk if
    /// need be; `None` at its end.
    fn head(
        &mut self,
        log: usize,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<Option<DateTime<Utc>>, LogError> {
        loop {
            let state = &mut self.states[log];
            if let Some(chunk) = &state.current {
                if let Some(r) = chunk.records.get(state.at) {
                    return Ok(Some(Chunk::timestamp(r)));
                }
                if let Some(done) = state.current.take() {
                    // The producer may have ended: then nobody needs it.
                    let _ = state.free.send(done);
                }
            }
            if let Some(chunk) = state.pending.remove(&state.next) {
                state.next += 1;
                state.at = 0;
                self.bytes += chunk.len() as u64;
                let s = &mut state.skipped;
                s.count += chunk.skipped;
                let room = KEEP_SKIPPED.saturating_sub(s.at.len());
                let file = state.files.get(chunk.file).cloned().unwrap_or_default();
                s.at.extend(
                    chunk
                        .skipped_lines
                        .iter()
                        .take(room)
                        .map(|&l| (file.clone(), l)),
                );
                state.current = Some(chunk);
                progress(self.bytes, self.records);
                continue;
            }
            if state.end == Some(state.next) {
                return Ok(None);
            }
            match self.done.recv() {
                Ok(Msg::Parsed(job)) => {
                    self.states[job.log].pending.insert(job.seq, job.chunk);
                }
                Ok(Msg::End { log, chunks }) => self.states[log].end = Some(chunks),
                Ok(Msg::Failed(e)) => return Err(e),
                Ok(Msg::Unreadable { log, file }) => self.states[log].skipped.unreadable.push(file),
                Ok(Msg::Panicked { log }) => {
                    return Err(self.broken(log, "a parser thread failed"));
                }
                // Every thread ended without the log's end: only after a
                // failure, but never take it for the end.
                Err(_) => return Err(self.broken(log, "the reader threads ended early")),
            }
        }
    }
}
