//! `ahp doctor`: says plainly why ahp's hooks would not fire.
//!
//! For every agent config found (user and project scopes) it checks that
//! the file parses, which events carry ahp's hook, that the hook command
//! resolves, and the agent's own switches that silence hooks; then that
//! the ahp policy validates and the project's hooks are trusted.

use crate::adapters::Agent;
use crate::install::{self, Scope, Shape, json};
use ahp_config::LoadedConfig;
use ahp_config::trust::TrustStatus;
use ahp_engine::Registry;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `ahp doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Project root (default: the repository root, or a folder in it with a hooks file in .ahp/; outside a repository, the nearest ancestor with .ahp/; else the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Output format: text (default) or json.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DoctorFormat,
    /// Also run AGENT's installed pre-tool hook command, as the agent
    /// would, with a dangerous and a harmless shell call: did ahp answer,
    /// in how many ms, with what (the check to run after an agent upgrade).
    #[arg(long, value_name = "AGENT", value_enum)]
    pub live: Option<Agent>,
}

/// Output formats of `ahp doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DoctorFormat {
    /// One line per finding.
    Text,
    /// One JSON object with every check.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Note,
    Problem,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Note => "note",
            Level::Problem => "problem",
        }
    }
}

struct Finding {
    subject: String,
    level: Level,
    message: String,
}

#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
    /// The subjects (`claude-code (project)`) whose config has ahp's hooks.
    installed: Vec<String>,
}

impl Report {
    fn add(&mut self, subject: &str, level: Level, message: impl Into<String>) {
        self.findings.push(Finding {
            subject: subject.to_string(),
            level,
            message: message.into(),
        });
    }
}

/// One hook of an agent's config that runs `… hook AGENT`.
struct Found {
    event: String,
    command: String,
    /// How long the agent waits for it, where the config says.
    waits: Option<Duration>,
}

/// A timeout of an agent's config: a number of seconds, or of
/// milliseconds with `millis`.
fn timeout_of(n: Option<&json::Node>, millis: bool) -> Option<Duration> {
    let json::Kind::Scalar(serde_json::Value::Number(v)) = &n?.kind else {
        return None;
    };
    let secs = v.as_f64()? / if millis { 1000.0 } else { 1.0 };
    Duration::try_from_secs_f64(secs).ok()
}

/// The hook commands of one agent's config that run `… hook AGENT`.
fn ahp_commands(agent: Agent, shape: Shape, path: &Path, text: &str) -> Result<Vec<Found>, String> {
    let is_ahp = |c: &str| {
        let w: Vec<&str> = c.split_whitespace().collect();
        w.len() >= 3 && w[1] == "hook" && w[2] == agent.as_str()
    };
    let mut out = Vec::new();
    if shape == Shape::Plugin {
        // A plugin runs ahp on every event it knows.
        if let Some(c) = install::plugin_command(text).filter(|c| is_ahp(c)) {
            for e in install::install_events(agent) {
                out.push(Found {
                    event: e.to_string(),
                    command: c.clone(),
                    waits: None,
                });
            }
        }
        return Ok(out);
    }
    if shape == Shape::KimiToml {
        let doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| {
            let (l, c) = e.span().map_or((1, 1), |s| json::line_col(text, s.start));
            format!(
                "{}:{l}:{c}: invalid TOML: {}",
                ahp_config::path_line(path),
                e.message().trim()
            )
        })?;
        if let Some(aot) = doc.get("hooks").and_then(|h| h.as_array_of_tables()) {
            for t in aot.iter() {
                let c = t.get("command").and_then(|c| c.as_str()).unwrap_or("");
                if is_ahp(c) {
                    let e = t.get("event").and_then(|e| e.as_str()).unwrap_or("?");
                    let waits = t
                        .get("timeout")
                        .and_then(|t| t.as_integer())
                        .and_then(|t| u64::try_from(t).ok())
                        .map(Duration::from_secs);
                    out.push(Found {
                        event: e.to_string(),
                        command: c.to_string(),
                        waits,
                    });
                }
            }
        }
        return Ok(out);
    }
    let root = json::parse(text).map_err(|e| {
        format!(
            "{}:{}:{}: invalid JSON: {}",
            ahp_config::path_line(path),
            e.line,
            e.column,
            e.message
        )
    })?;
    let Some(hooks) = install::event_map(shape, &root) else {
        return Ok(out);
    };
    let millis = matches!(shape, Shape::Nested { millis: true, .. });
    for ev in hooks.members() {
        for item in ev.value.items() {
            let mut cmds = Vec::new();
            if let Some(h) = item.get("hooks") {
                for handler in h.value.items() {
                    if let Some(c) = handler.get("command").and_then(|c| c.value.as_str()) {
                        let waits = timeout_of(handler.get("timeout").map(|t| &t.value), millis);
                        cmds.push((c.to_string(), waits));
                    }
                }
            }
            for key in ["command", "bash"] {
                if let Some(c) = item.get(key).and_then(|c| c.value.as_str()) {
                    let waits = timeout_of(item.get("timeoutSec").map(|t| &t.value), false);
                    cmds.push((c.to_string(), waits));
                }
            }
            for (command, waits) in cmds.into_iter().filter(|(c, _)| is_ahp(c)) {
                out.push(Found {
                    event: ev.key.clone(),
                    command,
                    waits,
                });
            }
        }
    }
    Ok(out)
}

fn check_agent_file(
    r: &mut Report,
    agent: Agent,
    scope: Scope,
    path: &Path,
    root: &Path,
    agent_timeout: Duration,
) {
    let Some(shape) = install::shape(agent) else {
        return;
    };
    let text = match install::codex::read_regular(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            r.add(
                agent.as_str(),
                Level::Problem,
                format!("cannot read {}: {e}", ahp_config::path_line(path)),
            );
            return;
        }
    };
    let subject = format!("{agent} ({})", scope.as_str());
    if agent == Agent::Droid
        && let Some(settings) = install::droid_settings_hooks(path)
    {
        r.add(
            &subject,
            Level::Problem,
            format!(
                "the hooks in {} do not run: Droid reads them only while there is no {}; move them there",
                ahp_config::path_line(&settings),
                ahp_config::path_line(path)
            ),
        );
    }
    // Droid reads hooks.json's own keys as events and passes over a
    // `hooks` object there without a word: said whether or not ahp's
    // hooks are among the ones it would skip.
    if matches!(shape, Shape::Nested { top: true, .. })
        && json::parse(&text).is_ok_and(|root| root.get("hooks").is_some())
    {
        r.add(
            &subject,
            Level::Problem,
            format!(
                "{} has a `hooks` key; {agent} reads the events at the top of hooks.json and ignores the hooks inside it: move them up a level",
                ahp_config::path_line(path)
            ),
        );
    }
    let found = match ahp_commands(agent, shape, path, &text) {
        Ok(f) => f,
        Err(e) => {
            r.add(
                &subject,
                Level::Problem,
                format!("{e}; {agent} cannot read its hooks"),
            );
            return;
        }
    };
    if found.is_empty() {
        r.add(
            &subject,
            Level::Note,
            format!(
                "{} has no ahp hooks (run `ahp install {agent} --scope {}`)",
                ahp_config::path_line(path),
                scope.as_str()
            ),
        );
        return;
    }
    let events: Vec<&str> = found.iter().map(|f| f.event.as_str()).collect();
    r.installed.push(subject.clone());
    r.add(
        &subject,
        Level::Ok,
        format!(
            "{}: ahp hooks on {}",
            ahp_config::path_line(path),
            events.join(", ")
        ),
    );
    // A plugin written by another ahp version (or edited) may not speak
    // this one's protocol.
    if shape == Shape::Plugin
        && let Some(base) = found[0].command.strip_suffix(&format!(" hook {agent}"))
        && text != install::plugin_text(agent, base)
    {
        r.add(
            &subject,
            Level::Problem,
            format!(
                "{} is not the plugin this ahp writes (another version, or edited): run `ahp uninstall {agent} --scope {s}` then `ahp install {agent} --scope {s}`",
                ahp_config::path_line(path),
                s = scope.as_str()
            ),
        );
    }
    let missing: Vec<&str> = install::install_events(agent)
        .into_iter()
        .filter(|e| !events.contains(e))
        .collect();
    if !missing.is_empty() {
        r.add(
            &subject,
            Level::Note,
            format!(
                "no ahp hook on {} (`ahp install {agent} --scope {}` adds them)",
                missing.join(", "),
                scope.as_str()
            ),
        );
    }
    // ahp answers within `settings.agent_timeout`; an agent that waits
    // less goes on without the answer of a call that takes longer.
    if let Some(waits) = found.iter().filter_map(|f| f.waits).min()
        && waits < agent_timeout
    {
        r.add(
            &subject,
            Level::Problem,
            format!(
                "{} gives ahp {} ms, less than settings.agent_timeout ({} ms): a hook call that runs longer is dropped and {agent} goes on without ahp's answer, a block included; set `agent_timeout: {}` under `settings:` in ~/.ahp/hooks.yaml",
                ahp_config::path_line(path),
                waits.as_millis(),
                agent_timeout.as_millis(),
                waits.as_millis().max(1),
            ),
        );
    }
    let mut seen = Vec::new();
    for Found { command: cmd, .. } in &found {
        let word = cmd.split_whitespace().next().unwrap_or("").to_string();
        if seen.contains(&word) {
            continue;
        }
        seen.push(word.clone());
        match install::resolve_command(cmd, root) {
            Some(p) => r.add(&subject, Level::Ok, format!("`{word}` resolves to {}", ahp_config::path_line(&p))),
            None if word.contains('/') => r.add(&subject, Level::Problem, format!("the hook command `{word}` does not exist; {agent} will fail to start it. Reinstall with --command pointing at ahp")),
            None => r.add(&subject, Level::Problem, format!("`{word}` is not on PATH; {agent} will fail to start the hook. Put ahp on PATH, or reinstall with `ahp install {agent} --command /absolute/path/to/ahp`")),
        }
    }
    if let Ok(root_node) = json::parse(&text) {
        if matches!(shape, Shape::Copilot | Shape::Cursor) {
            let v = root_node.get("version").map(|m| &m.value);
            let ok = v.is_some_and(|v| matches!(&v.kind, json::Kind::Scalar(serde_json::Value::Number(n)) if n.as_u64() == Some(1)));
            if !ok {
                r.add(
                    &subject,
                    Level::Problem,
                    format!(
                        "{} has no `\"version\": 1`; {agent} ignores its hooks",
                        ahp_config::path_line(path)
                    ),
                );
            }
        }
        if matches!(agent, Agent::ClaudeCode | Agent::Copilot) {
            let off = root_node.get("disableAllHooks").is_some_and(|m| {
                matches!(
                    m.value.kind,
                    json::Kind::Scalar(serde_json::Value::Bool(true))
                )
            });
            if off {
                r.add(
                    &subject,
                    Level::Problem,
                    format!(
                        "{} sets `disableAllHooks: true`; no hook runs",
                        ahp_config::path_line(path)
                    ),
                );
            }
        }
    }
    if agent == Agent::Codex {
        check_codex_trust(r, &subject, scope, path, &text, root);
    }
    if agent == Agent::Gemini && scope != Scope::User {
        check_gemini_trust(r, &subject, root);
    }
    if agent == Agent::Copilot && scope != Scope::User {
        check_copilot_trust(r, &subject, root);
    }
}

/// Copilot CLI also runs the hooks of a repository's
/// `.claude/settings.json` and `.claude/settings.local.json` (GitHub's hooks
/// reference): with ahp installed for both agents there, every Copilot
/// call runs ahp twice, and each run is logged, counted by the stop-loop
/// guard and answered.
fn check_copilot_reads_claude(r: &mut Report) {
    let has = |subject: &str| r.installed.iter().any(|s| s == subject);
    let claude: Vec<&str> = ["claude-code (project)", "claude-code (local)"]
        .into_iter()
        .filter(|s| has(s))
        .collect();
    let copilot = ["copilot (project)", "copilot (user)"].into_iter().any(has);
    if copilot && !claude.is_empty() {
        r.add(
            "copilot",
            Level::Note,
            format!(
                "Copilot CLI also runs the hooks of this repository's .claude/settings*.json ({}), so each of its calls runs ahp twice (two log records, two answers); keep one of the two installs if this repository is used with Copilot CLI",
                claude.join(", ")
            ),
        );
    }
}

/// Copilot CLI loads a repository's hooks (`.github/hooks`) only in a
/// folder the user trusted: its trust dialog adds the folder to
/// `trustedFolders` in `~/.copilot/config.json` (`COPILOT_HOME`), and a
/// folder there trusts everything below it. Untrusted, the hooks are left
/// out without a word (seen with Copilot CLI 1.0.102 by the live suite).
fn check_copilot_trust(r: &mut Report, subject: &str, root: &Path) {
    let dir = match std::env::var_os("COPILOT_HOME") {
        Some(h) if !h.is_empty() => PathBuf::from(h),
        _ => install::home().unwrap_or_default().join(".copilot"),
    };
    let file = dir.join("config.json");
    let config = match std::fs::read_to_string(&file) {
        Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) => v,
            Err(e) => {
                r.add(
                    subject,
                    Level::Problem,
                    format!(
                        "{}: not JSON ({e}); Copilot CLI's folder trust cannot be read",
                        ahp_config::path_line(&file)
                    ),
                );
                return;
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::Value::Null,
        Err(e) => {
            r.add(
                subject,
                Level::Problem,
                format!("cannot read {}: {e}", ahp_config::path_line(&file)),
            );
            return;
        }
    };
    // Each entry on its own (one odd entry must not hide the others), as
    // the folder it names really is.
    let folders: Vec<PathBuf> = config["trustedFolders"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let trusted = |f: &PathBuf| {
        root.starts_with(f) || f.canonicalize().is_ok_and(|real| root.starts_with(real))
    };
    if folders.iter().any(trusted) {
        r.add(
            subject,
            Level::Ok,
            format!(
                "Copilot CLI trusts this folder ({})",
                ahp_config::path_line(&file)
            ),
        );
    } else {
        r.add(
            subject,
            Level::Problem,
            format!(
                "Copilot CLI does not trust {}: it leaves this repository's hooks out, so ahp never runs. Trust the folder in Copilot CLI's dialog, or add \"{}\" to `trustedFolders` in {}",
                ahp_config::path_line(&root),
                ahp_config::path_line(&root),
                ahp_config::path_line(&file)
            ),
        );
    }
}

/// Gemini CLI loads a project's settings, and so its hooks, only in a
/// folder the user trusted (`~/.gemini/trustedFolders.json`, written by
/// its trust dialog); `--skip-trust` trusts a session but still leaves
/// project hooks out (seen with Gemini CLI 0.61 by the live suite).
fn check_gemini_trust(r: &mut Report, subject: &str, root: &Path) {
    let home = install::home().unwrap_or_default();
    let settings = home.join(".gemini/settings.json");
    let off = std::fs::read_to_string(&settings)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["security"]["folderTrust"]["enabled"] == serde_json::Value::Bool(false));
    if off {
        r.add(
            subject,
            Level::Ok,
            format!(
                "folder trust is off in {}: Gemini CLI loads every project's hooks",
                ahp_config::path_line(&settings)
            ),
        );
        return;
    }
    let file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    let rules: serde_json::Map<String, serde_json::Value> = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    // The most specific rule that covers the project decides.
    let mut best: Option<(usize, bool)> = None;
    for (folder, level) in &rules {
        let folder = Path::new(folder);
        let (covered, trusted) = match level.as_str() {
            Some("TRUST_FOLDER") => (root.starts_with(folder), true),
            Some("TRUST_PARENT") => (folder.parent().is_some_and(|p| root.starts_with(p)), true),
            Some("DO_NOT_TRUST") => (root.starts_with(folder), false),
            _ => (false, false),
        };
        let depth = folder.components().count();
        if covered && best.is_none_or(|(d, _)| depth > d) {
            best = Some((depth, trusted));
        }
    }
    match best {
        Some((_, true)) => r.add(subject, Level::Ok, format!("Gemini CLI trusts this folder ({})", ahp_config::path_line(&file))),
        _ => r.add(
            subject,
            Level::Problem,
            format!(
                "Gemini CLI does not trust {}: it leaves this project's hooks out, so ahp never runs. Trust the folder in Gemini CLI's dialog (or `/permissions`), or add `\"{}\": \"TRUST_FOLDER\"` to {}; `--skip-trust` does not load project hooks",
                ahp_config::path_line(&root),
                ahp_config::path_line(&root),
                ahp_config::path_line(&file)
            ),
        ),
    }
}

/// Codex runs a project's hooks only in a trusted project, and any hook
/// only once the user trusted it: read from Codex's own config.
fn check_codex_trust(
    r: &mut Report,
    subject: &str,
    scope: Scope,
    path: &Path,
    text: &str,
    root: &Path,
) {
    let home = install::home().unwrap_or_default();
    let project = (scope != Scope::User).then_some(root);
    let trust = install::codex::check(&install::codex::codex_home(&home), path, text, project);
    for ok in trust.ok {
        r.add(subject, Level::Ok, ok);
    }
    for problem in trust.problems {
        r.add(subject, Level::Problem, problem);
    }
}

/// The pre-tool event of each agent's hooks, by the agent's own name.
fn pre_tool_event(agent: Agent) -> &'static str {
    match agent {
        Agent::Gemini => "BeforeTool",
        Agent::Copilot => "preToolUse",
        Agent::Cursor => "beforeShellExecution",
        Agent::AgentHooks => "pre-tool-call",
        Agent::Windsurf => "pre_run_command",
        _ => "PreToolUse",
    }
}

/// What `agent` sends its pre-tool hook for a shell call of `command`.
fn synthetic_pre_tool(agent: Agent, root: &Path, command: &str) -> serde_json::Value {
    use serde_json::json;
    let cwd = root.to_string_lossy();
    match agent {
        Agent::Gemini => {
            json!({"session_id": "ahp-doctor", "cwd": cwd, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": command}})
        }
        Agent::Copilot => json!({"sessionId": "ahp-doctor", "cwd": cwd, "timestamp": 0,
            "toolName": "bash", "toolArgs": json!({"command": command}).to_string()}),
        Agent::Cursor => {
            json!({"conversation_id": "ahp-doctor", "hook_event_name": "beforeShellExecution",
            "command": command, "cwd": cwd, "workspace_roots": [cwd]})
        }
        Agent::Windsurf => json!({"agent_action_name": "pre_run_command",
            "trajectory_id": "ahp-doctor", "execution_id": "ahp-doctor",
            "tool_info": {"command_line": command, "cwd": cwd}}),
        Agent::AgentHooks => json!({"event_type": "pre-tool-call", "session_id": "ahp-doctor",
            "work_dir": cwd, "tool_name": "Shell", "tool_input": {"command": command}}),
        _ => {
            // Each agent's own shell tool, by its own name.
            let tool = agent
                .tools()
                .iter()
                .find(|(_, n)| *n == "shell")
                .map_or("Bash", |(raw, _)| *raw);
            json!({"session_id": "ahp-doctor", "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"command": command}, "tool_use_id": "ahp-doctor"})
        }
    }
}

/// The installed hook command as a program and its arguments, when it is
/// the plain `CMD hook AGENT` (`--event EVENT` for Copilot) that `ahp
/// install` writes, and its program is not inside the project: `--live`
/// runs nothing else (not even another ahp option: `--log ~/.bashrc`
/// would append to that file). A project's agent config is the
/// repository's choice, and a diagnostic must not run a cloned
/// repository's code (`ahp hook claude-code; curl … | sh`, `./bin/ahp hook
/// claude-code`); the agent would, but only once its own trust prompt
/// was answered.
fn live_command(
    command: &str,
    agent: Agent,
    root: &Path,
) -> Result<(PathBuf, Vec<String>), String> {
    let refused = || {
        format!(
            "it is not the `CMD hook {agent}` that `ahp install {agent}` writes, so doctor does not run it: run it yourself if you trust it"
        )
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:@+".contains(c) || c == ' ';
    if !command.trim().chars().all(plain) {
        return Err(refused());
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let (word, args) = match words.as_slice() {
        [word, "hook", a, rest @ ..] if *a == agent.as_str() => match rest {
            [] => (word, &words[1..]),
            ["--event", _] if agent == Agent::Copilot => (word, &words[1..]),
            _ => return Err(refused()),
        },
        _ => return Err(refused()),
    };
    // `sh hook claude-code` would run the repository's `hook` file.
    let named_ahp = |p: &Path| p.file_name().is_some_and(|n| n == "ahp");
    if !named_ahp(Path::new(word)) {
        return Err(format!(
            "its program `{word}` is not `ahp`, so doctor does not run it: run it yourself if you trust it"
        ));
    }
    // A bare name from PATH or an absolute path: a relative one
    // (`../tools/ahp` from a nested project root) is the repository's.
    if word.contains('/') && !word.starts_with('/') {
        return Err(format!(
            "its program `{word}` is a relative path, which the repository chooses, so doctor does not run it"
        ));
    }
    let found =
        install::resolve_command(word, root).ok_or_else(|| format!("`{word}` is not found"))?;
    let program = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    // Inside, as written (a link the repository made to any program) or
    // where it leads; inside means under the project root or the git
    // work tree around it (a repository can commit a nested `.ahp/`).
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let root = root
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(&root)
        .to_path_buf();
    let written_in = found
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .is_none_or(|d| d.starts_with(&root));
    if written_in || program.starts_with(&root) {
        return Err(format!(
            "its program {} is inside the project, so doctor does not run it",
            ahp_config::path_line(&found)
        ));
    }
    if !named_ahp(&program) {
        return Err(format!(
            "its program {} leads to {}, not to an `ahp`, so doctor does not run it",
            ahp_config::path_line(&found),
            ahp_config::path_line(&program)
        ));
    }
    Ok((program, args.iter().map(|w| w.to_string()).collect()))
}

/// `--live AGENT`: runs the pre-tool hook command AGENT has installed
/// (project scope first), as the agent would, with a call the built-in
/// policy blocks and one it lets through. Only the plain `CMD hook AGENT`
/// command runs ([`live_command`]), without a shell.
fn check_live(r: &mut Report, agent: Agent, home: Option<&Path>, root: &Path) {
    let subject = format!("{agent} (live)");
    let event = pre_tool_event(agent);
    let mut command = None;
    for scope in install::scopes(agent) {
        let base = match (scope, home) {
            (Scope::User, Some(h)) => h.to_path_buf(),
            (Scope::User, None) => continue,
            _ => PathBuf::new(),
        };
        let (Ok(path), Some(shape)) = (
            install::config_path(agent, *scope, &base, root),
            install::shape(agent),
        ) else {
            continue;
        };
        let Ok(text) = install::codex::read_regular(&path) else {
            continue;
        };
        if let Ok(found) = ahp_commands(agent, shape, &path, &text)
            && let Some(f) = found.into_iter().find(|f| f.event == event)
        {
            command = Some((f.command, path));
            break;
        }
    }
    let Some((command, path)) = command else {
        r.add(
            &subject,
            Level::Problem,
            format!(
                "no ahp hook on {event} is installed for {agent}; `ahp install {agent}` adds it"
            ),
        );
        return;
    };
    let (program, args) = match live_command(&command, agent, root) {
        Ok(found) => found,
        Err(why) => {
            r.add(
                &subject,
                Level::Problem,
                format!("`{command}` (from {}): {why}", ahp_config::path_line(&path)),
            );
            return;
        }
    };
    for (call, must_deny) in [("rm -rf ~/", true), ("ls -la", false)] {
        let payload = synthetic_pre_tool(agent, root, call).to_string();
        let started = std::time::Instant::now();
        let out = std::process::Command::new(&program)
            .args(&args)
            .current_dir(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(payload.as_bytes())?;
                }
                child.wait_with_output()
            });
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                r.add(
                    &subject,
                    Level::Problem,
                    format!(
                        "`{command}` (from {}) did not start: {e}",
                        ahp_config::path_line(&path)
                    ),
                );
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = terminal_safe_short(&stdout);
        let denied = out.status.code() == Some(2)
            || ["\"deny\"", "\"block\""].iter().any(|w| stdout.contains(w));
        let what = format!(
            "`{call}` through `{command}`: exit {}, {ms:.1} ms, said {said}",
            out.status
                .code()
                .map_or("by a signal".to_string(), |c| c.to_string()),
        );
        match (must_deny, denied) {
            (true, true) | (false, false) => r.add(&subject, Level::Ok, what),
            (true, false) => r.add(
                &subject,
                Level::Problem,
                format!(
                    "{what}: ahp did not refuse a call its built-in policy blocks (stderr: {})",
                    terminal_safe_short(&String::from_utf8_lossy(&out.stderr))
                ),
            ),
            (false, true) => r.add(
                &subject,
                Level::Problem,
                format!("{what}: a harmless call was refused"),
            ),
        }
    }
}

/// At most one line of 200 characters, for a report line.
fn terminal_safe_short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one.chars().take(200).collect();
    if cut.is_empty() {
        "nothing".into()
    } else {
        crate::ops::output::terminal_safe(&cut).into_owned()
    }
}

/// HOOK.md hooks that run `ahp hook agenthooks` would make ahp start itself.
fn check_agenthooks(r: &mut Report, dirs: &[PathBuf]) {
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            for entry in ahp_config::hookmd::ENTRY_POINTS {
                let p = e.path().join(entry);
                if std::fs::read_to_string(&p).is_ok_and(|t| t.contains("hook agenthooks")) {
                    r.add("agenthooks", Level::Problem, format!("{} runs `ahp hook agenthooks` from a HOOK.md hook directory ahp itself loads, so ahp would start itself on every dispatch; remove that hook", ahp_config::path_line(&p)));
                }
            }
        }
    }
}

/// Runs `ahp doctor`.
/// What `ahp validate` says of the policy. An error is a problem: its
/// part of the policy is left out of every hook call (or, under
/// `fail_closed`, every call blocks).
fn check_policy(r: &mut Report, root: &Path, registry: &Registry) {
    let v = match crate::ops::policy::validate(Some(root.to_path_buf()), registry) {
        Ok(v) => v,
        Err(e) => {
            r.add(
                "policy",
                Level::Problem,
                format!("the policy cannot be checked: {e:#}"),
            );
            return;
        }
    };
    // Attempts to change the managed policy are problems of their own.
    for w in v
        .warnings
        .into_iter()
        .filter(|w| !v.managed_overrides.contains(w))
    {
        r.add("policy", Level::Note, w);
    }
    for w in v.managed_overrides {
        r.add("managed", Level::Problem, w);
    }
    match v.result {
        Ok(summary) => r.add("policy", Level::Ok, summary),
        Err(errors) => {
            for e in &errors.0 {
                r.add(
                    "policy",
                    Level::Problem,
                    format!(
                        "left out of every hook call (settings.fail_closed: true blocks them instead): {}",
                        e.to_string().trim_end()
                    ),
                );
            }
        }
    }
}

/// Whether the project's signal log can be written: a folder or a link in
/// its place (which a repository can commit) leaves every call unrecorded,
/// and under `fail_closed` blocks it.
fn check_log(r: &mut Report, root: &Path) {
    let path = match crate::ops::policy::project_log_path(root) {
        Ok(p) => p,
        Err(e) => return r.add("log", Level::Problem, format!("{e:#}")),
    };
    let shown = ahp_config::path_line(&path);
    let in_place = |what: &str| {
        format!(
            "the signal log {shown} {what}, so no call is recorded (and under settings.fail_closed, every call is blocked); remove it, and add it to .gitignore if the repository holds it"
        )
    };
    let problem = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => Some(in_place(
            "is a symbolic link, which ahp does not write through",
        )),
        Ok(m) if m.is_dir() => Some(in_place("is a folder")),
        Ok(m) if !m.is_file() => Some(in_place("is not a regular file")),
        // Opened to append nothing: what a hook call's write tries first.
        Ok(_) => std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .err()
            .map(|e| {
                format!("the signal log {shown} cannot be written ({e}), so no call is recorded")
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // `.ahp` is a file, or a folder on the way cannot be read.
        Err(e) => Some(in_place(&format!("cannot be reached ({e})"))),
    };
    match problem {
        Some(message) => r.add("log", Level::Problem, message),
        None => r.add("log", Level::Ok, format!("signals are recorded in {shown}")),
    }
}

pub(crate) fn run(args: DoctorArgs, registry: &Registry) -> Result<u8> {
    let root = match args.project.clone() {
        Some(p) => p,
        None => {
            let cwd = std::env::current_dir().context("cannot determine the current directory")?;
            ahp_config::find_project_root(&cwd).unwrap_or(cwd)
        }
    };
    let home = install::home().ok();
    let mut r = Report::default();
    // Loaded as a hook call loads it; one that does not load is reported
    // by the policy check below.
    let loaded = crate::ops::policy::load(Some(root.clone()), registry).ok();
    let agent_timeout = loaded
        .as_ref()
        .map_or(ahp_config::AGENT_TIMEOUT, LoadedConfig::agent_timeout);
    for agent in Agent::ALL {
        for scope in install::scopes(agent) {
            let base = match scope {
                Scope::User => match &home {
                    Some(h) => h.clone(),
                    None => continue,
                },
                _ => PathBuf::new(),
            };
            if let Ok(path) = install::config_path(agent, *scope, &base, &root) {
                check_agent_file(&mut r, agent, *scope, &path, &root, agent_timeout);
            }
            for earlier in install::earlier_config_paths(agent, *scope, &base) {
                check_agent_file(&mut r, agent, *scope, &earlier, &root, agent_timeout);
            }
        }
    }
    check_copilot_reads_claude(&mut r);
    let user_hooks = ahp_config::hookmd::user_hooks_dir(
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
            .as_deref(),
        home.as_deref(),
    );
    let mut dirs = vec![ahp_config::hookmd::project_hooks_dir(&root)];
    dirs.extend(user_hooks);
    check_agenthooks(&mut r, &dirs);
    if let Some(agent) = args.live {
        check_live(&mut r, agent, home.as_deref(), &root);
    }
    if r.installed.is_empty() {
        r.add("agents", Level::Problem, "no agent config has ahp's hooks, so ahp never runs; install them with `ahp install AGENT`");
    }
    check_policy(&mut r, &root, registry);
    check_log(&mut r, &root);
    match crate::ops::policy::trust_status(&root) {
        Ok((set, _)) if set.is_empty() => r.add("trust", Level::Ok, "no project hooks to trust"),
        Ok((_, TrustStatus::Trusted)) => r.add("trust", Level::Ok, "project hooks are trusted"),
        Ok(_) if nothing_waits_for_trust(loaded.as_ref()) => r.add(
            "trust",
            Level::Ok,
            "the project policy is not trusted, and nothing in it waits for trust (only HOOK.md scripts, commands, rewrites of tool input and oracles that write files do)",
        ),
        Ok((_, TrustStatus::Untrusted)) => r.add("trust", Level::Problem, format!("the project hooks of {} are not trusted, so they do not run: review .agents/hooks and .ahp/hooks.yaml, then run `ahp trust`", ahp_config::path_line(&root))),
        Ok((_, TrustStatus::Changed { changed, .. })) => r.add("trust", Level::Problem, format!("the project hooks changed since you trusted them ({}), so they do not run: review them, then run `ahp trust`", changed.join(", "))),
        Err(e) => r.add("trust", Level::Problem, format!("trust cannot be checked: {e:#}")),
    }
    let problems = r
        .findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    let mut text = String::new();
    match args.format {
        DoctorFormat::Json => {
            let findings: Vec<_> = r
                .findings
                .iter()
                .map(|f| json!({"subject": f.subject, "level": f.level.as_str(), "message": f.message}))
                .collect();
            text = json!({"project": root, "problems": problems, "findings": findings}).to_string();
            text.push('\n');
        }
        DoctorFormat::Text => {
            text.push_str(&format!("project: {}\n", ahp_config::path_line(&root)));
            for f in &r.findings {
                text.push_str(&format!(
                    "{:<7} {}: {}\n",
                    f.level.as_str(),
                    crate::ops::output::terminal_safe(&f.subject),
                    crate::ops::output::terminal_safe(&f.message)
                ));
            }
            if problems == 0 {
                text.push_str("all good\n");
            } else {
                text.push_str(&format!("{problems} problem(s) found\n"));
            }
        }
    }
    crate::ops::output::print(&text)?;
    Ok(if problems == 0 {
        crate::ops::output::EXIT_PROCEED
    } else {
        crate::ops::output::EXIT_ERROR
    })
}

/// Whether the project's policy, loaded as a hook call loads it, leaves
/// nothing out for want of trust: an untrusted policy of plain oracles is
/// not a problem, and saying "they do not run" would be false.
fn nothing_waits_for_trust(loaded: Option<&LoadedConfig>) -> bool {
    loaded.is_some_and(|cfg| cfg.skipped_entries.is_empty() && cfg.skipped_hooks.is_empty())
}
