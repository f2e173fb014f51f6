//! The `Script` oracle: a HOOK.md script hook (the Agent Hooks standard,
//! SPEC §4.3) run as an oracle.
//!
//! The config crate discovers `HOOK.md` folders and builds one entry per
//! hook with this oracle, with this config. A hooks file cannot name it
//! (`oracle: Script` is a load error): its paths would point trust-free
//! at any program.
//!
//! ```yaml
//! - oracle: Script
//!   config:
//!     name: check-commands                      # messages; required
//!     hook_dir: /home/me/.config/agents/hooks/check-commands   # absolute; required
//!     entry: /home/me/.config/agents/hooks/check-commands/scripts/run.sh  # optional
//!     timeout_ms: 30000                         # default 30000, at most 600000
//!     matcher: { tool: "Shell|Bash", pattern: "rm -rf" }   # optional regexes
//!     project_dir: /home/me/project             # optional; default: the project root
//! ```
//!
//! # Running the hook
//!
//! **Entry point.** `entry` when given; otherwise, when the hook fires, the
//! first existing of `scripts/run`, `scripts/run.sh`, `scripts/run.py` under
//! `hook_dir`. `run` (and any entry without a `.sh`/`.py` extension) is
//! executed directly and must be executable (`chmod +x`); `.sh` runs with
//! `bash <path>`, `.py` with `python3 <path>`.
//!
//! **Matcher.** With a `matcher`, the hook runs only for tool events whose
//! tool matches: `tool` is searched in the tool's normalized `name` or in
//! its `raw_name` (the agent's own name, e.g. `Bash`), `pattern` in the tool
//! input serialized as compact JSON; both must match when both are set. A
//! context without a tool call never matches a matcher. Regexes search
//! (anchor with `^…$` for an exact name). See [`ScriptHook::matches`].
//!
//! **Working directory.** `project_dir` (the config key, else the project
//! root the oracle was built with); else the context's `work_dir` when it is
//! an existing directory; else `hook_dir`.
//!
//! **Environment.** The inherited environment plus `AHP_EVENT` (canonical
//! event name), `AHP_SESSION_ID`, `AHP_PROJECT_DIR` (the project directory,
//! else the working directory) and `AHP_HOOK_DIR`. They are always set (empty
//! when unknown), so values inherited from an outer hook never leak in.
//!
//! **stdin.** One JSON object in the Agent Hooks event shape, then stdin is
//! closed: `event_type` (the Agent Hooks name: `pre-tool-call`,
//! `post-tool-call`, `post-tool-call-failure`, every other event its
//! canonical name), `timestamp` (RFC 3339), `session_id`, `work_dir`, and
//! when present `tool_name` (the agent's raw name, else the normalized one),
//! `tool_input`, `tool_use_id`, `tool_response`, the turn fields (`prompt`,
//! `stop_reason`, `step_count`, `final_message`, `stop_hook_active`), the
//! subagent object's fields, and `context`: the whole ahp context (without
//! `raw`). See [`event_payload`]. A script need not read stdin: the input is
//! fed concurrently and a closed pipe is ignored.
//!
//! # What the hook answers
//!
//! | the hook… | the oracle says |
//! |---|---|
//! | exits 2 | **block**, stderr (trimmed) is the reason |
//! | exits 0, prints nothing | accept (no signal) |
//! | exits 0, prints a JSON object | per field, below |
//! | exits 0, prints other text | **aid** with that text (stdout is context) |
//! | exits 0, prints broken JSON (starts with `{` or `[`) | error |
//! | exits otherwise, dies by a signal, cannot start, times out | error |
//!
//! JSON fields: `decision` — `allow` (also `approve`) adds nothing, `deny`
//! (also `block`) is a **block** with `reason`, `ask` is a high-severity
//! **prompt** with `reason`, anything else is an error; `modified_input` (an
//! object) is a **control** deep-merging it into `tool.input`;
//! `additional_context` (a string, or any JSON shown compactly) is an
//! **aid**; `log` (a string or a list of strings) becomes notes of the
//! [`Evaluation`], recorded in the log and never shown to the agent. Other
//! fields are ignored beside a `decision`; without one, any other field is
//! an error naming it (a misspelt `decison` must not pass as allow).
//! Several fields give several signals. Every signal has type
//! [`SIGNAL_TYPE`].
//!
//! An error is handled by the entry's `on_error` (fail open by default: the
//! engine records a warning and the action goes on); its message names the
//! hook, the exit status and the start of stderr.
//!
//! # Processes
//!
//! The hook runs in a process group of its own (`process_group(0)`).
//! stdout and stderr are read concurrently and kept up to [`OUTPUT_CAP`]
//! bytes each; the rest is read and discarded, so the hook never blocks on a
//! full pipe, and the truncation is noted. Output need not be UTF-8 (it is
//! decoded lossily).
//!
//! * **Timeout**: the group gets SIGTERM, then after [`TERM_GRACE`] SIGKILL,
//!   repeated a few rounds to catch processes forked meanwhile; the hook is
//!   reaped and the evaluation fails.
//! * **Normal exit**: whatever is left in the group (e.g. a `cmd &` the
//!   script did not wait for) is killed with SIGKILL, and a note says so —
//!   a hook must not outlive its run; work that should go on belongs in an
//!   `async` hook.
//!   Pipes still held open by a process that left the group are read for at
//!   most [`DRAIN_GRACE`], then abandoned.
//! * **Cancellation**: when the evaluation is dropped (the engine's own
//!   timeout), a guard kills the group, and the child is killed on drop and
//!   reaped by tokio.
//!
//! A process that leaves the group (`setsid`, `setpgid`) escapes the group
//! kill; only its pipes are given up on.

use crate::settings::{Millis, timeout_ms};
use crate::template::truncate;
use ahp_engine::oracle::kind_of;
use ahp_engine::pattern::Pattern;
use ahp_engine::{
    Evaluation, Event, HookContext, Modification, Oracle, OracleConfig, OracleConfigError,
    OracleError, Severity, Signal, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;
use tokio::process::Command;

use crate::scripts::process::{self, Captured, ProcessError, Run as ProcessRun, TRUNCATED_NOTE};
pub use crate::scripts::process::{DRAIN_GRACE, OUTPUT_CAP, TERM_GRACE};

type Run = ProcessRun;

/// The Script oracle's settings: ahp writes them from a HOOK.md hook (a
/// hooks file cannot name this oracle).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    /// The hook's name.
    pub name: String,
    /// Its folder (absolute).
    pub hook_dir: String,
    /// The script run (absolute; default: found in the folder).
    pub entry: Option<String>,
    /// Its time limit in milliseconds.
    pub timeout_ms: Option<Millis>,
    /// Which tool calls it fires on.
    pub matcher: Option<MatcherSpec>,
    /// The project it runs in.
    pub project_dir: Option<String>,
}

/// `matcher:` of a script hook: regexes, both must match when both are set.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatcherSpec {
    /// On the tool's name.
    pub tool: Option<String>,
    /// On the tool input serialized as JSON.
    pub pattern: Option<String>,
}

/// The `type` of every signal a script hook raises (the hook itself is the
/// signal's `source`).
pub const SIGNAL_TYPE: &str = "script-hook";

/// The timeout when `timeout_ms` is not set (30 s).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The largest `timeout_ms` accepted (10 minutes, as for HOOK.md).
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// How many characters of stderr an error message shows.
const STDERR_SHOWN: usize = 500;

/// The top-level keys of a hook's JSON answer (see the [module docs](self)).
const ANSWER_KEYS: &[&str] = &[
    "decision",
    "reason",
    "modified_input",
    "additional_context",
    "log",
];

/// How many unknown keys of an answer its error names.
const UNKNOWN_KEYS_SHOWN: usize = 5;

/// A HOOK.md script hook as an oracle. Build with
/// [`ScriptHook::from_config`]; see the [module docs](self) for the
/// protocol.
///
/// ```
/// use ahp_oracles::scripts::script::ScriptHook;
/// use ahp_engine::{HookContext, OracleConfig, ToolCall};
/// use serde_json::json;
///
/// let config = json!({
///     "name": "no-force-push",
///     "hook_dir": "/opt/hooks/no-force-push",
///     "matcher": {"tool": "^(shell|Bash)$", "pattern": "push.*--force"},
/// });
/// let hook = ScriptHook::from_config(OracleConfig::new(&config, None)).unwrap();
/// let mut ctx = HookContext::default();
/// ctx.tool = Some(ToolCall {
///     name: "shell".into(),
///     input: json!({"command": "git push --force"}),
///     ..ToolCall::default()
/// });
/// assert!(hook.matches(&ctx));
/// ```
#[derive(Debug, Clone)]
pub struct ScriptHook {
    name: String,
    hook_dir: PathBuf,
    entry: Option<PathBuf>,
    timeout: Duration,
    matcher: Option<ToolMatcher>,
    project_dir: Option<PathBuf>,
}

#[derive(Debug, Clone)]
struct ToolMatcher {
    tool: Option<Pattern>,
    pattern: Option<Pattern>,
}

/// How the entry point is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// Executed directly (`scripts/run`, or an `entry` without `.sh`/`.py`).
    Direct(PathBuf),
    /// `bash <path>` (`.sh`).
    Bash(PathBuf),
    /// `python3 <path>` (`.py`).
    Python(PathBuf),
}

impl Launch {
    /// The script's path.
    pub fn path(&self) -> &Path {
        match self {
            Launch::Direct(p) | Launch::Bash(p) | Launch::Python(p) => p,
        }
    }

    /// How a path is started, by its extension.
    fn for_path(path: PathBuf) -> Launch {
        match path.extension().and_then(|e| e.to_str()) {
            Some("sh") => Launch::Bash(path),
            Some("py") => Launch::Python(path),
            _ => Launch::Direct(path),
        }
    }

    /// The program run, for messages.
    fn program(&self) -> String {
        match self {
            Launch::Direct(p) => p.display().to_string(),
            Launch::Bash(_) => "bash".to_string(),
            Launch::Python(_) => "python3".to_string(),
        }
    }

    fn command(&self) -> Command {
        match self {
            Launch::Direct(p) => Command::new(p),
            Launch::Bash(p) => {
                let mut c = Command::new("bash");
                c.arg(p);
                c
            }
            Launch::Python(p) => {
                let mut c = Command::new("python3");
                c.arg(p);
                c
            }
        }
    }
}

impl ScriptHook {
    /// Builds the oracle from its `config:` map (see the [module
    /// docs](self)). Errors name the key: `name` or `hook_dir` when missing,
    /// `hook_dir` or `entry` when not absolute, `timeout_ms` when out of
    /// range, `matcher.tool` / `matcher.pattern` for a bad regex, and an
    /// unknown key with a "did you mean".
    ///
    /// ```
    /// use ahp_oracles::scripts::script::ScriptHook;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    ///
    /// let bad = json!({"name": "x", "hook_dir": "/h", "matcher": {"pattern": "("}});
    /// let err = ScriptHook::from_config(OracleConfig::new(&bad, None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("matcher.pattern"));
    /// let typo = json!({"name": "x", "hook_dir": "/h", "timeout": 5});
    /// let err = ScriptHook::from_config(OracleConfig::new(&typo, None)).unwrap_err();
    /// assert!(err.to_string().contains("did you mean `timeout_ms`"), "{err}");
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: ScriptConfig = cfg.parse()?;
        let name = required_str(&c.name, "name", "`name: check-commands`")?.trim();
        let hook_dir = absolute_path(
            required_str(
                &c.hook_dir,
                "hook_dir",
                "`hook_dir: /home/me/.config/agents/hooks/x`",
            )?,
            "hook_dir",
        )?;
        let entry = c
            .entry
            .as_deref()
            .map(|e| absolute_path(e, "entry"))
            .transpose()?;
        let timeout_ms = timeout_ms(c.timeout_ms, "timeout_ms", MAX_TIMEOUT_MS)?
            .map_or(DEFAULT_TIMEOUT_MS, |d| {
                u64::try_from(d.as_millis()).unwrap_or(MAX_TIMEOUT_MS)
            });
        let matcher = match &c.matcher {
            None => None,
            Some(m) => ToolMatcher::from_config(m)?,
        };
        let project_dir = match c.project_dir.as_deref() {
            Some(p) if !p.trim().is_empty() => Some(PathBuf::from(p)),
            _ => cfg.project_dir(),
        };
        Ok(ScriptHook {
            name: name.to_string(),
            hook_dir,
            entry,
            timeout: Duration::from_millis(timeout_ms),
            matcher,
            project_dir,
        })
    }

    /// The hook's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The hook's folder.
    pub fn hook_dir(&self) -> &Path {
        &self.hook_dir
    }

    /// The time the hook gets before its process group is killed.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the hook runs for this context: always without a matcher;
    /// with one, only for a tool call whose `name` or `raw_name` matches
    /// `tool` and whose input, as compact JSON, matches `pattern` (each when
    /// set).
    pub fn matches(&self, ctx: &HookContext) -> bool {
        let Some(m) = &self.matcher else {
            return true;
        };
        let Some(tool) = &ctx.tool else {
            return false;
        };
        if let Some(re) = &m.tool {
            let raw_matches = tool.raw_name.as_deref().is_some_and(|r| re.is_match(r));
            if !re.is_match(&tool.name) && !raw_matches {
                return false;
            }
        }
        if let Some(re) = &m.pattern {
            let input = serde_json::to_string(&tool.input).unwrap_or_default();
            if !re.is_match(&input) {
                return false;
            }
        }
        true
    }

    /// The entry point and how it is started: `entry` when configured (it
    /// must exist), else the first existing of `scripts/run`,
    /// `scripts/run.sh`, `scripts/run.py`. A directly executed file must be
    /// executable.
    pub fn launch(&self) -> Result<Launch, OracleError> {
        let launch = match &self.entry {
            Some(entry) => {
                if !entry.is_file() {
                    return Err(OracleError::new(format!(
                        "hook `{}`: entry point {} does not exist",
                        self.name,
                        entry.display()
                    )));
                }
                Launch::for_path(entry.clone())
            }
            None => {
                let scripts = self.hook_dir.join("scripts");
                let run = scripts.join("run");
                let sh = scripts.join("run.sh");
                let py = scripts.join("run.py");
                if run.is_file() {
                    Launch::Direct(run)
                } else if sh.is_file() {
                    Launch::Bash(sh)
                } else if py.is_file() {
                    Launch::Python(py)
                } else {
                    return Err(OracleError::new(format!(
                        "hook `{}` has no entry point: expected scripts/run, scripts/run.sh or scripts/run.py in {}",
                        self.name,
                        self.hook_dir.display()
                    )));
                }
            }
        };
        if let Launch::Direct(path) = &launch
            && !std::fs::metadata(path).is_ok_and(|m| ahp_engine::paths::is_executable(&m))
        {
            return Err(self.not_executable(path));
        }
        Ok(launch)
    }

    /// The working directory for `ctx`: `project_dir`, else an existing
    /// `work_dir` of the context, else `hook_dir`.
    pub fn working_dir(&self, ctx: &HookContext) -> PathBuf {
        if let Some(p) = &self.project_dir {
            return p.clone();
        }
        if let Some(w) = ctx.work_dir.as_deref().filter(|w| !w.is_empty()) {
            let w = Path::new(w);
            if w.is_dir() {
                return w.to_path_buf();
            }
        }
        self.hook_dir.clone()
    }

    fn not_executable(&self, path: &Path) -> OracleError {
        OracleError::new(format!(
            "hook `{}`: {} is not executable; make it executable with `chmod +x {}` (or name it run.sh / run.py to run it with bash / python3)",
            self.name,
            path.display(),
            path.display()
        ))
    }

    /// Starts the hook, feeds it, collects its output and cleans up its
    /// process group.
    async fn run(
        &self,
        launch: &Launch,
        cwd: &Path,
        ctx: &HookContext,
    ) -> Result<Run, OracleError> {
        if !cwd.is_dir() {
            return Err(OracleError::new(format!(
                "hook `{}`: working directory {} does not exist",
                self.name,
                cwd.display()
            )));
        }
        let input = serde_json::to_vec(&event_payload(ctx, cwd)).map_err(|e| {
            OracleError::new(format!(
                "hook `{}`: cannot serialize the event: {e}",
                self.name
            ))
        })?;
        let project = self.project_dir.as_deref().unwrap_or(cwd);

        let mut cmd = launch.command();
        cmd.current_dir(cwd);
        cmd.env("AHP_EVENT", ctx.event.map(Event::as_str).unwrap_or(""))
            .env("AHP_SESSION_ID", ctx.session_id.as_deref().unwrap_or(""))
            .env("AHP_PROJECT_DIR", project)
            .env("AHP_HOOK_DIR", &self.hook_dir)
            // Python would run a committed `__pycache__/*.pyc` in place of
            // the source `ahp trust` showed, and write one into the hook's
            // folder, changing what was trusted. Its bytecode cache goes
            // under `/dev/null`, where no folder can ever exist: never read,
            // never written.
            .env("PYTHONPYCACHEPREFIX", "/dev/null/ahp-no-bytecode")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        match process::run(cmd, input, self.timeout).await {
            Ok(run) => Ok(run),
            Err(ProcessError::Spawn(e)) => Err(self.spawn_error(launch, &e)),
            Err(ProcessError::Lost(e)) => Err(OracleError::new(format!(
                "hook `{}`: lost track of its process: {e}",
                self.name
            ))),
            Err(ProcessError::TimedOut(t)) => Err(OracleError::new(format!(
                "hook `{}` timed out after {} ms; its process group was killed",
                self.name,
                t.as_millis()
            ))),
        }
    }

    fn spawn_error(&self, launch: &Launch, e: &io::Error) -> OracleError {
        if e.kind() == io::ErrorKind::PermissionDenied
            && let Launch::Direct(p) = launch
        {
            return self.not_executable(p);
        }
        let hint = match (e.kind(), launch) {
            (io::ErrorKind::NotFound, Launch::Bash(_) | Launch::Python(_)) => {
                format!(" (is {} installed and on PATH?)", launch.program())
            }
            (_, Launch::Direct(_)) if e.raw_os_error() == Some(ENOEXEC) => {
                " (does the script start with a `#!` line such as `#!/bin/sh`?)".to_string()
            }
            _ => String::new(),
        };
        OracleError::new(format!(
            "hook `{}`: cannot start {}: {e}{hint}",
            self.name,
            launch.program()
        ))
    }

    /// Maps a finished run to signals and notes (SPEC §4.3).
    fn interpret(&self, run: Run) -> Result<Evaluation, OracleError> {
        let name = &self.name;
        match run.status.code() {
            Some(2) => {
                let mut reason = run.stderr.text().trim().to_string();
                if reason.is_empty() {
                    reason = format!(
                        "hook `{name}` blocked the action (exit 2) without giving a reason"
                    );
                }
                if run.stderr.truncated {
                    reason.push_str(&format!(" [stderr {TRUNCATED_NOTE}]"));
                }
                Ok(Evaluation {
                    signals: vec![Signal::block(reason).with_type(SIGNAL_TYPE)],
                    notes: Vec::new(),
                    redactions: Vec::new(),
                })
            }
            Some(0) => self.interpret_stdout(&run.stdout),
            _ => {
                let stderr = run.stderr.text();
                let stderr = stderr.trim();
                let detail = if stderr.is_empty() {
                    "; it wrote nothing to stderr".to_string()
                } else {
                    format!(": {}", truncate(stderr, STDERR_SHOWN))
                };
                Err(OracleError::new(format!(
                    "hook `{name}` failed ({}){detail}",
                    describe_status(run.status)
                )))
            }
        }
    }

    fn interpret_stdout(&self, stdout: &Captured) -> Result<Evaluation, OracleError> {
        let name = &self.name;
        // What was cut may hold the answer (a deny after a flood of text
        // or blanks): read as it stands, the decision would be lost.
        if stdout.truncated {
            return Err(OracleError::new(format!(
                "hook `{name}` printed more than the 1 MiB read on stdout, so its answer may be in what was cut: print the JSON answer or the context alone on stdout (other output to stderr)"
            )));
        }
        let text = stdout.text();
        // A byte-order mark (Python's `utf-8-sig`, PowerShell) is no text.
        let text = text.trim_start_matches('\u{feff}').trim();
        if text.is_empty() {
            return Ok(Evaluation::default());
        }
        if !(text.starts_with('{') || text.starts_with('[')) {
            // Text that ends in a JSON answer (on its last line, or from
            // the first line that opens an object: pretty-printed) is a
            // hook that logged to stdout first: taken as text, its
            // decision would be lost.
            let answer = |from: &str| {
                serde_json::from_str::<serde_json::Map<String, Value>>(from)
                    .is_ok_and(|a| a.contains_key("decision"))
            };
            let last = text.lines().next_back().unwrap_or_default().trim();
            // The first and the last line that opens an object (a logged
            // JSON line may come before the answer).
            let first = text.find("\n{").map(|at| &text[at + 1..]);
            let latest = text.rfind("\n{").map(|at| &text[at + 1..]);
            if last.starts_with('{') && answer(last)
                || first.is_some_and(answer)
                || latest.is_some_and(answer)
            {
                return Err(OracleError::new(format!(
                    "hook `{name}` printed text before its JSON answer: print the JSON object alone on stdout (other output to stderr)"
                )));
            }
            return Ok(Evaluation {
                signals: vec![Signal::aid(text).with_type(SIGNAL_TYPE)],
                notes: Vec::new(),
                redactions: Vec::new(),
            });
        }
        let value: Value = serde_json::from_str(text).map_err(|e| {
            OracleError::new(format!(
                "hook `{name}` printed invalid JSON on stdout: {e}; stdout begins: {}",
                truncate(text, 200)
            ))
        })?;
        let Value::Object(answer) = value else {
            return Err(OracleError::new(format!(
                "hook `{name}` printed {} on stdout; expected a JSON object such as {{\"decision\": \"deny\", \"reason\": \"…\"}}",
                kind_of(&value)
            )));
        };
        self.interpret_answer(&answer)
    }

    fn interpret_answer(&self, answer: &Map<String, Value>) -> Result<Evaluation, OracleError> {
        let name = &self.name;
        let reason = answer
            .get("reason")
            .map(render_text)
            .filter(|r| !r.trim().is_empty());
        let mut eval = Evaluation::default();

        // Without `decision`, a key the protocol does not know is most
        // likely a misspelt one (`decison`), and the answer would pass as
        // allow. With it, extra keys are ignored: hooks written for other
        // agents add their own (`continue`, `hookSpecificOutput`).
        if !answer.contains_key("decision") {
            let unknown: Vec<String> = answer
                .keys()
                .filter(|k| !ANSWER_KEYS.contains(&k.as_str()))
                .take(UNKNOWN_KEYS_SHOWN)
                .map(|k| match ahp_engine::suggest::suggest_key(k, ANSWER_KEYS) {
                    Some(known) => format!("`{}` (did you mean `{known}`?)", truncate(k, 100)),
                    None => format!("`{}`", truncate(k, 100)),
                })
                .collect();
            if !unknown.is_empty() {
                return Err(OracleError::new(format!(
                    "hook `{name}` returned unknown key{} {}; expected {}",
                    if unknown.len() == 1 { "" } else { "s" },
                    unknown.join(", "),
                    ANSWER_KEYS.join(", ")
                )));
            }
        }

        match answer.get("decision") {
            None | Some(Value::Null) => {}
            Some(Value::String(d)) => match d.trim().to_ascii_lowercase().as_str() {
                "allow" | "approve" => {}
                "deny" | "block" => {
                    let reason = reason
                        .clone()
                        .unwrap_or_else(|| format!("denied by hook `{name}`"));
                    eval.signals
                        .push(Signal::block(reason).with_type(SIGNAL_TYPE));
                }
                "ask" => {
                    let message = reason
                        .clone()
                        .unwrap_or_else(|| format!("hook `{name}` asks for confirmation"));
                    eval.signals.push(
                        Signal::prompt(message)
                            .with_severity(Severity::High)
                            .with_type(SIGNAL_TYPE),
                    );
                }
                _ => {
                    return Err(OracleError::new(format!(
                        "hook `{name}` returned unknown decision `{}`; expected allow, deny or ask",
                        truncate(d, 100)
                    )));
                }
            },
            Some(other) => {
                return Err(OracleError::new(format!(
                    "hook `{name}` returned a `decision` that is {}; expected \"allow\", \"deny\" or \"ask\"",
                    kind_of(other)
                )));
            }
        }

        match answer.get("modified_input") {
            None | Some(Value::Null) => {}
            Some(Value::Object(input)) => {
                let message = reason
                    .clone()
                    .unwrap_or_else(|| format!("hook `{name}` rewrote the tool input"));
                let modification = Modification::merge("tool.input", Value::Object(input.clone()))
                    .describe(format!("tool input rewritten by hook `{name}`"));
                eval.signals.push(
                    Signal::control(vec![modification])
                        .with_message(message)
                        .with_type(SIGNAL_TYPE),
                );
            }
            Some(other) => {
                return Err(OracleError::new(format!(
                    "hook `{name}` returned `modified_input` that is {}; expected an object of tool input fields",
                    kind_of(other)
                )));
            }
        }

        match answer.get("additional_context") {
            None | Some(Value::Null) => {}
            Some(v) => {
                let context = render_text(v);
                if !context.trim().is_empty() {
                    eval.signals
                        .push(Signal::aid(context).with_type(SIGNAL_TYPE));
                }
            }
        }

        match answer.get("log") {
            None | Some(Value::Null) => {}
            Some(Value::Array(lines)) => eval.notes.extend(lines.iter().map(render_text)),
            Some(v) => eval.notes.push(render_text(v)),
        }
        Ok(eval)
    }
}

#[async_trait]
impl Oracle for ScriptHook {
    /// The signals of [`Oracle::evaluate_full`] (its notes are dropped).
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.evaluate_full(ctx).await?.signals)
    }

    /// Runs the hook when the matcher lets it (see the [module docs](self))
    /// and maps its answer to signals; `log` lines become notes.
    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        if !self.matches(ctx) {
            return Ok(Evaluation::default());
        }
        let launch = self.launch()?;
        let cwd = self.working_dir(ctx);
        let run = self.run(&launch, &cwd, ctx).await?;
        let left_behind = run.left_behind;
        let mut eval = self.interpret(run)?;
        if left_behind {
            eval.notes.push(format!(
                "hook `{}` left processes running in its process group after it exited; they were killed (use an async hook for background work)",
                self.name
            ));
        }
        Ok(eval)
    }
}

impl ToolMatcher {
    fn from_config(m: &MatcherSpec) -> Result<Option<ToolMatcher>, OracleConfigError> {
        let compile =
            |src: &Option<String>, key: &str| -> Result<Option<Pattern>, OracleConfigError> {
                match src {
                    None => Ok(None),
                    Some(src) => Pattern::new(src)
                        .map(Some)
                        .map_err(|e| OracleConfigError::at(format!("matcher.{key}"), e.0)),
                }
            };
        let tool = compile(&m.tool, "tool")?;
        let pattern = compile(&m.pattern, "pattern")?;
        Ok((tool.is_some() || pattern.is_some()).then_some(ToolMatcher { tool, pattern }))
    }
}

/// The Agent Hooks name of an event: `pre-tool-call`, `post-tool-call`,
/// `post-tool-call-failure` for the tool events, the canonical name for
/// every other.
///
/// ```
/// use ahp_engine::Event;
/// use ahp_oracles::scripts::script::agent_hooks_event_name;
/// assert_eq!(agent_hooks_event_name(Event::PreToolUse), "pre-tool-call");
/// assert_eq!(agent_hooks_event_name(Event::PreAgentTurnStop), "pre-agent-turn-stop");
/// ```
pub fn agent_hooks_event_name(event: Event) -> &'static str {
    match event {
        Event::PreToolUse => "pre-tool-call",
        Event::PostToolUse => "post-tool-call",
        Event::PostToolUseFailure => "post-tool-call-failure",
        other => other.as_str(),
    }
}

/// The JSON a script hook reads on stdin (the Agent Hooks event shape; see
/// the [module docs](self)). `cwd` stands in for `work_dir` when the context
/// has none.
///
/// ```
/// use ahp_engine::{Event, HookContext, ToolCall};
/// use ahp_oracles::scripts::script::event_payload;
/// use serde_json::json;
///
/// let mut ctx = HookContext::for_event(Event::PreToolUse);
/// ctx.tool = Some(ToolCall {
///     name: "shell".into(),
///     raw_name: Some("Bash".into()),
///     input: json!({"command": "ls"}),
///     ..ToolCall::default()
/// });
/// let v = event_payload(&ctx, std::path::Path::new("/tmp"));
/// assert_eq!(v["event_type"], "pre-tool-call");
/// assert_eq!(v["tool_name"], "Bash");
/// assert_eq!(v["tool_input"]["command"], "ls");
/// assert_eq!(v["work_dir"], "/tmp");
/// assert_eq!(v["context"]["tool"]["name"], "shell");
/// ```
pub fn event_payload(ctx: &HookContext, cwd: &Path) -> Value {
    let mut o = Map::new();
    if let Some(e) = ctx.event {
        o.insert("event_type".into(), agent_hooks_event_name(e).into());
    }
    o.insert("timestamp".into(), ctx.timestamp.to_rfc3339().into());
    o.insert(
        "session_id".into(),
        ctx.session_id.clone().map_or(Value::Null, Value::String),
    );
    let work_dir = ctx
        .work_dir
        .clone()
        .unwrap_or_else(|| cwd.display().to_string());
    o.insert("work_dir".into(), work_dir.into());
    if let Some(tool) = &ctx.tool {
        let name = tool.raw_name.as_deref().unwrap_or(&tool.name);
        o.insert("tool_name".into(), name.into());
        o.insert("tool_input".into(), tool.input.clone());
        if let Some(id) = &tool.use_id {
            o.insert("tool_use_id".into(), id.clone().into());
        }
        if let Some(r) = &tool.response {
            o.insert("tool_response".into(), r.clone());
        }
    }
    if let Some(turn) = &ctx.turn {
        if let Some(p) = &turn.prompt {
            o.insert("prompt".into(), p.clone().into());
        }
        if let Some(s) = &turn.stop_reason {
            o.insert("stop_reason".into(), s.clone().into());
        }
        if let Some(n) = turn.step_count {
            o.insert("step_count".into(), n.into());
        }
        if let Some(m) = &turn.final_message {
            o.insert("final_message".into(), m.clone());
        }
        if let Some(b) = turn.stop_hook_active {
            o.insert("stop_hook_active".into(), b.into());
        }
    }
    if let Some(Value::Object(sub)) = &ctx.subagent {
        for (k, v) in sub {
            if !o.contains_key(k) {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    let mut context = ctx.to_value();
    if let Value::Object(m) = &mut context {
        m.remove("raw");
    }
    o.insert("context".into(), context);
    Value::Object(o)
}

/// A string as it is; any other JSON compactly.
fn render_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn required_str<'a>(
    value: &'a str,
    key: &str,
    example: &str,
) -> Result<&'a str, OracleConfigError> {
    if value.trim().is_empty() {
        return Err(OracleConfigError::at(
            key,
            format!("`{key}` must not be empty, e.g. {example}"),
        ));
    }
    Ok(value)
}

fn absolute_path(s: &str, key: &str) -> Result<PathBuf, OracleConfigError> {
    let p = PathBuf::from(s);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(OracleConfigError::at(
            key,
            format!("must be an absolute path, found `{s}`"),
        ))
    }
}

/// `ENOEXEC` (Exec format error): the same value on Linux, the BSDs and
/// macOS.
const ENOEXEC: i32 = 8;

/// "exit code 1" or "killed by signal 9 (SIGKILL)".
fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                1 => " (SIGHUP)",
                2 => " (SIGINT)",
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("killed by signal {sig}{name}");
        }
    }
    status.to_string()
}
