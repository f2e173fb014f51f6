//! Reading a line for analytics only: the fields filters and statistics
//! need, borrowed from the line, and nothing built for the rest.
//!
//! A full [`Record`] costs most of its read in what analytics never looks
//! at: serde buffers the whole object to find its `kind`, a run's context
//! becomes a tree of maps, a signal's payload is parsed twice. Here a line
//! whose `kind` comes first (as ahp writes it) is read in one pass into
//! borrowed structs that mirror the record types field for field, with
//! `deny_unknown_fields`, validating every value as the full read would but
//! keeping only what [`View`] holds.
//!
//! The rule that keeps the two reads' figures equal: this reader accepts a
//! line only if the full read accepts it, with the same values; it may
//! refuse more. Whatever it refuses (`kind` not first, a payload before its
//! header, an unknown or duplicate field, …) goes to the full read, and a
//! line that fails that too is skipped, as [`crate::Reader`] skips it.

use crate::Record;
use crate::record::line_id;
use crate::view::{Body, Entries, Entry, Span, Status, Strings, View};
use ahp_engine::{Action, EntryStatus, Event, Intensity, Level, ModOp, Outcome, Severity, Uuid};
use chrono::{DateTime, Utc};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

mod narrow;

/// How many skipped line numbers a chunk keeps (the count is exact).
const KEEP_SKIPPED: usize = 1024;

/// What [`View`] holds of one record, its strings in the chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lean {
    id: Uuid,
    timestamp: DateTime<Utc>,
    body: LeanBody,
}

#[derive(Debug, Clone, Copy)]
enum LeanBody {
    Signal {
        source: Span,
        intensity: Intensity,
        hook: Option<Event>,
        issue: Option<Span>,
        correlation: Option<Span>,
        shadow: bool,
        detached: bool,
    },
    Response {
        signal_id: Uuid,
        action: Action,
    },
    Diagnostic {
        level: Level,
        source: Span,
        event: Option<Event>,
    },
    Run {
        event: Event,
        correlation: Span,
        session: Option<Span>,
        issue: Option<Span>,
        outcome: Outcome,
        entries: (usize, usize),
        changed: Option<u64>,
    },
    Release {
        session: Span,
        event: Event,
    },
}

/// Whole lines of one file, and once parsed, their records.
///
/// Its buffers are reused from chunk to chunk, so a read allocates little
/// after the first few.
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    /// The lines, each ending in `\n` but perhaps the file's last.
    pub bytes: Vec<u8>,
    /// Which file of the log they are from.
    pub file: usize,
    /// The 1-based number of the first line in that file.
    pub first_line: usize,
    /// `bytes` once parsed, when they are all UTF-8 (as they are but for
    /// garbage): their strings are then sliced without a check each.
    text: String,
    /// Strings that had escapes, unescaped, and strings of lines read in
    /// full.
    arena: String,
    pub records: Vec<Lean>,
    entries: Vec<Entry>,
    /// How many lines were skipped as unparseable.
    pub skipped: usize,
    /// Their line numbers, at most [`KEEP_SKIPPED`].
    pub skipped_lines: Vec<usize>,
    /// How many lines the full read had to take.
    pub fallbacks: usize,
}

impl Chunk {
    /// Empties it for the next lines, keeping its buffers.
    pub fn clear(&mut self) {
        if self.bytes.is_empty() {
            self.bytes = std::mem::take(&mut self.text).into_bytes();
        }
        self.bytes.clear();
        self.text.clear();
        self.arena.clear();
        self.records.clear();
        self.entries.clear();
        self.skipped = 0;
        self.skipped_lines.clear();
        self.fallbacks = 0;
    }

    /// The text of a span.
    #[inline]
    pub fn str(&self, span: Span) -> &str {
        Strings::str(self, span)
    }
}

impl Strings for Chunk {
    fn str(&self, span: Span) -> &str {
        if span.arena {
            self.arena.get(span.start..span.end).unwrap_or_default()
        } else if self.bytes.is_empty() {
            self.text.get(span.start..span.end).unwrap_or_default()
        } else {
            // The span came from a string serde_json had checked.
            self.bytes
                .get(span.start..span.end)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default()
        }
    }
}

impl Chunk {
    /// The view of one of its records.
    pub fn view(&self, r: &Lean) -> View<'_> {
        let opt = |s: Option<Span>| s.map(|s| self.str(s));
        let body = match r.body {
            LeanBody::Signal {
                source,
                intensity,
                hook,
                issue,
                correlation,
                shadow,
                detached,
            } => Body::Signal {
                source: self.str(source),
                intensity,
                raised: intensity,
                hook,
                issue: opt(issue),
                correlation: opt(correlation),
                shadow,
                detached,
            },
            LeanBody::Response { signal_id, action } => Body::Response { signal_id, action },
            LeanBody::Diagnostic {
                level,
                source,
                event,
            } => Body::Diagnostic {
                level,
                source: self.str(source),
                event,
            },
            LeanBody::Run {
                event,
                correlation,
                session,
                issue,
                outcome,
                entries: (from, to),
                changed,
            } => Body::Run {
                event,
                correlation: self.str(correlation),
                session: opt(session),
                issue: opt(issue),
                outcome,
                entries: Entries::Lean(self.entries.get(from..to).unwrap_or_default(), self),
                changed,
            },
            LeanBody::Release { session, event } => Body::Release {
                session: self.str(session),
                event,
            },
        };
        View {
            id: r.id,
            timestamp: r.timestamp,
            body,
        }
    }

    /// The timestamp of one of its records.
    pub fn timestamp(r: &Lean) -> DateTime<Utc> {
        r.timestamp
    }

    /// The number of bytes of its lines.
    pub fn len(&self) -> usize {
        self.bytes.len() + self.text.len()
    }

    /// Parses its lines into records, skipping (and counting) what is not
    /// a record.
    pub fn parse(&mut self) {
        // One UTF-8 check for the whole chunk (fast on ASCII) spares one per
        // string: serde_json trusts a `&str`.
        if let Ok(text) = String::from_utf8(std::mem::take(&mut self.bytes))
            .map_err(|e| self.bytes = e.into_bytes())
        {
            self.text = text;
        }
        let Chunk {
            bytes,
            text,
            first_line,
            arena,
            records,
            entries,
            skipped,
            skipped_lines,
            fallbacks,
            ..
        } = self;
        let utf8: Option<&str> = bytes.is_empty().then_some(text.as_str());
        let all: &[u8] = utf8.map_or(bytes, str::as_bytes);
        let mut store = Store {
            base: all.as_ptr() as usize,
            len: all.len(),
            arena,
        };
        let mut number = *first_line;
        let mut at = 0;
        while at < all.len() {
            let end = memchr::memchr(b'\n', &all[at..]).map_or(all.len(), |i| at + i);
            let raw = &all[at..end];
            let start = at + (raw.len() - raw.trim_ascii_start().len());
            let stop = end - (raw.len() - raw.trim_ascii_end().len());
            at = end + 1;
            let this = number;
            number += 1;
            if start >= stop {
                continue;
            }
            let line = &all[start..stop];
            let as_str = match utf8 {
                Some(t) => t.get(start..stop),
                None => std::str::from_utf8(line).ok(),
            };
            let fast = as_str
                .and_then(|l| narrow::line(l).or_else(|| serde_json::from_str::<Line<'_>>(l).ok()));
            let record = match fast {
                Some(parsed) => Some(store.lean(parsed, line, entries)),
                None => match serde_json::from_slice::<Record>(line) {
                    Ok(mut full) => {
                        *fallbacks += 1;
                        full.derive_id(line);
                        Some(store.view(&View::of(&full), entries))
                    }
                    Err(_) => None,
                },
            };
            match record {
                Some(r) => records.push(r),
                None => {
                    *skipped += 1;
                    if skipped_lines.len() < KEEP_SKIPPED {
                        skipped_lines.push(this);
                    }
                }
            }
        }
    }
}

/// Turns borrowed strings into spans of a chunk.
struct Store<'c> {
    base: usize,
    len: usize,
    arena: &'c mut String,
}

impl Store<'_> {
    fn str(&mut self, s: &str) -> Span {
        let at = (s.as_ptr() as usize).wrapping_sub(self.base);
        if at <= self.len && s.len() <= self.len - at {
            return Span {
                arena: false,
                start: at,
                end: at + s.len(),
            };
        }
        let start = self.arena.len();
        self.arena.push_str(s);
        Span {
            arena: true,
            start,
            end: self.arena.len(),
        }
    }

    fn opt(&mut self, s: Option<&str>) -> Option<Span> {
        s.map(|s| self.str(s))
    }

    fn lean(&mut self, line: Line<'_>, bytes: &[u8], entries: &mut Vec<Entry>) -> Lean {
        let body = match line.body {
            LineBody::Signal {
                source,
                intensity,
                hook,
                issue,
                correlation,
                shadow,
                detached,
            } => LeanBody::Signal {
                source: self.str(&source.0),
                intensity,
                hook: hook.map(|e| e.0),
                issue: self.opt(issue.as_ref().map(|s| &*s.0)),
                correlation: self.opt(correlation.as_ref().map(|s| &*s.0)),
                shadow,
                detached,
            },
            LineBody::Response { signal_id, action } => LeanBody::Response { signal_id, action },
            LineBody::Diagnostic {
                level,
                source,
                event,
            } => LeanBody::Diagnostic {
                level,
                source: self.str(&source.0),
                event: event.map(|e| e.0),
            },
            LineBody::Run(run) => {
                let from = entries.len();
                for e in &run.entries {
                    entries.push(Entry {
                        id: self.str(&e.id.0),
                        oracle: self.str(&e.oracle.0),
                        status: Status::from(&e.status),
                        shadow: e.shadow,
                    });
                }
                LeanBody::Run {
                    event: run.event.0,
                    correlation: self.str(&run.correlation_id.0),
                    session: self.opt(run.session_id.as_ref().map(|s| &*s.0)),
                    issue: self.opt(run.issue_id.as_ref().map(|s| &*s.0)),
                    outcome: run.outcome,
                    entries: (from, entries.len()),
                    changed: run.context.0,
                }
            }
            LineBody::Release { session, event } => LeanBody::Release {
                session: self.str(&session.0),
                event: event.0,
            },
        };
        Lean {
            // As `Record::derive_id`: a line without an id gets one from
            // its bytes.
            id: if line.id.is_nil() {
                line_id(bytes)
            } else {
                line.id
            },
            timestamp: line.timestamp,
            body,
        }
    }

    /// A record read in full, kept as the fast read keeps it.
    fn view(&mut self, v: &View<'_>, entries: &mut Vec<Entry>) -> Lean {
        let body = match v.body {
            Body::Signal {
                source,
                raised,
                hook,
                issue,
                correlation,
                shadow,
                detached,
                ..
            } => LeanBody::Signal {
                source: self.str(source),
                intensity: raised,
                hook,
                issue: self.opt(issue),
                correlation: self.opt(correlation),
                shadow,
                detached,
            },
            Body::Response { signal_id, action } => LeanBody::Response { signal_id, action },
            Body::Diagnostic {
                level,
                source,
                event,
            } => LeanBody::Diagnostic {
                level,
                source: self.str(source),
                event,
            },
            Body::Run {
                event,
                correlation,
                session,
                issue,
                outcome,
                entries: list,
                changed,
            } => {
                let from = entries.len();
                for e in list.iter() {
                    entries.push(Entry {
                        id: self.str(e.id),
                        oracle: self.str(e.oracle),
                        status: e.status,
                        shadow: e.shadow,
                    });
                }
                LeanBody::Run {
                    event,
                    correlation: self.str(correlation),
                    session: self.opt(session),
                    issue: self.opt(issue),
                    outcome,
                    entries: (from, entries.len()),
                    changed,
                }
            }
            Body::Release { session, event } => LeanBody::Release {
                session: self.str(session),
                event,
            },
        };
        Lean {
            id: v.id,
            timestamp: v.timestamp,
            body,
        }
    }
}

// ---------------------------------------------------------------------
// The borrowed mirror of the record types.

/// A line read in part.
struct Line<'a> {
    id: Uuid,
    timestamp: DateTime<Utc>,
    body: LineBody<'a>,
}

enum LineBody<'a> {
    Signal {
        source: BStr<'a>,
        intensity: Intensity,
        hook: Option<LEvent>,
        issue: Option<BStr<'a>>,
        correlation: Option<BStr<'a>>,
        shadow: bool,
        detached: bool,
    },
    Response {
        signal_id: Uuid,
        action: Action,
    },
    Diagnostic {
        level: Level,
        source: BStr<'a>,
        event: Option<LEvent>,
    },
    Run(RunLine<'a>),
    Release {
        session: BStr<'a>,
        event: LEvent,
    },
}

/// A string, borrowed from the line when it has no escapes.
struct BStr<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for BStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_string(V).map(BStr)
    }
}

/// A string whose value is not needed: checked as `String` would be.
struct Str;

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Str, E> {
                Ok(Str)
            }
        }
        d.deserialize_string(V)
    }
}

/// Any JSON value, checked as `serde_json::Value` would check it (numbers
/// in range, strings valid), kept nowhere.
struct AnyValue;

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = AnyValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_unit<E: de::Error>(self) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_none<E: de::Error>(self) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<AnyValue, D::Error> {
        AnyValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyValue, A::Error> {
        while seq.next_element::<AnyValue>()?.is_some() {}
        Ok(AnyValue)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyValue, A::Error> {
        while map.next_entry::<Str, AnyValue>()?.is_some() {}
        Ok(AnyValue)
    }
}

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyVisitor)
    }
}

/// An event name, canonical or an alias, as `Event` reads it.
struct LEvent(Event);

impl<'de> Deserialize<'de> for LEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LEvent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LEvent, E> {
                // The canonical name, as ahp writes it, without the
                // normalizing copy `Event::parse` makes.
                if let Some(e) = Event::ALL.iter().find(|e| e.as_str() == v) {
                    return Ok(LEvent(*e));
                }
                Event::parse(v).map(LEvent).map_err(E::custom)
            }
        }
        d.deserialize_string(V)
    }
}

/// A timestamp, read as `DateTime<Utc>` reads it.
struct Ts(DateTime<Utc>);

impl Ts {
    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the form ahp writes, without
    /// chrono's general parser; `None` for anything else (chrono decides).
    fn plain(s: &str) -> Option<DateTime<Utc>> {
        let b = s.as_bytes();
        let num = |from: usize, to: usize| -> Option<u32> {
            b.get(from..to)?.iter().try_fold(0u32, |n, &d| {
                d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
            })
        };
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[b.len() - 1] != b'Z'
        {
            return None;
        }
        let nanos = match b.len() {
            20 => 0,
            22..=30 if b[19] == b'.' => {
                let digits = b.len() - 21;
                num(20, b.len() - 1)? * 10u32.pow(9 - digits as u32)
            }
            _ => return None,
        };
        let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
        let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
        // Leap seconds and the like: chrono's call.
        if sec > 59 {
            return None;
        }
        chrono::NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, mo, d)?
            .and_hms_nano_opt(h, mi, sec, nanos)
            .map(|t| t.and_utc())
    }
}

impl<'de> Deserialize<'de> for Ts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an RFC 3339 formatted date and time string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Ts, E> {
                if let Some(t) = Ts::plain(v) {
                    return Ok(Ts(t));
                }
                v.parse::<DateTime<chrono::FixedOffset>>()
                    .map(|t| Ts(t.with_timezone(&Utc)))
                    .map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// `signal_ids`: checked as `Vec<Uuid>`, kept nowhere.
struct Uuids;

impl<'de> Deserialize<'de> for Uuids {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Uuids;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of UUIDs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Uuids, A::Error> {
                while seq.next_element::<Uuid>()?.is_some() {}
                Ok(Uuids)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A run's `context` (any value, as `serde_json::Value`), keeping
/// `files.changed_count` as `pointer("/files/changed_count")` and
/// `as_u64` would find it: the last `files` key of an object, the last
/// `changed_count` of that, a non-negative integer.
struct RunContext(Option<u64>);

/// `Some(n)` for a non-negative integer, `None` for any other value.
struct Count(Option<u64>);

/// What `changed_count` an object's `files` value yields.
struct Files(Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count(Some(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(Count(u64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Count, D::Error> {
                AnyValue::deserialize(d).map(|_| Count(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Count, A::Error> {
                AnyVisitor.visit_seq(seq).map(|_| Count(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Count, A::Error> {
                AnyVisitor.visit_map(map).map(|_| Count(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// An object's member `key` as `T` (the last one), the others checked as
/// any value; `None` for a value that is not an object.
fn member<'de, A, T>(mut map: A, key: &str) -> Result<Option<T>, A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    let mut found = None;
    while let Some(k) = map.next_key::<BStr<'de>>()? {
        if k.0 == key {
            found = Some(map.next_value::<T>()?);
        } else {
            map.next_value::<AnyValue>()?;
        }
    }
    Ok(found)
}

/// A visitor of any value that, for an object, reads its member `key`.
struct Member<T>(&'static str, std::marker::PhantomData<T>);

macro_rules! any_but_map {
    ($t:ty) => {
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<$t, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<$t, D::Error> {
            AnyValue::deserialize(d).map(|_| None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<$t, A::Error> {
            AnyVisitor.visit_seq(seq).map(|_| None)
        }
    };
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Member<T> {
    type Value = Option<T>;
    any_but_map!(Option<T>);
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        member(map, self.0)
    }
}

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let count: Option<Count> =
            d.deserialize_any(Member("changed_count", std::marker::PhantomData))?;
        Ok(Files(count.and_then(|c| c.0)))
    }
}

impl<'de> Deserialize<'de> for RunContext {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let files: Option<Files> = d.deserialize_any(Member("files", std::marker::PhantomData))?;
        Ok(RunContext(files.and_then(|f| f.0)))
    }
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Header<'a> {
    id: Uuid,
    #[serde(rename = "type")]
    signal_type: Str,
    timestamp: Ts,
    #[serde(borrow)]
    source: BStr<'a>,
    intensity: Intensity,
    #[serde(default, borrow)]
    correlation_id: Option<BStr<'a>>,
    #[serde(default)]
    clamped_from: Option<Intensity>,
    #[serde(default)]
    escalated_from: Option<Intensity>,
    #[serde(default)]
    escalation: Option<Str>,
    #[serde(default)]
    detached: bool,
    #[serde(default)]
    shadow: bool,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SignalContext<'a> {
    #[serde(default)]
    hook: Option<LEvent>,
    #[serde(default, borrow)]
    issue_id: Option<BStr<'a>>,
    #[serde(default)]
    files: Vec<Str>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockPayload {
    reason: Str,
    #[serde(default)]
    resolvable: bool,
    #[serde(default)]
    resolution_path: Vec<Str>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Modification {
    target: Str,
    op: ModOp,
    #[serde(default)]
    value: Option<AnyValue>,
    #[serde(default)]
    description: Option<Str>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlPayload {
    modifications: Vec<Modification>,
    #[serde(default)]
    reversible: bool,
    #[serde(default)]
    message: Option<Str>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptPayload {
    #[serde(default)]
    severity: Severity,
    message: Str,
    #[serde(default)]
    suggestions: Vec<Str>,
    #[serde(default)]
    continue_allowed: bool,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AidPayload {
    context_info: Str,
    #[serde(default)]
    best_practices: Vec<Str>,
    #[serde(default)]
    follow_ups: Vec<Str>,
    #[serde(default)]
    data: Option<AnyValue>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseLine {
    #[serde(default)]
    id: Uuid,
    signal_id: Uuid,
    consumed_at: Ts,
    action: Action,
    #[serde(default)]
    details: Option<AnyValue>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticLine<'a> {
    #[serde(default)]
    id: Uuid,
    level: Level,
    timestamp: Ts,
    #[serde(borrow)]
    source: BStr<'a>,
    #[serde(default)]
    event: Option<LEvent>,
    #[serde(default)]
    correlation_id: Option<Str>,
    message: Str,
    #[serde(default)]
    file: Option<Str>,
    #[serde(default)]
    line: Option<usize>,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryLine<'a> {
    #[serde(borrow)]
    id: BStr<'a>,
    #[serde(borrow)]
    oracle: BStr<'a>,
    wave: usize,
    status: EntryStatus,
    duration_us: u64,
    #[serde(default)]
    shadow: bool,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RunLine<'a> {
    #[serde(default)]
    id: Uuid,
    timestamp: Ts,
    event: LEvent,
    #[serde(borrow)]
    correlation_id: BStr<'a>,
    #[serde(default, borrow)]
    session_id: Option<BStr<'a>>,
    #[serde(default, borrow)]
    issue_id: Option<BStr<'a>>,
    outcome: Outcome,
    #[serde(borrow)]
    entries: Vec<EntryLine<'a>>,
    signal_ids: Uuids,
    duration_us: u64,
    #[serde(default)]
    config_digest: Option<Str>,
    context: RunContext,
}

// Fields kept only to be checked are never read.
#[allow(dead_code)]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseLine<'a> {
    #[serde(default)]
    id: Uuid,
    timestamp: Ts,
    #[serde(borrow)]
    session_id: BStr<'a>,
    event: LEvent,
    consecutive_blocks: u32,
    cap: u32,
    #[serde(default)]
    correlation_id: Option<Str>,
    reason: Str,
}

impl<'de: 'a, 'a> Deserialize<'de> for Line<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(LineVisitor)
    }
}

struct LineVisitor;

impl<'de> Visitor<'de> for LineVisitor {
    type Value = Line<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record whose first key is `kind`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line<'de>, A::Error> {
        match map.next_key::<BStr<'de>>()? {
            Some(k) if k.0 == "kind" => {}
            _ => return Err(de::Error::custom("`kind` is not the first key")),
        }
        let kind = map.next_value::<BStr<'de>>()?;
        let rest = de::value::MapAccessDeserializer::new(map);
        let diagnostic = |kind: Level, d: DiagnosticLine<'de>| -> Result<Line<'de>, A::Error> {
            if d.level != kind {
                return Err(de::Error::custom("the level is not the kind"));
            }
            Ok(Line {
                id: d.id,
                timestamp: d.timestamp.0,
                body: LineBody::Diagnostic {
                    level: d.level,
                    source: d.source,
                    event: d.event,
                },
            })
        };
        match &*kind.0 {
            "signal" => rest.deserialize_map(SignalVisitor),
            "response" => {
                let r = ResponseLine::deserialize(rest)?;
                Ok(Line {
                    id: r.id,
                    timestamp: r.consumed_at.0,
                    body: LineBody::Response {
                        signal_id: r.signal_id,
                        action: r.action,
                    },
                })
            }
            "info" => diagnostic(Level::Info, DiagnosticLine::deserialize(rest)?),
            "warning" => diagnostic(Level::Warning, DiagnosticLine::deserialize(rest)?),
            "error" => diagnostic(Level::Error, DiagnosticLine::deserialize(rest)?),
            "run" => {
                let r = RunLine::deserialize(rest)?;
                Ok(Line {
                    id: r.id,
                    timestamp: r.timestamp.0,
                    body: LineBody::Run(r),
                })
            }
            "release" => {
                let r = ReleaseLine::deserialize(rest)?;
                Ok(Line {
                    id: r.id,
                    timestamp: r.timestamp.0,
                    body: LineBody::Release {
                        session: r.session_id,
                        event: r.event,
                    },
                })
            }
            _ => Err(de::Error::custom("unknown kind")),
        }
    }
}

/// A signal's fields after `kind`: the payload is read by the header's
/// intensity, as `Signal`'s own `Deserialize` reads it.
struct SignalVisitor;

impl<'de> Visitor<'de> for SignalVisitor {
    type Value = Line<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a signal")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line<'de>, A::Error> {
        let mut header: Option<Header<'de>> = None;
        let mut context: Option<SignalContext<'de>> = None;
        let mut payload = false;
        while let Some(key) = map.next_key::<BStr<'de>>()? {
            match &*key.0 {
                "header" if header.is_none() => header = Some(map.next_value()?),
                "context" if context.is_none() => context = Some(map.next_value()?),
                "payload" if !payload => {
                    let Some(h) = &header else {
                        return Err(de::Error::custom("the payload comes before the header"));
                    };
                    match h.intensity {
                        Intensity::Block => drop(map.next_value::<BlockPayload>()?),
                        Intensity::Control => drop(map.next_value::<ControlPayload>()?),
                        Intensity::Prompt => drop(map.next_value::<PromptPayload>()?),
                        Intensity::Aid => drop(map.next_value::<AidPayload>()?),
                    }
                    payload = true;
                }
                _ => return Err(de::Error::custom("an unknown or repeated key")),
            }
        }
        let header = header.ok_or_else(|| de::Error::missing_field("header"))?;
        if !payload {
            return Err(de::Error::missing_field("payload"));
        }
        let context = context.unwrap_or_default();
        Ok(Line {
            id: header.id,
            timestamp: header.timestamp.0,
            body: LineBody::Signal {
                source: header.source,
                intensity: header.intensity,
                hook: context.hook,
                issue: context.issue_id,
                correlation: header.correlation_id,
                shadow: header.shadow,
                detached: header.detached,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Chunk {
        let mut c = Chunk {
            bytes: text.as_bytes().to_vec(),
            first_line: 1,
            ..Chunk::default()
        };
        c.parse();
        c
    }

    #[test]
    fn a_run_context_yields_the_changed_count_as_pointer_does() {
        for (context, want) in [
            (r#"{"files":{"changed_count":7}}"#, Some(7)),
            (r#"{"files":{"changed_count":-7}}"#, None),
            (r#"{"files":{"changed_count":7.0}}"#, None),
            (
                r#"{"files":{"changed_count":1,"changed_count":2}}"#,
                Some(2),
            ),
            (r#"{"files":{"changed_count":1},"files":[3]}"#, None),
            (r#"{"files":[{"changed_count":1}]}"#, None),
            (r#"[1,{"files":{"changed_count":1}}]"#, None),
            (r#"{"tool":{"files":{"changed_count":1}}}"#, None),
            ("null", None),
        ] {
            let line = format!(
                r#"{{"kind":"run","timestamp":"2026-01-01T00:00:00Z","event":"stop","correlation_id":"c","outcome":"accept","entries":[],"signal_ids":[],"duration_us":1,"context":{context}}}"#
            );
            let c = parsed(&line);
            assert_eq!(c.records.len(), 1, "{line}");
            assert_eq!(c.fallbacks, 0, "{line}");
            let Body::Run { changed, .. } = c.view(&c.records[0]).body else {
                panic!("not a run");
            };
            assert_eq!(changed, want, "{context}");
            let full: Record = serde_json::from_str(&line).unwrap();
            let Body::Run { changed, .. } = View::of(&full).body else {
                panic!("not a run");
            };
            assert_eq!(changed, want, "{context} (full read)");
        }
    }

    #[test]
    fn what_the_fast_read_refuses_goes_to_the_full_read() {
        // `kind` last, a payload before the header: read in full.
        let c = parsed(concat!(
            r#"{"timestamp":"2026-01-01T00:00:00Z","level":"info","source":"s","message":"m","kind":"info"}"#,
            "\n",
            r#"{"kind":"signal","payload":{"context_info":"x"},"header":{"id":"6f1c1d1e-0000-4000-8000-000000000001","type":"aid","timestamp":"2026-01-01T00:00:00Z","source":"s","intensity":"aid"}}"#,
            "\n",
        ));
        assert_eq!((c.records.len(), c.fallbacks, c.skipped), (2, 2, 0));
        // Rejected by both: a level that is not the kind, a payload that
        // does not fit the intensity, a number out of range, a repeated key.
        let c = parsed(concat!(
            r#"{"kind":"warning","level":"info","timestamp":"2026-01-01T00:00:00Z","source":"s","message":"m"}"#,
            "\n",
            r#"{"kind":"signal","header":{"id":"6f1c1d1e-0000-4000-8000-000000000001","type":"aid","timestamp":"2026-01-01T00:00:00Z","source":"s","intensity":"block"},"payload":{"context_info":"x"}}"#,
            "\n",
            r#"{"kind":"info","level":"info","timestamp":"2026-01-01T00:00:00Z","source":"s","message":"m","extra":1e999}"#,
            "\n",
            r#"{"kind":"info","kind":"info","level":"info","timestamp":"2026-01-01T00:00:00Z","source":"s","message":"m"}"#,
            "\n",
        ));
        assert_eq!((c.records.len(), c.skipped), (0, 4));
        assert_eq!(c.skipped_lines, [1, 2, 3, 4]);
    }

    #[test]
    fn escaped_strings_and_derived_ids_match_the_full_read() {
        let line = r#"{"kind":"info","level":"info","timestamp":"2026-01-01T00:00:00Z","source":"a\"b\u00e9","message":"m"}"#;
        let c = parsed(line);
        assert_eq!(c.fallbacks, 0);
        let v = c.view(&c.records[0]);
        let mut full: Record = serde_json::from_str(line).unwrap();
        full.derive_id(line.as_bytes());
        let w = View::of(&full);
        assert_eq!(v.id, w.id);
        assert!(!v.id.is_nil());
        let (Body::Diagnostic { source: a, .. }, Body::Diagnostic { source: b, .. }) =
            (v.body, w.body)
        else {
            panic!("not diagnostics");
        };
        assert_eq!(a, b);
        assert_eq!(a, "a\"bé");
    }

    #[test]
    fn plain_timestamps_read_as_chrono_reads_them() {
        for t in [
            "2026-02-21T16:55:00Z",
            "2026-02-21T16:55:00.5Z",
            "2026-02-21T16:55:00.123456789Z",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999Z",
            "2024-02-29T12:00:00Z",
        ] {
            let want: DateTime<Utc> = serde_json::from_str(&format!("\"{t}\"")).unwrap();
            assert_eq!(Ts::plain(t), Some(want), "{t}");
        }
        // Not the plain form, or not a time: chrono decides.
        for t in [
            "2023-02-29T12:00:00Z",
            "2026-02-21T16:55:60Z",
            "2026-02-21T24:00:00Z",
            "2026-02-21 16:55:00Z",
            "2026-02-21T16:55:00+00:00",
            "2026-02-21T16:55:00.Z",
            "2026-02-21T16:55:00.1234567890Z",
            "+2026-02-21T16:55:00Z",
            "2026-2-21T16:55:00Z",
        ] {
            assert_eq!(Ts::plain(t), None, "{t}");
        }
    }

    #[test]
    fn unused_fields_are_checked_all_the_same() {
        // `IgnoredAny` would take these; the full read does not.
        for bad in [
            r#"{"kind":"response","signal_id":"6f1c1d1e-0000-4000-8000-000000000001","consumed_at":"2026-01-01T00:00:00Z","action":"dismiss","details":{"n":1e999}}"#,
            r#"{"kind":"run","timestamp":"2026-01-01T00:00:00Z","event":"stop","correlation_id":"c","outcome":"accept","entries":[],"signal_ids":["nope"],"duration_us":1,"context":{}}"#,
            r#"{"kind":"run","timestamp":"2026-01-01T00:00:00Z","event":"stop","correlation_id":"c","outcome":"accept","entries":[],"signal_ids":[],"duration_us":-1,"context":{}}"#,
        ] {
            let c = parsed(bad);
            assert_eq!(c.skipped, 1, "{bad}");
            assert!(serde_json::from_str::<Record>(bad).is_err(), "{bad}");
        }
    }

    /// What a view says, entries and all, as text to compare.
    fn describe(v: &View<'_>) -> String {
        let entries: Vec<String> = match v.body {
            Body::Run { entries, .. } => entries
                .iter()
                .map(|e| format!("{}/{}/{:?}/{}", e.id, e.oracle, e.status, e.shadow))
                .collect(),
            _ => Vec::new(),
        };
        let body = match v.body {
            Body::Run {
                event,
                correlation,
                session,
                issue,
                outcome,
                changed,
                ..
            } => {
                format!("run {event:?} {correlation} {session:?} {issue:?} {outcome:?} {changed:?}")
            }
            other => format!("{other:?}"),
        };
        format!("{} {} {body} {entries:?}", v.id, v.timestamp)
    }

    /// The view the full read gives of `line`, if it reads it.
    fn full_view(line: &str) -> Option<String> {
        let mut full: Record = serde_json::from_str(line).ok()?;
        full.derive_id(line.as_bytes());
        Some(describe(&View::of(&full)))
    }

    /// The view a quick read gives, kept in a chunk as the reader keeps it.
    fn kept(line: &str, parsed: Line<'_>) -> String {
        let mut chunk = Chunk::default();
        let mut entries = Vec::new();
        let mut store = Store {
            base: line.as_ptr() as usize,
            len: line.len(),
            arena: &mut chunk.arena,
        };
        let lean = store.lean(parsed, line.as_bytes(), &mut entries);
        // Spans into the line: the chunk holds it as its text.
        chunk.text = line.to_string();
        chunk.entries = entries;
        describe(&chunk.view(&lean))
    }

    fn samples() -> Vec<String> {
        use ahp_engine::{EntryRun, RunRecord, Signal, SignalResponse};
        let at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 3, 1, 10, 0, 0).unwrap();
        let entry = |id: &str, status, shadow| EntryRun {
            id: id.into(),
            oracle: "Rules".into(),
            wave: 1,
            status,
            duration_us: 12,
            shadow,
        };
        let mut runs = Vec::new();
        for (i, context) in [
            serde_json::json!({"files": {"changed_count": 12}, "tool": {"name": "Bash", "input": {"command": "ls -la"}}}),
            serde_json::json!({"tool": {"n": [1, -2, true, null, "x", {}, []]}, "files": {"changed_count": 0}}),
            serde_json::json!({"files": []}),
            serde_json::json!([]),
        ]
        .into_iter()
        .enumerate()
        {
            runs.push(RunRecord {
                id: if i == 2 { Uuid::nil() } else { Uuid::new_v4() },
                timestamp: at,
                event: Event::PreToolUse,
                correlation_id: format!("corr-{i}"),
                session_id: (i != 1).then(|| "s-1".to_string()),
                issue_id: (i != 3).then(|| "ISS-7".to_string()),
                outcome: Outcome::Block,
                entries: vec![
                    entry("A", EntryStatus::Signalled, false),
                    entry("B", EntryStatus::SkippedAfterBlock, true),
                ],
                signal_ids: vec![Uuid::new_v4()],
                duration_us: 99,
                config_digest: (i == 0).then(|| "sha256:x".to_string()),
                context,
            });
        }
        let mut lines: Vec<String> = runs
            .into_iter()
            .map(|r| serde_json::to_string(&Record::Run(r)).unwrap())
            .collect();
        let s = Signal::prompt("p");
        let mut r = SignalResponse::new(&s, Action::Dismiss, None).unwrap();
        r.consumed_at = at;
        lines.push(serde_json::to_string(&Record::Response(r.clone())).unwrap());
        r.id = Uuid::nil();
        r.details = Some(serde_json::json!({"why": ["noise", 3]}));
        lines.push(serde_json::to_string(&Record::Response(r)).unwrap());
        let mut signals = [
            Signal::block("no").with_resolution_path(["fix it"]),
            Signal::control(vec![ahp_engine::Modification::set(
                "a.b",
                serde_json::json!(1),
            )]),
            Signal::prompt("p").with_severity(Severity::High),
            Signal::aid("fyi").with_data(serde_json::json!({"k": [1, 2]})),
        ];
        for (i, s) in signals.iter_mut().enumerate() {
            s.header.timestamp = at;
            s.header.source = "Src".into();
            s.header.shadow = i == 1;
            s.header.correlation_id = (i != 2).then(|| "c".to_string());
            s.context.hook = (i != 3).then_some(Event::PreAgentTurnStop);
            s.context.issue_id = Some("ISS-1".into());
            lines.push(serde_json::to_string(&Record::from(s.clone())).unwrap());
        }
        lines.push(
            r#"{"kind":"warning","level":"warning","timestamp":"2026-01-01T00:00:00Z","source":"ahp","event":"stop","message":"m","line":3}"#
                .to_string(),
        );
        lines.push(
            r#"{"kind":"release","timestamp":"2026-01-01T00:00:00Z","session_id":"s","event":"stop","consecutive_blocks":3,"cap":3,"reason":"r"}"#
                .to_string(),
        );
        lines
    }

    #[test]
    fn the_quick_reads_agree_with_the_full_read_on_every_mutant() {
        let mut checked = (0, 0);
        for line in samples() {
            let quick = narrow::line(&line);
            if line.starts_with(r#"{"kind":"run""#) || line.starts_with(r#"{"kind":"response""#) {
                let quick = quick.expect("the quick read takes the runs and responses ahp writes");
                assert_eq!(Some(kept(&line, quick)), full_view(&line), "{line}");
            }
            let lean = serde_json::from_str::<Line<'_>>(&line).expect("the serde read takes it");
            assert_eq!(Some(kept(&line, lean)), full_view(&line), "{line}");
            let bytes = line.as_bytes();
            let mut mutants: Vec<Vec<u8>> = Vec::new();
            for i in 0..bytes.len() {
                let mut cut = bytes.to_vec();
                cut.remove(i);
                mutants.push(cut);
                for b in *b"\"\\,}{:0-.e 1a]Z" {
                    let mut m = bytes.to_vec();
                    m[i] = b;
                    mutants.push(m);
                }
            }
            for m in mutants {
                let Ok(text) = std::str::from_utf8(&m) else {
                    continue;
                };
                let full = full_view(text);
                if let Some(quick) = narrow::line(text) {
                    checked.0 += 1;
                    assert_eq!(Some(kept(text, quick)), full, "narrow: {text}");
                }
                if let Ok(lean) = serde_json::from_str::<Line<'_>>(text) {
                    checked.1 += 1;
                    assert_eq!(Some(kept(text, lean)), full, "serde: {text}");
                }
            }
        }
        assert!(checked.0 > 1000 && checked.1 > 1000, "{checked:?}");
    }
}
