//! Gemini CLI: `decision: allow|deny`, a rewritten tool input in
//! `hookSpecificOutput.tool_input` (merged over the call's arguments),
//! context in `hookSpecificOutput.additionalContext`. No "ask".

use super::{
    AdapterError, Agent, Decision, Inbound, Reply, add_text, base_context, event_name, keep_extra,
    str_field, tool_call, turn,
};
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
    ("search_file_content", "read"),
    ("list_directory", "read"),
    ("web_fetch", "fetch"),
    ("google_web_search", "fetch"),
];

pub(super) fn parse(
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let agent = Agent::Gemini;
    let a = agent.as_str();
    let native = event_name(agent, obj, "hook_event_name", given)?;
    let event = agent.map_event(&native)?;
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["session_id"])?,
        str_field(a, obj, &["cwd"])?,
        obj.get("timestamp"),
    );
    if let Some(raw) = str_field(a, obj, &["tool_name"])? {
        ctx.tool = Some(tool_call(
            agent,
            &raw,
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
            None,
            obj.get("tool_response").cloned(),
        ));
    }
    ctx.turn = turn(
        str_field(a, obj, &["prompt"])?,
        obj.get("prompt_response").cloned(),
        obj.get("stop_hook_active").and_then(Value::as_bool),
    );
    keep_extra(
        &mut ctx,
        obj,
        &[
            "session_id",
            "cwd",
            "hook_event_name",
            "timestamp",
            "tool_name",
            "tool_input",
            "tool_response",
            "prompt",
            "prompt_response",
            "stop_hook_active",
        ],
    );
    Ok(Inbound {
        agent,
        native_event: native,
        event,
        context: ctx,
        camel: false,
    })
}

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
