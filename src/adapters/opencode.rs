//! OpenCode: it has no command hooks, so `ahp install opencode` writes a
//! small plugin (`src/install/opencode-plugin.js`) that calls `ahp hook
//! opencode` with Claude Code's payloads over OpenCode's own tool names
//! (`bash`, `write`, `edit`, …) and reads Claude Code's answers back: a
//! deny is thrown, so the model reads the reason as the tool's result; a
//! rewritten input replaces the call's arguments; context is appended to
//! the user's message or to the tool's result; a blocked stop sends the
//! reason back as the next message.
//!
//! OpenCode's plugins cannot ask the user (its `permission.ask` hook is
//! never called), so a prompt goes through `settings.prompt_fallback`.

use ahp_engine::Event;

/// The events the plugin sends, in Claude Code's names.
pub(super) const EVENTS: &[(&str, Option<Event>)] = &[
    ("SessionStart", Some(Event::PreSession)),
    ("UserPromptSubmit", Some(Event::PreAgentTurn)),
    ("PreToolUse", Some(Event::PreToolUse)),
    ("PostToolUse", Some(Event::PostToolUse)),
    ("Stop", Some(Event::PreAgentTurnStop)),
];

/// OpenCode's tools.
pub(super) const TOOLS: &[(&str, &str)] = &[
    ("bash", "shell"),
    ("write", "write"),
    ("edit", "edit"),
    ("apply_patch", "edit"),
    ("read", "read"),
    ("list", "read"),
    ("glob", "read"),
    ("grep", "read"),
    ("webfetch", "fetch"),
    ("websearch", "fetch"),
];
