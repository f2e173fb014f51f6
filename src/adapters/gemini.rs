//! Gemini CLI: `decision: allow|deny`, a rewritten tool input in
//! `hookSpecificOutput.tool_input` (merged over the call's arguments),
//! context in `hookSpecificOutput.additionalContext`. No "ask".

use super::{Decision, Reply, add_text};
use ahp_engine::Event;
use serde_json::{Map, Value, json};

/// Gemini CLI's events. The model-level events carry nothing a policy on
/// actions decides on.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("BeforeAgent", Some(Event::PreAgentTurn)),
    ("AfterAgent", Some(Event::PreAgentTurnStop)),
    ("BeforeTool", Some(Event::PreToolUse)),
    ("AfterTool", Some(Event::PostToolUse)),
    ("PreCompress", Some(Event::PreContextCompact)),
    ("BeforeModel", None),
    ("AfterModel", None),
    ("BeforeToolSelection", None),
    ("Notification", Some(Event::Notification)),
];

/// Gemini CLI's tools.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("run_shell_command", "shell"),
    ("write_file", "write"),
    ("replace", "edit"),
    ("read_file", "read"),
    ("read_many_files", "read"),
    ("glob", "read"),
    ("grep_search", "read"),
    ("search_file_content", "read"),
    ("list_directory", "read"),
    ("web_fetch", "fetch"),
    ("google_web_search", "fetch"),
];

/// Gemini CLI's answer.
///
/// Gemini merges `tool_input` over the call's arguments, so a key the
/// policy removed is sent as `null`, or the original value would survive.
pub(super) fn render(
    native: &str,
    event: Event,
    d: &Decision,
    sent: Option<&Value>,
    system_message: Option<&str>,
) -> Reply {
    // BeforeTool has no context field (see `context_reaches_model`): an
    // aid there is shown to the user as a system message instead.
    let takes_context = matches!(
        event,
        Event::PostToolUse | Event::PreAgentTurn | Event::PreSession
    );
    let mut out = match d {
        Decision::Deny { reason } | Decision::Ask { reason, .. } => {
            json!({"decision": "deny", "reason": reason})
        }
        Decision::Rewrite {
            input,
            reason,
            context,
        } => {
            let mut input = input.clone();
            if let (Some(Value::Object(before)), Value::Object(after)) = (sent, &mut input) {
                for k in before.keys() {
                    if !after.contains_key(k) {
                        after.insert(k.clone(), Value::Null);
                    }
                }
            }
            let mut o = json!({
                "decision": "allow",
                "reason": reason,
                "hookSpecificOutput": {"hookEventName": native, "tool_input": input},
            });
            if let Some(c) = context {
                if takes_context {
                    o["hookSpecificOutput"]["additionalContext"] = Value::String(c.clone());
                } else {
                    o["systemMessage"] = Value::String(c.clone());
                }
            }
            o
        }
        Decision::Allow { context: Some(c) } if takes_context => {
            json!({"hookSpecificOutput": {"hookEventName": native, "additionalContext": c}})
        }
        Decision::Allow { context: Some(c) } => json!({ "systemMessage": c }),
        Decision::Allow { context: None } => json!({}),
    };
    if let Some(m) = system_message {
        add_text(&mut out, "systemMessage", m);
    }
    if out.as_object().is_some_and(Map::is_empty) {
        Reply::silent()
    } else {
        Reply::json(out)
    }
}
