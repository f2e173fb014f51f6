//! One dispatch, as `ahp run`, `ahp gate` and `ahp hook` share it: the
//! policy loaded, the context enriched (issue file, git changes), the
//! engine run and recorded, and async entries started in the background.

use super::output::{print_warnings, terminal_safe};
use super::policy::{
    BrokenPolicy, error_record, load, log_options, project_log_path, report_errors,
    report_left_out, runtime,
};
use ahp_config::{ConfigErrors, LoadedConfig};
use ahp_engine::{
    Diagnostic, Engine, EntryStatus, Event, HookContext, Level, Registry, SignalSink, Verdict,
};
use ahp_signals_log::SignalLog;
use anyhow::{Context, Result, anyhow};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
pub(crate) fn environment_from_var(policy: &ahp_engine::Policy, event: Event) -> Option<String> {
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
    if !errors.is_empty()
        && let Some(why) = cfg.fail_closed()
    {
        return Err(BrokenPolicy {
            errors: ConfigErrors(errors),
            fail_closed: why.clone(),
        }
        .into());
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
        Some(path) if !async_only => crate::ops::respond::history_for(&policy, &ctx, path)?,
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
        && let Err(e) = spawn_async_only(
            event,
            &verdict.context,
            &cfg.project_root,
            log_path.as_deref(),
        )
    {
        eprintln!(
            "warning: async entries were not started: {}",
            terminal_safe(&format!("{e:#}"))
        );
    }
    Ok(Some(Dispatched {
        verdict,
        cfg,
        log_path,
    }))
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
        let issue = ahp_oracles::workflow::issue::load_issue(&path).map_err(|e| anyhow!("{e}"))?;
        ctx.issue = Some(issue.context_issue());
        ctx.extra
            .insert("checklist".into(), issue.context_checklist());
    }
    if !event.is_issue() {
        return Ok(());
    }
    let git = ahp_oracles::workflow::git::Git::new(&cfg.project_root);
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
