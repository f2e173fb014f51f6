//! Escalation: a finding that keeps coming back (or keeps being dismissed)
//! is raised one intensity step per threshold crossed, using the history of
//! earlier dispatches (the signal log, through the [`History`] trait).
//!
//! The exact mapping, for a rule with `after_firings: N`: let `k` be the
//! number of earlier signals from the rule's source in the rule's scope
//! within the window (and, with `reset_on_clean_run`, after the last clean
//! run). The current signal is raised `k / N` steps (integer division) along
//! its ladder: aid → prompt → control → block for a signal that carries a
//! modification, aid → prompt → block for one that does not. A control
//! without a modification would let the call through unchanged, weaker
//! than the prompt it replaced, so such a signal skips that rung. So with
//! `N = 1` a prompt's 1st firing is a prompt and the 2nd a block; a
//! control's 1st firing is a control (its modification applied) and the 2nd
//! a block; with `N = 2` the 3rd and 4th are one step higher. The same
//! holds for `after_dismissed: M` with `k` = earlier prompts of the source
//! that were answered `dismiss`; when both are given the larger raise wins.
//! The result is never above block and never above what the event allows
//! (the strongest allowed intensity between the current and the target; if
//! none, the signal stays as it is).

use crate::{Event, Intensity, Signal};
use chrono::{DateTime, Utc};
use std::time::Duration;

crate::name_enum! {
    /// What an escalation rule counts over.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ScopeKind {
        /// The issue being worked on (`issue.id` of the context).
        Issue => "issue",
        /// The agent session (`session_id` of the context).
        Session => "session",
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

/// The rungs a signal climbs: control only for a signal that has a
/// modification to apply.
fn ladder(can_control: bool) -> impl Iterator<Item = Intensity> + Clone {
    Intensity::ALL
        .into_iter()
        .filter(move |i| can_control || *i != Intensity::Control)
}

fn step_up(i: Intensity, steps: usize, can_control: bool) -> Intensity {
    // A bare control (none of its own modifications) climbs from the rung
    // below it, so its first step is block.
    let below = ladder(can_control).take_while(|x| *x <= i).count();
    let rungs: Vec<Intensity> = ladder(can_control).collect();
    let pos = below.saturating_sub(1);
    if below == 0 {
        return i;
    }
    rungs[(pos + steps).min(rungs.len() - 1)].max(i)
}

/// Whether `signal` carries a modification a control would apply.
pub fn has_modification(signal: &Signal) -> bool {
    matches!(&signal.payload, crate::Payload::Control(c) if !c.modifications.is_empty())
}

impl EscalationRule {
    /// How many steps this rule raises a signal of its source in `scope`
    /// at `now`, given `history`.
    pub fn steps(&self, history: &dyn History, scope: &Scope, now: DateTime<Utc>) -> usize {
        let mut since = chrono::Duration::from_std(self.window)
            .ok()
            .and_then(|w| now.checked_sub_signed(w))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        if self.reset_on_clean_run
            && let Some(clean) = history.last_clean_run(&self.source, scope)
        {
            since = since.max(clean);
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

/// The intensity `from` raised by `steps` along the ladder (with control
/// only when `can_control`: the signal has a modification to apply),
/// limited to what `event` allows: the strongest allowed intensity above
/// `from` and at most the target, or `from` when there is none.
///
/// ```
/// use ahp_engine::{escalation::raise, Event, Intensity};
/// // A prompt has nothing to modify: its next rung is block.
/// assert_eq!(raise(Event::PreToolUse, Intensity::Prompt, 1, false), Intensity::Block);
/// assert_eq!(raise(Event::PreToolUse, Intensity::Aid, 1, false), Intensity::Prompt);
/// assert_eq!(raise(Event::PreToolUse, Intensity::Control, 1, true), Intensity::Block);
/// assert_eq!(raise(Event::PreToolUse, Intensity::Prompt, 5, false), Intensity::Block);
/// assert_eq!(raise(Event::PostToolUse, Intensity::Aid, 3, false), Intensity::Aid);
/// ```
pub fn raise(event: Event, from: Intensity, steps: usize, can_control: bool) -> Intensity {
    let target = step_up(from, steps, can_control);
    Intensity::ALL
        .iter()
        .copied()
        .filter(|i| {
            *i > from
                && *i <= target
                && event.allows(*i)
                && (can_control || *i != Intensity::Control)
        })
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
    let can_control = has_modification(&signal);
    let mut best: Option<(Intensity, &EscalationRule)> = None;
    for rule in rules.iter().filter(|r| r.source == signal.header.source) {
        let Some(scope) = scope_of(rule.scope, signal.context.issue_id.as_deref(), session) else {
            continue;
        };
        let to = raise(event, from, rule.steps(history, &scope, now), can_control);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Along every ladder (every event, every starting intensity, with and
    /// without a modification), more earlier firings never give a weaker
    /// signal, never a weaker one than the start, never a control without
    /// a modification to apply, and only intensities the event allows.
    #[test]
    fn escalation_never_weakens_along_any_ladder() {
        for &event in Event::ALL {
            for from in Intensity::ALL {
                for can_control in [false, true] {
                    let mut last = from;
                    for steps in 0..8 {
                        let to = raise(event, from, steps, can_control);
                        assert!(
                            to >= last,
                            "{event} {from} {steps} {can_control}: {to} < {last}"
                        );
                        assert!(to >= from);
                        if to != from {
                            assert!(event.allows(to), "{event} {from} → {to}");
                            assert!(
                                can_control || to != Intensity::Control,
                                "{event} {from} → bare control"
                            );
                        }
                        last = to;
                    }
                }
            }
        }
    }

    #[test]
    fn a_signal_without_a_modification_skips_control() {
        let e = Event::PreToolUse;
        assert_eq!(raise(e, Intensity::Prompt, 0, false), Intensity::Prompt);
        assert_eq!(raise(e, Intensity::Prompt, 1, false), Intensity::Block);
        assert_eq!(raise(e, Intensity::Aid, 1, false), Intensity::Prompt);
        assert_eq!(raise(e, Intensity::Aid, 2, false), Intensity::Block);
        assert_eq!(raise(e, Intensity::Control, 1, false), Intensity::Block);
        assert_eq!(raise(e, Intensity::Prompt, 1, true), Intensity::Control);
        // pre-issue-start has no prompt: an aid's next allowed rung is block.
        assert_eq!(
            raise(Event::PreIssueStart, Intensity::Aid, 2, false),
            Intensity::Block
        );
    }
}
