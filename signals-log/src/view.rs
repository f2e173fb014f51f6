//! What filters and statistics read of a record, borrowed: from a full
//! [`Record`], or from a line the fast reader parsed only in part
//! ([`crate::lean`]). One definition of what a filter matches and what a
//! statistic counts serves both, so the two paths cannot drift apart.

use crate::Record;
use ahp_engine::{Action, EntryRun, EntryStatus, Event, Intensity, Level, Outcome, Uuid};
use chrono::{DateTime, Utc};

/// The fields of one record that filters and statistics read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    /// The record's id (derived from its line when it had none).
    pub id: Uuid,
    /// [`Record::timestamp`].
    pub timestamp: DateTime<Utc>,
    /// What depends on the kind.
    pub body: Body<'a>,
}

/// The kind-specific part of a [`View`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Body<'a> {
    Signal {
        source: &'a str,
        /// `header.intensity`, which filters read.
        intensity: Intensity,
        /// The payload's intensity ([`ahp_engine::Signal::intensity`]),
        /// which statistics count: the same for any record read from a
        /// line, since the payload is read by the header's intensity.
        raised: Intensity,
        hook: Option<Event>,
        issue: Option<&'a str>,
        correlation: Option<&'a str>,
        shadow: bool,
        /// An `async: true` entry's signal: recorded, never enforced.
        detached: bool,
    },
    Response {
        signal_id: Uuid,
        action: Action,
    },
    Diagnostic {
        level: Level,
        source: &'a str,
        event: Option<Event>,
    },
    Run {
        event: Event,
        correlation: &'a str,
        session: Option<&'a str>,
        issue: Option<&'a str>,
        outcome: Outcome,
        entries: Entries<'a>,
        /// `context.files.changed_count`, when it is an unsigned integer.
        changed: Option<u64>,
    },
    Release {
        session: &'a str,
        event: Event,
    },
}

/// The entries of a run, wherever they are kept.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entries<'a> {
    Full(&'a [EntryRun]),
    Lean(&'a [Entry], &'a dyn Strings),
}

/// A string of a parsed chunk: a range of its lines or of its arena.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    pub arena: bool,
    pub start: usize,
    pub end: usize,
}

/// One entry of a run as the partial parse keeps it, its strings in the
/// chunk it was read from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub id: Span,
    pub oracle: Span,
    pub status: Status,
    pub shadow: bool,
}

/// Where the strings of a partially parsed record are (its chunk): a
/// trait, so that this module need not know the parser's types.
pub(crate) trait Strings {
    /// The string at `span`.
    fn str(&self, span: Span) -> &str;
}

impl std::fmt::Debug for dyn Strings + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Strings")
    }
}

/// What statistics read of one entry of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryView<'a> {
    pub id: &'a str,
    pub oracle: &'a str,
    pub status: Status,
    pub shadow: bool,
}

/// The entry statuses statistics tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Signalled,
    SkippedAfterBlock,
    Other,
}

impl From<&EntryStatus> for Status {
    fn from(s: &EntryStatus) -> Status {
        match s {
            EntryStatus::Signalled => Status::Signalled,
            EntryStatus::SkippedAfterBlock => Status::SkippedAfterBlock,
            _ => Status::Other,
        }
    }
}

impl<'a> Entries<'a> {
    /// The entries in their order.
    pub fn iter(self) -> impl Iterator<Item = EntryView<'a>> {
        let (full, lean, chunk) = match self {
            Entries::Full(f) => (f, &[][..], None),
            Entries::Lean(l, c) => (&[][..], l, Some(c)),
        };
        full.iter()
            .map(|e| EntryView {
                id: &e.id,
                oracle: &e.oracle,
                status: Status::from(&e.status),
                shadow: e.shadow,
            })
            .chain(lean.iter().filter_map(move |e| {
                let chunk = chunk?;
                Some(EntryView {
                    id: chunk.str(e.id),
                    oracle: chunk.str(e.oracle),
                    status: e.status,
                    shadow: e.shadow,
                })
            }))
    }
}

impl<'a> View<'a> {
    /// The view of a full record.
    pub fn of(record: &'a Record) -> View<'a> {
        let body = match record {
            Record::Signal(s) => Body::Signal {
                source: &s.header.source,
                intensity: s.header.intensity,
                raised: s.intensity(),
                hook: s.context.hook,
                issue: s.context.issue_id.as_deref(),
                correlation: s.header.correlation_id.as_deref(),
                shadow: s.header.shadow,
                detached: s.header.detached,
            },
            Record::Response(r) => Body::Response {
                signal_id: r.signal_id,
                action: r.action,
            },
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => Body::Diagnostic {
                level: d.level,
                source: &d.source,
                event: d.event,
            },
            Record::Run(r) => Body::Run {
                event: r.event,
                correlation: &r.correlation_id,
                session: r.session_id.as_deref(),
                issue: r.issue_id.as_deref(),
                outcome: r.outcome,
                entries: Entries::Full(&r.entries),
                changed: r
                    .context
                    .pointer("/files/changed_count")
                    .and_then(|v| v.as_u64()),
            },
            Record::Release(r) => Body::Release {
                session: &r.session_id,
                event: r.event,
            },
        };
        View {
            id: record.id(),
            timestamp: record.timestamp(),
            body,
        }
    }

    /// [`Record::kind`].
    pub fn kind(&self) -> &'static str {
        match self.body {
            Body::Signal { .. } => "signal",
            Body::Response { .. } => "response",
            Body::Diagnostic { level, .. } => level.as_str(),
            Body::Run { .. } => "run",
            Body::Release { .. } => "release",
        }
    }
}
