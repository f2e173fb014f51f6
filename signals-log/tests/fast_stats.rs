//! The parallel, partial read of `scan` against the plain one: the same
//! statistics, the same skipped lines, on a log with every kind of record,
//! rotated segments (compressed and legacy), torn and garbage lines, lines
//! without ids and lines only the full read takes.

use ahp_engine::{
    Action, EntryRun, EntryStatus, Event, Intensity, Modification, Outcome, RunRecord, Signal,
    SignalResponse, Uuid,
};
use ahp_signals_log::analytics::stats::{self, Stats};
use ahp_signals_log::{
    Filter, FsyncPolicy, LogOptions, Record, Release, Selection, SignalLog, read_all, read_many,
    scan,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
}

/// Appends raw text to the current file, between the writer's records.
fn raw(path: &Path, text: impl AsRef<[u8]>) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_ref()).unwrap();
}

/// A deterministic log of `n` dispatches starting at `start`, rotating
/// every `rotate` bytes, with a legacy uncompressed segment before it all.
fn generate(path: &Path, n: u64, start: DateTime<Utc>, rotate: u64, seed: u64) {
    let legacy = {
        let mut s = Signal::prompt("from an older ahp");
        s.header.source = "Legacy".into();
        s.header.timestamp = start - Duration::hours(1);
        s.context.hook = Some(Event::PreToolUse);
        let line = serde_json::to_string(&Record::from(s.clone())).unwrap();
        let mut r = SignalResponse::new(&s, Action::Dismiss, None).unwrap();
        r.id = Uuid::nil();
        r.consumed_at = start - Duration::minutes(59);
        let answer = serde_json::to_string(&Record::Response(r)).unwrap();
        format!("{line}\n{answer}\nnot json at all\n")
    };
    let mut legacy_path = path.as_os_str().to_owned();
    legacy_path.push(".1");
    std::fs::write(PathBuf::from(legacy_path), legacy).unwrap();

    let options = LogOptions {
        max_bytes: Some(rotate),
        fsync: FsyncPolicy::Never,
        ..LogOptions::default()
    };
    let log = SignalLog::open_with(path, options).unwrap();
    let mut x = seed;
    let mut rnd = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let sources = ["PermissionChecker", "FileChangeLimiter", "Rules", "Shadowy"];
    let events = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PreAgentTurnStop,
    ];
    let mut recent: Vec<Signal> = Vec::new();
    for i in 0..n {
        let at = start + Duration::seconds((i * 37) as i64);
        let event = events[rnd(3) as usize];
        let corr = format!("c-{seed}-{i}");
        let issue = (rnd(4) != 0).then(|| format!("ISS-{}", rnd(20)));
        let session = (rnd(5) != 0).then(|| format!("s-{}", rnd(7)));
        let mut entries = Vec::new();
        let mut fired = Vec::new();
        for (k, source) in sources.iter().enumerate() {
            let shadow = k == 3;
            let roll = rnd(100);
            let status = if roll < 20 {
                EntryStatus::Signalled
            } else if roll < 25 {
                EntryStatus::SkippedAfterBlock
            } else if roll < 27 {
                EntryStatus::Failed
            } else {
                EntryStatus::Accepted
            };
            if status == EntryStatus::Signalled {
                let mut s = match rnd(4) {
                    0 => Signal::block("stop").with_resolution_path(["fix"]),
                    1 => Signal::prompt("big \"change\"\nreally"),
                    2 => Signal::control(vec![Modification::set("tool.input.x", json!(1))]),
                    _ => Signal::aid("fyi").with_data(json!({"n": [1, 2.5, null]})),
                };
                s.header.source = (*source).into();
                s.header.timestamp = at;
                s.header.shadow = shadow;
                s.header.correlation_id = Some(corr.clone());
                s.context.hook = (rnd(10) != 0).then_some(event);
                s.context.issue_id = issue.clone();
                fired.push(s);
            }
            entries.push(EntryRun {
                id: (*source).into(),
                oracle: format!("{source}Oracle"),
                wave: k,
                status,
                duration_us: 10,
                shadow,
            });
        }
        let strongest = fired
            .iter()
            .filter(|s| !s.header.shadow)
            .map(|s| s.intensity())
            .max();
        let outcome = Outcome::from_strongest(strongest);
        for s in &fired {
            log.append(&Record::from(s.clone())).unwrap();
        }
        let run = RunRecord {
            id: Uuid::new_v4(),
            timestamp: at,
            event,
            correlation_id: corr,
            session_id: session.clone(),
            issue_id: issue,
            outcome,
            entries,
            signal_ids: fired.iter().map(|s| s.header.id).collect(),
            duration_us: 50,
            config_digest: Some("sha256:x".into()),
            context: json!({"files": {"changed_count": rnd(80)}, "tool": {"name": "Bash"}}),
        };
        log.append(&Record::Run(run)).unwrap();
        recent.extend(fired);
        // Answers, sometimes late, sometimes amended, sometimes to a
        // signal never logged.
        if rnd(2) == 0 && !recent.is_empty() {
            let s = &recent[rnd(recent.len() as u64) as usize];
            let actions: Vec<Action> = Action::for_intensity(s.intensity()).collect();
            for _ in 0..=rnd(2) {
                let action = actions[rnd(actions.len() as u64) as usize];
                let mut r = SignalResponse::new(s, action, None).unwrap();
                r.consumed_at = at + Duration::seconds(3);
                log.append(&Record::Response(r)).unwrap();
            }
        }
        if rnd(50) == 0 {
            let stranger = Signal::prompt("never logged");
            let mut r = SignalResponse::new(&stranger, Action::Dismiss, None).unwrap();
            r.consumed_at = at;
            log.append(&Record::Response(r)).unwrap();
        }
        match rnd(40) {
            0 => log
                .append(&Record::diagnostic(ahp_engine::Diagnostic {
                    id: Uuid::new_v4(),
                    level: [
                        ahp_engine::Level::Info,
                        ahp_engine::Level::Warning,
                        ahp_engine::Level::Error,
                    ][rnd(3) as usize],
                    timestamp: at,
                    source: sources[rnd(4) as usize].into(),
                    event: Some(event),
                    correlation_id: None,
                    message: "oracle timed out".into(),
                    file: None,
                    line: None,
                }))
                .unwrap(),
            1 => log
                .append(&Record::Release(Release {
                    id: Uuid::new_v4(),
                    timestamp: at,
                    session_id: session.unwrap_or_else(|| "s-x".into()),
                    event: Event::PreAgentTurnStop,
                    consecutive_blocks: 3,
                    cap: 3,
                    correlation_id: None,
                    reason: "gate".into(),
                }))
                .unwrap(),
            // Garbage, a torn line, a line without an id, a line whose
            // `kind` is not first, a signal with an alias for its event.
            2 => raw(path, "{\"kind\":\"signal\",\"hea\n"),
            3 => raw(path, b"\x01garbage \xff\n"),
            4 => raw(
                path,
                format!(
                    "{{\"kind\":\"info\",\"level\":\"info\",\"timestamp\":\"{}\",\"source\":\"ahp\",\"message\":\"legacy\"}}\n",
                    at.to_rfc3339()
                ),
            ),
            5 => raw(
                path,
                format!(
                    "{{\"timestamp\":\"{}\",\"event\":\"PreToolUse\",\"correlation_id\":\"odd-{i}\",\"outcome\":\"accept\",\"entries\":[{{\"id\":\"Rules\",\"oracle\":\"R\",\"wave\":0,\"status\":\"accepted\",\"duration_us\":1}}],\"signal_ids\":[],\"duration_us\":1,\"context\":{{\"files\":{{\"changed_count\":3}}}},\"kind\":\"run\"}}\n",
                    at.to_rfc3339()
                ),
            ),
            6 => raw(path, "\n   \n"),
            _ => {}
        }
    }
    // A torn final line, no newline.
    raw(path, "{\"kind\":\"run\",\"times");
}

/// The plain read: every record of the logs through a selection.
fn slow(paths: &[&Path], filter: &Filter) -> (Stats, Vec<usize>) {
    let reader = read_many(paths).unwrap();
    let mut select = Selection::new(filter.clone());
    let mut records = Vec::new();
    let mut reader = reader;
    for r in reader.by_ref() {
        let r = r.unwrap();
        if select.matches(&r) {
            records.push(r);
        }
    }
    let skipped = reader.logs().iter().map(|r| r.skipped()).collect();
    (stats::collect(records), skipped)
}

fn fast(paths: &[&Path], filter: &Filter) -> (Stats, Vec<usize>) {
    let logs = scan::open(paths).unwrap();
    let total = logs.total_bytes();
    let mut last = (0, 0);
    let (stats, skipped) = logs.stats(filter.clone(), |b, r| last = (b, r)).unwrap();
    assert_eq!(last.0, total);
    (stats, skipped.iter().map(|s| s.count).collect())
}

fn filters() -> Vec<Filter> {
    let f = Filter::default;
    vec![
        f(),
        Filter {
            source: Some("PermissionChecker".into()),
            ..f()
        },
        Filter {
            event: Some(Event::PostToolUse),
            ..f()
        },
        Filter {
            intensity: Some(Intensity::Prompt),
            ..f()
        },
        Filter {
            issue: Some("ISS-3".into()),
            ..f()
        },
        Filter {
            session: Some("s-2".into()),
            ..f()
        },
        Filter {
            since: Some(t0() + Duration::hours(10)),
            until: Some(t0() + Duration::hours(30)),
            ..f()
        },
        Filter {
            kinds: vec!["signal".into(), "response".into()],
            ..f()
        },
        Filter {
            kinds: vec!["run".into()],
            source: Some("Rules".into()),
            ..f()
        },
    ]
}

#[test]
fn the_fast_read_gives_the_same_statistics_and_skips_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signals.jsonl");
    generate(&path, 6000, t0(), 1_500_000, 7);
    let gz = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".gz")
        })
        .count();
    assert!(gz >= 2, "{gz} compressed segments");
    for filter in filters() {
        let (want, want_skipped) = slow(&[&path], &filter);
        let (got, got_skipped) = fast(&[&path], &filter);
        assert_eq!(got, want, "{filter:?}");
        assert_eq!(got_skipped, want_skipped);
    }
    let all = slow(&[&path], &Filter::default()).0;
    assert!(all.superseded_responses > 0 && all.unattributed_responses > 0);
    assert!(all.rows.iter().any(|r| r.shadow) && all.rows.iter().any(|r| r.mttr_samples > 0));
    assert!(
        all.rows
            .iter()
            .any(|r| r.source == "Legacy" && r.dismissals == 1)
    );
    // The same lines, at the same places.
    let mut plain = read_all(&path).unwrap();
    plain.by_ref().for_each(drop);
    let (_, skipped) = scan::open(&[&path])
        .unwrap()
        .stats(Filter::default(), |_, _| {})
        .unwrap();
    assert!(plain.skipped() > 3);
    assert_eq!(skipped[0].count, plain.skipped());
    assert_eq!(skipped[0].at, plain.skipped_at());
    assert_eq!(skipped[0].log, path);
}

#[test]
fn several_logs_merge_as_read_many_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    generate(&a, 1500, t0(), 200_000, 3);
    // Overlapping in time, a second and a half apart.
    generate(&b, 1500, t0() + Duration::milliseconds(1500), 200_000, 11);
    let both: [&Path; 2] = [&a, &b];
    for filter in filters() {
        let (want, want_skipped) = slow(&both, &filter);
        let (got, got_skipped) = fast(&both, &filter);
        assert_eq!(got, want, "{filter:?}");
        assert_eq!(got_skipped, want_skipped);
    }
    let merged = slow(&both, &Filter::default()).0;
    let alone = slow(&[&a], &Filter::default()).0;
    assert!(merged.records > alone.records);
    // Order matters: merged by time, the timestamps never go back by
    // more than the log's own disorder (answers a few seconds late).
    let times: Vec<DateTime<Utc>> = read_many(&both)
        .unwrap()
        .map(|r| r.unwrap().timestamp())
        .collect();
    assert!(times.windows(2).all(|w| w[1] >= w[0] - Duration::hours(2)));
}

#[test]
fn a_missing_log_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let there = dir.path().join("there.jsonl");
    SignalLog::open(&there).unwrap();
    let missing = dir.path().join("missing.jsonl");
    let err = scan::open(&[&there, &missing]).unwrap_err();
    assert!(err.to_string().contains("missing.jsonl"), "{err}");
}
