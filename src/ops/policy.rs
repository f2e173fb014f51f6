//! The policy a command runs: loaded with its broken parts left out,
//! trust applied, errors and what was skipped reported, and the signal
//! log's path and options taken from it.

use super::output::terminal_safe;
use ahp_config::trust::{self, TrustStatus, TrustStore};
use ahp_config::{ConfigError, ConfigErrors, FailClosed, LoadOptions, LoadedConfig};
use ahp_engine::{Diagnostic, Event, Level, Registry};
use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};

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
    if let Ok(meta) = std::fs::symlink_metadata(&dir)
        && meta.file_type().is_symlink()
    {
        let target = std::fs::read_link(&dir).unwrap_or_default();
        return Err(anyhow!(
            "{} is a symlink to {}; ahp keeps a project's signal log only inside the project \
                 (replace the link with a directory, or pass --log)",
            ahp_config::path_line(&dir),
            ahp_config::path_line(&target)
        ));
    }
    Ok(dir.join(ahp_engine::paths::LOG_FILE))
}

/// Where the layers are, for `--project DIR` (or the project found from
/// the current directory).
pub(crate) fn load_options(project: Option<PathBuf>) -> Result<LoadOptions> {
    // A project named that is not there is a typo: its policy would be
    // left out without a word (and a log folder made there).
    if let Some(dir) = &project
        && !dir.is_dir()
    {
        anyhow::bail!(
            "the project folder {} does not exist (from --project or the agent's project variable); check the path",
            ahp_config::path_line(dir)
        );
    }
    let mut opts =
        LoadOptions::from_env(project).context("cannot determine the current directory")?;
    opts.shared_tool_name = Some(crate::adapters::shared_tool_name);
    Ok(opts)
}

/// The signal log a command reads: `--log PATH`, else the project's.
pub(crate) fn log_path(log: Option<PathBuf>, project: Option<PathBuf>) -> Result<PathBuf> {
    match log {
        Some(path) => Ok(path),
        None => project_log_path(&load_options(project)?.project_root),
    }
}

/// The policy with its broken parts left out (listed in `cfg.errors`, and
/// in what compiling it reports): one mistake must not switch the rest of
/// the policy, and the builtin layer, off.
pub(crate) fn load(project: Option<PathBuf>, registry: &Registry) -> Result<LoadedConfig> {
    let opts = load_options(project)?;
    let mut cfg = LoadedConfig::load_with_errors(&opts);
    apply_trust(&mut cfg, registry);
    Ok(cfg)
}

/// The policy has errors and `fail_closed` is on: rather than run what is
/// left, the call fails (`ahp hook` blocks, `ahp run` exits 1).
#[derive(Debug, thiserror::Error)]
#[error("{errors}")]
pub(crate) struct BrokenPolicy {
    pub errors: ConfigErrors,
    pub fail_closed: FailClosed,
}

/// The error record of a policy error: the file and line apart, for a
/// reader of the log.
pub(crate) fn error_record(
    e: &ConfigError,
    event: Event,
    correlation_id: Option<String>,
) -> Diagnostic {
    let mut message = match &e.key {
        Some(k) => format!("{k}: {}", e.message),
        None => e.message.clone(),
    };
    if let Some(h) = &e.help {
        message.push_str(&format!(" (help: {h})"));
    }
    Diagnostic {
        id: ahp_engine::Uuid::new_v4(),
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
        .any(|h| h.layer == ahp_config::Layer::Project)
        || cfg.has_project_hook_errors();
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
        Ok(TrustStatus::Changed {
            trusted_at,
            changed,
        }) => format!(
            "this project's hooks or policy changed since you trusted them ({trusted_at}): {}; review them, then run `ahp trust`",
            changed.join(", ")
        ),
        Err(e) => {
            format!("trust could not be checked ({e:#}); project hooks and commands are not run")
        }
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
pub(crate) fn report_left_out(cfg: &LoadedConfig) -> Vec<String> {
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
    for e in cfg.hook_load_errors() {
        lines.push(format!("hook not loaded: {}", e.to_string().trim_end()));
    }
    for l in &lines {
        eprintln!("warning: {}", terminal_safe(l));
    }
    lines
}

/// Says on stderr what of the policy did not load and was left out: loud,
/// since the rest runs without it.
pub(crate) fn report_errors(errors: &[ConfigError]) {
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
/// The signal log's options from the policy's log settings; a broken
/// setting is reported with the policy's other errors and loses only
/// itself.
pub(crate) fn log_options(cfg: &LoadedConfig) -> ahp_signals_log::LogOptions {
    let (options, ignored) = log_options_and_warnings(cfg);
    for warning in ignored {
        eprintln!("warning: {}", terminal_safe(&warning));
    }
    options
}

/// [`log_options`], and a warning for each retention setting of the
/// repository's that would keep less of the log, and is ignored.
pub(crate) fn log_options_and_warnings(
    cfg: &LoadedConfig,
) -> (ahp_signals_log::LogOptions, Vec<String>) {
    use ahp_signals_log::{FsyncPolicy, LogOptions, Masking};
    let (s, _) = cfg.log_settings();
    let mut ignored = Vec::new();
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
    // A repository keeps more of the log, never less (a cloned project's
    // `log_keep: 0` erased every blocked call it had made).
    let mut longer = |key: &str, theirs: Option<(u64, String)>, ours: u64| match theirs {
        Some((t, at)) if t < ours => {
            ignored.push(format!(
                "{at}: settings.{key}: {t} from the repository's policy would keep less of the signal log than {ours}; ignored"
            ));
            ours
        }
        Some((t, _)) => t,
        None => ours,
    };
    o.max_bytes = o
        .max_bytes
        .map(|ours| longer("log_max_bytes", s.repository_max_bytes.clone(), ours));
    let keep = longer("log_keep", s.repository_keep, o.keep as u64);
    o.keep = usize::try_from(keep).unwrap_or(usize::MAX);
    if !s.mask.is_empty() {
        let (paths, keys): (Vec<String>, Vec<String>) =
            s.mask.into_iter().partition(|m| m.contains('.'));
        o.mask = Masking::default().with_keys(keys).with_paths(paths);
    }
    (o, ignored)
}

/// What `ahp validate` found: warnings, then the summary line or the
/// HOOK.md errors. Config errors of hooks.yaml are the `Err` of the outer
/// result. `ahp doctor` runs the same check.
pub(crate) struct Validated {
    pub warnings: Vec<String>,
    /// Those of `warnings` that are attempts to change the managed policy.
    pub managed_overrides: Vec<String>,
    pub result: std::result::Result<String, ConfigErrors>,
}

pub(crate) fn validate(project: Option<PathBuf>, registry: &Registry) -> Result<Validated> {
    let opts = load_options(project)?;
    // Every entry is checked, trusted or not: compiling runs nothing, and
    // a mistake should show before `ahp trust`, not after.
    let all = LoadedConfig::load_with_errors(&opts);
    let checked = all.compile_with_errors(registry, None);
    let mut cfg = all;
    apply_trust(&mut cfg, registry);
    let compiled = cfg.compile_with_errors(registry, None);
    let policy = compiled.policy;
    let mut v = Validated {
        warnings: checked
            .warnings
            .iter()
            .chain(&cfg.missing_trunk_warning())
            .map(ToString::to_string)
            .chain(log_options_and_warnings(&cfg).1)
            .collect(),
        managed_overrides: cfg
            .managed_overrides
            .iter()
            .map(|o| format!("{}: {o}", o.location))
            .collect(),
        result: Ok(String::new()),
    };
    // Every error in one run: the files', the entries', the HOOK.md hooks'.
    let mut errors = checked.errors;
    errors.extend(cfg.hook_load_errors().cloned());
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
        .map(|f| format!("{} ({})", ahp_config::path_line(&f.path), f.layer))
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
