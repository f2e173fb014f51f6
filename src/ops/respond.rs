//! Answers to signals: `ahp respond`, `ahp run --respond ACTION`, the
//! interactive prompt of `ahp run` on a terminal, and the history that
//! escalation rules read from the log.

use crate::ops::output::terminal_safe;
use ahp_engine::{
    Action, History, HookContext, Intensity, Policy, Scope, ScopeKind, Signal, SignalResponse,
    Verdict,
};
use ahp_signals_log::history::LogHistory;
use ahp_signals_log::{LogOptions, Record, SignalLog};
use anyhow::{Context, Result, anyhow};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// The history for the policy's escalation rules, read from the log in one
/// pass — only when the policy has rules and the context names a scope.
pub(crate) fn history_for(
    policy: &Policy,
    ctx: &HookContext,
    log: &Path,
) -> Result<Option<Arc<dyn History>>> {
    let rules = policy.escalation();
    if rules.is_empty() {
        return Ok(None);
    }
    let issue = ctx
        .lookup("issue.id")
        .and_then(|v| v.as_str().map(str::to_string));
    let mut scopes = Vec::new();
    if rules.iter().any(|r| r.scope == ScopeKind::Issue) {
        scopes.extend(issue.map(Scope::Issue));
    }
    if rules.iter().any(|r| r.scope == ScopeKind::Session) {
        scopes.extend(ctx.session_id.clone().map(Scope::Session));
    }
    if scopes.is_empty() {
        return Ok(None);
    }
    let longest = rules.iter().map(|r| r.window).max().unwrap_or_default();
    let since = chrono::Duration::from_std(longest)
        .ok()
        .and_then(|w| chrono::Utc::now().checked_sub_signed(w))
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    let history = LogHistory::load(log, &scopes, since).with_context(|| {
        format!(
            "cannot read the signal log {} for escalation",
            ahp_config::path_line(log)
        )
    })?;
    crate::ops::logs::warn_counted_without("escalation", history.unreadable());
    Ok(Some(Arc::new(history)))
}

fn valid(intensity: Intensity) -> String {
    Action::for_intensity(intensity)
        .map(Action::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses the ACTION of `--respond`: it must answer prompts.
pub(crate) fn prompt_action(text: &str) -> Result<Action> {
    let action: Action = text.parse().map_err(|e: String| anyhow!(e))?;
    if action.intensity() != Intensity::Prompt {
        return Err(anyhow!(
            "--respond answers prompt signals, but `{}` answers {} signals; valid actions: {}",
            action.as_str(),
            action.intensity(),
            valid(Intensity::Prompt)
        ));
    }
    Ok(action)
}

/// The signal log responses go to, opened with the policy's log settings
/// (masking, rotation), as the hook call that wrote the signal opened it.
#[derive(Clone, Copy)]
pub(crate) struct LogAt<'a> {
    pub path: &'a Path,
    pub options: &'a LogOptions,
}

/// Records the answers of a run. The answer stands whether or not it could
/// be recorded (the run itself warned when its log would not open), so a
/// failure is a warning, not a failed run.
fn record(log: Option<LogAt<'_>>, responses: &[SignalResponse]) {
    let Some(at) = log else { return };
    let written = SignalLog::open_with(at.path, at.options.clone()).and_then(|log| {
        responses
            .iter()
            .try_for_each(|r| log.append(&Record::Response(r.clone())))
    });
    if let Err(e) = written {
        eprintln!(
            "{}",
            terminal_safe(&format!("warning: the answer was not recorded: {e}"))
        );
    }
}

fn prompts(verdict: &Verdict) -> impl Iterator<Item = &Signal> {
    verdict
        .signals
        .iter()
        .filter(|s| s.intensity() == Intensity::Prompt)
}

/// Applies `action` to every prompt signal of the verdict and records the
/// responses. Returns how many were answered.
pub(crate) fn respond_all(
    verdict: &Verdict,
    action: Action,
    log: Option<LogAt<'_>>,
) -> Result<usize> {
    let responses = prompts(verdict)
        .map(|s| SignalResponse::new(s, action, None))
        .collect::<Result<Vec<_>, _>>()?;
    record(log, &responses);
    Ok(responses.len())
}

/// True when a person can be asked: stdin and stderr are terminals. Agents
/// pipe JSON into stdin, so they are never asked.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks about each prompt signal on stderr and records the answers.
pub(crate) fn ask(verdict: &Verdict, log: Option<LogAt<'_>>) -> Result<()> {
    let mut responses = Vec::new();
    let stdin = std::io::stdin();
    let mut err = std::io::stderr().lock();
    for s in prompts(verdict) {
        let action = loop {
            write!(
                err,
                "{}\n[a]cknowledge / [s] apply suggestion / [d]ismiss? ",
                terminal_safe(&format!(
                    "prompt from {}: {}",
                    s.header.source,
                    s.payload.summary()
                ))
            )?;
            err.flush()?;
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 {
                return Err(anyhow!("no answer (end of input)"));
            }
            match line.trim() {
                "a" | "acknowledge" => break Action::Acknowledge,
                "s" | "apply_suggestion" => break Action::ApplySuggestion,
                "d" | "dismiss" => break Action::Dismiss,
                _ => writeln!(err, "answer a, s or d")?,
            }
        };
        responses.push(SignalResponse::new(s, action, None)?);
    }
    record(log, &responses);
    Ok(())
}

/// `ahp respond SIGNAL_ID ACTION`: finds the signal in the log, checks the
/// action against its intensity and appends the response. Returns it.
///
/// A signal has one current answer: when the log already holds one, a new
/// answer is refused unless `amend`, and then appended after it so that
/// readers, who take a signal's latest answer, count it instead.
pub(crate) fn respond(
    log: LogAt<'_>,
    signal_id: &str,
    action: &str,
    details: Option<&str>,
    amend: bool,
) -> Result<SignalResponse> {
    let action: Action = action.parse().map_err(|e: String| anyhow!(e))?;
    let details = details
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .context("--details is not valid JSON")?;
    let wanted = signal_id.trim();
    let mut found = None;
    let mut answered: Option<SignalResponse> = None;
    for record in ahp_signals_log::read_all(log.path).with_context(|| {
        format!(
            "cannot read the signal log {}",
            ahp_config::path_line(log.path)
        )
    })? {
        match record? {
            Record::Signal(s) if s.header.id.to_string() == wanted => {
                found = Some((s.header.id, s.intensity()));
            }
            Record::Response(r) if r.signal_id.to_string() == wanted => answered = Some(r),
            _ => {}
        }
    }
    let Some((id, intensity)) = found else {
        return Err(anyhow!(
            "no signal with id {wanted} in {}",
            ahp_config::path_line(log.path)
        ));
    };
    let response = SignalResponse::for_intensity(id, intensity, action, details)?;
    if let (Some(current), false) = (&answered, amend) {
        return Err(anyhow!(
            "signal {id} is already answered `{}` (at {}); a signal has one answer: \
             pass --amend to replace it with `{}`",
            current.action.as_str(),
            current
                .consumed_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            action.as_str()
        ));
    }
    SignalLog::open_with(log.path, log.options.clone())?
        .append(&Record::Response(response.clone()))?;
    Ok(response)
}
