//! The hooks.yaml file model as documented types, and its JSON Schema
//! (draft-07, the version YAML language servers understand).
//!
//! Validation itself walks the position-aware YAML tree (so every error has
//! a line and column); a test keeps the key lists here and there in step.

use ahp_engine::Registry;
use ahp_engine::oracle::Strings;
use ahp_engine::{Intensity, OnBlock, OnError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The oracle that runs HOOK.md hooks; a hooks file cannot name it.
pub const SCRIPT_ORACLE: &str = "Script";

/// A hooks.yaml file (any layer).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, title = "ahp hooks.yaml")]
#[allow(dead_code)]
pub struct HooksFile {
    /// Format version; 1 when given.
    pub version: Option<u32>,
    /// Global settings; later layers override key by key.
    pub settings: Option<SettingsSpec>,
    /// Entries per event (canonical name or any alias, e.g. `pre-tool-use`,
    /// `PreToolUse`, `before_tool`).
    pub hooks: Option<BTreeMap<String, Vec<EntrySpec>>>,
    /// Escalation rules: a finding that keeps coming back (or keeps being
    /// dismissed) is raised one step per threshold crossed.
    pub escalation: Option<Vec<EscalationRuleSpec>>,
}

/// One `escalation:` rule.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct EscalationRuleSpec {
    /// Recorded in escalated signals; defaults to `<source>/<scope>`.
    pub id: Option<String>,
    /// The entry id whose signals are escalated.
    pub source: String,
    /// `issue` (default) or `session`.
    pub scope: Option<EscalationScope>,
    /// How far back to count, e.g. `30m`, `24h` (default), `7d`.
    #[schemars(regex(pattern = r"^[0-9]+[smhd]$"))]
    pub window: Option<String>,
    /// One step per this many earlier firings (prompt → block; control →
    /// block for a finding that carries a modification).
    #[schemars(range(min = 1))]
    pub after_firings: Option<u32>,
    /// One step per this many earlier prompts answered `dismiss`.
    #[schemars(range(min = 1))]
    pub after_dismissed: Option<u32>,
    /// Count only since the last clean run of the source (default true).
    pub reset_on_clean_run: Option<bool>,
}

/// What an escalation rule counts over.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum EscalationScope {
    /// Per issue.
    Issue,
    /// Per agent session.
    Session,
}

/// `settings:`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct SettingsSpec {
    /// false: drop ahp's builtin layer (the default policy below every
    /// file). The last layer that says decides. Leave it out to keep it;
    /// switch one builtin entry off with `- id: <id>` and `enabled: false`.
    pub builtin: Option<bool>,
    /// development, staging, production, sandbox, … when the context does
    /// not say.
    pub environment: Option<String>,
    /// `stop` (default): a block skips later waves; `collect`: run them all
    /// for full feedback.
    pub on_block: Option<OnBlock>,
    /// true: an oracle that fails, an error of ahp itself, and an entry
    /// that `ahp trust` keeps from running all block (the default
    /// `on_error` becomes block). Any layer, or `AHP_FAIL_CLOSED=1`, can
    /// switch it on; no layer can switch it back off.
    pub fail_closed: Option<bool>,
    /// Default time limit of an entry, in milliseconds (30000).
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout: Option<u64>,
    /// `ahp hook`: how long the agent waits for ahp, in milliseconds
    /// (600000, what `ahp install` writes). ahp answers before then: what
    /// still runs is stopped and fails (blocking under `fail_closed`). Read
    /// from ~/.ahp/hooks.yaml and the managed policy only.
    #[schemars(range(min = 1, max = 3_600_000))]
    pub agent_timeout: Option<u64>,
    /// The branch changes are measured against (default: main, else master).
    pub trunk: Option<String>,
    /// Signal-log durability: `always` (fsync each record), `batch` (default,
    /// at most every 200 ms) or `never` (leave it to the OS).
    pub log_fsync: Option<String>,
    /// Rotate the signal log past this size in bytes (default 64 MiB).
    pub log_max_bytes: Option<u64>,
    /// The history budget: compressed rotated segments kept (default 64);
    /// past it the oldest is dropped and the log says so, unless a shipper
    /// has not delivered it.
    pub log_keep: Option<u64>,
    /// Extra key names or dotted paths whose values are masked in the log.
    #[schemars(inner(regex(pattern = r"\S")))]
    pub log_mask: Option<Vec<String>>,
    /// `ahp hook`: consecutive blocks of an agent's stop in one session
    /// before the stop is released and a `release` record written (5).
    #[schemars(range(min = 1))]
    pub stop_block_cap: Option<u64>,
    /// `ahp hook`: a prompt where the agent cannot ask: `context` (default,
    /// proceed with the message as context) or `deny`.
    pub prompt_fallback: Option<Fallback>,
    /// `ahp hook`: a rewrite where the agent cannot take one: `deny`
    /// (default, "rewrite required: …") or `context`.
    pub rewrite_fallback: Option<Fallback>,
    /// The default `mode` of this file's entries and of its layer's
    /// HOOK.md hooks (`enforce` or `shadow`); no other layer's entries.
    pub mode: Option<ahp_engine::Mode>,
    /// false: a repository's HOOK.md hooks (`.agents/hooks`) never run,
    /// trusted or not (for an organisation's managed policy).
    pub project_hooks: Option<bool>,
    /// Shell commands an agent runs that are issue lifecycle events
    /// (`monoco issue close FEAT-1` is `pre-issue-close`), by tracker
    /// name. The builtin layer names `monoco`; `monoco: {enabled: false}`
    /// switches it off.
    pub issue_commands: Option<BTreeMap<String, IssueCommandSpec>>,
}

/// One tracker's command shape under `settings.issue_commands`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct IssueCommandSpec {
    /// The program and its words, with `{{ verb }}` for the step word and
    /// `{{ id }}` for the issue id: `monoco issue {{ verb }} {{ id }}`.
    pub command: Option<String>,
    /// Command word → step (create, start, submit, close, open, cancel,
    /// delete); default: each step's own name.
    pub verbs: Option<BTreeMap<String, String>>,
    /// The step of a shape without `{{ verb }}`.
    pub lifecycle: Option<String>,
    /// A regular expression an issue id matches (default: Monoco's,
    /// `FEAT-0123`).
    pub id: Option<String>,
    /// Globs under the project root, with `{{ id }}`, where the issue's
    /// file is: `Issues/**/{{ id }}-*.md`.
    pub issue_files: Option<Vec<String>>,
    /// A git branch glob with `{{ id }}` (`{{ id }}-*`): when a local
    /// branch other than the current one matches, the issue is judged as
    /// that branch has it.
    pub issue_branch: Option<String>,
    /// false: this tracker's commands are not issue events.
    pub enabled: Option<bool>,
}

/// `context` or `deny`.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum Fallback {
    /// Proceed with a message as context.
    Context,
    /// Refuse with a reason.
    Deny,
}

/// One entry: an oracle to run at the event. Keyed by (event, id) across
/// layers; a later layer's entry with the same key deep-merges into it.
///
/// The loader reads each merged entry into this type; `when` and `config`
/// are compiled on their own (matchers from the positioned tree, settings
/// by the oracle).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(deny_unknown_fields)]
pub struct EntrySpec {
    /// The oracle (PascalCase or kebab-case). Required unless this entry
    /// overrides one of an earlier layer by `id`.
    pub oracle: Option<String>,
    /// A HOOK.md hook (by name) this entry adjusts (`when`, `priority`,
    /// `on_error`, …) instead of naming an oracle.
    pub hook: Option<String>,
    /// Unique per event; defaults to the oracle (or hook) name.
    pub id: Option<String>,
    /// The oracle's settings.
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub config: Option<Value>,
    /// Dotted context path → matcher: a value (equality), a list (any of),
    /// "> 10" style comparisons, "~regex". All must hold. The key `tool`
    /// matches the tool's name (the agent's or ahp's, any case).
    #[schemars(with = "Option<BTreeMap<String, WhenMatcher>>")]
    pub when: Option<Value>,
    /// Lower runs first; equal priorities run concurrently as one wave.
    pub priority: Option<i64>,
    /// Ids of entries (same event) this one runs after.
    pub after: Option<Strings>,
    /// false switches the entry off (e.g. from hooks.local.yaml).
    pub enabled: Option<bool>,
    /// Fire-and-forget: cannot block; result only logged.
    #[serde(rename = "async")]
    pub is_async: Option<bool>,
    /// Override of the oracle's intensity.
    pub intensity: Option<Intensity>,
    /// Intensity by the context's environment, e.g. `{production: block,
    /// development: prompt}`; falls back to `intensity`.
    pub intensity_by_environment: Option<BTreeMap<String, Intensity>>,
    /// allow (fail open, default) or block (fail closed) when the oracle fails.
    pub on_error: Option<OnError>,
    /// Time limit in milliseconds.
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout: Option<u64>,
    /// `shadow`: evaluate and record what it would have done (`would:
    /// block`), never change a verdict: roll a rule out, read `ahp signals
    /// stats`, then enforce. Default `enforce` (or `settings.mode`).
    pub mode: Option<ahp_engine::Mode>,
}

/// A `when` matcher.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
pub enum WhenMatcher {
    /// Equality, or a string starting with `>`, `>=`, `<`, `<=`, `!=`, `==`,
    /// `~` (regex) or `!~`.
    Scalar(Scalar),
    /// Any of these.
    AnyOf(Vec<Scalar>),
}

/// A scalar value.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
pub enum Scalar {
    /// Text, comparison or regex.
    Str(String),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
}

/// The YAML frontmatter of a HOOK.md file (Agent Hooks standard).
#[derive(JsonSchema)]
#[schemars(title = "HOOK.md frontmatter")]
#[allow(dead_code)]
pub struct HookFrontmatter {
    /// 1–64 lowercase letters, digits and hyphens; equal to the folder name.
    #[schemars(
        length(min = 1, max = 64),
        regex(pattern = r"^[a-z0-9]+(-[a-z0-9]+)*$")
    )]
    pub name: String,
    /// What the hook does (1–1024 characters).
    #[schemars(length(min = 1, max = 1024))]
    pub description: String,
    /// The event (any alias, e.g. pre-tool-call, PreToolUse, before_tool).
    pub trigger: String,
    /// Which tool calls fire it; both must match when both are set.
    pub matcher: Option<HookMatcher>,
    /// Time limit in milliseconds (default 30000).
    #[schemars(range(min = 100, max = 600_000))]
    pub timeout: Option<u64>,
    /// Fire-and-forget (default false): cannot block, result only logged.
    #[schemars(rename = "async")]
    pub is_async: Option<bool>,
    /// 0–1000, higher runs first (default 100).
    #[schemars(range(min = 0, max = 1000))]
    pub priority: Option<u32>,
    /// Free-form metadata.
    pub metadata: Option<BTreeMap<String, Value>>,
}

/// `matcher:` of a HOOK.md hook.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct HookMatcher {
    /// Regex on the tool name.
    pub tool: Option<String>,
    /// Regex on the tool input serialized as JSON.
    pub pattern: Option<String>,
}

/// The JSON Schema of HOOK.md frontmatter, draft-07.
///
/// ```
/// let schema = ahp_config::schema::hook_md_schema();
/// assert!(schema["required"].as_array().unwrap().iter().any(|v| v == "trigger"));
/// ```
pub fn hook_md_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    serde_json::to_value(generator.into_root_schema_for::<HookFrontmatter>()).unwrap_or(Value::Null)
}

/// The JSON Schema of hooks.yaml, draft-07, with the settings of every
/// oracle in `registry` that declares them ([`Registry::set_config`]): an
/// entry's `config` is checked against its `oracle`'s.
///
/// ```
/// let schema = ahp_config::schema::hooks_schema(&ahp_engine::Registry::new());
/// assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
/// assert!(schema["properties"]["hooks"].is_object());
/// ```
pub fn hooks_schema(registry: &Registry) -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let root = generator.root_schema_for::<HooksFile>();
    let Ok(mut root) = serde_json::to_value(root) else {
        return Value::Null;
    };
    let mut names = Vec::new();
    let mut configs = Vec::new();
    // A hooks file cannot name the oracle of HOOK.md hooks.
    for info in registry.iter().filter(|i| i.name != SCRIPT_ORACLE) {
        names.extend([info.name.clone(), info.kebab.clone()]);
        if let Some(config) = registry.config_schema(&info.name, &mut generator) {
            configs.push((json!([info.name, info.kebab]), config.to_value()));
        }
    }
    let definitions = generator.definitions().clone();
    // An oracle whose settings have required keys needs its `config`.
    let needs_config = |config: &Value| {
        let target = match config["$ref"].as_str() {
            Some(r) => definitions
                .get(r.trim_start_matches("#/definitions/"))
                .unwrap_or(&Value::Null),
            None => config,
        };
        target["required"].as_array().is_some_and(|r| !r.is_empty())
    };
    let branches: Vec<Value> = configs
        .into_iter()
        .map(|(forms, config)| {
            let when = json!({"properties": {"oracle": {"enum": forms}}, "required": ["oracle"]});
            let then = if needs_config(&config) {
                json!({"properties": {"config": config}, "required": ["config"]})
            } else {
                json!({"properties": {"config": {"anyOf": [{"type": "null"}, config]}}})
            };
            json!({"if": when, "then": then})
        })
        .collect();
    if let Some(defs) = root["definitions"].as_object_mut() {
        defs.extend(definitions);
    }
    let entry = &mut root["definitions"]["EntrySpec"];
    if !names.is_empty() {
        entry["properties"]["oracle"] = json!({
            "description": entry["properties"]["oracle"]["description"],
            "enum": names,
        });
    }
    if !branches.is_empty() {
        entry["allOf"] = Value::Array(branches);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(schema: &Value, def: &str) -> Vec<String> {
        let node = if def.is_empty() {
            &schema["properties"]
        } else {
            &schema["definitions"][def]["properties"]
        };
        let mut keys: Vec<String> = node.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    }

    #[test]
    fn schema_keys_match_validation_keys() {
        let s = hooks_schema(&Registry::new());
        let mut want: Vec<String> = crate::load::ENTRY_KEYS
            .iter()
            .map(|s| s.to_string())
            .collect();
        want.sort();
        assert_eq!(props(&s, "EntrySpec"), want);
        let mut want: Vec<String> = crate::load::SETTINGS_KEYS
            .iter()
            .map(|s| s.to_string())
            .collect();
        want.sort();
        assert_eq!(props(&s, "SettingsSpec"), want);
        let h = hook_md_schema();
        let mut want: Vec<String> = crate::hookmd::FRONTMATTER_KEYS
            .iter()
            .map(|s| s.to_string())
            .collect();
        want.sort();
        assert_eq!(props(&h, ""), want);
        let mut want: Vec<String> = crate::load::TOP_KEYS
            .iter()
            .map(|s| s.to_string())
            .collect();
        want.sort();
        assert_eq!(props(&s, ""), want);
    }
}
