//! Agent adapters: one per agent hook protocol (`PROTOCOLS.md`).
//!
//! An adapter does two pure things. [`parse`] turns the agent's stdin JSON
//! into an [`Inbound`]: the ahp [`Event`] and a [`HookContext`] whose tool
//! name is normalized to the shared vocabulary (shell, write, edit, read,
//! fetch, mcp) with the agent's own name kept in `tool.raw_name`. [`render`]
//! turns a [`Decision`] into the agent's answer: stdout, stderr and exit
//! code. Each agent keeps its event names and its tool names in one table
//! ([`Agent::events`], [`Agent::tools`]), so a protocol change is a one-line
//! fix.
//!
//! Running the engine, the stop-loop guard and failing open live in
//! `hook.rs`; writing the agents' config files lives in `install.rs`.
//!
//! ```
//! use ahp::adapters::{parse, Agent};
//! use ahp::Event;
//! let payload = serde_json::json!({
//!     "session_id": "s1", "cwd": "/repo", "hook_event_name": "PreToolUse",
//!     "tool_name": "Bash", "tool_input": {"command": "ls"}
//! });
//! let inbound = parse(Agent::ClaudeCode, &payload, None).unwrap();
//! assert_eq!(inbound.event, Some(Event::PreToolUse));
//! let tool = inbound.context.tool.unwrap();
//! assert_eq!(tool.name, "shell");
//! assert_eq!(tool.raw_name.as_deref(), Some("Bash"));
//! ```

mod agenthooks;
mod claude;
mod copilot;
mod cursor;
mod droid;
mod gemini;
mod kimi;
mod opencode;
mod qwen;
mod windsurf;

use ahp_engine::{Event, HookContext, Intensity, Outcome, Payload, ToolCall, Turn, Verdict};
use serde_json::{Map, Value, json};

ahp_engine::name_enum! {
    /// An agent whose hook protocol ahp speaks.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
    pub enum Agent {
        /// Claude Code (`.claude/settings.json`).
        #[value(name = "claude-code")]
        ClaudeCode => "claude-code",
        /// OpenAI Codex CLI (`.codex/hooks.json`; Claude-shaped payloads, no "ask").
        Codex => "codex",
        /// Gemini CLI (`.gemini/settings.json`).
        Gemini => "gemini",
        /// GitHub Copilot CLI and VS Code (`.github/hooks/ahp.json`; camelCase
        /// and PascalCase hooks).
        Copilot => "copilot",
        /// Cursor (`.cursor/hooks.json`).
        Cursor => "cursor",
        /// Kimi Code CLI (`[[hooks]]` in `~/.kimi-code/config.toml`).
        Kimi => "kimi",
        /// Qwen Code (`.qwen/settings.json`): Claude Code's hooks over Gemini
        /// CLI's tools.
        Qwen => "qwen",
        /// Factory Droid (`.factory/hooks.json`): Claude Code's hooks over its
        /// own tools.
        Droid => "droid",
        /// OpenCode, through the plugin `ahp install opencode` writes
        /// (`.opencode/plugins/ahp.js`).
        #[value(name = "opencode")]
        OpenCode => "opencode",
        /// Windsurf's Cascade hooks (`.windsurf/hooks.json`).
        Windsurf => "windsurf",
        /// The Agent Hooks standard (not installed: ahp runs HOOK.md hooks itself).
        #[value(name = "agenthooks")]
        AgentHooks => "agenthooks",
    }
}

/// An agent's event names and the ahp event each maps to.
type Events = &'static [(&'static str, Option<Event>)];
/// An agent's tool names and their shared-vocabulary names.
type Tools = &'static [(&'static str, &'static str)];

impl Agent {
    /// The agent's event names and the ahp event each maps to; `None` marks
    /// an event the agent has but ahp deliberately ignores (answered with
    /// an empty allow).
    ///
    /// ```
    /// use ahp::adapters::Agent;
    /// use ahp::Event;
    /// let stop = Agent::Gemini.events().iter().find(|(n, _)| *n == "AfterAgent").unwrap();
    /// assert_eq!(stop.1, Some(Event::PreAgentTurnStop));
    /// ```
    pub fn events(self) -> Events {
        self.tables().0
    }

    /// The agent's tool names and their shared-vocabulary names. Tools not
    /// listed keep their own name.
    ///
    /// ```
    /// use ahp::adapters::Agent;
    /// assert!(Agent::Kimi.tools().contains(&("Shell", "shell")));
    /// ```
    pub fn tools(self) -> Tools {
        self.tables().1
    }

    /// The agent's event and tool tables, one line per agent.
    fn tables(self) -> (Events, Tools) {
        match self {
            Agent::ClaudeCode => (claude::EVENTS, claude::TOOLS),
            Agent::Codex => (claude::CODEX_EVENTS, claude::CODEX_TOOLS),
            Agent::Gemini => (gemini::EVENTS, gemini::TOOLS),
            Agent::Copilot => (copilot::EVENTS, copilot::TOOLS),
            Agent::Cursor => (cursor::EVENTS, cursor::TOOLS),
            Agent::Kimi => (kimi::EVENTS, kimi::TOOLS),
            Agent::Qwen => (qwen::EVENTS, qwen::TOOLS),
            Agent::Droid => (droid::EVENTS, droid::TOOLS),
            Agent::OpenCode => (opencode::EVENTS, opencode::TOOLS),
            Agent::Windsurf => (windsurf::EVENTS, windsurf::TOOLS),
            Agent::AgentHooks => (agenthooks::EVENTS, agenthooks::TOOLS),
        }
    }

    /// The ahp event for one of the agent's event names (exact match
    /// first, then case-insensitive). `Ok(None)`: known and ignored.
    pub fn map_event(self, native: &str) -> Result<Option<Event>, AdapterError> {
        let table = self.events();
        if let Some((_, e)) = table.iter().find(|(n, _)| *n == native) {
            return Ok(*e);
        }
        if let Some((_, e)) = table.iter().find(|(n, _)| n.eq_ignore_ascii_case(native)) {
            return Ok(*e);
        }
        let known: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        Err(AdapterError::new(format!(
            "unknown {} event `{}`; known events: {}",
            self.as_str(),
            native.escape_debug(),
            known.join(", ")
        )))
    }

    /// The shared-vocabulary name of one of the agent's tools.
    pub fn normalize_tool(self, raw: &str) -> String {
        if raw.starts_with("mcp__") || raw.starts_with("mcp_") {
            return "mcp".into();
        }
        let own = self.tools().iter();
        // VS Code sends its own tool names to the hooks it reads from
        // Copilot's and Claude Code's settings.
        let vs_code = match self {
            Agent::Copilot | Agent::ClaudeCode => copilot::VS_CODE_TOOLS,
            _ => &[],
        };
        let mut tools = own.chain(vs_code.iter());
        tools
            .clone()
            .find(|(n, _)| *n == raw)
            .or_else(|| tools.find(|(n, _)| n.eq_ignore_ascii_case(raw)))
            .map_or_else(|| raw.to_string(), |(_, v)| (*v).to_string())
    }
}

/// ahp's shared name of an agent's own tool name (`Bash` → `shell`, any
/// case, as the adapters read it), when some agent uses it for one of the
/// shared tools: what lets the loader tell that `when: {tool.name: Bash}`
/// never holds.
///
/// ```
/// use ahp::adapters::shared_tool_name;
/// assert_eq!(shared_tool_name("Bash"), Some("shell"));
/// assert_eq!(shared_tool_name("mcp__github__create_issue"), Some("mcp"));
/// assert_eq!(shared_tool_name("TodoWrite"), None);
/// ```
pub fn shared_tool_name(name: &str) -> Option<&'static str> {
    if name.starts_with("mcp__") || name.starts_with("mcp_") {
        return Some("mcp");
    }
    Agent::ALL
        .iter()
        .flat_map(|a| a.tools())
        .chain(copilot::VS_CODE_TOOLS)
        .find(|(raw, _)| raw.eq_ignore_ascii_case(name))
        .map(|(_, shared)| *shared)
}

/// A context given to `ahp run` or `ahp explain` names its tool as some
/// agent would (`Bash`, `run_shell_command`): it is read as the agents'
/// hooks read it, so `when: {tool: shell}` and `tool.name == 'shell'` mean
/// the same under `ahp run` as under `ahp hook`. The first agent (in
/// [`Agent::ALL`]'s order) that knows the name decides; a name no agent knows,
/// or a context that already gives `raw_name`, is left as it is. The file
/// the tool acts on (`tool.path`) is read from its input as the adapters
/// read it, when the context does not give it.
///
/// ```
/// let mut tool = ahp::engine::ToolCall::default();
/// tool.name = "Read".into();
/// tool.input = serde_json::json!({"file_path": "src/main.rs"});
/// ahp::adapters::normalize_context_tool(&mut tool);
/// assert_eq!((tool.name.as_str(), tool.raw_name.as_deref()), ("read", Some("Read")));
/// assert_eq!(tool.path.as_deref(), Some("src/main.rs"));
/// ```
pub fn normalize_context_tool(tool: &mut ahp_engine::context::ToolCall) {
    if tool.path.is_none() {
        tool.path = path_of(&tool.input);
    }
    if tool.raw_name.is_some() || tool.name.is_empty() {
        return;
    }
    let known = Agent::ALL.iter().find_map(|a| {
        let n = a.normalize_tool(&tool.name);
        (n != tool.name).then_some(n)
    });
    if let Some(normalized) = known {
        tool.raw_name = Some(std::mem::replace(&mut tool.name, normalized));
    }
}

/// An agent payload ahp cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AdapterError(pub String);

impl AdapterError {
    fn new(message: impl Into<String>) -> Self {
        AdapterError(message.into())
    }
}

/// One hook call, read from the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbound {
    /// Whose protocol.
    pub agent: Agent,
    /// The agent's event name as it came.
    pub native_event: String,
    /// The ahp event; `None` for an event ahp ignores.
    pub event: Option<Event>,
    /// The context for the engine.
    pub context: HookContext,
    /// Copilot's camelCase protocol (its own output shape) rather than the
    /// Claude-shaped PascalCase one.
    pub camel: bool,
}

impl Inbound {
    /// The session, if the agent sent one.
    pub fn session(&self) -> Option<&str> {
        self.context.session_id.as_deref()
    }

    /// Whether the agent says it is going on because a stop hook refused
    /// its last stop (`stop_hook_active`).
    pub fn stop_hook_active(&self) -> bool {
        self.context.turn.as_ref().and_then(|t| t.stop_hook_active) == Some(true)
    }

    /// The agent's working directory, if it sent one.
    pub fn cwd(&self) -> Option<&str> {
        self.context.work_dir.as_deref()
    }
}

/// Reads an agent payload. `event` overrides the payload's event name (for
/// protocols whose stdin does not carry one, like Copilot's camelCase
/// hooks, `ahp install` passes `--event`).
///
/// ```
/// use ahp::adapters::{parse, Agent};
/// let p = serde_json::json!({"sessionId": "s", "cwd": "/r", "toolName": "bash",
///                            "toolArgs": "{\"command\":\"rm -rf /\"}"});
/// let inbound = parse(Agent::Copilot, &p, Some("preToolUse")).unwrap();
/// assert_eq!(inbound.context.tool.unwrap().input["command"], "rm -rf /");
/// ```
pub fn parse(agent: Agent, payload: &Value, event: Option<&str>) -> Result<Inbound, AdapterError> {
    let obj = payload.as_object().ok_or_else(|| {
        AdapterError::new(format!(
            "{agent} hook input: expected a JSON object, found {}",
            kind_of(payload)
        ))
    })?;
    let mut inbound = match agent {
        Agent::ClaudeCode
        | Agent::Codex
        | Agent::Kimi
        | Agent::Qwen
        | Agent::Droid
        | Agent::OpenCode
        | Agent::Gemini => claude::parse(agent, obj, event)?,
        Agent::Copilot => copilot::parse(obj, event)?,
        Agent::Cursor => cursor::parse(obj, event)?,
        Agent::Windsurf => windsurf::parse(obj, event)?,
        Agent::AgentHooks => agenthooks::parse(obj, event)?,
    };
    // A tool call ahp cannot see would be judged as no call at all: every
    // rule on the tool silently passes.
    if inbound.event == Some(Event::PreToolUse) {
        match inbound.context.tool.as_ref().map(|t| &t.input) {
            None => {
                return Err(AdapterError::new(format!(
                    "{agent} hook input: a `{}` event without a tool name",
                    inbound.native_event.escape_debug()
                )));
            }
            // No input at all (null) is an empty one.
            Some(input) if !input.is_object() && !input.is_null() => {
                return Err(AdapterError::new(format!(
                    "{agent} hook input: the tool's input must be a JSON object, found {}",
                    kind_of(input)
                )));
            }
            Some(_) => {}
        }
    }
    inbound.context.event = inbound.event;
    inbound.context.raw = Some(payload.clone());
    inbound.context.extra.insert(
        "agent".into(),
        json!({"name": agent.as_str(), "event": inbound.native_event}),
    );
    Ok(inbound)
}

/// What the agent can express at one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caps {
    /// It can ask the user (`ask`).
    pub ask: bool,
    /// It can take a rewritten tool input.
    pub rewrite: bool,
}

/// What to do with a prompt where the agent cannot ask
/// (`settings.prompt_fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptFallback {
    /// Proceed with the message as context (PROTOCOLS.md's default).
    #[default]
    Context,
    /// Deny with the message as the reason.
    Deny,
}

/// What to do with a control where the agent cannot take a rewritten input
/// (`settings.rewrite_fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RewriteFallback {
    /// Deny with "rewrite required: …" so the agent retries with the
    /// change made (the default: never run the unmodified input).
    #[default]
    Deny,
    /// Proceed unmodified with the change described as context.
    Context,
}

/// The fallbacks `settings.prompt_fallback` and `settings.rewrite_fallback`
/// choose (their values are checked when the policy is compiled).
pub(crate) fn fallbacks(
    settings: &ahp_config::HookSettings,
    inbound: &Inbound,
    event: Event,
) -> (PromptFallback, RewriteFallback) {
    // Where the agent's answer carries no context for the model, a prompt
    // given as context would be dropped: it is refused with its reason.
    let reaches = context_reaches_model(inbound.agent, &inbound.native_event, event);
    let prompt = if settings.prompt_fallback == "deny" || !reaches {
        PromptFallback::Deny
    } else {
        PromptFallback::Context
    };
    let rewrite = if settings.rewrite_fallback == "context" {
        RewriteFallback::Context
    } else {
        RewriteFallback::Deny
    };
    (prompt, rewrite)
}

/// Whether the agent's answer at `event` can hand the model context.
/// Gemini CLI's BeforeTool answer has no such field (its `reason` reaches
/// the model only with a refusal; found by the live suite), Droid keeps
/// a PreToolUse `additionalContext` in its transcript only, and Windsurf's
/// Cascade reads nothing but a block's stderr.
pub(crate) fn context_reaches_model(agent: Agent, native: &str, event: Event) -> bool {
    // Windsurf's model reads only a block's stderr.
    agent != Agent::Windsurf
        && !(matches!(agent, Agent::Gemini | Agent::Droid) && event == Event::PreToolUse)
        // Cursor's file-read answer is allow or deny and nothing else.
        && !(agent == Agent::Cursor && matches!(native, "beforeReadFile" | "beforeTabFileRead"))
}

/// The answer to give, before it is put in the agent's words.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Proceed; `context` (if any) is added for the model.
    Allow {
        /// Additional context.
        context: Option<String>,
    },
    /// Proceed with the rewritten tool input (the whole input).
    Rewrite {
        /// The composed input.
        input: Value,
        /// What was changed and why.
        reason: String,
        /// Additional context from aid signals.
        context: Option<String>,
    },
    /// Ask the user; `input` is the rewritten input to show, if any.
    Ask {
        /// The question.
        reason: String,
        /// The rewritten input, when a control also applied.
        input: Option<Value>,
    },
    /// Do not proceed.
    Deny {
        /// The reasons and the fix list.
        reason: String,
    },
}

/// Longest text handed to an agent (Claude Code's limit for hook strings).
pub const MAX_TEXT: usize = 10_000;

impl Decision {
    /// The decision for a verdict, given what the agent can express.
    ///
    /// ```
    /// use ahp::adapters::{Caps, Decision, PromptFallback, RewriteFallback};
    /// use ahp::engine::{Event, Outcome, Signal, Verdict};
    /// let v = Verdict {
    ///     outcome: Outcome::Block,
    ///     event: Event::PreToolUse,
    ///     correlation_id: "c".into(),
    ///     signals: vec![Signal::block("no").with_resolution_path(["do it safely"])],
    ///     shadow: vec![],
    ///     context_changes: vec![],
    ///     diagnostics: vec![],
    ///     entries: vec![],
    ///     context: Default::default(),
    /// };
    /// let d = Decision::from_verdict(&v, Caps::default(), PromptFallback::Context, RewriteFallback::Deny);
    /// let Decision::Deny { reason } = d else { panic!() };
    /// assert!(reason.contains("no") && reason.contains("- do it safely"));
    /// ```
    pub fn from_verdict(
        v: &Verdict,
        caps: Caps,
        prompt: PromptFallback,
        rewrite: RewriteFallback,
    ) -> Decision {
        let mut d = Self::unmasked(v, caps, prompt, rewrite);
        d.mask_secrets();
        d
    }

    fn unmasked(
        v: &Verdict,
        caps: Caps,
        prompt: PromptFallback,
        rewrite: RewriteFallback,
    ) -> Decision {
        let aid = texts(v, Intensity::Aid);
        match v.outcome {
            Outcome::Accept => Decision::Allow { context: None },
            Outcome::Aid => Decision::Allow { context: aid },
            Outcome::Block => Decision::Deny {
                reason: texts(v, Intensity::Block).unwrap_or_else(|| "blocked by ahp".into()),
            },
            Outcome::Prompt => {
                let reason = texts(v, Intensity::Prompt).unwrap_or_default();
                if caps.ask {
                    Decision::Ask {
                        reason: join_opt(Some(reason), aid).unwrap_or_default(),
                        input: None,
                    }
                } else {
                    match prompt {
                        PromptFallback::Context => Decision::Allow {
                            context: join_opt(Some(reason), aid),
                        },
                        PromptFallback::Deny => Decision::Deny { reason },
                    }
                }
            }
            Outcome::Control => {
                let reason = texts(v, Intensity::Control).unwrap_or_default();
                let prompt_text = texts(v, Intensity::Prompt);
                // Only changes to the tool input reach an agent; others
                // (to ahp's own view of a stop or a prompt) are told.
                let touches_input = v.context_changes.iter().any(|c| {
                    c.modification.target == "tool.input"
                        || c.modification.target.starts_with("tool.input.")
                });
                let input = v
                    .context
                    .tool
                    .as_ref()
                    .map(|t| t.input.clone())
                    .filter(|_| touches_input);
                match input {
                    Some(input) if caps.rewrite => match prompt_text {
                        // A prompt next to a rewrite still asks: the user
                        // sees the rewritten input.
                        Some(p) if caps.ask => Decision::Ask {
                            reason: join_opt(Some(p), Some(reason)).unwrap_or_default(),
                            input: Some(input),
                        },
                        // An agent that cannot ask, with `prompt_fallback:
                        // deny`: the prompt refuses, rewrite or not; a
                        // rewrite must not turn it into a pass.
                        Some(p) if prompt == PromptFallback::Deny => Decision::Deny {
                            reason: format!("{p}\n\n{}", rewrite_required(&reason, &input)),
                        },
                        p => Decision::Rewrite {
                            input,
                            reason,
                            context: join_opt(p, aid),
                        },
                    },
                    // A tool input the agent cannot take rewritten: the
                    // policy's fallback decides.
                    Some(input) if rewrite == RewriteFallback::Deny => Decision::Deny {
                        reason: rewrite_required(&reason, &input),
                    },
                    _ => {
                        let told = Some(format!("ahp would change the input: {reason}"));
                        match prompt_text {
                            // Nothing rewritten, but a prompt beside the
                            // control still asks: a control must not answer
                            // with less force than the prompt next to it.
                            Some(p) if caps.ask => Decision::Ask {
                                reason: join_opt(join_opt(Some(p), told), aid).unwrap_or_default(),
                                input: None,
                            },
                            Some(p) if prompt == PromptFallback::Deny => Decision::Deny {
                                reason: join_opt(Some(p), told).unwrap_or_default(),
                            },
                            p => Decision::Allow {
                                context: join_opt(told, join_opt(p, aid)),
                            },
                        }
                    }
                }
            }
        }
    }

    /// Masks the credential shapes of [`ahp_engine::secrets`] in the text
    /// shown to the agent (reasons, context), as in the log: an oracle or a
    /// hook that quotes a command must not hand its password back to the
    /// model. Control characters are escaped as on ahp's own terminal
    /// output. A rewritten tool input is left whole: it is what runs.
    pub fn mask_secrets(&mut self) {
        let m = |s: &mut String| {
            if let std::borrow::Cow::Owned(masked) = ahp_engine::secrets::mask(s) {
                *s = masked;
            }
            // What the agent shows its user cannot drive their terminal.
            if let std::borrow::Cow::Owned(safe) = ahp_engine::unseen::escape_controls(s) {
                *s = safe;
            }
        };
        match self {
            Decision::Allow { context } => context.iter_mut().for_each(m),
            Decision::Rewrite {
                reason, context, ..
            } => {
                m(reason);
                context.iter_mut().for_each(m);
            }
            Decision::Ask { reason, .. } | Decision::Deny { reason } => m(reason),
        }
    }
}

/// The text of every signal of `intensity`: `[source] summary` and its
/// steps as a list, one paragraph per signal, cut at [`MAX_TEXT`].
fn texts(v: &Verdict, intensity: Intensity) -> Option<String> {
    let mut parts = Vec::new();
    for s in v.signals.iter().filter(|s| s.intensity() == intensity) {
        let mut p = format!("[{}] {}", s.header.source, s.payload.summary());
        let steps = s.payload.steps();
        if !steps.is_empty() && !matches!(s.payload, Payload::Control(_)) {
            p.push_str(match intensity {
                Intensity::Block => "\nTo fix:",
                Intensity::Prompt => "\nSuggestions:",
                _ => "\nNext:",
            });
            for step in steps {
                p.push_str("\n- ");
                p.push_str(&step);
            }
        }
        parts.push(p);
    }
    (!parts.is_empty()).then(|| cut(&parts.join("\n\n")))
}

/// The refusal of a rewrite the agent cannot take: the change to make, so
/// the agent retries with it.
fn rewrite_required(reason: &str, input: &Value) -> String {
    format!("rewrite required: {reason}\nRetry with this input: {input}")
}

fn join_opt(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) if !a.is_empty() => Some(cut(&format!("{a}\n\n{b}"))),
        (Some(a), None) if !a.is_empty() => Some(a),
        (_, b) => b,
    }
}

/// At most [`MAX_TEXT`] characters, on a character boundary.
pub fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_TEXT - 1).collect();
    out.push('…');
    out
}

/// The agent's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// The process exit code.
    pub exit: u8,
    /// What goes to stdout (JSON or plain context), if anything.
    pub stdout: Option<String>,
    /// What goes to stderr, if anything.
    pub stderr: Option<String>,
}

impl Reply {
    /// Exit 0, nothing said.
    pub fn silent() -> Reply {
        Reply::default()
    }

    /// Exit 0 with the texts given, one paragraph each, as plain stdout
    /// (agents that read no JSON answer); silent when there are none.
    fn text(texts: &[Option<&str>]) -> Reply {
        let t: Vec<&str> = texts.iter().flatten().copied().collect();
        if t.is_empty() {
            return Reply::silent();
        }
        Reply {
            exit: 0,
            stdout: Some(t.join("\n\n")),
            stderr: None,
        }
    }

    /// Exit 0 with `value` on stdout.
    pub fn json(value: Value) -> Reply {
        Reply {
            exit: 0,
            stdout: Some(value.to_string()),
            stderr: None,
        }
    }

    /// Exit 2 with `reason` on stderr: the block every agent understands.
    pub fn exit2(reason: &str) -> Reply {
        Reply {
            exit: 2,
            stdout: None,
            stderr: Some(reason.to_string()),
        }
    }
}

/// What the agent can express at one of its events (`native`, mapped to
/// `event`), for [`Decision::from_verdict`].
///
/// ```
/// use ahp::adapters::{caps, Agent};
/// use ahp::Event;
/// assert!(caps(Agent::ClaudeCode, "PreToolUse", Event::PreToolUse, false).ask);
/// assert!(!caps(Agent::Codex, "PreToolUse", Event::PreToolUse, false).ask);
/// assert!(!caps(Agent::Cursor, "beforeReadFile", Event::PreToolUse, false).ask);
/// assert!(!caps(Agent::Kimi, "PreToolUse", Event::PreToolUse, false).rewrite);
/// ```
pub fn caps(agent: Agent, native: &str, event: Event, camel: bool) -> Caps {
    // The permission dialog asks the user already; nothing is rewritten
    // there (Codex fails closed on `updatedInput` at this event).
    if event == Event::PermissionRequest {
        return Caps {
            ask: true,
            rewrite: false,
        };
    }
    let tool = event == Event::PreToolUse;
    // Cursor's file-read hooks know only allow and deny.
    if agent == Agent::Cursor && matches!(native, "beforeReadFile" | "beforeTabFileRead") {
        return Caps::default();
    }
    match agent {
        Agent::ClaudeCode => Caps {
            ask: tool,
            rewrite: tool,
        },
        Agent::Codex => Caps {
            ask: false,
            rewrite: tool,
        },
        Agent::Gemini => Caps {
            ask: false,
            rewrite: tool,
        },
        Agent::Copilot => Caps {
            ask: tool,
            rewrite: tool,
        }
        .only_if(camel || tool),
        Agent::Cursor => Caps {
            ask: tool,
            rewrite: false,
        },
        // Kimi's docs list no rewrite field: a rewrite it might ignore
        // would let the original input run.
        Agent::Kimi => Caps::default(),
        // See `qwen`: no rewritten input at PreToolUse.
        Agent::Qwen => Caps {
            ask: tool,
            rewrite: false,
        },
        // Droid logs an `ask` and runs the call without a question under
        // its auto modes (seen in `droid exec --auto high`): a prompt must
        // not become a pass, so it goes through `prompt_fallback`.
        Agent::Droid => Caps {
            ask: false,
            rewrite: tool,
        },
        // See `windsurf`: exit 2 or nothing.
        Agent::Windsurf => Caps::default(),
        // See `opencode`: a plugin cannot ask.
        Agent::OpenCode => Caps {
            ask: false,
            rewrite: tool,
        },
        Agent::AgentHooks => Caps {
            ask: tool,
            rewrite: tool,
        },
    }
}

impl Caps {
    fn only_if(self, yes: bool) -> Caps {
        if yes { self } else { Caps::default() }
    }
}

/// The agent's answer for a decision.
///
/// ```
/// use ahp::adapters::{parse, render, Agent, Decision};
/// let p = serde_json::json!({"session_id": "s", "cwd": "/r", "hook_event_name": "Stop",
///                            "stop_hook_active": false});
/// let inbound = parse(Agent::ClaudeCode, &p, None).unwrap();
/// let reply = render(&inbound, &Decision::Deny { reason: "tests fail".into() }, None);
/// assert_eq!(reply.exit, 0);
/// assert_eq!(reply.stdout.unwrap(), r#"{"decision":"block","reason":"tests fail"}"#);
/// ```
pub fn render(inbound: &Inbound, decision: &Decision, system_message: Option<&str>) -> Reply {
    let Some(event) = inbound.event else {
        return Reply::silent();
    };
    let native = inbound.native_event.as_str();
    match inbound.agent {
        Agent::ClaudeCode => claude::render(native, event, decision, system_message),
        Agent::Codex => claude::render_codex(native, event, decision, system_message),
        Agent::Copilot if !inbound.camel => claude::render(native, event, decision, system_message),
        Agent::Copilot => copilot::render(native, event, decision, system_message),
        Agent::Gemini => {
            let sent = inbound.context.tool.as_ref().map(|t| &t.input);
            gemini::render(native, event, decision, sent, system_message)
        }
        Agent::Cursor => cursor::render(native, event, decision, system_message),
        Agent::Kimi => kimi::render(native, event, decision, system_message),
        Agent::Windsurf => windsurf::render(decision, system_message),
        Agent::Qwen | Agent::Droid | Agent::OpenCode => {
            claude::render(native, event, decision, system_message)
        }
        Agent::AgentHooks => agenthooks::render(event, decision, system_message),
    }
}

// ---- helpers shared by the adapters ----

/// `text` (JSON) with each lone UTF-16 surrogate escape (`\ud800` without
/// its pair) turned into U+FFFD. Node's `JSON.stringify` and Python's
/// `json.dumps` write them, serde_json refuses them, and the agent still
/// runs the command (Node replaces them when it spawns): read as an
/// unreadable payload, a ` #\ud800` at the end of any command failed open.
pub(crate) fn without_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    fn escape_at(b: &[u8], at: usize) -> Option<u16> {
        let hex = b.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    }
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match escape_at(b, i) {
            Some(0xD800..=0xDBFF) if matches!(escape_at(b, i + 6), Some(0xDC00..=0xDFFF)) => {
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i]);
                o.push_str("\\ufffd");
                i += 6;
                copied = i;
            }
            // Any other escape, `\\\\` included, is two bytes or more that
            // cannot start a surrogate.
            _ => i += 2,
        }
    }
    match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string field, by the first of `names` present; a present field of
/// another type is an error naming it.
fn str_field(
    agent: &str,
    obj: &Map<String, Value>,
    names: &[&str],
) -> Result<Option<String>, AdapterError> {
    for name in names {
        match obj.get(*name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => return Ok(Some(s.clone())),
            Some(other) => {
                return Err(AdapterError::new(format!(
                    "{agent} hook input: field `{name}` must be a string, found {}",
                    kind_of(other)
                )));
            }
        }
    }
    Ok(None)
}

/// The event name: `--event` wins, then the payload's field.
fn event_name(
    agent: Agent,
    obj: &Map<String, Value>,
    field: &str,
    given: Option<&str>,
) -> Result<String, AdapterError> {
    if let Some(e) = given {
        return Ok(e.to_string());
    }
    str_field(agent.as_str(), obj, &[field])?.ok_or_else(|| {
        AdapterError::new(format!(
            "{agent} hook input: no `{field}` field; pass the event with `ahp hook {agent} --event NAME`"
        ))
    })
}

/// A timestamp given as RFC 3339 text or epoch milliseconds.
fn timestamp(v: Option<&Value>) -> Option<chrono::DateTime<chrono::Utc>> {
    match v? {
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc)),
        Value::Number(n) => chrono::DateTime::from_timestamp_millis(n.as_i64()?),
        _ => None,
    }
}

/// A context with the common fields filled.
fn base_context(
    event: Option<Event>,
    session: Option<String>,
    cwd: Option<String>,
    ts: Option<&Value>,
) -> HookContext {
    let mut ctx = HookContext::for_event(event.unwrap_or(Event::PreToolUse));
    ctx.event = event;
    ctx.session_id = session;
    ctx.work_dir = cwd;
    if let Some(t) = timestamp(ts) {
        ctx.timestamp = t;
    }
    ctx
}

/// A tool call with the name normalized.
fn tool_call(
    agent: Agent,
    raw: &str,
    input: Value,
    use_id: Option<String>,
    response: Option<Value>,
) -> ToolCall {
    let mut name = agent.normalize_tool(raw);
    // An editor tool with a `command` (Copilot's `str_replace_editor`):
    // `view` reads the file, `create` writes it whole, the rest edit it.
    if raw.contains("str_replace") {
        match input.get("command").and_then(Value::as_str) {
            Some("view") => name = "read".into(),
            Some("create") => name = "write".into(),
            _ => {}
        }
    }
    ToolCall {
        name,
        raw_name: Some(raw.to_string()),
        path: path_of(&input),
        input,
        work_dir: None,
        use_id,
        response,
        shell: None,
    }
}

/// The folder `dir` names, read from `base` when relative; `None` when
/// that is not an absolute folder, or is `base` itself.
fn dir_from(dir: &str, base: Option<&str>) -> Option<String> {
    let full = if dir.starts_with('/') {
        dir.to_string()
    } else {
        let base = base.filter(|b| b.starts_with('/'))?;
        format!("{}/{dir}", base.trim_end_matches('/'))
    };
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    let plain = full.trim_end_matches("/.");
    (!base.is_some_and(|b| same(plain, b))).then_some(full)
}

/// Where the agents put the file a tool acts on: Claude, Gemini, Cursor
/// `file_path`; Kimi, Copilot `path`; VS Code `filePath`; notebooks.
const PATH_FIELDS: &[&str] = &["file_path", "path", "filePath", "notebook_path", "dir_path"];

/// The file a tool's `input` acts on, in the first of [`PATH_FIELDS`].
fn path_of(input: &Value) -> Option<String> {
    PATH_FIELDS
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// Turn fields for agent-turn and stop events.
fn turn(
    prompt: Option<String>,
    final_message: Option<Value>,
    stop_hook_active: Option<bool>,
) -> Option<Turn> {
    if prompt.is_none() && final_message.is_none() && stop_hook_active.is_none() {
        return None;
    }
    Some(Turn {
        prompt,
        final_message,
        stop_hook_active,
        ..Turn::default()
    })
}

/// Extra payload fields kept in the context (`extra`), minus the ones the
/// adapter already mapped.
fn keep_extra(ctx: &mut HookContext, obj: &Map<String, Value>, mapped: &[&str]) {
    for (k, v) in obj {
        if !mapped.contains(&k.as_str()) && !ctx.extra.contains_key(k) {
            ctx.extra.insert(k.clone(), v.clone());
        }
    }
}

/// Puts `text` in `out[field]`, before any text already there.
fn add_text(out: &mut Value, field: &str, text: &str) {
    let Some(obj) = out.as_object_mut() else {
        return;
    };
    let joined = match obj.get(field).and_then(Value::as_str) {
        Some(old) => format!("{text}\n\n{old}"),
        None => text.to_string(),
    };
    obj.insert(field.into(), Value::String(cut(&joined)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_maps_to_events_that_exist_and_names_are_unique() {
        for agent in Agent::ALL {
            let mut seen = std::collections::HashSet::new();
            for (name, _) in agent.events() {
                assert!(seen.insert(*name), "{agent}: {name} twice");
            }
            for (raw, norm) in agent.tools() {
                assert!(
                    ["shell", "write", "edit", "read", "fetch", "mcp"].contains(norm),
                    "{agent}: {raw} → {norm} is not in the vocabulary"
                );
            }
        }
    }

    #[test]
    fn unknown_events_are_named_with_the_known_ones() {
        let e = Agent::ClaudeCode.map_event("PreToolUze").unwrap_err();
        assert!(e.0.contains("`PreToolUze`") && e.0.contains("PreToolUse"));
        assert_eq!(
            Agent::ClaudeCode.map_event("pretooluse").unwrap(),
            Some(Event::PreToolUse)
        );
        assert_eq!(
            Agent::ClaudeCode.map_event("Notification").unwrap(),
            Some(Event::Notification)
        );
        assert_eq!(Agent::ClaudeCode.map_event("WorktreeCreate").unwrap(), None);
    }

    #[test]
    fn texts_are_cut_to_the_agent_limit() {
        let long = "x".repeat(MAX_TEXT * 2);
        assert_eq!(cut(&long).chars().count(), MAX_TEXT);
        assert_eq!(cut("short"), "short");
    }
}
