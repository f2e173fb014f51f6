//! `ahp install AGENT` and `ahp uninstall AGENT`: put `ahp hook AGENT` into
//! an agent's own hook config, and take it out again.
//!
//! Each agent's config facts (files per scope, the shape of one hook entry,
//! timeout units) live in one table here ([`config_path`], [`Shape`]).
//! Edits keep the user's file as it was around them: JSON is edited as text
//! by span ([`json`]), Kimi's TOML with `toml_edit`. Install appends ahp's
//! entries after the user's own; uninstall removes exactly the entries
//! whose command starts with `CMD hook AGENT`, and the containers (event
//! lists, `hooks`) that only held them, so install then uninstall gives
//! back the original bytes.

pub(crate) mod codex;
mod diff;
pub(crate) mod json;

use crate::adapters::Agent;
use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Seconds an agent waits for `ahp hook` before giving up on it, as
/// written into its config. ahp answers before then
/// ([`ahp_config::LoadedConfig::answer_within`]).
pub const HOOK_TIMEOUT_SECS: u64 = ahp_config::AGENT_TIMEOUT.as_secs();

ahp_engine::name_enum! {
    /// Where an agent's hook config lives.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
    pub enum Scope {
        /// The user's own config in the home directory: every project.
        User => "user",
        /// The project's shared config, committed with the repository.
        Project => "project",
        /// The project's personal config, not committed (Claude Code's
        /// `.claude/settings.local.json`).
        Local => "local",
    }
}

/// How one agent's hook entries look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>: [{matcher?, hooks: [{type, command, timeout}]}]`
    /// (Claude Code, Codex, Gemini, Qwen Code). `millis`: the timeout is
    /// in ms. `top`: the events are the file's own keys, with no `hooks`
    /// object around them (Factory Droid's `hooks.json`).
    Nested {
        /// Timeout in milliseconds (Gemini) rather than seconds.
        millis: bool,
        /// The events at the top of the file.
        top: bool,
    },
    /// `version: 1`, `hooks.<event>: [{type, bash, timeoutSec}]` (Copilot).
    Copilot,
    /// `version: 1`, `hooks.<event>: [{command}]` (Cursor).
    Cursor,
    /// `[[hooks]]` tables with event, command, timeout (Kimi, TOML).
    KimiToml,
    /// A whole plugin file of ahp's own that calls `CMD hook AGENT`
    /// (OpenCode, which has no command hooks).
    Plugin,
    /// `hooks.<event>: [{command, show_output}]` (Windsurf).
    Windsurf,
}

/// The entry shape of `agent`'s config.
pub fn shape(agent: Agent) -> Option<Shape> {
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Qwen => Some(Shape::Nested {
            millis: false,
            top: false,
        }),
        Agent::Gemini => Some(Shape::Nested {
            millis: true,
            top: false,
        }),
        Agent::Droid => Some(Shape::Nested {
            millis: false,
            top: true,
        }),
        Agent::Copilot => Some(Shape::Copilot),
        Agent::Cursor => Some(Shape::Cursor),
        Agent::Kimi => Some(Shape::KimiToml),
        Agent::OpenCode => Some(Shape::Plugin),
        Agent::Windsurf => Some(Shape::Windsurf),
        Agent::AgentHooks => None,
    }
}

/// Why `ahp install agenthooks` is refused.
pub const AGENTHOOKS_REFUSAL: &str = "\
ahp does not install itself as an Agent Hooks (HOOK.md) hook: ahp already runs the HOOK.md hooks \
of ~/.config/agents/hooks and .agents/hooks as part of its own policy, so an `ahp` hook there would \
make every ahp dispatch start ahp again (and the standard needs one hook directory per event). \
Point your agent at `ahp hook agenthooks` from its own hook settings instead, or use the agent's \
own adapter (`ahp install claude-code`, `ahp install kimi`, …).";

/// The scopes `agent` has, in the order `ahp doctor` reports them.
pub fn scopes(agent: Agent) -> &'static [Scope] {
    match agent {
        Agent::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
        Agent::Codex
        | Agent::Gemini
        | Agent::Copilot
        | Agent::Cursor
        | Agent::Qwen
        | Agent::Droid
        | Agent::OpenCode
        | Agent::Windsurf => &[Scope::User, Scope::Project],
        Agent::Kimi => &[Scope::User],
        Agent::AgentHooks => &[],
    }
}

/// The scope used when none is given.
pub fn default_scope(agent: Agent) -> Scope {
    if scopes(agent).contains(&Scope::Project) {
        Scope::Project
    } else {
        Scope::User
    }
}

/// The home directory, for the user scope.
pub(crate) fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("HOME is not set; cannot find the user config"))
}

/// HOME, or an empty path when it is not set (CODEX_HOME may still be).
pub(crate) fn home_or_empty() -> PathBuf {
    home().unwrap_or_default()
}

/// The config file of `agent` at `scope`.
///
/// ```
/// use ahp::adapters::Agent;
/// use ahp::install::{config_path, Scope};
/// use std::path::Path;
/// let p = config_path(Agent::ClaudeCode, Scope::Local, Path::new("/h"), Path::new("/p")).unwrap();
/// assert_eq!(p, Path::new("/p/.claude/settings.local.json"));
/// assert!(config_path(Agent::Kimi, Scope::Project, Path::new("/h"), Path::new("/p")).is_err());
/// ```
pub fn config_path(agent: Agent, scope: Scope, home: &Path, project: &Path) -> Result<PathBuf> {
    let p = match (agent, scope) {
        (Agent::ClaudeCode, Scope::User) => home.join(".claude/settings.json"),
        (Agent::ClaudeCode, Scope::Project) => project.join(".claude/settings.json"),
        (Agent::ClaudeCode, Scope::Local) => project.join(".claude/settings.local.json"),
        // Codex reads its user hooks next to its config, in CODEX_HOME.
        (Agent::Codex, Scope::User) => codex::codex_home(home).join("hooks.json"),
        (Agent::Codex, Scope::Project) => project.join(".codex/hooks.json"),
        (Agent::Gemini, Scope::User) => home.join(".gemini/settings.json"),
        (Agent::Gemini, Scope::Project) => project.join(".gemini/settings.json"),
        // Copilot loads every *.json of its hooks directories: ahp keeps
        // its own file there.
        (Agent::Copilot, Scope::User) => match std::env::var_os("COPILOT_HOME") {
            Some(h) if !h.is_empty() => PathBuf::from(h).join("hooks/ahp.json"),
            _ => home.join(".copilot/hooks/ahp.json"),
        },
        (Agent::Copilot, Scope::Project) => project.join(".github/hooks/ahp.json"),
        (Agent::Cursor, Scope::User) => home.join(".cursor/hooks.json"),
        (Agent::Cursor, Scope::Project) => project.join(".cursor/hooks.json"),
        (Agent::Kimi, Scope::User) => kimi_config(home),
        (Agent::Qwen, Scope::User) => home.join(".qwen/settings.json"),
        (Agent::Qwen, Scope::Project) => project.join(".qwen/settings.json"),
        // Droid reads `hooks.json` beside its settings (the `hooks` key of
        // settings.json only when there is no hooks.json).
        (Agent::Droid, Scope::User) => home.join(".factory/hooks.json"),
        (Agent::Droid, Scope::Project) => project.join(".factory/hooks.json"),
        // OpenCode loads every `plugins/*.js` of its config folders.
        (Agent::OpenCode, Scope::User) => match std::env::var_os("XDG_CONFIG_HOME") {
            Some(x) if !x.is_empty() => PathBuf::from(x).join("opencode/plugins/ahp.js"),
            _ => home.join(".config/opencode/plugins/ahp.js"),
        },
        (Agent::OpenCode, Scope::Project) => project.join(".opencode/plugins/ahp.js"),
        (Agent::Windsurf, Scope::User) => home.join(".codeium/windsurf/hooks.json"),
        (Agent::Windsurf, Scope::Project) => project.join(".windsurf/hooks.json"),
        (Agent::AgentHooks, _) => bail!("{AGENTHOOKS_REFUSAL}"),
        (agent, scope) => {
            let have: Vec<&str> = scopes(agent).iter().map(|s| s.as_str()).collect();
            bail!(
                "{agent} has no {} hook config; its scopes: {}",
                scope.as_str(),
                have.join(", ")
            )
        }
    };
    Ok(p)
}

/// Where else ahp's hooks for `agent` at `scope` may be from an earlier
/// install: the Kimi CLI's `~/.kimi/config.toml`, once Kimi Code's folder
/// exists. Uninstall and doctor look there too.
pub fn earlier_config_paths(agent: Agent, scope: Scope, home: &Path) -> Vec<PathBuf> {
    let legacy = home.join(".kimi/config.toml");
    if agent == Agent::Kimi
        && scope == Scope::User
        && kimi_config(home) != legacy
        && legacy.exists()
    {
        vec![legacy]
    } else {
        Vec::new()
    }
}

/// Kimi Code reads `$KIMI_CODE_HOME/config.toml` (by default
/// `~/.kimi-code/config.toml`). The Kimi CLI it replaces read
/// `~/.kimi/config.toml`, which stays the file while only that CLI is
/// there.
fn kimi_config(home: &Path) -> PathBuf {
    if let Some(h) = std::env::var_os("KIMI_CODE_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join("config.toml");
    }
    let code = home.join(".kimi-code");
    let legacy = home.join(".kimi/config.toml");
    if !code.exists() && legacy.exists() {
        legacy
    } else {
        code.join("config.toml")
    }
}

/// The agent's event names ahp registers: every event that maps to an
/// ahp event. Copilot's PascalCase names are left out: they are the same
/// events in VS Code's shape, and registering both would run ahp twice.
///
/// ```
/// use ahp::adapters::Agent;
/// let ev = ahp::install::install_events(Agent::Copilot);
/// assert!(ev.contains(&"preToolUse") && !ev.contains(&"PreToolUse"));
/// let claude = ahp::install::install_events(Agent::ClaudeCode);
/// assert!(claude.contains(&"PermissionRequest") && !claude.contains(&"WorktreeCreate"));
/// assert!(!ahp::install::install_events(Agent::Codex).contains(&"SessionEnd"));
/// let cursor = ahp::install::install_events(Agent::Cursor);
/// assert!(cursor.contains(&"beforeShellExecution") && !cursor.contains(&"preToolUse"));
/// ```
pub fn install_events(agent: Agent) -> Vec<&'static str> {
    agent
        .events()
        .iter()
        .filter(|(_, e)| e.is_some())
        .map(|(n, _)| *n)
        .filter(|n| agent != Agent::Copilot || n.starts_with(|c: char| c.is_ascii_lowercase()))
        // Cursor's generic preToolUse/postToolUse (not in its documented
        // hook list) would see the same shell call as the dedicated
        // before/after hooks: one family only, so nothing is judged twice.
        .filter(|n| agent != Agent::Cursor || !matches!(*n, "preToolUse" | "postToolUse"))
        // A Codex that predates these events never lists their hooks in
        // /hooks, so they could never be trusted and `ahp doctor` would
        // report them forever.
        .filter(|n| agent != Agent::Codex || !CODEX_NEWER_EVENTS.contains(n))
        .collect()
}

/// Codex events ahp reads but does not register (see [`install_events`]).
pub const CODEX_NEWER_EVENTS: &[&str] = &["SessionEnd", "StopFailure"];

/// The command installed for `event`: `CMD hook AGENT`, plus `--event` for
/// Copilot, whose stdin does not name the event.
pub fn hook_command(agent: Agent, base: &str, event: &str) -> String {
    match agent {
        Agent::Copilot => format!("{base} hook {agent} --event {event}"),
        _ => format!("{base} hook {agent}"),
    }
}

/// True when `command` is one of ahp's hooks for `agent` run with `base`.
pub fn is_ours(command: &str, agent: Agent, base: &str) -> bool {
    let prefix = format!("{base} hook {agent}");
    let command = command.trim();
    command == prefix
        || command
            .strip_prefix(&prefix)
            .is_some_and(|r| r.starts_with(char::is_whitespace))
}

/// One planned change of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// Its text now (`None`: it does not exist).
    pub before: Option<String>,
    /// Its text after (`None`: delete it).
    pub after: Option<String>,
    /// The events added or removed.
    pub events: Vec<String>,
    /// Things to tell the user.
    pub notes: Vec<String>,
}

impl Change {
    /// True when nothing would change.
    pub fn is_noop(&self) -> bool {
        self.before == self.after
    }

    /// The unified diff of the change.
    pub fn diff(&self) -> String {
        let name = self.path.display().to_string();
        let (a, b) = (
            self.before.as_ref().map_or("/dev/null", |_| name.as_str()),
            self.after.as_ref().map_or("/dev/null", |_| name.as_str()),
        );
        diff::unified(
            self.before.as_deref().unwrap_or(""),
            self.after.as_deref().unwrap_or(""),
            a,
            b,
        )
    }
}

fn read_existing(path: &Path) -> Result<Option<String>> {
    // Opening a FIFO (or a device) waits for a writer or never ends: only a
    // regular file is an agent's config.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(anyhow!(
                "{} is not a regular file; ahp edits only a regular config file there",
                ahp_config::path_line(path)
            ));
        }
        _ => {}
    }
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
            anyhow!(
                "{}: not UTF-8 (invalid byte at offset {})",
                ahp_config::path_line(path),
                e.utf8_error().valid_up_to()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", ahp_config::path_line(path))),
    }
}

/// The settings.json beside a Droid hooks.json whose `hooks` Droid reads
/// only while there is no hooks.json, if it has any.
pub fn droid_settings_hooks(hooks_json: &Path) -> Option<PathBuf> {
    let settings = hooks_json.with_file_name("settings.json");
    let text = std::fs::read_to_string(&settings).ok()?;
    let root = json::parse(&text).ok()?;
    let hooks = root.get("hooks")?;
    (!hooks.value.members().is_empty()).then_some(settings)
}

/// The planned install of `agent` into `path`.
pub fn plan_install(agent: Agent, path: &Path, base: &str) -> Result<Change> {
    let before = read_existing(path)?;
    // Creating hooks.json would switch off the hooks Droid now reads from
    // settings.json: refused rather than done behind the user's back.
    if agent == Agent::Droid
        && before.is_none()
        && let Some(settings) = droid_settings_hooks(path)
    {
        bail!(
            "{} has hooks of its own, which Droid reads only while there is no {}; creating that file would switch them off. Move them into {} (its top-level keys are the events), then run `ahp install droid` again; nothing was written",
            ahp_config::path_line(&settings),
            ahp_config::path_line(path),
            ahp_config::path_line(path)
        );
    }
    let shape = shape(agent).ok_or_else(|| anyhow!("{AGENTHOOKS_REFUSAL}"))?;
    let (after, events, notes) = match shape {
        Shape::KimiToml => kimi_install(path, before.as_deref(), agent, base)?,
        Shape::Plugin => plugin_install(path, before.as_deref(), agent, base)?,
        _ => json_install(path, before.as_deref(), agent, shape, base)?,
    };
    Ok(Change {
        path: path.to_path_buf(),
        before,
        after: Some(after),
        events,
        notes,
    })
}

/// The planned uninstall of `agent` from `path`.
pub fn plan_uninstall(agent: Agent, path: &Path, base: &str) -> Result<Change> {
    let before = read_existing(path)?;
    let shape = shape(agent).ok_or_else(|| anyhow!("{AGENTHOOKS_REFUSAL}"))?;
    let Some(text) = before.clone() else {
        return Ok(Change {
            path: path.to_path_buf(),
            before: None,
            after: None,
            events: Vec::new(),
            notes: Vec::new(),
        });
    };
    let (after, events) = match shape {
        Shape::KimiToml => kimi_uninstall(path, &text, agent, base)?,
        Shape::Plugin => plugin_uninstall(&text, agent, base),
        _ => json_uninstall(path, &text, agent, shape, base)?,
    };
    Ok(Change {
        path: path.to_path_buf(),
        before,
        after,
        events,
        notes: Vec::new(),
    })
}

// ---- plugin agents ----

/// The plugin that `ahp install opencode` writes.
const OPENCODE_PLUGIN: &str = include_str!("install/opencode-plugin.js");

/// The line that marks a plugin file as ahp's.
const PLUGIN_MARK: &str = "// ahp-plugin: 1";

/// The plugin text that runs `CMD hook AGENT`.
pub(crate) fn plugin_text(agent: Agent, base: &str) -> String {
    let command = serde_json::to_string(&hook_command(agent, base, "")).unwrap_or_default();
    OPENCODE_PLUGIN.replace("\"__AHP_COMMAND__\"", &command)
}

/// The command an ahp plugin file runs, if `text` is one.
pub fn plugin_command(text: &str) -> Option<String> {
    if !text.lines().any(|l| l.trim() == PLUGIN_MARK) {
        return None;
    }
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("const COMMAND = "))?;
    serde_json::from_str(line.trim_end_matches(';')).ok()
}

fn plugin_install(path: &Path, before: Option<&str>, agent: Agent, base: &str) -> Result<Planned> {
    if let Some(text) = before
        && plugin_command(text).is_none()
    {
        bail!(
            "{} exists and is not ahp's plugin; nothing was written. Move it away, or install into the other scope (`--scope user` or `--scope project`)",
            ahp_config::path_line(path)
        );
    }
    let after = plugin_text(agent, base);
    let events = if before == Some(after.as_str()) {
        Vec::new()
    } else {
        plugin_events(agent)
    };
    Ok((after, events, Vec::new()))
}

/// The events a plugin of ahp's covers: every one ahp decides on.
fn plugin_events(agent: Agent) -> Vec<String> {
    install_events(agent)
        .iter()
        .map(|e| (*e).to_string())
        .collect()
}

fn plugin_uninstall(text: &str, agent: Agent, base: &str) -> Removed {
    match plugin_command(text) {
        Some(c) if is_ours(&c, agent, base) => (None, plugin_events(agent)),
        _ => (Some(text.to_string()), Vec::new()),
    }
}

// ---- JSON agents ----

/// The object whose keys are the agent's events: `hooks`, or the file's
/// top for a shape whose events are its own keys.
pub(crate) fn event_map(shape: Shape, root: &json::Node) -> Option<&json::Node> {
    match shape {
        Shape::Nested { top: true, .. } => Some(root),
        _ => root.get("hooks").map(|m| &m.value),
    }
}

fn parse_json_file(path: &Path, text: &str) -> Result<json::Node> {
    let root = json::parse(text).map_err(|e| {
        anyhow!(
            "{}:{}:{}: invalid JSON: {}; nothing was written",
            ahp_config::path_line(path),
            e.line,
            e.column,
            e.message
        )
    })?;
    if !root.is_object() {
        let (l, c) = json::line_col(text, root.start);
        bail!(
            "{}:{l}:{c}: expected a JSON object at the top, found {}; nothing was written",
            ahp_config::path_line(path),
            root.kind_name()
        );
    }
    Ok(root)
}

fn wrong_kind(path: &Path, text: &str, node: &json::Node, what: &str, want: &str) -> anyhow::Error {
    let (l, c) = json::line_col(text, node.start);
    anyhow!(
        "{}:{l}:{c}: `{what}` must be {want}, found {}; nothing was written",
        ahp_config::path_line(path),
        node.kind_name()
    )
}

/// The command strings of one array element of `hooks.<event>`.
fn entry_commands(shape: Shape, entry: &json::Node) -> Vec<String> {
    let mut out = Vec::new();
    match shape {
        Shape::Nested { .. } => {
            if let Some(m) = entry.get("hooks") {
                for h in m.value.items() {
                    if let Some(c) = h.get("command").and_then(|c| c.value.as_str()) {
                        out.push(c.to_string());
                    }
                }
            }
        }
        _ => {
            for key in ["command", "bash", "powershell"] {
                if let Some(c) = entry.get(key).and_then(|c| c.value.as_str()) {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

fn json_entry(agent: Agent, shape: Shape, base: &str, event: &str) -> Value {
    let command = hook_command(agent, base, event);
    match shape {
        Shape::Nested { millis: false, .. } => json!({"hooks": [{
            "type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS
        }]}),
        Shape::Nested { millis: true, .. } => json!({"hooks": [{
            "type": "command", "command": command, "name": "ahp",
            "timeout": HOOK_TIMEOUT_SECS * 1000
        }]}),
        Shape::Copilot => {
            json!({"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_SECS})
        }
        // The user sees what ahp says (Cascade shows a hook's output only
        // with `show_output`).
        Shape::Windsurf => json!({ "command": command, "show_output": true }),
        _ => json!({ "command": command }),
    }
}

type Planned = (String, Vec<String>, Vec<String>);

fn json_install(
    path: &Path,
    before: Option<&str>,
    agent: Agent,
    shape: Shape,
    base: &str,
) -> Result<Planned> {
    let versioned = matches!(shape, Shape::Copilot | Shape::Cursor);
    let mut text = match before {
        Some(t) => t.to_string(),
        None if versioned => "{\n  \"version\": 1\n}\n".to_string(),
        None => "{\n}\n".to_string(),
    };
    let mut notes = Vec::new();
    let root = parse_json_file(path, &text)?;
    if versioned {
        match root.get("version") {
            None => {
                text = json::append(&text, &root, Some("version"), &json!(1));
                notes.push(format!(
                    "added \"version\": 1 to {} ({agent} ignores hooks files without it)",
                    ahp_config::path_line(path)
                ));
            }
            Some(m) if m.value.kind_name() != "a number" => {
                return Err(wrong_kind(path, &text, &m.value, "version", "the number 1"));
            }
            Some(_) => {}
        }
    }
    let root = parse_json_file(path, &text)?;
    match root.get("hooks") {
        _ if matches!(shape, Shape::Nested { top: true, .. }) => {}
        None => text = json::append(&text, &root, Some("hooks"), &json!({})),
        Some(m) if !m.value.is_object() => {
            return Err(wrong_kind(path, &text, &m.value, "hooks", "an object"));
        }
        Some(_) => {}
    }
    let mut added = Vec::new();
    for event in install_events(agent) {
        let root = parse_json_file(path, &text)?;
        let Some(hooks) = event_map(shape, &root) else {
            bail!(
                "internal error: `hooks` vanished from {}",
                ahp_config::path_line(path)
            );
        };
        let entry = json_entry(agent, shape, base, event);
        match hooks.get(event) {
            None => {
                text = json::append(&text, hooks, Some(event), &json!([entry]));
            }
            Some(m) if !m.value.is_array() => {
                return Err(wrong_kind(
                    path,
                    &text,
                    &m.value,
                    &format!("hooks.{event}"),
                    "an array",
                ));
            }
            Some(m) => {
                let present = m
                    .value
                    .items()
                    .iter()
                    .flat_map(|e| entry_commands(shape, e))
                    .any(|c| is_ours(&c, agent, base));
                if present {
                    continue;
                }
                text = json::append(&text, &m.value, None, &entry);
            }
        }
        added.push(event.to_string());
    }
    if added.is_empty() {
        // Nothing to add: leave even an added `version` or `hooks` out.
        return Ok((before.map_or(text, str::to_string), added, Vec::new()));
    }
    // Check the result parses as plain data, as the agent will read it.
    parse_json_file(path, &text)
        .context("ahp produced invalid JSON (a bug); nothing was written")?;
    Ok((text, added, notes))
}

/// What to remove next: the path down to one of ahp's hooks.
fn next_removal(
    root: &json::Node,
    shape: Shape,
    agent: Agent,
    base: &str,
) -> Option<(usize, usize, Option<usize>)> {
    let hooks = event_map(shape, root)?;
    for (ei, ev) in hooks.members().iter().enumerate() {
        for (ii, item) in ev.value.items().iter().enumerate() {
            match shape {
                Shape::Nested { .. } => {
                    let Some(handlers) = item.get("hooks") else {
                        continue;
                    };
                    for (hi, h) in handlers.value.items().iter().enumerate() {
                        if h.get("command")
                            .and_then(|c| c.value.as_str())
                            .is_some_and(|c| is_ours(c, agent, base))
                        {
                            return Some((ei, ii, Some(hi)));
                        }
                    }
                }
                _ => {
                    if entry_commands(shape, item)
                        .iter()
                        .any(|c| is_ours(c, agent, base))
                    {
                        return Some((ei, ii, None));
                    }
                }
            }
        }
    }
    None
}

type Removed = (Option<String>, Vec<String>);

fn json_uninstall(
    path: &Path,
    before: &str,
    agent: Agent,
    shape: Shape,
    base: &str,
) -> Result<Removed> {
    let mut text = before.to_string();
    let mut events: Vec<String> = Vec::new();
    loop {
        let root = parse_json_file(path, &text)?;
        let Some((ei, ii, hi)) = next_removal(&root, shape, agent, base) else {
            break;
        };
        let Some(hooks) = event_map(shape, &root) else {
            break;
        };
        let hooks_index = root
            .members()
            .iter()
            .position(|m| m.key == "hooks")
            .unwrap_or(ei);
        let event = &hooks.members()[ei];
        let item = &event.value.items()[ii];
        if !events.contains(&event.key) {
            events.push(event.key.clone());
        }
        // Remove the smallest enclosing container that would be left
        // empty, so what install created goes away whole.
        text = match hi {
            Some(hi) if item.get("hooks").is_some_and(|h| h.value.items().len() > 1) => {
                let handlers = item.get("hooks").map(|h| &h.value);
                match handlers {
                    Some(h) => json::remove(&text, h, hi),
                    None => break,
                }
            }
            _ if event.value.items().len() > 1 => json::remove(&text, &event.value, ii),
            _ if hooks.members().len() > 1 => json::remove(&text, hooks, ei),
            _ => json::remove(&text, &root, hooks_index),
        };
    }
    if events.is_empty() {
        return Ok((Some(text), events));
    }
    let root = parse_json_file(path, &text)?;
    let left: Vec<&str> = root.members().iter().map(|m| m.key.as_str()).collect();
    let empty =
        left.is_empty() || (matches!(shape, Shape::Copilot | Shape::Cursor) && left == ["version"]);
    Ok((if empty { None } else { Some(text) }, events))
}

// ---- Kimi (TOML) ----

fn parse_toml_file(path: &Path, text: &str) -> Result<toml_edit::DocumentMut> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        let (l, c) = e.span().map_or((1, 1), |s| json::line_col(text, s.start));
        anyhow!(
            "{}:{l}:{c}: invalid TOML: {}; nothing was written",
            ahp_config::path_line(path),
            e.message().trim()
        )
    })
}

fn kimi_install(path: &Path, before: Option<&str>, agent: Agent, base: &str) -> Result<Planned> {
    let text = before.unwrap_or("");
    let mut doc = parse_toml_file(path, text)?;
    let aot = match doc.get_mut("hooks") {
        None => {
            doc.insert(
                "hooks",
                toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()),
            );
            doc.get_mut("hooks")
                .and_then(|h| h.as_array_of_tables_mut())
        }
        Some(item) => match item.as_array_of_tables_mut() {
            Some(a) => Some(a),
            None => bail!(
                "{}: `hooks` must be an array of tables ([[hooks]] sections), found {}; nothing was written",
                ahp_config::path_line(path),
                item.type_name()
            ),
        },
    };
    let Some(aot) = aot else {
        bail!(
            "internal error: cannot add [[hooks]] to {}",
            ahp_config::path_line(path)
        );
    };
    let mut added = Vec::new();
    for event in install_events(agent) {
        let present = aot.iter().any(|t| {
            t.get("event").and_then(|e| e.as_str()) == Some(event)
                && t.get("command")
                    .and_then(|c| c.as_str())
                    .is_some_and(|c| is_ours(c, agent, base))
        });
        if present {
            continue;
        }
        let mut t = toml_edit::Table::new();
        t.insert("event", toml_edit::value(event));
        t.insert(
            "command",
            toml_edit::value(hook_command(agent, base, event)),
        );
        t.insert("timeout", toml_edit::value(HOOK_TIMEOUT_SECS as i64));
        aot.push(t);
        added.push(event.to_string());
    }
    if added.is_empty() {
        return Ok((text.to_string(), added, Vec::new()));
    }
    let out = doc.to_string();
    parse_toml_file(path, &out)
        .context("ahp produced invalid TOML (a bug); nothing was written")?;
    Ok((out, added, Vec::new()))
}

fn kimi_uninstall(path: &Path, before: &str, agent: Agent, base: &str) -> Result<Removed> {
    let mut doc = parse_toml_file(path, before)?;
    let mut events = Vec::new();
    let Some(aot) = doc
        .get_mut("hooks")
        .and_then(|h| h.as_array_of_tables_mut())
    else {
        return Ok((Some(before.to_string()), events));
    };
    aot.retain(|t| {
        let ours = t
            .get("command")
            .and_then(|c| c.as_str())
            .is_some_and(|c| is_ours(c, agent, base));
        if ours && let Some(e) = t.get("event").and_then(|e| e.as_str()) {
            events.push(e.to_string());
        }
        !ours
    });
    if events.is_empty() {
        return Ok((Some(before.to_string()), events));
    }
    if aot.is_empty() {
        doc.remove("hooks");
    }
    let out = doc.to_string();
    Ok((
        if out.trim().is_empty() {
            None
        } else {
            Some(out)
        },
        events,
    ))
}

// ---- writing ----

/// Writes `text` to `path` atomically (a temp file in the same directory,
/// then rename), keeping an existing file's permissions and writing
/// through a symlink to its target.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).with_context(|| {
            format!("cannot resolve the symlink {}", ahp_config::path_line(path))
        })?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create {}", ahp_config::path_line(&dir)))?;
    let perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
    ahp_engine::paths::replace_file(&target, text.as_bytes(), perms)
        .map_err(|e| anyhow!("cannot write {}: {e}", ahp_config::path_line(&target)))
}

pub(crate) fn apply(change: &Change) -> Result<()> {
    match &change.after {
        Some(text) => write_atomic(&change.path, text),
        None if change.before.is_some() => std::fs::remove_file(&change.path)
            .with_context(|| format!("cannot remove {}", ahp_config::path_line(&change.path))),
        None => Ok(()),
    }
}

/// [`apply`] for a config file inside the project `root`, through
/// [`ahp_oracles::safe_write`]: never through a symlink the repository
/// committed, nor outside it.
pub(crate) fn apply_in_project(root: &Path, change: &Change) -> Result<()> {
    use ahp_oracles::safe_write::{remove_in_project, write_in_project};
    match &change.after {
        Some(text) => {
            let rel = change.path.strip_prefix(root).unwrap_or(&change.path);
            write_in_project(root, rel, text.as_bytes()).map_err(|e| anyhow!("{e}"))
        }
        None if change.before.is_some() => {
            remove_in_project(root, &change.path).map_err(|e| anyhow!("{e}"))
        }
        None => Ok(()),
    }
}

/// The first word of `command` found as a file or on PATH.
pub(crate) fn resolve_command(command: &str, base_dir: &Path) -> Option<PathBuf> {
    let word = command.split_whitespace().next()?;
    if word.contains('/') {
        let p = Path::new(word);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            base_dir.join(p)
        };
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(word))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && ahp_engine::paths::is_executable(&m))
}

/// What the user must still do for the hooks to fire.
pub fn next_steps(agent: Agent) -> Vec<&'static str> {
    match agent {
        // Codex's steps depend on its trust state: `run` reads it.
        Agent::Codex => Vec::new(),
        Agent::Cursor => vec!["restart Cursor so it reloads hooks.json"],
        Agent::OpenCode => vec!["start a new OpenCode session so it loads the plugin"],
        Agent::Windsurf => vec!["start a new Cascade conversation so it reads hooks.json again"],
        Agent::Gemini
        | Agent::ClaudeCode
        | Agent::Kimi
        | Agent::Copilot
        | Agent::Qwen
        | Agent::Droid => {
            vec!["start a new session of the agent so it reads its hooks again"]
        }
        Agent::AgentHooks => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_means_the_prefix_then_a_space_or_the_end() {
        assert!(is_ours("ahp hook codex", Agent::Codex, "ahp"));
        assert!(is_ours(
            "ahp hook copilot --event preToolUse",
            Agent::Copilot,
            "ahp"
        ));
        assert!(!is_ours("ahp hook codexx", Agent::Codex, "ahp"));
        assert!(!is_ours("my-ahp hook codex", Agent::Codex, "ahp"));
        assert!(!is_ours("/opt/ahp hook codex", Agent::Codex, "ahp"));
    }

    #[test]
    fn every_agent_but_agenthooks_has_a_file_per_scope() {
        for agent in Agent::ALL {
            for scope in scopes(agent) {
                let p = config_path(agent, *scope, Path::new("/h"), Path::new("/p")).unwrap();
                assert!(p.starts_with("/h") || p.starts_with("/p"), "{p:?}");
            }
            assert!(!install_events(agent).is_empty() || agent == Agent::AgentHooks);
        }
        assert!(
            config_path(
                Agent::AgentHooks,
                Scope::User,
                Path::new("/h"),
                Path::new("/p")
            )
            .is_err()
        );
    }

    #[test]
    fn nested_install_uninstall_round_trips_and_is_idempotent() {
        let p = Path::new("settings.json");
        let before = "{\n  // mine\n  \"model\": \"x\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"my-check\"}]}\n    ]\n  }\n}\n";
        let (after, added, _) = json_install(
            p,
            Some(before),
            Agent::ClaudeCode,
            Shape::Nested {
                millis: false,
                top: false,
            },
            "ahp",
        )
        .unwrap();
        assert_eq!(added.len(), install_events(Agent::ClaudeCode).len());
        assert!(after.contains("my-check") && after.contains("// mine"));
        let (again, added2, _) = json_install(
            p,
            Some(&after),
            Agent::ClaudeCode,
            Shape::Nested {
                millis: false,
                top: false,
            },
            "ahp",
        )
        .unwrap();
        assert!(added2.is_empty());
        assert_eq!(again, after);
        let (removed, events) = json_uninstall(
            p,
            &after,
            Agent::ClaudeCode,
            Shape::Nested {
                millis: false,
                top: false,
            },
            "ahp",
        )
        .unwrap();
        assert_eq!(events.len(), added.len());
        assert_eq!(removed.as_deref(), Some(before));
    }

    #[test]
    fn a_file_install_created_is_removed_whole() {
        let p = Path::new("hooks.json");
        let (after, _, _) = json_install(p, None, Agent::Cursor, Shape::Cursor, "ahp").unwrap();
        assert!(
            after.starts_with("{\n  \"version\": 1,\n  \"hooks\": {\n"),
            "{after}"
        );
        let (removed, _) = json_uninstall(p, &after, Agent::Cursor, Shape::Cursor, "ahp").unwrap();
        assert_eq!(removed, None);
    }

    #[test]
    fn kimi_round_trip_keeps_comments() {
        let p = Path::new("config.toml");
        let before = "# my kimi\ndefault_model = \"k2\" # inline\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\n\n[ui]\ntheme = \"dark\"\n";
        let (after, added, _) = kimi_install(p, Some(before), Agent::Kimi, "ahp").unwrap();
        assert!(!added.is_empty());
        assert!(
            after.contains("# my kimi") && after.contains("# inline"),
            "{after}"
        );
        let (again, added2, _) = kimi_install(p, Some(&after), Agent::Kimi, "ahp").unwrap();
        assert!(added2.is_empty());
        assert_eq!(again, after);
        let (removed, _) = kimi_uninstall(p, &after, Agent::Kimi, "ahp").unwrap();
        assert_eq!(removed.as_deref(), Some(before), "after install:\n{after}");
    }
}
