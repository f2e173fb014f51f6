//! Torn lines, rotation, masking, fsync policies, release records and
//! filters, through the public API.

use ahp_engine::{Action, Event, Intensity, Signal, SignalResponse};
use ahp_signals_log::{
    Filter, FsyncPolicy, LogOptions, Masking, Record, Release, SignalLog, read_all,
};
use serde_json::json;
use std::fs;
use std::io::Write;
use std::path::Path;

fn note(i: usize) -> Record {
    // A fixed timestamp: RFC 3339 with a varying number of fractional
    // digits would make record sizes, and so rotation points, vary.
    let mut s = Signal::aid(format!("note {i:04}"));
    s.header.timestamp = chrono::DateTime::from_timestamp(1_790_000_000, 123_456_789).unwrap();
    Record::from(s)
}

fn note_number(record: &Record) -> usize {
    let Record::Signal(s) = record else {
        panic!("{record:?}")
    };
    s.payload.summary()[5..].parse().unwrap()
}

fn tear(path: &Path) {
    // What a writer killed in the middle of its write leaves: half a line.
    let whole = serde_json::to_string(&note(9999)).unwrap();
    let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(&whole.as_bytes()[..whole.len() / 2]).unwrap();
}

#[test]
fn a_torn_line_is_reported_once_and_the_next_append_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    log.append(&note(0)).unwrap();
    log.append(&note(1)).unwrap();
    tear(&path);

    // Readers see the two records, and exactly one torn line (line 3).
    let mut reader = read_all(&path).unwrap();
    assert_eq!(reader.by_ref().map(Result::unwrap).count(), 2);
    assert_eq!(reader.skipped(), 1);
    assert_eq!(reader.skipped_at(), [(path.clone(), 3)]);

    // The same handle (it wrote before the crash) repairs the tail.
    log.append(&note(2)).unwrap();
    log.append(&note(3)).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(!text.contains("\n\n"), "{text}");
    let mut reader = read_all(&path).unwrap();
    let numbers: Vec<_> = reader.by_ref().map(|r| note_number(&r.unwrap())).collect();
    assert_eq!(numbers, [0, 1, 2, 3]);
    assert_eq!(reader.skipped(), 1);
    assert_eq!(reader.skipped_at(), [(path, 3)]);
}

#[test]
fn rotation_keeps_the_newest_files_and_reads_them_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let line_len = serde_json::to_string(&note(0)).unwrap().len() as u64 + 1;
    let options = LogOptions {
        max_bytes: Some(line_len * 10), // ten records a file
        keep: 3,
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    for i in 0..95 {
        log.append(&note(i)).unwrap();
    }
    // Numbered for life, compressed; the three newest kept.
    let rotated = ahp_signals_log::segments::rotated(&path).unwrap();
    let names: Vec<_> = rotated
        .iter()
        .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let last: usize = names[2]["signals.jsonl.".len()..]
        .trim_end_matches(".gz")
        .parse()
        .unwrap();
    assert!(last > 3, "{names:?}");
    assert_eq!(
        names,
        (last - 2..=last)
            .map(|n| format!("signals.jsonl.{n}.gz"))
            .collect::<Vec<_>>()
    );

    let mut reader = read_all(&path).unwrap();
    let mut numbers = Vec::new();
    let mut dropped = Vec::new();
    for r in reader.by_ref() {
        match r.unwrap() {
            Record::Info(d) => dropped.push(d.message),
            r => numbers.push(note_number(&r)),
        }
    }
    // The newest records, none missing between the oldest kept and the last.
    let first = numbers[0];
    assert!(first > 0);
    assert_eq!(numbers, (first..95).collect::<Vec<_>>());
    // Every dropped segment is said, in the log itself (those said in a
    // dropped segment went with it).
    assert!(!dropped.is_empty());
    for (message, n) in dropped.iter().rev().zip((1..last - 2).rev()) {
        assert!(
            message.starts_with(&format!(
                "dropped {}",
                dir.path().join(format!("signals.jsonl.{n}.gz")).display()
            )),
            "{message}"
        );
        assert!(message.contains("log_keep = 3"), "{message}");
    }
    // The byte progress covers the rotated files, uncompressed.
    assert_eq!(reader.bytes_read(), reader.total_bytes());
    assert!(reader.total_bytes() > line_len * (95 - first as u64));
    assert_eq!(reader.skipped(), 0);
}

#[test]
fn a_torn_line_in_a_rotated_file_is_reported_with_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    SignalLog::open(&path).unwrap().append(&note(0)).unwrap();
    tear(&path);
    fs::rename(&path, dir.path().join("signals.jsonl.1")).unwrap();
    SignalLog::open(&path).unwrap().append(&note(1)).unwrap();
    let mut reader = read_all(&path).unwrap();
    assert_eq!(reader.by_ref().count(), 2);
    assert_eq!(
        reader.skipped_at(),
        [(dir.path().join("signals.jsonl.1"), 2)]
    );
}

#[test]
fn keep_zero_discards_the_history_on_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let options = LogOptions {
        max_bytes: Some(1),
        keep: 0,
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    for i in 0..3 {
        log.append(&note(i)).unwrap();
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    let records: Vec<_> = read_all(&path).unwrap().map(Result::unwrap).collect();
    // What went is said, with the record that took its place.
    let [Record::Info(d), last] = &records[..] else {
        panic!("{records:?}")
    };
    assert!(d.message.starts_with("dropped "), "{}", d.message);
    assert!(d.message.contains("log_keep is 0"), "{}", d.message);
    assert_eq!(note_number(last), 2);
}

#[test]
fn planted_secrets_never_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let options = LogOptions {
        mask: Masking::default().with_keys(["ssn"]),
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    let block = Signal::block("found DB_PASSWORD=hunter2-reason in .env");
    let run = ahp_engine::RunRecord {
        id: ahp_engine::Uuid::new_v4(),
        timestamp: chrono::Utc::now(),
        event: Event::PreToolUse,
        correlation_id: "c-1".into(),
        session_id: Some("s-1".into()),
        issue_id: None,
        outcome: ahp_engine::Outcome::Block,
        entries: vec![],
        signal_ids: vec![],
        duration_us: 1,
        config_digest: None,
        context: json!({"tool": {"name": "Bash", "input": {
            "command": "curl -H 'Authorization: Bearer abc123' --password pw-flag https://x",
            "password": "hunter2-context",
            "env": {"SSN": "078-05-1120", "Api-Key": "k-123"},
        }}}),
    };
    let response = SignalResponse::new(
        &block,
        Action::RetryAfterFix,
        Some(json!({"secret": "s-detail", "notes": ["token: tok-in-array"]})),
    )
    .unwrap();
    log.append(&Record::from(block)).unwrap();
    log.append(&Record::Run(run)).unwrap();
    log.append(&Record::from(response)).unwrap();

    let bytes = fs::read_to_string(&path).unwrap();
    for secret in [
        "hunter2",
        "abc123",
        "pw-flag",
        "078-05-1120",
        "k-123",
        "s-detail",
        "tok-in-array",
    ] {
        assert!(!bytes.contains(secret), "{secret} leaked: {bytes}");
    }
    // The rest is intact, `kind` still first, and every line still a record.
    assert!(bytes.contains("found DB_PASSWORD=*** in .env"), "{bytes}");
    assert!(bytes.contains("Authorization: Bearer ***"), "{bytes}");
    assert!(bytes.contains(r#""name":"Bash""#), "{bytes}");
    assert!(bytes.lines().all(|l| l.starts_with(r#"{"kind":""#)));
    let mut reader = read_all(&path).unwrap();
    let kinds: Vec<_> = reader.by_ref().map(|r| r.unwrap().kind()).collect();
    assert_eq!(kinds, ["signal", "run", "response"]);
    assert_eq!(reader.skipped(), 0);
}

#[test]
fn masking_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let options = LogOptions {
        mask: Masking::none(),
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(&path, options).unwrap();
    log.append(&Record::from(Signal::aid("password=visible")))
        .unwrap();
    assert!(
        fs::read_to_string(&path)
            .unwrap()
            .contains("password=visible")
    );
}

#[test]
fn every_fsync_policy_writes_every_record() {
    for policy in [FsyncPolicy::Always, FsyncPolicy::Batch, FsyncPolicy::Never] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signals.jsonl");
        let options = LogOptions {
            fsync: policy,
            max_bytes: Some(2_000),
            ..LogOptions::default()
        };
        let log = SignalLog::open_with(&path, options).unwrap();
        for i in 0..20 {
            log.append(&note(i)).unwrap();
        }
        log.sync().unwrap();
        drop(log);
        let numbers: Vec<_> = read_all(&path)
            .unwrap()
            .map(|r| note_number(&r.unwrap()))
            .collect();
        assert_eq!(numbers, (0..20).collect::<Vec<_>>(), "{policy:?}");
    }
}

fn release() -> Release {
    Release {
        id: ahp_engine::Uuid::new_v4(),
        timestamp: chrono::Utc::now(),
        session_id: "s-9".into(),
        event: Event::PreAgentTurnStop,
        consecutive_blocks: 5,
        cap: 5,
        correlation_id: Some("c-9".into()),
        reason: "TestGate: 3 tests fail".into(),
    }
}

#[test]
fn release_records_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    log.append(&Record::from(release())).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(v["kind"], "release");
    assert_eq!(v["event"], "pre-agent-turn-stop");
    assert_eq!(v["consecutive_blocks"], 5);
    assert_eq!(v["cap"], 5);
    assert_eq!(v["session_id"], "s-9");
    let back: Vec<_> = read_all(&path).unwrap().map(Result::unwrap).collect();
    assert!(matches!(&back[..], [Record::Release(r)] if r.reason == "TestGate: 3 tests fail"));
    assert!(Record::KINDS.contains(&"release"));
}

#[test]
fn filters_select_while_streaming() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let log = SignalLog::open(&path).unwrap();
    let mut block = Signal::block("no");
    block.header.source = "DenyRmRf".into();
    block.context.hook = Some(Event::PreToolUse);
    block.context.issue_id = Some("ISSUE-1".into());
    let aid = Signal::aid("fyi");
    let response = SignalResponse::new(&block, Action::Abort, None).unwrap();
    log.append(&Record::from(block)).unwrap();
    log.append(&Record::from(aid)).unwrap();
    log.append(&Record::from(response)).unwrap();
    log.append(&Record::from(release())).unwrap();

    let kinds = |filter: Filter| -> Vec<&'static str> {
        read_all(&path)
            .unwrap()
            .filter(filter)
            .map(|r| r.unwrap().kind())
            .collect()
    };
    assert_eq!(kinds(Filter::default()).len(), 4);
    let blocks = Filter {
        intensity: Some(Intensity::Block),
        ..Filter::default()
    };
    assert_eq!(kinds(blocks), ["signal"]);
    let by_source = Filter {
        source: Some("DenyRmRf".into()),
        event: Some(Event::PreToolUse),
        issue: Some("ISSUE-1".into()),
        ..Filter::default()
    };
    assert_eq!(kinds(by_source), ["signal"]);
    let session = Filter {
        session: Some("s-9".into()),
        ..Filter::default()
    };
    assert_eq!(kinds(session), ["release"]);
    let responses = Filter {
        kinds: vec!["response".into(), "release".into()],
        ..Filter::default()
    };
    assert_eq!(kinds(responses), ["response", "release"]);
    let future = Filter {
        since: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
        ..Filter::default()
    };
    assert!(kinds(future).is_empty());
    let past = Filter {
        until: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
        ..Filter::default()
    };
    assert_eq!(kinds(past).len(), 4);
}

#[test]
fn a_handle_notices_another_process_rotated_the_file() {
    // Two handles = two open file descriptions, as in two processes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    let quiet = SignalLog::open(&path).unwrap();
    let line_len = serde_json::to_string(&note(0)).unwrap().len() as u64 + 1;
    let rotating = SignalLog::open_with(
        &path,
        LogOptions {
            max_bytes: Some(line_len * 2),
            ..LogOptions::default()
        },
    )
    .unwrap();
    quiet.append(&note(0)).unwrap();
    rotating.append(&note(1)).unwrap();
    rotating.append(&note(2)).unwrap(); // rotates: 0, 1 go to .1
    quiet.append(&note(3)).unwrap(); // must land in the new file
    let current: Vec<_> = ahp_signals_log::read(&path)
        .unwrap()
        .map(|r| note_number(&r.unwrap()))
        .collect();
    assert_eq!(current, [2, 3]);
}
