//! Kimi Code CLI: Claude-shaped events and payloads; a block is exit 2
//! with the reason on stderr (or `permissionDecision: deny` at a tool
//! call), and stdout on exit 0 is added to the model's context. It has no
//! "ask" and, in its docs, no rewritten input: a control goes through
//! `settings.rewrite_fallback` (see docs/decisions.md).

use super::{Decision, Reply};
use ahp_engine::Event;
use serde_json::json;

/// Kimi's events.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("PostToolUseFailure", Some(Event::PostToolUseFailure)),
    ("Stop", Some(Event::PreAgentTurnStop)),
    ("SubagentStart", Some(Event::PreSubagent)),
    ("SubagentStop", Some(Event::PostSubagent)),
    ("StopFailure", Some(Event::StopFailure)),
    ("PreCompact", Some(Event::PreContextCompact)),
    ("PostCompact", Some(Event::PostContextCompact)),
    ("Notification", Some(Event::Notification)),
];

/// Kimi's tools: Kimi Code's, then the names the Kimi CLI before it
/// gave the same tools.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("Bash", "shell"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("Read", "read"),
    ("Glob", "read"),
    ("Grep", "read"),
    ("FetchURL", "fetch"),
    ("WebSearch", "fetch"),
    ("Shell", "shell"),
    ("WriteFile", "write"),
    ("StrReplaceFile", "edit"),
    ("ReadFile", "read"),
    ("SearchWeb", "fetch"),
];

/// Kimi's answer.
pub(super) fn render(
    native: &str,
    event: Event,
    d: &Decision,
    system_message: Option<&str>,
) -> Reply {
    let text = |c: Option<&str>| Reply::text(&[system_message, c]);
    let deny = |reason: &str| {
        Reply::json(json!({
            "hookSpecificOutput": {
                "hookEventName": native,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }))
    };
    match d {
        Decision::Deny { reason } if event == Event::PreToolUse => deny(reason),
        Decision::Deny { reason } => Reply::exit2(reason),
        // Kimi takes no rewritten input: `caps` never produces this, and a
        // stray one is refused rather than let run unmodified.
        Decision::Rewrite { input, reason, .. } if event == Event::PreToolUse => {
            deny(&super::rewrite_required(reason, input))
        }
        // Kimi cannot ask: `caps` never produces this, but a stray one is
        // shown, not lost.
        Decision::Ask { reason, .. } | Decision::Rewrite { reason, .. } => text(Some(reason)),
        Decision::Allow { context } => text(context.as_deref()),
    }
}
