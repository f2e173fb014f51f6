//! The engine's [`History`] answered from the log: one streaming pass over
//! [`read`](crate::read), keeping only what the escalation rules ask about.

use crate::{LogError, Record};
use ahp_engine::{Action, History, Intensity, Outcome, Scope};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::Path;

/// A signal of interest, as remembered from the log.
#[derive(Debug, Clone)]
struct Seen {
    source: String,
    at: DateTime<Utc>,
    issue: Option<String>,
    session: Option<String>,
    prompt: bool,
    dismissed: bool,
}

/// A clean run: outcome accept or aid.
#[derive(Debug, Clone)]
struct Clean {
    at: DateTime<Utc>,
    issue: Option<String>,
    session: Option<String>,
    entries: Vec<String>,
}

/// What the log says about earlier dispatches in some scopes: signals by
/// source, which prompts were dismissed, and clean runs.
///
/// Signals carry their issue; their session comes from the run record of
/// their dispatch (`signal_ids`). Detached signals are not counted.
///
/// ```
/// use ahp_engine::{History, Scope, Signal};
/// use ahp_signals_log::{history::LogHistory, Record, SignalLog};
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("signals.jsonl");
/// let log = SignalLog::open(&path).unwrap();
/// let mut s = Signal::prompt("40 files changed");
/// s.header.source = "FileChangeLimiter".into();
/// s.context.issue_id = Some("7".into());
/// log.append(&Record::from(s)).unwrap();
///
/// let scope = Scope::Issue("7".into());
/// let since = chrono::Utc::now() - chrono::Duration::hours(1);
/// let h = LogHistory::load(&path, &[scope.clone()], since).unwrap();
/// assert_eq!(h.firings("FileChangeLimiter", &scope, since), 1);
/// assert_eq!(h.dismissed_prompts("FileChangeLimiter", &scope, since), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct LogHistory {
    signals: Vec<Seen>,
    clean: Vec<Clean>,
    unreadable: Vec<crate::follow::Unreadable>,
}

fn in_scope(scope: &Scope, issue: Option<&str>, session: Option<&str>) -> bool {
    match scope {
        Scope::Issue(i) => issue == Some(i.as_str()),
        Scope::Session(s) => session == Some(s.as_str()),
    }
}

impl LogHistory {
    /// Reads the log at `path` once, keeping signals raised at or after
    /// `since` and clean runs in any of `scopes`. A missing log is an empty
    /// history; torn lines are skipped.
    pub fn load(path: &Path, scopes: &[Scope], since: DateTime<Utc>) -> Result<Self, LogError> {
        let mut reader = match crate::read_all(path) {
            Ok(r) => r,
            Err(LogError::Open { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LogHistory::default());
            }
            Err(e) => return Err(e),
        };
        let issue_wanted = |i: Option<&str>| {
            scopes
                .iter()
                .any(|s| matches!(s, Scope::Issue(x) if Some(x.as_str()) == i))
        };
        let session_wanted = |i: Option<&str>| {
            scopes
                .iter()
                .any(|s| matches!(s, Scope::Session(x) if Some(x.as_str()) == i))
        };
        let any_session = scopes.iter().any(|s| matches!(s, Scope::Session(_)));
        let mut out = LogHistory::default();
        let mut by_id = HashMap::new();
        for record in reader.by_ref() {
            match record? {
                Record::Signal(s) => {
                    // What a shadow entry would have said happened to
                    // no one: it cannot escalate anything.
                    if s.header.detached || s.header.shadow || s.header.timestamp < since {
                        continue;
                    }
                    // Without a session scope only issue matches matter.
                    if !any_session && !issue_wanted(s.context.issue_id.as_deref()) {
                        continue;
                    }
                    by_id.insert(s.header.id, out.signals.len());
                    out.signals.push(Seen {
                        source: s.header.source,
                        at: s.header.timestamp,
                        issue: s.context.issue_id,
                        session: None,
                        prompt: s.header.intensity == Intensity::Prompt,
                        dismissed: false,
                    });
                }
                // The latest answer to a signal is its answer (`ahp respond
                // --amend` appends one that supersedes).
                Record::Response(r) => {
                    if let Some(&i) = by_id.get(&r.signal_id) {
                        out.signals[i].dismissed = r.action == Action::Dismiss;
                    }
                }
                Record::Run(run) => {
                    if run.session_id.is_some() {
                        for id in &run.signal_ids {
                            if let Some(&i) = by_id.get(id) {
                                out.signals[i].session.clone_from(&run.session_id);
                            }
                        }
                    }
                    let clean = matches!(run.outcome, Outcome::Accept | Outcome::Aid);
                    if clean
                        && (issue_wanted(run.issue_id.as_deref())
                            || session_wanted(run.session_id.as_deref()))
                    {
                        out.clean.push(Clean {
                            at: run.timestamp,
                            issue: run.issue_id,
                            session: run.session_id,
                            entries: run.entries.into_iter().map(|e| e.id).collect(),
                        });
                    }
                }
                _ => {}
            }
        }
        // Keep only what a scope asked for.
        out.signals.retain(|s| {
            scopes
                .iter()
                .any(|sc| in_scope(sc, s.issue.as_deref(), s.session.as_deref()))
        });
        out.unreadable = reader.unreadable().to_vec();
        Ok(out)
    }

    /// The rotated segments the history was read without (see
    /// [`crate::LogReader::unreadable`]).
    pub fn unreadable(&self) -> &[crate::follow::Unreadable] {
        &self.unreadable
    }
}

impl History for LogHistory {
    fn firings(&self, source: &str, scope: &Scope, since: DateTime<Utc>) -> usize {
        self.signals
            .iter()
            .filter(|s| s.source == source && s.at >= since)
            .filter(|s| in_scope(scope, s.issue.as_deref(), s.session.as_deref()))
            .count()
    }

    fn dismissed_prompts(&self, source: &str, scope: &Scope, since: DateTime<Utc>) -> usize {
        self.signals
            .iter()
            .filter(|s| s.source == source && s.at >= since && s.prompt && s.dismissed)
            .filter(|s| in_scope(scope, s.issue.as_deref(), s.session.as_deref()))
            .count()
    }

    fn last_clean_run(&self, source: &str, scope: &Scope) -> Option<DateTime<Utc>> {
        self.clean
            .iter()
            .filter(|c| c.entries.iter().any(|e| e == source))
            .filter(|c| in_scope(scope, c.issue.as_deref(), c.session.as_deref()))
            .map(|c| c.at)
            .max()
    }
}
