//! Filtering records: `ahp signals query`.

use super::AnalyticsError;
use crate::Record;
use ahp_engine::{Event, Intensity};
use chrono::{DateTime, Duration, Utc};

/// Which records to keep. Every field that is set must match; a record
/// that has no such field (e.g. a response has no event) does not match a
/// set filter.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// The event: a signal's `context.hook`, a run's or diagnostic's `event`.
    pub event: Option<Event>,
    /// The source: a signal's `header.source`, a diagnostic's `source`, an
    /// entry id among a run's `entries`.
    pub source: Option<String>,
    /// A signal's intensity (only signals match).
    pub intensity: Option<Intensity>,
    /// A signal's `context.issue_id` or a run's `issue_id`.
    pub issue: Option<String>,
    /// A run's `session_id` (only runs match).
    pub session: Option<String>,
    /// At or after this time.
    pub since: Option<DateTime<Utc>>,
    /// At or before this time.
    pub until: Option<DateTime<Utc>>,
    /// The record's `kind` (`signal`, `response`, `run`, `info`, `warning`, `error`).
    pub kind: Option<String>,
}

impl Filter {
    /// Whether `record` passes every set field.
    ///
    /// ```
    /// use ahp_engine::{Intensity, Signal};
    /// use ahp_signals_log::{analytics::query::Filter, Record};
    /// let f = Filter { intensity: Some(Intensity::Block), ..Filter::default() };
    /// assert!(f.matches(&Record::from(Signal::block("no"))));
    /// assert!(!f.matches(&Record::from(Signal::aid("fyi"))));
    /// ```
    pub fn matches(&self, record: &Record) -> bool {
        if let Some(kind) = &self.kind {
            if record.kind() != kind {
                return false;
            }
        }
        let ts = record.timestamp();
        if self.since.is_some_and(|s| ts < s) || self.until.is_some_and(|u| ts > u) {
            return false;
        }
        if let Some(event) = self.event {
            let got = match record {
                Record::Signal(s) => s.context.hook,
                Record::Run(r) => Some(r.event),
                Record::Info(d) | Record::Warning(d) | Record::Error(d) => d.event,
                Record::Release(r) => Some(r.event),
                Record::Response(_) => None,
            };
            if got != Some(event) {
                return false;
            }
        }
        if let Some(source) = &self.source {
            let ok = match record {
                Record::Signal(s) => &s.header.source == source,
                Record::Run(r) => r.entries.iter().any(|e| &e.id == source),
                Record::Info(d) | Record::Warning(d) | Record::Error(d) => &d.source == source,
                Record::Release(_) | Record::Response(_) => false,
            };
            if !ok {
                return false;
            }
        }
        if let Some(intensity) = self.intensity {
            match record {
                Record::Signal(s) if s.intensity() == intensity => {}
                _ => return false,
            }
        }
        if let Some(issue) = &self.issue {
            let got = match record {
                Record::Signal(s) => s.context.issue_id.as_ref(),
                Record::Run(r) => r.issue_id.as_ref(),
                _ => None,
            };
            if got != Some(issue) {
                return false;
            }
        }
        if let Some(session) = &self.session {
            match record {
                Record::Run(r) if r.session_id.as_ref() == Some(session) => {}
                _ => return false,
            }
        }
        true
    }
}

/// Parses a time bound: RFC 3339, or a duration before `now` such as
/// `90s`, `30m`, `24h`, `7d`, `2w`.
///
/// ```
/// use ahp_signals_log::analytics::query::parse_time;
/// let now = chrono::Utc::now();
/// assert_eq!(parse_time("24h", now).unwrap(), now - chrono::Duration::hours(24));
/// assert!(parse_time("2026-01-31T12:00:00Z", now).is_ok());
/// assert!(parse_time("yesterday", now).is_err());
/// ```
pub fn parse_time(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, AnalyticsError> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let bad = || AnalyticsError::InvalidTime(text.to_string());
    let text = text.trim();
    let split = text.len().checked_sub(1).ok_or_else(bad)?;
    if !text.is_char_boundary(split) {
        return Err(bad());
    }
    let (num, unit) = text.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let d = match unit {
        "s" => Duration::try_seconds(n),
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    now.checked_sub_signed(d).ok_or_else(bad)
}
