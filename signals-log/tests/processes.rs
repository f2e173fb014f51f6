//! Acceptance tests with real processes: many writers at once, rotation
//! across processes, and a reader streaming the log while 16 writers
//! append and rotate it.
//!
//! The writers are this test binary itself: the parent re-executes
//! `std::env::current_exe()` with the name of the `writer_process` test and
//! the `AHP_LOG_WRITER` environment variable set; in that child,
//! `writer_process` appends the records the variable asks for. Without the
//! variable (a normal test run) `writer_process` does nothing. No extra
//! binary to build, and the children run exactly the library under test.

use ahp_engine::Signal;
use ahp_signals_log::{LogError, LogOptions, Record, SignalLog, read_all};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const WRITER_ENV: &str = "AHP_LOG_WRITER";

/// A record that says who wrote it, padded so that torn or interleaved
/// writes would show.
fn numbered(writer: usize, i: usize) -> Record {
    let filler = "x".repeat(200);
    Record::from(Signal::aid(format!("writer {writer} record {i} {filler}")))
}

fn who(record: &Record) -> (usize, usize) {
    let Record::Signal(s) = record else {
        panic!("not a signal: {record:?}")
    };
    let summary = s.payload.summary();
    let words: Vec<&str> = summary.split(' ').collect();
    assert_eq!((words[0], words[2]), ("writer", "record"), "{summary}");
    (words[1].parse().unwrap(), words[3].parse().unwrap())
}

/// In a child: `path|writer|count|max_bytes|keep`.
#[test]
fn writer_process() {
    let Ok(spec) = std::env::var(WRITER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let [path, writer, count, max_bytes, keep] = parts[..] else {
        panic!("bad {WRITER_ENV}: {spec}")
    };
    let options = LogOptions {
        max_bytes: max_bytes.parse().ok(),
        keep: keep.parse().unwrap(),
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(path, options).unwrap();
    let writer: usize = writer.parse().unwrap();
    for i in 0..count.parse().unwrap() {
        log.append(&numbered(writer, i)).unwrap();
    }
}

fn start_writers(
    path: &Path,
    writers: usize,
    count: usize,
    max_bytes: &str,
    keep: usize,
) -> Vec<Child> {
    let exe = std::env::current_exe().unwrap();
    (0..writers)
        .map(|w| {
            Command::new(&exe)
                .args([
                    "processes::writer_process",
                    "--exact",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env(
                    WRITER_ENV,
                    format!("{}|{w}|{count}|{max_bytes}|{keep}", path.display()),
                )
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn wait_all(children: Vec<Child>) {
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "a writer process failed: {status}");
    }
}

fn spawn_writers(path: &Path, writers: usize, count: usize, max_bytes: &str, keep: usize) {
    wait_all(start_writers(path, writers, count, max_bytes, keep));
}

/// Every writer's records, each exactly once and in the order it wrote them.
fn check_complete(records: &[Record], writers: usize, count: usize) {
    let mut next: HashMap<usize, usize> = HashMap::new();
    for record in records {
        let (w, i) = who(record);
        let expected = next.entry(w).or_insert(0);
        assert_eq!(
            i, *expected,
            "writer {w}: record {i} out of order or duplicated"
        );
        *expected += 1;
    }
    assert_eq!(next.len(), writers);
    assert!(next.values().all(|&n| n == count), "{next:?}");
    // And no record written twice under another number: every id once.
    let ids: HashSet<_> = records
        .iter()
        .map(|r| match r {
            Record::Signal(s) => s.header.id,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(ids.len(), records.len());
}

#[test]
fn eight_processes_append_40_000_records_without_loss_or_interleaving() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    SignalLog::open(&path).unwrap();
    spawn_writers(&path, 8, 5_000, "none", 5);

    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    assert!(
        !text.starts_with('\n') && !text.contains("\n\n"),
        "blank lines"
    );
    let records: Vec<Record> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(records.len(), 40_000);
    check_complete(&records, 8, 5_000);

    let mut reader = read_all(&path).unwrap();
    assert_eq!(reader.by_ref().map(Result::unwrap).count(), 40_000);
    assert_eq!(reader.skipped(), 0);
}

#[test]
fn concurrent_writers_lose_nothing_across_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    // ~400 bytes a record, 16 KiB a file: ~100 rotations; keep them all.
    spawn_writers(&path, 4, 1_000, "16384", 1_000);

    let rotated = ahp_signals_log::segments::rotated(&path).unwrap();
    assert!(rotated.len() > 50, "only {} rotated files", rotated.len());
    for (n, segment) in (1..).zip(&rotated) {
        assert_eq!(
            segment.path,
            dir.path().join(format!("signals.jsonl.{n}.gz"))
        );
        let (_, len) = segment.open().unwrap();
        assert!(len <= 16_384, "{} has {len} bytes", segment.path.display());
    }
    let mut reader = read_all(&path).unwrap();
    let records: Vec<Record> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.skipped(), 0);
    assert_eq!(records.len(), 4_000);
    check_complete(&records, 4, 1_000);
}

// The load test: 16 writers append while the log rotates every few dozen
// records and a reader streams it the whole time. Checked: every writer's
// sequence is in the log and its rotated files exactly once and in order
// (nothing lost, nothing duplicated, no rotated file deleted: `KEEP` is
// larger than the number of rotations); and each pass of the streaming
// reader (`read_all`, which follows the rotated files oldest first and the
// current file as it grows) sees every record at most once, each writer's
// records as an unbroken prefix of its sequence, and never fewer of them
// than the pass before.
const WRITERS: usize = 16;
const COUNT: usize = 1_500;
/// ~400 bytes a record: a file holds ~40 records, so 24 000 records make
/// ~600 rotations.
const MAX_BYTES: u64 = 16 * 1024;
/// More than the rotations, so that no file is deleted during the test.
const KEEP: usize = 1_000;

/// What one streaming pass saw.
struct Pass {
    /// Per writer, how many of its records (always 0..n).
    seen: Vec<usize>,
    /// Files the pass opened.
    files: usize,
}

/// One pass of the streaming reader over the log as it is being written;
/// `None` while no writer has created the log yet (`started` false). Once
/// it exists, it must always open: a rotation in progress is waited for.
fn stream_once(path: &Path, started: bool) -> Option<Pass> {
    // The segments there were as the pass began (a rotation may add one).
    let files = 1 + ahp_signals_log::segments::rotated(path).map_or(0, |s| s.len());
    let mut reader = match read_all(path) {
        Ok(r) => r,
        Err(LogError::Open { error, .. })
            if !started && error.kind() == std::io::ErrorKind::NotFound =>
        {
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let mut seen = vec![0usize; WRITERS];
    for record in reader.by_ref() {
        let (w, i) = who(&record.unwrap());
        // At most once, in order, no gap: record i follows record i - 1.
        assert_eq!(
            i, seen[w],
            "writer {w}: record {i} after {} records in one pass",
            seen[w]
        );
        seen[w] += 1;
    }
    // Only the line being written at the end of the current file can be
    // seen half written.
    assert!(
        reader.skipped() <= 1,
        "{} lines skipped: {:?}",
        reader.skipped(),
        reader.skipped_at()
    );
    if let Some((file, _)) = reader.skipped_at().first() {
        assert_eq!(file, path, "a torn line in a rotated file");
    }
    Some(Pass { seen, files })
}

fn rotated_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "jsonl"))
        .collect();
    v.sort();
    v
}

#[test]
fn sixteen_writers_rotation_and_a_streaming_reader_lose_and_duplicate_nothing() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");

    let children = start_writers(&path, WRITERS, COUNT, &MAX_BYTES.to_string(), KEEP);

    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (done, path) = (Arc::clone(&done), path.clone());
        std::thread::spawn(move || {
            let mut passes = 0usize;
            let mut most_files = 0usize;
            let mut last = vec![0usize; WRITERS];
            while !done.load(Ordering::Acquire) {
                let Some(pass) = stream_once(&path, passes > 0) else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                for (w, (now, before)) in pass.seen.iter().zip(&last).enumerate() {
                    assert!(
                        now >= before,
                        "writer {w}: a pass saw {now} records, the one before {before}"
                    );
                }
                last = pass.seen;
                most_files = most_files.max(pass.files);
                passes += 1;
            }
            (passes, most_files)
        })
    };

    wait_all(children);
    done.store(true, Ordering::Release);
    let (passes, most_files) = reader.join().expect("the streaming reader failed");
    assert!(passes >= 2, "only {passes} streaming passes");
    assert!(most_files > 2, "the reader never saw rotated files");

    // Nothing deleted, and every file within the size limit.
    let rotated = ahp_signals_log::segments::rotated(&path).unwrap();
    assert_eq!(rotated.len(), rotated_files(dir.path()).len());
    assert!(rotated.len() > 50, "only {} rotations", rotated.len());
    assert!(rotated.len() < KEEP, "rotated files may have been deleted");
    for (n, segment) in (1..).zip(&rotated) {
        assert_eq!(
            segment.path,
            dir.path().join(format!("signals.jsonl.{n}.gz"))
        );
        let (_, len) = segment.open().unwrap();
        assert!(
            len <= MAX_BYTES,
            "{} has {len} bytes",
            segment.path.display()
        );
    }

    // Every record exactly once, each writer's in order.
    let mut reader = read_all(&path).unwrap();
    let records: Vec<Record> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.skipped(), 0);
    assert_eq!(records.len(), WRITERS * COUNT);
    check_complete(&records, WRITERS, COUNT);
    eprintln!(
        "{WRITERS} writers × {COUNT} records, {} rotations, {passes} streaming passes, {:.1} s",
        rotated.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn a_reader_waits_for_a_log_caught_in_the_middle_of_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    log.append(&numbered(0, 0)).unwrap();
    // What a rotating writer leaves for a moment: the full log renamed to
    // `.1`, the new one not created yet.
    fs::rename(&path, dir.path().join("signals.jsonl.1")).unwrap();
    let creator = {
        let path = path.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            SignalLog::open(&path)
                .unwrap()
                .append(&numbered(0, 1))
                .unwrap();
        })
    };
    let records: Vec<(usize, usize)> = read_all(&path).unwrap().map(|r| who(&r.unwrap())).collect();
    creator.join().unwrap();
    // The rotated record, and the new one if it was written before the
    // reader reached the end.
    assert_eq!(records[0], (0, 0));
    assert!(records.len() <= 2, "{records:?}");
}

#[cfg(unix)]
#[test]
fn the_log_is_never_written_through_a_symlink() {
    // A cloned repository can commit `.ahp/signals.jsonl` as a link to one
    // of the user's files.
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim_rc");
    fs::write(&victim, "# rc\n").unwrap();
    let path = dir.path().join("signals.jsonl");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let err = SignalLog::open(&path).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "# rc\n");

    // Nor when the link appears after the log was opened (the next append
    // reopens the path and finds the link).
    fs::remove_file(&path).unwrap();
    let log = SignalLog::open(&path).unwrap();
    log.append(&numbered(0, 0)).unwrap();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    assert!(log.append(&numbered(0, 1)).is_err());
    assert_eq!(fs::read_to_string(&victim).unwrap(), "# rc\n");
}
