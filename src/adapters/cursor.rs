//! Cursor: one hook per kind of action (`beforeShellExecution`,
//! `beforeMCPExecution`, `beforeReadFile`, `afterFileEdit`, …), answered
//! with `permission: allow|deny|ask` and messages for the user and the
//! agent; a stop is continued with `followup_message`. No input rewrite.

use super::{
    AdapterError, Agent, Decision, Inbound, Reply, add_text, base_context, event_name, keep_extra,
    str_field, tool_call, turn,
};
use ahp_engine::Event;
use serde_json::{Map, Value, json};

/// Cursor's events.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("sessionStart", Some(Event::PreSession)),
    ("sessionEnd", Some(Event::PostSession)),
    ("beforeSubmitPrompt", Some(Event::PreAgentTurn)),
    ("beforeShellExecution", Some(Event::PreToolUse)),
    ("beforeMCPExecution", Some(Event::PreToolUse)),
    ("beforeReadFile", Some(Event::PreToolUse)),
    ("preToolUse", Some(Event::PreToolUse)),
    ("afterShellExecution", Some(Event::PostToolUse)),
    ("afterMCPExecution", Some(Event::PostToolUse)),
    ("afterFileEdit", Some(Event::PostToolUse)),
    ("postToolUse", Some(Event::PostToolUse)),
    ("preCompact", Some(Event::PreContextCompact)),
    ("stop", Some(Event::PreAgentTurnStop)),
    ("afterAgentResponse", None),
    ("afterAgentThought", None),
];

/// Cursor's tool names (`preToolUse`), and the names ahp gives the
/// actions of the dedicated hooks.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("Shell", "shell"),
    ("Terminal", "shell"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("StrReplace", "edit"),
    ("TabWrite", "write"),
    ("Delete", "edit"),
    ("Read", "read"),
    ("Grep", "read"),
    ("Glob", "read"),
    ("MCP", "mcp"),
    ("WebFetch", "fetch"),
];

fn some<K: Into<String>>(pairs: Vec<(K, Option<&Value>)>) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            m.insert(k.into(), v.clone());
        }
    }
    Value::Object(m)
}

pub(super) fn parse(
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let agent = Agent::Cursor;
    let a = agent.as_str();
    let native = event_name(agent, obj, "hook_event_name", given)?;
    let event = agent.map_event(&native)?;
    // The workspace is the project; a shell hook's `cwd` is only where
    // its command runs (and stays in the tool input).
    let cwd = match obj
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str)
    {
        Some(root) => Some(root.to_string()),
        None => str_field(a, obj, &["cwd"])?,
    };
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["conversation_id"])?,
        cwd,
        obj.get("timestamp"),
    );
    let g = |k: &str| obj.get(k);
    let tool = match native.as_str() {
        "beforeShellExecution" => Some((
            "Shell".to_string(),
            some(vec![("command", g("command")), ("cwd", g("cwd"))]),
            None,
        )),
        "afterShellExecution" => Some((
            "Shell".to_string(),
            some(vec![("command", g("command"))]),
            g("output").cloned(),
        )),
        "beforeReadFile" => Some((
            "Read".to_string(),
            some(vec![
                ("file_path", g("file_path")),
                ("content", g("content")),
            ]),
            None,
        )),
        "afterFileEdit" => Some((
            "Edit".to_string(),
            some(vec![("file_path", g("file_path")), ("edits", g("edits"))]),
            None,
        )),
        "beforeMCPExecution" | "afterMCPExecution" => {
            let input = match g("tool_input") {
                // Cursor sends MCP arguments as a JSON string.
                Some(Value::String(s)) => serde_json::from_str(&super::without_lone_surrogates(s))
                    .unwrap_or(Value::String(s.clone())),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            let name = str_field(a, obj, &["tool_name"])?.unwrap_or_else(|| "MCP".into());
            let mut call = tool_call(agent, &name, input, None, g("result_json").cloned());
            call.name = "mcp".into();
            ctx.tool = Some(call);
            None
        }
        _ => str_field(a, obj, &["tool_name"])?.map(|name| {
            (
                name,
                g("tool_input").cloned().unwrap_or(Value::Null),
                g("tool_output").cloned(),
            )
        }),
    };
    if let Some((raw, input, response)) = tool {
        ctx.tool = Some(tool_call(agent, &raw, input, None, response));
    }
    // A shell hook's `cwd` is where Cursor runs the command (its
    // terminal's folder), not always the workspace root.
    if native.ends_with("ShellExecution")
        && let Some(dir) = str_field(a, obj, &["cwd"])?
        && let Some(t) = ctx.tool.as_mut()
    {
        t.work_dir = super::dir_from(&dir, ctx.work_dir.as_deref());
    }
    ctx.turn = turn(str_field(a, obj, &["prompt"])?, None, None);
    if event == Some(Event::PreAgentTurnStop) {
        let t = ctx.turn.get_or_insert_with(Default::default);
        t.stop_reason = str_field(a, obj, &["status"])?;
        // Cursor counts the follow-ups it already sent: the loop is on.
        t.stop_hook_active = g("loop_count").and_then(Value::as_u64).map(|n| n > 0);
    }
    keep_extra(
        &mut ctx,
        obj,
        &[
            "conversation_id",
            "hook_event_name",
            "cwd",
            "timestamp",
            "tool_name",
            "tool_input",
            "command",
            "prompt",
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

/// Cursor's answer.
pub(super) fn render(
    native: &str,
    event: Event,
    d: &Decision,
    system_message: Option<&str>,
) -> Reply {
    let mut out = match (event, native, d) {
        (Event::PreAgentTurnStop, _, Decision::Deny { reason }) => {
            json!({ "followup_message": reason })
        }
        (Event::PreAgentTurnStop, _, _) => json!({}),
        (Event::PreAgentTurn, _, Decision::Deny { reason }) => {
            json!({"continue": false, "user_message": reason})
        }
        (Event::PreAgentTurn, _, _) => json!({ "continue": true }),
        (Event::PreToolUse, _, Decision::Deny { reason }) => {
            json!({"permission": "deny", "user_message": reason, "agent_message": reason})
        }
        // beforeReadFile knows only allow and deny.
        (Event::PreToolUse, "beforeReadFile", Decision::Ask { reason, .. }) => {
            json!({"permission": "allow", "agent_message": reason})
        }
        (Event::PreToolUse, _, Decision::Ask { reason, .. }) => {
            json!({"permission": "ask", "user_message": reason, "agent_message": reason})
        }
        (Event::PreToolUse, _, Decision::Allow { context }) => match context {
            Some(c) => json!({"permission": "allow", "agent_message": c}),
            None => json!({ "permission": "allow" }),
        },
        (Event::PreToolUse, _, Decision::Rewrite { reason, .. }) => {
            json!({"permission": "allow", "agent_message": reason})
        }
        (_, _, Decision::Deny { reason }) => return Reply::exit2(reason),
        // After-hooks and session hooks read no answer.
        _ => json!({}),
    };
    if let Some(m) = system_message {
        add_text(&mut out, "user_message", m);
    }
    if out.as_object().is_some_and(Map::is_empty) {
        Reply::silent()
    } else {
        Reply::json(out)
    }
}
