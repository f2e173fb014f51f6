//! Acceptance tests with real processes: many writers at once, rotation
//! across processes.
//!
//! The writers are this test binary itself: the parent re-executes
//! `std::env::current_exe()` with the name of the `writer_process` test and
//! the `AHP_LOG_WRITER` environment variable set; in that child,
//! `writer_process` appends the records the variable asks for. Without the
//! variable (a normal test run) `writer_process` does nothing. No extra
//! binary to build, and the children run exactly the library under test.

use ahp_engine::Signal;
use ahp_signals_log::{read_all, LogOptions, Record, SignalLog};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;
use std::process::{Child, Command};

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

fn spawn_writers(path: &Path, writers: usize, count: usize, max_bytes: &str, keep: usize) {
    let exe = std::env::current_exe().unwrap();
    let children: Vec<Child> = (0..writers)
        .map(|w| {
            Command::new(&exe)
                .args(["writer_process", "--exact", "--test-threads=1", "--quiet"])
                .env(
                    WRITER_ENV,
                    format!("{}|{w}|{count}|{max_bytes}|{keep}", path.display()),
                )
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "a writer process failed: {status}");
    }
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
    let ids: HashSet<_> = records
        .iter()
        .map(|r| match r {
            Record::Signal(s) => s.header.id,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(ids.len(), 40_000);

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

    let rotated = fs::read_dir(dir.path()).unwrap().count() - 1;
    assert!(rotated > 50, "only {rotated} rotated files");
    for n in 1..=rotated {
        let file = dir.path().join(format!("signals.jsonl.{n}"));
        let len = fs::metadata(&file).unwrap().len();
        assert!(len <= 16_384, "{} has {len} bytes", file.display());
    }
    let mut reader = read_all(&path).unwrap();
    let records: Vec<Record> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.skipped(), 0);
    assert_eq!(records.len(), 4_000);
    check_complete(&records, 4, 1_000);
}
