//! Windsurf (Cascade hooks): one hook per kind of action
//! (`pre_run_command`, `pre_write_code`, `pre_read_code`,
//! `pre_mcp_tool_use`, `pre_user_prompt`, and their `post_` pairs), named
//! in the payload's `agent_action_name` with the action in `tool_info`.
//! Exit 2 blocks a pre-hook and Cascade's model reads stderr; nothing else
//! a hook says is read (stdout is shown to the user with `show_output`),
//! so there is no ask, no rewritten input and no context for the model.

use super::{AdapterError, Agent, Decision, Inbound, Reply, base_context, keep_extra, str_field};
use ahp_engine::{Event, Turn};
use serde_json::{Map, Value};

/// Cascade's hook events (its hooks docs). `None`: known, answered with
/// nothing.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("pre_user_prompt", Some(Event::PreAgentTurn)),
    ("pre_read_code", Some(Event::PreToolUse)),
    ("pre_write_code", Some(Event::PreToolUse)),
    ("pre_run_command", Some(Event::PreToolUse)),
    ("pre_mcp_tool_use", Some(Event::PreToolUse)),
    ("post_read_code", Some(Event::PostToolUse)),
    ("post_write_code", Some(Event::PostToolUse)),
    ("post_run_command", Some(Event::PostToolUse)),
    ("post_mcp_tool_use", Some(Event::PostToolUse)),
    ("post_cascade_response", Some(Event::PostAgentTurn)),
    ("post_cascade_response_with_transcript", None),
    ("post_setup_worktree", None),
];

/// The names ahp gives Cascade's actions (its hooks name no tools).
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("run_command", "shell"),
    ("write_code", "edit"),
    ("read_code", "read"),
];

pub(super) fn parse(
    obj: &Map<String, Value>,
    given: Option<&str>,
) -> Result<Inbound, AdapterError> {
    let agent = Agent::Windsurf;
    let a = agent.as_str();
    let native = super::event_name(agent, obj, "agent_action_name", given)?;
    let event = agent.map_event(&native)?;
    let info = match obj.get("tool_info") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(AdapterError::new(format!(
                "{a} hook input: field `tool_info` must be an object"
            )));
        }
    };
    // A command is judged where it runs (`cwd`, which the model picks);
    // the project is found from the hook's own directory, the workspace
    // root Cascade starts it in (`hook.rs`).
    let mut ctx = base_context(
        event,
        str_field(a, obj, &["trajectory_id"])?,
        info.get("cwd").and_then(Value::as_str).map(str::to_string),
        obj.get("timestamp"),
    );
    let g = |k: &str| info.get(k).cloned();
    let pick = |keys: &[(&str, &str)]| {
        let mut m = Map::new();
        for (from, to) in keys {
            if let Some(v) = info.get(*from) {
                m.insert((*to).to_string(), v.clone());
            }
        }
        Value::Object(m)
    };
    let action = native
        .trim_start_matches("pre_")
        .trim_start_matches("post_");
    let tool = match action {
        "run_command" => Some((
            "run_command".to_string(),
            pick(&[("command_line", "command"), ("cwd", "cwd")]),
            None,
        )),
        "read_code" => Some((
            "read_code".to_string(),
            pick(&[("file_path", "file_path")]),
            None,
        )),
        "write_code" => Some((
            "write_code".to_string(),
            pick(&[("file_path", "file_path"), ("edits", "edits")]),
            None,
        )),
        "mcp_tool_use" => {
            let server = info
                .get("mcp_server_name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let name = info
                .get("mcp_tool_name")
                .and_then(Value::as_str)
                .unwrap_or("");
            Some((
                format!("mcp__{server}__{name}"),
                g("mcp_tool_arguments").unwrap_or(Value::Null),
                g("mcp_result"),
            ))
        }
        _ => None,
    };
    if let Some((raw, input, response)) = tool {
        let use_id = str_field(a, obj, &["execution_id"])?;
        ctx.tool = Some(super::tool_call(agent, &raw, input, use_id, response));
    }
    match native.as_str() {
        "pre_user_prompt" => {
            ctx.turn = Some(Turn {
                prompt: g("user_prompt").and_then(|v| v.as_str().map(str::to_string)),
                ..Turn::default()
            });
        }
        "post_cascade_response" => {
            ctx.turn = Some(Turn {
                final_message: g("response"),
                ..Turn::default()
            });
        }
        _ => {}
    }
    keep_extra(
        &mut ctx,
        obj,
        &[
            "agent_action_name",
            "trajectory_id",
            "timestamp",
            "tool_info",
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

/// Cascade's answer: exit 2 with the reason on stderr blocks; anything
/// else for the user goes to stdout (shown with `show_output`).
pub(super) fn render(d: &Decision, system_message: Option<&str>) -> Reply {
    match d {
        Decision::Deny { reason } => Reply::exit2(reason),
        // Cascade takes no rewritten input and cannot ask: `caps` never
        // produces these, and a stray one is refused rather than run.
        Decision::Rewrite { input, reason, .. } => {
            Reply::exit2(&super::rewrite_required(reason, input))
        }
        Decision::Ask { reason, .. } => Reply::exit2(reason),
        Decision::Allow { context } => Reply::text(&[system_message, context.as_deref()]),
    }
}
