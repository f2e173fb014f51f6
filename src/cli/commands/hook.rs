//! `ahp hook AGENT`: one agent hook call, end to end.
//!
//! Reads the agent's JSON on stdin, maps it with the agent's adapter
//! ([`crate::adapters`]), dispatches like `ahp run`, applies the stop-loop
//! guard, and answers in the agent's protocol. Errors inside ahp fail open
//! (exit 0, a message on stderr, an `error` record in the log) unless
//! `fail_closed` is on (`settings.fail_closed: true` in any layer, or
//! `AHP_FAIL_CLOSED`; see [`ahp_config::fail_closed`]), which turns them
//! into a block: an agent must never be stopped by a bug of ahp it did not
//! ask to be stopped by, and never let through silently either.

use crate::adapters::{self, Agent, Decision, Inbound, PromptFallback, Reply, caps, render};
use crate::ops::dispatch::{DispatchRequest, dispatch};
use crate::ops::input::{parse_json, read_limited};
use crate::ops::output::terminal_safe;
use crate::ops::policy::BrokenPolicy;
use crate::ops::respond::LogAt;
use ahp_config::{ConfigErrors, FailClosed, LoadOptions};
use ahp_engine::{Diagnostic, Event, Level, Outcome, Registry, Verdict};
use ahp_signals_log::{Record, Release, SignalLog, read_all};
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Arguments of `ahp hook`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The agent whose protocol stdin and stdout speak.
    #[arg(value_enum)]
    pub agent: Agent,
    /// The agent's event name, for hooks whose input does not carry it
    /// (Copilot's camelCase hooks; `ahp install` passes it).
    #[arg(long, value_name = "NAME")]
    pub event: Option<String>,
    /// Project root (default: the agent's project directory — CLAUDE_PROJECT_DIR,
    /// GEMINI_PROJECT_DIR — else found from the payload's cwd: the repository root, or a folder
    /// in it with a hooks file in .ahp/; outside a repository, the nearest ancestor with .ahp/).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Append records to PATH instead of <project>/.ahp/signals.jsonl.
    #[arg(long, value_name = "PATH", conflicts_with = "no_log")]
    pub log: Option<PathBuf>,
    /// Do not write the signal log (the stop-loop guard then has nothing to count).
    #[arg(long)]
    pub no_log: bool,
}

/// What is known so far, for the error path.
#[derive(Default)]
struct Known {
    inbound: Option<Inbound>,
    root: Option<PathBuf>,
    /// Decided by the loaded policy (`Some(None)`: fail open); `None` when
    /// it did not load, and the layer files decide.
    fail_closed: Option<Option<FailClosed>>,
}

/// Runs one hook call and returns the exit code for the agent.
pub(crate) fn run(args: HookArgs, registry: &Registry) -> Result<u8> {
    // The agent's clock for its own timeout started before ours.
    let started = std::time::Instant::now();
    let mut known = Known::default();
    let reply = match answer(&args, registry, started, &mut known) {
        Ok(reply) => reply,
        Err(e) => fail(&args, &known, &e),
    };
    let mut out = std::io::stdout().lock();
    if let Some(s) = &reply.stdout {
        writeln!(out, "{s}").context("cannot write the answer to stdout")?;
        out.flush().context("cannot write the answer to stdout")?;
    }
    if let Some(s) = &reply.stderr {
        eprintln!("{}", terminal_safe(s));
    }
    Ok(reply.exit)
}

fn answer(
    args: &HookArgs,
    registry: &Registry,
    started: std::time::Instant,
    known: &mut Known,
) -> Result<Reply> {
    let input = format!("{} hook input <stdin>", args.agent);
    if std::io::stdin().is_terminal() {
        anyhow::bail!(
            "`ahp hook {agent}` reads the agent's JSON on stdin; pipe a payload, e.g. \
             `ahp hook {agent} < tests/fixtures/agents/{agent}/...json`, or install it with \
             `ahp install {agent}`",
            agent = args.agent
        );
    }
    let bytes = read_limited(std::io::stdin().lock(), &input)?;
    let value = parse_json(&bytes, &input)?;
    let mut inbound = adapters::parse(args.agent, &value, args.event.as_deref())?;
    let root = project_root(args, Some(&inbound))?;
    crate::ops::input::place_tool_call(&mut inbound.context, &root);
    known.root = Some(root);
    known.inbound = Some(inbound.clone());
    let Some(event) = inbound.event else {
        tracing::debug!(
            "[HOOK DEBUG] {} event `{}` is not one ahp decides on",
            args.agent,
            inbound.native_event
        );
        return Ok(Reply::silent());
    };
    let done = dispatch(DispatchRequest {
        event,
        ctx: inbound.context.clone(),
        issue: None,
        project: known.root.clone(),
        log: args.log.clone(),
        no_log: args.no_log,
        async_only: false,
        registry,
        agent_waits_since: Some(started),
    })?
    .context("the dispatch gave no verdict")?;
    // Checked when the policy was compiled; defaults cannot be reached.
    let settings = done.cfg.hook_settings_checked().0;
    known.fail_closed = Some(done.cfg.fail_closed().cloned());
    let verdict = &done.verdict;
    for d in &verdict.diagnostics {
        let line = format!("ahp: {}: [{}] {}", d.level.as_str(), d.source, d.message);
        eprintln!("{}", terminal_safe(&line));
    }
    let (prompt, rewrite) = adapters::fallbacks(&settings, &inbound, event);
    let mut decision = Decision::from_verdict(
        verdict,
        caps(args.agent, &inbound.native_event, event, inbound.camel),
        prompt,
        rewrite,
    );
    let mut note = None;
    if let (Event::PreAgentTurnStop, Decision::Deny { reason }) = (event, &decision) {
        let count = match (inbound.session(), done.log_path.as_deref()) {
            (Some(session), Some(path)) => StopGuard {
                log: LogAt {
                    path,
                    options: &done.log_options,
                },
                session,
                cap: settings.stop_block_cap,
                prompt_denies: prompt == PromptFallback::Deny,
            }
            .check(verdict, reason)?,
            _ => StopCount::Uncounted,
        };
        let already_continuing = inbound.stop_hook_active();
        match count {
            StopCount::Released(release) => {
                note = Some(format!(
                    "ahp let the agent stop: its stop was blocked {} times in a row \
                     (settings.stop_block_cap: {}); last reason: {}",
                    release.consecutive_blocks, release.cap, release.reason
                ));
                decision = Decision::Allow { context: None };
            }
            // Without a log to count in, the agent's own flag is the only
            // memory of the last stop: one refusal, then the stop goes
            // through, rather than a loop nothing can end.
            StopCount::Uncounted if already_continuing => {
                note = Some(format!(
                    "ahp let the agent stop: its stop was already refused once (stop_hook_active) \
                     and without a signal log ahp cannot count refusals up to \
                     settings.stop_block_cap; last reason: {}",
                    adapters::cut(reason)
                ));
                decision = Decision::Allow { context: None };
            }
            StopCount::Uncounted | StopCount::Counted => {}
        }
    }
    Ok(render(&inbound, &decision, note.as_deref()))
}

/// The project of the call: `--project`, else the agent's project
/// variable, else the project root ([`ahp_config::find_project_root`]) of
/// the payload's cwd (or of ours).
fn project_root(args: &HookArgs, inbound: Option<&Inbound>) -> Result<PathBuf> {
    // A folder named that is not there (a typo in the hook command) would
    // leave the project's policy out: said, and the project found as if
    // none was named, so the call is still judged.
    let there = |dir: PathBuf, from: &str| {
        if dir.is_dir() {
            return Some(dir);
        }
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&format!(
                "the project folder {} ({from}) does not exist; the project is found from the call's folder instead",
                ahp_config::path_line(&dir)
            ))
        );
        None
    };
    if let Some(p) = args.project.clone().and_then(|p| there(p, "--project")) {
        return Ok(p);
    }
    let var = match args.agent {
        Agent::ClaudeCode => Some("CLAUDE_PROJECT_DIR"),
        Agent::Gemini => Some("GEMINI_PROJECT_DIR"),
        Agent::Droid => Some("FACTORY_PROJECT_DIR"),
        Agent::Copilot => Some("COPILOT_PROJECT_DIR"),
        _ => None,
    };
    if let Some(name) = var
        && let Some(dir) = std::env::var_os(name).filter(|d| !d.is_empty())
        && let Some(dir) = there(PathBuf::from(dir), name)
    {
        return Ok(dir);
    }
    // Windsurf and ahp's OpenCode plugin start the hook in the project
    // and send the directory a command runs in, which the model picks.
    let from_payload = !matches!(args.agent, Agent::Windsurf | Agent::OpenCode);
    let start = match inbound.and_then(Inbound::cwd) {
        Some(cwd) if from_payload && Path::new(cwd).is_dir() => PathBuf::from(cwd),
        _ => std::env::current_dir().context("cannot determine the current directory")?,
    };
    Ok(ahp_config::find_project_root(&start).unwrap_or(start))
}

/// What the stop-loop guard made of a refused stop.
enum StopCount {
    /// The cap is reached: the stop goes through (recorded in the log).
    Released(Release),
    /// Counted, below the cap.
    Counted,
    /// The log does not hold this very run (no log, or it cannot be
    /// written), so refusals cannot be counted.
    Uncounted,
}

/// The stop-loop guard: how many times in a row this session's stops were
/// refused, read from the log's `run` records.
struct StopGuard<'a> {
    log: LogAt<'a>,
    session: &'a str,
    cap: u32,
    /// `prompt_fallback: deny`: a prompt at a stop was delivered as a
    /// refusal (no agent can ask at a stop), so it counts.
    prompt_denies: bool,
}

impl StopGuard<'_> {
    /// Counts the session's refused stops in a row before this one: a stop
    /// that was let through, a release, or a new user turn (a
    /// `pre-agent-turn` run) ends a streak, so a policy that keeps blocking
    /// turn after turn is not mistaken for one loop. At `cap`, records the
    /// release and returns it.
    fn check(&self, verdict: &Verdict, reason: &str) -> Result<StopCount> {
        let mut in_a_row: u32 = 0;
        let mut this_run_recorded = false;
        // The session's stop prompts (logged before their run): a control
        // beside one was refused like the prompt alone.
        let mut stop_prompts = std::collections::HashSet::new();
        // What refused stops said (`[source] summary`, as the agent got
        // it): an agent that continues by sending it back as the next
        // prompt (Gemini CLI) starts no new user turn.
        let mut stop_reasons: Vec<String> = Vec::new();
        let mut reader = match read_all(self.log.path) {
            Ok(r) => r,
            // No log: this run was not recorded either.
            Err(_) if !self.log.path.exists() => return Ok(StopCount::Uncounted),
            Err(e) => return Err(e.into()),
        };
        for record in reader.by_ref() {
            let Ok(record) = record else { continue };
            match record {
                Record::Signal(s) if s.context.hook == Some(Event::PreAgentTurnStop) => {
                    if self.prompt_denies && s.intensity() == ahp_engine::Intensity::Prompt {
                        stop_prompts.insert(s.header.id);
                    }
                    if s.intensity() >= ahp_engine::Intensity::Prompt && stop_reasons.len() < 64 {
                        stop_reasons.push(format!("[{}] {}", s.header.source, s.payload.summary()));
                    }
                }
                Record::Run(r) if r.session_id.as_deref() == Some(self.session) => {
                    if r.correlation_id == verdict.correlation_id {
                        this_run_recorded = true;
                    }
                    let continuation = || {
                        r.context["turn"]["prompt"].as_str().is_some_and(|p| {
                            stop_reasons
                                .iter()
                                .any(|s| p.trim_start().starts_with(s.as_str()))
                        })
                    };
                    if r.event == Event::PreAgentTurn && !continuation() {
                        in_a_row = 0;
                    } else if r.event == Event::PreAgentTurnStop
                        && r.correlation_id != verdict.correlation_id
                    {
                        let refused = r.outcome == Outcome::Block
                            || (self.prompt_denies && r.outcome == Outcome::Prompt)
                            || (r.outcome == Outcome::Control
                                && r.signal_ids.iter().any(|id| stop_prompts.contains(id)));
                        in_a_row = if refused {
                            in_a_row.saturating_add(1)
                        } else {
                            0
                        };
                    }
                }
                Record::Release(r) if r.session_id == self.session => in_a_row = 0,
                _ => {}
            }
        }
        // A damaged old segment (a repository can commit one) leaves its
        // records out of the count, not the stop gate out of the call.
        crate::ops::logs::warn_counted_without("the stop-loop guard", reader.unreadable());
        if !this_run_recorded {
            return Ok(StopCount::Uncounted);
        }
        if in_a_row < self.cap {
            return Ok(StopCount::Counted);
        }
        let release = Release {
            id: ahp_engine::Uuid::new_v4(),
            timestamp: chrono::Utc::now(),
            session_id: self.session.to_string(),
            event: Event::PreAgentTurnStop,
            consecutive_blocks: in_a_row,
            cap: self.cap,
            correlation_id: Some(verdict.correlation_id.clone()),
            reason: adapters::cut(reason),
        };
        SignalLog::open_with(self.log.path, self.log.options.clone())
            .and_then(|l| l.append(&Record::Release(release.clone())))
            .context("cannot record the stop-loop release")?;
        Ok(StopCount::Released(release))
    }
}

/// The answer when ahp itself failed: open by default, closed when
/// `fail_closed` is on. Either way the failure is on stderr and in the log.
fn fail(args: &HookArgs, known: &Known, e: &anyhow::Error) -> Reply {
    let broken = e.downcast_ref::<BrokenPolicy>();
    // Each config error without its own `error: `: the line says it once.
    let plain = |ce: &ConfigErrors| {
        ce.0.iter()
            .map(|e| e.to_string().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let message = match (e.downcast_ref::<ConfigErrors>(), broken) {
        (Some(ce), _) => plain(ce),
        (_, Some(b)) => plain(&b.errors),
        _ => format!("{e:#}"),
    };
    // The error may quote the input (a payload that did not parse); it
    // reaches the agent as a reason, so it is masked like the log.
    let message = ahp_engine::secrets::mask(&message).into_owned();
    let root = known
        .root
        .clone()
        .or_else(|| project_root(args, known.inbound.as_ref()).ok());
    let event = known.inbound.as_ref().and_then(|i| i.event);
    // Events that only observe (post-tool-use, post-session, …) cannot be
    // blocked: failing closed there would end the whole session.
    let closed = if event.is_none_or(|e| e.allows(ahp_engine::Intensity::Block)) {
        match (&known.fail_closed, broken) {
            (_, Some(b)) => Some(b.fail_closed.clone()),
            (Some(decided), _) => decided.clone(),
            (None, None) => fail_closed_from_files(root.as_deref()),
        }
    } else {
        None
    };
    let mut stderr = format!("ahp: error: {message}");
    if !args.no_log {
        let path = match (&args.log, &root) {
            (Some(p), _) => Ok(Some(p.clone())),
            (None, Some(r)) => crate::ops::policy::project_log_path(r).map(Some),
            (None, None) => Err(anyhow::anyhow!(
                "no project directory to keep the log in (is the working directory gone?)"
            )),
        };
        let path = path.unwrap_or_else(|e| {
            stderr.push_str(&format!("\nahp: the error was not recorded: {e:#}"));
            None
        });
        let recorded = path.map(|p| {
            SignalLog::open(&p).and_then(|log| {
                log.append(&Record::diagnostic(Diagnostic {
                    id: ahp_engine::Uuid::new_v4(),
                    level: Level::Error,
                    timestamp: chrono::Utc::now(),
                    source: "ahp".into(),
                    event,
                    correlation_id: None,
                    message: format!("ahp hook {}: {message}", args.agent),
                    file: None,
                    line: None,
                }))
            })
        });
        if let Some(Err(le)) = recorded {
            stderr.push_str(&format!("\nahp: the error was not recorded: {le}"));
        }
    }
    let Some(why) = closed else {
        stderr
            .push_str("\nahp: failing open (settings.fail_closed: true blocks on errors instead)");
        return Reply {
            exit: 0,
            stdout: None,
            stderr: Some(stderr),
        };
    };
    // A stop the agent already continued from once (`stop_hook_active`)
    // is let through: an error of ahp that repeats on every stop would
    // otherwise hold the agent in a loop nothing can end.
    if let Some(inbound) = known
        .inbound
        .as_ref()
        .filter(|i| i.event == Some(Event::PreAgentTurnStop) && i.stop_hook_active())
    {
        let note = format!(
            "ahp let the agent stop: its stop was already refused once (stop_hook_active), \
             and ahp failed ({why}): {message}"
        );
        let mut reply = render(inbound, &Decision::Allow { context: None }, Some(&note));
        reply.stderr = Some(format!("{stderr}\nahp: {note}"));
        return reply;
    }
    let reason = format!("ahp failed and {why}, so this is blocked: {message}");
    // Nothing readable came in, but `--event` names the protocol (Copilot's
    // camelCase hooks, which ignore an exit code): answer in it.
    let named = known.inbound.is_none().then(|| event_named(args)).flatten();
    let deny = Decision::Deny {
        reason: reason.clone(),
    };
    let mut reply = match known
        .inbound
        .as_ref()
        .filter(|i| i.event.is_some())
        .or(named.as_ref())
    {
        Some(inbound) => {
            let mut reply = render(inbound, &deny, None);
            if named.is_some() {
                also_for_vs_code(&mut reply, inbound, &reason);
            }
            reply
        }
        // Nothing readable came in: exit 2 is the block every agent knows.
        None => Reply::exit2(&reason),
    };
    reply.stderr = Some(match reply.stderr {
        Some(s) => format!("{stderr}\n{s}"),
        None => stderr,
    });
    reply
}

/// A refusal in Copilot CLI's camelCase words, for a payload that could
/// not be read, also in the words VS Code reads: it runs the same
/// `.github/hooks` files (`--event preToolUse`) and reads only
/// `hookSpecificOutput`. Each ignores the other's keys.
fn also_for_vs_code(reply: &mut Reply, inbound: &Inbound, reason: &str) {
    if inbound.agent != Agent::Copilot || !inbound.camel || inbound.event != Some(Event::PreToolUse)
    {
        return;
    }
    let Some(mut answer) = reply
        .stdout
        .as_deref()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .filter(serde_json::Value::is_object)
    else {
        return;
    };
    answer["hookSpecificOutput"] = serde_json::json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": adapters::cut(reason),
    });
    reply.stdout = Some(answer.to_string());
}

/// The call as `--event` names it, when the payload could not be read.
fn event_named(args: &HookArgs) -> Option<Inbound> {
    let native = args.event.clone()?;
    let event = args.agent.map_event(&native).ok().flatten()?;
    Some(Inbound {
        agent: args.agent,
        camel: native.starts_with(|c: char| c.is_ascii_lowercase()),
        native_event: native,
        event: Some(event),
        context: Default::default(),
    })
}

/// `fail_closed` when the policy could not be loaded: from the layer
/// files, each parsed on its own (see [`ahp_config::fail_closed`]), so
/// that a broken project file neither hides the user's `true` nor undoes
/// it, and a user layer that cannot be read fails closed.
fn fail_closed_from_files(root: Option<&Path>) -> Option<FailClosed> {
    // Without a project (the working directory was deleted), the user's
    // and the managed layers still decide; a project layer read at `/`
    // could only switch it on.
    let project = root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    match LoadOptions::from_env(Some(project)) {
        Ok(opts) => ahp_config::fail_closed_from_layers(&opts),
        Err(_) => ahp_config::fail_closed_env().then_some(FailClosed::Env),
    }
}
