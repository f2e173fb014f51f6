//! The builtin layer under every policy, and errors that degrade one part
//! of the policy, not all of it: end to end through `ahp hook`, `ahp run`,
//! `ahp validate`, `ahp config`, `ahp explain` and `ahp doctor`.

use crate::common::*;
use serde_json::Value;

/// What Claude Code sends before running `rm -rf /`.
fn rm_rf_payload(sb: &Sandbox) -> String {
    serde_json::json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": sb.root(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /", "description": "Remove all files"},
        "tool_use_id": "toolu_01"
    })
    .to_string()
}

const RM_RF_CONTEXT: &str = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#;

fn claude_code(sb: &Sandbox) -> std::process::Output {
    sb.ahp()
        .env_remove("CLAUDE_PROJECT_DIR")
        .args(["hook", "claude-code"])
        .write_stdin(rm_rf_payload(sb))
        .output()
        .unwrap()
}

fn decision(out: &std::process::Output) -> Value {
    json_out(out)["hookSpecificOutput"]["permissionDecision"].clone()
}

fn run_rm_rf(sb: &Sandbox) -> std::process::Output {
    sb.ahp()
        .args(["run", "pre-tool-use", "--format", "json"])
        .write_stdin(RM_RF_CONTEXT)
        .output()
        .unwrap()
}

fn records(sb: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sb.log_path())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

const CHECKLIST_ONLY: &str = "\
hooks:
  pre-issue-submit:
    - oracle: ChecklistValidator
";

#[test]
fn a_project_policy_adds_to_the_builtin_layer() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", CHECKLIST_ONLY);
    let out = claude_code(&sb);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(decision(&out), "deny", "{}", stdout(&out));
    let out = run_rm_rf(&sb);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        json_out(&out)["signals"][0]["header"]["source"],
        "PermissionChecker"
    );

    // `ahp explain` and `ahp config` show where the entry comes from.
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("layers: builtin <builtin>/default-hooks.yaml → project"),
        "{text}"
    );
    assert!(
        text.contains("from builtin <builtin>/default-hooks.yaml:"),
        "{text}"
    );
    let out = sb.ahp().arg("config").output().unwrap();
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("id: \"PermissionChecker\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("# builtin <builtin>/default-hooks.yaml:"),
        "{line}"
    );
    let out = sb
        .ahp()
        .args(["config", "--format", "json"])
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["layers"][0]["layer"], "builtin");
    assert_eq!(
        v["hooks"]["pre-tool-use"][0]["defined_at"]["layer"],
        "builtin"
    );
    assert!(
        v["hooks"]["pre-tool-use"][0]["defined_at"]["line"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn the_builtin_layer_is_switched_off_only_explicitly() {
    // One entry, by its id.
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      enabled: false\n",
    );
    assert!(claude_code(&sb).stdout.is_empty());
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("PermissionChecker            enabled: false set by project"),
        "{text}"
    );
    // The other builtin entries stay.
    let out = sb
        .ahp()
        .args(["explain", "pre-issue-close"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("checklist-done-at-close"),
        "{}",
        stdout(&out)
    );

    // The whole layer, by any layer's `settings.builtin: false`.
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", "settings:\n  builtin: false\n");
    sb.write(".ahp/hooks.yaml", CHECKLIST_ONLY);
    assert_eq!(run_rm_rf(&sb).status.code(), Some(0));
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("builtin layer: off (settings.builtin: false at user "),
        "{text}"
    );
    assert!(!text.contains("<builtin>"), "{text}");
    let out = sb
        .ahp()
        .args(["config", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(json_out(&out)["builtin_off"]["layer"], "user");
    // A later layer can bring it back.
    sb.write(".ahp/hooks.local.yaml", "settings: {builtin: true}\n");
    sb.write(".gitignore", ".ahp/hooks.local.yaml\n");
    assert_eq!(run_rm_rf(&sb).status.code(), Some(2));

    // A value that is not a boolean is an error and keeps the layer.
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", "settings:\n  builtin: no\n");
    let out = run_rm_rf(&sb);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("hooks.yaml:2:12: settings.builtin: expected true or false"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_starter_policy_tunes_the_builtin_entries_and_nothing_fires_twice() {
    let sb = Sandbox::new();
    sb.ahp().arg("init").assert().success();
    let out = run_rm_rf(&sb);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    let sources: Vec<&str> = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["header"]["source"].as_str())
        .collect();
    assert_eq!(sources, ["PermissionChecker"], "{v}");
    let out = sb
        .ahp()
        .args(["run", "pre-issue-close", "--format", "json"])
        .write_stdin(r#"{"issue":{"id":"X-1","checklist":[{"text":"a","status":"open"}]}}"#)
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["entries"].as_array().map(Vec::len), Some(1), "{v}");
}

#[test]
fn a_broken_entry_is_left_out_loudly_and_the_rest_runs() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermisionChecker\n    - oracle: Rules\n      id: no-curl\n      config:\n        rules:\n          - condition: \"tool.input.command ~ 'curl'\"\n            intensity: block\n            message: no curl\n",
    );
    let out = claude_code(&sb);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(decision(&out), "deny", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(".ahp/hooks.yaml:3:15"), "{err}");
    assert!(err.contains("did you mean `PermissionChecker`"), "{err}");
    assert!(err.contains("left out of the policy"), "{err}");
    assert!(!err.contains("error: error:"), "{err}");
    let recs = records(&sb);
    let error = recs
        .iter()
        .find(|r| r["kind"] == "error")
        .unwrap_or_else(|| panic!("no error record in {recs:?}"));
    assert_eq!(error["line"], 3);
    assert!(
        error["file"].as_str().unwrap().ends_with(".ahp/hooks.yaml"),
        "{error}"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("PermisionChecker"),
        "{error}"
    );
    // The project's other entry still runs.
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--format", "json"])
        .write_stdin(r#"{"tool":{"name":"Bash","input":{"command":"curl example.com"}}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // `ahp validate` fails, `ahp doctor` calls it a problem.
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown oracle `PermisionChecker`"));
    let out = sb
        .ahp()
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json_out(&out);
    let findings = v["findings"].to_string();
    assert!(findings.contains("PermisionChecker"), "{v}");
}

#[test]
fn a_file_that_does_not_parse_loses_only_its_own_entries() {
    let sb = Sandbox::new();
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: no-curl\n      config:\n        rules:\n          - {condition: \"tool.input.command ~ 'curl'\", intensity: block, message: no curl}\n",
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n   config: [\n",
    );
    let out = claude_code(&sb);
    assert_eq!(decision(&out), "deny", "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid YAML"), "{}", stderr(&out));
    let out = sb.run(
        "pre-tool-use",
        r#"{"tool":{"name":"Bash","input":{"command":"curl x"}}}"#,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // Under fail_closed a broken policy blocks, saying why.
    sb.write_home(".ahp/hooks.yaml", "settings: {fail_closed: true}\n");
    let payload = rm_rf_payload(&sb).replace("rm -rf /", "ls");
    let out = sb
        .ahp()
        .env_remove("CLAUDE_PROJECT_DIR")
        .args(["hook", "claude-code"])
        .write_stdin(payload)
        .output()
        .unwrap();
    assert_eq!(decision(&out), "deny", "{}", stderr(&out));
    let reason = json_out(&out)["hookSpecificOutput"]["permissionDecisionReason"].to_string();
    assert!(reason.contains("settings.fail_closed is true"), "{reason}");
    assert!(reason.contains("invalid YAML"), "{reason}");
    assert!(!stderr(&out).contains("error: error:"), "{}", stderr(&out));
}

#[test]
fn errors_cite_the_layer_that_set_the_value_and_come_all_at_once() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      id: limit\n      config:\n        max_files: 10\n",
    );
    sb.write(".gitignore", ".ahp/hooks.local.yaml\n");
    sb.write(
        ".ahp/hooks.local.yaml",
        "settings:\n  on_block: sto\nhooks:\n  pre-tool-use:\n    - id: limit\n      config:\n        max_files: lots\n    - oracle: Rules\n      priorty: 3\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    // The bad value is the local layer's, on its line.
    assert!(
        err.contains("hooks.local.yaml:7:9: hooks.pre-tool-use[limit].config.max_files"),
        "{err}"
    );
    assert!(!err.contains("hooks.yaml:6:"), "{err}");
    // Load-time, settings and compile-time errors, in one run.
    assert!(err.contains("hooks.local.yaml:9:7"), "{err}");
    assert!(err.contains("settings.on_block"), "{err}");
    // The entry left out for `priorty` is still checked for the rest.
    assert!(err.contains("Rules needs a `rules` list"), "{err}");
    assert!(err.contains("4 errors"), "{err}");
    assert!(!err.contains("error: error:"), "{err}");
}

#[test]
fn yaml_mistakes_are_explained_in_ahps_words() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: a\n      oracle: PermissionChecker\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("hooks.yaml:5:7: duplicate key `oracle`"),
        "{err}"
    );
    assert!(err.contains("first at line 3"), "{err}");
    assert!(!err.contains("DuplicateKeyPolicy"), "{err}");

    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        dangerous_commands:\n          - pattern: \"rm\\s+-rf\"\n            reason: x\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(err.contains("hooks.yaml:6:"), "{err}");
    assert!(err.contains("unknown escape"), "{err}");
    assert!(err.contains("single quotes"), "{err}");
}

#[test]
fn a_broken_override_leaves_the_entry_as_the_layers_below_define_it() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      config:\n        dangerous_commands: oops\n",
    );
    let out = claude_code(&sb);
    assert_eq!(decision(&out), "deny", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(".ahp/hooks.yaml:5:"), "{err}");
    assert!(err.contains("dangerous_commands"), "{err}");
    assert!(
        err.contains("runs without the override(s) at") && err.contains(".ahp/hooks.yaml:3:"),
        "{err}"
    );
}

#[test]
fn softening_a_builtin_entry_is_said_out_loud() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      intensity: aid\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains(".ahp/hooks.yaml:4:18")
            && all.contains("builtin entry `PermissionChecker` below block"),
        "{all}"
    );
    // Raising it, or leaving it alone, says nothing.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      intensity: block\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("below block"), "{all}");
}

/// `extend_defaults: false` merged into a builtin entry drops its built-in
/// lists and rules (`sudo -i`, `~/.ssh/id_rsa`): allowed, and said. On an
/// entry of your own it only keeps that entry to your lists.
#[test]
fn replacing_a_builtin_entrys_defaults_is_said_out_loud() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - id: PermissionChecker
      config:
        extend_defaults: false
        dangerous_commands: [\"deploy prod\"]
    - id: PathGuard
      config: {extend_defaults: false, credentials: [\"~/.my-token\"]}
",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains(".ahp/hooks.yaml:5:26")
            && all.contains("config.extend_defaults: drops the built-in rules and lists of the builtin entry `PermissionChecker`"),
        "{all}"
    );
    assert!(
        all.contains(".ahp/hooks.yaml:8:33")
            && all.contains("builtin entry `PathGuard`, so what it blocks by default (e.g. reading `~/.ssh/id_rsa`)"),
        "{all}"
    );
    assert!(all.contains("(e.g. `rm -rf /`, `sudo -i`)"), "{all}");
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - id: prod-deploys
      oracle: PermissionChecker
      config:
        extend_defaults: false
        dangerous_commands: [\"deploy prod\"]
",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        out.status.success() && !all.contains("extend_defaults"),
        "{all}"
    );
    // That entry repeats no built-in finding, of either list: a force
    // push is asked once, by the builtin entry, not by `prod-deploys`.
    let out = sb.run(
        "pre-tool-use",
        r#"{"tool":{"name":"Bash","input":{"command":"git push --force origin main"}}}"#,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources: Vec<&str> = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["header"]["source"].as_str())
        .collect();
    assert_eq!(sources, ["PermissionChecker"], "{v}");
}

/// An id is one line of every report: a repository's id with a newline
/// forged a "still running" line for the builtin entry it had switched
/// off in `ahp explain`. Such an id is an error at its line, and a folder
/// named with a newline is shown escaped.
#[test]
fn an_id_or_a_folder_name_cannot_forge_a_report_line() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      enabled: false\n    - id: \"PermissionChecker\\n      from builtin <builtin>/default-hooks.yaml:37:7\"\n      oracle: Rules\n      config: {rules: [{condition: \"tool.name == 'x'\", message: hi}]}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            ".ahp/hooks.yaml:5:11: hooks.pre-tool-use[1]: an entry id holds a control or invisible character"
        ),
        "{}",
        stderr(&out)
    );
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        !text.contains("\n      from builtin <builtin>/default-hooks.yaml:37:7\n      always"),
        "{text}"
    );

    let dir = sb
        .root()
        .join(".agents/hooks/evil\n  1. wave 0  PermissionChecker");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("HOOK.md"), "---\nname: nope!\n---\n").unwrap();
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("evil\\n  1. wave 0"), "{all}");
    assert!(!all.contains("\n  1. wave 0  PermissionChecker"), "{all}");
}

/// A later layer's `when` on a builtin entry runs it only where the
/// condition holds: `rm -rf /` is then allowed, which `validate` and
/// every call now say, as for `mode: shadow` or a weaker intensity.
#[test]
fn a_when_on_a_builtin_entry_is_warned_about() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      when: {tool.input.command: \"~^$\"}\n    - id: PathGuard\n      when: {tool: [Nothing]}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml:4:14: hooks.pre-tool-use[PermissionChecker].when: runs the builtin entry `PermissionChecker` only when this holds, and it does not for `rm -rf /` through claude-code's Bash, so that is no longer refused"),
        "{err}"
    );
    assert!(
        err.contains(".ahp/hooks.yaml:6:14: hooks.pre-tool-use[PathGuard].when: runs the builtin entry `PathGuard` only when this holds"),
        "{err}"
    );
    // The user's own `when` that still holds for every call the entry is
    // there for is no concern, nor is an entry of one's own with a `when`;
    // a repository's is said whatever it is (it applies untrusted).
    let narrowing = "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      when: {agent.name: \"!= codex\"}\n    - id: PathGuard\n      when: {session_id: \"~.\"}\n";
    sb.write(".ahp/hooks.yaml", narrowing);
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stderr(&out).contains(
            "this repository's policy runs the builtin entry `PathGuard` only when this holds"
        ),
        "{}",
        stderr(&out)
    );
    sb.write(".ahp/hooks.yaml", "hooks: {}\n");
    sb.write_home(".ahp/hooks.yaml", narrowing);
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        !stderr(&out).contains("runs the builtin entry"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(sb.home.path().join(".ahp/hooks.yaml")).unwrap();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      id: strict\n      when: {tool.input.command: \"~git\"}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        !stderr(&out).contains("runs the builtin entry"),
        "{}",
        stderr(&out)
    );
}

/// An id cannot pass for the builtin one with a character that does not
/// show, or a blank at its end.
#[test]
fn an_id_with_an_invisible_character_is_an_error() {
    let sb = Sandbox::new();
    for id in ["PermissionChecker\\u200b", "PermissionChecker "] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("hooks:\n  pre-tool-use:\n    - id: \"{id}\"\n      oracle: Rules\n      config: {{rules: [{{condition: \"false\", message: m}}]}}\n"),
        );
        let out = sb.ahp().arg("validate").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{id}");
        assert!(
            stderr(&out).contains(".ahp/hooks.yaml:3:11: hooks.pre-tool-use[0]: an entry id holds a control or invisible character"),
            "{id}: {}",
            stderr(&out)
        );
    }
}

/// A project folder named with a line break cannot forge a line of the
/// reports that print its path (`explain`'s layers, `config`'s header,
/// `doctor`'s findings, `trust`).
#[test]
fn a_project_folder_name_cannot_forge_a_report_line() {
    let sb = Sandbox::new();
    let dir = sb.root().join("app\nFORGED: all good");
    std::fs::create_dir_all(dir.join(".ahp")).unwrap();
    std::fs::write(
        dir.join(".ahp/hooks.yaml"),
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: r\n      config: {rules: [{condition: \"tool.name == 'x'\", message: hi}]}\n",
    )
    .unwrap();
    let project = dir.to_str().unwrap();
    for args in [
        &["explain", "pre-tool-use", "--project", project][..],
        &["config", "--project", project],
        &["doctor", "--project", project],
        &["trust", "--show", "--project", project],
        &["trust", "--project", project],
    ] {
        let out = sb.ahp().args(args).output().unwrap();
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            !all.lines().any(|l| l.starts_with("FORGED")),
            "{args:?}: {all}"
        );
        assert!(all.contains("app\\nFORGED"), "{args:?}: {all}");
    }
    // The commands a newcomer runs inside the folder.
    for args in [
        &["validate"][..],
        &["init"],
        &["install", "claude-code"],
        &["signals", "stats"],
        &["test"],
    ] {
        let out = sb.ahp().args(args).current_dir(&dir).output().unwrap();
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            !all.lines().any(|l| l.starts_with("FORGED")),
            "{args:?}: {all}"
        );
        assert!(all.contains("app\\nFORGED"), "{args:?}: {all}");
    }
}

/// A `~/.ahp/hooks.yaml` that is a link to nothing (a dotfiles folder
/// moved away) is the user's policy gone missing: it fails closed, as an
/// unreadable user file does, and says which file.
#[test]
fn a_user_policy_linked_to_nothing_fails_closed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.home.path().join(".ahp")).unwrap();
    std::os::unix::fs::symlink(
        sb.home.path().join("dotfiles-moved/hooks.yaml"),
        sb.home.path().join(".ahp/hooks.yaml"),
    )
    .unwrap();
    let out = sb
        .claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("\"permissionDecision\":\"deny\""), "{said}");
    assert!(
        said.contains("the user policy is a link to a file that does not exist"),
        "{said}"
    );
}

/// A repository that switches the builtin protection off, whole or an
/// entry at a time, is said at its line by `validate`, every call and
/// `doctor`, as its narrower tunings are: it applies without `ahp trust`.
/// The user's own switch says nothing.
#[test]
fn a_repository_that_switches_the_builtin_protection_off_is_said() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", "settings: {builtin: false}\n");
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(
        err.contains(".ahp/hooks.yaml:1:21: settings.builtin: false: this repository's policy switches off ahp's whole builtin layer"),
        "{err}"
    );
    let call = sb
        .claude_pre_tool("s", "Bash", serde_json::json!({"command": "rm -rf /"}))
        .output()
        .unwrap();
    assert!(
        stdout(&call).is_empty()
            && stderr(&call).contains("switches off ahp's whole builtin layer"),
        "{}{}",
        stdout(&call),
        stderr(&call)
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      enabled: false\n    - id: PathGuard\n      enabled: false\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    for (at, id, example) in [
        ("4:16", "PermissionChecker", "`rm -rf /`"),
        ("6:16", "PathGuard", "`~/.ssh/id_rsa`"),
    ] {
        assert!(
            err.contains(&format!(".ahp/hooks.yaml:{at}: hooks.pre-tool-use[{id}].enabled: this repository's policy switches the builtin entry `{id}` off"))
                && err.contains(example),
            "{err}"
        );
    }
    let doctor = sb.ahp().arg("doctor").output().unwrap();
    assert!(
        stdout(&doctor).contains("switches the builtin entry `PathGuard` off"),
        "{}",
        stdout(&doctor)
    );
    // A condition that holds for no real call but the probes' own: the
    // repository's `when` on a builtin entry is said whatever it is.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      when: {session_id: probe}\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(
        err.contains(".ahp/hooks.yaml:4:14: hooks.pre-tool-use[PermissionChecker].when: this repository's policy runs the builtin entry `PermissionChecker` only when this holds"),
        "{err}"
    );
    // The user's own choice is theirs.
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write_home(
        ".ahp/hooks.yaml",
        "settings: {builtin: false}\nhooks:\n  pre-tool-use:\n    - id: PathGuard\n      enabled: false\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(!err.contains("this repository's policy"), "{err}");
}

/// A later layer's `config` for a builtin entry that stops it blocking
/// what it is there for is warned about at its line, by `validate` and by
/// every call, as a weaker intensity is. A repository's `except:`,
/// `allow:` or `require_confirmation: false` is said whatever it lets
/// through (it applies untrusted); the user's own only when it stops
/// blocking one of the calls the entry is there for.
#[test]
fn a_config_that_stops_a_builtin_entry_blocking_is_warned_about() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      config: {except: [reverse-shell, exfiltration]}\n    - id: PathGuard\n      config: {allow: [\"~/.aws/**\"]}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml:4:16: hooks.pre-tool-use[PermissionChecker].config.except: this repository's policy switches off what it stops by default: `reverse-shell`, `exfiltration`"),
        "{err}"
    );
    assert!(
        err.contains(".ahp/hooks.yaml:6:16: hooks.pre-tool-use[PathGuard].config.allow: this repository's policy switches off what it stops by default: `~/.aws/**`"),
        "{err}"
    );
    let call = sb
        .claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
        .output()
        .unwrap();
    assert!(
        stderr(&call).contains("it applies without `ahp trust`"),
        "{}",
        stderr(&call)
    );

    // The user's own tuning: said when it stops a probe call…
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      config: {except: [rm-recursive-system, rm-rf-root]}\n    - id: PathGuard\n      config: {allow: [\"~/**\"]}\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(
        err.contains("hooks.pre-tool-use[PermissionChecker].config.except: the builtin entry `PermissionChecker` no longer blocks `rm -rf /` through claude-code's Bash"),
        "{err}"
    );
    assert!(
        err.contains("hooks.pre-tool-use[PathGuard].config.allow: the builtin entry `PathGuard` no longer blocks a Read of `~/.ssh/id_rsa`"),
        "{err}"
    );
    // …and not when it keeps those blocks.
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      config: {except: [git-discard]}\n    - id: PathGuard\n      config: {allow: [\"~/.cache/**\"]}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        !stderr(&out).contains("no longer blocks"),
        "{}",
        stderr(&out)
    );
    // Run after the answer, a builtin entry answers nothing.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      async: true\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(
        err.contains("hooks.pre-tool-use[PermissionChecker].async: runs the builtin entry `PermissionChecker` after the answer"),
        "{err}"
    );
}

/// Two adjustments of one earlier entry in the same file (`- id:
/// PermissionChecker` twice) are as much a mistake as two entries of one's
/// own with one id: the second is an error at its line, naming the first.
#[test]
fn a_second_adjustment_of_an_entry_in_one_file_is_an_error() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      enabled: false\n    - id: PermissionChecker\n      intensity: block\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(".ahp/hooks.yaml:5:7: hooks.pre-tool-use[1]: a second entry with id `PermissionChecker` for pre-tool-use in the same file (first at line 3)"),
        "{}",
        stderr(&out)
    );
    // Across layers an adjustment per file stays what layers are for.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      intensity: block\n",
    );
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      priority: 5\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("a second entry"), "{}", stderr(&out));
}

/// A policy under the `.yml` name is not read: load says so, naming the file
/// and the name ahp reads, so validate, doctor and every hook call show it.
#[test]
fn a_policy_named_yml_is_a_warning_naming_the_yaml_name() {
    let policy = "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config: {rules: [{condition: \"true\", message: hi}]}\n";
    let sb = Sandbox::new();
    let project = sb.write(".ahp/hooks.yml", policy);
    let local = sb.write(".ahp/hooks.local.yml", policy);
    let user = sb.write_home(".ahp/hooks.yml", policy);

    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for (file, says) in [
        (&project, "`.ahp/hooks.yaml`"),
        (&local, "`.ahp/hooks.local.yaml`"),
        (&user, "`~/.ahp/hooks.yaml`"),
    ] {
        let line = err
            .lines()
            .find(|l| l.contains(&file.display().to_string()))
            .unwrap_or_else(|| panic!("nothing about {}: {err}", file.display()));
        assert!(
            line.contains("is not read") && line.contains(says),
            "{line}"
        );
    }
    // Nothing of theirs runs: only the builtin layer is loaded.
    assert!(
        stdout(&out).contains("(builtin); 0 HOOK.md"),
        "{}",
        stdout(&out)
    );

    let out = sb.ahp().arg("doctor").output().unwrap();
    let all = stdout(&out) + &stderr(&out);
    assert!(all.contains("hooks.local.yml is not read"), "{all}");

    let out = claude_code(&sb);
    assert!(
        stderr(&out).contains(".ahp/hooks.yml is not read"),
        "{}",
        stderr(&out)
    );

    // Beside the .yaml file the .yml one is still ignored, and said to be.
    sb.write(".ahp/hooks.yaml", policy);
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stderr(&out).contains("or merge it into the .ahp/hooks.yaml beside it"),
        "{}",
        stderr(&out)
    );
}

/// A later layer's `after:` that cannot be ordered (an unknown id, a
/// cycle) on a builtin entry is an error at its line, and the entry keeps
/// running as the builtin layer defines it: a repository's `after:
/// [nothing]` switched PermissionChecker off.
#[test]
fn a_broken_after_on_a_builtin_entry_leaves_it_running() {
    for policy in [
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      after: [nonexistent]\n",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      after: [PathGuard]\n    - id: PathGuard\n      after: [PermissionChecker]\n",
    ] {
        let sb = Sandbox::new();
        sb.write(".ahp/hooks.yaml", policy);
        let out = sb
            .claude_pre_tool("s", "Bash", serde_json::json!({"command": "rm -rf /"}))
            .output()
            .unwrap();
        assert!(
            stderr(&out).contains("hooks.pre-tool-use[PermissionChecker].after"),
            "{}",
            stderr(&out)
        );
        assert!(
            stdout(&out).contains("\"permissionDecision\":\"deny\"")
                && stdout(&out).contains("[PermissionChecker]"),
            "{policy}: {}",
            stdout(&out)
        );
    }
}

/// The builtin close gate is tuned like the tool-call entries: a config or
/// a `when` with which it no longer refuses to close an issue with an open
/// item is a warning at its line (it applies without `ahp trust`).
#[test]
fn weakening_the_builtin_close_gate_is_warned_about() {
    let sb = Sandbox::new();
    for (tuning, key) in [
        ("config: {allow_partial: true}", "config.allow_partial"),
        (
            "config: {min_completion_rate: 0.0}",
            "config.min_completion_rate",
        ),
        ("config: {sections: [Acceptanse]}", "config.sections"),
        ("when: {issue.type: fix}", "when"),
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!(
                "hooks:\n  pre-issue-close:\n    - id: checklist-done-at-close\n      {tuning}\n"
            ),
        );
        let out = sb.ahp().arg("validate").output().unwrap();
        let err = stderr(&out);
        assert!(
            err.contains(".ahp/hooks.yaml:4:")
                && err.contains(&format!("[checklist-done-at-close].{key}:"))
                && err.contains("closing an issue with an open checklist item"),
            "{tuning}: {err}"
        );
    }
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-issue-close:\n    - id: checklist-done-at-close\n      config: {min_completion_rate: 1.0}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

/// A repository that changes the builtin issue tracker (switches Monoco's
/// commands off, remaps its verbs, points its issue files elsewhere)
/// moves the builtin close gate: that is said at its line by `validate`
/// and on the call it lets through, as switching the gate's entry off is.
/// The user's own change says nothing.
#[test]
fn a_repository_that_changes_the_builtin_tracker_is_said() {
    let sb = Sandbox::new();
    sb.write(
        "Issues/Features/open/FEAT-0001-x.md",
        "---\nid: FEAT-0001\n---\n- [ ] open\n",
    );
    for setting in [
        "monoco: {enabled: false}",
        "monoco: {verbs: {close: open}}",
        "monoco: {issue_files: [\"decoy/{{ id }}.md\"]}",
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("settings:\n  issue_commands:\n    {setting}\n"),
        );
        let err = stderr(&sb.ahp().arg("validate").output().unwrap());
        assert!(
            err.contains(".ahp/hooks.yaml:3:")
                && err.contains("settings.issue_commands.monoco: this repository's policy changes the builtin tracker `monoco`"),
            "{setting}: {err}"
        );
        let call = sb
            .claude_pre_tool(
                "s",
                "Bash",
                serde_json::json!({"command": "monoco issue close FEAT-0001"}),
            )
            .output()
            .unwrap();
        assert!(
            stderr(&call).contains("changes the builtin tracker `monoco`"),
            "{setting}: {}",
            stderr(&call)
        );
    }
    // A tracker of the repository's own is no warning, nor is the user's change.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    tickets: {command: \"tk {{ verb }} {{ id }}\", verbs: {done: close}, id: \"TK-[0-9]+\"}\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(!err.contains("builtin tracker"), "{err}");
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write_home(
        ".ahp/hooks.yaml",
        "settings:\n  issue_commands:\n    monoco: {enabled: false}\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(!err.contains("builtin tracker"), "{err}");
}

/// An oracle whose own config chooses an answer the event does not allow
/// (FileChangeLimiter's default `action: control` at pre-issue-close) is
/// warned about at its `config`, as an `intensity:` the event does not
/// allow is: at run time it is clamped to an aid.
#[test]
fn an_oracles_configured_answer_the_event_clamps_is_said() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-issue-close:\n    - oracle: FileChangeLimiter\n      config: {max_files: 1}\n    - oracle: FileChangeLimiter\n      id: strict\n      config: {max_files: 1, action: block}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml:4:15: hooks.pre-issue-close[FileChangeLimiter].config: FileChangeLimiter answers with `control` here (its config or its default), but pre-issue-close does not allow intensity `control`"),
        "{err}"
    );
    assert!(!err.contains("[strict]"), "{err}");
    // Scanning a tool's output afterwards is a note by nature: no warning.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - oracle: SecurityScanner\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(!err.contains("answers with"), "{err}");
}

/// The settings that protect the user were still the repository's to
/// undo: a shorter stop-gate cap, a weaker fsync, another trunk, a
/// timeout below the user's, and `project_hooks: true` against the
/// user's "never run a repository's script hooks". A repository may only
/// tighten them.
#[test]
fn a_repository_cannot_loosen_the_users_settings() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write_home(
        ".ahp/hooks.yaml",
        "settings:\n  stop_block_cap: 4\n  log_fsync: batch\n  project_hooks: false\n  trunk: main\n  timeout: 20000\n",
    );
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  stop_block_cap: 1\n  log_fsync: never\n  project_hooks: true\n  trunk: dev\n  timeout: 15000\n",
    );
    sb.hook(
        true,
        "deny-all",
        "trigger: pre-tool-call\n",
        "echo 'from the repository' >&2; exit 2",
    );
    sb.trust();
    let out = sb.ahp().arg("validate").output().unwrap();
    for key in [
        "stop_block_cap",
        "log_fsync",
        "project_hooks",
        "trunk",
        "timeout",
    ] {
        assert!(
            stderr(&out).contains(&format!("settings.{key} (project layer) is ignored")),
            "{key}: {}",
            stderr(&out)
        );
    }
    let config = stdout(&sb.ahp().arg("config").output().unwrap());
    for line in [
        "stop_block_cap: 4",
        "log_fsync: \"batch\"",
        "project_hooks: false",
        "trunk: \"main\"",
        "timeout: 20000",
    ] {
        assert!(config.contains(line), "{line}: {config}");
    }
    // Trusted or not, the repository's script hook does not run.
    let payload = serde_json::json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl",
        "cwd": sb.root(), "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}});
    let out = sb
        .ahp()
        .args(["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("from the repository"),
        "{}",
        stdout(&out)
    );
    // Tightening them is the repository's to do, without a word.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  stop_block_cap: 9\n  log_fsync: always\n  project_hooks: false\n  trunk: main\n  timeout: 60000\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("is ignored"), "{}", stderr(&out));
    let config = stdout(&sb.ahp().arg("config").output().unwrap());
    assert!(config.contains("stop_block_cap: 9"), "{config}");
    // A broken value fell back to ahp's default, not to the user's, and a
    // broken other setting took every setting with it.
    sb.write_home(
        ".ahp/hooks.yaml",
        "settings:\n  environment: production\n  prompt_fallback: deny\nhooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: prod-no-curl\n      when: {environment: production}\n      config: {rules: [{condition: \"tool.input.command ~ 'curl'\", intensity: block, message: no curl in production}]}\n",
    );
    let curl = || {
        let payload = serde_json::json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": sb.root(), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "curl example.com"}});
        sb.ahp()
            .env_remove("AHP_ENVIRONMENT")
            .args(["hook", "claude-code"])
            .write_stdin(payload.to_string())
            .output()
            .unwrap()
    };
    for theirs in [
        "environment: 1",
        "environment: [dev]",
        "mode: bogus",
        "timeout: \"1\"",
        "prompt_fallback: Context",
    ] {
        sb.write(".ahp/hooks.yaml", &format!("settings:\n  {theirs}\n"));
        let out = curl();
        assert!(
            stdout(&out).contains("no curl in production"),
            "{theirs}: {} {}",
            stdout(&out),
            stderr(&out)
        );
    }
}

/// A repository's policy applies without `ahp trust`: it switched off,
/// shadowed or softened an entry of the user's own `~/.ahp/hooks.yaml`,
/// and undid the user's `prompt_fallback: deny`, with nothing said. It may
/// add to the user's rules, not weaken them; the user's own local file
/// (git-ignored) still may.
#[test]
fn a_repository_cannot_weaken_the_users_own_policy() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write_home(
        ".ahp/hooks.yaml",
        "settings:\n  prompt_fallback: deny\nhooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: no-prod-db\n      config: {rules: [{condition: \"tool.input.command ~ 'psql.*prod'\", intensity: block, message: no prod db}]}\n",
    );
    let psql = |agent: &str| {
        let payload = serde_json::json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": sb.root(), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "psql prod"}, "model": "m", "turn_id": "t"});
        sb.ahp()
            .env_remove("CLAUDE_PROJECT_DIR")
            .args(["hook", agent])
            .write_stdin(payload.to_string())
            .output()
            .unwrap()
    };
    for (tweak, key) in [
        ("mode: shadow", "mode"),
        ("enabled: false", "enabled"),
        ("intensity: aid", "intensity"),
        ("async: true", "async"),
        ("when: {tool: [Read]}", "when"),
        ("config: {rules: []}", "config"),
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("hooks:\n  pre-tool-use:\n    - id: no-prod-db\n      {tweak}\n"),
        );
        let out = psql("claude-code");
        assert_eq!(decision(&out), "deny", "{tweak}: {}", stdout(&out));
        let out = sb.ahp().arg("validate").output().unwrap();
        assert!(
            stderr(&out).contains(&format!(
                "hooks.pre-tool-use[no-prod-db].{key} (project layer) is ignored: it would change or weaken what your own policy says"
            )),
            "{tweak}: {}",
            stderr(&out)
        );
    }
    // Raising it is adding to it.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - id: no-prod-db\n      intensity: block\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("is ignored"), "{}", stderr(&out));
    // Codex cannot ask: the user's `prompt_fallback: deny` refuses a
    // prompt, and the repository's `context` does not undo it.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  prompt_fallback: context\nhooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: ask-push\n      config: {rules: [{condition: \"tool.input.command ~ 'psql'\", intensity: prompt, message: sure?}]}\n    - id: no-prod-db\n      enabled: false\n",
    );
    let out = psql("codex");
    assert_eq!(decision(&out), "deny", "{}", stdout(&out));
    assert!(
        stderr(&out).contains("settings.prompt_fallback (project layer) is ignored"),
        "{}",
        stderr(&out)
    );
    // The user's HOOK.md hooks likewise, a project hook of the same name
    // (which runs only once trusted) or not.
    sb.hook(
        false,
        "guard",
        "trigger: pre-tool-call\n",
        "echo 'no psql' >&2; exit 2",
    );
    for tweak in ["enabled: false", "mode: shadow", "timeout: 1"] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("hooks:\n  pre-tool-use:\n    - hook: guard\n      {tweak}\n"),
        );
        for with_project_hook in [false, true] {
            if with_project_hook {
                sb.hook(true, "guard", "trigger: pre-tool-call\n", "exit 0");
            }
            let out = sb
                .ahp()
                .args(["run", "pre-tool-use", "--format", "json"])
                .write_stdin(r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{tweak}: {}", stdout(&out));
            assert!(
                stderr(&out).contains("hooks.pre-tool-use[guard]."),
                "{}",
                stderr(&out)
            );
        }
        std::fs::remove_dir_all(sb.root().join(".agents")).unwrap();
    }
    // A reference merges by the hook it names, whatever `id` it gives.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: guard\n      id: other\n      enabled: false\n",
    );
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--format", "json"])
        .write_stdin(r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    std::fs::remove_dir_all(sb.home.path().join(".config/agents/hooks/guard")).unwrap();
    // ahp's own default is the repository's to change, out loud.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  rewrite_fallback: context\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stderr(&out).contains(
            ".ahp/hooks.yaml:2:21: settings.rewrite_fallback: context: this repository's policy"
        ),
        "{}",
        stderr(&out)
    );
    // The user's own local file is theirs to change.
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write(".gitignore", ".ahp/hooks.local.yaml\n");
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: no-prod-db\n      enabled: false\n",
    );
    let out = psql("claude-code");
    assert!(
        out.status.success() && !stdout(&out).contains("deny"),
        "{}",
        stdout(&out)
    );
}

/// A repository's `min_completion_rate` below 1 on the builtin close gate
/// lets an issue close with open items: said whatever the rate (only
/// rates of 0.5 or less were, a probe's half-done checklist).
#[test]
fn a_repositorys_completion_rate_on_the_close_gate_is_warned_about() {
    let sb = Sandbox::new();
    sb.git_init();
    for rate in ["0.9", "0.5", "0"] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("hooks:\n  pre-issue-close:\n    - id: checklist-done-at-close\n      config: {{min_completion_rate: {rate}}}\n"),
        );
        let out = sb.ahp().arg("validate").output().unwrap();
        assert!(
            stderr(&out).contains("closing an issue with an open checklist item"),
            "{rate}: {}",
            stderr(&out)
        );
    }
}

/// A project folder that is not there (a typo in `--project` or the
/// agent's project variable) dropped the project's policy without a word,
/// and made a log folder there. Commands refuse it; a hook call says so
/// and finds the project from the call's folder.
#[test]
fn a_project_folder_that_is_not_there_is_said() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: no-echo\n      config: {rules: [{condition: \"tool.input.command ~ '^echo'\", intensity: block, message: no echo}]}\n",
    );
    let typo = sb.root().with_file_name("not-the-project");
    let out = sb
        .ahp()
        .args(["validate", "--project"])
        .arg(&typo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    let payload = serde_json::json!({"session_id": "s", "cwd": sb.root(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "echo hi"}});
    let out = sb
        .ahp()
        .env("CLAUDE_PROJECT_DIR", &typo)
        .args(["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(decision(&out), "deny", "{}", stdout(&out));
    assert!(
        stderr(&out).contains("(CLAUDE_PROJECT_DIR) does not exist"),
        "{}",
        stderr(&out)
    );
    assert!(!typo.exists());
}
