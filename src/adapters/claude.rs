//! Claude Code, and the agents that copy its shape: Codex, Kimi (parsing),
//! Copilot's PascalCase hooks and Gemini CLI (parsing).

use super::{
    AdapterError, Agent, Decision, Inbound, Reply, base_context, event_name, keep_extra, str_field,
    tool_call, turn,
};
use ahp_engine::Event;
use serde_json::{Map, Value, json};

/// Claude Code's events (its hooks reference, checked 2026-11-25; the
/// fixtures' README lists the source). `None`: events that carry nothing a
/// policy decides on, or whose answer is not a verdict (WorktreeCreate's
/// stdout is the worktree's path), answered with silence.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PermissionRequest", Some(Event::PermissionRequest)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("PostToolUseFailure", Some(Event::PostToolUseFailure)),
    ("Notification", Some(Event::Notification)),
    ("SubagentStart", Some(Event::PreSubagent)),
    ("SubagentStop", Some(Event::PostSubagent)),
    ("Stop", Some(Event::PreAgentTurnStop)),
    ("StopFailure", Some(Event::StopFailure)),
    ("PreCompact", Some(Event::PreContextCompact)),
    ("PostCompact", Some(Event::PostContextCompact)),
    ("Setup", None),
    ("UserPromptExpansion", None),
    ("PermissionDenied", None),
    ("PostToolBatch", None),
    ("MessageDisplay", None),
    ("TaskCreated", None),
    ("TaskCompleted", None),
    ("TeammateIdle", None),
    ("InstructionsLoaded", None),
    ("ConfigChange", None),
    ("CwdChanged", None),
    ("DirectoryAdded", None),
    ("FileChanged", None),
    ("WorktreeCreate", None),
    ("WorktreeRemove", None),
    ("PreModelSwitch", None),
    ("PostModelSwitch", None),
    ("Elicitation", None),
    ("ElicitationResult", None),
];

/// Claude Code's tools.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("Bash", "shell"),
    ("PowerShell", "shell"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("NotebookEdit", "edit"),
    ("Read", "read"),
    ("Glob", "read"),
    ("Grep", "read"),
    ("LS", "read"),
    ("WebFetch", "fetch"),
    ("WebSearch", "fetch"),
];

/// Codex CLI's events (its hooks docs and `codex-rs/hooks`). SessionEnd
/// and StopFailure are newer than the others: `ahp install` leaves them
/// out (see `install::install_events`).
pub(super) const CODEX_EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PermissionRequest", Some(Event::PermissionRequest)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("PreCompact", Some(Event::PreContextCompact)),
    ("PostCompact", Some(Event::PostContextCompact)),
    ("SubagentStart", Some(Event::PreSubagent)),
    ("SubagentStop", Some(Event::PostSubagent)),
    ("Stop", Some(Event::PreAgentTurnStop)),
    ("StopFailure", Some(Event::StopFailure)),
    ("Interrupt", None),
];

/// Codex CLI's tools (`apply_patch` sends the patch as `command`).
pub(super) const CODEX_TOOLS: &[(&str, &str)] = &[
    ("Bash", "shell"),
    ("shell", "shell"),
    ("local_shell", "shell"),
    ("exec_command", "shell"),
    ("apply_patch", "edit"),
    ("read_file", "read"),
    ("web_search", "fetch"),
];

/// Reads a Claude-shaped payload (Claude Code, Codex, Kimi, Copilot's
/// PascalCase hooks, and Gemini CLI's, which has no tool call id and names
/// the last answer `prompt_response`).
pub(super) fn parse(
    agent: Agent,
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let (ids, response): (&[&str], &str) = match agent {
        Agent::Gemini => (&[], "prompt_response"),
        _ => (&["tool_use_id", "tool_call_id"], "last_assistant_message"),
    };
    let a = agent.as_str();
    // VS Code runs the hooks of `.claude/settings.json` with its own
    // payload: Claude Code's fields, but `hookEventName` and `sessionId`.
    let field = if obj.contains_key("hook_event_name") || !obj.contains_key("hookEventName") {
        "hook_event_name"
    } else {
        "hookEventName"
    };
    let native = event_name(agent, obj, field, given)?;
    let event = agent.map_event(&native)?;
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["session_id", "sessionId"])?,
        str_field(a, obj, &["cwd"])?,
        obj.get("timestamp"),
    );
    if let Some(raw) = str_field(a, obj, &["tool_name"])? {
        ctx.tool = Some(tool_call(
            agent,
            &raw,
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
            str_field(a, obj, ids)?,
            obj.get("tool_response").cloned(),
        ));
    }
    // Gemini CLI runs a shell command in its `dir_path` (`directory` in
    // older versions), from the project's folder.
    if agent == Agent::Gemini
        && let Some(t) = ctx.tool.as_mut().filter(|t| t.name == "shell")
    {
        let dir = ["dir_path", "directory"]
            .iter()
            .find_map(|k| t.input.get(*k).and_then(Value::as_str));
        t.work_dir = dir.and_then(|d| super::dir_from(d, ctx.work_dir.as_deref()));
    }
    ctx.turn = turn(
        str_field(a, obj, &["prompt"])?,
        obj.get(response).cloned(),
        obj.get("stop_hook_active").and_then(Value::as_bool),
    );
    let mut mapped = vec![
        "session_id",
        "sessionId",
        "cwd",
        "hook_event_name",
        "hookEventName",
        "tool_name",
        "tool_input",
        "tool_response",
        "prompt",
        response,
        "stop_hook_active",
        "timestamp",
    ];
    mapped.extend(ids);
    keep_extra(&mut ctx, obj, &mapped);
    Ok(Inbound {
        agent,
        native_event: native,
        event,
        context: ctx,
        camel: false,
    })
}

fn specific(native: &str, fields: Value) -> Value {
    let mut inner = Map::new();
    inner.insert("hookEventName".into(), Value::String(native.into()));
    if let Value::Object(m) = fields {
        inner.extend(m);
    }
    json!({ "hookSpecificOutput": inner })
}

/// Codex's answer: Claude's, except that its stop hooks take no
/// `hookSpecificOutput` (their schema rejects unknown fields), so context
/// there goes to the user as `systemMessage`.
pub(super) fn render_codex(
    native: &str,
    event: Event,
    d: &Decision,
    system_message: Option<&str>,
) -> Reply {
    match (event, d) {
        (Event::PreAgentTurnStop | Event::PostSubagent, Decision::Allow { context: Some(c) }) => {
            let mut out = json!({ "systemMessage": c });
            if let Some(m) = system_message {
                super::add_text(&mut out, "systemMessage", m);
            }
            Reply::json(out)
        }
        _ => render(native, event, d, system_message),
    }
}

/// Claude Code's answer (also VS Code's for Copilot, and Codex's but for
/// its stops).
pub(super) fn render(
    native: &str,
    event: Event,
    d: &Decision,
    system_message: Option<&str>,
) -> Reply {
    let mut out = match (event, d) {
        // The permission dialog's answer. ahp never answers `allow` there:
        // having no objection is not the user's approval.
        (Event::PermissionRequest, Decision::Deny { reason }) => specific(
            native,
            json!({"decision": {"behavior": "deny", "message": reason}}),
        ),
        // The agent's own dialog is the question: the user sees why.
        (Event::PermissionRequest, Decision::Ask { reason, .. }) if !reason.is_empty() => {
            json!({ "systemMessage": reason })
        }
        (Event::PermissionRequest, Decision::Ask { .. }) => json!({}),
        (Event::PreToolUse, Decision::Deny { reason }) => specific(
            native,
            json!({"permissionDecision": "deny", "permissionDecisionReason": reason}),
        ),
        (Event::PreToolUse, Decision::Ask { reason, input }) => {
            let mut f = json!({"permissionDecision": "ask", "permissionDecisionReason": reason});
            if let Some(i) = input {
                f["updatedInput"] = i.clone();
            }
            specific(native, f)
        }
        (
            _,
            Decision::Rewrite {
                input,
                reason,
                context,
            },
        ) => {
            let mut f = json!({
                "permissionDecision": "allow",
                "permissionDecisionReason": reason,
                "updatedInput": input,
            });
            if let Some(c) = context {
                f["additionalContext"] = Value::String(c.clone());
            }
            specific(native, f)
        }
        (
            Event::PreAgentTurnStop | Event::PostSubagent | Event::PreAgentTurn,
            Decision::Deny { reason },
        ) => json!({"decision": "block", "reason": reason}),
        (_, Decision::Deny { reason } | Decision::Ask { reason, .. }) => {
            json!({"continue": false, "stopReason": reason})
        }
        (
            Event::PreToolUse
            | Event::PostToolUse
            | Event::PostToolUseFailure
            | Event::PreAgentTurn
            | Event::PreAgentTurnStop
            | Event::PreSession
            | Event::PreSubagent
            | Event::PostSubagent,
            Decision::Allow { context: Some(c) },
        ) => specific(native, json!({ "additionalContext": c })),
        // The rest take no context for the model: the user sees it.
        (_, Decision::Allow { context: Some(c) }) => json!({ "systemMessage": c }),
        (_, Decision::Allow { context: None }) => json!({}),
    };
    if let Some(m) = system_message {
        super::add_text(&mut out, "systemMessage", m);
    }
    if out.as_object().is_some_and(Map::is_empty) {
        Reply::silent()
    } else {
        Reply::json(out)
    }
}
