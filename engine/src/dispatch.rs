//! Dispatch: select → order → evaluate → clamp → verdict, and recording.
//!
//! A wave's entries run concurrently, polled together in the dispatching
//! task (a panicking oracle is an oracle error, not a crashed engine; an
//! oracle with heavy CPU work should hand it to `spawn_blocking`); results
//! are taken in config order so verdicts are deterministic. Control
//! modifications are applied to the context before the next wave.

use crate::policy::{Entry, OnBlock, OnError, Plan, Policy};
use crate::signal::{Modification, Payload};
use crate::{Evaluation, Event, History, HookContext, Intensity, Outcome, Registry, Signal};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

crate::name_enum! {
    /// Warning or error.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Level {
        /// Recorded for the analyst (e.g. a script hook's `log` field).
        Info => "info",
        /// Something to look at; the decision stands.
        Warning => "warning",
        /// Something failed.
        Error => "error",
    }
}

/// A warning or error raised while dispatching (an oracle failed, a
/// modification could not be applied, the log could not be written, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// This record's own id, unique and stable: a sink deduplicates by it.
    /// Written by every ahp since records had ids; a line from an older log
    /// has none, and the reader derives one from the line's bytes (so it is
    /// the same at every read).
    #[serde(default, skip_serializing_if = "uuid::Uuid::is_nil")]
    pub id: uuid::Uuid,
    /// warning or error.
    pub level: Level,
    /// When.
    pub timestamp: DateTime<Utc>,
    /// The entry concerned, or `ahp`.
    pub source: String,
    /// The event; absent when the failure came before the event was known
    /// (an agent payload ahp could not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Event>,
    /// The dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// What happened.
    pub message: String,
    /// The file the diagnostic is about (a policy file with an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The 1-based line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// What became of one selected entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// Ran and said nothing.
    Accepted,
    /// Ran and raised signals.
    Signalled,
    /// Failed (error, panic or timeout); see diagnostics.
    Failed,
    /// Not run: an earlier wave blocked and `on_block` is `stop`.
    SkippedAfterBlock,
    /// Started detached (`async: true`); its result is only logged.
    Detached,
    /// Not started: `async: true` entries start only when nothing blocked.
    DetachedNotStarted,
}

/// The record of one entry in one dispatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryRun {
    /// The entry's id.
    pub id: String,
    /// Its oracle.
    pub oracle: String,
    /// Its wave (0-based).
    pub wave: usize,
    /// What happened.
    pub status: EntryStatus,
    /// Time spent, in microseconds.
    pub duration_us: u64,
    /// A `mode: shadow` entry: what it said is in [`Verdict::shadow`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadow: bool,
}

/// A control modification that was applied, with its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedChange {
    /// The entry that asked for it.
    pub source: String,
    /// The signal that carried it.
    pub signal_id: uuid::Uuid,
    /// The change.
    #[serde(flatten)]
    pub modification: Modification,
}

/// The answer of one dispatch.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The strongest intensity, or accept.
    pub outcome: Outcome,
    /// The event.
    pub event: Event,
    /// Ties this dispatch's records together.
    pub correlation_id: String,
    /// Every signal, in run order (config order within a wave).
    pub signals: Vec<Signal>,
    /// What `mode: shadow` entries would have said: recorded, never part
    /// of the outcome or of an agent's answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadow: Vec<Signal>,
    /// Control modifications applied to the context, in order.
    pub context_changes: Vec<AppliedChange>,
    /// Warnings and errors.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    /// What each selected entry did.
    pub entries: Vec<EntryRun>,
    /// The context after all modifications.
    #[serde(skip)]
    pub context: HookContext,
}

impl Verdict {
    /// The block signals.
    pub fn blocks(&self) -> impl Iterator<Item = &Signal> {
        self.signals
            .iter()
            .filter(|s| s.intensity() == Intensity::Block)
    }
}

/// One dispatch as recorded in the log (`kind: "run"`): what was asked,
/// what ran and what was decided — enough to explain the decision and to
/// replay it against another policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// This record's own id, unique and stable: a sink deduplicates by it.
    /// Written by every ahp since records had ids; a line from an older log
    /// has none, and the reader derives one from the line's bytes (so it is
    /// the same at every read).
    #[serde(default, skip_serializing_if = "uuid::Uuid::is_nil")]
    pub id: uuid::Uuid,
    /// When the dispatch finished.
    pub timestamp: DateTime<Utc>,
    /// The event.
    pub event: Event,
    /// Ties the run to its signals.
    pub correlation_id: String,
    /// The agent session, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The issue, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<String>,
    /// The verdict.
    pub outcome: Outcome,
    /// What each selected entry did.
    pub entries: Vec<EntryRun>,
    /// The signals of the verdict, in order.
    pub signal_ids: Vec<uuid::Uuid>,
    /// Wall time of the dispatch, in microseconds.
    pub duration_us: u64,
    /// Digest of the policy that decided (see [`Policy::digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_digest: Option<String>,
    /// The context as received, before any control modification (without
    /// `raw`), so the decision can be replayed.
    pub context: serde_json::Value,
}

/// A diagnostic that `source` (an entry) raised in the dispatch of `ctx`.
fn entry_note(
    level: Level,
    source: &str,
    event: Event,
    ctx: &HookContext,
    message: String,
) -> Diagnostic {
    Diagnostic {
        id: uuid::Uuid::new_v4(),
        level,
        timestamp: Utc::now(),
        source: source.to_string(),
        event: Some(event),
        correlation_id: ctx.correlation_id.clone(),
        message,
        file: None,
        line: None,
    }
}

/// A failure to write a record.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SinkError(pub String);

/// Where signals and diagnostics are recorded (the signal log implements
/// it). Called before the verdict is returned.
pub trait SignalSink: Send + Sync {
    /// Records one signal.
    fn record_signal(&self, signal: &Signal) -> Result<(), SinkError>;
    /// Records one warning or error.
    fn record_diagnostic(&self, diagnostic: &Diagnostic) -> Result<(), SinkError>;
    /// Records one dispatch. The default records nothing.
    fn record_run(&self, run: &RunRecord) -> Result<(), SinkError> {
        let _ = run;
        Ok(())
    }
}

/// Something that can compile itself into a [`Policy`] with a registry: the
/// loaded hooks.yaml layers implement it.
pub trait PolicySource {
    /// Error type of compiling.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Builds the policy, resolving oracle names in `registry`.
    fn compile(&self, registry: &Registry) -> Result<Policy, Self::Error>;
}

impl PolicySource for Policy {
    type Error = std::convert::Infallible;
    fn compile(&self, _: &Registry) -> Result<Policy, Self::Error> {
        Ok(self.clone())
    }
}

/// Error of [`EngineBuilder::build`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The builder got no config.
    #[error("no policy: call .config(..) or .policy(..) before .build()")]
    NoPolicy,
    /// The config did not compile.
    #[error(transparent)]
    Config(Box<dyn std::error::Error + Send + Sync>),
}

/// Builds an [`Engine`].
///
/// ```
/// use ahp_engine::{Engine, Event, HookContext, Outcome, Policy, Registry};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let engine = Engine::builder()
///     .registry(Registry::new())
///     .config(Policy::default())
///     .build()
///     .unwrap();
/// let verdict = engine.dispatch(Event::PreToolUse, HookContext::default()).await;
/// assert_eq!(verdict.outcome, Outcome::Accept);
/// # });
/// ```
#[derive(Default)]
pub struct EngineBuilder {
    registry: Registry,
    policy: Option<Result<Policy, EngineError>>,
    sink: Option<Arc<dyn SignalSink>>,
    defer_detached: bool,
    history: Option<Arc<dyn History>>,
    deadline: Option<Instant>,
}

impl EngineBuilder {
    /// Earlier dispatches, for the policy's escalation rules. Without a
    /// history no signal is escalated.
    pub fn history(mut self, history: Arc<dyn History>) -> Self {
        self.history = Some(history);
        self
    }

    /// The registry used to resolve oracle names in the config. Set it
    /// before `.config(..)`.
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Compiles `source` (e.g. loaded hooks.yaml layers) with the registry.
    pub fn config<S: PolicySource>(mut self, source: S) -> Self {
        self.policy = Some(
            source
                .compile(&self.registry)
                .map_err(|e| EngineError::Config(Box::new(e))),
        );
        self
    }

    /// Uses an already compiled policy.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(Ok(policy));
        self
    }

    /// Records every signal and diagnostic here.
    pub fn sink(mut self, sink: Arc<dyn SignalSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Do not start `async: true` entries in this process: `dispatch` marks
    /// them [`EntryStatus::Detached`] and the caller hands them to a
    /// longer-lived process ([`Engine::run_detached`]). A short-lived CLI
    /// uses this so that async hooks never delay its exit.
    pub fn defer_detached(mut self, defer: bool) -> Self {
        self.defer_detached = defer;
        self
    }

    /// The moment every dispatch of this engine must have answered by:
    /// an entry still running then fails (it follows its `on_error`, and
    /// blocks under `fail_closed`), and an entry of a later wave gets no
    /// time at all. For a caller that waits only so long, such as an agent
    /// that goes on without the hook's answer once its own timeout passes.
    /// Each entry's own `timeout` still applies within it. Detached
    /// (`async: true`) entries answer nobody and are not bound by it.
    ///
    /// ```
    /// use ahp_engine::{Engine, Policy, Registry};
    /// use std::time::{Duration, Instant};
    /// let engine = Engine::builder()
    ///     .registry(Registry::new())
    ///     .policy(Policy::default())
    ///     .deadline(Instant::now() + Duration::from_secs(595))
    ///     .build()
    ///     .unwrap();
    /// # let _ = engine;
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The engine, or the config's error.
    pub fn build(self) -> Result<Engine, EngineError> {
        let policy = self.policy.ok_or(EngineError::NoPolicy)??;
        Ok(Engine {
            policy: Arc::new(policy),
            sink: self.sink,
            background: Mutex::new(Vec::new()),
            defer_detached: self.defer_detached,
            history: self.history,
            deadline: self.deadline,
        })
    }
}

/// Runs policies. Cheap to share (`Arc<Engine>`); one engine serves many
/// dispatches.
pub struct Engine {
    policy: Arc<Policy>,
    sink: Option<Arc<dyn SignalSink>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    defer_detached: bool,
    history: Option<Arc<dyn History>>,
    deadline: Option<Instant>,
}

/// The intensity a signal is delivered at for `event`: unchanged when
/// allowed, else the strongest allowed intensity below it. Control is
/// skipped as a target (a control needs modifications the original does
/// not have); aid is always allowed, so clamping never raises.
///
/// ```
/// use ahp_engine::{dispatch::clamp, Event, Intensity};
/// assert_eq!(clamp(Event::PostToolUse, Intensity::Block), Intensity::Aid);
/// assert_eq!(clamp(Event::PreToolUse, Intensity::Block), Intensity::Block);
/// assert_eq!(clamp(Event::PreIssueClose, Intensity::Prompt), Intensity::Aid);
/// assert_eq!(clamp(Event::PreIssueStart, Intensity::Prompt), Intensity::Aid);
/// ```
pub fn clamp(event: Event, intensity: Intensity) -> Intensity {
    if event.allows(intensity) {
        return intensity;
    }
    event
        .allowed()
        .iter()
        .copied()
        .filter(|i| *i < intensity && *i != Intensity::Control)
        .max()
        .unwrap_or(Intensity::Aid)
}

enum Outcome1 {
    Signals(Evaluation),
    Failed(String),
}

/// Secrets shorter than this are not redacted: replacing every `abc` of a
/// record would mangle it and protect nothing.
pub const MIN_REDACTION_LEN: usize = 8;

/// What replaces a redacted secret.
pub const REDACTED: &str = "***";

/// Replaces every occurrence of each secret (longest first, those of at
/// least [`MIN_REDACTION_LEN`] characters) in every string of `value` with
/// `***`.
///
/// ```
/// use ahp_engine::dispatch::redact_value;
/// let mut v = serde_json::json!({"cmd": "export K=AKIAABCDEFGHIJKLMNOP", "n": [1, "AKIAABCDEFGHIJKLMNOP"]});
/// redact_value(&mut v, &["AKIAABCDEFGHIJKLMNOP".to_string()]);
/// assert_eq!(v, serde_json::json!({"cmd": "export K=***", "n": [1, "***"]}));
/// ```
pub fn redact_value(value: &mut serde_json::Value, secrets: &[String]) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Some(r) = redact_str(s, secrets) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, secrets)),
        _ => {}
    }
}

/// `s` with the secrets replaced, or `None` when it holds none.
fn redact_str(s: &str, secrets: &[String]) -> Option<String> {
    let mut out: Option<String> = None;
    for secret in secrets {
        let cur = out.as_deref().unwrap_or(s);
        if cur.contains(secret.as_str()) {
            out = Some(cur.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// The usable secrets of a dispatch: long enough, longest first (so a
/// secret containing another is replaced whole), each once.
fn redaction_list(mut secrets: Vec<String>) -> Vec<String> {
    secrets.retain(|s| s.chars().count() >= MIN_REDACTION_LEN);
    secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    secrets.dedup();
    secrets
}

/// A signal with the secrets redacted from all of its text.
fn redact_signal(s: Signal, secrets: &[String]) -> Signal {
    if secrets.is_empty() {
        return s;
    }
    let Ok(mut v) = serde_json::to_value(&s) else {
        return s;
    };
    let before = v.clone();
    redact_value(&mut v, secrets);
    if v == before {
        return s;
    }
    serde_json::from_value(v).unwrap_or(s)
}

type WaveFuture<'a> = Pin<Box<dyn Future<Output = (Outcome1, Duration)> + Send + 'a>>;

/// Runs a wave's entries concurrently inside the dispatching task: every
/// pending future is polled on each wake, in config order. Spawning a task
/// per entry cost more than most oracles' evaluation (a clone of the entry
/// and of the context, a task allocation, a join); polling in place needs
/// neither. A future that panics is dropped and its slot left empty, so a
/// panicking oracle fails its entry, not the dispatch.
struct WaveJoin<'a> {
    futures: Vec<Option<WaveFuture<'a>>>,
    done: Vec<Option<(Outcome1, Duration)>>,
    left: usize,
}

impl<'a> WaveJoin<'a> {
    fn new(futures: Vec<WaveFuture<'a>>) -> Self {
        let left = futures.len();
        WaveJoin {
            done: (0..left).map(|_| None).collect(),
            futures: futures.into_iter().map(Some).collect(),
            left,
        }
    }
}

impl Future for WaveJoin<'_> {
    type Output = Vec<Option<(Outcome1, Duration)>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        for (slot, cell) in this.futures.iter_mut().enumerate() {
            let Some(fut) = cell else { continue };
            match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
                Ok(Poll::Pending) => continue,
                Ok(Poll::Ready(r)) => this.done[slot] = Some(r),
                Err(_) => {}
            }
            *cell = None;
            this.left -= 1;
        }
        if this.left == 0 {
            Poll::Ready(std::mem::take(&mut this.done))
        } else {
            Poll::Pending
        }
    }
}

/// What an entry gets past the time its oracle needs ([`Oracle::time_needed`]):
/// the oracle stops its own command at its limit and still has to answer.
///
/// ```
/// assert!(ahp_engine::dispatch::TIME_NEEDED_MARGIN.as_secs() >= 1);
/// ```
pub const TIME_NEEDED_MARGIN: Duration = Duration::from_secs(2);

/// Runs one entry under its time limit, counted from `start` (the clock
/// read that also times the entry), and within the dispatch's `deadline`
/// when it has one ([`EngineBuilder::deadline`]).
async fn run_entry(
    entry: &Entry,
    ctx: &HookContext,
    default_timeout: Duration,
    start: Instant,
    deadline: Option<Instant>,
) -> Outcome1 {
    let limit = entry
        .timeout
        .unwrap_or_else(|| match entry.oracle.time_needed() {
            Some(needed) => default_timeout.max(needed.saturating_add(TIME_NEEDED_MARGIN)),
            None => default_timeout,
        });
    let own_end = start.checked_add(limit);
    // The call's deadline binds when it comes before the entry's own end.
    let call_end = deadline.filter(|d| own_end.is_none_or(|own| *d < own));
    let evaluation = entry.oracle.evaluate_full(ctx);
    // A future that is ready at once (the built-in oracles) still answers
    // past the deadline: the timer is looked at only when it is pending.
    let timed = match call_end.or(own_end) {
        Some(end) => tokio::time::timeout_at(end.into(), evaluation),
        None => tokio::time::timeout(limit, evaluation),
    };
    match timed.await {
        Ok(Ok(ev)) => Outcome1::Signals(ev),
        Ok(Err(e)) => Outcome1::Failed(e.message),
        Err(_) if call_end.is_some() => Outcome1::Failed(format!(
            "stopped after {} ms at the call's deadline, before its caller stops waiting (settings.agent_timeout)",
            start.elapsed().as_millis()
        )),
        Err(_) => Outcome1::Failed(format!("timed out after {} ms", limit.as_millis())),
    }
}

impl Engine {
    /// Starts a builder.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The compiled policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Applies the policy's escalation rules (after clamping; the raise is
    /// limited to what the event allows).
    fn escalate(&self, event: Event, ctx: &HookContext, s: Signal) -> Signal {
        match &self.history {
            Some(h) if !self.policy.escalation().is_empty() => crate::escalation::escalate(
                self.policy.escalation(),
                h.as_ref(),
                event,
                ctx.session_id.as_deref(),
                Utc::now(),
                s,
            ),
            _ => s,
        }
    }

    fn record_signal(&self, s: &Signal, diags: &mut Vec<Diagnostic>) {
        if let Some(sink) = &self.sink
            && let Err(e) = sink.record_signal(s)
        {
            diags.push(Diagnostic {
                id: uuid::Uuid::new_v4(),
                level: Level::Error,
                timestamp: Utc::now(),
                source: "ahp".into(),
                event: s.context.hook,
                correlation_id: s.header.correlation_id.clone(),
                message: format!("could not record signal {}: {e}", s.header.id),
                file: None,
                line: None,
            });
        }
    }

    /// Turns raw oracle output into delivered signals: stamped with the
    /// entry and event, overridden, clamped. The note, when there is one,
    /// says why an override was not applied.
    fn finish_signal(
        entry: &Entry,
        event: Event,
        ctx: &HookContext,
        mut s: Signal,
    ) -> (Signal, Option<String>) {
        let mut note = None;
        s.header.intensity = s.payload.intensity();
        s.header.source = entry.id.clone();
        s.header.correlation_id = ctx.correlation_id.clone();
        s.context.hook = Some(event);
        if s.context.issue_id.is_none() {
            s.context.issue_id = ctx
                .lookup("issue.id")
                .and_then(|v| v.as_str().map(str::to_string));
        }
        let by_env = ctx
            .environment
            .as_ref()
            .and_then(|e| entry.intensity_by_environment.get(e).copied());
        if let Some(want) = by_env.or(entry.intensity) {
            // A control with nothing to modify would let the call through
            // unchanged: the finding keeps its own intensity instead.
            if want == Intensity::Control && !crate::escalation::has_modification(&s) {
                note = Some(format!(
                    "entry `{}` asks for intensity control, but its {} signal has no modification to apply; it stays {} (use an oracle option that produces a control, e.g. FileChangeLimiter `action: control` or a Rules rule with `modifications`)",
                    entry.id,
                    s.intensity(),
                    s.intensity()
                ));
            } else {
                s = s.convert_to(want);
            }
        }
        let delivered = clamp(event, s.intensity());
        if delivered != s.intensity() {
            let from = s.intensity();
            s = s.convert_to(delivered);
            s.header.clamped_from = Some(from);
        }
        (s, note)
    }

    /// Sets the event, a correlation id and the default environment on
    /// `ctx`, and returns the empty verdict of the run.
    fn begin(&self, event: Event, ctx: &mut HookContext) -> Verdict {
        ctx.event = Some(event);
        let correlation_id = ctx
            .correlation_id
            .get_or_insert_with(|| uuid::Uuid::new_v4().to_string())
            .clone();
        if ctx.environment.is_none() {
            ctx.environment = self.policy.settings.environment.clone();
        }
        Verdict {
            outcome: Outcome::Accept,
            event,
            correlation_id,
            signals: Vec::new(),
            shadow: Vec::new(),
            context_changes: Vec::new(),
            diagnostics: Vec::new(),
            entries: Vec::new(),
            context: HookContext::default(),
        }
    }

    /// Evaluates `event` against `ctx` and returns the verdict. Never fails:
    /// oracle failures follow each entry's `on_error` and are reported in
    /// `diagnostics`.
    pub async fn dispatch(&self, event: Event, mut ctx: HookContext) -> Verdict {
        let started = Instant::now();
        let mut verdict = self.begin(event, &mut ctx);
        // The run record's copy of the input, taken before oracles change
        // the context; nothing to take when nothing records.
        let input = self.sink.as_ref().map(|_| {
            let mut v = ctx.to_value();
            if let Some(m) = v.as_object_mut() {
                m.remove("raw");
            }
            v
        });
        // The shell model is derived from the command: the record keeps
        // the command, and a replay derives the model again.
        if let Some(tool) = ctx.tool.as_mut() {
            tool.model_shell(ctx.work_dir.as_deref());
        }
        let Some(plan) = self.policy.plan(event) else {
            if let Some(input) = input {
                self.record_run(&verdict, &ctx, input, started);
            }
            verdict.context = ctx;
            return verdict;
        };
        let selected: Vec<bool> = plan.entries.iter().map(|e| e.when.holds(&ctx)).collect();
        let mut blocked = false;
        // The last wave whose controls rewrote the tool input.
        let mut last_change: Option<usize> = None;
        let mut redactions: Vec<String> = Vec::new();
        for (wave_no, wave) in plan.waves.iter().enumerate() {
            let members: Vec<usize> = wave
                .iter()
                .copied()
                .filter(|i| selected[*i] && !plan.entries[*i].is_async)
                .collect();
            if members.is_empty() {
                continue;
            }
            if blocked && self.policy.settings.on_block == OnBlock::Stop {
                for i in members {
                    tracing::debug!(
                        "[HOOK DEBUG] [SYNC] Skipping hook '{}' for event '{}': an earlier entry blocked",
                        plan.entries[i].id,
                        event
                    );
                    verdict.entries.push(EntryRun {
                        id: plan.entries[i].id.clone(),
                        oracle: plan.entries[i].oracle_name.clone(),
                        wave: wave_no,
                        status: EntryStatus::SkippedAfterBlock,
                        duration_us: 0,
                        shadow: plan.entries[i].shadow,
                    });
                }
                continue;
            }
            let wave_start = verdict.signals.len();
            let results = self.run_wave(plan, &members, &ctx, event).await;
            for (i, (mut result, elapsed)) in members.iter().copied().zip(results) {
                let entry = &plan.entries[i];
                if let Outcome1::Signals(ev) = &mut result {
                    redactions.append(&mut ev.redactions);
                    for note in &ev.notes {
                        verdict.diagnostics.push(entry_note(
                            Level::Info,
                            &entry.id,
                            event,
                            &ctx,
                            note.clone(),
                        ));
                    }
                }
                let status = match result {
                    Outcome1::Signals(ev) if ev.signals.is_empty() => EntryStatus::Accepted,
                    Outcome1::Signals(ev) => {
                        // Recorded once every entry has run, so that a
                        // secret found by a later entry is redacted from
                        // the signals of earlier ones too.
                        for s in ev.signals {
                            let (s, note) = Self::finish_signal(entry, event, &ctx, s);
                            if let Some(message) = note {
                                verdict.diagnostics.push(entry_note(
                                    Level::Warning,
                                    &entry.id,
                                    event,
                                    &ctx,
                                    message,
                                ));
                            }
                            let mut s = self.escalate(event, &ctx, s);
                            if entry.shadow {
                                s.header.shadow = true;
                                verdict.shadow.push(s);
                            } else {
                                verdict.signals.push(s);
                            }
                        }
                        EntryStatus::Signalled
                    }
                    Outcome1::Failed(msg) => {
                        if entry.shadow {
                            // A shadow entry cannot fail anything closed.
                            verdict.diagnostics.push(entry_note(
                                Level::Warning,
                                &entry.id,
                                event,
                                &ctx,
                                format!(
                                    "shadow entry `{}` ({}) failed: {msg}",
                                    entry.id, entry.oracle_name
                                ),
                            ));
                        } else {
                            self.fail(entry, event, &ctx, &msg, &mut verdict);
                        }
                        EntryStatus::Failed
                    }
                };
                tracing::debug!(
                    "[HOOK DEBUG] [SYNC] Finished hook '{}' for event '{}': {:?} in {} us",
                    entry.id,
                    event,
                    status,
                    elapsed.as_micros()
                );
                verdict.entries.push(EntryRun {
                    id: entry.id.clone(),
                    oracle: entry.oracle_name.clone(),
                    wave: wave_no,
                    status,
                    duration_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                    shadow: entry.shadow,
                });
            }
            let input_before = ctx.tool.as_ref().map(|t| t.input.clone());
            self.apply_controls(&mut ctx, &mut verdict, wave_start);
            if ctx.tool.as_ref().map(|t| &t.input) != input_before.as_ref() {
                last_change = Some(wave_no);
            }
            blocked = verdict
                .signals
                .iter()
                .any(|s| s.intensity() == Intensity::Block);
        }
        if let Some(changed) = last_change
            && !blocked
        {
            self.recheck(plan, changed, event, &ctx, &mut verdict).await;
        }
        let spawn = !self.defer_detached;
        self.start_detached(plan, &selected, blocked, spawn, event, &ctx, &mut verdict);
        verdict.outcome =
            Outcome::from_strongest(verdict.signals.iter().map(Signal::intensity).max());
        let redactions = redaction_list(redactions);
        if !redactions.is_empty() {
            Self::redact_verdict(&mut verdict, &redactions);
        }
        let signals = std::mem::take(&mut verdict.signals);
        let shadow = std::mem::take(&mut verdict.shadow);
        for s in signals.iter().chain(&shadow) {
            self.record_signal(s, &mut verdict.diagnostics);
        }
        verdict.signals = signals;
        verdict.shadow = shadow;
        for d in &verdict.diagnostics {
            if let Some(sink) = &self.sink {
                // A diagnostic that cannot be written is still returned in
                // the verdict; the caller prints it.
                let _ = sink.record_diagnostic(d);
            }
        }
        if let Some(mut input) = input {
            redact_value(&mut input, &redactions);
            self.record_run(&verdict, &ctx, input, started);
        }
        verdict.context = ctx;
        verdict
    }

    /// Redacts the secrets from everything of the verdict that is printed
    /// or recorded. The context itself is left alone: it is what the agent
    /// asked for, and adapters build their answer from it.
    fn redact_verdict(verdict: &mut Verdict, secrets: &[String]) {
        verdict.signals = std::mem::take(&mut verdict.signals)
            .into_iter()
            .map(|s| redact_signal(s, secrets))
            .collect();
        verdict.shadow = std::mem::take(&mut verdict.shadow)
            .into_iter()
            .map(|s| redact_signal(s, secrets))
            .collect();
        for d in &mut verdict.diagnostics {
            if let Some(r) = redact_str(&d.message, secrets) {
                d.message = r;
            }
        }
        for c in &mut verdict.context_changes {
            if let Some(v) = c.modification.value.as_mut() {
                redact_value(v, secrets);
            }
            if let Some(r) = c
                .modification
                .description
                .as_deref()
                .and_then(|d| redact_str(d, secrets))
            {
                c.modification.description = Some(r);
            }
        }
    }

    fn record_run(
        &self,
        verdict: &Verdict,
        ctx: &HookContext,
        input: serde_json::Value,
        started: Instant,
    ) {
        let Some(sink) = &self.sink else { return };
        let run = RunRecord {
            id: uuid::Uuid::new_v4(),
            timestamp: Utc::now(),
            event: verdict.event,
            correlation_id: verdict.correlation_id.clone(),
            session_id: ctx.session_id.clone(),
            issue_id: ctx
                .lookup("issue.id")
                .and_then(|v| v.as_str().map(str::to_string)),
            outcome: verdict.outcome,
            entries: verdict.entries.clone(),
            signal_ids: verdict.signals.iter().map(|s| s.header.id).collect(),
            duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            config_digest: self.policy.digest().map(str::to_string),
            context: input,
        };
        // Like diagnostics: a run that cannot be written does not change
        // the decision.
        let _ = sink.record_run(&run);
    }

    async fn run_wave(
        &self,
        plan: &Plan,
        members: &[usize],
        ctx: &HookContext,
        event: Event,
    ) -> Vec<(Outcome1, Duration)> {
        let default_timeout = self.policy.settings.default_timeout;
        let deadline = self.deadline;
        let futures = members
            .iter()
            .map(|&i| {
                let entry = &plan.entries[i];
                tracing::debug!(
                    "[HOOK DEBUG] [SYNC] Starting hook '{}' for event '{}'",
                    entry.id,
                    event
                );
                Box::pin(async move {
                    let start = Instant::now();
                    let r = run_entry(entry, ctx, default_timeout, start, deadline).await;
                    (r, start.elapsed())
                }) as WaveFuture<'_>
            })
            .collect();
        WaveJoin::new(futures)
            .await
            .into_iter()
            .map(|o| {
                // An empty slot is an oracle that panicked.
                o.unwrap_or_else(|| {
                    (
                        Outcome1::Failed("the oracle panicked".into()),
                        Duration::ZERO,
                    )
                })
            })
            .collect()
    }

    fn fail(
        &self,
        entry: &Entry,
        event: Event,
        ctx: &HookContext,
        msg: &str,
        verdict: &mut Verdict,
    ) {
        let closed = entry.on_error == OnError::Block;
        let message = format!(
            "oracle `{}` ({}) failed: {msg}; {}",
            entry.id,
            entry.oracle_name,
            if closed {
                "failing closed (on_error: block, or fail_closed), so this blocks"
            } else {
                "failing open (set on_error: block to fail closed)"
            }
        );
        tracing::debug!("[HOOK DEBUG] [SYNC] {message}");
        verdict.diagnostics.push(entry_note(
            if closed { Level::Error } else { Level::Warning },
            &entry.id,
            event,
            ctx,
            message.clone(),
        ));
        if closed {
            let s = Signal::block(message)
                .with_type("oracle-error")
                .with_resolution_path([format!(
                    "fix or disable entry `{}` (defined at {})",
                    entry.id, entry.origin
                )]);
            let (s, _) = Self::finish_signal(entry, event, ctx, s);
            verdict.signals.push(s);
        }
    }

    /// Applies the modifications of the control signals from index `from`
    /// of the verdict's signals on (those of the wave that just ran), in
    /// order. Each is tried once: one that fails is a warning, and is not
    /// tried again after a later wave.
    /// The guards ([`Entry::recheck`]) that judged the tool input before a
    /// control rewrote it (in wave `changed` or earlier) judge the final
    /// input again: a rewrite must not carry past them what they block or
    /// ask about. Their controls are not applied again.
    async fn recheck(
        &self,
        plan: &Plan,
        changed: usize,
        event: Event,
        ctx: &HookContext,
        verdict: &mut Verdict,
    ) {
        let members: Vec<usize> = plan
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.recheck && !e.shadow && !e.is_async && e.when.holds(ctx))
            .filter(|(_, e)| {
                verdict.entries.iter().any(|r| {
                    r.id == e.id
                        && r.wave <= changed
                        && matches!(r.status, EntryStatus::Accepted | EntryStatus::Signalled)
                })
            })
            .map(|(i, _)| i)
            .collect();
        if members.is_empty() {
            return;
        }
        let results = self.run_wave(plan, &members, ctx, event).await;
        for (i, (result, _)) in members.iter().copied().zip(results) {
            let entry = &plan.entries[i];
            let Outcome1::Signals(ev) = result else {
                continue;
            };
            for s in ev.signals {
                let (s, _) = Self::finish_signal(entry, event, ctx, s);
                let s = self.escalate(event, ctx, s);
                if matches!(s.intensity(), Intensity::Block | Intensity::Prompt) {
                    verdict.signals.push(s);
                }
            }
        }
    }

    fn apply_controls(&self, ctx: &mut HookContext, verdict: &mut Verdict, from: usize) {
        let mut changes = Vec::new();
        for s in &verdict.signals[from..] {
            if let Payload::Control(c) = &s.payload {
                for m in &c.modifications {
                    changes.push(AppliedChange {
                        source: s.header.source.clone(),
                        signal_id: s.header.id,
                        modification: m.clone(),
                    });
                }
            }
        }
        let applied = !changes.is_empty();
        for change in changes {
            match ctx.apply(&change.modification) {
                Ok(()) => verdict.context_changes.push(change),
                Err(e) => verdict.diagnostics.push(entry_note(
                    Level::Warning,
                    &change.source,
                    verdict.event,
                    ctx,
                    e.to_string(),
                )),
            }
        }
        // The shell model is the command's: a rewritten command is
        // modelled again, so later entries judge what will run.
        if applied && let Some(tool) = ctx.tool.as_mut() {
            tool.shell = None;
            tool.model_shell(ctx.work_dir.as_deref());
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start_detached(
        &self,
        plan: &Plan,
        selected: &[bool],
        blocked: bool,
        spawn: bool,
        event: Event,
        ctx: &HookContext,
        verdict: &mut Verdict,
    ) {
        let shared = Arc::new(ctx.clone());
        for (wave_no, i) in plan
            .waves
            .iter()
            .enumerate()
            .flat_map(|(w, idxs)| idxs.iter().map(move |i| (w, *i)))
        {
            let entry = &plan.entries[i];
            if !(selected[i] && entry.is_async) {
                continue;
            }
            let status = if blocked {
                EntryStatus::DetachedNotStarted
            } else if !spawn {
                EntryStatus::Detached
            } else {
                let entry = entry.clone();
                let ctx = Arc::clone(&shared);
                let sink = self.sink.clone();
                let default_timeout = self.policy.settings.default_timeout;
                tracing::debug!(
                    "[HOOK DEBUG] [ASYNC] Starting hook '{}' for event '{}'",
                    entry.id,
                    event
                );
                let handle = tokio::spawn(async move {
                    let r = run_entry(&entry, &ctx, default_timeout, Instant::now(), None).await;
                    let Some(sink) = sink else { return };
                    match r {
                        Outcome1::Signals(ev) => {
                            let secrets = redaction_list(ev.redactions);
                            for note in ev.notes {
                                let _ = sink.record_diagnostic(&entry_note(
                                    Level::Info,
                                    &entry.id,
                                    event,
                                    &ctx,
                                    redact_str(&note, &secrets).unwrap_or(note),
                                ));
                            }
                            for s in ev.signals {
                                let (s, _) = Self::finish_signal(&entry, event, &ctx, s);
                                let mut s = redact_signal(s, &secrets);
                                s.header.detached = true;
                                s.header.shadow = entry.shadow;
                                let _ = sink.record_signal(&s);
                            }
                        }
                        Outcome1::Failed(msg) => {
                            let _ = sink.record_diagnostic(&entry_note(
                                Level::Warning,
                                &entry.id,
                                event,
                                &ctx,
                                format!("async oracle `{}` failed: {msg}", entry.id),
                            ));
                        }
                    }
                });
                if let Ok(mut bg) = self.background.lock() {
                    bg.push(handle);
                }
                EntryStatus::Detached
            };
            verdict.entries.push(EntryRun {
                id: entry.id.clone(),
                oracle: entry.oracle_name.clone(),
                wave: wave_no,
                status,
                duration_us: 0,
                shadow: entry.shadow,
            });
        }
    }

    /// Runs only the `async: true` entries of `event` whose `when` holds,
    /// records their results (signals marked `detached`) and waits for them.
    /// The other half of [`EngineBuilder::defer_detached`]: call it in the
    /// process that outlives the verdict, with the same context.
    pub async fn run_detached(&self, event: Event, mut ctx: HookContext) -> Verdict {
        let mut verdict = self.begin(event, &mut ctx);
        if let Some(plan) = self.policy.plan(event) {
            let selected: Vec<bool> = plan.entries.iter().map(|e| e.when.holds(&ctx)).collect();
            self.start_detached(plan, &selected, false, true, event, &ctx, &mut verdict);
            self.finish_detached().await;
        }
        verdict.context = ctx;
        verdict
    }

    /// Waits for detached (`async: true`) entries started so far, so their
    /// results reach the log before a short-lived process exits. Call after
    /// the verdict has been delivered.
    pub async fn finish_detached(&self) {
        let handles: Vec<JoinHandle<()>> = match self.background.lock() {
            Ok(mut bg) => bg.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for h in handles {
            let _ = h.await;
        }
    }
}
