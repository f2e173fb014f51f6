//! GitHub Copilot CLI and VS Code. The camelCase hooks (`preToolUse`, …)
//! send `sessionId`, `toolName` and `toolArgs` (a JSON *string*) and read
//! `permissionDecision` / `modifiedArgs`; the PascalCase hooks use Claude
//! Code's shapes both ways.

use super::{
    AdapterError, Agent, Decision, Inbound, Reply, add_text, base_context, event_name, keep_extra,
    kind_of, str_field, tool_call, turn,
};
use ahp_engine::Event;
use serde_json::{Map, Value, json};

/// Copilot's events, camelCase then PascalCase.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("sessionStart", Some(Event::PreSession)),
    ("sessionEnd", Some(Event::PostSession)),
    ("userPromptSubmitted", Some(Event::PreAgentTurn)),
    ("preToolUse", Some(Event::PreToolUse)),
    ("postToolUse", Some(Event::PostToolUse)),
    ("postToolUseFailure", Some(Event::PostToolUseFailure)),
    ("agentStop", Some(Event::PreAgentTurnStop)),
    ("subagentStart", Some(Event::PreSubagent)),
    ("subagentStop", Some(Event::PostSubagent)),
    ("preCompact", Some(Event::PreContextCompact)),
    ("errorOccurred", None),
    ("notification", Some(Event::Notification)),
    ("permissionRequest", Some(Event::PermissionRequest)),
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("PostToolUseFailure", Some(Event::PostToolUseFailure)),
    ("Stop", Some(Event::PreAgentTurnStop)),
    ("SubagentStart", Some(Event::PreSubagent)),
    ("SubagentStop", Some(Event::PostSubagent)),
    ("PreCompact", Some(Event::PreContextCompact)),
    ("ErrorOccurred", None),
];

/// Copilot's tools, by their runtime names and by the Claude names its
/// PascalCase payloads give them (names compare case-insensitively, so
/// `Bash` is `bash`).
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("bash", "shell"),
    ("write_bash", "shell"),
    ("powershell", "shell"),
    ("shell", "shell"),
    ("create", "write"),
    ("write", "write"),
    ("edit", "edit"),
    ("str_replace", "edit"),
    ("str_replace_editor", "edit"),
    ("apply_patch", "edit"),
    ("view", "read"),
    ("read", "read"),
    ("glob", "read"),
    ("grep", "read"),
    ("rg", "read"),
    ("web_fetch", "fetch"),
    ("webfetch", "fetch"),
    ("fetch", "fetch"),
    ("web_search", "fetch"),
    ("websearch", "fetch"),
];

/// The PascalCase name of `event` among Copilot's events.
fn pascal_name(event: Option<Event>) -> Option<&'static str> {
    EVENTS
        .iter()
        .find(|(name, e)| *e == event && name.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|(name, _)| *name)
}

/// VS Code's own tools, as it names them in the payloads it sends to the
/// hooks of `.github/hooks` and of `.claude/settings.json`.
pub(super) const VS_CODE_TOOLS: &[(&str, &str)] = &[
    ("run_in_terminal", "shell"),
    ("create_file", "write"),
    ("replace_string_in_file", "edit"),
    ("multi_replace_string_in_file", "edit"),
    ("insert_edit_into_file", "edit"),
    ("edit_notebook_file", "edit"),
    ("editFiles", "edit"),
    ("read_file", "read"),
    ("fetch_webpage", "fetch"),
];

pub(super) fn parse(
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let agent = Agent::Copilot;
    let a = agent.as_str();
    if given.is_none() && obj.contains_key("hook_event_name") {
        return super::claude::parse(agent, obj, None);
    }
    // VS Code runs the `.github/hooks/*.json` written for Copilot CLI
    // (`--event preToolUse`) and sends its own payload, in Claude Code's
    // shape (`tool_name`, `tool_input`), which it also reads back: that
    // payload names its event, and a camelCase reading of it finds no tool.
    if let Some(camel) = given.filter(|g| g.starts_with(|c: char| c.is_ascii_lowercase()))
        && ["tool_name", "tool_input", "hook_event_name"]
            .iter()
            .any(|k| obj.contains_key(*k))
    {
        let native = match str_field(a, obj, &["hookEventName", "hook_event_name"])? {
            Some(own) => own,
            None => pascal_name(agent.map_event(camel)?)
                .unwrap_or(camel)
                .to_string(),
        };
        return super::claude::parse(agent, obj, Some(&native));
    }
    let native = event_name(agent, obj, "hookEventName", given)?;
    let event = agent.map_event(&native)?;
    let camel = native.starts_with(|c: char| c.is_ascii_lowercase());
    if !camel {
        return super::claude::parse(agent, obj, Some(&native));
    }
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["sessionId"])?,
        str_field(a, obj, &["cwd"])?,
        obj.get("timestamp"),
    );
    if let Some(raw) = str_field(a, obj, &["toolName"])? {
        // permissionRequest sends the arguments as `toolInput`.
        let input = match obj.get("toolArgs").or_else(|| obj.get("toolInput")) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::String(s)) if s.trim().is_empty() => Value::Null,
            Some(Value::String(s)) => serde_json::from_str(&super::without_lone_surrogates(s))
                .map_err(|e| {
                    AdapterError::new(format!(
                        "copilot hook input: field `toolArgs` is not valid JSON: {e}"
                    ))
                })?,
            Some(v @ Value::Object(_)) => v.clone(),
            Some(other) => {
                return Err(AdapterError::new(format!(
                    "copilot hook input: field `toolArgs` must be a JSON string, found {}",
                    kind_of(other)
                )));
            }
        };
        // `write_bash` types its `input` into a shell session that `bash`
        // started (`async: true`): a command line like `bash`'s own, judged
        // whatever `command` the model adds beside it (the tool reads none).
        let mut input = input;
        if raw.eq_ignore_ascii_case("write_bash")
            && let Some(typed) = input.get("input").cloned()
            && let Some(args) = input.as_object_mut()
        {
            args.insert("command".into(), typed);
        }
        ctx.tool = Some(tool_call(
            agent,
            &raw,
            input,
            None,
            obj.get("toolResult").cloned(),
        ));
    }
    ctx.turn = turn(str_field(a, obj, &["prompt"])?, None, None);
    if let Some(reason) = str_field(a, obj, &["stopReason"])? {
        ctx.turn.get_or_insert_with(Default::default).stop_reason = Some(reason);
    }
    keep_extra(
        &mut ctx,
        obj,
        &[
            "sessionId",
            "cwd",
            "timestamp",
            "toolName",
            "toolArgs",
            "toolInput",
            "toolResult",
            "prompt",
            "stopReason",
        ],
    );
    Ok(Inbound {
        agent,
        native_event: native,
        event,
        context: ctx,
        camel: true,
    })
}

/// The camelCase hooks' answer.
pub(super) fn render(
    native: &str,
    event: Event,
    d: &Decision,
    system_message: Option<&str>,
) -> Reply {
    let mut out = match (event, d) {
        // As for Claude Code: a deny, or nothing (the user's dialog decides).
        (Event::PermissionRequest, Decision::Deny { reason }) => {
            json!({"behavior": "deny", "message": reason})
        }
        (Event::PermissionRequest, Decision::Ask { .. }) => json!({}),
        (Event::PreToolUse, Decision::Deny { reason }) => {
            json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
        }
        (Event::PreToolUse, Decision::Ask { reason, input }) => {
            let mut o = json!({"permissionDecision": "ask", "permissionDecisionReason": reason});
            if let Some(i) = input {
                o["modifiedArgs"] = i.clone();
            }
            o
        }
        (
            _,
            Decision::Rewrite {
                input,
                reason,
                context,
            },
        ) => {
            let mut o = json!({
                "permissionDecision": "allow",
                "permissionDecisionReason": reason,
                "modifiedArgs": input,
            });
            if let Some(c) = context {
                o["additionalContext"] = Value::String(c.clone());
            }
            o
        }
        (Event::PreAgentTurnStop | Event::PostSubagent, Decision::Deny { reason }) => {
            json!({"decision": "block", "reason": reason})
        }
        // No other camelCase hook reads a decision, and Copilot never
        // blocks on an exit code: the refusal is logged by ahp, and said on
        // stderr (which Copilot logs) for what it is.
        (_, Decision::Deny { reason } | Decision::Ask { reason, .. }) => {
            return Reply::exit2(&format!(
                "ahp: Copilot cannot block at {native}; the policy refused it:\n{reason}"
            ));
        }
        (_, Decision::Allow { context: Some(c) }) => json!({ "additionalContext": c }),
        (_, Decision::Allow { context: None }) => json!({}),
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
