//! The `ahp` command line. [`crate::run_cli`] runs it with any registry,
//! so a team can ship its own `ahp` with custom oracles (see
//! `examples/custom_oracle.rs`).

use ahp_config::trust::{self, TrustStatus, TrustStore};
use ahp_config::{ConfigError, ConfigErrors, FailClosed, LoadOptions, LoadedConfig};
use ahp_engine::{
    Diagnostic, Engine, EntryStatus, Event, HookContext, Level, Outcome, Payload, Registry,
    SignalSink, Verdict,
};
use ahp_signals_log::SignalLog;
use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Largest context accepted on stdin or from a file. Agent payloads are a
/// few KiB; a tool input carrying a whole file can reach a few MiB.
pub const MAX_CONTEXT_BYTES: u64 = 16 * 1024 * 1024;

/// Exit code: proceed (accept, aid, control).
pub const EXIT_PROCEED: u8 = 0;
/// Exit code: usage or configuration error.
pub const EXIT_ERROR: u8 = 1;
/// Exit code: block.
pub const EXIT_BLOCK: u8 = 2;
/// Exit code: a prompt awaits an answer.
pub const EXIT_PROMPT: u8 = 3;

const AFTER_HELP: &str = "\
Exit codes:
  0  proceed (accept, aid or control)
  1  usage or configuration error
  2  block
  3  prompt awaiting an answer (non-interactive)

Config layers (later wins): builtin → ~/.ahp/hooks.yaml → <project>/.ahp/hooks.yaml → <project>/.ahp/hooks.local.yaml.
The builtin layer (ahp's default policy) is always the bottom one: a policy file adds to it, and only
`enabled: false` on one of its entries or `settings.builtin: false` switches it off.";

/// ahp: a policy engine for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "ahp", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// Print `[HOOK DEBUG]` trace lines on stderr (also: AHP_DEBUG=1).
    #[arg(long, global = true)]
    debug: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Text,
}

#[derive(Debug, clap::Args)]
struct ProjectArg {
    /// Project root (default: nearest ancestor with .ahp/ or .git/, else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

/// Arguments of `run` and `gate`.
#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The event: canonical name (pre-tool-use) or any alias (PreToolUse, before_tool).
    event: String,
    /// Read the context from FILE ("-" for stdin).
    #[arg(long, value_name = "FILE")]
    context: Option<String>,
    /// Load a Monoco issue file (Markdown with YAML frontmatter) into `issue` and `checklist`.
    #[arg(long, value_name = "PATH")]
    issue: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArg,
    /// Append records to PATH instead of <project>/.ahp/signals.jsonl.
    #[arg(long, value_name = "PATH", conflicts_with = "no_log")]
    log: Option<PathBuf>,
    /// Do not write the signal log.
    #[arg(long)]
    no_log: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Run only the `async: true` entries and record their results, printing nothing.
    /// `ahp run` starts itself this way in the background so async hooks never delay the verdict.
    #[arg(long)]
    async_only: bool,
    /// Answer every prompt signal with ACTION (acknowledge, apply_suggestion, dismiss) and record
    /// the responses; the prompt is then answered, so the exit code is 0 instead of 3.
    #[arg(long, value_name = "ACTION")]
    respond: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate EVENT against a context and print the verdict.
    ///
    /// The context is JSON (SPEC §3) from --context FILE, or from stdin when
    /// stdin is not a terminal. Every signal is appended to the signal log.
    Run(RunArgs),
    /// The same as `run`, named for workflow scripts: `ahp gate pre-issue-submit --issue FILE`.
    ///
    /// Exit 2 means the step must not proceed.
    Gate(RunArgs),
    /// Show which entries EVENT runs, in which order, from which layer, and why others do not.
    Explain {
        /// The event (any alias). Omit with --list.
        #[arg(required_unless_present = "list")]
        event: Option<String>,
        /// Evaluate `when` conditions against this context (FILE or "-").
        #[arg(long, value_name = "FILE")]
        context: Option<String>,
        /// List every event with its aliases and allowed intensities.
        #[arg(long)]
        list: bool,
        #[command(flatten)]
        project: ProjectArg,
    },
    /// Check the merged configuration; exit 1 with every error found.
    Validate {
        #[command(flatten)]
        project: ProjectArg,
    },
    /// Print the merged configuration with the layer and file:line of every value.
    Config {
        #[command(flatten)]
        project: ProjectArg,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Write a commented starter .ahp/hooks.yaml (and its schema) and gitignore the local files.
    Init {
        #[command(flatten)]
        project: ProjectArg,
        /// Overwrite an existing .ahp/hooks.yaml.
        #[arg(long)]
        force: bool,
    },
    /// Trust this project's HOOK.md hooks (.agents/hooks), like `direnv allow`.
    ///
    /// Project hooks are code from the repository: they run only after you
    /// have read them and trusted the exact set of files. Any change to
    /// them needs trusting again.
    Trust {
        #[command(flatten)]
        project: ProjectArg,
        /// List the files that would be trusted and the current status; change nothing.
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Forget the trust given to this project.
        #[arg(long)]
        revoke: bool,
    },
    /// Query the signal log: records, statistics, tuning suggestions, an HTML report, replay.
    #[command(subcommand)]
    Signals(crate::signals_cmd::SignalsCommand),
    /// Record what was done about a signal of the log (SPEC §6 responses).
    ///
    /// The action must answer the signal's intensity: block → retry_after_fix,
    /// proceed_with_risk, abort; control → accept_modification, reject_modification;
    /// prompt → acknowledge, apply_suggestion, dismiss; aid → suggestion_applied,
    /// suggestion_deferred.
    ///
    /// A signal has one answer: answering it again needs --amend, and the
    /// new answer replaces the old one in every statistic.
    Respond {
        /// The signal's `header.id`.
        signal_id: String,
        /// What was done.
        action: String,
        /// Free-form details (JSON).
        #[arg(long, value_name = "JSON")]
        details: Option<String>,
        /// Replace the signal's current answer (the log keeps both; the latest counts).
        #[arg(long)]
        amend: bool,
        /// The log (default <project>/.ahp/signals.jsonl).
        #[arg(long, value_name = "PATH")]
        log: Option<PathBuf>,
        #[command(flatten)]
        project: ProjectArg,
    },
    /// The hook command of an agent: read its JSON on stdin, answer in its protocol.
    ///
    /// Installed by `ahp install AGENT` as the agent's hook command. The
    /// agent's event maps to an ahp event, its tool names to the shared
    /// vocabulary (shell, write, edit, read, fetch, mcp), and the verdict to
    /// the agent's output: block → deny, control → the rewritten input,
    /// prompt → ask (or context), aid → additional context. Errors inside ahp
    /// fail open with a message on stderr (settings.fail_closed: true blocks).
    Hook(crate::hook::HookArgs),
    /// Add `ahp hook AGENT` to an agent's hook config, for every event ahp decides on.
    ///
    /// Edits the agent's own file (claude-code: .claude/settings.json, codex:
    /// .codex/hooks.json, gemini: .gemini/settings.json, copilot:
    /// .github/hooks/ahp.json, cursor: .cursor/hooks.json, kimi:
    /// ~/.kimi/config.toml; user scope: the same under the home directory),
    /// keeping the user's other settings, comments and layout. Running it
    /// twice changes nothing the second time. A malformed file is refused
    /// with its line and column, and nothing is written.
    Install(crate::install::InstallArgs),
    /// Remove what `ahp install AGENT` added: the hooks whose command starts with
    /// `CMD hook AGENT`, and the event lists that only held them. The user's own hooks
    /// stay; a file left with no settings at all is deleted.
    Uninstall(crate::install::InstallArgs),
    /// Check that ahp's hooks would fire: agent configs parse, ahp's entries are there,
    /// the command resolves, hooks.yaml validates and project hooks are trusted.
    ///
    /// Exit 0 when all is well, 1 when any problem is found.
    Doctor(crate::doctor::DoctorArgs),
    /// Print the JSON Schema (draft-07) of hooks.yaml (or of HOOK.md frontmatter).
    Schema {
        /// The schema of HOOK.md frontmatter instead.
        #[arg(long)]
        hook_md: bool,
    },
}

/// Runs the CLI with `registry` and returns the process exit code.
pub(crate) fn main_with(registry: Registry) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_PROCEED
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let debug =
        cli.debug || std::env::var_os("AHP_DEBUG").is_some_and(|v| v != "0" && !v.is_empty());
    if debug {
        init_tracing();
    }
    match run_command(cli.command, registry) {
        Ok(code) => ExitCode::from(code),
        Err(e) if crate::out::is_closed_pipe(&e) => ExitCode::from(EXIT_PROCEED),
        Err(e) => {
            let mut stderr = std::io::stderr().lock();
            // Config errors are already fully formatted.
            let text = match (
                e.downcast_ref::<ConfigErrors>(),
                e.downcast_ref::<BrokenPolicy>(),
            ) {
                (Some(ce), _) => ce.to_string(),
                (_, Some(b)) => format!(
                    "{}ahp: {}, so a policy with errors does not run\n",
                    b.errors, b.fail_closed
                ),
                _ => format!("error: {e:#}\n"),
            };
            let _ = write!(stderr, "{}", terminal_safe(&text));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Text for a terminal, or any stream a person or agent reads: the
/// credential shapes of [`ahp_engine::secrets`] are masked, as in the log
/// (a config value, a hook's stderr or an error can quote a command with
/// its password); control characters other than newline and tab, and the
/// bidirectional overrides, are escaped (`\u{1b}`), so that a hook's
/// stderr, a value in a cloned repository's hooks.yaml or an agent's event
/// name cannot drive the terminal that shows ahp's messages. The log keeps
/// the text as masked (its JSON escapes it).
pub(crate) fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    match ahp_engine::secrets::mask(s) {
        std::borrow::Cow::Borrowed(s) => control_safe(s),
        std::borrow::Cow::Owned(m) => std::borrow::Cow::Owned(control_safe(&m).into_owned()),
    }
}

fn control_safe(s: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(|| MaskedStderr)
        .without_time()
        .with_level(false)
        .with_target(false)
        .try_init();
}

/// `--debug` output on its way to stderr, through [`terminal_safe`]: a
/// debug line quotes signals, hook output and errors. The formatter hands
/// over each event whole, in one write, so a secret is never split across
/// two calls.
struct MaskedStderr;

impl std::io::Write for MaskedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr()
            .lock()
            .write_all(terminal_safe(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    // One thread: built-in oracles are CPU-light, and a multi-threaded
    // runtime costs start-up time on every hook call.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The project's signal log, `.ahp/signals.jsonl`: the one place that
/// names it. Refused when `.ahp` is a symlink: a repository that commits
/// `.ahp -> elsewhere` would have ahp append to, and rotate, files outside
/// the project (another project's log, feeding its escalation).
pub(crate) fn project_log_path(root: &Path) -> Result<PathBuf> {
    let dir = root.join(ahp_engine::paths::AHP_DIR);
    if let Ok(meta) = std::fs::symlink_metadata(&dir) {
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&dir).unwrap_or_default();
            return Err(anyhow!(
                "{} is a symlink to {}; ahp keeps a project's signal log only inside the project \
                 (replace the link with a directory, or pass --log)",
                dir.display(),
                target.display()
            ));
        }
    }
    Ok(dir.join(ahp_engine::paths::LOG_FILE))
}

fn parse_event(name: &str) -> Result<Event> {
    Event::parse(name).map_err(|e| anyhow!("{e}"))
}

/// The policy with its broken parts left out (listed in `cfg.errors`, and
/// in what compiling it reports): one mistake must not switch the rest of
/// the policy, and the builtin layer, off.
pub(crate) fn load(project: Option<PathBuf>, registry: &Registry) -> Result<LoadedConfig> {
    let opts = LoadOptions::from_env(project).context("cannot determine the current directory")?;
    let mut cfg = LoadedConfig::load_with_errors(&opts);
    apply_trust(&mut cfg, registry);
    Ok(cfg)
}

/// The policy has errors and `fail_closed` is on: rather than run what is
/// left, the call fails (`ahp hook` blocks, `ahp run` exits 1).
#[derive(Debug)]
pub(crate) struct BrokenPolicy {
    pub errors: ConfigErrors,
    pub fail_closed: FailClosed,
}

impl std::fmt::Display for BrokenPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.errors)
    }
}

impl std::error::Error for BrokenPolicy {}

/// The error record of a policy error: the file and line apart, for a
/// reader of the log.
fn error_record(e: &ConfigError, event: Event, correlation_id: Option<String>) -> Diagnostic {
    let mut message = match &e.key {
        Some(k) => format!("{k}: {}", e.message),
        None => e.message.clone(),
    };
    if let Some(h) = &e.help {
        message.push_str(&format!(" (help: {h})"));
    }
    Diagnostic {
        level: Level::Error,
        timestamp: chrono::Utc::now(),
        source: "config".into(),
        event: Some(event),
        correlation_id,
        message: format!("left out of the policy: {message}"),
        file: e.file.as_ref().map(|f| f.display().to_string()),
        line: (e.line > 0).then_some(e.line),
    }
}

/// Leaves out project hooks, and project-configured entries that run
/// commands, unless the user trusted this exact hook set. Nothing is
/// skipped silently: see [`report_left_out`].
pub(crate) fn apply_trust(cfg: &mut LoadedConfig, registry: &Registry) {
    let commands = cfg.project_command_entries(registry);
    let hooks = cfg
        .script_hooks
        .iter()
        .any(|h| h.layer == ahp_config::Layer::Project);
    if !hooks && commands.is_empty() {
        return;
    }
    let files = if cfg.local_is_repository_code {
        ".agents/hooks, .ahp/hooks.yaml and .ahp/hooks.local.yaml"
    } else {
        ".agents/hooks and .ahp/hooks.yaml"
    };
    // The loaded policy has asked git about the local layer already.
    let status = trust::hook_set_with_local(&cfg.project_root, cfg.local_is_repository_code)
        .map_err(anyhow::Error::from)
        .and_then(|set| status_of(&set));
    let reason = match status {
        Ok(TrustStatus::Trusted) => return,
        Ok(TrustStatus::Untrusted) => format!(
            "this project's hooks and commands are not trusted yet: review {files}, then run `ahp trust`"
        ),
        Ok(TrustStatus::Changed { trusted_at, changed }) => format!(
            "this project's hooks or policy changed since you trusted them ({trusted_at}): {}; review them, then run `ahp trust`",
            changed.join(", ")
        ),
        Err(e) => format!("trust could not be checked ({e:#}); project hooks and commands are not run"),
    };
    cfg.skip_project_hooks(&reason);
    cfg.skip_entries(commands, &reason);
}

pub(crate) fn trust_status(root: &Path) -> Result<(trust::HookSet, TrustStatus)> {
    let set = trust::hook_set(root)?;
    let status = status_of(&set)?;
    Ok((set, status))
}

/// Whether the user trusted `set`, from the trust store.
fn status_of(set: &trust::HookSet) -> Result<TrustStatus> {
    Ok(TrustStore::from_env()?.status(set)?)
}

/// Says on stderr (and returns, for the log) what was left out of the
/// policy: untrusted hooks, hooks that failed to load.
fn report_left_out(cfg: &LoadedConfig) -> Vec<String> {
    let mut lines = Vec::new();
    for (event, id, why) in &cfg.skipped_entries {
        lines.push(format!("skipped entry `{id}` of {event}: {why}"));
    }
    if !cfg.skipped_hooks.is_empty() {
        let names: Vec<&str> = cfg.skipped_hooks.iter().map(|(n, _)| n.as_str()).collect();
        lines.push(format!(
            "skipped project hook(s) {}: {}",
            names.join(", "),
            cfg.skipped_hooks[0].1
        ));
    }
    for e in &cfg.hook_errors {
        lines.push(format!("hook not loaded: {}", e.to_string().trim_end()));
    }
    for l in &lines {
        eprintln!("warning: {}", terminal_safe(l));
    }
    lines
}

/// Says on stderr what of the policy did not load and was left out: loud,
/// since the rest runs without it.
fn report_errors(errors: &[ConfigError]) {
    if errors.is_empty() {
        return;
    }
    let text = format!(
        "{}ahp: {} left out of the policy; the rest of it runs \
         (`ahp validate` lists every error; settings.fail_closed: true blocks instead)\n",
        ConfigErrors(errors.to_vec()),
        if errors.len() == 1 {
            "this part is"
        } else {
            "these parts are"
        }
    );
    eprint!("{}", terminal_safe(&text));
}

/// The signal log's options from `settings:` (log_fsync, log_max_bytes,
/// log_keep, log_mask).
pub(crate) fn log_options(cfg: &LoadedConfig) -> Result<ahp_signals_log::LogOptions> {
    use ahp_signals_log::{FsyncPolicy, LogOptions, Masking};
    let s = cfg.log_settings()?;
    // One ahp process appends a record or two and exits: a flush at exit
    // would make `batch` cost what `always` costs (docs/decisions.md).
    let mut o = LogOptions {
        sync_on_drop: false,
        ..LogOptions::default()
    };
    match s.fsync.as_deref() {
        Some("always") => o.fsync = FsyncPolicy::Always,
        Some("never") => o.fsync = FsyncPolicy::Never,
        _ => {}
    }
    if let Some(b) = s.max_bytes {
        o.max_bytes = Some(b);
    }
    if let Some(k) = s.keep {
        o.keep = usize::try_from(k).unwrap_or(usize::MAX);
    }
    if !s.mask.is_empty() {
        let (paths, keys): (Vec<String>, Vec<String>) =
            s.mask.into_iter().partition(|m| m.contains('.'));
        o.mask = Masking::default().with_keys(keys).with_paths(paths);
    }
    Ok(o)
}

/// Fills in what the caller did not give: the issue file (`--issue`, or
/// `issue.path` of the context) as `issue` and `checklist`, and for issue
/// events the changed files and commits from git.
async fn enrich(
    ctx: &mut HookContext,
    event: Event,
    issue: Option<&Path>,
    cfg: &LoadedConfig,
) -> Result<()> {
    let from_context = || {
        if ctx.extra.contains_key("checklist") {
            return None;
        }
        let p = ctx.lookup("issue.path")?;
        let p = PathBuf::from(p.as_str()?);
        Some(if p.is_absolute() {
            p
        } else {
            cfg.project_root.join(p)
        })
    };
    if let Some(path) = issue.map(Path::to_path_buf).or_else(from_context) {
        let issue = ahp_oracles::issue::load_issue(&path).map_err(|e| anyhow!("{e}"))?;
        ctx.issue = Some(issue.context_issue());
        ctx.extra
            .insert("checklist".into(), issue.context_checklist());
    }
    if !event.is_issue() {
        return Ok(());
    }
    let git = ahp_oracles::git::Git::new(&cfg.project_root);
    let trunk = cfg.trunk();
    if ctx.files.is_none() {
        match git.changes(trunk.as_deref()).await {
            Ok(changes) => {
                ctx.files = serde_json::from_value(changes.to_context()).ok();
                if !ctx.extra.contains_key("git") {
                    let commits = git
                        .commits_since_base(trunk.as_deref())
                        .await
                        .unwrap_or_default();
                    ctx.extra
                        .insert("git".into(), changes.git_context(&commits));
                }
            }
            // Not fatal: oracles that need the files say so themselves.
            Err(e) => eprintln!(
                "note: changed files unknown: {}",
                terminal_safe(&e.to_string())
            ),
        }
    }
    Ok(())
}

/// Reads the context: `--context FILE`, `-` or piped stdin; an empty
/// context when stdin is a terminal and no file was given.
fn read_context(source: Option<&str>) -> Result<HookContext> {
    let (name, bytes) = match source {
        Some("-") => (
            "<stdin>".to_string(),
            read_limited(std::io::stdin().lock(), "<stdin>")?,
        ),
        Some(path) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot open context file `{path}`"))?;
            (path.to_string(), read_limited(f, path)?)
        }
        None if !std::io::stdin().is_terminal() => (
            "<stdin>".to_string(),
            read_limited(std::io::stdin().lock(), "<stdin>")?,
        ),
        None => return Ok(HookContext::default()),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(HookContext::default());
    }
    let value = parse_json(&bytes, &format!("context {name}"))?;
    let raw = value.clone();
    let mut ctx: HookContext = serde_json::from_value(value)
        .map_err(|e| anyhow!("context {name}: {e}\n  help: see SPEC §3 for the context fields (event, session_id, tool {{name, input}}, files {{changed}}, issue, …)"))?;
    if let Some(files) = ctx.files.as_mut() {
        if files.changed_count == 0 {
            files.changed_count = files.changed.len();
        }
    }
    if ctx.raw.is_none() {
        ctx.raw = Some(raw);
    }
    if let Some(tool) = ctx.tool.as_mut() {
        crate::adapters::normalize_context_tool(tool);
    }
    Ok(ctx)
}

/// Parses one JSON value; errors name the source, line and column.
pub(crate) fn parse_json(bytes: &[u8], name: &str) -> Result<serde_json::Value> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{name}: not UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let mut de = serde_json::Deserializer::from_str(text);
    // Deeply nested JSON must be an error, not a stack overflow: serde_json
    // stops at 128 levels by default, which we keep.
    let value: serde_json::Value = serde::Deserialize::deserialize(&mut de)
        .map_err(|e| anyhow!("{name}:{}:{}: invalid JSON: {e}", e.line(), e.column()))?;
    de.end().map_err(|e| {
        anyhow!(
            "{name}:{}:{}: trailing data after the JSON value",
            e.line(),
            e.column()
        )
    })?;
    Ok(value)
}

pub(crate) fn read_limited(r: impl Read, name: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(MAX_CONTEXT_BYTES + 1)
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read context from {name}"))?;
    if buf.len() as u64 > MAX_CONTEXT_BYTES {
        return Err(anyhow!(
            "context from {name} is larger than the limit of {} MiB; send the tool input, not whole files",
            MAX_CONTEXT_BYTES / (1024 * 1024)
        ));
    }
    Ok(buf)
}

fn print_warnings(cfg_warnings: &[ahp_config::ConfigWarning]) {
    let mut err = std::io::stderr().lock();
    for w in cfg_warnings {
        let _ = writeln!(err, "warning: {}", terminal_safe(&w.to_string()));
    }
}

fn run_command(cmd: Command, registry: Registry) -> Result<u8> {
    match cmd {
        Command::Run(args) | Command::Gate(args) => {
            let RunArgs {
                event,
                context,
                issue,
                project,
                log,
                no_log,
                format,
                async_only,
                respond,
            } = args;
            let event = parse_event(&event)?;
            let respond = respond
                .as_deref()
                .map(crate::respond::prompt_action)
                .transpose()?;
            let ctx = read_context(context.as_deref())?;
            let Some(done) = dispatch(DispatchRequest {
                event,
                ctx,
                issue: issue.as_deref(),
                project: project.project,
                log,
                no_log,
                async_only,
                registry: &registry,
            })?
            else {
                return Ok(EXIT_PROCEED);
            };
            let verdict = &done.verdict;
            print_verdict(verdict, format)?;
            for d in &verdict.diagnostics {
                let line = format!("{}: [{}] {}", d.level.as_str(), d.source, d.message);
                eprintln!("{}", terminal_safe(&line));
            }
            // A control beside a prompt does not answer the prompt: it
            // still waits, whatever the control changed.
            let awaits_answer = verdict.outcome == Outcome::Prompt
                || (verdict.outcome == Outcome::Control
                    && verdict
                        .signals
                        .iter()
                        .any(|s| s.intensity() == ahp_engine::Intensity::Prompt));
            if awaits_answer {
                // A prompt answered (by --respond or on the terminal) lets
                // the work proceed; unanswered, it waits (exit 3).
                if let Some(action) = respond {
                    crate::respond::respond_all(verdict, action, done.log_path.as_deref())?;
                    return Ok(EXIT_PROCEED);
                }
                if crate::respond::interactive() {
                    crate::respond::ask(verdict, done.log_path.as_deref())?;
                    return Ok(EXIT_PROCEED);
                }
            }
            Ok(match verdict.outcome {
                Outcome::Block => EXIT_BLOCK,
                _ if awaits_answer => EXIT_PROMPT,
                _ => EXIT_PROCEED,
            })
        }
        Command::Hook(args) => crate::hook::run(args, &registry),
        Command::Install(args) => crate::install::run(args, false),
        Command::Uninstall(args) => crate::install::run(args, true),
        Command::Doctor(args) => crate::doctor::run(args, &registry),
        Command::Explain {
            event,
            context,
            list,
            project,
        } => {
            if list {
                crate::out::print(&list_events())?;
                return Ok(EXIT_PROCEED);
            }
            let event = parse_event(event.as_deref().unwrap_or_default())?;
            let ctx = match context.as_deref() {
                Some(src) => Some(read_context(Some(src))?),
                None => None,
            };
            let cfg = load(project.project, &registry)?;
            let (text, errors) = explain(&cfg, &registry, event, ctx)?;
            crate::out::print(&text)?;
            // The errors are in the text ("not loaded:").
            Ok(if errors.is_empty() {
                EXIT_PROCEED
            } else {
                EXIT_ERROR
            })
        }
        Command::Validate { project } => {
            let v = validate(project.project, &registry)?;
            for w in &v.warnings {
                eprintln!("warning: {}", terminal_safe(w));
            }
            match v.result {
                Ok(summary) => {
                    crate::out::print(&format!("{summary}\n"))?;
                    Ok(EXIT_PROCEED)
                }
                Err(errors) => {
                    eprint!("{}", terminal_safe(&errors.to_string()));
                    Ok(EXIT_ERROR)
                }
            }
        }
        Command::Config { project, format } => {
            let cfg = load(project.project, &registry)?;
            // What did not load is not in the view: said, and exit 1.
            report_errors(&cfg.errors);
            print_warnings(&cfg.when_path_warnings());
            match format {
                // A policy can hold a secret (a token in a command): shown
                // masked, like everything else ahp prints.
                Format::Text => crate::out::print(&terminal_safe(&cfg.render_text()))?,
                Format::Json => {
                    let mut value = cfg.render_json();
                    ahp_engine::secrets::mask_value(&mut value);
                    crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?
                }
            }
            Ok(if cfg.errors.is_empty() {
                EXIT_PROCEED
            } else {
                EXIT_ERROR
            })
        }
        Command::Init { project, force } => {
            let root = match project.project {
                Some(p) => p,
                None => {
                    std::env::current_dir().context("cannot determine the current directory")?
                }
            };
            init(&root, force)?;
            Ok(EXIT_PROCEED)
        }
        Command::Signals(cmd) => crate::signals_cmd::run(cmd, registry),
        Command::Respond {
            signal_id,
            action,
            details,
            amend,
            log,
            project,
        } => {
            let log = match log {
                Some(p) => p,
                None => project_log_path(
                    &LoadOptions::from_env(project.project)
                        .context("cannot determine the current directory")?
                        .project_root,
                )?,
            };
            let response =
                crate::respond::respond(&log, &signal_id, &action, details.as_deref(), amend)?;
            crate::out::print(&format!("{}\n", serde_json::to_string(&response)?))?;
            Ok(EXIT_PROCEED)
        }
        Command::Schema { hook_md } => {
            let schema = if hook_md {
                ahp_config::schema::hook_md_schema()
            } else {
                ahp_config::hooks_schema()
            };
            crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
            Ok(EXIT_PROCEED)
        }
        Command::Trust {
            project,
            show,
            revoke,
        } => trust_command(project.project, show, revoke, &registry),
    }
}

/// What `ahp validate` found: warnings, then the summary line or the
/// HOOK.md errors. Config errors of hooks.yaml are the `Err` of the outer
/// result. `ahp doctor` runs the same check.
pub(crate) struct Validated {
    pub warnings: Vec<String>,
    pub result: std::result::Result<String, ConfigErrors>,
}

pub(crate) fn validate(project: Option<PathBuf>, registry: &Registry) -> Result<Validated> {
    let opts = LoadOptions::from_env(project).context("cannot determine the current directory")?;
    // Every entry is checked, trusted or not: compiling runs nothing, and
    // a mistake should show before `ahp trust`, not after.
    let all = LoadedConfig::load_with_errors(&opts);
    let checked = all.compile_with_errors(registry, None);
    let mut cfg = all;
    apply_trust(&mut cfg, registry);
    let compiled = cfg.compile_with_errors(registry, None);
    let policy = compiled.policy;
    let mut v = Validated {
        warnings: checked.warnings.iter().map(ToString::to_string).collect(),
        result: Ok(String::new()),
    };
    // Every error in one run: the files', the entries', the HOOK.md hooks'.
    let mut errors = checked.errors;
    errors.extend(cfg.hook_errors.iter().cloned());
    if !errors.is_empty() {
        v.result = Err(ConfigErrors(errors));
        return Ok(v);
    }
    for (name, why) in &cfg.skipped_hooks {
        v.warnings.push(format!("hook `{name}` skipped: {why}"));
    }
    for (event, id, why) in &cfg.skipped_entries {
        v.warnings
            .push(format!("entry `{id}` of {event} does not run: {why}"));
    }
    let layers: Vec<String> = cfg
        .files
        .iter()
        .map(|f| format!("{} ({})", f.path.display(), f.layer))
        .collect();
    let entries: usize = policy
        .events()
        .filter_map(|e| policy.plan(e))
        .map(|p| p.entries.len())
        .sum();
    v.result = Ok(format!(
        "ok: {entries} enabled entries across {} events, from {}; {} HOOK.md hook(s)",
        policy.events().count(),
        layers.join(", "),
        cfg.script_hooks.len()
    ));
    Ok(v)
}

/// What one dispatch needs: `ahp run`, `ahp gate` and `ahp hook` share it.
pub(crate) struct DispatchRequest<'a> {
    pub event: Event,
    pub ctx: HookContext,
    pub issue: Option<&'a Path>,
    pub project: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub no_log: bool,
    pub async_only: bool,
    pub registry: &'a Registry,
}

/// The variable that names the environment (`intensity_by_environment`,
/// `when: {environment: …}`) when the context does not; `settings.environment`
/// comes after it.
pub(crate) const ENVIRONMENT_VAR: &str = "AHP_ENVIRONMENT";

/// The environment names SPEC §3 gives as examples.
const KNOWN_ENVIRONMENTS: &[&str] = &["development", "staging", "production", "sandbox"];

/// `AHP_ENVIRONMENT`, trimmed; unset or blank is none. A name that neither
/// SPEC §3 nor the policy's `intensity_by_environment` knows is used as it
/// is, with a warning: a typo there would silently switch nothing.
fn environment_from_var(policy: &ahp_engine::Policy, event: Event) -> Option<String> {
    let raw = std::env::var_os(ENVIRONMENT_VAR)?;
    let Some(value) = raw.to_str() else {
        eprintln!("warning: {ENVIRONMENT_VAR} is not UTF-8: ignored");
        return None;
    };
    let name = value.trim();
    if name.is_empty() {
        return None;
    }
    let mut known: Vec<&str> = KNOWN_ENVIRONMENTS.to_vec();
    // A `when: {environment: …}` that accepts the name knows it too.
    let mut accepted = false;
    if let Some(plan) = policy.plan(event) {
        let value = serde_json::Value::String(name.to_string());
        for e in &plan.entries {
            known.extend(e.intensity_by_environment.keys().map(String::as_str));
            for (path, m) in &e.when.clauses {
                if path == "environment" {
                    accepted |= m.matches(Some(&value));
                    equal_names(m, &mut known);
                }
            }
        }
    }
    if !accepted && !known.contains(&name) {
        known.sort_unstable();
        known.dedup();
        let hint = ahp_engine::suggest::did_you_mean(name, known.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        eprintln!(
            "{}",
            terminal_safe(&format!(
                "warning: {ENVIRONMENT_VAR}={name} names no environment this policy knows{hint}; known: {}",
                known.join(", ")
            ))
        );
    }
    Some(name.to_string())
}

/// The names a `when` matcher compares equal to.
fn equal_names<'a>(m: &'a ahp_engine::condition::Matcher, out: &mut Vec<&'a str>) {
    use ahp_engine::condition::Matcher;
    match m {
        Matcher::Equals(serde_json::Value::String(s)) => out.push(s),
        Matcher::AnyOf(ms) => ms.iter().for_each(|m| equal_names(m, out)),
        _ => {}
    }
}

/// A finished dispatch with what produced it.
pub(crate) struct Dispatched {
    pub verdict: Verdict,
    pub cfg: LoadedConfig,
    /// The signal log written, unless logging is off.
    pub log_path: Option<PathBuf>,
}

/// Loads the policy, enriches the context, dispatches and records, and
/// starts the background run of async entries. `None` for an async-only
/// run, which answers nothing.
pub(crate) fn dispatch(req: DispatchRequest<'_>) -> Result<Option<Dispatched>> {
    let DispatchRequest {
        event,
        mut ctx,
        issue,
        project,
        log,
        no_log,
        async_only,
        registry,
    } = req;
    let cfg = load(project, registry)?;
    let rt = runtime()?;
    if !async_only {
        rt.block_on(enrich(&mut ctx, event, issue, &cfg))?;
    }
    let compiled = cfg.compile_with_errors(registry, Some(&[event]));
    let (policy, warnings, errors) = (compiled.policy, compiled.warnings, compiled.errors);
    if !errors.is_empty() {
        if let Some(why) = cfg.fail_closed() {
            return Err(BrokenPolicy {
                errors: ConfigErrors(errors),
                fail_closed: why.clone(),
            }
            .into());
        }
    }
    print_warnings(&warnings);
    if ctx.environment.is_none() {
        ctx.environment = environment_from_var(&policy, event);
    }
    // The background async-only run already had its say in the
    // foreground run; it reports nothing twice.
    let (left_out, errors) = if async_only {
        (Vec::new(), Vec::new())
    } else {
        report_errors(&errors);
        (report_left_out(&cfg), errors)
    };
    let log_path = match (no_log, log) {
        (true, _) => None,
        (false, Some(path)) => Some(path),
        (false, None) => match project_log_path(&cfg.project_root) {
            Ok(path) => Some(path),
            Err(e) => {
                eprintln!("warning: signals will not be recorded: {e:#}");
                None
            }
        },
    };
    let history = match &log_path {
        Some(path) if !async_only => crate::respond::history_for(&policy, &ctx, path)?,
        _ => None,
    };
    let mut builder = Engine::builder().policy(policy);
    if let Some(h) = history {
        builder = builder.history(h);
    }
    if let Some(path) = &log_path {
        // A bad log setting is among the errors reported above; the log
        // is still written, with the defaults.
        let options = log_options(&cfg).unwrap_or_else(|_| ahp_signals_log::LogOptions {
            sync_on_drop: false,
            ..ahp_signals_log::LogOptions::default()
        });
        match SignalLog::open_with(path, options) {
            Ok(sink) => {
                for message in left_out {
                    let d = Diagnostic {
                        level: Level::Warning,
                        timestamp: chrono::Utc::now(),
                        source: "ahp".into(),
                        event: Some(event),
                        correlation_id: ctx.correlation_id.clone(),
                        message,
                        file: None,
                        line: None,
                    };
                    if let Err(e) = sink.record_diagnostic(&d) {
                        eprintln!("warning: {}", terminal_safe(&e.to_string()));
                    }
                }
                for e in &errors {
                    let d = error_record(e, event, ctx.correlation_id.clone());
                    if let Err(e) = sink.record_diagnostic(&d) {
                        eprintln!("warning: {}", terminal_safe(&e.to_string()));
                    }
                }
                builder = builder.sink(Arc::new(sink) as Arc<dyn SignalSink>);
            }
            // Logging must not decide the verdict, but it must not
            // fail silently either.
            Err(e) => eprintln!(
                "warning: signals will not be recorded: {}",
                terminal_safe(&e.to_string())
            ),
        }
    }
    let engine = builder.defer_detached(true).build()?;
    if async_only {
        rt.block_on(engine.run_detached(event, ctx));
        return Ok(None);
    }
    let verdict = rt.block_on(engine.dispatch(event, ctx));
    if verdict
        .entries
        .iter()
        .any(|e| e.status == EntryStatus::Detached)
    {
        if let Err(e) = spawn_async_only(
            event,
            &verdict.context,
            &cfg.project_root,
            log_path.as_deref(),
        ) {
            eprintln!(
                "warning: async entries were not started: {}",
                terminal_safe(&format!("{e:#}"))
            );
        }
    }
    Ok(Some(Dispatched {
        verdict,
        cfg,
        log_path,
    }))
}

fn print_verdict(v: &Verdict, format: Format) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            // The verdict quotes the tool input: masked like the log.
            let mut value = serde_json::to_value(v)?;
            ahp_engine::secrets::mask_value(&mut value);
            serde_json::to_writer(&mut out, &value)?;
            writeln!(out)?;
        }
        Format::Text => {
            writeln!(
                out,
                "{} {} ({} signal(s), correlation {})",
                v.outcome.as_str().to_uppercase(),
                v.event,
                v.signals.len(),
                v.correlation_id
            )?;
            for s in &v.signals {
                let clamped = s
                    .header
                    .clamped_from
                    .map(|c| format!(" (clamped from {c})"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  {:<7} {}{clamped}: {}",
                    s.intensity().as_str(),
                    terminal_safe(&s.header.source),
                    terminal_safe(&s.payload.summary())
                )?;
                let (label, steps) = match &s.payload {
                    Payload::Block(b) => ("fix", &b.resolution_path),
                    Payload::Prompt(p) => ("suggestion", &p.suggestions),
                    Payload::Aid(a) => ("follow-up", &a.follow_ups),
                    Payload::Control(_) => ("", &Vec::new()),
                };
                for step in steps {
                    writeln!(out, "          {label}: {}", terminal_safe(step))?;
                }
            }
            for c in &v.context_changes {
                writeln!(
                    out,
                    "  change  {}: {:?} {}",
                    c.source, c.modification.op, c.modification.target
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

fn list_events() -> String {
    let mut s = String::new();
    for e in Event::ALL {
        let aliases: Vec<&str> = e.aliases().collect();
        let allowed: Vec<&str> = e.allowed().iter().rev().map(|i| i.as_str()).collect();
        s.push_str(&format!(
            "{:<22} allows {:<28} aliases: {}\n",
            e.as_str(),
            allowed.join(", "),
            if aliases.is_empty() {
                "-".to_string()
            } else {
                aliases.join(", ")
            }
        ));
    }
    s
}

/// What runs on `event` and why, and the errors of what was left out.
fn explain(
    cfg: &LoadedConfig,
    registry: &Registry,
    event: Event,
    ctx: Option<HookContext>,
) -> Result<(String, Vec<ConfigError>)> {
    let compiled = cfg.compile_with_errors(registry, Some(&[event]));
    let (policy, warnings, errors) = (compiled.policy, compiled.warnings, compiled.errors);
    print_warnings(&warnings);
    let mut out = String::new();
    out.push_str(&format!(
        "event: {event} (allows {})\n",
        event
            .allowed()
            .iter()
            .rev()
            .map(|i| i.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "layers: {}\n",
        cfg.files
            .iter()
            .map(|f| format!("{} {}", f.layer, f.path.display()))
            .collect::<Vec<_>>()
            .join(" → ")
    ));
    if let Some(off) = &cfg.builtin_off {
        out.push_str(&format!(
            "builtin layer: off (settings.builtin: false at {} {})\n",
            off.layer(),
            off.location()
        ));
    }
    let on_block = match policy.settings.on_block {
        ahp_engine::OnBlock::Stop => "stop (a block skips later waves)",
        ahp_engine::OnBlock::Collect => "collect (every wave runs)",
    };
    out.push_str(&format!("on_block: {on_block}\n"));
    let mut ctx = ctx;
    if let Some(c) = ctx.as_mut() {
        c.event = Some(event);
        // Chosen as a dispatch chooses it, so `when: {environment: …}` is
        // explained as it would be decided.
        if c.environment.is_none() {
            c.environment = environment_from_var(&policy, event)
                .or_else(|| policy.settings.environment.clone());
        }
    }
    match policy.plan(event) {
        None => out.push_str("no enabled entries: every call is accepted\n"),
        Some(plan) => {
            out.push_str("run order:\n");
            for (n, (wave, e)) in plan.ordered().enumerate() {
                let when = match (&ctx, e.when.is_empty()) {
                    (_, true) => "always".to_string(),
                    (None, false) => format!("when {} (no context given)", describe_when(&e.when)),
                    (Some(c), false) => match e.when.first_failing(c) {
                        None => format!("when {} → matches", describe_when(&e.when)),
                        Some((path, m)) => {
                            let actual = c
                                .lookup(path)
                                .map(|v| v.to_string())
                                .unwrap_or_else(|| "missing".into());
                            format!("NOT SELECTED: `{path}` {m} does not hold (value: {actual})")
                        }
                    },
                };
                let mut flags = Vec::new();
                if e.is_async {
                    flags.push("async".to_string());
                }
                if let Some(i) = e.intensity {
                    flags.push(format!("intensity: {i}"));
                }
                if !e.after.is_empty() {
                    flags.push(format!("after: {}", e.after.join(", ")));
                }
                if e.on_error == ahp_engine::OnError::Block {
                    flags.push("on_error: block".into());
                }
                out.push_str(&format!(
                    "  {:>2}. wave {wave}  {:<28} {:<18} priority {:<3} {}\n      from {}\n      {when}\n",
                    n + 1,
                    e.id,
                    e.oracle_name,
                    e.priority,
                    if flags.is_empty() { String::new() } else { format!("[{}]", flags.join("; ")) },
                    e.origin
                ));
            }
        }
    }
    for h in cfg.script_hooks.iter().filter(|h| h.trigger == event) {
        if let Some(user) = &h.replaces {
            out.push_str(&format!(
                "note: project hook `{}` replaces the user hook {}\n",
                h.name,
                user.display()
            ));
        }
        if let (Some(t), Some(p)) = (&h.matcher_tool, &h.matcher_pattern) {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool matches /{t}/ and its input /{p}/\n",
                h.name
            ));
        } else if let Some(t) = &h.matcher_tool {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool matches /{t}/\n",
                h.name
            ));
        } else if let Some(p) = &h.matcher_pattern {
            out.push_str(&format!(
                "note: hook `{}` fires when the tool input matches /{p}/\n",
                h.name
            ));
        }
    }
    for (name, why) in &cfg.skipped_hooks {
        out.push_str(&format!("skipped: hook `{name}`: {why}\n"));
    }
    for (_, id, why) in cfg.skipped_entries.iter().filter(|(e, _, _)| *e == event) {
        out.push_str(&format!("skipped: entry `{id}`: {why}\n"));
    }
    for e in cfg.hook_errors.iter().chain(&errors) {
        out.push_str(&format!("not loaded: {}\n", e.to_string().trim_end()));
    }
    let disabled: Vec<_> = cfg.entries_for(event).filter(|e| !e.enabled()).collect();
    if !disabled.is_empty() {
        out.push_str("disabled:\n");
        for e in disabled {
            let by = e
                .node
                .get("enabled")
                .map(|n| format!("{} {}", n.origin.layer(), n.origin.location()))
                .unwrap_or_default();
            out.push_str(&format!("  {:<28} enabled: false set by {by}\n", e.id));
        }
    }
    Ok((out, errors))
}

fn describe_when(c: &ahp_engine::condition::Condition) -> String {
    c.clauses
        .iter()
        .map(|(p, m)| format!("`{p}` {m}"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Starts `ahp run EVENT --async-only` in its own process group with the
/// final context on stdin, and does not wait: the verdict is out, and the
/// agent must not wait for fire-and-forget hooks.
fn spawn_async_only(
    event: Event,
    ctx: &HookContext,
    root: &Path,
    log: Option<&Path>,
) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().context("cannot find the ahp executable")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "run",
        event.as_str(),
        "--async-only",
        "--context",
        "-",
        "--project",
    ])
    .arg(root)
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .process_group(0);
    match log {
        Some(p) => {
            cmd.arg("--log").arg(p);
        }
        None => {
            cmd.arg("--no-log");
        }
    }
    let mut child = cmd.spawn().context("cannot start the background run")?;
    let body = serde_json::to_vec(ctx)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&body)
            .context("cannot hand the context to the background run")?;
    }
    Ok(())
}

/// The project's own errors among `errors`: those in a file under the
/// project root (its policy files, its HOOK.md hooks).
fn project_errors(root: &Path, errors: &[ahp_config::ConfigError]) -> Vec<ahp_config::ConfigError> {
    errors
        .iter()
        .filter(|e| e.file.as_ref().is_some_and(|f| f.starts_with(root)))
        .cloned()
        .collect()
}

/// `ahp trust` trusts only what would run as reviewed: a project whose
/// policy files or hooks loading refuses (a symlink out of the project, an
/// `oracle: Script`, a HOOK.md that does not load) is refused here too,
/// naming each file, rather than trusted and then quietly left out.
fn check_loads_as_reviewed(opts: &LoadOptions, registry: &Registry) -> Result<()> {
    let root = &opts.project_root;
    let refuse = |errors: Vec<ahp_config::ConfigError>| {
        anyhow!(
            "not trusted: ahp would not load {} of what you are trusting, so it would not run as reviewed:\n{}\nfix it, then run `ahp trust` again",
            if errors.len() == 1 { "this part" } else { "these parts" },
            ConfigErrors(errors)
        )
    };
    let cfg = LoadedConfig::load_with_errors(opts);
    let mut mine = project_errors(root, &cfg.hook_errors);
    mine.extend(project_errors(
        root,
        &cfg.compile_with_errors(registry, None).errors,
    ));
    if mine.is_empty() {
        Ok(())
    } else {
        Err(refuse(mine))
    }
}

fn trust_command(
    project: Option<PathBuf>,
    show: bool,
    revoke: bool,
    registry: &Registry,
) -> Result<u8> {
    let opts = LoadOptions::from_env(project).context("cannot determine the current directory")?;
    let root = &opts.project_root;
    let store = TrustStore::from_env()?;
    if revoke {
        if store.revoke(root)? {
            crate::out::outln!(
                "revoked: project hooks of {} will not run until trusted again",
                root.display()
            )?;
        } else {
            crate::out::outln!("{} was not trusted", root.display())?;
        }
        return Ok(EXIT_PROCEED);
    }
    let set = trust::hook_set(root)?;
    let status = store.status(&set)?;
    if show {
        crate::out::outln!("project: {}", root.display())?;
        crate::out::outln!("hook set: {} ({} file(s))", set.digest, set.files.len())?;
        for f in &set.files {
            let kind = match (&f.symlink_target, f.executable) {
                (Some(t), _) => format!("symlink → {t}"),
                (None, true) => "executable".to_string(),
                (None, false) => String::new(),
            };
            crate::out::outln!("  {}  {} {kind}", f.digest, f.path)?;
        }
        let line = match &status {
            TrustStatus::Trusted if set.is_empty() => "status: no project hooks".to_string(),
            TrustStatus::Trusted => "status: trusted".to_string(),
            TrustStatus::Untrusted => "status: not trusted (run `ahp trust`)".to_string(),
            TrustStatus::Changed {
                trusted_at,
                changed,
            } => format!(
                "status: changed since trusted at {trusted_at}: {}",
                changed.join(", ")
            ),
        };
        crate::out::outln!("{line}")?;
        return Ok(EXIT_PROCEED);
    }
    if set.is_empty() {
        crate::out::outln!(
            "{} has no project hooks (.agents/hooks); nothing to trust",
            root.display()
        )?;
        return Ok(EXIT_PROCEED);
    }
    check_loads_as_reviewed(&opts, registry)?;
    store.trust(&set)?;
    crate::out::outln!(
        "trusted {} file(s) of {} ({}); recorded in {}",
        set.files.len(),
        root.display(),
        set.digest,
        store.path().display()
    )?;
    Ok(EXIT_PROCEED)
}

fn init(root: &Path, force: bool) -> Result<()> {
    let dir = root.join(".ahp");
    let hooks = dir.join("hooks.yaml");
    if hooks.exists() && !force {
        return Err(anyhow!(
            "{} already exists; use --force to overwrite it, or edit it (run `ahp validate` after)",
            hooks.display()
        ));
    }
    // The project may be a cloned repository: its `.ahp/` and `.gitignore`
    // are written without following a symlink it committed.
    let write = |rel: &str, text: &str| {
        ahp_oracles::safe_write::write_in_project(root, Path::new(rel), text.as_bytes())
            .map_err(|e| anyhow!("ahp init: {e}"))
    };
    write(".ahp/hooks.yaml", ahp_config::STARTER_POLICY)?;
    let schema = dir.join("hooks.schema.json");
    write(
        ".ahp/hooks.schema.json",
        &(serde_json::to_string_pretty(&ahp_config::hooks_schema())? + "\n"),
    )?;
    let gitignore = root.join(".gitignore");
    let existing = match std::fs::read_to_string(&gitignore) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", gitignore.display())),
    };
    let wanted = [".ahp/hooks.local.yaml", ".ahp/signals.jsonl*"];
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| !existing.lines().any(|l| l.trim() == *w))
        .collect();
    if !missing.is_empty() {
        let mut text = existing.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# ahp: personal overrides and the signal log\n");
        for m in &missing {
            text.push_str(m);
            text.push('\n');
        }
        write(".gitignore", &text)?;
    }
    crate::out::outln!("wrote {}", hooks.display())?;
    crate::out::outln!("wrote {}", schema.display())?;
    if !missing.is_empty() {
        crate::out::outln!("added {} to {}", missing.join(", "), gitignore.display())?;
    }
    crate::out::outln!(
        "next: edit the policy, then `ahp validate` and `ahp explain pre-tool-use`"
    )?;
    Ok(())
}
