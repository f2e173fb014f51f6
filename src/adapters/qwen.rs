//! Qwen Code: Claude Code's hook events and answers (`permissionDecision`
//! allow / deny / ask, `additionalContext`, `decision: block` on a stop)
//! over Gemini CLI's tool names (`run_shell_command`, `write_file`, …).
//!
//! Its PreToolUse answer takes no rewritten input (Qwen Code 0.24 applies
//! `updatedInput` only from a permission dialog's hook, which an
//! auto-approved call never opens; found by the live suite), so a control
//! there falls back as for other agents that cannot take one
//! (`settings.rewrite_fallback`).

use super::claude;
use ahp_engine::Event;

/// Qwen Code's events: Claude Code's names.
pub(super) const EVENTS: &[(&str, Option<Event>)] = claude::EVENTS;

/// Qwen Code's tools: Gemini CLI's names.
pub(super) const TOOLS: &[(&str, &str)] = super::gemini::TOOLS;
