//! The shipping loop through the public API, with sinks in memory: what a
//! failing, retrying or restarted delivery does to the cursor and to what
//! the sink holds.

use ahp_engine::Signal;
use ahp_signals_log::ship::{self, Line, ShipOptions, Sink, SinkError};
use ahp_signals_log::{Record, SignalLog};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// Keeps each record once by id, and counts every delivery.
#[derive(Default)]
struct Memory {
    held: BTreeMap<String, String>,
    order: Vec<String>,
    deliveries: usize,
    /// Fail the n-th batch (1-based) with this error, once.
    fail: Option<(usize, SinkError)>,
    batches: usize,
}

impl Sink for Memory {
    fn deliver(&mut self, batch: &[Line]) -> Result<(), SinkError> {
        self.batches += 1;
        if let Some((n, e)) = &self.fail
            && *n == self.batches
        {
            let e = e.clone();
            if matches!(e, SinkError::Fatal(_)) {
                self.fail = None;
            } else {
                self.fail = Some((n + 1, e.clone()));
            }
            return Err(e);
        }
        for line in batch {
            self.deliveries += 1;
            let id = line.id.to_string();
            if !self.held.contains_key(&id) {
                self.order.push(id.clone());
            }
            self.held
                .insert(id, line.value["header"]["source"].to_string());
        }
        Ok(())
    }
}

fn options(batch: usize) -> ShipOptions {
    ShipOptions {
        batch,
        tries: 4,
        backoff: Duration::from_millis(1),
        ..ShipOptions::default()
    }
}

fn write(path: &Path, n: usize) -> Vec<String> {
    let log = SignalLog::open(path).unwrap();
    (0..n)
        .map(|i| {
            let s = Signal::aid(format!("note {i}"));
            let id = s.header.id.to_string();
            log.append(&Record::from(s)).unwrap();
            id
        })
        .collect()
}

#[test]
fn a_batch_the_sink_refuses_stops_the_shipper_at_the_last_delivered_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let ids = write(&path, 100);
    let mut sink = Memory {
        fail: Some((3, SinkError::Fatal("bad request".into()))),
        ..Memory::default()
    };
    let err = ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap_err();
    assert!(err.to_string().contains("bad request"), "{err}");
    assert_eq!(sink.held.len(), 20);
    let cursor = ship::load_cursor(&path, "mem").unwrap().unwrap();
    assert_eq!(cursor.last_id.unwrap().to_string(), ids[19]);
    // Started again: the rest, in order, nothing twice.
    let done = ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap();
    assert_eq!(done.records, 80);
    assert_eq!(sink.order, ids);
    assert_eq!(sink.deliveries, 100);
}

#[test]
fn a_sink_that_asks_for_a_retry_gets_the_same_batch_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let ids = write(&path, 30);
    let mut sink = Memory {
        fail: Some((
            1,
            SinkError::Retry {
                message: "503".into(),
                after: Some(Duration::from_millis(1)),
            },
        )),
        ..Memory::default()
    };
    // Fails batches 1 and 2 (two tries of the first batch), then one more.
    let mut opts = options(30);
    opts.tries = 2;
    let err = ship::ship(&path, "mem", "memory", &mut sink, &opts).unwrap_err();
    assert!(err.to_string().contains("gave up after 2 tries"), "{err}");
    assert!(sink.held.is_empty());
    sink.fail = None;
    let done = ship::ship(&path, "mem", "memory", &mut sink, &opts).unwrap();
    assert_eq!((done.records, done.retries), (30, 0));
    assert_eq!(sink.order, ids);
}

#[test]
fn a_cursor_that_does_not_match_the_log_starts_over_and_the_sink_keeps_each_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let mut ids = write(&path, 40);
    let mut sink = Memory::default();
    ship::ship(&path, "mem", "memory", &mut sink, &options(7)).unwrap();
    // The log replaced by another one of the same size class.
    fs::remove_file(&path).unwrap();
    ids.extend(write(&path, 50));
    let done = ship::ship(&path, "mem", "memory", &mut sink, &options(7)).unwrap();
    assert!(done.restarted);
    assert_eq!(sink.held.len(), 90);
    assert_eq!(&sink.order[..], &ids[..]);
}

#[test]
fn a_line_still_being_written_waits_for_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let ids = write(&path, 3);
    let whole = serde_json::to_string(&Record::from(Signal::aid("late"))).unwrap();
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    use std::io::Write;
    f.write_all(&whole.as_bytes()[..40]).unwrap();
    let mut sink = Memory::default();
    ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap();
    assert_eq!(sink.order, ids);
    f.write_all(&whole.as_bytes()[40..]).unwrap();
    f.write_all(b"\n").unwrap();
    let done = ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap();
    assert_eq!(done.records, 1);
    assert_eq!(sink.held.len(), 4);
}

#[test]
fn rotated_files_of_an_older_ahp_are_numbered_and_shipped_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    // What an older ahp left: .2 older than .1, uncompressed.
    let two = write(&dir.path().join("old2"), 5);
    let one = write(&dir.path().join("old1"), 5);
    fs::rename(dir.path().join("old2"), dir.path().join("signals.jsonl.2")).unwrap();
    fs::rename(dir.path().join("old1"), dir.path().join("signals.jsonl.1")).unwrap();
    let now = write(&path, 5);
    let mut sink = Memory::default();
    ship::ship(&path, "mem", "memory", &mut sink, &options(4)).unwrap();
    let want: Vec<String> = two.into_iter().chain(one).chain(now).collect();
    assert_eq!(sink.order, want);
    let names: Vec<String> = ahp_signals_log::segments::rotated(&path)
        .unwrap()
        .iter()
        .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["signals.jsonl.1.gz", "signals.jsonl.2.gz"]);
    // Every reader still reads them in the same order.
    let read: Vec<String> = ahp_signals_log::read_all(&path)
        .unwrap()
        .map(|r| r.unwrap().id().to_string())
        .collect();
    assert_eq!(read, want);
}

#[cfg(unix)]
#[test]
fn a_cursor_folder_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    write(&path, 2);
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), ship::cursor_dir(&path)).unwrap();
    let mut sink = Memory::default();
    let err = ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// Appends records while it delivers its first batch: the log rotates
/// under a running shipper.
struct Busy {
    memory: Memory,
    log: Option<(SignalLog, usize)>,
    written: Vec<String>,
}

impl Sink for Busy {
    fn deliver(&mut self, batch: &[Line]) -> Result<(), SinkError> {
        if let Some((log, n)) = self.log.take() {
            for i in 0..n {
                let s = Signal::aid(format!("written while shipping {i}"));
                self.written.push(s.header.id.to_string());
                log.append(&Record::from(s)).unwrap();
            }
        }
        self.memory.deliver(batch)
    }
}

#[test]
fn a_log_that_rotates_while_it_is_shipped_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let small = || ahp_signals_log::LogOptions {
        max_bytes: Some(3_000),
        keep: 1,
        ..ahp_signals_log::LogOptions::default()
    };
    let first = SignalLog::open_with(&path, small()).unwrap();
    for i in 0..40 {
        first
            .append(&Record::from(Signal::aid(format!("before {i}"))))
            .unwrap();
    }
    let mut sink = Busy {
        memory: Memory::default(),
        log: Some((SignalLog::open_with(&path, small()).unwrap(), 60)),
        written: Vec::new(),
    };
    ship::ship(&path, "busy", "busy", &mut sink, &options(1)).unwrap();
    // Written later still, past the budget: only what was delivered goes.
    for i in 0..40 {
        first
            .append(&Record::from(Signal::aid(format!("after {i}"))))
            .unwrap();
    }
    ship::ship(&path, "busy", "busy", &mut sink, &options(7)).unwrap();
    for id in &sink.written {
        assert!(sink.memory.held.contains_key(id), "lost {id}");
    }
    assert_eq!(sink.memory.deliveries, sink.memory.held.len(), "duplicated");
    // Everything still in the log was delivered.
    for r in ahp_signals_log::read_all(&path).unwrap() {
        let id = r.unwrap().id().to_string();
        assert!(sink.memory.held.contains_key(&id), "{id} never shipped");
    }
}

#[cfg(unix)]
#[test]
fn files_a_repository_commits_beside_the_log_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let secret = dir.path().join("secret.txt");
    fs::write(&secret, "API_KEY=sk-ant-SECRET\n").unwrap();
    // A cursor that is a device, one that is garbage, a segment that is a
    // link to a file of the user's.
    fs::create_dir_all(ship::cursor_dir(&path)).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ship::cursor_dir(&path).join("evil.json")).unwrap();
    fs::write(ship::cursor_dir(&path).join("junk.json"), "{not json").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("signals.jsonl.1")).unwrap();
    let options = ahp_signals_log::LogOptions {
        max_bytes: Some(1),
        keep: 1,
        ..ahp_signals_log::LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    let started = std::time::Instant::now();
    for i in 0..5 {
        log.append(&Record::from(Signal::aid(format!("n {i}"))))
            .unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(5), "appends hung");
    // Neither cursor held history back: the budget of one segment holds,
    // and the link was dropped as the oldest, never read.
    let segments = ahp_signals_log::segments::rotated(&path).unwrap();
    assert_eq!(segments.len(), 1, "{segments:?}");
    for s in segments {
        let (mut r, _) = s.open().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut r, &mut text).unwrap();
        assert!(!text.contains("SECRET"), "{}", s.path.display());
    }
    assert!(fs::symlink_metadata(dir.path().join("signals.jsonl.1")).is_err());
    assert_eq!(
        fs::read_to_string(&secret).unwrap(),
        "API_KEY=sk-ant-SECRET\n"
    );
}

#[cfg(unix)]
#[test]
fn a_segment_that_is_a_link_is_not_followed_by_readers_or_shipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    write(&path, 2);
    let secret = dir.path().join("secret.txt");
    fs::write(&secret, "{\"kind\":\"x\"}\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("signals.jsonl.1.gz")).unwrap();
    // Readers leave it out, say which, and read the rest.
    let mut reader = ahp_signals_log::read_all(&path).unwrap();
    assert_eq!(reader.by_ref().filter(Result::is_ok).count(), 2);
    let unreadable = reader.unreadable();
    assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    assert!(unreadable[0].0.ends_with("signals.jsonl.1.gz"));
    let mut sink = Memory::default();
    let err = ship::ship(&path, "mem", "memory", &mut sink, &options(10)).unwrap_err();
    assert!(err.to_string().contains("signals.jsonl.1.gz"), "{err}");
    assert!(sink.held.is_empty());
}
