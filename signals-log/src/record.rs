//! One line of the log.

use crate::Release;
use ahp_engine::{Diagnostic, Level, RunRecord, Signal, SignalResponse, Uuid};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One line of the signal log: a JSON object whose first field, `kind`, says
/// what follows; the rest are the fields of the recorded value exactly as
/// the engine serializes it.
///
/// | `kind`     | fields                                    |
/// |------------|-------------------------------------------|
/// | `signal`   | `header`, `context`, `payload` ([`Signal`]) |
/// | `response` | `signal_id`, `consumed_at`, `action`, `details`? ([`SignalResponse`]) |
/// | `info`     | the [`Diagnostic`] fields (`level` is `info`) |
/// | `warning`  | the [`Diagnostic`] fields (`level` is `warning`) |
/// | `error`    | the [`Diagnostic`] fields (`level` is `error`) |
/// | `run`      | the [`RunRecord`] fields                   |
/// | `release`  | the [`Release`] fields                     |
///
/// For a diagnostic the `level` decides the kind: a diagnostic of level
/// `error` is written as `kind: "error"` even if held by
/// [`Record::Warning`] (build diagnostic records with [`Record::diagnostic`]
/// or `From` to get the matching variant). A line whose `kind` and `level`
/// disagree is rejected when read.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::Record;
///
/// let record = Record::from(Signal::block("rm -rf / is not allowed"));
/// let line = serde_json::to_string(&record).unwrap();
/// assert!(line.starts_with(r#"{"kind":"signal","header":{"#), "{line}");
/// let back: Record = serde_json::from_str(&line).unwrap();
/// assert_eq!(back, record);
/// assert_eq!(back.kind(), "signal");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A signal an oracle raised (`kind: "signal"`).
    Signal(Signal),
    /// What was done about a signal (`kind: "response"`).
    Response(SignalResponse),
    /// Information for the analyst, e.g. a script hook's `log` (`kind: "info"`).
    Info(Diagnostic),
    /// A warning raised while dispatching (`kind: "warning"`).
    Warning(Diagnostic),
    /// An error raised while dispatching (`kind: "error"`).
    Error(Diagnostic),
    /// One dispatch: event, entries, outcome, timing, config digest and the
    /// input context (`kind: "run"`).
    Run(RunRecord),
    /// A stop loop released at its cap (`kind: "release"`).
    Release(Release),
}

/// The wire form, borrowed for writing. `serde(tag)` writes the tag before
/// the value's own fields, so `kind` is always the first key of a line.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum WireRef<'a> {
    Signal(&'a Signal),
    Response(&'a SignalResponse),
    Info(&'a Diagnostic),
    Run(&'a RunRecord),
    Warning(&'a Diagnostic),
    Error(&'a Diagnostic),
    Release(&'a Release),
}

impl WireRef<'_> {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            WireRef::Signal(_) => "signal",
            WireRef::Response(_) => "response",
            WireRef::Info(_) => "info",
            WireRef::Run(_) => "run",
            WireRef::Warning(_) => "warning",
            WireRef::Error(_) => "error",
            WireRef::Release(_) => "release",
        }
    }

    /// The diagnostic's own level picks the kind.
    pub(crate) fn diagnostic(d: &Diagnostic) -> WireRef<'_> {
        match d.level {
            Level::Info => WireRef::Info(d),
            Level::Warning => WireRef::Warning(d),
            Level::Error => WireRef::Error(d),
        }
    }
}

/// The wire form, owned for reading. Works with `Signal`'s hand-written
/// `Deserialize` (serde buffers the object, then hands it on).
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Wire {
    Signal(Signal),
    Response(SignalResponse),
    Info(Diagnostic),
    Warning(Diagnostic),
    Error(Diagnostic),
    Run(RunRecord),
    Release(Release),
}

impl Record {
    /// Every `kind` a line can have, in the order of the variants.
    pub const KINDS: [&'static str; 7] = [
        "signal", "response", "info", "warning", "error", "run", "release",
    ];

    /// The record for a diagnostic: [`Record::Warning`] or
    /// [`Record::Error`] by its level.
    ///
    /// ```
    /// use ahp_engine::{Diagnostic, Event, Level};
    /// use ahp_signals_log::Record;
    /// let d = Diagnostic {
    ///     id: ahp_engine::Uuid::new_v4(),
    ///     level: Level::Error,
    ///     timestamp: chrono::Utc::now(),
    ///     source: "ahp".into(),
    ///     event: Some(Event::PreToolUse),
    ///     correlation_id: None,
    ///     message: "oracle timed out".into(),
    ///     file: None,
    ///     line: None,
    /// };
    /// assert!(matches!(Record::diagnostic(d), Record::Error(_)));
    /// ```
    pub fn diagnostic(diagnostic: Diagnostic) -> Record {
        match diagnostic.level {
            Level::Info => Record::Info(diagnostic),
            Level::Warning => Record::Warning(diagnostic),
            Level::Error => Record::Error(diagnostic),
        }
    }

    /// The line's `kind`: `signal`, `response`, `warning` or `error` (for a
    /// diagnostic, its level).
    ///
    /// ```
    /// use ahp_engine::Signal;
    /// use ahp_signals_log::Record;
    /// assert_eq!(Record::from(Signal::aid("see CONTRIBUTING.md")).kind(), "signal");
    /// ```
    pub fn kind(&self) -> &'static str {
        self.wire().kind()
    }

    /// When it happened: the signal's `header.timestamp`, the response's
    /// `consumed_at`, the diagnostic's `timestamp`.
    pub fn timestamp(&self) -> DateTime<Utc> {
        match self {
            Record::Signal(s) => s.header.timestamp,
            Record::Response(r) => r.consumed_at,
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => d.timestamp,
            Record::Run(r) => r.timestamp,
            Record::Release(r) => r.timestamp,
        }
    }

    /// The record's stable id: a signal's `header.id`, the `id` of any
    /// other record.
    ///
    /// Every record ahp writes carries one; a record read from a log
    /// written before records had ids gets one derived from its line (see
    /// [`Record::derive_id`]), so the same line has the same id at every
    /// read, on every machine.
    ///
    /// ```
    /// use ahp_engine::Signal;
    /// use ahp_signals_log::Record;
    /// let s = Signal::aid("see CONTRIBUTING.md");
    /// let id = s.header.id;
    /// assert_eq!(Record::from(s).id(), id);
    /// ```
    pub fn id(&self) -> Uuid {
        match self {
            Record::Signal(s) => s.header.id,
            Record::Response(r) => r.id,
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => d.id,
            Record::Run(r) => r.id,
            Record::Release(r) => r.id,
        }
    }

    /// Gives a record that has no id (nil: read from an older log) the id
    /// derived from its `line`: a 128-bit FNV-1a hash of the bytes, as a
    /// version-8 (custom) UUID. Records that have an id keep it.
    ///
    /// ```
    /// use ahp_signals_log::Record;
    /// let line = br#"{"kind":"info","level":"info","timestamp":"2026-01-01T00:00:00Z","source":"ahp","message":"m"}"#;
    /// let mut a: Record = serde_json::from_slice(line).unwrap();
    /// assert!(a.id().is_nil());
    /// a.derive_id(line);
    /// let mut b: Record = serde_json::from_slice(line).unwrap();
    /// b.derive_id(line);
    /// assert!(!a.id().is_nil());
    /// assert_eq!(a.id(), b.id());
    /// assert_eq!(a.id().get_version_num(), 8);
    /// ```
    pub fn derive_id(&mut self, line: &[u8]) {
        let slot = match self {
            Record::Signal(s) => &mut s.header.id,
            Record::Response(r) => &mut r.id,
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => &mut d.id,
            Record::Run(r) => &mut r.id,
            Record::Release(r) => &mut r.id,
        };
        if slot.is_nil() {
            *slot = line_id(line);
        }
    }

    pub(crate) fn wire(&self) -> WireRef<'_> {
        match self {
            Record::Signal(s) => WireRef::Signal(s),
            Record::Response(r) => WireRef::Response(r),
            Record::Info(d) | Record::Warning(d) | Record::Error(d) => WireRef::diagnostic(d),
            Record::Run(r) => WireRef::Run(r),
            Record::Release(r) => WireRef::Release(r),
        }
    }
}

impl From<Signal> for Record {
    fn from(signal: Signal) -> Record {
        Record::Signal(signal)
    }
}

impl From<SignalResponse> for Record {
    fn from(response: SignalResponse) -> Record {
        Record::Response(response)
    }
}

impl From<Release> for Record {
    fn from(release: Release) -> Record {
        Record::Release(release)
    }
}

impl From<Diagnostic> for Record {
    /// As [`Record::diagnostic`].
    fn from(diagnostic: Diagnostic) -> Record {
        Record::diagnostic(diagnostic)
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.wire().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let check = |kind: Level, d: Diagnostic| {
            if d.level == kind {
                Ok(d)
            } else {
                Err(serde::de::Error::custom(format!(
                    "a `{}` record holds a diagnostic of level `{}`",
                    level_name(kind),
                    level_name(d.level)
                )))
            }
        };
        Ok(match Wire::deserialize(d)? {
            Wire::Signal(s) => Record::Signal(s),
            Wire::Response(r) => Record::Response(r),
            Wire::Info(d) => Record::Info(check(Level::Info, d)?),
            Wire::Warning(d) => Record::Warning(check(Level::Warning, d)?),
            Wire::Error(d) => Record::Error(check(Level::Error, d)?),
            Wire::Run(r) => Record::Run(r),
            Wire::Release(r) => Record::Release(r),
        })
    }
}

/// The id of a line that has none: FNV-1a (128-bit) over its bytes, with
/// the UUID version (8, custom) and variant bits set. Stable by
/// construction: no seed, no platform dependence.
pub(crate) fn line_id(line: &[u8]) -> Uuid {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut hash = OFFSET;
    for &b in line {
        hash ^= u128::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    let mut bytes = hash.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}

fn level_name(level: Level) -> &'static str {
    level.as_str()
}
