//! Escalation, context-aware intensity and responses, end to end through
//! `ahp`.

use crate::common::{Sandbox, json_out, stderr, stdout};
use serde_json::Value;

const BIG: &str = r#"{"issue":{"id":"FEAT-1"},"files":{"changed":["a.rs","b.rs","c.rs"]}}"#;
const SMALL: &str = r#"{"issue":{"id":"FEAT-1"},"files":{"changed":["a.rs"]}}"#;

fn config(sb: &Sandbox, rule: &str) {
    sb.write(
        ".ahp/hooks.yaml",
        &format!(
            "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {{max_files: 2, action: prompt}}\nescalation:\n  - {rule}\n"
        ),
    );
}

fn run(sb: &Sandbox, ctx: &str, extra: &[&str]) -> (i32, Value) {
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use"])
        .args(extra)
        .write_stdin(ctx)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json_out(&out))
}

fn intensity(v: &Value) -> String {
    v["signals"][0]["header"]["intensity"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn repeated_prompt_becomes_a_block_and_a_clean_run_resets() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, scope: issue, after_firings: 1}",
    );
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    // A prompt has no modification to apply: the control rung is skipped,
    // so the 2nd firing blocks, with the prompt's suggestions as the fix.
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    assert_eq!(v["signals"][0]["header"]["escalated_from"], "prompt");
    assert_eq!(
        v["signals"][0]["header"]["escalation"],
        "FileChangeLimiter/issue"
    );
    let fix = v["signals"][0]["payload"]["resolution_path"].to_string();
    assert!(fix.contains("split"), "{v}");
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    assert_eq!(v["signals"][0]["header"]["escalated_from"], "prompt");
    assert_eq!(
        v["signals"][0]["header"]["escalation"],
        "FileChangeLimiter/issue"
    );

    // Another issue is counted on its own.
    let other = BIG.replace("FEAT-1", "FEAT-2");
    let (_, v) = run(&sb, &other, &[]);
    assert_eq!(intensity(&v), "prompt");

    // A clean run of the limiter for the issue resets the count.
    let (code, v) = run(&sb, SMALL, &[]);
    assert_eq!((code, v["outcome"].as_str()), (0, Some("accept")), "{v}");
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
}

/// Moves every record of the log `by` into the past.
fn age_log(sb: &Sandbox, by: chrono::Duration) {
    let shift = |v: &mut Value| {
        let t: chrono::DateTime<chrono::Utc> = v.as_str().unwrap().parse().unwrap();
        *v = Value::String((t - by).to_rfc3339());
    };
    let mut text = String::new();
    for mut l in sb.log_lines() {
        if let Some(t) = l.pointer_mut("/header/timestamp") {
            shift(t);
        }
        if let Some(t) = l.get_mut("timestamp") {
            shift(t);
        }
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(sb.log_path(), text).unwrap();
}

#[test]
fn a_firing_outside_the_window_does_not_count() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, scope: issue, after_firings: 1, window: 1h}",
    );
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    // That firing is now two hours old: out of the 1h window.
    age_log(&sb, chrono::Duration::hours(2));
    let signals = |since: &str| {
        let out = sb
            .ahp()
            .args(["signals", "query", "--kind", "signal", "--since", since])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stderr.ends_with(b" records\n"), "{out:?}");
        // The first line is the table's header.
        String::from_utf8_lossy(&out.stdout).lines().skip(1).count()
    };
    // The aged record is still read, just not in the last hour.
    assert_eq!((signals("3h"), signals("1h")), (1, 0));
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    assert!(v["signals"][0]["header"]["escalated_from"].is_null(), "{v}");
    // The firing just now is inside it.
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");

    // Half an hour old still counts.
    age_log(&sb, chrono::Duration::minutes(30));
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    assert_eq!(v["signals"][0]["header"]["escalated_from"], "prompt");
}

#[test]
fn session_scope_counts_across_issues_within_one_session() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, scope: session, after_firings: 1}",
    );
    let ctx = |session: Option<&str>, issue: &str| {
        let session = session.map_or(String::new(), |s| format!("\"session_id\":\"{s}\","));
        BIG.replace("{\"issue\"", &format!("{{{session}\"issue\""))
            .replace("FEAT-1", issue)
    };
    // Three issues, one session: prompt, block, block.
    let (code, v) = run(&sb, &ctx(Some("S-1"), "FEAT-1"), &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    let (code, v) = run(&sb, &ctx(Some("S-1"), "FEAT-2"), &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    assert_eq!(
        v["signals"][0]["header"]["escalation"],
        "FileChangeLimiter/session"
    );
    let (code, v) = run(&sb, &ctx(Some("S-1"), "FEAT-3"), &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    assert_eq!(v["signals"][0]["header"]["escalated_from"], "prompt");
    assert_eq!(
        v["signals"][0]["header"]["escalation"],
        "FileChangeLimiter/session"
    );

    // Another session, even on the same issue, starts over.
    let (code, v) = run(&sb, &ctx(Some("S-2"), "FEAT-1"), &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    // Without a session id a session rule does not apply.
    let (code, v) = run(&sb, &ctx(None, "FEAT-1"), &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    let (code, v) = run(&sb, &ctx(None, "FEAT-1"), &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
}

#[test]
fn dismissed_prompts_escalate_and_respond_dismiss_exits_0() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, after_dismissed: 1, window: 7d}",
    );
    let (code, v) = run(&sb, BIG, &["--respond", "dismiss"]);
    assert_eq!((code, intensity(&v)), (0, "prompt".into()), "{v}");
    let responses: Vec<Value> = sb
        .log_lines()
        .into_iter()
        .filter(|l| l["kind"] == "response")
        .collect();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0]["action"], "dismiss");
    assert_eq!(responses[0]["signal_id"], v["signals"][0]["header"]["id"]);
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
}

#[test]
fn respond_validates_the_action_and_the_signal_id() {
    let sb = Sandbox::new();
    config(&sb, "{source: FileChangeLimiter, after_firings: 5}");
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!(code, 3);
    let id = v["signals"][0]["header"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let out = sb.ahp().args(["respond", &id, "abort"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("acknowledge, apply_suggestion, dismiss"),
        "{err}"
    );

    let out = sb
        .ahp()
        .args([
            "respond",
            "00000000-0000-4000-8000-000000000000",
            "acknowledge",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no signal with id"));

    let out = sb
        .ahp()
        .args([
            "respond",
            &id,
            "acknowledge",
            "--details",
            r#"{"why":"planned"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = sb.log_lines().pop().unwrap();
    assert_eq!(last["kind"], "response");
    assert_eq!(last["action"], "acknowledge");
    assert_eq!(last["details"]["why"], "planned");
}

#[test]
fn intensity_by_environment_picks_block_in_production_and_prompt_in_development() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {max_files: 2, action: prompt}\n      intensity_by_environment: {production: block, development: prompt}\n",
    );
    let prod = BIG.replace("{\"issue\"", "{\"environment\":\"production\",\"issue\"");
    let (code, v) = run(&sb, &prod, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    let dev = BIG.replace("{\"issue\"", "{\"environment\":\"development\",\"issue\"");
    let (code, v) = run(&sb, &dev, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
}

#[test]
fn bad_escalation_rules_are_errors_with_positions() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "escalation:\n  - source: FileChangeLimiter\n    window: 3 weeks\n    after_firings: 0\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hooks.yaml:3:"), "{err}");
    assert!(err.contains("30m, 24h or 7d"), "{err}");
    assert!(err.contains("escalation[0].after_firings"), "{err}");
}

/// `ahp hook claude-code` with a Claude Code payload (the project is the
/// sandbox); returns the exit code and the JSON answer (null when none).
fn claude(sb: &Sandbox, env: &[(&str, &str)], payload: &Value) -> (i32, Value) {
    let mut payload = payload.clone();
    payload["cwd"] = serde_json::json!(sb.root().to_string_lossy());
    let mut cmd = sb.ahp();
    cmd.env_remove("CLAUDE_PROJECT_DIR")
        .args(["hook", "claude-code"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.write_stdin(payload.to_string()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let v = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    (out.status.code().unwrap(), v)
}

fn bash(command: &str) -> Value {
    serde_json::json!({"session_id": "S-7", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
}

fn decision(v: &Value) -> String {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

/// Issue 20, point 5: three gates in a row answered 3 → 0 → 2; a finding
/// never gets weaker as it escalates.
#[test]
fn three_gates_in_a_row_never_let_the_finding_through() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, scope: issue, after_firings: 1}",
    );
    let codes: Vec<i32> = (0..3)
        .map(|_| {
            sb.ahp()
                .args(["gate", "pre-tool-use"])
                .write_stdin(BIG)
                .output()
                .unwrap()
                .status
                .code()
                .unwrap()
        })
        .collect();
    assert_eq!(codes, [3, 2, 2]);
}

/// The force-push that was an `ask` is refused when it comes back, never
/// allowed with a note.
#[test]
fn an_escalated_force_push_is_denied_through_claude_code() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\nescalation:\n  - {source: PermissionChecker, scope: session, after_firings: 1}\n",
    );
    let push = bash("git push --force origin main");
    let answers: Vec<String> = (0..3)
        .map(|_| {
            let (code, v) = claude(&sb, &[], &push);
            assert_eq!(code, 0, "{v}");
            decision(&v)
        })
        .collect();
    assert_eq!(answers, ["ask", "deny", "deny"]);
    let (_, v) = claude(&sb, &[], &push);
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("PermissionChecker"), "{reason}");
}

/// A control that carries a modification is still a control on its first
/// firing (Claude Code gets the rewritten input) and a block after.
#[test]
fn a_control_with_a_modification_rewrites_then_escalates_to_a_block() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        r#"hooks:
  pre-tool-use:
    - oracle: Rules
      id: interactive-rm
      config:
        rules:
          - condition: "tool.input.command ~ '^rm -rf'"
            intensity: control
            message: "rm made interactive"
            modifications:
              - {target: tool.input.command, op: set, value: "rm -ri build"}
escalation:
  - {source: interactive-rm, scope: session, after_firings: 1}
"#,
    );
    sb.trust();
    let rm = bash("rm -rf build");
    let (code, v) = claude(&sb, &[], &rm);
    assert_eq!((code, decision(&v)), (0, "allow".into()), "{v}");
    assert_eq!(
        v["hookSpecificOutput"]["updatedInput"]["command"], "rm -ri build",
        "{v}"
    );
    let (code, v) = claude(&sb, &[], &rm);
    assert_eq!((code, decision(&v)), (0, "deny".into()), "{v}");
    assert!(v["hookSpecificOutput"].get("updatedInput").is_none(), "{v}");
}

/// `intensity: control` (or a control by environment) on a finding that has
/// nothing to modify keeps the finding's own intensity, with a warning.
#[test]
fn a_control_override_without_a_modification_keeps_the_prompt() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {max_files: 2, action: prompt}\n      intensity: control\n",
    );
    let out = sb.run("pre-tool-use", BIG);
    let v = json_out(&out);
    assert_eq!(
        (out.status.code(), intensity(&v)),
        (Some(3), "prompt".into()),
        "{v}"
    );
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("asks for intensity control") && err.contains("no modification"),
        "{err}"
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      intensity_by_environment: {production: control}\n",
    );
    let (code, v) = claude(
        &sb,
        &[("AHP_ENVIRONMENT", "production")],
        &bash("git push --force origin main"),
    );
    assert_eq!((code, decision(&v)), (0, "ask".into()), "{v}");
}

/// A control that changes only ahp's view (here the batches of a change)
/// does not answer a prompt raised beside it: `ahp run` still waits (exit
/// 3) and Claude Code still asks.
#[test]
fn a_control_beside_a_prompt_still_asks() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        r#"hooks:
  pre-tool-use:
    - oracle: PermissionChecker
    - oracle: Rules
      id: note-plan
      config:
        rules:
          - condition: "true"
            intensity: control
            message: "plan noted"
            modifications:
              - {target: plan.note, op: set, value: "pushed"}
"#,
    );
    sb.trust();
    let push = bash("git push --force origin main");
    let out = sb.run("pre-tool-use", serde_json::json!({"tool": {"name": "shell", "input": {"command": "git push --force origin main"}}}).to_string());
    let v = json_out(&out);
    assert_eq!(v["outcome"], "control", "{v}");
    assert_eq!(out.status.code(), Some(3), "{v}");
    let (code, v) = claude(&sb, &[], &push);
    assert_eq!((code, decision(&v)), (0, "ask".into()), "{v}");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("PermissionChecker") && reason.contains("plan noted"),
        "{reason}"
    );
}

/// Issue 20, point 6: the environment comes from the context, then
/// `AHP_ENVIRONMENT`, then `settings.environment`.
#[test]
fn ahp_environment_selects_the_intensity_by_environment() {
    let sb = Sandbox::new();
    let policy = |settings: &str| {
        format!(
            "{settings}hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {{max_files: 2, action: prompt}}\n      intensity_by_environment: {{production: block, development: prompt}}\n    - oracle: PermissionChecker\n      intensity_by_environment: {{production: block}}\n"
        )
    };
    sb.write(".ahp/hooks.yaml", &policy(""));
    let run_env = |env: Option<&str>, ctx: &str| {
        let mut cmd = sb.ahp();
        cmd.args(["run", "pre-tool-use"]);
        if let Some(e) = env {
            cmd.env("AHP_ENVIRONMENT", e);
        }
        let out = cmd.write_stdin(ctx.to_string()).output().unwrap();
        (
            out.status.code().unwrap(),
            json_out(&out),
            crate::common::stderr(&out),
        )
    };
    let (code, v, _) = run_env(Some("production"), BIG);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
    let (code, _, _) = run_env(None, BIG);
    assert_eq!(code, 3);
    // The context wins over the variable.
    let dev = BIG.replace("{\"issue\"", "{\"environment\":\"development\",\"issue\"");
    let (code, v, _) = run_env(Some("production"), &dev);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    // The variable wins over settings.environment.
    sb.write(
        ".ahp/hooks.yaml",
        &policy("settings:\n  environment: production\n"),
    );
    let (code, _, _) = run_env(None, BIG);
    assert_eq!(code, 2);
    let (code, v, _) = run_env(Some("development"), BIG);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    // A blank variable is no choice; a typo is used but said.
    let (code, _, _) = run_env(Some("  "), BIG);
    assert_eq!(code, 2);
    sb.write(".ahp/hooks.yaml", &policy(""));
    let (code, _, err) = run_env(Some("prodution"), BIG);
    assert_eq!(code, 3);
    assert!(err.contains("did you mean `production`"), "{err}");

    // Through Claude Code, whose payload names no environment.
    let push = bash("git push --force origin main");
    let (_, v) = claude(&sb, &[], &push);
    assert_eq!(decision(&v), "ask", "{v}");
    let (_, v) = claude(&sb, &[("AHP_ENVIRONMENT", "production")], &push);
    assert_eq!(decision(&v), "deny", "{v}");
}

/// An agent that cannot ask (Codex, Gemini CLI) under `prompt_fallback:
/// deny` refuses a prompt; a control rewriting the same call beside it must
/// not turn that refusal into an allow with the prompt as a note.
#[test]
fn a_rewrite_beside_a_prompt_does_not_bypass_prompt_fallback_deny() {
    let sb = Sandbox::new();
    let policy = |condition: &str| {
        format!(
            r#"settings:
  prompt_fallback: deny
hooks:
  pre-tool-use:
    - oracle: PermissionChecker
    - oracle: Rules
      id: verbose-push
      config:
        rules:
          - condition: "{condition}"
            intensity: control
            message: "push made verbose"
            modifications:
              - {{target: tool.input.command, op: set, value: "git push --force --verbose origin main"}}
"#
        )
    };
    let answer = |agent: &str, event: &str, tool: &str| {
        let payload = serde_json::json!({"session_id": "S-8", "cwd": sb.root().to_string_lossy(),
            "hook_event_name": event, "tool_name": tool,
            "tool_input": {"command": "git push --force origin main"}});
        let out = sb
            .ahp()
            .args(["hook", agent])
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let v: Value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
        (out.status.code().unwrap(), v)
    };
    let agents = [
        ("codex", "PreToolUse", "Bash"),
        ("gemini", "BeforeTool", "run_shell_command"),
    ];
    // The prompt alone is refused ...
    sb.write(".ahp/hooks.yaml", &policy("false"));
    sb.trust();
    for (agent, event, tool) in agents {
        let (code, v) = answer(agent, event, tool);
        let denied = v["hookSpecificOutput"]["permissionDecision"] == "deny"
            || v["decision"] == "deny"
            || code == 2;
        assert!(denied, "{agent}: {v}");
    }
    // ... and still refused when a control rewrites the same call.
    sb.write(
        ".ahp/hooks.yaml",
        &policy("tool.input.command ~ '^git push'"),
    );
    sb.trust();
    for (agent, event, tool) in agents {
        let (code, v) = answer(agent, event, tool);
        let text = v.to_string();
        assert!(
            v["hookSpecificOutput"]["permissionDecision"] != "allow"
                && v["decision"] != "allow"
                && v["hookSpecificOutput"].get("updatedInput").is_none()
                && v["hookSpecificOutput"].get("tool_input").is_none(),
            "{agent}: {v}"
        );
        let denied = v["hookSpecificOutput"]["permissionDecision"] == "deny"
            || v["decision"] == "deny"
            || code == 2;
        assert!(denied, "{agent}: {v}");
        assert!(
            text.contains("PermissionChecker") && text.contains("--verbose"),
            "{agent}: {v}"
        );
    }
}

/// An environment the policy names only in `when: {environment: …}` is one
/// it knows: `AHP_ENVIRONMENT=qa` selects it without a warning that says
/// otherwise; a typo of it is still warned about, with the suggestion.
#[test]
fn ahp_environment_named_only_in_when_is_known() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: qa-note\n      when: {environment: [qa, uat]}\n      config:\n        rules:\n          - condition: \"true\"\n            intensity: aid\n            message: \"on the qa stack\"\n",
    );
    let run_env = |env: &str| {
        let out = sb
            .ahp()
            .args(["run", "pre-tool-use"])
            .env("AHP_ENVIRONMENT", env)
            .write_stdin(r#"{"tool":{"name":"shell","input":{"command":"ls"}}}"#)
            .output()
            .unwrap();
        (json_out(&out), crate::common::stderr(&out))
    };
    for env in ["qa", "uat"] {
        let (v, err) = run_env(env);
        assert_eq!(v["outcome"], "aid", "{env}: {v}");
        assert!(!err.contains("names no environment"), "{env}: {err}");
    }
    let (v, err) = run_env("qaa");
    assert_eq!(v["outcome"], "accept", "{v}");
    assert!(err.contains("did you mean `qa`"), "{err}");
}

/// An `intensity_by_environment` key that is nearly the environment the
/// call runs in (`prod`, `Production`) never applies; the call says so,
/// and says nothing when the policy names the environment exactly.
#[test]
fn a_near_miss_environment_key_is_warned_about() {
    let sb = Sandbox::new();
    let run_env = |key: &str, env: &str| {
        sb.write(
            ".ahp/hooks.yaml",
            &format!(
                "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      id: big-change\n      config: {{max_files: 2, action: prompt}}\n      intensity_by_environment: {{{key}: block}}\n    - oracle: Rules\n      id: names-the-environment\n      config: {{rules: [{{condition: \"false\", message: never}}]}}\n      intensity_by_environment: {{{env}: aid}}\n"
            ),
        );
        let out = sb
            .ahp()
            .args(["run", "pre-tool-use"])
            .env("AHP_ENVIRONMENT", env)
            .write_stdin(BIG.to_string())
            .output()
            .unwrap();
        (out.status.code().unwrap(), crate::common::stderr(&out))
    };
    for key in ["prod", "Production", "prodution", "prd"] {
        let (code, err) = run_env(key, "production");
        assert_eq!(code, 3, "{key}: still a prompt");
        assert!(
            err.contains(&format!(
                "warning: entry `big-change` sets intensity_by_environment for `{key}`, but this call's environment is `production`"
            )),
            "{key}: {err}"
        );
    }
    // The policy's own name, exactly: applied, and no word.
    let (code, err) = run_env("prod", "prod");
    assert_eq!(code, 2);
    assert!(!err.contains("intensity_by_environment"), "{err}");
    // Another environment, even one that shares a part, is no near miss.
    for (other, env) in [
        ("staging", "production"),
        ("preproduction", "production"),
        ("production-eu", "production"),
        ("production", "production-eu"),
        ("production2", "production"),
        ("us-west", "us-east"),
        ("dev2", "dev1"),
    ] {
        let (code, err) = run_env(other, env);
        assert_eq!(code, 3);
        assert!(
            !err.contains("intensity_by_environment"),
            "{other} in {env}: {err}"
        );
    }
}

/// An answered prompt goes ahead even when the answer cannot be recorded
/// (a repository's `.ahp/signals.jsonl` linked elsewhere): the run warned
/// that its log would not open, and the answer says so too. A mistyped
/// action is quoted as given, so a credential in it is masked.
#[test]
fn an_answer_that_cannot_be_recorded_still_answers() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, after_dismissed: 5, window: 7d}",
    );
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("log.jsonl"),
        sb.root().join(".ahp/signals.jsonl"),
    )
    .unwrap();
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--respond", "dismiss"])
        .write_stdin(BIG.to_string())
        .output()
        .unwrap();
    let err = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: the answer was not recorded"),
        "{err}"
    );
    assert!(!elsewhere.path().join("log.jsonl").exists());

    let out = sb
        .ahp()
        .args([
            "run",
            "pre-tool-use",
            "--respond",
            "curl -u admin:hunter2secret",
        ])
        .write_stdin(BIG.to_string())
        .output()
        .unwrap();
    let err = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("unknown action `curl -u admin:"), "{err}");
    assert!(!err.contains("hunter2secret"), "{err}");
}

/// An environment name that cannot be told from another by eye (a blank
/// at an end, a zero-width mark) would never apply, and no near-miss
/// warning would say so: it is an error at its line.
#[test]
fn an_environment_name_with_an_invisible_character_is_an_error() {
    let sb = Sandbox::new();
    for key in [
        "\"production \"",
        "\"production\\u200b\"",
        "\"prod\\nuction\"",
    ] {
        sb.write(
            ".ahp/hooks.yaml",
            &format!("hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      intensity_by_environment: {{{key}: prompt}}\n"),
        );
        let out = sb.ahp().arg("validate").output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{key}: {err}");
        assert!(
            err.contains(".ahp/hooks.yaml:4:34: ")
                && err.contains("intensity_by_environment: an environment name holds a control or invisible character"),
            "{key}: {err}"
        );
    }
}

/// An escalation rule with the default scope `issue` whose source fires
/// only at tool events never counts a firing: an agent's tool calls carry
/// no issue. validate says so at the rule's line, and so does the hook
/// call; `scope: session`, or a source at an issue event, is quiet.
#[test]
fn issue_scope_on_a_tool_event_source_is_a_warning() {
    let sb = Sandbox::new();
    config(&sb, "{source: FileChangeLimiter, after_firings: 1}");
    let file = sb.root().join(".ahp/hooks.yaml");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:6:", file.display()))
            && err.contains(
                "escalation rule for `FileChangeLimiter`: its source fires only at pre-tool-use"
            )
            && err.contains("default `scope: issue`")
            && err.contains("use `scope: session`"),
        "{err}"
    );

    // An agent's call: no issue, no escalation, and the warning says why.
    let out = sb
        .claude_pre_tool("s-1", "Bash", serde_json::json!({"command": "ls"}))
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("use `scope: session`"),
        "{}",
        stderr(&out)
    );

    config(
        &sb,
        "{source: FileChangeLimiter, scope: session, after_firings: 1}",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("scope"), "{}", stderr(&out));

    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-issue-submit:\n    - oracle: FileChangeLimiter\n      config: {max_files: 2, action: prompt}\nescalation:\n  - {source: FileChangeLimiter, after_firings: 1}\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("scope"), "{}", stderr(&out));
}

/// A repository can commit a segment of the log that does not read (an
/// empty `.gz`). Escalation could not count, and said so by failing the
/// whole call: the call was allowed, `rm -rf /` included. It counts
/// without the segment, and says so; fail_closed has nothing to block.
#[test]
fn a_log_segment_that_does_not_read_is_left_out_of_escalation_not_the_policy() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(
        ".ahp/hooks.yaml",
        "settings: {fail_closed: true}\nescalation:\n  - {source: anything, scope: session, after_firings: 1}\n",
    );
    sb.write(".ahp/signals.jsonl.1.gz", "");
    let out = sb
        .ahp()
        .args(["hook", "claude-code"])
        .write_stdin(
            serde_json::json!({"session_id": "s", "cwd": sb.root(), "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "rm -rf / --no-preserve-root"}})
            .to_string(),
        )
        .output()
        .unwrap();
    assert!(stdout(&out).contains("\"deny\""), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("escalation counts without the log segment")
            && stderr(&out).contains("signals.jsonl.1.gz"),
        "{}",
        stderr(&out)
    );
    // Nothing failed: under fail_closed too, `ls` is answered (no decision).
    let (code, v) = claude(&sb, &[], &bash("ls"));
    assert_eq!((code, decision(&v)), (0, "none".into()), "{v}");
}
