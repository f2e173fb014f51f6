//! PathGuard end to end, through `ahp hook claude-code`: the lists a
//! policy adds apply to the agent's file tools as to its shell commands.

use crate::common::{Sandbox, stderr, stdout};
use serde_json::json;

const POLICY: &str = "hooks:
  pre-tool-use:
    - id: PathGuard
      config:
        confirm: [\"config/master.key\"]
        allow: [\"fixtures/.env\"]
";

/// The answer to one tool call: `deny`, `ask` or `allow` (no opinion).
fn decision(sb: &Sandbox, tool: &str, input: serde_json::Value) -> String {
    let out = sb.claude_pre_tool("s", tool, input).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    if text.trim().is_empty() {
        return "allow".into();
    }
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("allow")
        .to_string()
}

/// A glob relative to the project (`config/master.key`) names the
/// project's file, whether the agent reads it with `cat`, with its Read
/// tool or by its absolute path, and an `allow` entry of the same form
/// wins over the built-in `**/.env` for file tools too.
#[test]
fn a_project_relative_glob_covers_file_tools_and_absolute_paths() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", POLICY);
    let abs = sb.root().join("config/master.key");
    let abs = abs.to_str().unwrap();
    assert_eq!(
        decision(&sb, "Bash", json!({"command": "cat config/master.key"})),
        "ask"
    );
    assert_eq!(
        decision(&sb, "Bash", json!({"command": format!("cat {abs}")})),
        "ask"
    );
    for path in ["config/master.key", abs] {
        assert_eq!(
            decision(&sb, "Read", json!({"file_path": path})),
            "ask",
            "{path}"
        );
        assert_eq!(
            decision(&sb, "Write", json!({"file_path": path, "content": "k"})),
            "ask",
            "{path}"
        );
        assert_eq!(
            decision(
                &sb,
                "Edit",
                json!({"file_path": path, "old_string": "a", "new_string": "b"})
            ),
            "ask",
            "{path}"
        );
    }
    // Another file of the same name elsewhere is not the project's.
    assert_eq!(
        decision(&sb, "Read", json!({"file_path": "/tmp/config/master.key"})),
        "allow"
    );
    assert_eq!(
        decision(&sb, "Read", json!({"file_path": "other/config/master.key"})),
        "allow"
    );

    let fixture = sb.root().join("fixtures/.env");
    for path in ["fixtures/.env", fixture.to_str().unwrap()] {
        assert_eq!(
            decision(&sb, "Read", json!({"file_path": path})),
            "allow",
            "{path}"
        );
    }
    assert_eq!(decision(&sb, "Read", json!({"file_path": ".env"})), "ask");
}
