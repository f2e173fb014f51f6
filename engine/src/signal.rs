//! Signals (what an oracle says) and responses (what the agent did about it),
//! with exactly the wire shape of SPEC §6.
//!
//! The payload is the source of truth for a signal's intensity: constructors
//! and [`Signal::convert_to`] keep `header.intensity` in step with it, and the
//! engine re-stamps it before recording.

use crate::{Event, Intensity};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use uuid::Uuid;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Identity and classification of a signal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalHeader {
    /// UUID v4, unique per signal.
    pub id: Uuid,
    /// A stable, machine-readable name of what was found
    /// (e.g. `dangerous-command`); defaults to the intensity's name.
    #[serde(rename = "type")]
    pub signal_type: String,
    /// When the signal was raised (RFC 3339, UTC).
    pub timestamp: DateTime<Utc>,
    /// The id of the hooks.yaml entry (or script hook) that raised it.
    pub source: String,
    /// block, control, prompt or aid.
    pub intensity: Intensity,
    /// Ties together every record of one dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The intensity the oracle asked for, when the event did not allow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clamped_from: Option<Intensity>,
    /// The intensity before an entry's `intensity:` override or an
    /// escalation rule changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_from: Option<Intensity>,
    /// The id of the escalation rule that raised the signal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    /// True for `async: true` entries: recorded only, never part of a verdict.
    #[serde(default, skip_serializing_if = "is_false")]
    pub detached: bool,
    /// True for `mode: shadow` entries: what the entry would have said
    /// (its intensity is the would-be one), recorded only, never part of a
    /// verdict or an agent's answer.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shadow: bool,
}

/// Where a signal applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SignalContext {
    /// The event the signal was raised at. Filled in by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<Event>,
    /// The issue being worked on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<String>,
    /// Files the signal is about.
    #[serde(default)]
    pub files: Vec<String>,
}

/// How serious a prompt is.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a glance.
    Low,
    /// Worth reading before going on (the default).
    #[default]
    Medium,
    /// Read it: going on is probably wrong.
    High,
}

/// What a `block` signal carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockPayload {
    /// Why the work must stop.
    pub reason: String,
    /// Whether the agent can fix it and retry.
    #[serde(default = "default_true")]
    pub resolvable: bool,
    /// The steps that resolve it, in order.
    #[serde(default)]
    pub resolution_path: Vec<String>,
}

/// A change the engine applies to the context (and, through the adapters,
/// to the agent's input).
///
/// ```
/// use ahp_engine::{Modification, HookContext};
/// let m = Modification::set("tool.input.command", serde_json::json!("ls"));
/// assert_eq!(m.target, "tool.input.command");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Modification {
    /// Dotted path into the context, e.g. `tool.input.command`.
    pub target: String,
    /// How `value` is applied.
    pub op: ModOp,
    /// The new value (absent for `remove`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// A human-readable account of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The operation of a [`Modification`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModOp {
    /// Replace the value at the target (creating parents as needed).
    Set,
    /// Deep-merge an object into the target: maps merge, everything else
    /// replaces.
    Merge,
    /// Delete the target.
    Remove,
}

impl Modification {
    /// `target = value`.
    pub fn set(target: impl Into<String>, value: Value) -> Self {
        Modification {
            target: target.into(),
            op: ModOp::Set,
            value: Some(value),
            description: None,
        }
    }

    /// Deep-merge `value` into `target`.
    pub fn merge(target: impl Into<String>, value: Value) -> Self {
        Modification {
            target: target.into(),
            op: ModOp::Merge,
            value: Some(value),
            description: None,
        }
    }

    /// Delete `target`.
    pub fn remove(target: impl Into<String>) -> Self {
        Modification {
            target: target.into(),
            op: ModOp::Remove,
            value: None,
            description: None,
        }
    }

    /// Adds a human-readable description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What a `control` signal carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlPayload {
    /// The changes, applied in order.
    pub modifications: Vec<Modification>,
    /// Whether the change can be undone.
    #[serde(default = "default_true")]
    pub reversible: bool,
    /// Why the change is made (shown to the agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What a `prompt` signal carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptPayload {
    /// low, medium or high.
    #[serde(default)]
    pub severity: Severity,
    /// The warning.
    pub message: String,
    /// What the agent could do instead.
    #[serde(default)]
    pub suggestions: Vec<String>,
    /// Whether the agent may go on after acknowledging.
    #[serde(default = "default_true")]
    pub continue_allowed: bool,
}

/// What an `aid` signal carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AidPayload {
    /// Context for the agent.
    pub context_info: String,
    /// Practices worth following here.
    #[serde(default)]
    pub best_practices: Vec<String>,
    /// Things to do next.
    #[serde(default)]
    pub follow_ups: Vec<String>,
    /// Structured facts for the log and for tools reading it (e.g. the
    /// change a `ChangeLogger` recorded); absent when the oracle has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

fn default_true() -> bool {
    true
}

/// The intensity-specific part of a signal. Serialized without a tag: the
/// header's `intensity` says which one it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// See [`BlockPayload`].
    Block(BlockPayload),
    /// See [`ControlPayload`].
    Control(ControlPayload),
    /// See [`PromptPayload`].
    Prompt(PromptPayload),
    /// See [`AidPayload`].
    Aid(AidPayload),
}

impl Payload {
    /// The intensity this payload belongs to.
    pub fn intensity(&self) -> Intensity {
        match self {
            Payload::Block(_) => Intensity::Block,
            Payload::Control(_) => Intensity::Control,
            Payload::Prompt(_) => Intensity::Prompt,
            Payload::Aid(_) => Intensity::Aid,
        }
    }

    /// The main human-readable text: reason, message or context.
    pub fn summary(&self) -> String {
        match self {
            Payload::Block(b) => b.reason.clone(),
            Payload::Control(c) => c.message.clone().unwrap_or_else(|| {
                c.modifications
                    .iter()
                    .map(|m| {
                        m.description
                            .clone()
                            .unwrap_or_else(|| format!("{:?} {}", m.op, m.target).to_lowercase())
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
            Payload::Prompt(p) => p.message.clone(),
            Payload::Aid(a) => a.context_info.clone(),
        }
    }

    /// The follow-up steps: resolution path, suggestions or follow-ups.
    pub fn steps(&self) -> Vec<String> {
        match self {
            Payload::Block(b) => b.resolution_path.clone(),
            Payload::Control(c) => c
                .modifications
                .iter()
                .filter_map(|m| m.description.clone())
                .collect(),
            Payload::Prompt(p) => p.suggestions.clone(),
            Payload::Aid(a) => a.follow_ups.clone(),
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Block(p) => p.serialize(s),
            Payload::Control(p) => p.serialize(s),
            Payload::Prompt(p) => p.serialize(s),
            Payload::Aid(p) => p.serialize(s),
        }
    }
}

/// One typed signal: header, context, payload (SPEC §6).
///
/// ```
/// use ahp_engine::{Signal, Intensity};
/// let s = Signal::block("rm -rf / destroys the system")
///     .with_resolution_path(["use a path inside the project"])
///     .with_type("dangerous-command");
/// assert_eq!(s.intensity(), Intensity::Block);
/// let json = serde_json::to_value(&s).unwrap();
/// assert_eq!(json["payload"]["reason"], "rm -rf / destroys the system");
/// assert_eq!(json["header"]["intensity"], "block");
/// let back: Signal = serde_json::from_value(json).unwrap();
/// assert_eq!(back, s);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signal {
    /// Identity and classification.
    pub header: SignalHeader,
    /// Event, issue and files.
    pub context: SignalContext,
    /// The intensity-specific content.
    pub payload: Payload,
}

impl<'de> Deserialize<'de> for Signal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            header: SignalHeader,
            #[serde(default)]
            context: SignalContext,
            payload: Value,
        }
        let raw = Raw::deserialize(d)?;
        let payload = match raw.header.intensity {
            Intensity::Block => serde_json::from_value(raw.payload).map(Payload::Block),
            Intensity::Control => serde_json::from_value(raw.payload).map(Payload::Control),
            Intensity::Prompt => serde_json::from_value(raw.payload).map(Payload::Prompt),
            Intensity::Aid => serde_json::from_value(raw.payload).map(Payload::Aid),
        }
        .map_err(|e| {
            serde::de::Error::custom(format!(
                "payload does not fit intensity `{}`: {e}",
                raw.header.intensity
            ))
        })?;
        Ok(Signal {
            header: raw.header,
            context: raw.context,
            payload,
        })
    }
}

impl Signal {
    /// A signal with this payload, a fresh id and the current time. The
    /// engine fills in `source`, `hook` and `correlation_id`.
    pub fn new(payload: Payload) -> Signal {
        let intensity = payload.intensity();
        Signal {
            header: SignalHeader {
                id: Uuid::new_v4(),
                signal_type: intensity.as_str().to_string(),
                timestamp: Utc::now(),
                source: String::new(),
                intensity,
                correlation_id: None,
                clamped_from: None,
                escalated_from: None,
                escalation: None,
                detached: false,
                shadow: false,
            },
            context: SignalContext::default(),
            payload,
        }
    }

    /// A resolvable block with a reason.
    pub fn block(reason: impl Into<String>) -> Signal {
        Signal::new(Payload::Block(BlockPayload {
            reason: reason.into(),
            resolvable: true,
            resolution_path: Vec::new(),
        }))
    }

    /// A reversible control with these modifications.
    pub fn control(modifications: Vec<Modification>) -> Signal {
        Signal::new(Payload::Control(ControlPayload {
            modifications,
            reversible: true,
            message: None,
        }))
    }

    /// A medium-severity prompt that allows continuing.
    pub fn prompt(message: impl Into<String>) -> Signal {
        Signal::new(Payload::Prompt(PromptPayload {
            severity: Severity::Medium,
            message: message.into(),
            suggestions: Vec::new(),
            continue_allowed: true,
        }))
    }

    /// Context for the agent.
    pub fn aid(context_info: impl Into<String>) -> Signal {
        Signal::new(Payload::Aid(AidPayload {
            context_info: context_info.into(),
            best_practices: Vec::new(),
            follow_ups: Vec::new(),
            data: None,
        }))
    }

    /// The signal's intensity (its payload's).
    pub fn intensity(&self) -> Intensity {
        self.payload.intensity()
    }

    /// Sets the machine-readable type.
    pub fn with_type(mut self, signal_type: impl Into<String>) -> Signal {
        self.header.signal_type = signal_type.into();
        self
    }

    /// Sets the files the signal is about.
    pub fn with_files<I, S>(mut self, files: I) -> Signal
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.context.files = files.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the steps: a block's resolution path, a prompt's suggestions or
    /// an aid's follow-ups. Ignored for control.
    pub fn with_resolution_path<I, S>(mut self, steps: I) -> Signal
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let steps: Vec<String> = steps.into_iter().map(Into::into).collect();
        match &mut self.payload {
            Payload::Block(b) => b.resolution_path = steps,
            Payload::Prompt(p) => p.suggestions = steps,
            Payload::Aid(a) => a.follow_ups = steps,
            Payload::Control(_) => {}
        }
        self
    }

    /// Sets a prompt's severity (ignored for other intensities).
    pub fn with_severity(mut self, severity: Severity) -> Signal {
        if let Payload::Prompt(p) = &mut self.payload {
            p.severity = severity;
        }
        self
    }

    /// Sets an aid's structured `data` (ignored for other intensities).
    ///
    /// ```
    /// use ahp_engine::{Payload, Signal};
    /// let s = Signal::aid("Write src/a.rs: +3 lines").with_data(serde_json::json!({"lines_added": 3}));
    /// assert!(matches!(&s.payload, Payload::Aid(a) if a.data.as_ref().unwrap()["lines_added"] == 3));
    /// ```
    pub fn with_data(mut self, data: Value) -> Signal {
        if let Payload::Aid(a) = &mut self.payload {
            a.data = Some(data);
        }
        self
    }

    /// Sets a control's message (ignored for other intensities).
    pub fn with_message(mut self, message: impl Into<String>) -> Signal {
        if let Payload::Control(c) = &mut self.payload {
            c.message = Some(message.into());
        }
        self
    }

    /// The same finding at another intensity, carrying the text over
    /// (reason ↔ message ↔ context, resolution path ↔ suggestions ↔
    /// follow-ups). The header keeps its id; the caller records why
    /// (`clamped_from` or `escalated_from`).
    pub fn convert_to(mut self, target: Intensity) -> Signal {
        if self.intensity() == target {
            return self;
        }
        let summary = self.payload.summary();
        let steps = self.payload.steps();
        let modifications = match &self.payload {
            Payload::Control(c) => c.modifications.clone(),
            _ => Vec::new(),
        };
        let severity = match &self.payload {
            Payload::Block(_) | Payload::Control(_) => Severity::High,
            Payload::Prompt(p) => p.severity,
            Payload::Aid(_) => Severity::Low,
        };
        self.payload = match target {
            Intensity::Block => Payload::Block(BlockPayload {
                reason: summary,
                resolvable: true,
                resolution_path: steps,
            }),
            Intensity::Control => Payload::Control(ControlPayload {
                modifications,
                reversible: true,
                message: Some(summary),
            }),
            Intensity::Prompt => Payload::Prompt(PromptPayload {
                severity,
                message: summary,
                suggestions: steps,
                continue_allowed: true,
            }),
            Intensity::Aid => Payload::Aid(AidPayload {
                context_info: summary,
                best_practices: Vec::new(),
                follow_ups: steps,
                data: None,
            }),
        };
        self.header.intensity = target;
        self
    }
}

crate::name_enum! {
    /// What an agent (or a person) did about a signal.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Action {
        /// block: fixed along the resolution path; will retry.
        RetryAfterFix => "retry_after_fix",
        /// block: going on anyway, knowingly.
        ProceedWithRisk => "proceed_with_risk",
        /// block: gave up.
        Abort => "abort",
        /// control: the modification stands.
        AcceptModification => "accept_modification",
        /// control: the modification was undone.
        RejectModification => "reject_modification",
        /// prompt: read and noted.
        Acknowledge => "acknowledge",
        /// prompt: did what was suggested.
        ApplySuggestion => "apply_suggestion",
        /// prompt: ignored.
        Dismiss => "dismiss",
        /// aid: used the suggestion.
        SuggestionApplied => "suggestion_applied",
        /// aid: later.
        SuggestionDeferred => "suggestion_deferred",
    }
}

impl Action {
    /// The intensity this action answers.
    pub fn intensity(self) -> Intensity {
        match self {
            Action::RetryAfterFix | Action::ProceedWithRisk | Action::Abort => Intensity::Block,
            Action::AcceptModification | Action::RejectModification => Intensity::Control,
            Action::Acknowledge | Action::ApplySuggestion | Action::Dismiss => Intensity::Prompt,
            Action::SuggestionApplied | Action::SuggestionDeferred => Intensity::Aid,
        }
    }

    /// The actions that answer a signal of `intensity`.
    pub fn for_intensity(intensity: Intensity) -> impl Iterator<Item = Action> {
        Action::ALL
            .into_iter()
            .filter(move |a| a.intensity() == intensity)
    }
}

impl std::str::FromStr for Action {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().replace('-', "_").to_ascii_lowercase();
        Action::ALL
            .into_iter()
            .find(|a| a.as_str() == norm)
            .ok_or_else(|| {
                let names: Vec<_> = Action::ALL.iter().map(|a| a.as_str()).collect();
                // Quoted as given: a mistyped argument can hold a
                // credential, and masking reads the text as written.
                let given = s.trim();
                match crate::suggest::did_you_mean(&norm, names.iter().copied()) {
                    Some(s) => format!("unknown action `{given}` (did you mean `{s}`?)"),
                    None => format!("unknown action `{given}`; valid: {}", names.join(", ")),
                }
            })
    }
}

/// The error when an action does not answer the signal's intensity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("action `{}` answers {} signals, but signal {signal_id} is {intensity}; valid actions: {}", action.as_str(), action.intensity(), Action::for_intensity(*intensity).map(|a| a.as_str()).collect::<Vec<_>>().join(", "))]
pub struct ActionMismatch {
    /// The signal answered.
    pub signal_id: Uuid,
    /// Its intensity.
    pub intensity: Intensity,
    /// The action given.
    pub action: Action,
}

/// The record of what was done about a signal (SPEC §6).
///
/// ```
/// use ahp_engine::{Action, Signal, SignalResponse};
/// let s = Signal::prompt("large change");
/// assert!(SignalResponse::new(&s, Action::Dismiss, None).is_ok());
/// assert!(SignalResponse::new(&s, Action::Abort, None).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalResponse {
    /// This record's own id, unique and stable: a sink deduplicates by it.
    /// Written by every ahp since records had ids; a line from an older log
    /// has none, and the reader derives one from the line's bytes (so it is
    /// the same at every read).
    #[serde(default, skip_serializing_if = "Uuid::is_nil")]
    pub id: Uuid,
    /// The signal answered.
    pub signal_id: Uuid,
    /// When it was answered (RFC 3339).
    pub consumed_at: DateTime<Utc>,
    /// What was done.
    pub action: Action,
    /// Free-form details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl SignalResponse {
    /// A response to `signal`, rejected when the action does not fit its
    /// intensity.
    pub fn new(
        signal: &Signal,
        action: Action,
        details: Option<Value>,
    ) -> Result<Self, ActionMismatch> {
        Self::for_intensity(signal.header.id, signal.intensity(), action, details)
    }

    /// As [`SignalResponse::new`], when only the signal's id and intensity
    /// are at hand (e.g. read back from the log).
    pub fn for_intensity(
        signal_id: Uuid,
        intensity: Intensity,
        action: Action,
        details: Option<Value>,
    ) -> Result<Self, ActionMismatch> {
        if action.intensity() != intensity {
            return Err(ActionMismatch {
                signal_id,
                intensity,
                action,
            });
        }
        Ok(SignalResponse {
            id: uuid::Uuid::new_v4(),
            signal_id,
            consumed_at: Utc::now(),
            action,
            details,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shape_has_spec_fields() {
        let s = Signal::prompt("too many files").with_resolution_path(["split"]);
        let v = serde_json::to_value(&s).unwrap();
        let header = v["header"].as_object().unwrap();
        for k in ["id", "type", "timestamp", "source", "intensity"] {
            assert!(header.contains_key(k), "header.{k}");
        }
        assert_eq!(v["payload"]["severity"], "medium");
        assert_eq!(v["payload"]["suggestions"], json!(["split"]));
        assert_eq!(v["payload"]["continue_allowed"], true);
        assert!(v["context"]["files"].is_array());
        // UUID v4 and RFC 3339.
        let id = Uuid::parse_str(v["header"]["id"].as_str().unwrap()).unwrap();
        assert_eq!(id.get_version_num(), 4);
        let ts = v["header"]["timestamp"].as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(ts).is_ok(), "{ts}");
    }

    #[test]
    fn payload_must_fit_intensity_when_read() {
        let mut v = serde_json::to_value(Signal::aid("x")).unwrap();
        v["header"]["intensity"] = json!("block");
        let err = serde_json::from_value::<Signal>(v).unwrap_err().to_string();
        assert!(
            err.contains("payload does not fit intensity `block`"),
            "{err}"
        );
    }

    #[test]
    fn conversion_carries_text_over() {
        let s = Signal::block("no").with_resolution_path(["fix a", "fix b"]);
        let id = s.header.id;
        let aid = s.convert_to(Intensity::Aid);
        assert_eq!(aid.header.id, id);
        assert_eq!(aid.header.intensity, Intensity::Aid);
        match &aid.payload {
            Payload::Aid(a) => {
                assert_eq!(a.context_info, "no");
                assert_eq!(a.follow_ups, vec!["fix a", "fix b"]);
            }
            other => panic!("{other:?}"),
        }
        let p = aid.convert_to(Intensity::Prompt);
        assert_eq!(p.payload.summary(), "no");
    }

    #[test]
    fn actions_fit_intensities() {
        for a in Action::ALL {
            let parsed: Action = a.as_str().parse().unwrap();
            assert_eq!(parsed, a);
        }
        let block = Signal::block("x");
        let err = SignalResponse::new(&block, Action::Dismiss, None).unwrap_err();
        assert!(err.to_string().contains("retry_after_fix"), "{err}");
        assert!(
            "dismis"
                .parse::<Action>()
                .unwrap_err()
                .contains("did you mean `dismiss`")
        );
    }
}
