//! The signal log through its public API: records on disk, torn lines,
//! concurrent appenders, opening errors.

use ahp_engine::{
    Action, Diagnostic, Event, Intensity, Level, Modification, Severity, Signal, SignalResponse,
    SignalSink,
};
use ahp_signals_log::{LogError, LogOptions, Reader, Record, SignalLog, read};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::thread;

fn stamped(mut s: Signal, source: &str) -> Signal {
    s.header.source = source.into();
    s.header.correlation_id = Some("corr-1".into());
    s.context.hook = Some(Event::PreToolUse);
    s.context.issue_id = Some("ISSUE-7".into());
    s
}

fn diagnostic(level: Level, message: &str) -> Diagnostic {
    Diagnostic {
        id: ahp_engine::Uuid::new_v4(),
        level,
        timestamp: chrono::Utc::now(),
        source: "ahp".into(),
        event: Some(Event::PostToolUse),
        correlation_id: Some("corr-1".into()),
        message: message.into(),
        file: None,
        line: None,
    }
}

fn one_of_each() -> Vec<Record> {
    let block = stamped(
        Signal::block("rm -rf / destroys the system")
            .with_type("dangerous-command")
            .with_resolution_path(["use a path inside the project"])
            .with_files(["src/main.rs"]),
        "DenyRmRf",
    );
    let uuid_of_block = block.header.id;
    let control = stamped(
        Signal::control(vec![
            Modification::set("tool.input.command", json!("ls -la")).describe("safer"),
            Modification::remove("tool.input.force"),
        ])
        .with_message("rewrote the command"),
        "Rewrite",
    );
    let prompt = stamped(
        Signal::prompt("40 files changed\nin one step")
            .with_severity(Severity::High)
            .with_resolution_path(["split the change"]),
        "SizeCheck",
    );
    let aid = stamped(Signal::aid("tests live in tests/ — ünïcødé"), "Docs");
    let mut clamped = stamped(Signal::block("late").convert_to(Intensity::Aid), "Late");
    clamped.header.clamped_from = Some(Intensity::Block);
    clamped.header.detached = true;
    let response = SignalResponse::new(
        &block,
        Action::RetryAfterFix,
        Some(json!({"note": "moved to ./tmp", "attempt": 2})),
    )
    .unwrap();
    let bare_response = SignalResponse::new(&aid, Action::SuggestionDeferred, None).unwrap();
    vec![
        Record::Signal(block),
        Record::Signal(control),
        Record::Signal(prompt),
        Record::Signal(aid),
        Record::Signal(clamped),
        Record::Response(response),
        Record::Response(bare_response),
        Record::Info(diagnostic(Level::Info, "hook said: formatted 3 files")),
        Record::Warning(diagnostic(Level::Warning, "modification skipped")),
        Record::Error(diagnostic(
            Level::Error,
            "oracle `X` timed out after 100 ms",
        )),
        Record::Run(ahp_engine::RunRecord {
            id: ahp_engine::Uuid::new_v4(),
            timestamp: chrono::Utc::now(),
            event: Event::PreToolUse,
            correlation_id: "c-1".into(),
            session_id: Some("s-1".into()),
            issue_id: None,
            outcome: ahp_engine::Outcome::Block,
            entries: vec![ahp_engine::EntryRun {
                id: "PermissionChecker".into(),
                oracle: "PermissionChecker".into(),
                wave: 0,
                status: ahp_engine::EntryStatus::Signalled,
                duration_us: 120,
                shadow: false,
            }],
            signal_ids: vec![uuid_of_block],
            duration_us: 450,
            config_digest: Some("sha256:00".into()),
            context: json!({"tool": {"name": "Bash", "input": {"command": "rm -rf /"}}}),
        }),
    ]
}

fn read_all(path: &Path) -> (Vec<Record>, usize, Vec<usize>) {
    let mut reader = read(path).unwrap();
    let records = reader.by_ref().map(Result::unwrap).collect();
    (records, reader.skipped(), reader.skipped_lines().to_vec())
}

#[test]
fn every_kind_round_trips_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    let records = one_of_each();
    for r in &records {
        log.append(r).unwrap();
    }
    let (back, skipped, _) = read_all(&path);
    assert_eq!(back, records);
    assert_eq!(skipped, 0);
    let kinds: Vec<_> = back.iter().map(Record::kind).collect();
    assert_eq!(
        kinds,
        [
            "signal", "signal", "signal", "signal", "signal", "response", "response", "info",
            "warning", "error", "run"
        ]
    );
    // One record a line, each line a JSON object whose first key is `kind`.
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), records.len());
    for (line, record) in text.lines().zip(&records) {
        let prefix = format!(r#"{{"kind":"{}","#, record.kind());
        assert!(line.starts_with(&prefix), "{line}");
    }
}

#[test]
fn the_sink_writes_the_same_lines_as_append() {
    let dir = tempfile::tempdir().unwrap();
    let via_append = SignalLog::open(dir.path().join("a.jsonl")).unwrap();
    let via_sink = Arc::new(SignalLog::open(dir.path().join("b.jsonl")).unwrap());
    let sink: Arc<dyn SignalSink> = via_sink.clone();
    for r in one_of_each() {
        match &r {
            Record::Signal(s) => sink.record_signal(s).unwrap(),
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => {
                sink.record_diagnostic(d).unwrap()
            }
            Record::Run(run) => sink.record_run(run).unwrap(),
            Record::Response(_) | Record::Release(_) => continue,
        }
        via_append.append(&r).unwrap();
    }
    let a = fs::read_to_string(via_append.path()).unwrap();
    let b = fs::read_to_string(via_sink.path()).unwrap();
    assert_eq!(a.lines().count(), 9);
    assert_eq!(a, b);
}

#[test]
fn a_signal_record_is_kind_plus_the_signal_as_the_engine_writes_it() {
    let signal = stamped(
        Signal::prompt("large change").with_resolution_path(["split"]),
        "SizeCheck",
    );
    let line = serde_json::to_string(&Record::Signal(signal.clone())).unwrap();
    assert!(line.starts_with(r#"{"kind":"signal","header":{"#), "{line}");
    assert!(!line.contains('\n'));

    let mut v: Value = serde_json::from_str(&line).unwrap();
    let obj = v.as_object_mut().unwrap();
    let mut keys: Vec<_> = obj.keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["context", "header", "kind", "payload"]);
    assert_eq!(obj.remove("kind"), Some(json!("signal")));
    assert_eq!(v, serde_json::to_value(&signal).unwrap());
    assert_eq!(v["header"]["intensity"], "prompt");
    assert_eq!(v["header"]["source"], "SizeCheck");
    assert_eq!(v["context"]["hook"], "pre-tool-use");
    assert_eq!(v["payload"]["suggestions"], json!(["split"]));
}

#[test]
fn response_and_diagnostic_records_are_kind_plus_their_fields() {
    let s = Signal::block("no");
    let response = SignalResponse::new(&s, Action::Abort, None).unwrap();
    let mut v = serde_json::to_value(Record::Response(response.clone())).unwrap();
    assert_eq!(
        v.as_object_mut().unwrap().remove("kind"),
        Some(json!("response"))
    );
    assert_eq!(v, serde_json::to_value(&response).unwrap());

    let d = diagnostic(Level::Error, "boom");
    let mut v = serde_json::to_value(Record::Error(d.clone())).unwrap();
    assert_eq!(v["level"], "error");
    assert_eq!(
        v.as_object_mut().unwrap().remove("kind"),
        Some(json!("error"))
    );
    assert_eq!(v, serde_json::to_value(&d).unwrap());
}

#[test]
fn a_diagnostics_level_decides_its_kind() {
    let err = diagnostic(Level::Error, "boom");
    assert!(matches!(Record::from(err.clone()), Record::Error(_)));
    assert!(matches!(
        Record::diagnostic(diagnostic(Level::Warning, "hm")),
        Record::Warning(_)
    ));
    // Held by the wrong variant: still written (and read back) as what it is.
    let wrong = Record::Warning(err.clone());
    assert_eq!(wrong.kind(), "error");
    let line = serde_json::to_string(&wrong).unwrap();
    assert!(line.starts_with(r#"{"kind":"error","#), "{line}");
    assert_eq!(
        serde_json::from_str::<Record>(&line).unwrap(),
        Record::Error(err)
    );
    // A line whose kind and level disagree is not a record.
    let bad = line.replacen(r#""kind":"error""#, r#""kind":"warning""#, 1);
    let e = serde_json::from_str::<Record>(&bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a `warning` record holds a diagnostic of level `error`"),
        "{e}"
    );
}

#[test]
fn lines_that_are_not_records_are_rejected_with_a_reason() {
    let unknown = r#"{"kind":"escalation","header":{}}"#;
    let e = serde_json::from_str::<Record>(unknown)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown variant `escalation`"), "{e}");
    let e = serde_json::from_str::<Record>(r#"{"message":"x"}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing field `kind`"), "{e}");
    // A signal whose payload does not fit its intensity.
    let mut v = serde_json::to_value(Record::from(Signal::aid("x"))).unwrap();
    v["header"]["intensity"] = json!("block");
    let e = serde_json::from_value::<Record>(v).unwrap_err().to_string();
    assert!(e.contains("payload does not fit intensity `block`"), "{e}");
}

#[test]
fn appending_after_a_torn_line_starts_a_fresh_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let first = Record::from(Signal::block("first"));
    let second = Record::from(Signal::aid("second"));
    let third = Record::from(diagnostic(Level::Warning, "third"));
    SignalLog::open(&path).unwrap().append(&first).unwrap();
    // A crash in the middle of the next write: half a line, no newline.
    let whole = serde_json::to_string(&Record::from(Signal::prompt("torn"))).unwrap();
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&whole.as_bytes()[..whole.len() / 2]).unwrap();
    drop(f);

    let log = SignalLog::open(&path).unwrap();
    log.append(&second).unwrap();
    log.append(&third).unwrap();

    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(!text.contains("\n\n"), "exactly one repair newline: {text}");
    let (records, skipped, skipped_lines) = read_all(&path);
    assert_eq!(records, [first, second, third]);
    assert_eq!(skipped, 1);
    assert_eq!(skipped_lines, [2]);
}

#[test]
fn a_healthy_file_gets_no_extra_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    for i in 0..3 {
        let log = SignalLog::open(&path).unwrap();
        log.append(&Record::from(Signal::aid(format!("run {i}"))))
            .unwrap();
    }
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(!text.contains("\n\n") && !text.starts_with('\n'), "{text}");
}

#[test]
fn the_reader_skips_garbage_and_ignores_empty_lines() {
    let good = serde_json::to_string(&Record::from(Signal::aid("ok"))).unwrap();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(good.as_bytes());
    bytes.extend_from_slice(b"\r\n   \nnot json\n");
    bytes.extend_from_slice(b"{\"kind\":\"signal\",\"header\":\xff\xfe}\n"); // not UTF-8
    bytes.extend_from_slice(br#"{"kind":"future-kind","x":1}"#);
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(good.as_bytes()); // complete, only the newline missing
    let mut reader = Reader::new(&bytes[..], "mem.jsonl");
    let records: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2);
    assert_eq!(reader.skipped(), 3);
    assert_eq!(reader.skipped_lines(), [4, 5, 6]);
    assert_eq!(reader.path(), Path::new("mem.jsonl"));
}

#[test]
fn reading_a_missing_log_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.jsonl");
    let err = read(&path).err().unwrap();
    assert!(
        matches!(&err, LogError::Open { error, .. } if error.kind() == std::io::ErrorKind::NotFound)
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("cannot open signal log `{}`: ", path.display())),
        "{msg}"
    );
}

/// A record of some size, so a torn or interleaved write would show.
fn numbered(writer: usize, i: usize) -> Record {
    let filler = format!("{writer}-{i}-").repeat(60);
    Record::from(
        Signal::prompt(format!("writer {writer} record {i} {filler}"))
            .with_files((0..10).map(|f| format!("src/module_{f}/file_{writer}_{i}.rs"))),
    )
}

fn check_concurrent_log(path: &Path, writers: usize, per_writer: usize) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    // The torn-tail check runs under the file lock: no handle ever sees
    // another's half-written line, so no repair newline, no blank line.
    assert!(
        !text.starts_with('\n') && !text.contains("\n\n"),
        "blank lines in a concurrently written log"
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), writers * per_writer);
    let mut ids = HashSet::new();
    let mut seen = HashSet::new();
    for line in &lines {
        let record: Record = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let Record::Signal(s) = record else {
            panic!("{line}")
        };
        assert!(ids.insert(s.header.id), "duplicate id {}", s.header.id);
        let msg = s.payload.summary();
        let key: Vec<_> = msg.split(' ').take(4).collect();
        assert!(seen.insert(key.join(" ")), "duplicate {msg}");
    }
    assert_eq!(ids.len(), writers * per_writer);
    let (records, skipped, _) = read_all(path);
    assert_eq!((records.len(), skipped), (writers * per_writer, 0));
}

#[test]
fn threads_sharing_one_handle_never_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = Arc::new(SignalLog::open(&path).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|w| {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                for i in 0..200 {
                    log.append(&numbered(w, i)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    check_concurrent_log(&path, 8, 200);
}

#[test]
fn separately_opened_handles_never_interleave() {
    // Each handle is its own open file description, as in separate
    // processes: only O_APPEND keeps their lines apart.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|w| {
            let path = path.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let log = SignalLog::open(&path).unwrap();
                barrier.wait();
                for i in 0..200 {
                    log.append(&numbered(w, i)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    check_concurrent_log(&path, 8, 200);
}

#[test]
fn opening_creates_missing_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/.ahp/signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    assert_eq!(log.path(), path);
    assert!(path.is_file());
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    log.append(&Record::from(Signal::aid("x"))).unwrap();
    assert_eq!(read_all(&path).0.len(), 1);
}

#[test]
fn opening_a_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs");
    fs::create_dir(&path).unwrap();
    let err = SignalLog::open(&path).unwrap_err();
    assert!(matches!(err, LogError::Open { .. }));
    let msg = err.to_string();
    let prefix = format!("cannot open signal log `{}`: ", path.display());
    assert!(msg.starts_with(&prefix), "{msg}");
    assert!(msg.len() > prefix.len(), "{msg}");
}

#[test]
fn opening_below_a_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    fs::write(&file, "x").unwrap();
    let path = file.join("signals.jsonl");
    let msg = SignalLog::open(&path).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!("cannot open signal log `{}`: ", path.display())),
        "{msg}"
    );
}

#[test]
fn write_failures_reach_the_engine_with_the_path() {
    // The log's directory removed under an open handle: the append finds
    // the file gone, and cannot create it again.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone/signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    fs::remove_dir_all(dir.path().join("gone")).unwrap();
    let err = log.append(&Record::from(Signal::aid("x"))).unwrap_err();
    assert!(matches!(err, LogError::Write { .. }), "{err}");
    let sink: &dyn SignalSink = &log;
    let msg = sink
        .record_signal(&Signal::aid("x"))
        .unwrap_err()
        .to_string();
    let prefix = format!("cannot write to signal log `{}`: ", path.display());
    assert!(msg.starts_with(&prefix), "{msg}");
    let msg = sink
        .record_diagnostic(&diagnostic(Level::Error, "x"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
}

#[cfg(unix)]
#[test]
fn a_fifo_or_device_at_the_path_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("signals.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // Neither the writer nor a reader waits for the other end.
        let err = SignalLog::open(&fifo).unwrap_err();
        assert!(
            err.to_string().contains("a FIFO, not a regular file"),
            "{err}"
        );
        let err = ahp_signals_log::read_all(&fifo).err().unwrap();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        assert!(ahp_signals_log::read(&fifo).is_err());
    }
    let dev = Path::new("/dev/null");
    if dev.exists() {
        let err = SignalLog::open(dev).unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn new_and_rotated_logs_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let options = LogOptions {
        max_bytes: Some(300),
        keep: 2,
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    for i in 0..10 {
        log.append(&Record::from(Signal::aid(format!(
            "record {i} {}",
            "x".repeat(80)
        ))))
        .unwrap();
    }
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    let rotated = ahp_signals_log::segments::rotated(&path).unwrap();
    assert_eq!(rotated.len(), 2);
    for segment in rotated {
        assert_eq!(mode(&segment.path), 0o600, "{}", segment.path.display());
    }
    // An existing log that others could read is narrowed when opened.
    let old = dir.path().join("old.jsonl");
    fs::write(&old, "").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).unwrap();
    drop(SignalLog::open(&old).unwrap());
    assert_eq!(mode(&old), 0o600);
}
