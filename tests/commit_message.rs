//! CommitMessageValidator on tool calls, end to end through `ahp hook
//! claude-code` and `ahp run` (issue 20, point 12): a tool call is judged
//! by the message of the commit it makes, and only that; an issue event by
//! the branch's commits.

use crate::common::{Sandbox, git, json_out};
use serde_json::{Value, json};

const POLICY: &str = "hooks:
  pre-tool-use:
    - oracle: CommitMessageValidator
      config: {preset: conventional}
  pre-issue-submit:
    - oracle: CommitMessageValidator
      config: {preset: conventional}
";

/// A repository whose feature branch already has a badly named commit.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write("README.md", "hi\n");
    git(sb.root(), &["add", "README.md"]);
    git(sb.root(), &["commit", "-q", "-m", "chore: start"]);
    git(sb.root(), &["checkout", "-q", "-b", "feature"]);
    sb.write("a.txt", "a\n");
    git(sb.root(), &["add", "a.txt"]);
    git(sb.root(), &["commit", "-q", "-m", "old sloppy commit"]);
    sb.write(".ahp/hooks.yaml", POLICY);
    sb
}

/// Claude Code's PreToolUse for a Bash command: the exit code and the
/// answer (null when ahp printed nothing).
fn bash(sb: &Sandbox, command: &str) -> (i32, Value) {
    let payload = json!({"session_id": "s", "cwd": sb.root().to_string_lossy(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "commit"}});
    let out = sb
        .ahp()
        .env_remove("CLAUDE_PROJECT_DIR")
        .args(["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    (
        out.status.code().unwrap(),
        serde_json::from_str(text.trim()).unwrap_or(Value::Null),
    )
}

fn asks(v: &Value) -> Option<String> {
    let h = &v["hookSpecificOutput"];
    (h["permissionDecision"] == "ask").then(|| {
        h["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    })
}

#[test]
fn other_tool_calls_are_not_asked_about_the_branchs_old_commits() {
    let sb = project();
    for command in ["ls -la", "git status", "git log --oneline", "cargo test"] {
        let (code, v) = bash(&sb, command);
        assert_eq!(code, 0);
        assert_eq!(asks(&v), None, "{command}: {v}");
        assert!(!v.to_string().contains("old sloppy"), "{command}: {v}");
    }
}

#[test]
fn the_message_of_the_commit_being_made_is_checked() {
    let sb = project();
    let (code, v) = bash(&sb, "git add -A && git commit -m 'added the parser'");
    assert_eq!(code, 0);
    let reason = asks(&v).expect("asks");
    assert!(reason.contains("\"added the parser\""), "{reason}");
    assert!(reason.contains("Conventional Commits"), "{reason}");
    assert!(!reason.contains("old sloppy"), "{reason}");

    // A good message passes, whatever the branch's history holds.
    for good in [
        "git commit -m 'feat(parser): add nested lists'",
        "git commit -am \"fix: handle empty input\"",
        "git commit -m 'feat: x' -m 'Why it is needed.' -m 'Refs: FEAT-1'",
        "git commit --message='docs: describe the flags'",
        "git -C . commit -q --message \"test: cover the edge\"",
        "cd . && git commit -m 'chore: tidy'",
    ] {
        let (_, v) = bash(&sb, good);
        assert_eq!(asks(&v), None, "{good}: {v}");
    }
    for bad in [
        "git commit -am 'oops'",
        "git commit --message='Fix it'",
        "git -C . commit -m 'wip'",
        "git commit -mwip",
        "GIT_AUTHOR_NAME=x git commit -m 'feature: nope'",
        "git commit --amend -m 'amended badly'",
    ] {
        let (_, v) = bash(&sb, bad);
        assert!(asks(&v).is_some(), "{bad}: {v}");
    }
}

#[test]
fn heredoc_messages_are_read() {
    let sb = project();
    // The form Claude Code itself writes commits in.
    let good = "git commit -m \"$(cat <<'EOF'\nfeat: add the exporter\n\nIt writes CSV (and JSON).\nEOF\n)\"";
    let (_, v) = bash(&sb, good);
    assert_eq!(asks(&v), None, "{v}");
    let bad = good.replace("feat: add", "Add");
    let (_, v) = bash(&sb, &bad);
    let reason = asks(&v).expect("asks");
    assert!(reason.contains("\"Add the exporter\""), "{reason}");
    let stdin = "git commit -F - <<'EOF'\nupdated things\nEOF";
    assert!(asks(&bash(&sb, stdin).1).is_some());
}

#[test]
fn message_files_are_read_inside_the_project_only() {
    let sb = project();
    sb.write("msg.txt", "\nadded stuff\n\nbody\n");
    let (_, v) = bash(&sb, "git commit -F msg.txt");
    assert!(asks(&v).expect("asks").contains("\"added stuff\""), "{v}");
    let (_, v) = bash(&sb, "git commit --file=msg.txt");
    assert!(asks(&v).is_some(), "{v}");
    sb.write("good.txt", "fix: read the file\n");
    assert_eq!(asks(&bash(&sb, "git commit -F good.txt").1), None);

    // Outside the project, or not there yet: not read, not guessed.
    let outside = sb.home.path().join("msg.txt");
    std::fs::write(&outside, "bad outside message\n").unwrap();
    for command in [
        format!("git commit -F {}", outside.display()),
        "git commit -F ../msg.txt".to_string(),
        "printf 'bad' > later.txt && git commit -F later.txt".to_string(),
    ] {
        let (code, v) = bash(&sb, &command);
        assert_eq!((code, asks(&v)), (0, None), "{command}: {v}");
    }
    let notes: Vec<String> = sb
        .log_lines()
        .into_iter()
        .filter(|l| l["kind"] == "info")
        .map(|l| l["message"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("outside the project")),
        "{notes:?}"
    );
    assert!(
        !notes.iter().any(|n| n.contains("bad outside")),
        "{notes:?}"
    );
}

#[test]
fn a_message_that_cannot_be_known_is_accepted_with_a_note() {
    let sb = project();
    for command in [
        "git commit",
        "git commit --amend --no-edit",
        "git commit -m \"$MSG\"",
        "git commit --fixup HEAD",
    ] {
        let (code, v) = bash(&sb, command);
        assert_eq!((code, asks(&v)), (0, None), "{command}: {v}");
    }
    let notes: Vec<String> = sb
        .log_lines()
        .into_iter()
        .filter(|l| l["kind"] == "info")
        .map(|l| l["message"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(notes.iter().any(|n| n.contains("editor")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("built by the shell")),
        "{notes:?}"
    );
}

#[test]
fn ahp_run_checks_the_pending_commit_and_issue_events_the_branch() {
    let sb = project();
    let run = |event: &str, ctx: &Value| {
        let out = sb
            .ahp()
            .args(["run", event])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap();
        (out.status.code().unwrap(), json_out(&out))
    };
    let ls = json!({"tool": {"name": "shell", "input": {"command": "ls"}}});
    let (code, v) = run("pre-tool-use", &ls);
    assert_eq!((code, v["outcome"].as_str()), (0, Some("accept")), "{v}");
    // Codex sends the command as an argument list.
    let codex = json!({"tool": {"name": "shell", "input": {"command": ["bash", "-lc", "git commit -m 'nope'"]}}});
    let (code, v) = run("pre-tool-use", &codex);
    assert_eq!(code, 3, "{v}");
    let argv = json!({"tool": {"name": "shell", "input": {"command": ["git", "commit", "-m", "feat: fine"]}}});
    assert_eq!(run("pre-tool-use", &argv).0, 0);
    // The issue event judges the branch: its old commit is reported.
    let (code, v) = run("pre-issue-submit", &json!({}));
    assert_eq!(code, 3, "{v}");
    assert!(v.to_string().contains("old sloppy commit"), "{v}");
}

/// The shell runs `git commit` in more places than the start of a line:
/// inside `sh -c` / `bash -c` / `eval`, after `if … then`, `{`, `!`,
/// behind wrappers with their own options, inside `$(…)` and backquotes,
/// and with git's abbreviated long options (`--mess=` is `--message=`).
/// Each bad message is asked about; good ones and look-alikes are not.
#[test]
fn a_commit_wrapped_in_shell_syntax_is_still_checked() {
    let sb = project();
    for bad in [
        "sh -c 'git commit -m \"sloppy one\"'",
        "bash -lc \"git add -A && git commit -m 'sloppy one'\"",
        "bash -e -o pipefail -c 'git commit -m \"sloppy one\"'",
        "eval \"git commit -m 'sloppy one'\"",
        "if true; then git commit -m 'sloppy one'; fi",
        "for f in a; do git commit -m 'sloppy one'; done",
        "{ git commit -m 'sloppy one'; }",
        "! git commit -m 'sloppy one'",
        "sudo -u dev git commit -m 'sloppy one'",
        "timeout 60 git commit -m 'sloppy one'",
        "nice -n 5 git commit -m 'sloppy one'",
        "echo $(git commit -m 'sloppy one')",
        "out=\"$(git commit -m 'sloppy one')\"",
        "echo `git commit -m sloppy`",
        "git commit --mess='sloppy one'",
        "git commit --mes 'sloppy one' -m 'feat: looks fine'",
        "git commit -F /dev/stdin <<< 'sloppy one'",
    ] {
        let (code, v) = bash(&sb, bad);
        assert_eq!(code, 0, "{bad}: {v}");
        assert!(asks(&v).is_some(), "{bad}: {v}");
    }
    for fine in [
        "sh -c 'git commit -m \"fix: tidy\"'",
        "echo git commit -m sloppy",
        "grep -rn 'git commit -m sloppy' .",
        "timeout 5 ls",
        "bash -c 'ls -la'",
        "bash run.sh -c 'git commit -m sloppy'",
    ] {
        let (code, v) = bash(&sb, fine);
        assert_eq!((code, asks(&v)), (0, None), "{fine}: {v}");
    }
}

/// Hostile command lines come back at once: many unterminated
/// `$(cat <<X` here-documents (each of which once rescanned the rest of
/// the line), deep nesting, NUL bytes, unterminated quotes.
#[test]
fn hostile_command_lines_do_not_hang_the_hook() {
    let sb = project();
    let many_heredocs: String = (0..20_000).map(|i| format!("$(cat <<E{i}\n)")).collect();
    for command in [
        many_heredocs,
        "$(cat <<E\n)".repeat(20_000),
        "eval ".repeat(20_000) + "git commit -m x",
        "$(echo ".repeat(10_000) + &")".repeat(10_000),
        "git commit -m 'a\0b".to_string(),
        "sh -c \"".repeat(10_000),
    ] {
        let payload = json!({"session_id": "s", "cwd": sb.root().to_string_lossy(),
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}});
        let out = sb
            .ahp()
            .env_remove("CLAUDE_PROJECT_DIR")
            .args(["hook", "claude-code"])
            .write_stdin(payload.to_string())
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            command.chars().take(40).collect::<String>(),
            crate::common::stderr(&out)
        );
    }
}
