//! Factory Droid: Claude Code's hook events and answers
//! (`permissionDecision`, `additionalContext`, `decision: block` on a stop)
//! over Droid's own tool names (`Execute`, `Create`, `ApplyPatch`, …), in
//! a `hooks.json` keyed by event name.
//!
//! Seen in `droid exec` (the live suite): a PreToolUse `ask` is logged and
//! the call runs without a question under the auto modes, and a PreToolUse
//! `additionalContext` never reaches the model, so ahp neither asks nor
//! hands context there: a prompt is refused with its reason
//! ([`super::context_reaches_model`]). `updatedInput` is what runs.

use ahp_engine::Event;

/// Droid's events (its hooks reference).
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("SessionEnd", Some(Event::PostSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("Notification", Some(Event::Notification)),
    ("Stop", Some(Event::PreAgentTurnStop)),
    ("SubagentStop", Some(Event::PostSubagent)),
    ("PreCompact", Some(Event::PreContextCompact)),
];

/// Droid's tools.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("Execute", "shell"),
    ("Create", "write"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("ApplyPatch", "edit"),
    ("Read", "read"),
    ("LS", "read"),
    ("Grep", "read"),
    ("Glob", "read"),
    ("FetchUrl", "fetch"),
    ("WebSearch", "fetch"),
];
