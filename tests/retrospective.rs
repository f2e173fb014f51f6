//! RetrospectiveGenerator on a scripted issue history: a log written with
//! fixed timestamps, then `ahp gate post-issue-close`; the metrics in the
//! aid's data and in the Markdown must be the expected numbers.

use crate::common::*;
use ahp::engine::{
    Action, EntryRun, EntryStatus, Event, Intensity, Outcome, RunRecord, Signal, SignalResponse,
};
use ahp::signals_log::{LogOptions, Record, SignalLog};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;

const ISSUE: &str = "FEAT-0007";

fn t(min: i64) -> DateTime<Utc> {
    "2026-03-02T10:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::minutes(min)
}

struct Script {
    log: SignalLog,
    n: u32,
}

impl Script {
    /// One dispatch at minute `min` for `issue`: its signals, then its run.
    fn run(
        &mut self,
        min: i64,
        event: Event,
        issue: &str,
        signals: Vec<(Signal, &str)>,
    ) -> Vec<Signal> {
        self.n += 1;
        let corr = format!("c{}", self.n);
        let mut out = Vec::new();
        for (mut s, source) in signals {
            s.header.source = source.into();
            s.header.timestamp = t(min);
            s.header.correlation_id = Some(corr.clone());
            s.context.hook = Some(event);
            s.context.issue_id = Some(issue.into());
            self.log.append(&Record::from(s.clone())).unwrap();
            out.push(s);
        }
        let outcome = Outcome::from_strongest(out.iter().map(Signal::intensity).max());
        let run = RunRecord {
            id: ahp_engine::Uuid::new_v4(),
            timestamp: t(min),
            event,
            correlation_id: corr,
            session_id: Some("s1".into()),
            issue_id: Some(issue.into()),
            outcome,
            entries: out
                .iter()
                .map(|s| EntryRun {
                    id: s.header.source.clone(),
                    oracle: s.header.source.clone(),
                    wave: 0,
                    status: EntryStatus::Signalled,
                    duration_us: 10,
                    shadow: false,
                })
                .collect(),
            signal_ids: out.iter().map(|s| s.header.id).collect(),
            duration_us: 100,
            config_digest: None,
            context: json!({}),
        };
        self.log.append(&Record::Run(run)).unwrap();
        out
    }

    fn answer(&self, min: i64, s: &Signal, action: Action) {
        let mut r = SignalResponse::new(s, action, None).unwrap();
        r.consumed_at = t(min);
        self.log.append(&Record::from(r)).unwrap();
    }
}

fn escalated(mut s: Signal) -> Signal {
    s.header.escalated_from = Some(Intensity::Prompt);
    s.header.escalation = Some("checklist-repeats".into());
    s
}

#[test]
fn a_scripted_history_gives_the_expected_numbers() {
    scripted_history(LogOptions::default());
}

/// The same history, rotated into many files as it is written: the
/// retrospective reads them all, through the signal log's reader.
#[test]
fn a_rotated_log_gives_the_same_numbers() {
    let sb = scripted_history(LogOptions {
        max_bytes: Some(600),
        keep: 100,
        ..LogOptions::default()
    });
    assert!(sb.root().join(".ahp/signals.jsonl.5.gz").is_file());
}

fn scripted_history(options: LogOptions) -> Sandbox {
    let sb = Sandbox::new();
    let mut sc = Script {
        log: SignalLog::open_with(sb.log_path(), options).unwrap(),
        n: 0,
    };
    use Event::*;
    // Episode 1: a tool call blocked at 0, the retry accepted at 5 → 5m.
    sc.run(
        0,
        PreToolUse,
        ISSUE,
        vec![(Signal::block("rm -rf /"), "PermissionChecker")],
    );
    sc.run(5, PreToolUse, ISSUE, vec![]);
    // Episode 2: submit blocked at 10 (and a prompt, dismissed), blocked
    // again at 20 (escalated), then only a prompt at 40 → 30m.
    let s = sc.run(
        10,
        PreIssueSubmit,
        ISSUE,
        vec![
            (Signal::block("2 items open"), "ChecklistValidator"),
            (Signal::prompt("40 files"), "FileChangeLimiter"),
        ],
    );
    sc.answer(11, &s[1], Action::Dismiss);
    sc.run(
        20,
        PreIssueSubmit,
        ISSUE,
        vec![(
            escalated(Signal::block("1 item open")),
            "ChecklistValidator",
        )],
    );
    let s = sc.run(
        40,
        PreIssueSubmit,
        ISSUE,
        vec![(Signal::prompt("40 files"), "FileChangeLimiter")],
    );
    sc.answer(41, &s[0], Action::Acknowledge);
    sc.run(
        45,
        PostToolUse,
        ISSUE,
        vec![(Signal::aid("Edit a.rs"), "ChangeLogger")],
    );
    // Episode 3: close blocked at 50, never resolved.
    sc.run(
        50,
        PreIssueClose,
        ISSUE,
        vec![(Signal::block("no tests"), "CompletionVerifier")],
    );
    // Another issue's history does not count.
    let other = sc.run(
        30,
        PreIssueSubmit,
        "FEAT-9999",
        vec![(Signal::prompt("x"), "FileChangeLimiter")],
    );
    sc.answer(31, &other[0], Action::Dismiss);
    sc.run(
        32,
        PreIssueSubmit,
        "FEAT-9999",
        vec![(Signal::block("y"), "ChecklistValidator")],
    );
    drop(sc);
    // A torn last line, as a crash leaves it.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sb.log_path())
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"kind\":\"signal\",\"header\":{").unwrap();
    drop(f);

    sb.write(
        "Issues/FEAT-0007.md",
        "---\nid: FEAT-0007\ntype: feature\nstatus: closed\nstage: done\ntitle: Retrospectives\n---\n# Retrospectives\n\n## Technical Tasks\n- [x] write it\n",
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n      config: {archive_issue: true, log: .ahp/signals.jsonl}\n",
    );
    // A repository's RetrospectiveGenerator writes files: it runs once trusted.
    sb.trust();
    let out = sb
        .ahp()
        .args([
            "gate",
            "post-issue-close",
            "--issue",
            "Issues/FEAT-0007.md",
            "--no-log",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    let s = &v["signals"][0];
    assert_eq!(s["header"]["intensity"], "aid", "{v}");
    assert_eq!(s["header"]["type"], "retrospective");
    let d = &s["payload"]["data"];
    assert_eq!(d["issue"], ISSUE);
    assert_eq!(d["runs"], 7);
    assert_eq!(
        d["runs_by_event"],
        json!({"pre-tool-use": 2, "pre-issue-submit": 3, "post-tool-use": 1, "pre-issue-close": 1})
    );
    assert_eq!(d["signals"], 7);
    assert_eq!(
        d["by_intensity"],
        json!({"block": 4, "control": 0, "prompt": 2, "aid": 1})
    );
    assert_eq!(d["blocks"], 4);
    assert_eq!(d["block_episodes"].as_array().unwrap().len(), 3);
    assert_eq!(d["block_episodes"][0]["resolution_secs"], 300);
    assert_eq!(d["block_episodes"][1]["resolution_secs"], 1800);
    assert_eq!(d["block_episodes"][1]["blocked_runs"], 2);
    assert_eq!(
        d["block_episodes"][1]["sources"],
        json!(["ChecklistValidator"])
    );
    assert_eq!(d["block_episodes"][2]["resolved_at"], json!(null));
    assert_eq!(d["blocks_resolved"], 2);
    assert_eq!(d["blocks_unresolved"], 1);
    assert_eq!(d["mean_resolution_secs"], 1050.0);
    assert_eq!(d["max_resolution_secs"], 1800);
    assert_eq!(d["prompts"], 2);
    assert_eq!(d["prompts_dismissed"], 1);
    assert_eq!(d["prompts_acknowledged"], 1);
    assert_eq!(d["prompts_unanswered"], 0);
    assert_eq!(d["escalations"], 1);
    assert_eq!(d["escalations_by_rule"], json!({"checklist-repeats": 1}));
    assert_eq!(d["skipped_lines"], 1);
    let summary = s["payload"]["context_info"].as_str().unwrap();
    assert!(
        summary.contains("Issues/FEAT-0007.retrospective.md"),
        "{summary}"
    );
    assert!(
        summary.contains("7 signals (4 block, 0 control, 2 prompt, 1 aid) in 7 dispatches"),
        "{summary}"
    );
    assert!(
        summary.contains("3 block episodes: 2 resolved (mean 17m 30s), 1 unresolved"),
        "{summary}"
    );

    let md = std::fs::read_to_string(sb.root().join("Issues/FEAT-0007.retrospective.md")).unwrap();
    assert!(
        md.starts_with("# Retrospective: FEAT-0007 — Retrospectives\n"),
        "{md}"
    );
    for row in [
        "| signals | 7 (block 4, control 0, prompt 2, aid 1) |",
        "| block episodes | 3 (2 resolved, 1 unresolved) |",
        "| time to resolve a block | mean 17m 30s, max 30m |",
        "| prompts | 2 (1 dismissed, 1 acknowledged, 0 unanswered) |",
        "| escalations | 1 |",
        "| pre-issue-submit | ChecklistValidator | 2026-03-02 10:10:00 UTC | 30m |",
        "| pre-issue-close | CompletionVerifier | 2026-03-02 10:50:00 UTC | unresolved |",
        "| FileChangeLimiter | 0 | 0 | 2 | 0 |",
    ] {
        assert!(md.contains(row), "missing `{row}` in\n{md}");
    }
    // archive_issue: the issue file carries the metrics too.
    let issue = std::fs::read_to_string(sb.root().join("Issues/FEAT-0007.md")).unwrap();
    assert!(issue.contains("## Retrospective\n"), "{issue}");
    assert!(
        issue.contains("| block episodes | 3 (2 resolved, 1 unresolved) |"),
        "{issue}"
    );
    sb
}

#[test]
fn without_an_issue_it_fails_open_with_a_warning() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-issue-close:\n    - oracle: retrospective-generator\n",
    );
    sb.trust();
    let out = sb.run("post-issue-close", "{}");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("no issue in the context"),
        "{}",
        stderr(&out)
    );
}

/// Issue 19, item 3: a committed symlink must not turn the retrospective
/// into a file-overwrite primitive, and an issue title with a line break
/// must not add lines to the document. Each case is a repository layout
/// that points a write ahp makes on its behalf somewhere else; the target
/// stays as it was and the user is told which path was refused and why.
#[cfg(unix)]
#[test]
fn a_committed_symlink_does_not_redirect_the_retrospective() {
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;
    struct Case {
        name: &'static str,
        config: &'static str,
        /// Lays out the repository; returns the file that must stay untouched.
        setup: fn(&Sandbox) -> PathBuf,
        want: fn(&Sandbox) -> String,
    }
    const ISSUE: &str = "---\nid: FEAT-1\ntype: feature\nstatus: closed\nstage: done\ntitle: \"Fix\\n---\\nstatus: hacked\"\n---\n# Fix\n\n## Tasks\n- [x] done\n";
    let cases = [
        Case {
            name: "symlink at the retrospective",
            config: "{}",
            setup: |sb| {
                sb.write("Issues/FEAT-1.md", ISSUE);
                let bashrc = sb.write_home(".bashrc", "original\n");
                symlink(&bashrc, sb.root().join("Issues/FEAT-1.retrospective.md")).unwrap();
                bashrc
            },
            want: |sb| {
                format!(
                    "refusing to write through a symlink: Issues/FEAT-1.retrospective.md -> {}",
                    sb.home.path().join(".bashrc").display()
                )
            },
        },
        Case {
            name: "symlinked directory out of the project",
            config: "{}",
            setup: |sb| {
                let outside = sb.home.path().join("elsewhere");
                std::fs::create_dir_all(&outside).unwrap();
                std::fs::write(outside.join("FEAT-1.md"), ISSUE).unwrap();
                symlink(&outside, sb.root().join("Issues")).unwrap();
                outside.join("FEAT-1.retrospective.md")
            },
            want: |sb| {
                format!(
                    "refusing to write Issues/FEAT-1.retrospective.md: Issues -> {} leads, outside the project",
                    sb.home.path().join("elsewhere").display()
                )
            },
        },
        Case {
            name: "archive_issue into a symlinked issue file",
            config: "{archive_issue: true, output: \"retro/{{ issue.id }}.md\"}",
            setup: |sb| {
                let real = sb.write_home("issue.md", ISSUE);
                std::fs::create_dir_all(sb.root().join("Issues")).unwrap();
                symlink(&real, sb.root().join("Issues/FEAT-1.md")).unwrap();
                real
            },
            want: |sb| {
                format!(
                    "archive_issue: refusing to write through a symlink: Issues/FEAT-1.md -> {}",
                    sb.home.path().join("issue.md").display()
                )
            },
        },
        Case {
            name: "output path out of the project",
            config: "{output: \"../stolen/{{ issue.id }}.md\"}",
            setup: |sb| {
                sb.write("Issues/FEAT-1.md", ISSUE);
                sb.root().parent().unwrap().join("stolen/FEAT-1.md")
            },
            want: |_| "refusing to write ../stolen/FEAT-1.md: it goes up with `..`".into(),
        },
    ];
    let mut failures = Vec::new();
    for case in cases {
        let sb = Sandbox::new();
        sb.write(
            ".ahp/hooks.yaml",
            &format!(
                "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n      config: {}\n",
                case.config
            ),
        );
        sb.trust();
        let victim = (case.setup)(&sb);
        let before = std::fs::read(&victim).ok();
        let out = sb
            .ahp()
            .args([
                "gate",
                "post-issue-close",
                "--issue",
                "Issues/FEAT-1.md",
                "--no-log",
            ])
            .output()
            .unwrap();
        let err = stderr(&out);
        let want = (case.want)(&sb);
        if std::fs::read(&victim).ok() != before {
            failures.push(format!("{}: {} was written", case.name, victim.display()));
        } else if !err.contains(&want) {
            failures.push(format!("{}: want `{want}` in stderr:\n{err}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The same issue without the symlink: the title's line breaks are
/// flattened, so the document has exactly the lines ahp put there.
#[test]
fn an_issue_title_cannot_add_lines_to_the_retrospective() {
    let sb = Sandbox::new();
    sb.write(
        "Issues/FEAT-1.md",
        "---\nid: FEAT-1\ntype: feature\nstatus: closed\nstage: done\ntitle: \"Fix\\n---\\nstatus: hacked\\r\\n## Injected\"\n---\n# Fix\n\n## Tasks\n- [x] done\n",
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n",
    );
    sb.trust();
    let out = sb
        .ahp()
        .args([
            "gate",
            "post-issue-close",
            "--issue",
            "Issues/FEAT-1.md",
            "--no-log",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let md = std::fs::read_to_string(sb.root().join("Issues/FEAT-1.retrospective.md")).unwrap();
    let first = md.lines().next().unwrap_or_default();
    assert_eq!(
        first, "# Retrospective: FEAT-1 — Fix --- status: hacked  ## Injected",
        "{md}"
    );
    assert!(
        !md.lines()
            .any(|l| l == "---" || l.starts_with("status:") || l == "## Injected"),
        "{md}"
    );
}
