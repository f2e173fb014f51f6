//! `ahp signals`: query, stats, tune, report and replay, end to end.

mod common;
use ahp_engine::{
    Action, EntryRun, EntryStatus, Event, Outcome, RunRecord, Signal, SignalResponse,
};
use ahp_signals_log::{Record, SignalLog};
use chrono::{Duration, TimeZone, Utc};
use common::*;
use serde_json::json;
use std::path::Path;

const RM_RF: &str = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#;
const LS: &str = r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#;

/// Two blocked `rm -rf /` and one accepted `ls`, with the default policy.
fn logged() -> Sandbox {
    let sb = Sandbox::new();
    for ctx in [RM_RF, LS, RM_RF] {
        sb.ahp()
            .args(["run", "pre-tool-use"])
            .write_stdin(ctx)
            .output()
            .unwrap();
    }
    sb
}

/// `ahp signals stats --format json`, which must succeed.
fn stats_json(sb: &Sandbox) -> std::process::Output {
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn stats_counts_blocks_per_source() {
    let sb = logged();
    let out = stats_json(&sb);
    let v = json_out(&out);
    assert_eq!(v["runs"], 3);
    let row = &v["rows"][0];
    assert_eq!(row["source"], "PermissionChecker");
    assert_eq!(row["event"], "pre-tool-use");
    assert_eq!(row["firings"], 2);
    assert_eq!(row["runs_selected"], 3);
    assert_eq!(row["intensity"]["block"], 2);
    let text = sb.ahp().args(["signals", "stats"]).output().unwrap();
    let text = stdout(&text);
    assert!(text.starts_with("SOURCE"), "{text}");
    assert!(text.contains("66.7%"), "{text}");
}

#[test]
fn query_prints_matching_records_as_json_lines() {
    let sb = logged();
    let out = sb
        .ahp()
        .args(["signals", "query", "--kind", "run", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let outcomes: Vec<String> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"].to_string())
        .collect();
    assert_eq!(outcomes, ["\"block\"", "\"accept\"", "\"block\""]);
    let out = sb
        .ahp()
        .args([
            "signals",
            "query",
            "--intensity",
            "block",
            "--since",
            "1h",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 2);
    sb.ahp()
        .args(["signals", "query", "--since", "yesterday"])
        .assert()
        .code(1);
}

#[test]
fn report_writes_an_offline_html_page() {
    let sb = logged();
    let out = sb.root().join("report.html");
    sb.ahp()
        .args(["signals", "report", "--out"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<svg"));
    assert!(html.contains("PermissionChecker"));
    assert!(!html.contains("http"));
}

#[test]
fn replay_flips_a_block_when_the_candidate_drops_the_entry() {
    let sb = logged();
    let candidate = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(candidate.path().join(".ahp")).unwrap();
    std::fs::write(
        candidate.path().join(".ahp/hooks.yaml"),
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      enabled: false\n",
    )
    .unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(candidate.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let flips = text
        .lines()
        .filter(|l| l.starts_with("pre-tool-use") && l.contains("block → accept"))
        .count();
    assert_eq!(flips, 2, "{text}");
    assert!(text.contains("  block → accept: 2"), "{text}");
    assert!(text.contains("-PermissionChecker"), "{text}");
    assert!(
        text.contains("3 runs replayed: 2 changed, 2 outcome flips"),
        "{text}"
    );

    // The same policy as logged changes nothing.
    let same = tempfile::tempdir().unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--format", "json", "--config"])
        .arg(same.path())
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["runs"], 3);
    assert_eq!(v["outcome_flips"], 0);
}

#[test]
fn a_missing_log_is_an_error() {
    let sb = Sandbox::new();
    sb.ahp().args(["signals", "stats"]).assert().code(1);
}

/// The known dismissal pattern: 100 FileChangeLimiter prompts on
/// pre-tool-use, one a minute, with 1..=100 changed files; the first 92
/// dismissed, the other 8 acknowledged (as in signals-log's analytics test).
fn dismissal_log(path: &Path) {
    let log = SignalLog::open(path).unwrap();
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    for i in 0..100u64 {
        let at = t0 + Duration::minutes(i as i64);
        let corr = format!("corr-{i:04}");
        let mut s = Signal::prompt("large change");
        s.header.source = "FileChangeLimiter".into();
        s.header.timestamp = at;
        s.header.correlation_id = Some(corr.clone());
        s.context.hook = Some(Event::PreToolUse);
        log.append(&Record::from(s.clone())).unwrap();
        log.append(&Record::Run(RunRecord {
            timestamp: at,
            event: Event::PreToolUse,
            correlation_id: corr,
            session_id: Some("s1".into()),
            issue_id: None,
            outcome: Outcome::Prompt,
            entries: vec![EntryRun {
                id: "FileChangeLimiter".into(),
                oracle: "FileChangeLimiter".into(),
                wave: 0,
                status: EntryStatus::Signalled,
                duration_us: 10,
            }],
            signal_ids: vec![s.header.id],
            duration_us: 20,
            config_digest: None,
            context: json!({"files": {"changed_count": i + 1}}),
        }))
        .unwrap();
        let action = if i < 92 {
            Action::Dismiss
        } else {
            Action::Acknowledge
        };
        let mut r = SignalResponse::new(&s, action, None).unwrap();
        r.consumed_at = at + Duration::seconds(5);
        log.append(&Record::Response(r)).unwrap();
    }
}

const TUNE_SUGGESTION: &str = "FileChangeLimiter prompt dismissed 92% of 100 → lower to aid or raise max_files to 90 (p90 of changed files)";

#[test]
fn tune_suggests_lowering_a_mostly_dismissed_prompt_with_its_evidence() {
    let sb = Sandbox::new();
    let log = sb.root().join("generated.jsonl");
    dismissal_log(&log);

    let out = sb
        .ahp()
        .args(["signals", "tune", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{TUNE_SUGGESTION}  [pre-tool-use]\n"));

    let out = sb
        .ahp()
        .args(["signals", "tune", "--format", "json", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        json_out(&out),
        json!([{
            "source": "FileChangeLimiter",
            "event": "pre-tool-use",
            "finding": "prompt_dismissed",
            "evidence": {
                "prompts": 100,
                "dismissals": 92,
                "dismissal_rate": 0.92,
                "changed_files_p90": 90,
            },
            "suggestion": TUNE_SUGGESTION,
        }])
    );

    // Below the sample threshold (20 prompts) there is no advice: the last
    // 19 minutes hold 19 prompts, 11 of them dismissed.
    let out = sb
        .ahp()
        .args([
            "signals",
            "tune",
            "--since",
            "2026-03-01T11:21:00Z",
            "--log",
        ])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "no suggestions\n");
}

#[test]
fn a_torn_line_is_reported_as_skipped_and_the_other_records_count() {
    let sb = logged();
    // A writer killed mid-line, then later appends: the torn line sits
    // between whole records; another is left at the very end.
    let text = std::fs::read_to_string(sb.log_path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}"); // 2 × (signal, run) + 1 run
    let torn = &lines[0][..lines[0].len() / 2];
    let mut damaged = String::new();
    for (i, l) in lines.iter().enumerate() {
        damaged.push_str(l);
        damaged.push('\n');
        if i == 1 {
            damaged.push_str(torn);
            damaged.push('\n');
        }
    }
    damaged.push_str(torn);
    std::fs::write(sb.log_path(), damaged).unwrap();

    let out = stats_json(&sb);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "warning: 2 unreadable lines skipped in {}",
            sb.log_path().display()
        )),
        "{err}"
    );
    let v = json_out(&out);
    assert_eq!(v["records"], 5);
    assert_eq!(v["runs"], 3);
    assert_eq!(v["rows"][0]["source"], "PermissionChecker");
    assert_eq!(v["rows"][0]["firings"], 2);

    // The same for query: every whole record is printed.
    let out = sb
        .ahp()
        .args(["signals", "query", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 5);
    assert!(stderr(&out).contains("warning: 2 unreadable lines skipped"));
}
