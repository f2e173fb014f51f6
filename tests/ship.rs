//! `ahp signals ship` to a real PostgreSQL server and to an OTLP/HTTP
//! receiver, and `ahp signals stats|tune|report --db`, end to end.
//!
//! The PostgreSQL tests need a server: `.ci/run` starts one
//! (`.ci/postgres.sh`) and names it in `AHP_TEST_POSTGRES`; each test makes
//! its own database there. Without it they fail under CI and say they were
//! skipped elsewhere.

use crate::common::*;
use ahp_engine::{
    Action, Diagnostic, EntryRun, EntryStatus, Event, Level, Outcome, RunRecord, Signal,
    SignalResponse, Uuid,
};
use ahp_signals_log::{LogOptions, Record, SignalLog};
use chrono::{Duration, TimeZone, Utc};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

/// A database of its own on the test server, dropped at the end; `None`
/// (and a note) where no server is configured, a failure under CI.
struct Db {
    admin: String,
    name: String,
    url: String,
}

impl Db {
    fn new(tag: &str) -> Option<Db> {
        let Ok(admin) = std::env::var("AHP_TEST_POSTGRES") else {
            assert!(
                std::env::var_os("CI").is_none(),
                "AHP_TEST_POSTGRES is not set: .ci/run starts a PostgreSQL server for these tests"
            );
            eprintln!(
                "SKIPPED: no AHP_TEST_POSTGRES (start one: source <(bash .ci/postgres.sh start))"
            );
            return None;
        };
        let name = format!("t_{tag}_{}", &Uuid::new_v4().simple().to_string()[..12]);
        psql(&admin, &format!("CREATE DATABASE {name}"));
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let url = format!("{base}/{name}");
        Some(Db { admin, name, url })
    }

    fn query(&self, sql: &str) -> String {
        psql(&self.url, sql)
    }

    /// Runs stored so far; 0 before the shipper created the tables.
    fn runs(&self) -> u64 {
        let out = StdCommand::new("psql")
            .args([&self.url, "-qAtc", "SELECT count(*) FROM runs"])
            .output()
            .expect("psql");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = StdCommand::new("psql")
            .args([
                &self.admin,
                "-qAtc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .output();
    }
}

fn psql(url: &str, sql: &str) -> String {
    let out = StdCommand::new("psql")
        .args([url, "-qAtc", sql])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A log of `rounds` dispatches of every record kind, its timestamps
/// offset by `machine` milliseconds (so two machines' records never tie).
fn team_log(path: &Path, machine: i64, rounds: i64, options: LogOptions) -> BTreeSet<String> {
    let log = SignalLog::open_with(path, options).unwrap();
    let start =
        Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap() + Duration::milliseconds(machine);
    let mut ids = BTreeSet::new();
    let mut put = |r: Record| {
        ids.insert(r.id().to_string());
        log.append(&r).unwrap();
    };
    for i in 0..rounds {
        let at = start + Duration::seconds(i * 10);
        let corr = format!("m{machine}-{i}");
        let issue = format!("ISSUE-{}", i % 7);
        let (outcome, signal) = match i % 4 {
            0 => {
                let mut s = Signal::block("destructive command");
                s.header.source = "PermissionChecker".into();
                (
                    Outcome::Block,
                    Some((
                        s,
                        if i % 8 == 0 {
                            Action::ProceedWithRisk
                        } else {
                            Action::RetryAfterFix
                        },
                    )),
                )
            }
            1 => {
                let mut s = Signal::prompt("large change");
                s.header.source = "FileChangeLimiter".into();
                (
                    Outcome::Prompt,
                    Some((
                        s,
                        if i % 3 == 0 {
                            Action::Acknowledge
                        } else {
                            Action::Dismiss
                        },
                    )),
                )
            }
            _ => (Outcome::Accept, None),
        };
        let mut signal_ids = Vec::new();
        let mut response = None;
        if let Some((mut s, action)) = signal {
            s.header.timestamp = at;
            s.header.correlation_id = Some(corr.clone());
            s.context.hook = Some(Event::PreToolUse);
            s.context.issue_id = Some(issue.clone());
            signal_ids.push(s.header.id);
            let mut r = SignalResponse::new(&s, action, None).unwrap();
            r.consumed_at = at + Duration::seconds(3);
            response = Some(r);
            put(Record::from(s));
        }
        let entry = |id: &str, oracle: &str, signalled: bool| EntryRun {
            id: id.into(),
            oracle: oracle.into(),
            wave: 1,
            status: if signalled {
                EntryStatus::Signalled
            } else {
                EntryStatus::Accepted
            },
            duration_us: 5,
            shadow: false,
        };
        put(Record::Run(RunRecord {
            id: Uuid::new_v4(),
            timestamp: at + Duration::milliseconds(1),
            event: Event::PreToolUse,
            correlation_id: corr.clone(),
            session_id: Some(format!("s{machine}")),
            issue_id: Some(issue.clone()),
            outcome,
            entries: vec![
                entry(
                    "PermissionChecker",
                    "PermissionChecker",
                    outcome == Outcome::Block,
                ),
                entry(
                    "FileChangeLimiter",
                    "FileChangeLimiter",
                    outcome == Outcome::Prompt,
                ),
            ],
            signal_ids,
            duration_us: 80,
            config_digest: Some("sha256:test".into()),
            context: serde_json::json!({"files": {"changed_count": i % 30}}),
        }));
        if let Some(r) = response {
            put(Record::Response(r));
        }
        if i % 25 == 0 {
            put(Record::diagnostic(Diagnostic {
                id: Uuid::new_v4(),
                level: Level::Warning,
                timestamp: at + Duration::seconds(4),
                source: "TestGate".into(),
                event: Some(Event::PreToolUse),
                correlation_id: Some(corr),
                message: "tests timed out".into(),
                file: None,
                line: None,
            }));
        }
    }
    ids
}

/// The log's record ids as a reader sees them.
fn log_ids(path: &Path) -> BTreeSet<String> {
    ahp_signals_log::read_all(path)
        .unwrap()
        .map(|r| r.unwrap().id().to_string())
        .collect()
}

fn ship(sb: &Sandbox, log: &Path, to: &str, extra: &[&str]) -> std::process::Output {
    sb.ahp()
        .args(["signals", "ship", "--to", to, "--log"])
        .arg(log)
        .args(extra)
        .output()
        .unwrap()
}

fn stats_args(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    json_out(&out)
}

#[test]
fn two_machines_ship_to_one_database_and_db_stats_equal_the_local_stats_over_both_logs() {
    let Some(db) = Db::new("team") else { return };
    let (alice, bob) = (Sandbox::new(), Sandbox::new());
    let a_ids = team_log(&alice.log_path(), 0, 400, LogOptions::default());
    let b_ids = team_log(&bob.log_path(), 3, 300, LogOptions::default());

    for (sb, user) in [(&alice, "alice"), (&bob, "bob")] {
        let out = sb
            .ahp()
            .args(["signals", "ship", "--to", &db.url])
            .env("USER", user)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("shipped"), "{}", stderr(&out));
    }
    assert_eq!(
        db.query("SELECT string_agg(DISTINCT user_name, ',' ORDER BY user_name) FROM runs"),
        "alice,bob"
    );
    let all: BTreeSet<String> = a_ids.union(&b_ids).cloned().collect();
    let stored: BTreeSet<String> = db
        .query(
            "SELECT id FROM signals UNION ALL SELECT id FROM responses UNION ALL SELECT id FROM runs \
             UNION ALL SELECT id FROM diagnostics UNION ALL SELECT id FROM releases",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(stored, all);
    // Typed columns beside the record, and where each came from.
    assert_eq!(
        db.query("SELECT count(*) FROM signals WHERE intensity = 'block' AND source = 'PermissionChecker'"),
        (100 + 75).to_string()
    );
    assert_eq!(db.query("SELECT count(DISTINCT project) FROM runs"), "2");
    assert_eq!(
        db.query("SELECT count(*) FROM runs WHERE record->>'correlation_id' = correlation_id"),
        (400 + 300).to_string()
    );

    // A second ship sends nothing new.
    let out = ship(&alice, &alice.log_path(), &db.url, &[]);
    assert!(
        stderr(&out).contains("shipped 0 records"),
        "{}",
        stderr(&out)
    );

    // The team's figures equal the local figures over both logs.
    let a = alice.log_path();
    let b = bob.log_path();
    let local = stats_args(
        &alice,
        &["--log", a.to_str().unwrap(), "--log", b.to_str().unwrap()],
    );
    let remote = stats_args(&alice, &["--db", &db.url]);
    assert_eq!(remote, local);
    assert_eq!(local["signals"], 200 + 150);
    // With filters too.
    for filter in [
        &["--source", "FileChangeLimiter"][..],
        &["--intensity", "block"],
        &["--issue", "ISSUE-3"],
        &["--session", "s3"],
        &["--kind", "run"],
        &["--kind", "warning"],
        &["--kind", "response", "--source", "FileChangeLimiter"],
        &["--kind", "run", "--session", "s3"],
        &["--kind", "response", "--since", "2026-03-01T09:10:00Z"],
        &[
            "--since",
            "2026-03-01T09:30:00Z",
            "--until",
            "2026-03-01T10:00:00Z",
        ],
    ] {
        let mut args = vec!["--log", a.to_str().unwrap(), "--log", b.to_str().unwrap()];
        args.extend_from_slice(filter);
        let local = stats_args(&alice, &args);
        let mut args = vec!["--db", db.url.as_str()];
        args.extend_from_slice(filter);
        assert_eq!(stats_args(&alice, &args), local, "{filter:?}");
    }
    // tune and report read the database too.
    let out = alice
        .ahp()
        .args(["signals", "tune", "--db", &db.url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("FileChangeLimiter"),
        "{}",
        stdout(&out)
    );
    let html = alice.root().join("team.html");
    let out = alice
        .ahp()
        .args(["signals", "report", "--db", &db.url, "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("PermissionChecker"));
    // Who and where: one row per developer and project.
    assert!(html.contains("By developer and project"), "no breakdown");
    assert!(html.contains("<td>alice</td>"), "no row for alice");
    assert!(html.contains("<td>bob</td>"), "no row for bob");
}

#[test]
fn a_killed_shipper_started_again_loses_and_duplicates_nothing() {
    let Some(db) = Db::new("kill") else { return };
    let sb = Sandbox::new();
    let log = sb.log_path();
    let ids = team_log(&log, 0, 3000, LogOptions::default());
    let bin = assert_cmd::cargo::cargo_bin("ahp");
    let mut killed_at = Vec::new();
    // Killed three times at different points, then run to the end.
    for round in 0..3 {
        let mut child = StdCommand::new(&bin)
            .args(["signals", "ship", "--batch", "25", "--to", &db.url, "--log"])
            .arg(&log)
            .env("HOME", sb.home.path())
            .current_dir(sb.root())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let before: u64 = db.runs();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let now: u64 = db.runs();
            if now > before + 100 * (round + 1) || std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        killed_at.push(db.runs().to_string());
    }
    let partial: u64 = killed_at[2].parse().unwrap();
    assert!(
        partial < 3000,
        "the shipper finished before it was killed: {killed_at:?}"
    );
    let out = ship(&sb, &log, &db.url, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stored: Vec<String> = db
        .query(
            "SELECT id FROM signals UNION ALL SELECT id FROM responses UNION ALL SELECT id FROM runs \
             UNION ALL SELECT id FROM diagnostics",
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(stored.len(), ids.len(), "duplicated or lost");
    assert_eq!(stored.into_iter().collect::<BTreeSet<_>>(), ids);
}

#[test]
fn rotation_keeps_what_the_database_has_not_received_and_the_shipper_follows_the_segments() {
    let Some(db) = Db::new("rot") else { return };
    let sb = Sandbox::new();
    let log = sb.log_path();
    let small = || LogOptions {
        max_bytes: Some(20_000),
        keep: 2,
        ..LogOptions::default()
    };
    // Shipped once early: the database now has a cursor that rotation respects.
    let first = team_log(&log, 0, 20, small());
    let out = ship(&sb, &log, &db.url, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Many rotations later, past the budget of two segments…
    let more = team_log(&log, 5, 600, small());
    let segments = ahp_signals_log::segments::rotated(&log).unwrap();
    assert!(
        segments.len() > 2,
        "nothing kept past the budget: {segments:?}"
    );
    let kept = ahp_signals_log::read_all(&log)
        .unwrap()
        .filter_map(|r| match r.unwrap() {
            Record::Warning(d) if d.source == "ahp" => Some(d.message),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert!(
        kept.iter()
            .any(|m| m.contains("past the history budget") && m.contains(&db.url)),
        "{kept:?}"
    );
    // …every record reaches the database, and the next rotation may drop.
    let out = ship(&sb, &log, &db.url, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stored: BTreeSet<String> = db
        .query("SELECT id FROM signals UNION ALL SELECT id FROM responses UNION ALL SELECT id FROM runs UNION ALL SELECT id FROM diagnostics")
        .lines()
        .map(str::to_owned)
        .collect();
    let written: BTreeSet<String> = first.union(&more).cloned().collect();
    assert!(written.is_subset(&stored));
    assert_eq!(stored, log_ids(&log));
    team_log(&log, 9, 60, small());
    assert!(ahp_signals_log::segments::rotated(&log).unwrap().len() <= 3);
}

#[test]
fn a_wrong_database_or_a_missing_log_fails_with_a_clear_message() {
    let sb = Sandbox::new();
    team_log(&sb.log_path(), 0, 3, LogOptions::default());
    let out = ship(
        &sb,
        &sb.log_path(),
        "postgres://ahp:s3cret@127.0.0.1:1/nowhere",
        &[],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("cannot connect to postgres://ahp:***@127.0.0.1:1/nowhere"),
        "{err}"
    );
    // A database not reachable yet is tried again, as a failed delivery
    // is (and with `--follow` for as long as it takes).
    assert!(err.contains("gave up after 6 tries"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    let out = ship(
        &sb,
        &sb.root().join("nope.jsonl"),
        "postgres://127.0.0.1:1/x",
        &[],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no signal log at"),
        "{}",
        stderr(&out)
    );
    let out = ship(&sb, &sb.log_path(), "ftp://example.invalid/x", &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("unknown sink"), "{}", stderr(&out));
}

/// The Python receiver: (child, port, ids file).
fn receiver(fail_first: u32) -> (std::process::Child, u16, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ids = dir.path().join("ids");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/otlp_receiver.py");
    let mut child = StdCommand::new("python3")
        .arg(&script)
        .args(["0", &fail_first.to_string()])
        .arg(&ids)
        .args(["3"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap();
    (child, port, ids, dir)
}

#[test]
fn otlp_a_collector_that_answers_503_then_200_receives_each_record_once() {
    let sb = Sandbox::new();
    let log = sb.log_path();
    let ids = team_log(&log, 0, 120, LogOptions::default());
    let (mut child, port, ids_file, _dir) = receiver(2);
    let url = format!("http://127.0.0.1:{port}");
    let out = ship(
        &sb,
        &log,
        &url,
        &["--batch", "50", "--header", "Authorization=Bearer t0ken"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // The two 503s were retried, and said.
    assert_eq!(
        stderr(&out).matches("trying again").count(),
        2,
        "{}",
        stderr(&out)
    );
    // Shipping again to the same sink sends nothing.
    let out = ship(&sb, &log, &url, &["--header", "Authorization=Bearer t0ken"]);
    assert!(
        stderr(&out).contains("shipped 0 records"),
        "{}",
        stderr(&out)
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "the receiver found an invalid request");
    let received: Vec<String> = std::fs::read_to_string(&ids_file)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(received.len(), ids.len(), "duplicated or lost");
    assert_eq!(received.into_iter().collect::<BTreeSet<_>>(), ids);
}

#[test]
fn otlp_over_https_or_with_a_header_injection_is_refused() {
    let sb = Sandbox::new();
    team_log(&sb.log_path(), 0, 2, LogOptions::default());
    let out = ship(&sb, &sb.log_path(), "https://collector.example:4318", &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Collector"), "{}", stderr(&out));
    let out = ship(
        &sb,
        &sb.log_path(),
        "http://127.0.0.1:1",
        &["--header", "X-Evil=a\r\nHost: other"],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("X-Evil"), "{}", stderr(&out));
}
