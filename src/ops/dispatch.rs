//! One dispatch, as `ahp run`, `ahp gate` and `ahp hook` share it: the
//! policy loaded, the context enriched (issue file, git changes), the
//! engine run and recorded, and async entries started in the background.

use super::output::{print_warnings, terminal_safe};
use super::policy::{
    BrokenPolicy, error_record, load, log_options, project_log_path, report_errors,
    report_left_out, runtime,
};
use ahp_config::issue_commands::{FoundCommand, IssueCommand, Lifecycle, MAX_FOUND};
use ahp_config::{ConfigErrors, LoadedConfig};
use ahp_engine::{
    Diagnostic, Engine, EntryStatus, Event, HookContext, Level, Registry, SignalSink, Verdict,
};
use ahp_signals_log::SignalLog;
use anyhow::{Context, Result, anyhow};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

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
    /// When an agent started waiting for the answer (`ahp hook`): the
    /// dispatch then answers within [`LoadedConfig::answer_within`] of it.
    pub agent_waits_since: Option<Instant>,
}

/// The signals by which an agent stops ahp (SIGTERM, SIGINT, SIGHUP: it
/// gave up waiting for the hook), listened to from the first dispatch of
/// a call to its last: one that arrives between two dispatches is kept
/// for the next. Only a policy with HOOK.md hooks can outlast an agent's
/// patience, so only such a call listens.
struct Stop {
    #[cfg(unix)]
    signals: Option<[tokio::signal::unix::Signal; 3]>,
}

impl Stop {
    /// Starts listening, when `runs_hooks`.
    fn listen(rt: &tokio::runtime::Runtime, runs_hooks: bool) -> Stop {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            // Set up only when listened to: a handler in place keeps the
            // signal from ending a call that has no hook to stop.
            if !runs_hooks {
                return Stop { signals: None };
            }
            let _runtime = rt.enter();
            let signals = match (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(term), Ok(int), Ok(hup)) => Some([term, int, hup]),
                _ => None,
            };
            Stop { signals }
        }
        #[cfg(not(unix))]
        {
            let _ = (rt, runs_hooks);
            Stop {}
        }
    }

    /// Runs `work` unless ahp is told to stop, or was since it started
    /// listening: then `work` is dropped, which kills the process groups
    /// of the hooks it runs, and the stop is the call's error (recorded; a
    /// block under `fail_closed`).
    async fn until<T>(&mut self, work: impl std::future::Future<Output = T>) -> Result<T> {
        #[cfg(unix)]
        if let Some([term, int, hup]) = &mut self.signals {
            let stopped = |name: &str| {
                anyhow!(
                    "ahp was stopped ({name}) while the policy ran, as an agent does when a hook \
                     takes longer than it waits; the hooks still running were killed"
                )
            };
            // A stop that is already there wins over work that is ready.
            return tokio::select! {
                biased;
                _ = term.recv() => Err(stopped("SIGTERM")),
                _ = int.recv() => Err(stopped("SIGINT")),
                _ = hup.recv() => Err(stopped("SIGHUP")),
                v = work => Ok(v),
            };
        }
        Ok(work.await)
    }
}

/// Whether the log could not be opened because the user may not write
/// there (permissions, a read-only file system), not because of what is
/// in its place.
fn not_writable(e: &ahp_signals_log::LogError) -> bool {
    matches!(
        e,
        ahp_signals_log::LogError::Open { error, .. }
            if matches!(
                error.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            )
    )
}

/// The variable that names the environment (`intensity_by_environment`,
/// `when: {environment: …}`) when the context does not; `settings.environment`
/// comes after it.
pub(crate) const ENVIRONMENT_VAR: &str = "AHP_ENVIRONMENT";

/// The environment names SPEC §3 gives as examples.
const KNOWN_ENVIRONMENTS: &[&str] = &["development", "staging", "production", "sandbox"];

/// Their common short forms that are not a prefix of the name.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("production", "prd"),
    ("staging", "stg"),
    ("staging", "stage"),
    ("sandbox", "sbx"),
];

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

/// Names an entry's `intensity_by_environment` key that is nearly, but not,
/// the environment this call runs in (`Production`, `prod`, `prodution`
/// beside `production`): names are compared exactly, so the entry's
/// intensity there silently never applied. An entry that also names the
/// environment itself is left alone, and so is an environment no one
/// names (then the environment is the typo, which
/// [`environment_from_var`] reports).
fn warn_near_miss_environments(policy: &ahp_engine::Policy, events: &[Event], env: &str) {
    let plans: Vec<_> = events.iter().filter_map(|&e| policy.plan(e)).collect();
    let named = KNOWN_ENVIRONMENTS.contains(&env)
        || policy.settings.environment.as_deref() == Some(env)
        || plans.iter().any(|p| {
            p.entries
                .iter()
                .any(|e| e.intensity_by_environment.contains_key(env))
        });
    if !named {
        return;
    }
    // Another case, a slip of a letter or two, or an abbreviation; not
    // another environment that shares a part or differs by a number or a
    // separator (`preproduction`, `production-eu`, `production2`, `us-west`
    // beside `us-east`).
    let letters = |s: &str| s.chars().all(char::is_alphabetic);
    let near = |key: &str| {
        let (k, e) = (key.to_lowercase(), env.to_lowercase());
        let len = k.chars().count();
        let words = letters(&k) && letters(&e);
        k == e
            || (words && len >= 4 && ahp_engine::suggest::levenshtein(&k, &e) <= 2)
            || (words && len >= 3 && e.starts_with(&k) && !k.starts_with(&e))
            || ABBREVIATIONS.contains(&(e.as_str(), k.as_str()))
    };
    for plan in plans {
        for entry in &plan.entries {
            let keys = &entry.intensity_by_environment;
            if keys.contains_key(env) {
                continue;
            }
            for key in keys.keys().filter(|k| near(k)) {
                eprintln!(
                    "{}",
                    terminal_safe(&format!(
                        "warning: entry `{}` sets intensity_by_environment for `{key}`, but this call's environment is `{env}`: names are compared exactly, so that intensity is not applied (write `{env}` if that is the one meant)",
                        entry.id
                    ))
                );
            }
        }
    }
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
    /// The settings it was written with.
    pub log_options: ahp_signals_log::LogOptions,
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
        agent_waits_since,
    } = req;
    let cfg = load(project, registry)?;
    let deadline = agent_waits_since.map(|t| t + cfg.answer_within());
    let rt = runtime()?;
    let calls = if async_only {
        Vec::new()
    } else {
        issue_calls(event, &mut ctx, &cfg, &rt)
    };
    if !async_only {
        rt.block_on(within(deadline, enrich(&mut ctx, event, issue, &cfg)))?;
    }
    let events: Vec<Event> = std::iter::once(event)
        .chain(calls.iter().map(|c| c.event))
        .collect();
    let compiled = cfg.compile_with_errors(registry, Some(&events));
    let (policy, warnings, errors) = (compiled.policy, compiled.warnings, compiled.errors);
    // A HOOK.md hook that did not load is a part of the policy that does
    // not run, as a broken entry is.
    if (!errors.is_empty() || !cfg.hook_errors.is_empty())
        && let Some(why) = cfg.fail_closed()
    {
        let all = errors.iter().chain(&cfg.hook_errors).cloned().collect();
        return Err(BrokenPolicy {
            errors: ConfigErrors(all),
            fail_closed: why.clone(),
        }
        .into());
    }
    print_warnings(&warnings);
    if ctx.environment.is_none() {
        ctx.environment = environment_from_var(&policy, event);
    }
    if !async_only
        && let Some(env) = ctx
            .environment
            .as_deref()
            .or(policy.settings.environment.as_deref())
    {
        warn_near_miss_environments(&policy, &events, env);
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
            Err(e) if !async_only && cfg.fail_closed().is_some() => {
                return Err(anyhow!(
                    "the signal log cannot be written, and settings.fail_closed blocks a call \
                     ahp cannot record: {e:#}"
                ));
            }
            Err(e) => {
                eprintln!("warning: signals will not be recorded: {e:#}");
                None
            }
        },
    };
    let mut sink: Option<Arc<dyn SignalSink>> = None;
    let log_options = match &log_path {
        // What is masked in the context is masked in every record of the
        // dispatch, a signal's message that quotes it included.
        Some(_) => {
            let mut o = log_options(&cfg);
            if let Ok(c) = serde_json::to_value(&ctx) {
                o.mask = o.mask.quoting(&c);
            }
            o
        }
        None => ahp_signals_log::LogOptions::default(),
    };
    if let Some(path) = &log_path {
        match SignalLog::open_with(path, log_options.clone()) {
            Ok(log) => {
                for message in left_out {
                    let d = note(
                        Level::Warning,
                        "ahp",
                        Some(event),
                        ctx.correlation_id.clone(),
                        message,
                    );
                    record(&log, &d);
                }
                for e in &errors {
                    let d = error_record(e, event, ctx.correlation_id.clone());
                    record(&log, &d);
                }
                sink = Some(Arc::new(log) as Arc<dyn SignalSink>);
            }
            // A repository can put a folder or a link where its log goes:
            // under fail_closed, a call ahp cannot record is one it does
            // not let through. A project the user may not write (a
            // read-only checkout) is no repository's doing: said, as
            // without fail_closed.
            Err(e) if !async_only && cfg.fail_closed().is_some() && !not_writable(&e) => {
                return Err(anyhow!(
                    "the signal log cannot be written, and settings.fail_closed blocks a call \
                     ahp cannot record: {e} (remove what is in its place, or name another \
                     file with --log)"
                ));
            }
            // Otherwise logging must not decide the verdict, but it must
            // not fail silently either.
            Err(e) => eprintln!(
                "warning: signals will not be recorded: {}",
                terminal_safe(&e.to_string())
            ),
        }
    }
    // One engine per dispatched event: each has the escalation history of
    // its own context (an issue event counts per issue).
    let engine_for = |ctx: &HookContext| -> Result<Engine> {
        let mut builder = Engine::builder().policy(policy.clone());
        if let Some(path) = log_path.as_deref().filter(|_| !async_only) {
            match crate::ops::respond::history_for(&policy, ctx, path) {
                Ok(Some(h)) => builder = builder.history(h),
                Ok(None) => {}
                // History only ever raises an answer: without it the
                // policy still answers, unescalated, and says so. A log
                // that does not read (a repository can commit a broken
                // segment) must not take the whole answer away.
                Err(e) if cfg.fail_closed().is_none() => {
                    let message = format!("escalation rules were not applied: {e:#}");
                    eprintln!("warning: {}", terminal_safe(&message));
                    if let Some(sink) = &sink {
                        let d = note(
                            Level::Warning,
                            "ahp",
                            ctx.event,
                            ctx.correlation_id.clone(),
                            message,
                        );
                        record(sink.as_ref(), &d);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(s) = &sink {
            builder = builder.sink(Arc::clone(s));
        }
        if let Some(d) = deadline {
            builder = builder.deadline(d);
        }
        Ok(builder.defer_detached(true).build()?)
    };
    let engine = engine_for(&ctx)?;
    if async_only {
        rt.block_on(engine.run_detached(event, ctx));
        return Ok(None);
    }
    let mut stop = Stop::listen(&rt, !cfg.script_hooks.is_empty());
    let mut verdict = rt.block_on(stop.until(engine.dispatch(event, ctx)))?;
    start_detached(event, &verdict, &cfg.project_root, log_path.as_deref());
    // A note on the issue commands, in the log and the verdict.
    let issue_note = |verdict: &mut Verdict, level: Level, event: Event, message: String| {
        let d = note(
            level,
            "issue_commands",
            Some(event),
            Some(verdict.correlation_id.clone()),
            message,
        );
        if let Some(sink) = &sink {
            record(sink.as_ref(), &d);
        }
        verdict.diagnostics.push(d);
    };
    for call in &calls {
        if let Some(why) = &call.refuse {
            let mut refusal =
                ahp_engine::Signal::block(why.clone()).with_type("issue-commands-ungated");
            refusal.header.source = "issue_commands".into();
            issue_note(&mut verdict, Level::Error, event, format!("refused: {why}"));
            verdict.signals.push(refusal);
            verdict.outcome = verdict.outcome.max(ahp_engine::Outcome::Block);
        }
        let prepared = call.prepare(&verdict.context, &rt, &cfg, deadline)?;
        for n in &call.notes {
            issue_note(&mut verdict, Level::Warning, call.event, n.clone());
        }
        let mut ictx = match prepared {
            Ok(ictx) => ictx,
            Err(not_run) => {
                issue_note(&mut verdict, Level::Error, call.event, not_run);
                continue;
            }
        };
        ictx.correlation_id = Some(verdict.correlation_id.clone());
        let issue_verdict =
            rt.block_on(stop.until(engine_for(&ictx)?.dispatch(call.event, ictx)))?;
        start_detached(
            call.event,
            &issue_verdict,
            &cfg.project_root,
            log_path.as_deref(),
        );
        fold_in(&mut verdict, issue_verdict);
    }
    Ok(Some(Dispatched {
        verdict,
        cfg,
        log_path,
        log_options,
    }))
}

/// A shell command of a tool call that is an issue lifecycle step
/// (`settings.issue_commands`): dispatched as its issue event beside the
/// tool event.
#[derive(Debug)]
pub(crate) struct IssueCall {
    /// `pre-issue-*` at pre-tool-use, `post-issue-*` at post-tool-use.
    pub event: Event,
    /// What matched.
    pub found: FoundCommand,
    /// The issue file, when the command names an id and the file exists.
    pub path: Option<PathBuf>,
    /// The issue's branch and its text of the file, when the tracker has
    /// `issue_branch` and another branch matches (the work is there).
    pub branch: Option<(String, String)>,
    /// What the agent and the log should know: no id, no file, several
    /// branches, more commands than are gated.
    pub notes: Vec<String>,
    /// Why a step of the line is not judged with its issue (no id ahp can
    /// read, a lookup stopped at its limit, commands past the cap): under
    /// `fail_closed`, a block before the step.
    pub unjudged: Option<String>,
    /// Why the tool call is refused whatever `fail_closed` says: a close
    /// or submit of the line was left ungated.
    pub refuse: Option<String>,
}

impl IssueCall {
    /// The issue event's context with its issue loaded, or why the event
    /// is not run (`Ok(Err(note))`: its issue does not load, and the tool
    /// call's verdict stands). Under `fail_closed` both that and a step
    /// before it runs that cannot be judged with its issue are errors,
    /// refused like any part of the policy that could not run. What
    /// `ahp hook` and `ahp test` both do with an issue command.
    pub(crate) fn prepare(
        &self,
        tool: &HookContext,
        rt: &tokio::runtime::Runtime,
        cfg: &LoadedConfig,
        deadline: Option<Instant>,
    ) -> Result<Result<HookContext, String>> {
        let closed = cfg.fail_closed().is_some();
        if let Some(why) = self
            .unjudged
            .as_ref()
            .filter(|_| closed && self.event.allows(ahp_engine::Intensity::Block))
        {
            return Err(anyhow!("{}: {why}", self.event));
        }
        let mut ictx = self.context(tool);
        match self.load(&mut ictx, rt, cfg, deadline) {
            Ok(()) => Ok(Ok(ictx)),
            Err(e) if closed => Err(anyhow!("{}: {e:#}", self.event)),
            Err(e) => Ok(Err(format!("{} was not run: {e:#}", self.event))),
        }
    }

    /// Adds the issue (from its branch when it has one), the checklist and
    /// the git changes to the issue event's context.
    pub(crate) fn load(
        &self,
        ctx: &mut HookContext,
        rt: &tokio::runtime::Runtime,
        cfg: &LoadedConfig,
        deadline: Option<Instant>,
    ) -> Result<()> {
        // The issue as its branch has it is set here; else `enrich` reads
        // the working tree's file.
        let issue_file = match (&self.branch, &self.path) {
            (Some((branch, text)), Some(path)) => {
                let issue = ahp_oracles::workflow::issue::parse_issue(text, path)
                    .map_err(|e| anyhow!("{e} (as branch `{branch}` has it)"))?;
                let mut value = issue.context_issue();
                if let Some(m) = value.as_object_mut() {
                    m.insert("branch".into(), branch.clone().into());
                }
                ctx.issue = Some(value);
                ctx.extra
                    .insert("checklist".into(), issue.context_checklist());
                None
            }
            _ => self.path.as_deref(),
        };
        rt.block_on(within(deadline, enrich(ctx, self.event, issue_file, cfg)))
    }

    /// How it is recorded in the tool event's context (`issue_commands`).
    fn describe(&self, root: &Path) -> serde_json::Value {
        serde_json::json!({
            "event": self.event.as_str(),
            "tracker": self.found.tracker,
            "id": self.found.id,
            "command": self.found.command,
            "issue": self.path.as_deref().map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string()),
            "branch": self.branch.as_ref().map(|(b, _)| b),
        })
    }

    /// The issue event's context: the tool call's session, place and
    /// correlation id, and `tool_call` saying which call it came from (the
    /// issue and git changes are added by [`enrich`]).
    pub(crate) fn context(&self, tool: &HookContext) -> HookContext {
        let mut ctx = HookContext {
            session_id: tool.session_id.clone(),
            work_dir: tool.work_dir.clone(),
            environment: tool.environment.clone(),
            correlation_id: tool.correlation_id.clone(),
            ..HookContext::default()
        };
        let call = tool.tool.as_ref();
        ctx.extra.insert(
            "tool_call".into(),
            serde_json::json!({
                "event": tool.event.map(Event::as_str),
                "tool": call.and_then(|t| t.raw_name.clone()).or_else(|| call.map(|t| t.name.clone())),
                "use_id": call.and_then(|t| t.use_id.clone()),
                "command": self.found.command,
                "tracker": self.found.tracker,
            }),
        );
        if self.path.is_none()
            && let Some(id) = &self.found.id
        {
            ctx.issue = Some(serde_json::json!({ "id": id }));
        }
        ctx
    }
}

/// The issue commands of a shell tool call at pre- and post-tool-use
/// (none after a call that failed), each with its issue file; recorded in
/// the tool event's context as `issue_commands`.
pub(crate) fn issue_calls(
    event: Event,
    ctx: &mut HookContext,
    cfg: &LoadedConfig,
    rt: &tokio::runtime::Runtime,
) -> Vec<IssueCall> {
    let post = match event {
        Event::PreToolUse => false,
        Event::PostToolUse => true,
        _ => return Vec::new(),
    };
    let Some(tool) = ctx.tool.as_ref().filter(|t| t.name == "shell") else {
        return Vec::new();
    };
    // A model of our own: the engine models the line again at dispatch,
    // and keeps its model (whose words are not masked) out of the record.
    let mut modelled = tool.clone();
    modelled.model_shell(ctx.work_dir.as_deref());
    let Some(shell) = modelled.shell.as_ref() else {
        return Vec::new();
    };
    // A broken entry is among the compile errors reported with the rest;
    // the other trackers still count.
    let (commands, _) = cfg.issue_commands_with_errors();
    let mut picked: Vec<(&IssueCommand, FoundCommand, Event)> = Vec::new();
    for command in &commands {
        let mut found = command.find(shell);
        if !shell.parsed
            && let Some(line) = modelled.command_line()
        {
            // What the model could not parse is read word by word.
            found.extend(command.find_text(&line));
        }
        for f in found {
            let event = if post {
                f.lifecycle.post_event()
            } else {
                f.lifecycle.pre_event()
            };
            if picked
                .iter()
                .any(|(_, p, e)| *e == event && p.id == f.id && p.tracker == f.tracker)
            {
                continue;
            }
            picked.push((command, f, event));
        }
    }
    if picked.is_empty() {
        return Vec::new();
    }
    // Past the cap, the steps whose gates refuse (close, then submit) are
    // gated first: a line of harmless `issue start`s must not use up the
    // budget of the `issue close` at its end. Gated ones keep line order.
    let mut order: Vec<usize> = (0..picked.len()).collect();
    order.sort_by_key(|&i| match picked[i].1.lifecycle {
        Lifecycle::Close => 0,
        Lifecycle::Submit => 1,
        _ => 2,
    });
    let kept: std::collections::BTreeSet<usize> = order.into_iter().take(MAX_FOUND).collect();
    let mut left_out: Vec<String> = Vec::new();
    let mut gate_left_out = false;
    let picked: Vec<(&IssueCommand, FoundCommand, Event)> = picked
        .into_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            if kept.contains(&i) {
                Some(p)
            } else {
                gate_left_out |= matches!(p.1.lifecycle, Lifecycle::Close | Lifecycle::Submit);
                left_out.push(p.1.command.clone());
                None
            }
        })
        .collect();
    // A step that did not happen is neither looked up nor dispatched.
    if post && tool.response.as_ref().is_some_and(failed) {
        let skipped: Vec<serde_json::Value> = picked
            .iter()
            .map(|(_, f, e)| serde_json::json!({"event": e.as_str(), "id": f.id, "command": f.command}))
            .collect();
        ctx.extra.insert(
            "issue_commands_skipped".into(),
            serde_json::json!({"why": "the tool call failed", "commands": skipped}),
        );
        return Vec::new();
    }
    let mut calls: Vec<IssueCall> = picked
        .into_iter()
        .map(|(command, f, event)| IssueCall::find(command, f, event, cfg, rt))
        .collect();
    if let (false, Some(first)) = (left_out.is_empty(), calls.first_mut()) {
        // Named, a few of them: the line may hold thousands.
        let mut named: Vec<String> = left_out
            .iter()
            .take(MAX_FOUND)
            .map(|c| format!("`{c}`"))
            .collect();
        if left_out.len() > MAX_FOUND {
            named.push(format!("and {} more", left_out.len() - MAX_FOUND));
        }
        let note = format!(
            "{} more issue command(s) in this line were not gated (at most {MAX_FOUND} are): {}",
            left_out.len(),
            named.join(", ")
        );
        first.unjudged.get_or_insert_with(|| note.clone());
        // A close or submit past the cap is refused, fail_closed or not:
        // a line of other closes must not carry one through ungated.
        if gate_left_out && !post {
            first.refuse = Some(format!(
                "{note}; a close or submit among them is refused: run it in a command of its own"
            ));
        }
        first.notes.push(note);
    }
    let described = calls
        .iter()
        .map(|c| c.describe(&cfg.project_root))
        .collect();
    ctx.extra
        .insert("issue_commands".into(), serde_json::Value::Array(described));
    calls
}

impl IssueCall {
    /// Looks up the issue of `found` (its file, and the copy on the
    /// issue's branch), noting what could not be found.
    fn find(
        command: &IssueCommand,
        found: FoundCommand,
        event: Event,
        cfg: &LoadedConfig,
        rt: &tokio::runtime::Runtime,
    ) -> IssueCall {
        use ahp_oracles::workflow::issue::{
            BranchCopy, Lookup, MAX_LOOKUP_ENTRIES, find_issue_file, issue_from_branch,
        };
        let mut notes = Vec::new();
        let mut unjudged = None;
        let mut refuse = None;
        let path = match &found.id {
            None => {
                let note = format!(
                    "`{}` names no issue id ahp can read (a variable, a loop?): {event} ran without the issue",
                    found.command
                );
                unjudged = Some(note.clone());
                notes.push(note);
                None
            }
            Some(id) => {
                // A `cd` earlier in the line may have moved into a
                // workspace of its own: its issues are looked up first.
                let cwd_root = found
                    .cwd
                    .as_deref()
                    .filter(|c| {
                        !c.starts_with('/')
                            && !c.starts_with('~')
                            && !c.split('/').any(|s| s == "..")
                    })
                    .map(|c| cfg.project_root.join(c));
                let mut lookup = Lookup::Missing;
                for root in cwd_root.iter().chain(std::iter::once(&cfg.project_root)) {
                    lookup = find_issue_file(root, &command.issue_files, id);
                    if matches!(lookup, Lookup::Found(_) | Lookup::Ambiguous(_)) {
                        break;
                    }
                }
                match lookup {
                    Lookup::Found(p) => Some(p),
                    Lookup::Missing if command.issue_files.is_empty() => None,
                    Lookup::Missing => {
                        notes.push(format!(
                            "no issue file of {id} under {}: {event} ran without it",
                            command.issue_files.join(", ")
                        ));
                        None
                    }
                    Lookup::BadId => {
                        notes.push(format!(
                            "`{id}` cannot name an issue file: {event} ran without it"
                        ));
                        None
                    }
                    Lookup::Stopped => {
                        let note = format!(
                            "the issue file of {id} was not found within {MAX_LOOKUP_ENTRIES} entries: {event} ran without it"
                        );
                        unjudged = Some(note.clone());
                        notes.push(note);
                        None
                    }
                    Lookup::Ambiguous(paths) => {
                        let named: Vec<String> = paths
                            .iter()
                            .take(4)
                            .map(|p| {
                                let shown = p.strip_prefix(&cfg.project_root).unwrap_or(p);
                                format!("`{}`", shown.display())
                            })
                            .collect();
                        let note = format!(
                            "several files say they are {id} ({}): {event} ran without the issue",
                            named.join(", ")
                        );
                        // Which copy is the issue is not ahp's to guess: a
                        // close or submit waits until one is left.
                        if matches!(found.lifecycle, Lifecycle::Close | Lifecycle::Submit)
                            && event.allows(ahp_engine::Intensity::Block)
                        {
                            refuse = Some(format!(
                                "{note}; keep one file for the issue, then run the step again"
                            ));
                        }
                        unjudged = Some(note.clone());
                        notes.push(note);
                        None
                    }
                }
            }
        };
        let branch = match (&command.issue_branch, &found.id, &path) {
            (Some(glob), Some(id), Some(p)) => {
                let git = ahp_oracles::workflow::git::Git::new(&cfg.project_root);
                match rt.block_on(issue_from_branch(&git, glob, id, p)) {
                    BranchCopy::Branch(b, text) => Some((b, text)),
                    BranchCopy::WorkingTree => None,
                    BranchCopy::Ambiguous(many) => {
                        notes.push(format!(
                            "several branches match {glob} for {id} ({}) and the issue names none (isolation.ref): the working tree's copy was judged",
                            many.join(", ")
                        ));
                        None
                    }
                }
            }
            _ => None,
        };
        IssueCall {
            event,
            found,
            path,
            branch,
            notes,
            unjudged,
            refuse,
        }
    }
}

/// Whether a shell tool's response says the command failed, read where
/// each agent puts its status: Codex's first line (`Exit code: N`),
/// Gemini's last `Exit Code:` line, its cancellation, time-out and signal
/// notes, or an object's exit code or error flag. A response that says
/// none of these is a success: Claude Code reports failures as their own
/// event.
fn failed(response: &serde_json::Value) -> bool {
    use serde_json::Value;
    let number_after = |l: &str, prefix: &str| {
        l.trim()
            .strip_prefix(prefix)
            .and_then(|n| n.trim().parse::<i64>().ok())
    };
    let text_says = |t: &str| {
        if let Some(first) = t.lines().next()
            && first.trim().starts_with("Exit code:")
        {
            return number_after(first, "Exit code:").is_some_and(|n| n != 0);
        }
        if t.starts_with("Command was cancelled")
            || t.contains("Command was automatically cancelled")
        {
            return true;
        }
        let tail: Vec<&str> = t.lines().rev().take(8).collect();
        if tail.iter().any(|l| number_after(l, "Signal:").is_some()) {
            return true;
        }
        t.lines()
            .rev()
            .find_map(|l| number_after(l, "Exit Code:"))
            .is_some_and(|n| n != 0)
    };
    match response {
        Value::String(t) => text_says(t),
        Value::Object(m) => {
            let code = ["exit_code", "exitCode", "returncode"]
                .iter()
                .find_map(|k| m.get(*k)?.as_i64());
            if let Some(code) = code {
                return code != 0;
            }
            let flag = ["is_error", "isError", "interrupted", "success"]
                .iter()
                .any(|k| match (k, m.get(*k)) {
                    (&"success", Some(Value::Bool(b))) => !b,
                    (_, Some(Value::Bool(b))) => *b,
                    _ => false,
                });
            let error = m
                .get("error")
                .is_some_and(|e| !e.is_null() && e != "" && e != &Value::Bool(false));
            flag || error
                || ["llmContent", "output"]
                    .iter()
                    .filter_map(|k| m.get(*k)?.as_str())
                    .any(text_says)
        }
        _ => false,
    }
}

/// Adds an issue event's verdict to the tool call's: its signals and
/// diagnostics, and the stronger outcome, so that the agent's answer says
/// both (a closed issue's block denies the command).
pub(crate) fn fold_in(verdict: &mut Verdict, issue: Verdict) {
    verdict.outcome = verdict.outcome.max(issue.outcome);
    verdict.signals.extend(issue.signals);
    verdict.shadow.extend(issue.shadow);
    verdict.diagnostics.extend(issue.diagnostics);
}

/// Records `d`; a log that cannot take it is said on stderr, and does not
/// decide the verdict.
fn record(sink: &dyn SignalSink, d: &Diagnostic) {
    if let Err(e) = sink.record_diagnostic(d) {
        eprintln!("warning: {}", terminal_safe(&e.to_string()));
    }
}

/// Starts the background run of `verdict`'s async entries, if it has any.
fn start_detached(event: Event, verdict: &Verdict, root: &Path, log: Option<&Path>) {
    if verdict
        .entries
        .iter()
        .any(|e| e.status == EntryStatus::Detached)
        && let Err(e) = spawn_async_only(event, &verdict.context, root, log)
    {
        eprintln!(
            "warning: async entries were not started: {}",
            terminal_safe(&format!("{e:#}"))
        );
    }
}

/// Fills in what the caller did not give: the issue file (`--issue`, or
/// `issue.path` of the context) as `issue` and `checklist`, and for issue
/// events the changed files and commits from git.
/// `work`, given up at the call's `deadline` (the git it runs is killed
/// with it): reading an issue's changes is part of the answer the agent
/// waits for (`settings.agent_timeout`).
async fn within(deadline: Option<Instant>, work: impl Future<Output = Result<()>>) -> Result<()> {
    match deadline {
        Some(d) => tokio::time::timeout_at(tokio::time::Instant::from_std(d), work)
            .await
            .unwrap_or_else(|_| {
                Err(anyhow!(
                    "reading the issue and its changes was stopped at the call's deadline (settings.agent_timeout): the agent would have stopped waiting"
                ))
            }),
        None => work.await,
    }
}

pub(crate) async fn enrich(
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
    let trunk = cfg.trunk();
    if event.is_issue() && ctx.files.is_none() {
        let git = ahp_oracles::workflow::git::Git::new(&cfg.project_root);
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
    // The oracles that ask git themselves (FileChangeLimiter at a tool
    // call, those of an issue event whose changes could not be read)
    // measure against the context's `git.trunk`: without the trunk of the
    // settings they would fall back to main or master, and a misspelt
    // trunk would measure an empty change and pass. With it, the error is
    // theirs, and fail_closed blocks on it.
    if let Some(name) = trunk.as_deref() {
        match ctx.extra.get_mut("git") {
            None => {
                ctx.extra
                    .insert("git".into(), serde_json::json!({ "trunk": name }));
            }
            Some(serde_json::Value::Object(git)) => {
                git.entry("trunk").or_insert_with(|| name.into());
            }
            Some(_) => {}
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A stop that arrives while no dispatch runs (between the tool
    /// event's and an issue event's) stops the next one at once, rather
    /// than being swallowed by a handler nobody polls.
    #[test]
    fn a_stop_between_two_dispatches_stops_the_next() {
        let rt = crate::ops::policy::runtime().unwrap();
        let mut stop = Stop::listen(&rt, true);
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let stopped = rt.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                stop.until(std::future::pending::<()>()),
            )
            .await
        });
        let err = stopped.expect("the stop was lost").unwrap_err();
        assert!(err.to_string().contains("stopped (SIGTERM)"), "{err}");
    }
}

/// A note of the dispatch for the log (and the verdict): not tied to a
/// file or line.
fn note(
    level: Level,
    source: &str,
    event: Option<Event>,
    correlation_id: Option<String>,
    message: String,
) -> Diagnostic {
    Diagnostic {
        id: ahp_engine::Uuid::new_v4(),
        level,
        timestamp: chrono::Utc::now(),
        source: source.into(),
        event,
        correlation_id,
        message,
        file: None,
        line: None,
    }
}
