//! Which records a query wants.

use crate::Record;
use crate::recent::Recent;
use crate::view::{Body, View};
use ahp_engine::{Event, Intensity};
use chrono::{DateTime, Utc};

/// A conjunction of conditions on records; `None` (or empty `kinds`)
/// means "any". [`Filter::default`] matches everything.
///
/// Each condition looks at the field a record has:
///
/// | condition   | signal                | run          | release      | diagnostic | response |
/// |-------------|-----------------------|--------------|--------------|------------|----------|
/// | `event`     | `context.hook`        | `event`      | `event`      | `event`    | —        |
/// | `source`    | `header.source`       | an entry id among `entries` | — | `source`   | —        |
/// | `intensity` | `header.intensity`    | —            | —            | —          | —        |
/// | `issue`     | `context.issue_id`    | `issue_id`   | —            | —          | —        |
/// | `session`   | —                     | `session_id` | `session_id` | —          | —        |
/// | `since`/`until` | every record's [`Record::timestamp`] (`since` inclusive, `until` exclusive) |||||
/// | `kinds`     | every record's [`Record::kind`] |||||
///
/// A record without the field ("—") does not match a condition on it. In
/// particular a response carries only its signal's id, so [`Filter::matches`]
/// drops responses under a condition on `event`, `source`, `intensity`,
/// `issue` or `session`: use a [`Selection`], which keeps the responses of
/// the signals the filter selects.
///
/// ```
/// use ahp_engine::{Intensity, Signal};
/// use ahp_signals_log::{Filter, Record};
/// let filter = Filter { intensity: Some(Intensity::Block), ..Filter::default() };
/// assert!(filter.matches(&Record::from(Signal::block("no"))));
/// assert!(!filter.matches(&Record::from(Signal::aid("fyi"))));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// The hook event.
    pub event: Option<Event>,
    /// The oracle (signals) or component (diagnostics) that produced it.
    pub source: Option<String>,
    /// The signal's intensity.
    pub intensity: Option<Intensity>,
    /// The issue id.
    pub issue: Option<String>,
    /// The agent session id.
    pub session: Option<String>,
    /// Not before this instant.
    pub since: Option<DateTime<Utc>>,
    /// Before this instant.
    pub until: Option<DateTime<Utc>>,
    /// Only these kinds (`signal`, `response`, …); empty means all.
    pub kinds: Vec<String>,
}

impl Filter {
    /// Whether `record` meets every condition.
    pub fn matches(&self, record: &Record) -> bool {
        self.matches_view(&View::of(record))
    }

    /// [`Filter::matches`] on what a record's view holds: the one
    /// definition both readers share.
    pub(crate) fn matches_view(&self, record: &View<'_>) -> bool {
        if !self.kinds.is_empty() && !self.kinds.iter().any(|k| k == record.kind()) {
            return false;
        }
        let t = record.timestamp;
        if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
            return false;
        }
        let (event, source, intensity, issue, session) = match record.body {
            Body::Signal {
                hook,
                source,
                intensity,
                issue,
                ..
            } => (hook, Some(source), Some(intensity), issue, None),
            Body::Run {
                event,
                issue,
                session,
                ..
            } => (Some(event), None, None, issue, session),
            Body::Release { event, session } => (Some(event), None, None, None, Some(session)),
            Body::Diagnostic { event, source, .. } => (event, Some(source), None, None, None),
            Body::Response { .. } => (None, None, None, None, None),
        };
        fn ok<T: PartialEq + ?Sized>(want: Option<&T>, have: Option<&T>) -> bool {
            want.is_none() || want == have
        }
        // A run matches a source when that entry ran in it.
        let source_ok = match (record.body, self.source.as_deref()) {
            (Body::Run { entries, .. }, Some(want)) => entries.iter().any(|e| e.id == want),
            (_, want) => ok(want, source),
        };
        ok(self.event.as_ref(), event.as_ref())
            && source_ok
            && ok(self.intensity.as_ref(), intensity.as_ref())
            && ok(self.issue.as_deref(), issue)
            && ok(self.session.as_deref(), session)
    }
}

/// How many selected signal ids a [`Selection`] remembers to keep their
/// responses; a response to an older selected signal is dropped. The two
/// generations hold at most twice this many.
pub const SELECTED_WINDOW: usize = 200_000;

/// A [`Filter`] that selects signals and keeps their responses: a response
/// is kept when the signal it answers was selected (by every condition but
/// `kinds`), wherever the response sits in the log and whatever its own
/// time. Without any condition but `kinds` every response of a kept kind
/// is kept, answered signal in the log or not.
///
/// Feed it the records in log order: a response comes after its signal.
///
/// ```
/// use ahp_engine::{Action, Signal, SignalResponse};
/// use ahp_signals_log::{Filter, Record, Selection};
/// let mut noisy = Signal::prompt("too many files");
/// noisy.header.source = "noisy".into();
/// let answer = SignalResponse::new(&noisy, Action::Dismiss, None).unwrap();
/// let mut select = Selection::new(Filter { source: Some("noisy".into()), ..Filter::default() });
/// assert!(select.matches(&Record::from(noisy)));
/// assert!(select.matches(&Record::from(answer)));
/// let other = Signal::prompt("unrelated");
/// let other_answer = SignalResponse::new(&other, Action::Dismiss, None).unwrap();
/// assert!(!select.matches(&Record::from(other)));
/// assert!(!select.matches(&Record::from(other_answer)));
/// ```
pub struct Selection {
    filter: Filter,
    /// The filter without `kinds`: which signals' responses are kept.
    signals: Filter,
    /// Whether the filter has a condition beyond `kinds`.
    narrows: bool,
    selected: Recent<u128, ()>,
}

impl Selection {
    /// A selection by `filter`.
    pub fn new(filter: Filter) -> Selection {
        let signals = Filter {
            kinds: Vec::new(),
            ..filter.clone()
        };
        Selection {
            narrows: signals != Filter::default(),
            filter,
            signals,
            selected: Recent::new(SELECTED_WINDOW),
        }
    }

    /// Whether `record` is selected; call it on every record, in log order.
    pub fn matches(&mut self, record: &Record) -> bool {
        self.matches_view(&View::of(record))
    }

    /// [`Selection::matches`] on a record's view.
    pub(crate) fn matches_view(&mut self, record: &View<'_>) -> bool {
        match record.body {
            Body::Signal { .. } => {
                if self.narrows && self.signals.matches_view(record) {
                    self.selected.insert(record.id.as_u128(), ());
                }
                self.filter.matches_view(record)
            }
            Body::Response { signal_id, .. } => {
                let kind_ok = self.filter.kinds.is_empty()
                    || self.filter.kinds.iter().any(|k| k == record.kind());
                kind_ok && (!self.narrows || self.selected.contains(&signal_id.as_u128()))
            }
            _ => self.filter.matches_view(record),
        }
    }

    /// Whether every record is selected: the caller may skip asking.
    pub(crate) fn selects_all(&self) -> bool {
        self.filter == Filter::default()
    }
}
