//! Escalation: a finding that keeps coming back (or keeps being dismissed)
//! is raised one intensity step per threshold crossed, using the history of
//! earlier dispatches (the signal log, through the [`History`] trait).
//!
//! The exact mapping, for a rule with `after_firings: N`: let `k` be the
//! number of earlier signals from the rule's source in the rule's scope
//! within the window (and, with `reset_on_clean_run`, after the last clean
//! run). The current signal is raised `k / N` steps (integer division) along
//! aid → prompt → control → block. So with `N = 1` the 1st firing is as
//! configured, the 2nd one step higher, the 3rd two steps higher; with
//! `N = 2` the 3rd and 4th are one step higher and the 5th two. The same
//! holds for `after_dismissed: M` with `k` = earlier prompts of the source
//! that were answered `dismiss`; when both are given the larger raise wins.
//! The result is never above block and never above what the event allows
//! (the strongest allowed intensity between the current and the target; if
//! none, the signal stays as it is).

use crate::{Event, Intensity, Signal};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// What an escalation rule counts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// The issue being worked on (`issue.id` of the context).
    Issue,
    /// The agent session (`session_id` of the context).
    Session,
}

impl ScopeKind {
    /// `issue` or `session`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Issue => "issue",
            ScopeKind::Session => "session",
        }
    }
}

/// One issue or one session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// An issue id.
    Issue(String),
    /// A session id.
    Session(String),
}

impl Scope {
    /// The kind of scope.
    pub fn kind(&self) -> ScopeKind {
        match self {
            Scope::Issue(_) => ScopeKind::Issue,
            Scope::Session(_) => ScopeKind::Session,
        }
    }
}

/// What the engine needs to know about earlier dispatches. Implemented by
/// `ahp_signals_log::history::LogHistory` (one streaming pass over the log,
/// then answered from memory).
pub trait History: Send + Sync {
    /// Signals raised by entry `source` in `scope` at or after `since`.
    fn firings(&self, source: &str, scope: &Scope, since: DateTime<Utc>) -> usize;
    /// Prompt signals of `source` in `scope` raised at or after `since` that
    /// were answered with `dismiss`.
    fn dismissed_prompts(&self, source: &str, scope: &Scope, since: DateTime<Utc>) -> usize;
    /// The last clean run in `scope` in which `source` ran: a dispatch whose
    /// outcome was accept or aid and whose entries include `source`.
    fn last_clean_run(&self, source: &str, scope: &Scope) -> Option<DateTime<Utc>>;
}

/// A top-level `escalation:` rule of hooks.yaml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscalationRule {
    /// Recorded in the escalated signal's `header.escalation`; defaults to
    /// `<source>/<scope>`.
    pub id: String,
    /// The entry id whose signals are escalated.
    pub source: String,
    /// Count per issue or per session.
    pub scope: ScopeKind,
    /// How far back to count.
    pub window: Duration,
    /// One step per this many earlier firings.
    pub after_firings: Option<u32>,
    /// One step per this many earlier dismissed prompts.
    pub after_dismissed: Option<u32>,
    /// Count only after the last clean run of the source in the scope
    /// (default true).
    pub reset_on_clean_run: bool,
}

fn step_up(i: Intensity, steps: usize) -> Intensity {
    let pos = Intensity::ALL.iter().position(|x| *x == i).unwrap_or(0);
    Intensity::ALL[(pos + steps).min(Intensity::ALL.len() - 1)]
}

impl EscalationRule {
    /// How many steps this rule raises a signal of its source in `scope`
    /// at `now`, given `history`.
    pub fn steps(&self, history: &dyn History, scope: &Scope, now: DateTime<Utc>) -> usize {
        let mut since = chrono::Duration::from_std(self.window)
            .ok()
            .and_then(|w| now.checked_sub_signed(w))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        if self.reset_on_clean_run {
            if let Some(clean) = history.last_clean_run(&self.source, scope) {
                since = since.max(clean);
            }
        }
        let by_firings = self
            .after_firings
            .filter(|n| *n > 0)
            .map(|n| history.firings(&self.source, scope, since) / n as usize)
            .unwrap_or(0);
        let by_dismissed = self
            .after_dismissed
            .filter(|n| *n > 0)
            .map(|n| history.dismissed_prompts(&self.source, scope, since) / n as usize)
            .unwrap_or(0);
        by_firings.max(by_dismissed)
    }
}

/// The intensity `from` raised by `steps`, limited to what `event` allows:
/// the strongest allowed intensity above `from` and at most the target, or
/// `from` when there is none.
///
/// ```
/// use ahp_engine::{escalation::raise, Event, Intensity};
/// assert_eq!(raise(Event::PreToolUse, Intensity::Prompt, 1), Intensity::Control);
/// assert_eq!(raise(Event::PreToolUse, Intensity::Prompt, 5), Intensity::Block);
/// assert_eq!(raise(Event::PostToolUse, Intensity::Aid, 3), Intensity::Aid);
/// ```
pub fn raise(event: Event, from: Intensity, steps: usize) -> Intensity {
    let target = step_up(from, steps);
    Intensity::ALL
        .iter()
        .copied()
        .filter(|i| *i > from && *i <= target && event.allows(*i))
        .max()
        .unwrap_or(from)
}

/// The scope of `kind` for a signal, from its context and the session id.
pub(crate) fn scope_of(
    kind: ScopeKind,
    issue: Option<&str>,
    session: Option<&str>,
) -> Option<Scope> {
    match kind {
        ScopeKind::Issue => issue.map(|i| Scope::Issue(i.to_string())),
        ScopeKind::Session => session.map(|s| Scope::Session(s.to_string())),
    }
}

/// Applies the first rule of `rules` that raises `signal` (rules of its
/// source, in config order; the largest raise wins). Marks the signal with
/// `escalated_from` and `escalation`.
pub(crate) fn escalate(
    rules: &[EscalationRule],
    history: &dyn History,
    event: Event,
    session: Option<&str>,
    now: DateTime<Utc>,
    signal: Signal,
) -> Signal {
    let from = signal.intensity();
    let mut best: Option<(Intensity, &EscalationRule)> = None;
    for rule in rules.iter().filter(|r| r.source == signal.header.source) {
        let Some(scope) = scope_of(rule.scope, signal.context.issue_id.as_deref(), session) else {
            continue;
        };
        let to = raise(event, from, rule.steps(history, &scope, now));
        if to > best.map_or(from, |(i, _)| i) {
            best = Some((to, rule));
        }
    }
    match best {
        Some((to, rule)) => {
            let mut s = signal.convert_to(to);
            s.header.escalated_from = Some(from);
            s.header.escalation = Some(rule.id.clone());
            s
        }
        None => signal,
    }
}
