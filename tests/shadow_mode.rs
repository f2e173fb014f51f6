//! `mode: shadow`: an entry evaluated and recorded as what it would have
//! done, never part of a decision, and reported apart by the analytics.

use crate::common::{Sandbox, stderr, stdout};
use serde_json::json;

fn bash(sb: &Sandbox, session: &str, command: &str) -> String {
    let out = sb
        .claude_pre_tool(session, "Bash", json!({"command": command}))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

const SHADOW_RULE: &str = "hooks:
  pre-tool-use:
    - oracle: Rules
      id: no-npm
      mode: shadow
      config:
        rules:
          - condition: \"tool.input.command ~ '^npm '\"
            intensity: block
            message: npm is being phased out
";

/// [`SHADOW_RULE`] without its own `mode:`.
fn enforced_rule() -> String {
    SHADOW_RULE.replace("      mode: shadow\n", "")
}

/// [`SHADOW_RULE`] put in shadow by its file's `settings.mode`.
fn rule_under_settings_mode_shadow() -> String {
    format!("settings:\n  mode: shadow\n{}", enforced_rule())
}

#[test]
fn a_shadow_block_leaves_the_answer_an_allow_and_stats_count_it() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", SHADOW_RULE);
    // The agent is told nothing: no deny, no reason.
    for (session, cmd) in [("s1", "npm ci"), ("s2", "npm test"), ("s2", "git status")] {
        assert_eq!(bash(&sb, session, cmd).trim(), "", "{cmd}");
    }
    // The log holds what it would have said.
    let shadow: Vec<_> = sb
        .log_lines()
        .into_iter()
        .filter(|r| r["kind"] == "signal")
        .collect();
    assert_eq!(shadow.len(), 2, "{shadow:?}");
    assert!(
        shadow
            .iter()
            .all(|s| s["header"]["shadow"] == true && s["header"]["intensity"] == "block")
    );
    let runs: Vec<_> = sb
        .log_lines()
        .into_iter()
        .filter(|r| r["kind"] == "run")
        .collect();
    assert!(runs.iter().all(|r| r["outcome"] == "accept"), "{runs:?}");

    // stats: apart from the enforced rows, with the would-be share.
    let out = sb.ahp().args(["signals", "stats"]).output().unwrap();
    let text = stdout(&out);
    let (enforced, shadow) = text.split_once("Shadow entries").expect(&text);
    assert!(!enforced.contains("no-npm"), "{text}");
    let row = shadow
        .lines()
        .find(|l| l.starts_with("no-npm"))
        .expect(&text);
    assert!(row.contains("2 (66.7%)"), "{row}");
    assert!(row.trim_end().ends_with('2'), "sessions: {row}");
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json"])
        .output()
        .unwrap();
    let stats: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let row = stats["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source"] == "no-npm")
        .unwrap();
    assert_eq!(row["shadow"], true);
    assert_eq!(row["blocks"], 2);
    // tune: not judged on three runs.
    let out = sb.ahp().args(["signals", "tune"]).output().unwrap();
    assert!(
        stdout(&out).contains("no-npm (shadow) would have blocked 2 and asked 0 of 3 runs"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("keep it in shadow"),
        "{}",
        stdout(&out)
    );
    // Enforced, the same rule blocks.
    sb.write(".ahp/hooks.yaml", &enforced_rule());
    assert!(bash(&sb, "s3", "npm ci").contains("\"deny\""));
}

/// `settings.mode: shadow` rolls out a layer's own entries; the builtin
/// protection keeps blocking. Shadowing a builtin entry by id is said.
#[test]
fn settings_mode_shadows_your_entries_not_the_builtin_ones() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", &rule_under_settings_mode_shadow());
    assert_eq!(bash(&sb, "s", "npm ci").trim(), "");
    assert!(bash(&sb, "s", "rm -rf ~/").contains("\"deny\""));

    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: PermissionChecker\n      mode: shadow\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stderr(&out).contains("puts the builtin entry `PermissionChecker` in shadow"),
        "{}",
        stderr(&out)
    );
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    assert!(
        stdout(&out).contains("shadow: recorded only"),
        "{}",
        stdout(&out)
    );
    // The local file's doing, not the builtin file's: its line is named.
    assert!(
        stdout(&out).contains(&format!(
            "changed by local {}:3:7: mode\n",
            sb.root().join(".ahp/hooks.local.yaml").display()
        )),
        "{}",
        stdout(&out)
    );

    sb.write(".ahp/hooks.local.yaml", "settings:\n  mode: loud\n");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("settings.mode"), "{}", stderr(&out));
}

/// What a shadow entry would have said escalates nothing.
#[test]
fn shadow_signals_do_not_count_toward_escalation() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - {oracle: Rules, id: guard, mode: shadow, config: {rules: [{condition: \"tool.input.command ~ 'deploy'\", intensity: prompt, message: d}]}}
  pre-issue-submit:
    - {oracle: Rules, id: guard, config: {rules: [{condition: \"issue.id == 'ISS-1'\", intensity: prompt, message: s}]}}
escalation:
  - {source: guard, scope: issue, window: 24h, after_firings: 1, reset_on_clean_run: false}
",
    );
    let run = |event: &str, ctx: serde_json::Value| {
        sb.ahp()
            .args(["run", event])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap()
            .status
            .code()
    };
    let tool = json!({"issue": {"id": "ISS-1"}, "tool": {"name": "shell", "input": {"command": "deploy"}}});
    assert_eq!(run("pre-tool-use", tool.clone()), Some(0));
    assert_eq!(run("pre-tool-use", tool), Some(0));
    // Still a prompt (exit 3), not escalated to a block (exit 2).
    assert_eq!(
        run("pre-issue-submit", json!({"issue": {"id": "ISS-1"}})),
        Some(3)
    );
}

/// `settings.mode` reaches the entries of the file that sets it and no
/// other: a cloned repository's `settings: {mode: shadow}` does not turn
/// the user's own blocking rules and HOOK.md hooks into "would block".
#[test]
fn a_projects_settings_mode_does_not_shadow_the_users_entries_or_hooks() {
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", &enforced_rule());
    sb.hook(
        false,
        "no-terraform",
        "trigger: PreToolUse\nmatcher:\n  tool: Bash\n",
        "grep -q terraform && { echo 'no terraform from the agent' >&2; exit 2; }; exit 0",
    );
    sb.write(".ahp/hooks.yaml", "settings:\n  mode: shadow\n");
    assert!(bash(&sb, "s", "npm ci").contains("\"deny\""));
    let out = bash(&sb, "s", "terraform apply");
    assert!(out.contains("no terraform from the agent"), "{out}");

    // The user's own `settings.mode` still rolls out the user's entries.
    sb.write_home(".ahp/hooks.yaml", &rule_under_settings_mode_shadow());
    assert_eq!(bash(&sb, "s", "npm ci").trim(), "");
}
