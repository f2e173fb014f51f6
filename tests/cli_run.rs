//! `ahp run`: verdicts, exit codes and the log, end to end.

use crate::common::*;

const RM_RF: &str = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#;

#[test]
fn rm_rf_with_no_config_anywhere_blocks_and_logs_one_record() {
    let sb = Sandbox::new();
    let out = sb.run("pre-tool-use", RM_RF);
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "block");
    let signals = v["signals"].as_array().unwrap();
    assert_eq!(signals.len(), 1);
    let s = &signals[0];
    assert_eq!(s["header"]["intensity"], "block");
    assert_eq!(s["header"]["source"], "PermissionChecker");
    assert_eq!(s["context"]["hook"], "pre-tool-use");
    let reason = s["payload"]["reason"].as_str().unwrap();
    assert!(reason.contains("rm -rf /"), "{reason}");
    assert!(
        !s["payload"]["resolution_path"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(v["context_changes"].as_array().unwrap().is_empty());
    // One signal record, then the run record that explains it.
    let log = sb.log_lines();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["kind"], "signal");
    assert_eq!(log[0]["header"]["id"], s["header"]["id"]);
    assert_eq!(log[1]["kind"], "run");
    assert_eq!(log[1]["outcome"], "block");
    assert_eq!(log[1]["signal_ids"][0], s["header"]["id"]);
    assert_eq!(log[1]["context"]["tool"]["input"]["command"], "rm -rf /");
    assert!(
        log[1]["config_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // A second run appends.
    sb.ahp()
        .args(["run", "PreToolUse"])
        .write_stdin(RM_RF)
        .assert()
        .code(2);
    let kinds: Vec<String> = sb
        .log_lines()
        .iter()
        .map(|l| l["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["signal", "run", "signal", "run"]);
}

#[test]
fn safe_command_is_accepted_with_exit_0() {
    let sb = Sandbox::new();
    let out = sb.run(
        "pre-tool-use",
        r#"{"tool":{"name":"Bash","input":{"command":"cargo test"}}}"#,
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "accept");
    assert_eq!(v["signals"], serde_json::json!([]));
    // No signal; the run itself is recorded.
    let log = sb.log_lines();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["kind"], "run");
    assert_eq!(log[0]["outcome"], "accept");
}

#[test]
fn confirmation_prompt_exits_3() {
    let sb = Sandbox::new();
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--context"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/events/force-push.json"
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "prompt");
    assert_eq!(v["signals"][0]["payload"]["continue_allowed"], true);
}

#[test]
fn log_flags_choose_or_skip_the_log() {
    let sb = Sandbox::new();
    sb.ahp()
        .args(["run", "pre-tool-use", "--no-log"])
        .write_stdin(RM_RF)
        .assert()
        .code(2);
    assert!(!sb.log_path().exists());
    let custom = sb.root().join("logs/custom.jsonl");
    sb.ahp()
        .args(["run", "pre-tool-use", "--log"])
        .arg(&custom)
        .write_stdin(RM_RF)
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&custom).unwrap().lines().count(), 2);
    assert!(!sb.log_path().exists());
}

#[test]
fn unwritable_log_warns_but_still_decides() {
    let sb = Sandbox::new();
    // A directory where the log file should be.
    std::fs::create_dir_all(sb.root().join("dir.jsonl")).unwrap();
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--log", "dir.jsonl"])
        .write_stdin(RM_RF)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("signals will not be recorded"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_event_is_a_usage_error_with_suggestion() {
    let sb = Sandbox::new();
    let out = sb.run("pre-tool-usee", "{}");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("did you mean `pre-tool-use`"), "{err}");
    assert!(err.contains("pre-issue-close"), "{err}");
}

#[test]
fn bad_context_json_names_line_and_column() {
    let sb = Sandbox::new();
    let out = sb.run("pre-tool-use", "{\n  \"tool\": {\"name\": \"Bash\",,}\n}");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("context <stdin>:2:"), "{err}");
    let out = sb.run("pre-tool-use", r#"{"tool": "Bash"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("context <stdin>"), "{}", stderr(&out));
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--context", "missing.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_1_not_clap_default() {
    let sb = Sandbox::new();
    sb.ahp().args(["run"]).assert().code(1);
    sb.ahp().args(["frobnicate"]).assert().code(1);
    sb.ahp().args(["--help"]).assert().code(0);
}

/// A command's options are built only when that command runs; its help
/// still opens with the command's own description, and its options are
/// all there.
#[test]
fn each_command_help_describes_the_command_and_lists_its_options() {
    let sb = Sandbox::new();
    for (args, opening, option) in [
        (
            &["hook", "--help"][..],
            "The hook command of an agent",
            "<AGENT>",
        ),
        (
            &["run", "--help"][..],
            "Evaluate EVENT against a context",
            "--context <FILE>",
        ),
        (
            &["help", "install"][..],
            "Add `ahp hook AGENT` to an agent",
            "--scope <SCOPE>",
        ),
        (&["signals", "--help"][..], "Query the signal log", "replay"),
        (
            &["signals", "stats", "-h"][..],
            "Per source and event",
            "--since",
        ),
    ] {
        let out = sb.ahp().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = stdout(&out);
        assert!(text.starts_with(opening), "{args:?}: {text}");
        assert!(text.contains(option), "{args:?}: {text}");
    }
    let out = sb
        .ahp()
        .args(["hook", "claude-code", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--bogus'"));
}

#[test]
fn text_format_is_readable() {
    let sb = Sandbox::new();
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--format", "text"])
        .write_stdin(RM_RF)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(text.starts_with("BLOCK pre-tool-use"), "{text}");
    assert!(text.contains("block   PermissionChecker"), "{text}");
    assert!(text.contains("fix: "), "{text}");
}

#[test]
fn debug_prints_hook_trace_lines() {
    let sb = Sandbox::new();
    let out = sb
        .ahp()
        .args(["--debug", "run", "pre-tool-use"])
        .write_stdin(RM_RF)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(
            "[HOOK DEBUG] [SYNC] Starting hook 'PermissionChecker' for event 'pre-tool-use'"
        ),
        "{err}"
    );
    let out = sb
        .ahp()
        .env("AHP_DEBUG", "1")
        .args(["run", "pre-tool-use"])
        .write_stdin(RM_RF)
        .output()
        .unwrap();
    assert!(stderr(&out).contains("[HOOK DEBUG]"));
}

#[test]
fn post_event_clamps_block_to_aid() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - oracle: Rules\n      config:\n        rules:\n          - condition: \"tool == Bash\"\n            intensity: block\n            message: ran a shell command\n",
    );
    let out = sb.run(
        "post-tool-use",
        r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "aid");
    assert_eq!(v["signals"][0]["header"]["intensity"], "aid");
    assert_eq!(v["signals"][0]["header"]["clamped_from"], "block");
    assert_eq!(
        v["signals"][0]["payload"]["context_info"],
        "ran a shell command"
    );
}

#[test]
fn issue_close_with_open_checklist_blocks_by_default() {
    let sb = Sandbox::new();
    let out = sb
        .ahp()
        .args(["run", "pre-issue-close", "--context"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/events/close-with-open-items.json"
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["signals"][0]["context"]["issue_id"], "FEAT-0123");
    assert!(
        v["signals"][0]["payload"]["reason"]
            .as_str()
            .unwrap()
            .contains("2 of 5 checklist items incomplete")
    );
}

#[test]
fn log_settings_mask_and_validate() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  log_fsync: always\n  log_mask: [ticket]\nhooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n",
    );
    let ctx = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /","ticket":"SECRET-123","password":"hunter2"}}}"#;
    sb.ahp()
        .args(["run", "pre-tool-use"])
        .write_stdin(ctx)
        .assert()
        .code(2);
    let text = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(text.contains("\"kind\":\"run\""), "{text}");
    assert!(!text.contains("SECRET-123"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    // A bad setting is an error that keeps its default: said, and the
    // policy still runs.
    sb.write(".ahp/hooks.yaml", "settings:\n  log_fsync: sometimes\n");
    let out = sb.run("pre-tool-use", "{}");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("settings.log_fsync"),
        "{}",
        stderr(&out)
    );
    // A list item that is not a name is named, not the list.
    sb.write(".ahp/hooks.yaml", "settings:\n  log_mask: [ticket, 5]\n");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stderr(&out).contains(
            ".ahp/hooks.yaml:2:22: settings.log_mask.1: expected a key name or dotted path, found a number"
        ),
        "{}",
        stderr(&out)
    );
    // An empty name masks nothing: an error, not a setting that does
    // nothing.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  log_mask: [ticket, \" \"]\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(".ahp/hooks.yaml:2:22: settings.log_mask.1: expected a key name or dotted path, found an empty name"),
        "{}",
        stderr(&out)
    );
}

/// A context in the agents' shape names a file tool's file in its input
/// (`file_path`, `path`, …): `ahp run` reads it into `tool.path` as
/// `ahp hook` does, so PathGuard and `when: {tool.path: …}` see it.
#[test]
fn a_file_tools_path_in_its_input_is_the_tool_path() {
    let sb = Sandbox::new();
    let key = sb.home.path().join(".ssh/id_rsa");
    for (tool, field) in [
        ("Read", "file_path"),
        ("read_file", "path"),
        ("edit", "filePath"),
    ] {
        let ctx = serde_json::json!({"tool": {"name": tool, "input": {field: key}}});
        let out = sb.run("pre-tool-use", ctx.to_string());
        assert_eq!(out.status.code(), Some(2), "{tool}: {}", stderr(&out));
        let v = json_out(&out);
        assert_eq!(
            v["signals"][0]["header"]["source"], "PathGuard",
            "{tool}: {v}"
        );
    }
}

/// A reader that stops early (`ahp gate … | head -n1`, `ahp test | tee`
/// under pipefail) must not turn a block or a failing case into exit 0:
/// the exit code is these commands' answer.
#[test]
fn a_closed_stdout_keeps_the_exit_code_of_a_verdict() {
    let sb = Sandbox::new();
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    for command in ["run", "gate"] {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ahp"));
        cmd.env("HOME", sb.home.path())
            .current_dir(sb.root())
            .args([command, "pre-tool-use", "--format", "text"])
            .stdin(std::process::Stdio::piped())
            .stdout(closed())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(br#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#)
            .unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(2), "{command}");
    }
    sb.write(
        "cases.yaml",
        "cases:\n  - name: wrong\n    tool: Bash\n    input: {command: 'rm -rf /'}\n    expect: allow\n",
    );
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("ahp"))
        .env("HOME", sb.home.path())
        .current_dir(sb.root())
        .args(["test", "cases.yaml"])
        .stdout(closed())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}
