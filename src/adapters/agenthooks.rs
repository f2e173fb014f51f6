//! The Agent Hooks standard: `event_type` names like `pre-tool-call`, a
//! block is exit 2 with the reason on stderr, other answers are
//! `decision`, `reason`, `modified_input` and `additional_context`.

use super::{
    AdapterError, Agent, Decision, Inbound, Reply, add_text, base_context, keep_extra, str_field,
    tool_call, turn,
};
use ahp_engine::Event;
use serde_json::{Map, Value, json};

/// The standard's event names.
/// Legacy names (`before_tool`, `session_start`, …) resolve through ahp's
/// own alias table.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("pre-session", Some(Event::PreSession)),
    ("post-session", Some(Event::PostSession)),
    ("pre-agent-turn", Some(Event::PreAgentTurn)),
    ("post-agent-turn", Some(Event::PostAgentTurn)),
    ("pre-agent-turn-stop", Some(Event::PreAgentTurnStop)),
    ("post-agent-turn-stop", Some(Event::PostAgentTurnStop)),
    ("pre-tool-call", Some(Event::PreToolUse)),
    ("post-tool-call", Some(Event::PostToolUse)),
    ("post-tool-call-failure", Some(Event::PostToolUseFailure)),
    ("pre-subagent", Some(Event::PreSubagent)),
    ("post-subagent", Some(Event::PostSubagent)),
    ("pre-context-compact", Some(Event::PreContextCompact)),
    ("post-context-compact", Some(Event::PostContextCompact)),
];

/// Tool names seen in Agent Hooks payloads.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("shell", "shell"),
    ("bash", "shell"),
    ("run_shell_command", "shell"),
    ("write", "write"),
    ("write_file", "write"),
    ("edit", "edit"),
    ("read", "read"),
    ("read_file", "read"),
    ("fetch", "fetch"),
    ("web_fetch", "fetch"),
    // Kimi CLI, which hosts the standard, sends its own names.
    ("WriteFile", "write"),
    ("StrReplaceFile", "edit"),
    ("ReadFile", "read"),
    ("FetchURL", "fetch"),
];

pub(super) fn parse(
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let agent = Agent::AgentHooks;
    let a = agent.as_str();
    let native = super::event_name(agent, obj, "event_type", given)?;
    // The standard's names first; ahp's own canonical names and aliases
    // are accepted too, since the standard and ahp share them.
    let event = match agent.map_event(&native) {
        Ok(e) => e,
        Err(err) => Some(native.parse::<Event>().map_err(|_| err)?),
    };
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["session_id"])?,
        str_field(a, obj, &["work_dir", "cwd"])?,
        obj.get("timestamp"),
    );
    if let Some(raw) = str_field(a, obj, &["tool_name"])? {
        ctx.tool = Some(tool_call(
            agent,
            &raw,
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
            str_field(a, obj, &["tool_use_id"])?,
            obj.get("tool_response").cloned(),
        ));
    }
    ctx.turn = turn(
        str_field(a, obj, &["prompt"])?,
        obj.get("final_message").cloned(),
        obj.get("stop_hook_active").and_then(Value::as_bool),
    );
    if let Some(reason) = str_field(a, obj, &["stop_reason"])? {
        let t = ctx.turn.get_or_insert_with(Default::default);
        t.stop_reason = Some(reason);
        t.step_count = obj.get("step_count").and_then(Value::as_u64);
    }
    keep_extra(
        &mut ctx,
        obj,
        &[
            "event_type",
            "timestamp",
            "session_id",
            "work_dir",
            "cwd",
            "tool_name",
            "tool_input",
            "tool_use_id",
            "tool_response",
            "prompt",
            "stop_hook_active",
            "final_message",
            "stop_reason",
            "step_count",
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

/// The standard's answer.
pub(super) fn render(_event: Event, d: &Decision, system_message: Option<&str>) -> Reply {
    let mut out = match d {
        Decision::Deny { reason } => return Reply::exit2(reason),
        Decision::Ask { reason, input } => {
            let mut o = json!({"decision": "ask", "reason": reason});
            if let Some(i) = input {
                o["modified_input"] = i.clone();
            }
            o
        }
        Decision::Rewrite {
            input,
            reason,
            context,
        } => {
            let mut o = json!({"decision": "allow", "reason": reason, "modified_input": input});
            if let Some(c) = context {
                o["additional_context"] = Value::String(c.clone());
            }
            o
        }
        Decision::Allow { context: Some(c) } => {
            json!({"decision": "allow", "additional_context": c})
        }
        Decision::Allow { context: None } => json!({}),
    };
    if let Some(m) = system_message {
        if out.as_object().is_some_and(Map::is_empty) {
            out = json!({"decision": "allow"});
        }
        add_text(&mut out, "additional_context", m);
    }
    if out.as_object().is_some_and(Map::is_empty) {
        Reply::silent()
    } else {
        Reply::json(out)
    }
}
