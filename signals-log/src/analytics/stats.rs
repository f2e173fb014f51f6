//! Streaming statistics per source and event: `ahp signals stats`.

use crate::Record;
use crate::fxhash::FxBuild;
use crate::recent::Recent;
use crate::view::{Body, Status, View};
use ahp_engine::{Action, Event, Intensity, Outcome};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How many recent signal ids (and correlation ids) are remembered to
/// attribute responses (and run outcomes) to their source. A response to an
/// older signal is counted as unattributed (and a second answer to it is
/// not recognized as superseding the first). The two generations hold at
/// most twice this many.
pub const RECENT_WINDOW: usize = 200_000;

/// The statistics of one source (entry id) at one event.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SourceStats {
    /// The entry id that raised the signals (`header.source`).
    pub source: String,
    /// The oracle of that entry, when a run record named it.
    pub oracle: Option<String>,
    /// The event.
    pub event: String,
    /// A `mode: shadow` entry: its figures are what it would have done,
    /// never enforced (an entry rolled out in shadow, then enforced, has a
    /// row for each).
    pub shadow: bool,
    /// Signals raised.
    pub firings: u64,
    /// Agent sessions (else issues, for runs without one) in which it
    /// raised a signal.
    pub sessions: u64,
    /// Signals by intensity: aid, prompt, control, block.
    pub intensity: IntensityMix,
    /// Runs of this event in which this entry was selected.
    pub runs_selected: u64,
    /// Of those, runs in which it did not run because an earlier wave
    /// blocked (`on_block: stop`).
    pub skipped_after_block: u64,
    /// `firings` over the runs in which it ran (selected, not skipped after
    /// a block), when it ran at all: how often a run of this entry raises a
    /// signal (above 1 when it raises several).
    pub fire_rate: Option<f64>,
    /// Block signals raised.
    pub blocks: u64,
    /// `blocks` over the runs in which it ran, when it ran at all.
    pub block_rate: Option<f64>,
    /// Mean seconds from a block to the next clean run (accept or aid) for
    /// the same issue (else session).
    pub mttr_secs: Option<f64>,
    /// How many block→clean pairs the MTTR averages.
    pub mttr_samples: u64,
    /// Prompt signals raised.
    pub prompts: u64,
    /// Prompts whose current answer is `dismiss`.
    pub dismissals: u64,
    /// `dismissals / prompts`.
    pub dismissal_rate: Option<f64>,
    /// Blocks whose current answer is `proceed_with_risk`.
    pub proceed_with_risk: u64,
    /// `proceed_with_risk / blocks`.
    pub proceed_with_risk_rate: Option<f64>,
    /// p90 of `files.changed_count` in the run contexts where this entry
    /// raised signals.
    pub changed_files_p90: Option<u64>,
}

/// Signal counts by intensity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IntensityMix {
    /// Aid signals.
    pub aid: u64,
    /// Prompt signals.
    pub prompt: u64,
    /// Control signals.
    pub control: u64,
    /// Block signals.
    pub block: u64,
}

impl IntensityMix {
    fn add(&mut self, i: Intensity) {
        match i {
            Intensity::Aid => self.aid += 1,
            Intensity::Prompt => self.prompt += 1,
            Intensity::Control => self.control += 1,
            Intensity::Block => self.block += 1,
        }
    }

    /// The sum of all four.
    pub fn total(&self) -> u64 {
        self.aid + self.prompt + self.control + self.block
    }
}

/// The statistics of a whole log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Records read.
    pub records: u64,
    /// Run records read.
    pub runs: u64,
    /// Signal records read.
    pub signals: u64,
    /// Response records read.
    pub responses: u64,
    /// Responses replaced by a later answer to the same signal (`ahp
    /// respond --amend`, or duplicates in an older log): only a signal's
    /// latest answer counts.
    pub superseded_responses: u64,
    /// Responses whose signal was not seen (or fell out of the window).
    pub unattributed_responses: u64,
    /// One row per source and event, sorted by source then event.
    pub rows: Vec<SourceStats>,
    /// Signals per time bucket (`YYYY-MM-DD` or `YYYY-MM-DDTHH` when the log
    /// spans at most two days), oldest first.
    pub timeline: Vec<(String, IntensityMix)>,
}

#[derive(Default)]
struct Acc {
    row: SourceStats,
    mttr_sum: f64,
    changed: BTreeMap<u64, u64>,
    /// The interned keys ([`Keys`]) of the sessions it fired in.
    sessions: HashSet<u32, FxBuild>,
}

/// Issue and session keys as small numbers, so that runs look them up
/// without building a string each time.
#[derive(Default)]
struct Keys {
    issues: HashMap<String, u32, FxBuild>,
    sessions: HashMap<String, u32, FxBuild>,
    next: u32,
}

impl Keys {
    /// The number of `issue:<id>` (`session` false) or `session:<id>`;
    /// the two never share a number.
    fn of(&mut self, session: bool, id: &str) -> u32 {
        let map = if session {
            &mut self.sessions
        } else {
            &mut self.issues
        };
        if let Some(&k) = map.get(id) {
            return k;
        }
        let k = self.next;
        self.next = self.next.wrapping_add(1);
        map.insert(id.to_string(), k);
        k
    }
}

/// A row of one source: its event, whether shadow, its index.
type RowKey = (Option<Event>, bool, usize);

/// Folds records into [`Stats`] one at a time.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::{analytics::stats::StatsBuilder, Record};
/// let mut b = StatsBuilder::new();
/// let mut s = Signal::block("no");
/// s.header.source = "PermissionChecker".into();
/// b.add(&Record::from(s));
/// let stats = b.finish();
/// assert_eq!(stats.rows[0].blocks, 1);
/// ```
pub struct StatsBuilder {
    /// source → its rows, by event and shadow.
    index: HashMap<String, Vec<RowKey>, FxBuild>,
    accs: Vec<Acc>,
    /// signal id → (row, its current answer).
    signals: Recent<u128, (usize, Option<Action>)>,
    /// correlation id → rows that raised a signal in that dispatch, each
    /// with whether that signal was an enforced block.
    fired: Recent<String, Vec<(usize, bool)>>,
    /// issue/session key → (row, time of the first block) still open.
    open: HashMap<u32, Vec<(usize, DateTime<Utc>)>, FxBuild>,
    keys: Keys,
    /// Signals per hour since the epoch; named `YYYY-MM-DDTHH` at the end.
    hourly: BTreeMap<i64, IntensityMix>,
    stats: Stats,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn event_name(e: Option<Event>) -> String {
    e.map_or_else(|| "-".to_string(), |e| e.as_str().to_string())
}

/// The counter an answer feeds, if a statistic reads it.
fn answer_count(row: &mut SourceStats, action: Action) -> Option<&mut u64> {
    match action {
        Action::Dismiss => Some(&mut row.dismissals),
        Action::ProceedWithRisk => Some(&mut row.proceed_with_risk),
        _ => None,
    }
}

fn rate(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

impl StatsBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        StatsBuilder {
            index: HashMap::default(),
            accs: Vec::new(),
            signals: Recent::new(RECENT_WINDOW),
            fired: Recent::new(RECENT_WINDOW),
            open: HashMap::default(),
            keys: Keys::default(),
            hourly: BTreeMap::new(),
            stats: Stats::default(),
        }
    }

    fn row(&mut self, source: &str, event: Option<Event>, shadow: bool) -> usize {
        if let Some(rows) = self.index.get(source)
            && let Some(&(_, _, i)) = rows.iter().find(|&&(e, s, _)| e == event && s == shadow)
        {
            return i;
        }
        let i = self.accs.len();
        self.accs.push(Acc {
            row: SourceStats {
                source: source.to_string(),
                event: event_name(event),
                shadow,
                ..SourceStats::default()
            },
            ..Acc::default()
        });
        self.index
            .entry(source.to_string())
            .or_default()
            .push((event, shadow, i));
        i
    }

    /// Adds one record.
    pub fn add(&mut self, record: &Record) {
        self.add_view(&View::of(record));
    }

    /// Adds what statistics read of one record: [`StatsBuilder::add`] for
    /// a record read in part.
    pub(crate) fn add_view(&mut self, record: &View<'_>) {
        self.stats.records += 1;
        match record.body {
            Body::Signal {
                source,
                raised: intensity,
                hook,
                correlation,
                shadow,
                detached,
                ..
            } => {
                self.stats.signals += 1;
                let i = self.row(source, hook, shadow);
                let row = &mut self.accs[i].row;
                row.firings += 1;
                row.intensity.add(intensity);
                // An `async: true` entry's block or prompt reached nobody:
                // it is in the mix, not among the blocks and prompts.
                match intensity {
                    Intensity::Block if !detached => row.blocks += 1,
                    Intensity::Prompt if !detached => row.prompts += 1,
                    _ => {}
                }
                self.signals.insert(record.id.as_u128(), (i, None));
                if let Some(corr) = correlation {
                    // A shadow or async block stopped nothing: no time to
                    // repair.
                    let blocked = intensity == Intensity::Block && !shadow && !detached;
                    match self.fired.get_mut(corr) {
                        Some(rows) => rows.push((i, blocked)),
                        None => self.fired.insert(corr.to_string(), vec![(i, blocked)]),
                    }
                }
                if !shadow {
                    let hour = record.timestamp.timestamp().div_euclid(3600);
                    self.hourly.entry(hour).or_default().add(intensity);
                }
            }
            Body::Response { signal_id, action } => {
                self.stats.responses += 1;
                match self.signals.get_mut(&signal_id.as_u128()) {
                    Some((i, answer)) => {
                        let row = &mut self.accs[*i].row;
                        // The log is append-only: a later answer supersedes
                        // the earlier one, so its count is taken back.
                        if let Some(before) = answer.replace(action) {
                            self.stats.superseded_responses += 1;
                            if let Some(n) = answer_count(row, before) {
                                *n = n.saturating_sub(1);
                            }
                        }
                        if let Some(n) = answer_count(row, action) {
                            *n += 1;
                        }
                    }
                    None => self.stats.unattributed_responses += 1,
                }
            }
            Body::Run {
                event,
                correlation,
                session,
                issue,
                outcome,
                entries,
                changed,
            } => {
                self.stats.runs += 1;
                for e in entries.iter() {
                    let i = self.row(e.id, Some(event), e.shadow);
                    let acc = &mut self.accs[i];
                    acc.row.runs_selected += 1;
                    if e.status == Status::SkippedAfterBlock {
                        acc.row.skipped_after_block += 1;
                    }
                    if acc.row.oracle.is_none() {
                        acc.row.oracle = Some(e.oracle.to_string());
                    }
                    if e.status == Status::Signalled
                        && let Some(n) = changed
                    {
                        *acc.changed.entry(n).or_default() += 1;
                    }
                }
                // Repairs are tracked per issue, else per session.
                let key = issue
                    .map(|i| self.keys.of(false, i))
                    .or_else(|| session.map(|s| self.keys.of(true, s)));
                let fired = self.fired.remove(correlation).unwrap_or_default();
                // Sessions by the agent's session id (else the issue).
                let session = session.map(|s| self.keys.of(true, s)).or(key);
                if let Some(session) = session {
                    for &(i, _) in &fired {
                        self.accs[i].sessions.insert(session);
                    }
                }
                let Some(key) = key else { return };
                match outcome {
                    Outcome::Block => {
                        let open = self.open.entry(key).or_default();
                        for i in fired.iter().filter(|(_, b)| *b).map(|(i, _)| *i) {
                            if !open.iter().any(|&(j, _)| j == i) {
                                open.push((i, record.timestamp));
                            }
                        }
                    }
                    Outcome::Accept | Outcome::Aid => {
                        for (i, since) in self.open.remove(&key).unwrap_or_default() {
                            let secs =
                                (record.timestamp - since).num_milliseconds() as f64 / 1000.0;
                            let acc = &mut self.accs[i];
                            acc.mttr_sum += secs.max(0.0);
                            acc.row.mttr_samples += 1;
                        }
                    }
                    _ => {}
                }
            }
            Body::Diagnostic { .. } | Body::Release { .. } => {}
        }
    }

    /// The statistics of everything added.
    pub fn finish(self) -> Stats {
        let mut stats = self.stats;
        let mut rows: Vec<SourceStats> = self
            .accs
            .into_iter()
            .map(|acc| {
                let mut r = acc.row;
                // Of the runs in which the entry ran: one skipped after an
                // earlier wave blocked raised nothing because it never ran.
                let ran = r.runs_selected.saturating_sub(r.skipped_after_block);
                r.block_rate = rate(r.blocks, ran);
                r.fire_rate = rate(r.firings, ran);
                r.dismissal_rate = rate(r.dismissals, r.prompts);
                r.proceed_with_risk_rate = rate(r.proceed_with_risk, r.blocks);
                r.mttr_secs = (r.mttr_samples > 0).then(|| acc.mttr_sum / r.mttr_samples as f64);
                r.changed_files_p90 = percentile(&acc.changed, 0.9);
                r.sessions = acc.sessions.len() as u64;
                r
            })
            .collect();
        rows.sort_by(|a, b| (&a.source, &a.event, a.shadow).cmp(&(&b.source, &b.event, b.shadow)));
        stats.rows = rows;
        let hourly: BTreeMap<String, IntensityMix> = self
            .hourly
            .into_iter()
            .filter_map(|(hour, mix)| {
                let at = DateTime::<Utc>::from_timestamp(hour.checked_mul(3600)?, 0)?;
                Some((at.format("%Y-%m-%dT%H").to_string(), mix))
            })
            .collect();
        stats.timeline = if hourly.len() <= 48 {
            hourly.into_iter().collect()
        } else {
            let mut daily: BTreeMap<String, IntensityMix> = BTreeMap::new();
            for (hour, mix) in hourly {
                let day = daily.entry(hour[..10].to_string()).or_default();
                day.aid += mix.aid;
                day.prompt += mix.prompt;
                day.control += mix.control;
                day.block += mix.block;
            }
            daily.into_iter().collect()
        };
        stats
    }
}

/// The nearest-rank percentile `p` (0..=1) of a histogram.
fn percentile(hist: &BTreeMap<u64, u64>, p: f64) -> Option<u64> {
    let total: u64 = hist.values().sum();
    if total == 0 {
        return None;
    }
    let rank = ((p * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (&v, &n) in hist {
        seen += n;
        if seen >= rank {
            return Some(v);
        }
    }
    hist.keys().next_back().copied()
}

/// Reads every record of `records` into [`Stats`].
pub fn collect<I: IntoIterator<Item = Record>>(records: I) -> Stats {
    let mut b = StatsBuilder::new();
    for r in records {
        b.add(&r);
    }
    b.finish()
}
