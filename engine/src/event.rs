//! Events: the control points where ahp is asked for a decision.
//!
//! Canonical names are kebab-case (SPEC §2). Every alias an agent or an older
//! standard uses (`PreToolUse`, `before_tool`, `pre-tool-call`, …) resolves to
//! one canonical [`Event`], so policies are written once.

use crate::Intensity;
use crate::suggest::did_you_mean;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

macro_rules! events {
    ($($variant:ident => $name:literal, [$($allowed:ident),*], $doc:literal;)*) => {
        /// A control point. See SPEC §2 for when each one fires.
        ///
        /// ```
        /// use ahp_engine::Event;
        /// let e: Event = "PreToolUse".parse().unwrap();
        /// assert_eq!(e, Event::PreToolUse);
        /// assert_eq!(e.as_str(), "pre-tool-use");
        /// assert_eq!("before_tool".parse::<Event>().unwrap(), Event::PreToolUse);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Event {
            $(#[doc = $doc] $variant,)*
        }

        impl Event {
            /// Every canonical event, in the order of SPEC §2.
            pub const ALL: &'static [Event] = &[$(Event::$variant,)*];

            /// The canonical kebab-case name.
            pub fn as_str(self) -> &'static str {
                match self { $(Event::$variant => $name,)* }
            }

            /// The intensities a signal may have at this event. `aid` is
            /// always allowed: context can be given anywhere.
            pub fn allowed(self) -> &'static [Intensity] {
                match self { $(Event::$variant => &[Intensity::Aid, $(Intensity::$allowed),*],)* }
            }
        }
    };
}

events! {
    PreIssueStart => "pre-issue-start", [Control, Block], "Before an issue is started.";
    PostIssueStart => "post-issue-start", [], "After an issue was started.";
    PreToolUse => "pre-tool-use", [Prompt, Control, Block], "Before a tool call runs (≡ pre-tool-call).";
    PostToolUse => "post-tool-use", [], "After a tool call succeeded (≡ post-tool-call).";
    PostToolUseFailure => "post-tool-use-failure", [], "After a tool call failed (≡ post-tool-call-failure).";
    PreIssueSubmit => "pre-issue-submit", [Prompt, Control, Block], "Before an issue is submitted for review.";
    PostIssueSubmit => "post-issue-submit", [], "After an issue was submitted.";
    PreIssueClose => "pre-issue-close", [Block], "Before an issue is closed.";
    PostIssueClose => "post-issue-close", [], "After an issue was closed.";
    PreIssueCreate => "pre-issue-create", [Control, Block], "Before an issue is created.";
    PostIssueCreate => "post-issue-create", [], "After an issue was created.";
    PreIssueOpen => "pre-issue-open", [Control, Block], "Before a closed or cancelled issue is opened again.";
    PostIssueOpen => "post-issue-open", [], "After an issue was opened again.";
    PreIssueCancel => "pre-issue-cancel", [Block], "Before an issue is cancelled.";
    PostIssueCancel => "post-issue-cancel", [], "After an issue was cancelled.";
    PreIssueDelete => "pre-issue-delete", [Block], "Before an issue is deleted.";
    PostIssueDelete => "post-issue-delete", [], "After an issue was deleted.";
    PreSession => "pre-session", [Prompt, Control, Block], "When an agent session starts.";
    PostSession => "post-session", [], "When an agent session ends.";
    PreAgentTurn => "pre-agent-turn", [Prompt, Control, Block], "Before the agent processes user input.";
    PostAgentTurn => "post-agent-turn", [], "After the agent processed user input.";
    PreAgentTurnStop => "pre-agent-turn-stop", [Prompt, Control, Block], "Before the agent stops: the quality gate; a block makes it keep working.";
    PostAgentTurnStop => "post-agent-turn-stop", [], "After the agent stopped.";
    PreSubagent => "pre-subagent", [Prompt, Control, Block], "Before a subagent starts.";
    PostSubagent => "post-subagent", [], "After a subagent finished.";
    PreContextCompact => "pre-context-compact", [Prompt, Control, Block], "Before the context is compacted.";
    PostContextCompact => "post-context-compact", [], "After the context was compacted.";
    PermissionRequest => "permission-request", [Prompt, Block], "When the agent is about to ask the user to approve a tool call: a block denies it, a prompt leaves it to the user.";
    Notification => "notification", [], "When the agent notifies the user (waiting for input, a permission prompt).";
    StopFailure => "stop-failure", [], "When a turn ended on an error (API error, rate limit) instead of a stop.";
}

/// Aliases, keyed by their normalized form (see [`normalize`]).
const ALIASES: &[(&str, Event)] = &[
    // Agent Hooks standard names.
    ("pre-tool-call", Event::PreToolUse),
    ("post-tool-call", Event::PostToolUse),
    ("post-tool-call-failure", Event::PostToolUseFailure),
    // Legacy snake names of the standard's README.
    ("before-tool", Event::PreToolUse),
    ("after-tool", Event::PostToolUse),
    ("after-tool-failure", Event::PostToolUseFailure),
    ("session-start", Event::PreSession),
    ("session-end", Event::PostSession),
    ("before-agent", Event::PreAgentTurn),
    ("after-agent", Event::PostAgentTurn),
    ("before-stop", Event::PreAgentTurnStop),
    ("subagent-start", Event::PreSubagent),
    ("subagent-stop", Event::PostSubagent),
    ("pre-compact", Event::PreContextCompact),
    ("post-compact", Event::PostContextCompact),
    // Agent PascalCase / camelCase names not covered above.
    ("user-prompt-submit", Event::PreAgentTurn),
    ("user-prompt-submitted", Event::PreAgentTurn),
    ("stop", Event::PreAgentTurnStop),
    ("agent-stop", Event::PreAgentTurnStop),
    ("before-tool-use", Event::PreToolUse),
    ("after-tool-use", Event::PostToolUse),
    ("pre-compress", Event::PreContextCompact),
];

/// Lowercase kebab form: `PreToolUse` → `pre-tool-use`, `before_tool` →
/// `before-tool`, `preToolUse` → `pre-tool-use`.
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.trim().chars() {
        if c == '_' || c == '-' || c == ' ' {
            if !out.ends_with('-') {
                out.push('-');
            }
            prev_lower = false;
        } else if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// The error for a name that is no event and no alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct UnknownEvent {
    /// What was given (control characters escaped when shown).
    pub name: String,
    /// The closest canonical name, if any is close.
    pub suggestion: Option<&'static str>,
}

impl UnknownEvent {
    fn render(&self) -> String {
        let mut s = format!("unknown event `{}`", self.name.escape_debug());
        if let Some(sug) = self.suggestion {
            s.push_str(&format!(" (did you mean `{sug}`?)"));
        }
        s.push_str("; valid events: ");
        s.push_str(
            &Event::ALL
                .iter()
                .map(|e| e.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s
    }
}

impl Event {
    /// Resolves a canonical name or any alias. Case and `_`/`-` do not matter.
    pub fn parse(name: &str) -> Result<Event, UnknownEvent> {
        let norm = normalize(name);
        if let Some(e) = Event::ALL.iter().find(|e| e.as_str() == norm) {
            return Ok(*e);
        }
        if let Some((_, e)) = ALIASES.iter().find(|(a, _)| *a == norm) {
            return Ok(*e);
        }
        let names = Event::ALL
            .iter()
            .map(|e| e.as_str())
            .chain(ALIASES.iter().map(|(a, _)| *a));
        let suggestion = did_you_mean(&norm, names).map(|s| {
            // Suggest the canonical name even when an alias was closest.
            Event::parse(s).map(|e| e.as_str()).unwrap_or(s)
        });
        Err(UnknownEvent {
            name: name.to_string(),
            suggestion,
        })
    }

    /// Whether this is an issue-lifecycle event (`pre-issue-*`,
    /// `post-issue-*`): the events for which ahp computes the changed files
    /// and commits.
    ///
    /// ```
    /// use ahp_engine::Event;
    /// assert!(Event::PreIssueClose.is_issue());
    /// assert!(!Event::PreToolUse.is_issue());
    /// ```
    pub fn is_issue(self) -> bool {
        matches!(
            self,
            Event::PreIssueStart
                | Event::PostIssueStart
                | Event::PreIssueSubmit
                | Event::PostIssueSubmit
                | Event::PreIssueClose
                | Event::PostIssueClose
                | Event::PreIssueCreate
                | Event::PostIssueCreate
                | Event::PreIssueOpen
                | Event::PostIssueOpen
                | Event::PreIssueCancel
                | Event::PostIssueCancel
                | Event::PreIssueDelete
                | Event::PostIssueDelete
        )
    }

    /// Whether `intensity` may be delivered at this event unchanged.
    pub fn allows(self, intensity: Intensity) -> bool {
        self.allowed().contains(&intensity)
    }

    /// The aliases that resolve to this event (normalized kebab form).
    pub fn aliases(self) -> impl Iterator<Item = &'static str> {
        ALIASES
            .iter()
            .filter(move |(_, e)| *e == self)
            .map(|(a, _)| *a)
    }
}

impl FromStr for Event {
    type Err = UnknownEvent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Event::parse(s)
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Event::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Event {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Event".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Event::ALL.iter().map(|e| e.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "description": "An event name: canonical kebab-case, or an alias such as PreToolUse or before_tool.",
            "examples": names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_canonical_name_round_trips() {
        for e in Event::ALL {
            assert_eq!(Event::parse(e.as_str()).unwrap(), *e);
        }
        assert_eq!(Event::ALL.len(), 30);
    }

    #[test]
    fn spec_aliases_resolve() {
        let cases = [
            ("pre-tool-call", Event::PreToolUse),
            ("post-tool-call", Event::PostToolUse),
            ("before_tool", Event::PreToolUse),
            ("after_tool", Event::PostToolUse),
            ("after_tool_failure", Event::PostToolUseFailure),
            ("session_start", Event::PreSession),
            ("session_end", Event::PostSession),
            ("before_agent", Event::PreAgentTurn),
            ("after_agent", Event::PostAgentTurn),
            ("before_stop", Event::PreAgentTurnStop),
            ("subagent_start", Event::PreSubagent),
            ("subagent_stop", Event::PostSubagent),
            ("pre_compact", Event::PreContextCompact),
            ("PreToolUse", Event::PreToolUse),
            ("PostToolUse", Event::PostToolUse),
            ("PostToolUseFailure", Event::PostToolUseFailure),
            ("UserPromptSubmit", Event::PreAgentTurn),
            ("Stop", Event::PreAgentTurnStop),
            ("SubagentStart", Event::PreSubagent),
            ("SubagentStop", Event::PostSubagent),
            ("SessionStart", Event::PreSession),
            ("SessionEnd", Event::PostSession),
            ("PreCompact", Event::PreContextCompact),
            ("PostCompact", Event::PostContextCompact),
            ("preToolUse", Event::PreToolUse),
            ("post-tool-call-failure", Event::PostToolUseFailure),
            ("PermissionRequest", Event::PermissionRequest),
            ("permissionRequest", Event::PermissionRequest),
            ("Notification", Event::Notification),
            ("StopFailure", Event::StopFailure),
        ];
        for (name, want) in cases {
            assert_eq!(Event::parse(name), Ok(want), "{name}");
        }
    }

    #[test]
    fn unknown_event_suggests_and_lists() {
        let err = Event::parse("pre-tool-usee").unwrap_err();
        assert_eq!(err.suggestion, Some("pre-tool-use"));
        let msg = err.to_string();
        assert!(msg.contains("did you mean `pre-tool-use`"), "{msg}");
        assert!(msg.contains("pre-issue-close"), "{msg}");
    }

    #[test]
    fn control_characters_are_escaped_in_errors() {
        let msg = Event::parse("bad\u{1b}[31mname").unwrap_err().to_string();
        assert!(!msg.contains('\u{1b}'), "{msg}");
    }

    #[test]
    fn post_events_allow_only_aid() {
        for e in Event::ALL
            .iter()
            .filter(|e| e.as_str().starts_with("post-"))
        {
            assert_eq!(e.allowed(), &[Intensity::Aid], "{e}");
        }
        assert!(Event::PreIssueClose.allows(Intensity::Block));
        assert!(!Event::PreIssueClose.allows(Intensity::Prompt));
        assert!(Event::PreToolUse.allows(Intensity::Prompt));
    }
}
