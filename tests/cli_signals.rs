//! `ahp signals`: query, stats, tune, report and replay, end to end.

use crate::common::*;
use ahp_engine::{
    Action, EntryRun, EntryStatus, Event, Outcome, RunRecord, Signal, SignalResponse,
};
use ahp_signals_log::{Record, SignalLog};
use chrono::{Duration, TimeZone, Utc};
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

/// The PermissionChecker row of `ahp signals stats --format json`.
fn pc_row(v: &serde_json::Value) -> &serde_json::Value {
    v["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["source"] == "PermissionChecker"))
        .unwrap_or(&serde_json::Value::Null)
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
    let row = pc_row(&v);
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
fn a_project_without_a_log_has_no_signals_yet() {
    let sb = Sandbox::new();
    let out = sb.ahp().args(["signals", "stats"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("no signals yet"),
        "{}",
        stdout(&out)
    );
    assert!(!stderr(&out).contains("os error"), "{}", stderr(&out));
    for cmd in [
        &["signals", "tune"][..],
        &["signals", "query"],
        &["signals", "stats", "--format", "json"],
        &["signals", "query", "--format", "json"],
    ] {
        let out = sb.ahp().args(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", stderr(&out));
        let both = format!("{}{}", stdout(&out), stderr(&out));
        assert!(both.contains("no signals yet"), "{cmd:?}: {both}");
        assert!(!both.contains("error"), "{cmd:?}: {both}");
    }
    // JSON stays JSON: the statistics of nothing.
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(json_out(&out)["records"], 0);

    // A log named on the command line must exist: a typo is an error.
    let out = sb
        .ahp()
        .args(["signals", "stats", "--log", "nope.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("nope.jsonl"), "{}", stderr(&out));
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
            id: ahp_engine::Uuid::new_v4(),
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
                shadow: false,
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
    assert_eq!(pc_row(&v)["source"], "PermissionChecker");
    assert_eq!(pc_row(&v)["firings"], 2);

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

/// `ahp run pre-tool-use` with `context`; returns the run's first signal id.
fn run_signal(sb: &Sandbox, context: &str) -> String {
    let out = sb.run("pre-tool-use", context.to_string());
    let v = json_out(&out);
    v["signals"][0]["header"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no signal: {v}"))
        .to_string()
}

fn respond(sb: &Sandbox, id: &str, action: &str, more: &[&str]) -> std::process::Output {
    sb.ahp()
        .args(["respond", id, action])
        .args(more)
        .output()
        .unwrap()
}

const RM_RF_ISS_1: &str =
    r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}},"issue":{"id":"ISS-1"}}"#;
const RM_RF_ISS_2: &str =
    r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}},"issue":{"id":"ISS-2"}}"#;

#[test]
fn filters_select_signals_and_keep_their_responses() {
    let sb = Sandbox::new();
    let one = run_signal(&sb, RM_RF_ISS_1);
    let two = run_signal(&sb, RM_RF_ISS_2);
    assert!(respond(&sb, &one, "retry_after_fix", &[]).status.success());
    let out = respond(&sb, &two, "proceed_with_risk", &[]);
    assert!(out.status.success(), "{}", stderr(&out));

    // ISS-2's one block was overridden: 100%, not 0%.
    let out = sb
        .ahp()
        .args(["signals", "stats", "--issue", "ISS-2", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["signals"], 1, "{v}");
    assert_eq!(v["responses"], 1, "{v}");
    let row = pc_row(&v);
    assert_eq!(row["proceed_with_risk"], 1, "{v}");
    assert_eq!(row["proceed_with_risk_rate"], 1.0, "{v}");
    let out = sb
        .ahp()
        .args(["signals", "stats", "--issue", "ISS-2"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("100.0%"), "{}", stdout(&out));
    // The other issue's answer is not ISS-2's.
    let out = sb
        .ahp()
        .args(["signals", "stats", "--issue", "ISS-1", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(pc_row(&json_out(&out))["proceed_with_risk"], 0);

    // The same selection in query and report.
    let out = sb
        .ahp()
        .args([
            "signals", "query", "--issue", "ISS-2", "--kind", "response", "--format", "json",
        ])
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", stdout(&out));
    assert_eq!(lines[0]["signal_id"], two.as_str());
    let html = sb.root().join("r.html");
    sb.ahp()
        .args(["signals", "report", "--issue", "ISS-2", "--out"])
        .arg(&html)
        .assert()
        .success();
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("<td>100%</td>"), "{html}");

    // tune --source: the dismissals of that source still count.
    let log = sb.root().join("generated.jsonl");
    dismissal_log(&log);
    let out = sb
        .ahp()
        .args(["signals", "tune", "--source", "FileChangeLimiter", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{TUNE_SUGGESTION}  [pre-tool-use]\n"));
}

#[test]
fn a_signal_has_one_answer_and_amend_replaces_it() {
    let sb = Sandbox::new();
    let id = run_signal(&sb, RM_RF_ISS_1);
    let out = respond(&sb, &id, "proceed_with_risk", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let before = std::fs::read_to_string(sb.log_path()).unwrap();

    // A second answer without --amend: refused, naming the first.
    let out = respond(&sb, &id, "abort", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "signal {id} is already answered `proceed_with_risk`"
        )) && err.contains("--amend"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_to_string(sb.log_path()).unwrap(), before);

    // With --amend the new answer replaces the old one in the statistics.
    let out = respond(&sb, &id, "abort", &["--amend"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = stats_json(&sb);
    let v = json_out(&out);
    assert_eq!(v["responses"], 2);
    assert_eq!(v["superseded_responses"], 1);
    assert_eq!(pc_row(&v)["proceed_with_risk"], 0, "{v}");
    assert_eq!(pc_row(&v)["proceed_with_risk_rate"], 0.0, "{v}");

    // An older log holding two answers to one prompt counts the latest
    // once: no 200% dismissal rate.
    let log = sb.root().join("old.jsonl");
    let w = SignalLog::open(&log).unwrap();
    let mut prompts = Vec::new();
    for _ in 0..2 {
        let mut s = Signal::prompt("large change");
        s.header.source = "FileChangeLimiter".into();
        s.context.hook = Some(Event::PreToolUse);
        w.append(&Record::from(s.clone())).unwrap();
        prompts.push(s);
    }
    for action in [Action::Dismiss, Action::Dismiss] {
        let r = SignalResponse::new(&prompts[0], action, None).unwrap();
        w.append(&Record::Response(r)).unwrap();
    }
    for action in [Action::Dismiss, Action::Acknowledge] {
        let r = SignalResponse::new(&prompts[1], action, None).unwrap();
        w.append(&Record::Response(r)).unwrap();
    }
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["rows"][0]["prompts"], 2, "{v}");
    assert_eq!(v["rows"][0]["dismissals"], 1, "{v}");
    assert_eq!(v["rows"][0]["dismissal_rate"], 0.5, "{v}");
    let text = sb
        .ahp()
        .args(["signals", "stats", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        stdout(&text).contains("4 responses (2 superseded by a later answer, 0 unattributed)"),
        "{}",
        stdout(&text)
    );
}

#[test]
fn replay_refuses_a_config_directory_that_does_not_exist() {
    let sb = logged();
    let missing = sb.root().join("no-such-candidate");
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("--config {}", missing.display())) && err.contains("No such file"),
        "{err}"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    // A file is not a project directory either.
    let file = sb.write("candidate.yaml", "hooks: {}\n");
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));
}

#[test]
fn replay_leaves_what_it_did_not_replay_out_of_both_sides_and_names_the_input() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "no-ls",
        "trigger: pre-tool-call\n",
        "cat >/dev/null; echo 'no ls here' >&2; exit 2",
    );
    for ctx in [LS, LS] {
        let out = sb.run("pre-tool-use", ctx);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }
    // The same policy, the script not run: nothing changed.
    let same = tempfile::tempdir().unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(same.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("2 runs replayed: 0 changed, 0 outcome flips"),
        "{text}"
    );
    assert!(!text.contains("-no-ls"), "{text}");
    assert!(
        text.contains("not replayed: 1 entry (scripts; pass --allow-scripts): pre-tool-use no-ls"),
        "{text}"
    );
    let out = sb
        .ahp()
        .args(["signals", "replay", "--format", "json", "--config"])
        .arg(same.path())
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["outcome_flips"], 0, "{v}");
    assert_eq!(v["not_replayed"][0]["id"], "no-ls", "{v}");

    // With the scripts run, the same policy changes nothing either.
    let out = sb
        .ahp()
        .args(["signals", "replay", "--allow-scripts", "--config"])
        .arg(same.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("2 runs replayed: 0 changed"), "{text}");
    assert!(!text.contains("not replayed"), "{text}");

    // A real flip names the command it was about.
    let sb = logged();
    let candidate = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(candidate.path().join(".ahp")).unwrap();
    std::fs::write(
        candidate.path().join(".ahp/hooks.yaml"),
        "settings: { builtin: false }\nhooks:\n  post-tool-use:\n    - oracle: PermissionChecker\n",
    )
    .unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(candidate.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    let flip = text
        .lines()
        .find(|l| l.contains("block → accept"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(flip.contains("rm -rf /"), "{text}");
    let out = sb
        .ahp()
        .args(["signals", "replay", "--format", "json", "--config"])
        .arg(candidate.path())
        .output()
        .unwrap();
    assert_eq!(json_out(&out)["changes"][0]["input"], "rm -rf /");
}

#[test]
fn query_text_has_a_header_and_each_signals_message() {
    let sb = logged();
    let out = sb.ahp().args(["signals", "query"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    for column in ["TIME", "KIND", "LEVEL", "SOURCE", "EVENT", "ID", "MESSAGE"] {
        assert!(header.contains(column), "{header}");
    }
    let signal = lines
        .find(|l| l.contains(" signal "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        signal.contains("PermissionChecker") && signal.contains("Dangerous command: "),
        "{signal}"
    );
    // A run names its input.
    assert!(
        text.lines()
            .any(|l| l.contains(" run ") && l.ends_with("  ls")),
        "{text}"
    );
}

#[test]
fn stats_has_a_fire_rate_column() {
    let sb = logged();
    let out = sb.ahp().args(["signals", "stats"]).output().unwrap();
    let text = stdout(&out);
    let header = text.lines().next().unwrap();
    assert!(header.contains("FIRE RATE"), "{text}");
    let v = json_out(&stats_json(&sb));
    // 2 firings in 3 runs.
    let rate = pc_row(&v)["fire_rate"].as_f64().unwrap();
    assert!((rate - 2.0 / 3.0).abs() < 1e-9, "{v}");
}

/// Runs `ahp ARGS` with stdout a pipe closed before ahp writes (a reader
/// like `head` that has gone); returns the exit status and stderr.
fn with_closed_stdout(sb: &Sandbox, args: &[&str]) -> (std::process::ExitStatus, String) {
    let bin = assert_cmd::cargo::cargo_bin("ahp");
    let mut child = std::process::Command::new(bin)
        .args(args)
        .env("HOME", sb.home.path())
        .env("XDG_CONFIG_HOME", sb.home.path().join(".config"))
        .env("XDG_DATA_HOME", sb.home.path().join(".local/share"))
        .current_dir(sb.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    let sb = Sandbox::new();
    // More than a pipe buffer of output.
    let log = SignalLog::open(sb.log_path()).unwrap();
    for i in 0..2000 {
        let mut s = Signal::aid(format!("note {i}: see CONTRIBUTING.md"));
        s.context.hook = Some(Event::PreToolUse);
        log.append(&Record::from(s)).unwrap();
    }
    // Like `| head -1`: read one line, then close.
    let bin = assert_cmd::cargo::cargo_bin("ahp");
    let mut child = std::process::Command::new(bin)
        .args(["signals", "query"])
        .env("HOME", sb.home.path())
        .current_dir(sb.root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(first.starts_with("TIME"), "{first}");
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.is_empty(), "{err}");

    for args in [
        &["signals", "query", "--format", "json"][..],
        &["signals", "stats"],
        &["signals", "stats", "--format", "json"],
        &["signals", "tune"],
        &["signals", "replay", "--config", "."],
        &["config"],
        &["config", "--format", "json"],
        &["explain", "pre-tool-use"],
        &["explain", "--list"],
        &["schema"],
        &["validate"],
    ] {
        let (status, err) = with_closed_stdout(&sb, args);
        assert!(
            status.success() && !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {status:?}: {err}"
        );
    }
}

#[test]
fn an_amended_dismissal_no_longer_escalates() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {max_files: 2, action: prompt}\nescalation:\n  - {source: FileChangeLimiter, after_dismissed: 1, window: 7d}\n",
    );
    let big = r#"{"issue":{"id":"FEAT-1"},"files":{"changed":["a.rs","b.rs","c.rs"]}}"#;
    let id = run_signal(&sb, big);
    assert!(respond(&sb, &id, "dismiss", &[]).status.success());
    // On second thought the prompt was acknowledged, not dismissed.
    let out = respond(&sb, &id, "acknowledge", &["--amend"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sb.run("pre-tool-use", big);
    let v = json_out(&out);
    assert_eq!(v["signals"][0]["header"]["intensity"], "prompt", "{v}");
    assert!(v["signals"][0]["header"]["escalated_from"].is_null(), "{v}");
}

/// A log at `path` of `n` dispatches of `source`, one every 2 minutes from
/// `start`: a prompt and its run, answered (dismissed when `i` is even);
/// rotated every `rotate` bytes.
fn source_log(path: &Path, source: &str, start: chrono::DateTime<Utc>, n: i64, rotate: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let options = ahp_signals_log::LogOptions {
        max_bytes: Some(rotate),
        ..ahp_signals_log::LogOptions::default()
    };
    let log = SignalLog::open_with(path, options).unwrap();
    for i in 0..n {
        let at = start + Duration::minutes(2 * i);
        let corr = format!("{source}-{i}");
        let mut s = Signal::prompt("large change");
        s.header.source = source.into();
        s.header.timestamp = at;
        s.header.correlation_id = Some(corr.clone());
        s.context.hook = Some(Event::PreToolUse);
        log.append(&Record::from(s.clone())).unwrap();
        log.append(&Record::Run(RunRecord {
            id: ahp_engine::Uuid::new_v4(),
            timestamp: at,
            event: Event::PreToolUse,
            correlation_id: corr,
            session_id: Some(format!("{source}-session")),
            issue_id: None,
            outcome: Outcome::Prompt,
            entries: vec![EntryRun {
                id: source.into(),
                oracle: "FileChangeLimiter".into(),
                wave: 0,
                status: EntryStatus::Signalled,
                duration_us: 10,
                shadow: false,
            }],
            signal_ids: vec![s.header.id],
            duration_us: 20,
            config_digest: None,
            context: json!({"files": {"changed_count": i}}),
        }))
        .unwrap();
        let action = if i % 2 == 0 {
            Action::Dismiss
        } else {
            Action::Acknowledge
        };
        let mut r = SignalResponse::new(&s, action, None).unwrap();
        r.consumed_at = at + Duration::seconds(30);
        log.append(&Record::Response(r)).unwrap();
    }
}

/// `ahp signals …` with `args`, which must succeed.
fn signals_ok(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let out = sb.ahp().arg("signals").args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

#[test]
fn several_logs_by_repeat_or_glob_are_one_analysis_merged_by_time() {
    let sb = Sandbox::new();
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    let a = sb.root().join("collected/alpha/signals.jsonl");
    let b = sb.root().join("collected/beta/signals.jsonl");
    // alpha rotates into compressed segments; beta starts a minute later.
    source_log(&a, "Alpha", t0, 40, 4_000);
    source_log(&b, "Beta", t0 + Duration::minutes(1), 30, 1 << 20);
    assert!(
        sb.root()
            .join("collected/alpha/signals.jsonl.2.gz")
            .exists()
    );

    let stats = |logs: &[&str]| {
        let mut args = vec!["stats", "--format", "json"];
        for l in logs {
            args.extend(["--log", l]);
        }
        json_out(&signals_ok(&sb, &args))
    };
    let repeated = stats(&[
        "collected/alpha/signals.jsonl",
        "collected/beta/signals.jsonl",
    ]);
    assert_eq!(repeated["records"], 3 * 70);
    let rows = repeated["rows"].as_array().unwrap();
    let firings: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap(),
                r["firings"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(firings, [("Alpha", 40), ("Beta", 30)]);
    assert_eq!(rows[0]["dismissals"], 20);
    assert_eq!(rows[1]["dismissals"], 15);
    // A glob reads the same logs (not alpha's segments as logs of their
    // own); a log named twice is read once.
    assert_eq!(stats(&["collected/*/signals.jsonl"]), repeated);
    assert_eq!(stats(&["collected/*/*"]), repeated);
    assert_eq!(
        stats(&["collected/beta/signals.jsonl", "collected/*/signals.jsonl"]),
        repeated
    );
    // Filters apply across the logs.
    let beta = json_out(&signals_ok(
        &sb,
        &[
            "stats",
            "--format",
            "json",
            "--log",
            "collected/*/signals.jsonl",
            "--source",
            "Beta",
        ],
    ));
    assert_eq!(beta["signals"], 30);
    assert_eq!(beta["responses"], 30);

    // query: the records of both, in time order, each log in its order.
    let out = signals_ok(
        &sb,
        &[
            "query",
            "--format",
            "json",
            "--kind",
            "signal",
            "--log",
            "collected/*/signals.jsonl",
        ],
    );
    let sources: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["header"]["source"].to_string()
        })
        .collect();
    assert_eq!(sources.len(), 70);
    assert_eq!(
        &sources[..4],
        ["\"Alpha\"", "\"Beta\"", "\"Alpha\"", "\"Beta\""]
    );
    assert!(sources[60..].iter().all(|s| s == "\"Alpha\""));

    // tune and report take them too; the report names every log.
    signals_ok(&sb, &["tune", "--log", "collected/*/signals.jsonl"]);
    let html = sb.root().join("r.html");
    signals_ok(
        &sb,
        &[
            "report",
            "--out",
            html.to_str().unwrap(),
            "--log",
            "collected/*/signals.jsonl",
        ],
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("collected/alpha/signals.jsonl, collected/beta/signals.jsonl"));
}

#[test]
fn stats_over_a_log_are_the_figures_of_a_plain_read() {
    let sb = Sandbox::new();
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    let path = sb.log_path();
    source_log(&path, "FileChangeLimiter", t0, 300, 20_000);
    dismissal_log(&path);
    // A torn line between records, garbage, and a line from before ids.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"kind\":\"run\",\"timest\n\u{7}garbage\n");
    text.push_str(
        "{\"kind\":\"info\",\"level\":\"info\",\"timestamp\":\"2026-03-02T00:00:00Z\",\"source\":\"ahp\",\"message\":\"old\"}\n",
    );
    std::fs::write(&path, text).unwrap();
    let plain = ahp_signals_log::analytics::stats::collect(
        ahp_signals_log::read_all(&path)
            .unwrap()
            .map(|r| r.unwrap()),
    );
    let out = signals_ok(&sb, &["stats", "--format", "json"]);
    assert_eq!(json_out(&out), serde_json::to_value(&plain).unwrap());
    assert!(
        stderr(&out).contains("warning: 2 unreadable lines skipped"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_glob_that_matches_nothing_or_a_missing_log_is_an_error() {
    let sb = Sandbox::new();
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    source_log(&sb.root().join("logs/a.jsonl"), "A", t0, 2, 1 << 20);
    for args in [
        vec!["stats", "--log", "nowhere/*.jsonl"],
        vec!["stats", "--log", "logs/a.jsonl", "--log", "logs/*.gz"],
    ] {
        let out = sb.ahp().arg("signals").args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let pattern = args.last().unwrap();
        assert!(
            stderr(&out).contains(&format!("--log {pattern}: no log matches this pattern")),
            "{}",
            stderr(&out)
        );
    }
    for cmd in ["stats", "query", "tune"] {
        let out = sb
            .ahp()
            .args([
                "signals",
                cmd,
                "--log",
                "logs/a.jsonl",
                "--log",
                "logs/missing.jsonl",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{cmd}");
        assert!(
            stderr(&out).contains("logs/missing.jsonl"),
            "{cmd}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_logged_source_name_cannot_drive_the_terminal() {
    // A cloned repository can commit its `.ahp/signals.jsonl`: the names in
    // it reach the terminal escaped, never as control sequences (here one
    // that would retitle the window).
    let sb = Sandbox::new();
    let log = sb.root().join("hostile.jsonl");
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    source_log(&log, "evil\x1b]0;pwned\x07", t0, 3, 1 << 20);
    let log = log.to_str().unwrap();
    for command in ["stats", "query"] {
        let text = stdout(&signals_ok(&sb, &[command, "--log", log]));
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{command}: {text:?}"
        );
        assert!(
            text.contains("evil\\u{1b}]0;pwned\\u{7}"),
            "{command}: {text}"
        );
    }
}

/// `ahp respond --details` may quote a credential: what it prints and what
/// it records are masked, the latter with the project's `log_mask` keys as
/// a hook call's records are.
#[test]
fn respond_details_are_masked_on_stdout_and_with_the_projects_keys_in_the_log() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  log_mask: [ticket]\nhooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n",
    );
    let id = run_signal(&sb, RM_RF_ISS_1);
    let details = r#"{"why":"ran curl -u alice:hunter2secret https://x","ticket":"OPS-4411"}"#;
    let out = respond(&sb, &id, "proceed_with_risk", &["--details", details]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(!shown.contains("hunter2secret"), "{shown}");
    assert!(shown.contains("proceed_with_risk"), "{shown}");
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains("hunter2secret"), "{log}");
    assert!(
        !log.contains("OPS-4411"),
        "the project's log_mask key: {log}"
    );
    assert!(log.contains("\"proceed_with_risk\""), "{log}");
}

/// An entry skipped because an earlier wave blocked did not run: its fire
/// and block rates count only the runs in which it ran, and are none when
/// it never ran (not 0%).
#[test]
fn rates_count_the_runs_in_which_an_entry_ran() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: first\n      config: {rules: [{condition: \"tool.name == 'shell'\", intensity: block, message: no}]}\n    - oracle: Rules\n      id: later\n      after: first\n      config: {rules: [{condition: \"tool.name == 'shell'\", intensity: aid, message: hi}]}\n",
    );
    for _ in 0..3 {
        sb.run(
            "pre-tool-use",
            r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#,
        );
    }
    let v = json_out(&stats_json(&sb));
    let row = |id: &str| {
        v["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["source"] == id))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(row("later")["skipped_after_block"], 3, "{v}");
    assert!(row("later")["fire_rate"].is_null(), "{v}");
    assert_eq!(row("first")["block_rate"], 1.0, "{v}");
}

/// An `async: true` entry's block stops nothing: `stats` shows it in the
/// intensity mix, not among the blocks, so its block rate is not 100%.
#[test]
fn an_async_entrys_blocks_are_not_counted_as_blocks() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: asy\n      async: true\n      config: {rules: [{condition: \"tool.name == 'shell'\", intensity: block, message: no}]}\n",
    );
    for _ in 0..3 {
        let out = sb.run(
            "pre-tool-use",
            r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // Async entries run in a detached process: wait for their records.
    let mut waited = 0;
    let (v, row) = loop {
        let v = json_out(&stats_json(&sb));
        let row = v["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["source"] == "asy"))
            .cloned()
            .unwrap_or_default();
        if row["firings"] == 3 || waited >= 100 {
            break (v, row);
        }
        waited += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(row["intensity"]["block"], 3, "{v}");
    assert_eq!(row["blocks"], 0, "{v}");
    assert_eq!(row["block_rate"], 0.0, "{v}");
}

/// A replay changes nothing: RetrospectiveGenerator wrote a retrospective,
/// and with `archive_issue` rewrote the project file a record's
/// `issue.path` named (a log collected from elsewhere can name any).
#[test]
fn replay_writes_no_file() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n      id: retro\n      config:\n        archive_issue: true\n",
    );
    sb.trust();
    sb.write("src/main.rs", "fn main() {}\n");
    let record = r#"{"kind":"run","id":"11111111-1111-4111-8111-111111111112","timestamp":"2026-11-29T20:00:00Z","event":"post-issue-close","correlation_id":"c2","session_id":"s","outcome":"accept","entries":[],"signal_ids":[],"duration_us":1,"config_digest":"sha256:0","context":{"event":"post-issue-close","correlation_id":"c2","timestamp":"2026-11-29T20:00:00Z","issue":{"id":"X-1","title":"x","path":"src/main.rs"}}}"#;
    let log = sb.write("collected.jsonl", &format!("{record}\n"));
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config", "."])
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("not replayed"), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(sb.root().join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!sb.root().join("src/main.retrospective.md").exists());
}

/// `--log` naming a rotated segment read its compressed bytes as text:
/// every line unreadable, "0 records", exit 0. It is refused, with the
/// log to name instead.
#[test]
fn a_rotated_segment_named_with_log_is_refused_with_its_log() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/signals.jsonl.1.gz",
        "not gzip, but named like a segment",
    );
    let out = sb
        .ahp()
        .args(["signals", "stats", "--log", ".ahp/signals.jsonl.1.gz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(
            "is a rotated segment of the log .ahp/signals.jsonl; pass --log .ahp/signals.jsonl"
        ),
        "{}",
        stderr(&out)
    );
}

/// The log masks a credential in the context, so a run the SecurityScanner
/// blocked on it replays against the same policy as an allow: replay
/// counted that as a policy change. Such a run is now shown as not
/// reproducible, and left out of the flips.
#[test]
fn replay_does_not_count_a_masked_input_as_a_flip() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n",
    );
    let key = format!("AKIA{}", "Q7W2E9R4T6Y1U3I5");
    let out = sb
        .claude_pre_tool(
            "s",
            "Bash",
            serde_json::json!({"command": format!("echo {key} > notes.txt")}),
        )
        .output()
        .unwrap();
    assert!(stdout(&out).contains("\"deny\""), "{}", stdout(&out));
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains(&key), "{log}");
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(sb.root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("1 runs replayed: 0 changed, 0 outcome flips"),
        "{text}"
    );
    assert!(text.contains("(not reproducible: masked input)"), "{text}");
    assert!(
        text.contains("1 other runs answered differently but are not counted"),
        "{text}"
    );
    let out = sb
        .ahp()
        .args(["signals", "replay", "--format", "json", "--config"])
        .arg(sb.root())
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["outcome_flips"], 0);
    assert_eq!(v["not_reproducible"], 1);
}

/// One damaged rotated segment (cut short, or empty) made `stats`,
/// `query`, `replay` and `report` fail as a whole, and unreadable lines
/// were a count with no place. The rest of the log is read, the segment
/// is named with why, and the first unreadable lines are located.
#[test]
fn a_damaged_segment_is_named_and_the_rest_of_the_log_is_read() {
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", "settings:\n  log_max_bytes: 1\n");
    // Each call rotates: a few segments, then the current file.
    for ctx in [RM_RF, LS, RM_RF, LS] {
        sb.ahp()
            .args(["run", "pre-tool-use"])
            .write_stdin(ctx)
            .output()
            .unwrap();
    }
    let first = sb.root().join(".ahp/signals.jsonl.1.gz");
    let bytes = std::fs::read(&first).unwrap();
    std::fs::write(&first, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(sb.root().join(".ahp/signals.jsonl.2.gz"), b"").unwrap();
    let mut current = std::fs::read_to_string(sb.log_path()).unwrap();
    current.push_str("{not json\n");
    std::fs::write(sb.log_path(), current).unwrap();
    for args in [
        &["signals", "stats", "--format", "json"][..],
        &["signals", "query", "--format", "json"],
        &["signals", "replay", "--config", "."],
    ] {
        let out = sb.ahp().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("signals.jsonl.1.gz cannot be read")
                && err.contains("signals.jsonl.2.gz cannot be read")
                && err.contains("its records from there on are left out"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("unreadable lines skipped in")
                && err.contains(&format!("{}:2)", sb.log_path().display())),
            "{args:?}: {err}"
        );
    }
    let out = sb
        .ahp()
        .args(["signals", "query", "--format", "json"])
        .output()
        .unwrap();
    assert!(stdout(&out).lines().count() >= 2, "{}", stdout(&out));
}
