//! `when` matchers and Rules conditions: the first line is a `when`
//! matcher (as a YAML/JSON string), the rest a Rules condition expression;
//! both are compiled and evaluated against a context that has the common
//! paths (tool, files, issue, checklist).
#![no_main]

use ahp::engine::condition::{Condition, Matcher};
use ahp::engine::condition::expr::Expr;
use ahp::HookContext;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn context() -> &'static HookContext {
    static C: OnceLock<HookContext> = OnceLock::new();
    C.get_or_init(|| {
        match serde_json::from_value(json!({
            "session_id": "fuzz",
            "environment": "production",
            "tool": {"name": "shell", "raw_name": "Bash", "input": {"command": "rm -rf / && ls", "n": 3}},
            "files": {"changed": ["src/a.rs", "README.md"], "changed_count": 2},
            "issue": {"id": "FEAT-0001", "type": "feature", "status": "open"}
        })) {
            Ok(c) => c,
            Err(e) => panic!("the fuzz context does not parse: {e}"),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let ctx = context();
    for spec in [Value::String(first.to_string()), serde_json::from_str(first).unwrap_or(Value::Null)] {
        if let Ok(m) = Matcher::parse(&spec) {
            for path in ["tool.input.command", "files.changed_count", "issue.type", "tool.input.n", "nope.x"] {
                let _ = Condition::new(vec![(path.to_string(), m.clone())]).holds(ctx);
            }
        }
    }
    if let Ok(e) = Expr::parse(rest) {
        let _ = e.eval(ctx);
    }
});
