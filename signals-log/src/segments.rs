//! The files of one log: the current file and its rotated, compressed
//! segments.
//!
//! A log at `signals.jsonl` rotates into `signals.jsonl.<N>.gz`, where `N`
//! only grows (1, 2, 3, …): a segment keeps its name for life, so a
//! shipper's cursor ("segment 7, byte 1234") stays true across later
//! rotations. The current file is the segment after the last rotated one.
//! Logs written by older ahp versions rotated by renaming to
//! `signals.jsonl.1` (newest) … `.k` (oldest), uncompressed; those are still
//! read, before every numbered segment.

use crate::lock;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One file of a log, in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its path.
    pub path: PathBuf,
    /// What it is.
    pub kind: SegmentKind,
}

/// Which of a log's files a [`Segment`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SegmentKind {
    /// `signals.jsonl.<k>` written by an older ahp: uncompressed, `k` = 1 is
    /// the newest.
    Legacy(u64),
    /// `signals.jsonl.<N>.gz`: rotated and compressed, `N` grows.
    Rotated(u64),
    /// `signals.jsonl`, appended to now.
    Current,
}

impl Segment {
    /// Opens it for reading its lines (decompressing a rotated segment),
    /// with the number of bytes a full read yields.
    ///
    /// ```
    /// use ahp_signals_log::segments;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let log = dir.path().join("signals.jsonl");
    /// for segment in segments::rotated(&log).unwrap() {
    ///     let (lines, size) = segment.open().unwrap();
    /// }
    /// ```
    pub fn open(&self) -> io::Result<(Box<dyn BufRead + Send>, u64)> {
        open(self)
    }

    /// The segment number a cursor names it by: `N` for a rotated segment,
    /// the number it will get at its rotation for the current file, and 0
    /// for a legacy file (read, never named by a cursor).
    pub fn number(&self, next: u64) -> u64 {
        match self.kind {
            SegmentKind::Legacy(_) => 0,
            SegmentKind::Rotated(n) => n,
            SegmentKind::Current => next,
        }
    }
}

/// The rotated segment `n` of the log at `path`: `signals.jsonl.<n>.gz`.
pub(crate) fn rotated_path(path: &Path, n: u64) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}.gz"));
    name.into()
}

/// The log's file name, as the prefix of its segments' names.
fn file_name(path: &Path) -> Option<String> {
    path.file_name()?.to_str().map(str::to_owned)
}

/// The rotated and legacy files of the log at `path`, oldest first
/// (legacy `.k` from the highest `k`, then `.N.gz` by `N`), without the
/// current file. Names that merely look alike (`.3.gz.tmp`, `.x.gz`) are
/// not segments.
pub fn rotated(path: &Path) -> io::Result<Vec<Segment>> {
    let Some(name) = file_name(path) else {
        return Ok(Vec::new());
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(file) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        // A link or another special file named like a segment is listed,
        // so that readers refuse it loudly (it is never followed: see
        // `open`), and rotation leaves it or drops the link itself.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(rest) = file.strip_prefix(&name).and_then(|r| r.strip_prefix('.')) else {
            continue;
        };
        let kind = match rest.strip_suffix(".gz") {
            Some(n) => number(n).map(SegmentKind::Rotated),
            None => number(rest).map(SegmentKind::Legacy),
        };
        if let Some(kind) = kind {
            out.push(Segment {
                path: dir.join(&file),
                kind,
            });
        }
    }
    out.sort_by_key(|s| match s.kind {
        // Legacy first, the highest (oldest) k first.
        SegmentKind::Legacy(k) => (0, u64::MAX - k),
        SegmentKind::Rotated(n) => (1, n),
        SegmentKind::Current => (2, 0),
    });
    Ok(out)
}

/// A segment number: decimal digits only, no sign, no leading zero, at
/// most `i64::MAX` (a database keeps it as a `bigint`; a committed file
/// named with a huge number would otherwise pin the numbering at its end).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok().filter(|&n| listable(n))
}

/// Whether `n` may number a segment (readers list it).
pub(crate) fn listable(n: u64) -> bool {
    n < i64::MAX as u64
}

/// The number the current file gets when it rotates: one past the highest
/// rotated segment.
pub fn next_number(rotated: &[Segment]) -> u64 {
    rotated
        .iter()
        .filter_map(|s| match s.kind {
            SegmentKind::Rotated(n) => Some(n),
            _ => None,
        })
        .max()
        .map_or(1, |n| n.saturating_add(1))
}

/// Opens a segment for reading its lines (decompressing a rotated one),
/// with the size a full read will have yielded: the file's size, or for a
/// gzip file the size its trailer records (modulo 4 GiB, as gzip stores it;
/// segments are far smaller).
pub(crate) fn open(segment: &Segment) -> io::Result<(Box<dyn BufRead + Send>, u64)> {
    let file = match segment.kind {
        SegmentKind::Current => lock::open_read(&segment.path)?,
        _ => lock::open_read_nofollow(&segment.path)?,
    };
    open_file(segment, file)
}

/// As [`open`], for a file already opened.
pub(crate) fn open_file(
    segment: &Segment,
    file: File,
) -> io::Result<(Box<dyn BufRead + Send>, u64)> {
    match segment.kind {
        SegmentKind::Rotated(_) => {
            let size = gzip_size(&file)?;
            Ok((
                Box::new(BufReader::with_capacity(
                    1 << 16,
                    MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file)),
                )),
                size,
            ))
        }
        _ => {
            let size = file.metadata()?.len();
            Ok((Box::new(BufReader::with_capacity(1 << 16, file)), size))
        }
    }
}

/// The uncompressed size a gzip file's trailer records (ISIZE).
fn gzip_size(mut file: &File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if len < 18 {
        return Ok(0);
    }
    file.seek(SeekFrom::End(-4))?;
    let mut isize = [0u8; 4];
    file.read_exact(&mut isize)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(u64::from(u32::from_le_bytes(isize)))
}

/// Compresses the file at `from` into the rotated segment `n` of `log`:
/// written to a temporary name, synced, then renamed into place, so a
/// segment that exists is whole.
pub(crate) fn compress(from: &Path, log: &Path, n: u64) -> io::Result<PathBuf> {
    use flate2::{Compression, write::GzEncoder};
    let target = rotated_path(log, n);
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let result = (|| {
        let mut input = if from == log {
            lock::open_read(from)?
        } else {
            lock::open_read_nofollow(from)?
        };
        let out = create_private(&tmp)?;
        // The fastest level: rotation runs inside one append, under the
        // lock; JSONL still shrinks several-fold.
        let mut encoder = GzEncoder::new(
            io::BufWriter::with_capacity(1 << 16, out),
            Compression::fast(),
        );
        io::copy(&mut input, &mut encoder)?;
        let out = encoder
            .finish()?
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        out.sync_data()?;
        // Never over an existing segment, which a rename would replace
        // (where the file system has no links, the check and the rename
        // are two steps, both under the log's lock).
        match std::fs::hard_link(&tmp, &target) {
            Ok(()) => std::fs::remove_file(&tmp),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
            Err(_) if std::fs::symlink_metadata(&target).is_ok() => {
                Err(io::Error::from(io::ErrorKind::AlreadyExists))
            }
            Err(_) => std::fs::rename(&tmp, &target),
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| target)
}

/// Creates a new file readable by its owner only, failing if it exists
/// (a stale temporary file is replaced).
fn create_private(path: &Path) -> io::Result<File> {
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Compresses the uncompressed rotated files an older ahp left
/// (`signals.jsonl.k`, oldest first) into numbered segments before the
/// next one, so every rotated file has a name that never changes. Runs
/// with the log's lock held.
pub(crate) fn migrate_legacy(path: &Path, rotated: &mut Vec<Segment>) -> io::Result<()> {
    if !rotated
        .iter()
        .any(|s| matches!(s.kind, SegmentKind::Legacy(_)))
    {
        return Ok(());
    }
    let mut n = next_number(rotated);
    let mut out = Vec::with_capacity(rotated.len());
    for segment in rotated.drain(..) {
        match segment.kind {
            // Not a regular file (a committed link to `/proc/self/environ`
            // or to a file of the user's): never read, left as it is.
            SegmentKind::Legacy(_)
                if !std::fs::symlink_metadata(&segment.path).is_ok_and(|m| m.is_file()) =>
            {
                out.push(segment)
            }
            SegmentKind::Legacy(_) => {
                let to = compress(&segment.path, path, n)?;
                std::fs::remove_file(&segment.path)?;
                out.push(Segment {
                    path: to,
                    kind: SegmentKind::Rotated(n),
                });
                n += 1;
            }
            _ => out.push(segment),
        }
    }
    out.sort_by_key(|s| s.number(0));
    *rotated = out;
    Ok(())
}

/// Gives an older ahp's rotated files (`signals.jsonl.k`) numbers, under
/// the writers' lock on the current file (or without a lock when there is
/// no current file: then no writer is rotating).
pub(crate) fn migrate(path: &Path) -> io::Result<()> {
    let mut listed = rotated(path)?;
    if !listed
        .iter()
        .any(|s| matches!(s.kind, SegmentKind::Legacy(_)))
    {
        return Ok(());
    }
    let file = match lock::open_read(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return migrate_legacy(path, &mut listed);
        }
        Err(e) => return Err(e),
    };
    lock::lock(&file)?;
    // Listed again under the lock: a writer may have migrated meanwhile.
    let result = rotated(path).and_then(|mut r| migrate_legacy(path, &mut r));
    let unlocked = lock::unlock(&file);
    result.and(unlocked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_listed_oldest_first_and_lookalikes_are_not_segments() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("signals.jsonl");
        for name in [
            "signals.jsonl.1",
            "signals.jsonl.3",
            "signals.jsonl.2.gz",
            "signals.jsonl.10.gz",
            "signals.jsonl.9.gz",
            "signals.jsonl.4.gz.tmp",
            "signals.jsonl.04.gz",
            "signals.jsonl.9223372036854775807.gz",
            "signals.jsonl.x.gz",
            "signals.jsonl.-1",
            "other.jsonl.5.gz",
            "signals.jsonl",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let names: Vec<String> = rotated(&log)
            .unwrap()
            .iter()
            .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "signals.jsonl.3",
                "signals.jsonl.1",
                "signals.jsonl.2.gz",
                "signals.jsonl.9.gz",
                "signals.jsonl.10.gz"
            ]
        );
        assert_eq!(next_number(&rotated(&log).unwrap()), 11);
        assert_eq!(next_number(&[]), 1);
    }

    #[test]
    fn a_compressed_segment_reads_back_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("signals.jsonl");
        let text = "{\"a\":1}\n".repeat(1000);
        std::fs::write(&log, &text).unwrap();
        let path = compress(&log, &log, 4).unwrap();
        assert_eq!(path, dir.path().join("signals.jsonl.4.gz"));
        assert!(std::fs::metadata(&path).unwrap().len() < text.len() as u64 / 4);
        let segment = Segment {
            path,
            kind: SegmentKind::Rotated(4),
        };
        let (mut r, size) = open(&segment).unwrap();
        let mut back = String::new();
        r.read_to_string(&mut back).unwrap();
        assert_eq!(back, text);
        assert_eq!(size, text.len() as u64);
    }
}
