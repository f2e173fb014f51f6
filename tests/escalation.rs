//! Escalation, context-aware intensity and responses, end to end through
//! `ahp`.

mod common;
use common::{json_out, Sandbox};
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
fn repeated_prompt_becomes_control_then_block_and_a_clean_run_resets() {
    let sb = Sandbox::new();
    config(
        &sb,
        "{source: FileChangeLimiter, scope: issue, after_firings: 1}",
    );
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (0, "control".into()), "{v}");
    assert_eq!(v["signals"][0]["header"]["escalated_from"], "prompt");
    assert_eq!(
        v["signals"][0]["header"]["escalation"],
        "FileChangeLimiter/issue"
    );
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
    assert_eq!((code, intensity(&v)), (0, "control".into()), "{v}");

    // Half an hour old still counts (two firings in the window → block).
    age_log(&sb, chrono::Duration::minutes(30));
    let (code, v) = run(&sb, BIG, &[]);
    assert_eq!((code, intensity(&v)), (2, "block".into()), "{v}");
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
    // Three issues, one session: prompt, control, block.
    let (code, v) = run(&sb, &ctx(Some("S-1"), "FEAT-1"), &[]);
    assert_eq!((code, intensity(&v)), (3, "prompt".into()), "{v}");
    let (code, v) = run(&sb, &ctx(Some("S-1"), "FEAT-2"), &[]);
    assert_eq!((code, intensity(&v)), (0, "control".into()), "{v}");
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
    let (_, v) = run(&sb, BIG, &[]);
    assert_eq!(intensity(&v), "control", "{v}");
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
