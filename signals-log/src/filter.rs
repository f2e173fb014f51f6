//! Which records a query wants.

use crate::Record;
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
/// particular a response carries only its signal's id, so a filter on
/// `event`, `source`, `intensity`, `issue` or `session` drops responses:
/// joining them to their signals would need memory growing with the log,
/// and the reader streams in constant memory. Filter on `kinds` and time to
/// keep them, and join by `signal_id` in the caller.
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
        if !self.kinds.is_empty() && !self.kinds.iter().any(|k| k == record.kind()) {
            return false;
        }
        let t = record.timestamp();
        if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
            return false;
        }
        let (event, source, intensity, issue, session) = match record {
            Record::Signal(s) => (
                s.context.hook,
                Some(s.header.source.as_str()),
                Some(s.header.intensity),
                s.context.issue_id.as_deref(),
                None,
            ),
            Record::Run(r) => (
                Some(r.event),
                None,
                None,
                r.issue_id.as_deref(),
                r.session_id.as_deref(),
            ),
            Record::Release(r) => (Some(r.event), None, None, None, Some(r.session_id.as_str())),
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => {
                (d.event, Some(d.source.as_str()), None, None, None)
            }
            Record::Response(_) => (None, None, None, None, None),
        };
        fn ok<T: PartialEq + ?Sized>(want: Option<&T>, have: Option<&T>) -> bool {
            want.is_none() || want == have
        }
        // A run matches a source when that entry ran in it.
        let source_ok = match (record, self.source.as_deref()) {
            (Record::Run(r), Some(want)) => r.entries.iter().any(|e| e.id == want),
            (_, want) => ok(want, source),
        };
        ok(self.event.as_ref(), event.as_ref())
            && source_ok
            && ok(self.intensity.as_ref(), intensity.as_ref())
            && ok(self.issue.as_deref(), issue)
            && ok(self.session.as_deref(), session)
    }
}
