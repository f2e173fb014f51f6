//! Issue commands an agent runs as shell tool calls are issue events
//! (`settings.issue_commands`): `monoco issue close FEAT-1` through `ahp
//! hook AGENT` is gated as pre-issue-close, and after it succeeded runs
//! post-issue-close. The last tests drive the real Monoco CLI from PyPI.

use crate::common::{Sandbox, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::OnceLock;

const OPEN_ISSUE: &str = "---\nid: FEAT-0001\ntype: feature\nstatus: open\nstage: review\ntitle: Add login\n---\n\n## FEAT-0001: Add login\n\n## Acceptance Criteria\n<!-- Define binary conditions for success. -->\n- [ ] Users can log in\n\n## Technical Tasks\n<!-- - [ ] Parent Task -->\n- [x] Login form\n";

fn monoco_issue(sb: &Sandbox, text: &str) -> PathBuf {
    sb.write("Issues/Features/open/FEAT-0001-add-login.md", text)
}

/// The agent's pre-tool payload of a shell call of `command`.
fn pre_tool(agent: &str, root: &Path, command: &str) -> Value {
    match agent {
        "claude-code" => json!({
            "session_id": "s-claude", "transcript_path": "/tmp/t.jsonl", "cwd": root,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command, "description": "Run"},
            "tool_use_id": "toolu_01",
        }),
        "gemini" => json!({
            "session_id": "s-gemini", "transcript_path": "/tmp/g.json", "cwd": root,
            "hook_event_name": "BeforeTool", "timestamp": "2026-11-27T10:00:00.000Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": command, "description": "Run", "dir_path": root},
        }),
        "codex" => json!({
            "session_id": "s-codex", "transcript_path": "/tmp/c.jsonl", "cwd": root,
            "model": "gpt-5-codex", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "turn_id": "turn-1", "tool_name": "Bash", "tool_use_id": "call_01",
            "tool_input": {"command": command},
        }),
        other => panic!("no payload for {other}"),
    }
}

/// The agent's post-tool payload of the same call, with what the command
/// printed and its exit code as the agent reports them.
fn post_tool(agent: &str, root: &Path, command: &str, output: &str, code: i32) -> Value {
    let mut p = pre_tool(agent, root, command);
    let (event, response) = match agent {
        "claude-code" => (
            "PostToolUse",
            json!({"stdout": output, "stderr": "", "interrupted": false, "isImage": false}),
        ),
        "gemini" => (
            "AfterTool",
            json!({
                "llmContent": format!("Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\nExit Code: {code}\nSignal: (none)"),
                "returnDisplay": output,
            }),
        ),
        _ => (
            "PostToolUse",
            json!(format!(
                "Exit code: {code}\nWall time: 1.2 seconds\nOutput:\n{output}"
            )),
        ),
    };
    p["hook_event_name"] = json!(event);
    p["tool_response"] = response;
    p
}

/// `ahp hook AGENT` with `payload`: (exit code, stdout).
fn hook(sb: &Sandbox, agent: &str, payload: &Value) -> (i32, String) {
    let out = hook_output(sb, agent, payload);
    (out.status.code().unwrap_or(-1), stdout(&out))
}

/// `ahp hook AGENT` with `payload`, whole (for its stderr).
fn hook_output(sb: &Sandbox, agent: &str, payload: &Value) -> std::process::Output {
    sb.ahp()
        .args(["hook", agent])
        .write_stdin(payload.to_string())
        .output()
        .unwrap()
}

/// The deny reason of an agent's answer, if it denies.
fn denied(agent: &str, code: i32, out: &str) -> Option<String> {
    if code == 2 {
        return Some(out.to_string());
    }
    let v: Value = serde_json::from_str(out.trim()).ok()?;
    match agent {
        "gemini" => {
            (v["decision"] == "deny").then(|| v["reason"].as_str().unwrap_or("").to_string())
        }
        _ => (v["hookSpecificOutput"]["permissionDecision"] == "deny").then(|| {
            v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap_or("")
                .to_string()
        }),
    }
}

fn runs(sb: &Sandbox, event: &str) -> Vec<Value> {
    sb.log_lines()
        .into_iter()
        .filter(|r| r["kind"] == "run" && r["event"] == event)
        .collect()
}

#[test]
fn closing_an_issue_with_open_items_is_denied_in_every_agent_and_the_run_keeps_both_events() {
    for agent in ["claude-code", "gemini", "codex"] {
        let sb = Sandbox::new();
        monoco_issue(&sb, OPEN_ISSUE);
        let (code, out) = hook(
            &sb,
            agent,
            &pre_tool(
                agent,
                sb.root(),
                "monoco issue close FEAT-0001 --solution implemented",
            ),
        );
        let reason =
            denied(agent, code, &out).unwrap_or_else(|| panic!("{agent}: not denied: {out}"));
        assert!(reason.contains("Users can log in"), "{agent}: {reason}");
        assert!(
            !reason.contains("Parent Task"),
            "{agent}: a commented-out item counted: {reason}"
        );
        let tool = runs(&sb, "pre-tool-use");
        let issue = runs(&sb, "pre-issue-close");
        assert_eq!((tool.len(), issue.len()), (1, 1), "{agent}");
        assert_eq!(
            tool[0]["correlation_id"], issue[0]["correlation_id"],
            "{agent}"
        );
        assert_eq!(
            tool[0]["context"]["issue_commands"][0]["event"],
            "pre-issue-close"
        );
        assert_eq!(
            tool[0]["context"]["issue_commands"][0]["issue"],
            "Issues/Features/open/FEAT-0001-add-login.md"
        );
        assert_eq!(issue[0]["issue_id"], "FEAT-0001", "{agent}");
        assert_eq!(issue[0]["outcome"], "block", "{agent}");
        // The shape's words: flags and expanded values stay out.
        assert_eq!(
            issue[0]["context"]["tool_call"]["command"],
            "monoco issue close FEAT-0001"
        );
    }
}

#[test]
fn however_the_command_is_spelled_it_is_the_issue_event() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    for command in [
        "cd . && monoco issue close FEAT-0001",
        "uv run monoco issue close feat-0001",
        "uvx --from monoco-toolkit monoco issue close FEAT-0001",
        "git add -A && bash -c 'monoco issue close FEAT-0001'",
        ".venv/bin/monoco --root . issue close FEAT-0001 --json",
    ] {
        let (code, out) = hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), command),
        );
        assert!(
            denied("claude-code", code, &out).is_some(),
            "{command}: {out}"
        );
    }
    for command in [
        "monoco issue show FEAT-0001",
        "echo monoco issue close FEAT-0001",
        "monoco issue list",
    ] {
        let (code, out) = hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), command),
        );
        assert!(
            denied("claude-code", code, &out).is_none(),
            "{command}: {out}"
        );
    }
}

#[test]
fn a_finished_issue_closes_and_post_issue_close_runs_only_after_success() {
    for agent in ["claude-code", "gemini", "codex"] {
        let sb = Sandbox::new();
        monoco_issue(&sb, &OPEN_ISSUE.replace("- [ ] Users", "- [x] Users"));
        let command = "monoco issue close FEAT-0001";
        let (code, out) = hook(&sb, agent, &pre_tool(agent, sb.root(), command));
        assert!(denied(agent, code, &out).is_none(), "{agent}: {out}");
        // Monoco moves the file when it closes the issue.
        std::fs::create_dir_all(sb.root().join("Issues/Features/closed")).unwrap();
        std::fs::rename(
            sb.root()
                .join("Issues/Features/open/FEAT-0001-add-login.md"),
            sb.root()
                .join("Issues/Features/closed/FEAT-0001-add-login.md"),
        )
        .unwrap();
        if agent != "claude-code" {
            // Claude Code reports a failed command as its own event.
            hook(
                &sb,
                agent,
                &post_tool(agent, sb.root(), command, "Error: cannot close", 1),
            );
            assert!(
                runs(&sb, "post-issue-close").is_empty(),
                "{agent}: ran after a failure"
            );
        }
        hook(
            &sb,
            agent,
            &post_tool(agent, sb.root(), command, "Issue FEAT-0001 closed", 0),
        );
        let post = runs(&sb, "post-issue-close");
        assert_eq!(post.len(), 1, "{agent}");
        assert_eq!(post[0]["issue_id"], "FEAT-0001");
        assert_eq!(
            post[0]["context"]["issue"]["path"]
                .as_str()
                .map(|p| p.ends_with("closed/FEAT-0001-add-login.md")),
            Some(true),
            "{agent}: {}",
            post[0]["context"]["issue"]
        );
    }
}

#[test]
fn another_tracker_is_configuration() {
    // The worked example of docs/issue-commands.md.
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    monoco: {enabled: false}\n    tickets:\n      command: \"tk {{ verb }} {{ id }}\"\n      verbs: {begin: start, review: submit, done: close}\n      id: \"TK-[0-9]+\"\n      issue_files: [\"docs/tickets/{{ id }}.md\", \"docs/tickets/done/{{ id }}.md\"]\n",
    );
    sb.write(
        "docs/tickets/TK-12.md",
        "---\nid: TK-12\ntitle: Rate limits\n---\n- [x] limiter\n- [ ] docs\n",
    );
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "./scripts/tk done TK-12"),
    );
    let reason = denied("claude-code", code, &out).expect(&out);
    assert!(reason.contains("docs"), "{reason}");
    // Monoco's shape is switched off here.
    monoco_issue(&sb, OPEN_ISSUE);
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(denied("claude-code", code, &out).is_none(), "{out}");
    // A broken shape is an error naming its place.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    tickets:\n      command: \"tk {{ verb }} {{ id }}\"\n      verbs: {done: closed}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!out.status.success());
    let text = format!("{}{}", stdout(&out), crate::common::stderr(&out));
    assert!(
        text.contains("settings.issue_commands.tickets.verbs.done"),
        "{text}"
    );
    assert!(text.contains("hooks.yaml:5"), "{text}");
    assert!(text.contains("did you mean `close`"), "{text}");
}

#[test]
fn a_hostile_repository_cannot_point_the_lookup_outside_the_project() {
    let sb = Sandbox::new();
    let outside = sb.home.path().join("secret.md");
    std::fs::write(
        &outside,
        "---\nid: FEAT-0001\n---\n- [ ] ssh-rsa AAAAB3Nza secret\n",
    )
    .unwrap();
    std::fs::create_dir_all(sb.root().join("Issues/Features/open")).unwrap();
    std::os::unix::fs::symlink(
        &outside,
        sb.root().join("Issues/Features/open/FEAT-0001-x.md"),
    )
    .unwrap();
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(denied("claude-code", code, &out).is_none(), "{out}");
    let (log, _) = sb.all_logs();
    assert!(!log.contains("secret"), "the linked file was read: {log}");
    let tool = runs(&sb, "pre-tool-use");
    assert_eq!(
        tool[0]["context"]["issue_commands"][0]["issue"],
        Value::Null
    );
}

#[test]
fn explain_shows_the_tool_call_as_an_issue_event() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    let ctx = json!({"tool": {"name": "shell", "raw_name": "Bash", "input": {"command": "uv run monoco issue close FEAT-0001"}}});
    sb.write("ctx.json", &ctx.to_string());
    let out = sb
        .ahp()
        .args(["explain", "pre-tool-use", "--context", "ctx.json"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("this tool call is also pre-issue-close: `monoco issue close FEAT-0001` is a monoco command"),
        "{text}"
    );
    assert!(
        text.contains("issue file Issues/Features/open/FEAT-0001-add-login.md"),
        "{text}"
    );
    assert!(text.contains("checklist-done-at-close"), "{text}");
}

#[test]
fn a_broken_issue_file_never_loses_the_tool_calls_block() {
    let sb = Sandbox::new();
    sb.write("Issues/Features/open/FEAT-0001-x.md", "hello\n");
    let command = "rm -rf ~; false && monoco issue close FEAT-0001";
    let out = hook_output(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), command),
    );
    let reason = denied(
        "claude-code",
        out.status.code().unwrap_or(-1),
        &stdout(&out),
    )
    .expect("the tool call's block was lost");
    assert!(reason.contains("[PermissionChecker]"), "{reason}");
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("pre-issue-close was not run") && err.contains("FEAT-0001-x.md"),
        "{err}"
    );
    // Alone, the close is not waved through silently either: it is an
    // error the agent's user sees, and under fail_closed a block.
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(denied("claude-code", code, &out).is_none());
    sb.write(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(denied("claude-code", code, &out).is_some(), "{out}");
}

#[test]
fn the_issue_is_judged_on_the_branch_monoco_closes_it_from() {
    let sb = Sandbox::new();
    sb.git_init();
    let file = "Issues/Features/open/FEAT-0001-add-login.md";
    sb.write(file, OPEN_ISSUE);
    crate::common::git(sb.root(), &["add", "-A"]);
    crate::common::git(sb.root(), &["commit", "-qm", "issue"]);
    crate::common::git(sb.root(), &["checkout", "-qb", "FEAT-0001-add-login"]);
    // Another branch matching the id, with the item ticked.
    crate::common::git(sb.root(), &["checkout", "-qb", "FEAT-0001-aaa"]);
    sb.write(file, &OPEN_ISSUE.replace("- [ ] Users", "- [x] Users"));
    crate::common::git(sb.root(), &["commit", "-qam", "ticked elsewhere"]);
    // On the issue's own branch its working tree is what counts.
    crate::common::git(sb.root(), &["checkout", "-q", "FEAT-0001-add-login"]);
    let close = pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001");
    let (code, out) = hook(&sb, "claude-code", &close);
    assert!(denied("claude-code", code, &out).is_some(), "{out}");
    // From main two branches match and the issue names neither: the
    // working tree is judged, and the agent is told why.
    crate::common::git(sb.root(), &["checkout", "-q", "main"]);
    let out = hook_output(&sb, "claude-code", &close);
    assert!(
        denied(
            "claude-code",
            out.status.code().unwrap_or(-1),
            &stdout(&out)
        )
        .is_some()
    );
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("several branches match") && err.contains("FEAT-0001-aaa"),
        "{err}"
    );
    // Monoco's `isolation.ref` names the branch it merges from.
    sb.write(
        file,
        &OPEN_ISSUE.replace(
            "stage: review\n",
            "stage: review\nisolation: {type: branch, ref: FEAT-0001-aaa}\n",
        ),
    );
    let (code, out) = hook(&sb, "claude-code", &close);
    assert!(denied("claude-code", code, &out).is_none(), "{out}");
    let tool = runs(&sb, "pre-tool-use");
    assert_eq!(
        tool.last().unwrap()["context"]["issue_commands"][0]["branch"],
        "FEAT-0001-aaa"
    );
}

/// A repository that comes with its own `.git` names the issue's branch:
/// a branch whose name reads as a git option (`--output=…`) must stay a
/// branch name, or `git show` writes the file it names, before any trust.
#[test]
fn a_branch_named_like_a_git_option_writes_nothing() {
    let sb = Sandbox::new();
    sb.git_init();
    let file = "Issues/Features/open/FEAT-0001-add-login.md";
    sb.write(
        file,
        &OPEN_ISSUE.replace(
            "stage: review\n",
            "stage: review\nisolation: {type: branch, ref: \"--output=pwned\"}\n",
        ),
    );
    crate::common::git(sb.root(), &["add", "-A"]);
    crate::common::git(sb.root(), &["commit", "-qm", "issue"]);
    crate::common::git(
        sb.root(),
        &["update-ref", "refs/heads/--output=pwned", "HEAD"],
    );
    // Where `git show --output=pwned:Issues/…` would write.
    let target = sb.root().join(format!("pwned:{file}"));
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    // Another branch that the issue_branch pattern matches, named the same way.
    crate::common::git(
        sb.root(),
        &["update-ref", "refs/heads/--output=pwned2", "HEAD"],
    );
    for close in [
        "monoco issue close FEAT-0001",
        "monoco issue submit FEAT-0001",
    ] {
        let _ = hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), close),
        );
        assert!(!target.exists(), "{close}: git wrote {}", target.display());
    }
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    monoco:\n      issue_branch: \"*\"\n",
    );
    sb.write(file, OPEN_ISSUE);
    let target2 = sb.root().join(format!("pwned2:{file}"));
    std::fs::create_dir_all(target2.parent().unwrap()).unwrap();
    let _ = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(!target2.exists(), "git wrote {}", target2.display());
}

#[test]
fn what_the_shell_model_cannot_parse_is_still_gated() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    let long = format!("monoco issue close FEAT-0001 # {}", "x".repeat(70_000));
    let operators = format!("{}monoco issue close FEAT-0001", "true; ".repeat(1_001));
    let mut nested = "monoco issue close FEAT-0001".to_string();
    for _ in 0..9 {
        nested = format!("bash -c {}", shell_quote(&nested));
    }
    for command in [long, operators, nested] {
        let (code, out) = hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), &command),
        );
        assert!(
            denied("claude-code", code, &out).is_some(),
            "{}…: {out}",
            &command[..60.min(command.len())]
        );
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn spellings_python_runs_and_help_are_told_apart() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    for command in [
        "python3.11 -m monoco issue close FEAT-0001",
        "python -mmonoco issue close FEAT-0001",
        "python -m monoco.main issue close FEAT-0001",
        "cd Issues && cd .. && monoco issue close demo::FEAT-0001",
    ] {
        let (code, out) = hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), command),
        );
        assert!(
            denied("claude-code", code, &out).is_some(),
            "{command}: {out}"
        );
    }
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool(
            "claude-code",
            sb.root(),
            "monoco issue close FEAT-0001 --help",
        ),
    );
    assert!(denied("claude-code", code, &out).is_none(), "{out}");
}

#[test]
fn what_is_not_gated_is_said() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    let mut line: String = (1..=8)
        .map(|i| format!("true || monoco issue start X-{i}; "))
        .collect();
    line.push_str("monoco issue close FEAT-0001");
    for (command, said) in [
        (
            line.as_str(),
            "1 more issue command(s) in this line were not gated (at most 8 are): `monoco issue start X-8`",
        ),
        (
            "monoco issue close \"$ISSUE\"",
            "names no issue id ahp can read",
        ),
        ("monoco issue close FEAT-0999", "no issue file of FEAT-0999"),
    ] {
        let out = hook_output(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), command),
        );
        let err = crate::common::stderr(&out);
        assert!(err.contains(said), "{command}: {err}");
        let (log, _) = sb.all_logs();
        assert!(log.contains(said), "{command}: not in the log");
    }
}

/// Past the cap, a close is gated before the starts that come first in
/// the line (padding cannot use up the budget), and under `fail_closed`
/// a step that cannot be judged with its issue is refused: commands past
/// the cap, an id ahp cannot read, a lookup that stopped at its limit.
#[test]
fn padding_or_a_huge_tree_does_not_open_the_close_gate() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    let mut line: String = (1..=8)
        .map(|i| format!("false && monoco issue start X-{i}; "))
        .collect();
    line.push_str("monoco issue close FEAT-0001");
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), &line),
    );
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("Users can log in")),
        "{out}"
    );
    // Eight closes first use up the cap: the ninth is refused, not let
    // through ungated.
    let decoys: String = (1..=8)
        .map(|i| format!("monoco issue close FEAT-900{i}; "))
        .collect();
    let line = format!("{decoys}monoco issue close FEAT-0001");
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), &line),
    );
    assert!(
        denied("claude-code", code, &out)
            .is_some_and(|r| r.contains("run it in a command of its own")),
        "{out}"
    );
    let closed = |command: &str| {
        let out = sb
            .ahp()
            .env("AHP_FAIL_CLOSED", "1")
            .args(["hook", "claude-code"])
            .write_stdin(pre_tool("claude-code", sb.root(), command).to_string())
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), stdout(&out))
    };
    let mut nine: String = (1..=9)
        .map(|i| format!("false && monoco issue start X-{i}; "))
        .collect();
    nine.push_str("echo done");
    let (code, out) = closed(&nine);
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("not gated")),
        "{out}"
    );
    let (code, out) = closed("monoco issue close \"$ISSUE\"");
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("no issue id")),
        "{out}"
    );
    // A tree too large to look the issue up in.
    let filler = sb.root().join("Issues/AAA");
    std::fs::create_dir_all(&filler).unwrap();
    for i in 0..20_001 {
        std::fs::File::create(filler.join(format!("f{i}"))).unwrap();
    }
    let (code, out) = closed("monoco issue close FEAT-0001");
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("not found within")),
        "{out}"
    );
}

#[test]
fn the_lookup_stays_inside_the_project() {
    let sb = Sandbox::new();
    let outside = sb.home.path().join("outside");
    std::fs::create_dir_all(outside.join("Features/open")).unwrap();
    std::fs::write(
        outside.join("Features/open/FEAT-0001-x.md"),
        "---\nid: FEAT-0001\n---\n- [ ] SECRET-ssh-rsa-AAAAB3Nza\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, sb.root().join("Issues")).unwrap();
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    tk:\n      command: \"tk {{ verb }} {{ id }}\"\n      id: \"[^ ]+\"\n      issue_files: [\"docs/{{ id }}\", \"{{ id }}\"]\n",
    );
    for command in [
        "monoco issue close FEAT-0001".to_string(),
        format!(
            "tk close ../{}/Features/open/FEAT-0001-x.md",
            outside.display()
        ),
        format!(
            "tk close {}/Features/open/FEAT-0001-x.md",
            outside.display()
        ),
    ] {
        hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), &command),
        );
    }
    let (log, _) = sb.all_logs();
    assert!(
        !log.contains("SECRET-ssh"),
        "a file outside the project was read"
    );
}

#[test]
fn success_is_read_where_each_agent_puts_it() {
    let sb = Sandbox::new();
    monoco_issue(&sb, &OPEN_ISSUE.replace("- [ ] Users", "- [x] Users"));
    let command = "monoco issue close FEAT-0001";
    let mut post = post_tool("codex", sb.root(), command, "", 0);
    post["tool_response"] =
        json!("Exit code: 0\nWall time: 1 seconds\nOutput:\nhook said Exit code: 1\nclosed");
    hook(&sb, "codex", &post);
    assert_eq!(
        runs(&sb, "post-issue-close").len(),
        1,
        "a success read as a failure"
    );
    for text in [
        "Command was cancelled by user before it could complete.",
        "Command: x\nOutput: (empty)\nError: (none)\nExit Code: (none)\nSignal: 15",
    ] {
        let mut post = post_tool("gemini", sb.root(), command, "", 0);
        post["tool_response"] = json!({"llmContent": text, "returnDisplay": ""});
        hook(&sb, "gemini", &post);
    }
    assert_eq!(
        runs(&sb, "post-issue-close").len(),
        1,
        "a cancelled command ran post-issue-close"
    );
    let tool = runs(&sb, "post-tool-use");
    assert_eq!(
        tool.last().unwrap()["context"]["issue_commands_skipped"]["commands"][0]["event"],
        "post-issue-close"
    );
}

#[test]
fn values_expanded_into_the_command_stay_out_of_the_log() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    hook(
        &sb,
        "claude-code",
        &pre_tool(
            "claude-code",
            sb.root(),
            "API_KEY=plainsecret123 && monoco issue close FEAT-0001 -s $API_KEY",
        ),
    );
    let (log, _) = sb.all_logs();
    assert!(!log.contains("plainsecret123"), "{log}");
    assert_eq!(
        runs(&sb, "pre-issue-close")[0]["context"]["tool_call"]["command"],
        "monoco issue close FEAT-0001"
    );
}

#[test]
fn one_broken_tracker_leaves_the_others_working() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    tickets:\n      command: \"tk {{ verb }} {{ id }}\"\n      issue_files: [\"docs/[{{ id }}.md\"]\n",
    );
    let (code, out) = hook(
        &sb,
        "claude-code",
        &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
    );
    assert!(denied("claude-code", code, &out).is_some(), "{out}");
    let out = sb.ahp().arg("validate").output().unwrap();
    let text = format!("{}{}", stdout(&out), crate::common::stderr(&out));
    assert!(
        !out.status.success() && text.contains("is not a glob"),
        "{text}"
    );
    sb.write(".ahp/hooks.yaml", "settings:\n  issue_commands: null\n");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        !out.status.success(),
        "issue_commands: null switched every tracker off silently"
    );
}

// ---- The real Monoco CLI ------------------------------------------------

/// The Monoco release these tests drive.
const MONOCO: &str = "monoco-toolkit==0.4.2";

/// A virtualenv with Monoco installed, made once per test run under
/// cargo's temp dir; `None` (skip) only when there is no Python.
fn monoco_venv() -> Option<&'static PathBuf> {
    static VENV: OnceLock<Option<PathBuf>> = OnceLock::new();
    VENV.get_or_init(|| {
        let python = ["python3", "python"].into_iter().find(|p| {
            Std::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
        let Some(python) = python else {
            eprintln!("SKIPPED: the real-Monoco tests need Python 3 (python3 on PATH)");
            return None;
        };
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("monoco-0.4.2");
        let monoco = venv.join("bin/monoco");
        if !monoco.exists() {
            let _ = std::fs::remove_dir_all(&venv);
            let out = Std::new(python)
                .args(["-m", "venv"])
                .arg(&venv)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "python -m venv: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let out = Std::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check", MONOCO])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "pip install {MONOCO}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Some(venv)
    })
    .as_ref()
}

/// Runs the real `monoco ARGS` in the sandbox (its git hooks call
/// `monoco` too, so the venv is on PATH); returns its output.
fn monoco(sb: &Sandbox, venv: &Path, args: &[&str]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Std::new(venv.join("bin/monoco"))
        .args(args)
        .current_dir(sb.root())
        .env("HOME", sb.home.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("MONOCO_NO_TELEMETRY", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// `git ARGS` in the sandbox; Monoco's git hooks call `monoco`, so the
/// venv is on PATH.
fn git(sb: &Sandbox, venv: &Path, args: &[&str]) {
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Std::new("git")
        .args(args)
        .current_dir(sb.root())
        .env("HOME", sb.home.path())
        .env("PATH", path)
        .output()
        .unwrap();
    ok(out, &format!("git {args:?}"));
}

fn ok(out: std::process::Output, what: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what}: {text}");
    text
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.contains(from),
        "{} has no `{from}`:\n{text}",
        path.display()
    );
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// A copy of the Monoco project of [`build_submitted_issue`], made once
/// per test process (a dozen Monoco and git-hook runs of about a second
/// each) and copied into each test's own sandbox: (the issue id, its file
/// in `sb`).
fn submitted_issue(sb: &Sandbox, venv: &Path) -> (String, PathBuf) {
    static TEMPLATE: OnceLock<(PathBuf, String, PathBuf)> = OnceLock::new();
    let (template, id, file) = TEMPLATE.get_or_init(|| {
        let built = Sandbox::new();
        let (id, file) = build_submitted_issue(&built, venv);
        let file = file.strip_prefix(built.root()).unwrap().to_path_buf();
        let template = Path::new(env!("CARGO_TARGET_TMPDIR")).join("monoco-submitted");
        let _ = std::fs::remove_dir_all(&template);
        std::fs::create_dir_all(&template).unwrap();
        copy_into(built.root(), &template.join("project"));
        copy_into(built.home.path(), &template.join("home"));
        (template, id, file)
    });
    copy_into(&template.join("project"), sb.root());
    copy_into(&template.join("home"), sb.home.path());
    (id.clone(), sb.root().join(file))
}

/// Copies the contents of `from` into the folder `to`, as they are.
fn copy_into(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let out = Std::new("cp")
        .arg("-a")
        .arg(from.join("."))
        .arg(to)
        .output()
        .unwrap();
    ok(out, "cp -a");
}

/// A Monoco project with one feature submitted for review whose
/// acceptance criterion is still open: (the issue id, its file).
fn build_submitted_issue(sb: &Sandbox, venv: &Path) -> (String, PathBuf) {
    sb.git_init();
    ok(
        monoco(
            sb,
            venv,
            &[
                "init",
                "--name",
                "demo",
                "--key",
                "DEMO",
                "--author",
                "dev",
                "--no-telemetry",
            ],
        ),
        "monoco init",
    );
    git(sb, venv, &["add", "-A"]);
    git(sb, venv, &["commit", "-qm", "init"]);
    ok(
        monoco(sb, venv, &["issue", "create", "feature", "-t", "Add login"]),
        "monoco issue create",
    );
    let dir = sb.root().join("Issues/Features/open");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let id = name.splitn(3, '-').take(2).collect::<Vec<_>>().join("-");
    git(sb, venv, &["add", "-A"]);
    git(sb, venv, &["commit", "-qm", "issue"]);
    ok(
        monoco(sb, venv, &["issue", "start", &id]),
        "monoco issue start",
    );
    sb.write("login.txt", "login\n");
    git(sb, venv, &["add", "login.txt"]);
    git(sb, venv, &["commit", "-qm", "login"]);
    edit(&file, "- [ ] Task 1", "- [x] Task 1");
    edit(
        &file,
        "<!-- Required for Review/Done stage. Record review feedback here. -->",
        "Reviewed.",
    );
    git(sb, venv, &["commit", "-qam", "tasks done"]);
    ok(
        monoco(sb, venv, &["issue", "submit", &id]),
        "monoco issue submit",
    );
    (id, file)
}

fn real_monoco_close(agent: &str) {
    let Some(venv) = monoco_venv() else {
        return;
    };
    let sb = Sandbox::new();
    let (id, file) = submitted_issue(&sb, venv);
    // Monoco's own `issue` commands write into the project: the signal
    // log stays out of its commits.
    sb.write(".ahp/.gitignore", "*\n");
    let command = format!("monoco issue close {id} --solution implemented");
    let before = std::fs::read(&file).unwrap();
    let whole = hook_output(&sb, agent, &pre_tool(agent, sb.root(), &command));
    let (code, out) = (whole.status.code().unwrap_or(-1), stdout(&whole));
    let reason = denied(agent, code, &out).unwrap_or_else(|| {
        panic!(
            "{agent}: not denied: {out}\nstderr: {}",
            String::from_utf8_lossy(&whole.stderr)
        )
    });
    assert!(reason.contains("Criteria 1"), "{agent}: {reason}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "{agent}: the issue changed"
    );

    edit(&file, "- [ ] Criteria 1", "- [x] Criteria 1");
    git(&sb, venv, &["commit", "-qam", "criteria met"]);
    // Monoco closes from the trunk and merges the issue file from the
    // issue's branch: ahp judges the branch's copy, where the items are
    // ticked, not the trunk's older one.
    git(&sb, venv, &["checkout", "-q", "main"]);
    let (code, out) = hook(&sb, agent, &pre_tool(agent, sb.root(), &command));
    assert!(
        denied(agent, code, &out).is_none(),
        "{agent}: still denied: {out}"
    );
    // The agent runs the command, as it would after ahp allowed it.
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    let output = ok(monoco(&sb, venv, &args), "monoco issue close");
    assert!(
        !file.exists(),
        "{agent}: monoco did not close {id}: {output}"
    );
    hook(
        &sb,
        agent,
        &post_tool(agent, sb.root(), &command, &output, 0),
    );
    let post = runs(&sb, "post-issue-close");
    assert_eq!(post.len(), 1, "{agent}: {:?}", sb.log_lines());
    assert_eq!(post[0]["issue_id"], id.as_str());
    let closed = post[0]["context"]["issue"]["path"]
        .as_str()
        .unwrap_or_default();
    assert!(closed.contains("/closed/"), "{agent}: {closed}");
}

#[test]
fn real_monoco_close_through_claude_code() {
    real_monoco_close("claude-code");
}

#[test]
fn real_monoco_close_through_gemini() {
    real_monoco_close("gemini");
}

#[test]
fn real_monoco_close_through_codex() {
    real_monoco_close("codex");
}

/// A file named like the issue whose frontmatter says it is another one
/// (an untracked decoy with every box ticked, first in path order) does
/// not stand for the issue being closed.
#[test]
fn a_decoy_file_with_another_id_is_passed_over() {
    let sb = Sandbox::new();
    monoco_issue(&sb, OPEN_ISSUE);
    sb.write(
        "Issues/AAA/open/FEAT-0001-decoy.md",
        "---\nid: SOMETHING-ELSE\n---\n- [x] all done\n",
    );
    let close = || {
        hook(
            &sb,
            "claude-code",
            &pre_tool("claude-code", sb.root(), "monoco issue close FEAT-0001"),
        )
    };
    let (code, out) = close();
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("Users can log in")),
        "{out}"
    );
    // A decoy that does not read is passed over for the file that does.
    sb.write(
        "Issues/AAA/open/FEAT-0001-decoy.md",
        "no frontmatter, every box ticked\n",
    );
    let (code, out) = close();
    assert!(
        denied("claude-code", code, &out).is_some_and(|r| r.contains("Users can log in")),
        "{out}"
    );
    // Two files that both say they are FEAT-0001 (also under a namespace):
    // which is the issue is not guessed, and the close is refused.
    for id in ["FEAT-0001", "other::FEAT-0001"] {
        sb.write(
            "Issues/AAA/open/FEAT-0001-decoy.md",
            &format!("---\nid: {id}\n---\n- [x] all done\n"),
        );
        let (code, out) = close();
        assert!(
            denied("claude-code", code, &out)
                .is_some_and(|r| r.contains("several files say they are FEAT-0001")),
            "{id}: {out}"
        );
    }
}
