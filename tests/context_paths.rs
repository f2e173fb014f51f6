//! What a `when` key or a Rules condition refers to, end to end: a path no
//! event provides is reported (with "did you mean"), a comparison that can
//! never hold too, and `when: {tool: …}` matches the tool's name.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

fn validate(sb: &Sandbox) -> (i32, String, String) {
    let out = sb.ahp().arg("validate").output().unwrap();
    (out.status.code().unwrap_or(-1), stdout(&out), stderr(&out))
}

fn policy(body: &str) -> String {
    format!("hooks:\n{body}")
}

#[test]
fn a_typo_in_a_when_key_fails_validate_with_the_line_and_a_suggestion() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(
            "  pre-tool-use:\n    - oracle: PermissionChecker\n      when: { tool.nme: shell }\n",
        ),
    );
    let (code, out, err) = validate(&sb);
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    assert!(err.contains(".ahp/hooks.yaml:4:15"), "{err}");
    assert!(err.contains("tool.nme"), "{err}");
    assert!(err.contains("did you mean `tool.name`?"), "{err}");
    assert!(!out.contains("ok:"), "{out}");
}

#[test]
fn a_typo_in_a_rules_condition_fails_validate_with_the_line_and_a_suggestion() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-issue-submit:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules:\n",
            "          - condition: \"issue.type == feature && checklist.incomplet_count > 0\"\n",
            "            message: open items\n",
        )),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(".ahp/hooks.yaml:6:13"), "{err}");
    assert!(err.contains("column 26"), "{err}");
    assert!(
        err.contains("did you mean `checklist.incomplete_count`?"),
        "{err}"
    );
}

#[test]
fn a_typo_in_a_message_placeholder_or_a_control_target_fails_validate() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules:\n",
            "          - condition: \"tool.input.command ~ 'rm'\"\n",
            "            message: \"{{ tool.raw_nam }} wants to delete\"\n",
        )),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("did you mean `tool.raw_name`?"), "{err}");

    // The user layer: a project's control runs (and is compiled) only once
    // trusted.
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write_home(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules:\n",
            "          - condition: \"tool.input.command ~ '^rm -rf'\"\n",
            "            intensity: control\n",
            "            message: made rm interactive\n",
            "            modifications:\n",
            "              - { target: tool.inptu.command, op: set, value: \"rm -ri\" }\n",
        )),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("did you mean `tool.input.command`?"), "{err}");
}

#[test]
fn a_comparison_that_can_never_hold_fails_validate_at_the_value() {
    let sb = Sandbox::new();
    for (when, line_col, hint) in [
        ("{ tool.input: shell }", ":4:27", "an object"),
        ("{ files.changed_count: many }", ":4:36", "write a number"),
        ("{ files.changed: \"> 3\" }", ":4:30", "_count"),
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &policy(&format!(
                "  pre-tool-use:\n    - oracle: PermissionChecker\n      when: {when}\n"
            )),
        );
        let (code, _, err) = validate(&sb);
        assert_eq!(code, 1, "{when}: {err}");
        assert!(err.contains("never holds"), "{when}: {err}");
        assert!(err.contains(line_col), "{when}: {err}");
        assert!(err.contains(hint), "{when}: {err}");
    }
}

#[test]
fn a_field_only_the_caller_sends_is_a_warning_and_still_matches() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      when: { team: core }\n",
            "      config:\n",
            "        rules: [{condition: \"true\", message: core team policy}]\n",
        )),
    );
    let (code, out, err) = validate(&sb);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok:"), "{out}");
    assert!(
        err.contains("warning:") && err.contains(".ahp/hooks.yaml:4:15") && err.contains("`team`"),
        "{err}"
    );
    let run = sb
        .ahp()
        .args(["run", "pre-tool-use", "--no-log"])
        .write_stdin(r#"{"team": "core", "tool": {"name": "shell", "input": {"command": "ls"}}}"#)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
}

#[test]
fn a_tool_path_on_an_event_without_a_tool_call_is_a_warning() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(
            "  pre-issue-submit:\n    - oracle: ChecklistValidator\n      when: { tool.name: shell }\n",
        ),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning:") && err.contains("pre-issue-submit carries no tool call"),
        "{err}"
    );
}

#[test]
fn ahp_config_and_doctor_show_the_findings_too() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(
            "  pre-tool-use:\n    - oracle: PermissionChecker\n      when: { tool.nme: shell }\n",
        ),
    );
    let out = sb.ahp().arg("config").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("hooks.yaml:4:15") && err.contains("did you mean `tool.name`?"),
        "{err}"
    );
    let out = sb.ahp().arg("doctor").output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("did you mean `tool.name`?"), "{all}");
}

fn claude_pre_tool_use(sb: &Sandbox, command: &str) -> Value {
    let payload = serde_json::json!({
        "session_id": "3f2a9c1e",
        "transcript_path": "/home/dev/.claude/projects/x.jsonl",
        "cwd": sb.root().to_string_lossy(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "list"},
        "tool_use_id": "toolu_01",
    });
    let out = sb
        .ahp()
        .env_remove("CLAUDE_PROJECT_DIR")
        .args(["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
    }
}

fn guarded_block(when: &str) -> String {
    policy(&format!(
        concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      when: {}\n",
            "      config:\n",
            "        rules: [{{condition: \"true\", message: \"database tools need review\"}}]\n",
        ),
        when
    ))
}

/// A pre-tool-use policy of one Rules entry whose one rule has `condition`.
fn rule(condition: &str) -> String {
    policy(&format!(
        concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules: [{{condition: \"{}\", message: \"no shell\"}}]\n",
        ),
        condition
    ))
}

/// `ahp validate` of a guarded block under `when` fails at `at` (after
/// the file name) saying `says`, with `tool.raw_name` among the fixes.
fn guard_fails_validate(sb: &Sandbox, when: &str, at: &str, says: &str) {
    sb.write(".ahp/hooks.yaml", &guarded_block(when));
    let (code, out, err) = validate(sb);
    assert_eq!(code, 1, "{when}: {out}{err}");
    assert!(
        err.contains(&format!(".ahp/hooks.yaml{at}")),
        "{when}: {err}"
    );
    assert!(err.contains(says), "{when}: {err}");
    assert!(err.contains("`tool.raw_name: "), "{when}: {err}");
}

/// For each `when`, whether a guarded block under it denies `ls`.
fn guards_deny_ls(sb: &Sandbox, cases: &[(&str, bool)]) {
    for &(when, fires) in cases {
        let v = answer_to_ls(sb, &guarded_block(when), when);
        let decision = &v["hookSpecificOutput"]["permissionDecision"];
        assert_eq!(decision == "deny", fires, "{when}: {v}");
    }
}

/// Claude Code's answer to `ls` under `policy`, which must validate.
fn answer_to_ls(sb: &Sandbox, policy: &str, what: &str) -> Value {
    sb.write(".ahp/hooks.yaml", policy);
    let (code, _, err) = validate(sb);
    assert_eq!(code, 0, "{what}: {err}");
    claude_pre_tool_use(sb, "ls")
}

#[test]
fn when_tool_matches_the_raw_or_normalized_name_through_claude_code() {
    let sb = Sandbox::new();
    for (when, fires) in [
        ("{ tool: [Bash, Database] }", true),
        ("{ tool: shell }", true),
        ("{ tool: bash }", true),
        ("{ tool: \"~^Ba\" }", true),
        ("{ tool: [Write, Database] }", false),
        ("{ tool: \"!= Bash\" }", false),
    ] {
        let v = answer_to_ls(&sb, &guarded_block(when), when);
        let decision = &v["hookSpecificOutput"]["permissionDecision"];
        if fires {
            assert_eq!(decision, "deny", "{when}: {v}");
            let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap_or_default();
            assert!(reason.contains("database tools need review"), "{v}");
        } else {
            assert_ne!(decision, "deny", "{when}: {v}");
        }
    }
}

/// `tool.name` is ahp's shared name (`shell`): an agent's own name there
/// (`Bash`) never held, silently, and `!= Bash` held for every tool. Each
/// is an error at the value, with the ways to say it; those fire.
#[test]
fn an_agents_tool_name_under_tool_name_is_an_error_with_the_fix() {
    let sb = Sandbox::new();
    for (when, at, says) in [
        (
            "{ tool.name: Bash }",
            ":4:26",
            "an agent's `Bash` is `shell` there: this never holds",
        ),
        (
            "{ tool.name: [shell, Write] }",
            ":4:34",
            "an agent's `Write` is `write` there: this never holds",
        ),
        (
            "{ tool.name: Shell }",
            ":4:26",
            "an agent's `Shell` is `shell` there",
        ),
        (
            "{ tool.name: mcp__github__create_issue }",
            ":4:26",
            "is `mcp` there",
        ),
        (
            "{ tool.name: \"!= Bash\" }",
            ":4:26",
            "this holds for every tool",
        ),
        ("{ tool.name: \"== Bash\" }", ":4:26", "this never holds"),
        ("{ tool.name: \"Bash \" }", ":4:26", "this never holds"),
    ] {
        guard_fails_validate(&sb, when, at, says);
    }
    guards_deny_ls(
        &sb,
        &[
            ("{ tool.name: shell }", true),
            ("{ tool.raw_name: Bash }", true),
            ("{ tool.name: [shell, TodoWrite] }", true),
            ("{ tool.name: \"!= shell\" }", false),
        ],
    );
    // A Rules condition says the same.
    sb.write(".ahp/hooks.yaml", &rule("tool.name == 'Bash' && true"));
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("column 1"), "{err}");
    assert!(
        err.contains("an agent's `Bash` is `shell` there: this never holds"),
        "{err}"
    );
    assert!(err.contains("`tool: Bash`"), "{err}");
    sb.write(
        ".ahp/hooks.yaml",
        &rule("tool.input.command ~ 'x' && tool.name != 'Bash'"),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("column 29"), "{err}");
    assert!(err.contains("this holds for every tool"), "{err}");
    for (condition, fires) in [("tool.name == 'shell'", true), ("tool == 'Bash'", true)] {
        let v = answer_to_ls(&sb, &rule(condition), condition);
        let decision = &v["hookSpecificOutput"]["permissionDecision"];
        assert_eq!(decision == "deny", fires, "{condition}: {v}");
    }
}

/// A `~regex` under `tool.name` that only matches agents' own names
/// (Claude Code's matcher syntax, `Edit|Write` or `mcp__github__.*`, is
/// the habit) never held, silently: an error at the value too. One that
/// can match a name `tool.name` holds is left alone.
#[test]
fn a_tool_name_regex_of_agents_names_only_is_an_error_with_the_fix() {
    let sb = Sandbox::new();
    for (when, says) in [
        (
            "{ tool.name: \"~^Bash$\" }",
            "an agent's `Bash` is `shell` there: `~^Bash$` matches no name `tool.name` holds, so this never holds",
        ),
        (
            "{ tool.name: [shell, \"~^Write$\"] }",
            "an agent's `Write` is `write` there",
        ),
        (
            "{ tool.name: \"~^(Edit|Write)$\" }",
            "`Edit` is `edit`, `Write` is `write` there",
        ),
        (
            "{ tool.name: \"~^mcp__github\" }",
            "an agent's `mcp__github…` is `mcp` there",
        ),
        (
            "{ tool.name: [shell, \"!~^(Edit|Write)$\"] }",
            "so this holds for every tool",
        ),
    ] {
        guard_fails_validate(&sb, when, ":4:", says);
    }
    // Patterns that can match a shared name, or a name no agent renames
    // (`TodoWrite` stays `TodoWrite`), or that are not a set of literals.
    guards_deny_ls(
        &sb,
        &[
            ("{ tool.name: \"~^(shell|Bash)$\" }", true),
            ("{ tool.name: \"~^sh\" }", true),
            ("{ tool.name: \"~^Todo\" }", false),
            ("{ tool.name: \"~Bash\" }", false),
            ("{ tool.name: \"~^Bash\\\\b\" }", false),
            ("{ tool: \"~^(Edit|Write|Bash)$\" }", true),
            ("{ tool.raw_name: \"~^Bash$\" }", true),
        ],
    );
    // A Rules condition says the same, at its column.
    sb.write(".ahp/hooks.yaml", &rule("tool.name ~ '^mcp__github'"));
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("column 1"), "{err}");
    assert!(err.contains("is `mcp` there"), "{err}");
}

#[test]
fn when_tool_matches_the_name_through_ahp_run_and_rules_say_the_same() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &guarded_block("{ tool: [bash, Database] }"),
    );
    let run = |ctx: &str| {
        sb.ahp()
            .args(["run", "pre-tool-use", "--no-log"])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap()
    };
    let out = run(r#"{"tool": {"name": "Bash", "input": {"command": "ls"}}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(json_out(&out)["outcome"], "block");
    let out = run(r#"{"tool": {"name": "Read", "input": {"file_path": "a"}}}"#);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // No tool call at all: the clause does not hold.
    let out = run(r#"{"session_id": "s"}"#);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules: [{condition: \"tool == BASH\", message: \"no shell\"}]\n",
        )),
    );
    let out = run(r#"{"tool": {"name": "shell", "raw_name": "Bash", "input": {}}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_shipped_policies_have_no_findings() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let starter = std::fs::read_to_string(repo.join("config/src/starter-hooks.yaml")).unwrap();
    // The starter's commented Rules example, switched on.
    let block: String = starter
        .lines()
        .skip_while(|l| *l != "    # - oracle: Rules")
        .take_while(|l| l.starts_with("    #"))
        .map(|l| format!("{}\n", l.replacen("    # ", "    ", 1)))
        .collect();
    assert!(block.contains("message:"), "{block}");
    let example = starter
        .replacen("    # - oracle: Rules", &block, 1)
        .replace(
            "when: { environment: production, tool: shell }",
            "when: { environment: production, tool: [Bash, Database] }",
        );
    for text in [
        std::fs::read_to_string(repo.join("config/src/default-hooks.yaml")).unwrap(),
        starter,
        std::fs::read_to_string(repo.join("examples/monoco/.ahp/hooks.yaml")).unwrap(),
        example,
    ] {
        let sb = Sandbox::new();
        sb.write(".ahp/hooks.yaml", &text);
        let (code, out, err) = validate(&sb);
        assert_eq!(code, 0, "{err}\n{text}");
        assert!(out.starts_with("ok:"), "{out}");
        assert!(!err.contains("warning"), "{err}\n{text}");
    }
}

#[test]
fn hostile_and_odd_paths_get_an_answer_never_a_panic() {
    let sb = Sandbox::new();
    let long = format!("tool.{}", "x".repeat(100_000));
    for (key, code) in [
        // Cyrillic o's: too far from `tool` for a typo, so only a warning.
        ("\"t\u{043e}\u{043e}l.name\"", 0),
        ("checklist.items.99999999999999999999999.state", 1),
        ("tool.name.0", 1),
        ("tool.input.0.x", 0),
        ("raw.a.b.c.d.e.f", 0),
        (long.as_str(), 1),
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &policy(&format!(
                "  pre-tool-use:\n    - oracle: PermissionChecker\n      when: {{ {key}: x }}\n"
            )),
        );
        let (got, _, err) = validate(&sb);
        assert_eq!(
            got,
            code,
            "{}: {}",
            &key[..key.len().min(60)],
            &err[..err.len().min(2000)]
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            code == 1
                || key.starts_with("raw")
                || key.starts_with("tool.input")
                || err.contains("warning:"),
            "{err}"
        );
    }
}

#[test]
fn a_hook_reference_when_is_checked_and_tool_matches_there_too() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "no-db",
        "trigger: pre-tool-use\n",
        "echo 'database tools need review' >&2; exit 2",
    );
    sb.write_home(
        ".ahp/hooks.yaml",
        &policy("  pre-tool-use:\n    - hook: no-db\n      when: { tool.raw_nme: Bash }\n"),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("hooks.yaml:4:15") && err.contains("did you mean `tool.raw_name`?"),
        "{err}"
    );

    sb.write_home(
        ".ahp/hooks.yaml",
        &policy("  pre-tool-use:\n    - hook: no-db\n      when: { tool: [Bash, Database] }\n"),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 0, "{err}");
    let v = claude_pre_tool_use(&sb, "ls");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
}

#[test]
fn ahp_run_reads_an_agents_tool_name_as_the_hooks_do() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", &guarded_block("{ tool: shell }"));
    let run = |ctx: &str| {
        sb.ahp()
            .args(["run", "pre-tool-use", "--no-log"])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap()
    };
    // The README's context names the tool as Claude Code does.
    let out = run(r#"{"tool": {"name": "Bash", "input": {"command": "ls"}}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(r#"{"tool": {"name": "run_shell_command", "input": {"command": "ls"}}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(r#"{"tool": {"name": "Read", "input": {"file_path": "a"}}}"#);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Rules see the normalized name too, as under `ahp hook`.
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      config:\n",
            "        rules: [{condition: \"tool.name == 'shell'\", message: \"no shell\"}]\n",
        )),
    );
    let out = run(r#"{"tool": {"name": "Bash", "input": {"command": "ls"}}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn files_on_a_tool_event_is_a_warning_that_says_when_ahp_computes_them() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: PermissionChecker\n",
            "      when: { files.changed_count: \"> 3\" }\n",
        )),
    );
    let (code, out, err) = validate(&sb);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("files.changed_count") && all.contains("only for issue events"),
        "{all}"
    );
}

#[test]
fn an_after_naming_a_broken_entry_says_so_instead_of_suggesting_itself() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - id: r2\n",
            "      oracle: Rules\n",
            "      intensity: bogus\n",
            "      config: { rules: [{condition: \"tool.name == 'x'\", message: m}] }\n",
            "    - id: r3\n",
            "      oracle: Rules\n",
            "      after: [r2]\n",
            "      config: { rules: [{condition: \"tool.name == 'x'\", message: m}] }\n",
        )),
    );
    let (code, out, err) = validate(&sb);
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains("`r2` is left out because of its own error"),
        "{err}"
    );
    assert!(!err.contains("did you mean `r3`"), "{err}");
}

/// The documented `*` segment (every item of a list) loads in `when:` and
/// in Rules conditions alike, and matches whatever the spelling of the
/// command; a `*` inside a segment is an error at the key.
#[test]
fn a_star_segment_takes_every_command_of_the_line() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        &policy(concat!(
            "  pre-tool-use:\n",
            "    - oracle: Rules\n",
            "      when: {tool.shell.commands.*.name: terraform}\n",
            "      config:\n",
            "        rules: [{condition: \"tool.shell.commands.*.args ~ '^apply$'\", message: \"no terraform apply\"}]\n",
        )),
    );
    let (code, out, err) = validate(&sb);
    assert_eq!(code, 0, "{out}{err}");
    for (command, denied) in [
        ("terraform apply", true),
        ("cd infra && sudo \"terraform\" apply -auto-approve", true),
        ("terraform plan", false),
        ("echo terraform apply", false),
    ] {
        let v = claude_pre_tool_use(&sb, command);
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"] == "deny",
            denied,
            "{command}: {v}"
        );
    }
    sb.write(
        ".ahp/hooks.yaml",
        &guarded_block("{tool.shell.commands*.name: terraform}"),
    );
    let (code, _, err) = validate(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(".ahp/hooks.yaml:4:14")
            && err.contains("is a segment of its own")
            && err.matches("error:").count() == 1,
        "{err}"
    );
}

/// `when:` values that can never hold are errors at the value: an empty
/// list, a name ordered by a number, an event's alias (the context holds
/// the canonical name) or another event than the entry's.
#[test]
fn when_values_that_never_hold_fail_validate() {
    let sb = Sandbox::new();
    for (when, says) in [
        ("{tool: []}", "is an empty list, which matches nothing"),
        ("{tool.name: \"> 3\"}", "is a name, never a number"),
        ("{event: PreToolUse}", "write `event: pre-tool-use`"),
        (
            "{event: [post-tool-use, stop]}",
            "this entry runs on pre-tool-use",
        ),
    ] {
        sb.write(".ahp/hooks.yaml", &guarded_block(when));
        let (code, out, err) = validate(&sb);
        assert_eq!(code, 1, "{when}: {out}{err}");
        assert!(err.contains(".ahp/hooks.yaml:4:"), "{when}: {err}");
        assert!(err.contains(says), "{when}: {err}");
    }
    for when in [
        "{event: pre-tool-use}",
        "{event: [pre-tool-use, PreToolUse]}",
        "{tool.name: \"> m\"}",
    ] {
        sb.write(".ahp/hooks.yaml", &guarded_block(when));
        let (code, out, err) = validate(&sb);
        assert_eq!(code, 0, "{when}: {out}{err}");
    }
}
