//! The `RetrospectiveGenerator` oracle (SPEC §5): when an issue is closed
//! (`post-issue-close`), it computes the issue's metrics from the signal
//! log, writes a Markdown retrospective, and answers with an **aid** that
//! summarizes it (the metrics also go, structured, in the aid's `data`).
//!
//! **Metrics** ([`IssueMetrics`]), over the records whose issue is the
//! context's `issue.id`:
//!
//! * dispatches (run records) by event;
//! * signals by intensity and by source; escalated signals (those an
//!   `escalation:` rule raised) and overridden blocks (`proceed_with_risk`);
//! * **block episodes** and their time to resolution: an episode opens at
//!   the first run of an event that ended in a block and closes at the next
//!   run of the *same event* for the issue that did not block (the agent
//!   fixed what blocked it); episodes still open at close are unresolved;
//! * prompts and what was done about them: dismissed, acknowledged or
//!   applied, or unanswered.
//!
//! **The log** is read from `log` (default `.ahp/signals.jsonl` in the
//! project), with its rotated segments, oldest first, through the signal
//! log's own reader; lines it cannot read (a torn last line) are skipped
//! and counted. A missing log gives an all-zero retrospective.
//!
//! **Where it goes.** `output` (relative to the project; `{{ issue.id }}`
//! and any other `{{ path }}` of the context are filled in, each value kept
//! to one path segment) — by default next to the issue file
//! (`Issues/FEAT-0123.md` → `Issues/FEAT-0123.retrospective.md`), or
//! `.ahp/retrospectives/ID.md` when the context has no `issue.path`. The
//! single-brace `{id}` of earlier versions is a config error that shows the
//! setting rewritten.
//! With `archive_issue: true` the metrics are also written into the issue
//! file itself, as a `## Retrospective` section (replaced if present), so
//! the archived issue carries its history. With `generate_metrics: false`
//! the file holds only the headings for a written retrospective.
//!
//! Both paths come from the repository (its issue files, its hooks.yaml),
//! so both are written with [`crate::safe_write`]: a symlink at the file,
//! a directory symlink out of the project or a path out of it (`..`, an
//! absolute path elsewhere) is refused with an error naming the path. The
//! issue's id and title are flattened to one line (line breaks and other
//! control characters become spaces) before they go into the Markdown, so
//! a title cannot add lines, headings or table rows of its own.
//!
//! ```yaml
//! hooks:
//!   post-issue-close:
//!     - oracle: RetrospectiveGenerator
//!       config:
//!         generate_metrics: true     # default
//!         archive_issue: false       # default
//!         output: "docs/retros/{{ issue.id }}.md"   # default: next to the issue file
//!         log: .ahp/signals.jsonl    # default
//! ```
//!
//! ```
//! use ahp_oracles::workflow::retrospective::IssueMetrics;
//! use ahp_engine::Signal;
//! let mut m = IssueMetrics::new("FEAT-1");
//! let mut s = Signal::prompt("40 files");
//! s.context.issue_id = Some("FEAT-1".into());
//! m.add_signal(&s);
//! let m = m.finish();
//! assert_eq!((m.signals, m.prompts), (1, 1));
//! ```

use crate::safe_write::write_in_project;
use crate::template::Template;
use crate::workflow::git::project_dir_for;
use ahp_engine::{
    Action, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Outcome,
    RunRecord, Signal, SignalResponse, async_trait,
};
use ahp_signals_log::Record;
use chrono::{DateTime, Utc};
use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The signal type of the retrospective aid.
pub const SIGNAL_TYPE: &str = "retrospective";

/// RetrospectiveGenerator's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrospectiveGeneratorConfig {
    /// The metrics from the signal log (default true).
    pub generate_metrics: Option<bool>,
    /// Also write the metrics into the issue file itself, as a
    /// `## Retrospective` section, so the archived issue keeps its history
    /// (default false; the file is not moved).
    pub archive_issue: Option<bool>,
    /// Where the retrospective is written (a template path).
    #[schemars(length(min = 1))]
    pub output: Option<String>,
    /// The signal log read.
    #[schemars(length(min = 1))]
    pub log: Option<String>,
}

/// The heading of the section written into the issue file.
pub const ISSUE_SECTION: &str = "## Retrospective";

/// Signal counts by intensity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByIntensity {
    /// Block signals.
    pub block: u64,
    /// Control signals.
    pub control: u64,
    /// Prompt signals.
    pub prompt: u64,
    /// Aid signals.
    pub aid: u64,
}

impl ByIntensity {
    fn add(&mut self, i: Intensity) {
        match i {
            Intensity::Block => self.block += 1,
            Intensity::Control => self.control += 1,
            Intensity::Prompt => self.prompt += 1,
            Intensity::Aid => self.aid += 1,
        }
    }
}

/// One block episode: an event blocked until a later run of it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockEpisode {
    /// The event that blocked.
    pub event: String,
    /// The sources of the blocks in the episode, in order of first block.
    pub sources: Vec<String>,
    /// The first blocked run.
    pub blocked_at: DateTime<Utc>,
    /// The next run of the event that did not block, if any.
    pub resolved_at: Option<DateTime<Utc>>,
    /// `resolved_at - blocked_at` in seconds.
    pub resolution_secs: Option<i64>,
    /// How many runs blocked in the episode.
    pub blocked_runs: u64,
}

/// What the log says about one issue. Build with [`IssueMetrics::new`],
/// feed records in log order, then [`IssueMetrics::finish`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IssueMetrics {
    /// The issue id.
    pub issue: String,
    /// Run records (dispatches) for the issue.
    pub runs: u64,
    /// Runs by event.
    pub runs_by_event: BTreeMap<String, u64>,
    /// Signals raised for the issue (detached ones included).
    pub signals: u64,
    /// Signals by intensity.
    pub by_intensity: ByIntensity,
    /// Signals by source, by intensity.
    pub by_source: BTreeMap<String, ByIntensity>,
    /// Block signals.
    pub blocks: u64,
    /// Block episodes, oldest first.
    pub block_episodes: Vec<BlockEpisode>,
    /// Episodes resolved.
    pub blocks_resolved: u64,
    /// Episodes still open.
    pub blocks_unresolved: u64,
    /// Mean time to resolution of the resolved episodes, seconds.
    pub mean_resolution_secs: Option<f64>,
    /// Longest time to resolution, seconds.
    pub max_resolution_secs: Option<i64>,
    /// Blocks answered `proceed_with_risk`.
    pub blocks_overridden: u64,
    /// Prompt signals.
    pub prompts: u64,
    /// Prompts answered `dismiss`.
    pub prompts_dismissed: u64,
    /// Prompts answered `acknowledge` or `apply_suggestion`.
    pub prompts_acknowledged: u64,
    /// Prompts without an answer.
    pub prompts_unanswered: u64,
    /// Signals raised by an escalation rule.
    pub escalations: u64,
    /// Escalated signals by rule id.
    pub escalations_by_rule: BTreeMap<String, u64>,
    /// The first record of the issue.
    pub first_seen: Option<DateTime<Utc>>,
    /// The last record of the issue.
    pub last_seen: Option<DateTime<Utc>>,
    /// Lines of the log that could not be read.
    pub skipped_lines: u64,
    #[serde(skip)]
    seen: HashMap<uuid::Uuid, (Intensity, String)>,
    #[serde(skip)]
    answered: HashMap<uuid::Uuid, Action>,
    #[serde(skip)]
    run_list: Vec<(DateTime<Utc>, String, bool, Vec<uuid::Uuid>)>,
}

impl IssueMetrics {
    /// Empty metrics for `issue`.
    pub fn new(issue: impl Into<String>) -> Self {
        IssueMetrics {
            issue: issue.into(),
            ..IssueMetrics::default()
        }
    }

    fn touch(&mut self, at: DateTime<Utc>) {
        self.first_seen = Some(self.first_seen.map_or(at, |f| f.min(at)));
        self.last_seen = Some(self.last_seen.map_or(at, |l| l.max(at)));
    }

    /// Counts a signal when it belongs to the issue.
    pub fn add_signal(&mut self, s: &Signal) {
        if s.context.issue_id.as_deref() != Some(self.issue.as_str()) {
            return;
        }
        let i = s.intensity();
        self.signals += 1;
        self.by_intensity.add(i);
        self.by_source
            .entry(s.header.source.clone())
            .or_default()
            .add(i);
        match i {
            Intensity::Block => self.blocks += 1,
            Intensity::Prompt => self.prompts += 1,
            _ => {}
        }
        if let Some(rule) = &s.header.escalation {
            self.escalations += 1;
            *self.escalations_by_rule.entry(rule.clone()).or_default() += 1;
        }
        self.seen.insert(s.header.id, (i, s.header.source.clone()));
        self.touch(s.header.timestamp);
    }

    /// Counts a response when its signal belongs to the issue (the signal
    /// must have been added before). The last answer of a signal counts.
    pub fn add_response(&mut self, r: &SignalResponse) {
        if self.seen.contains_key(&r.signal_id) {
            self.answered.insert(r.signal_id, r.action);
            self.touch(r.consumed_at);
        }
    }

    /// Counts a run when it is the issue's.
    pub fn add_run(&mut self, run: &RunRecord) {
        if run.issue_id.as_deref() != Some(self.issue.as_str()) {
            return;
        }
        self.runs += 1;
        let event = run.event.as_str().to_string();
        *self.runs_by_event.entry(event.clone()).or_default() += 1;
        self.run_list.push((
            run.timestamp,
            event,
            run.outcome == Outcome::Block,
            run.signal_ids.clone(),
        ));
        self.touch(run.timestamp);
    }

    /// The metrics of everything added.
    pub fn finish(mut self) -> IssueMetrics {
        for (id, action) in &self.answered {
            let Some((intensity, _)) = self.seen.get(id) else {
                continue;
            };
            match (intensity, action) {
                (Intensity::Prompt, Action::Dismiss) => self.prompts_dismissed += 1,
                (Intensity::Prompt, Action::Acknowledge | Action::ApplySuggestion) => {
                    self.prompts_acknowledged += 1
                }
                (Intensity::Block, Action::ProceedWithRisk) => self.blocks_overridden += 1,
                _ => {}
            }
        }
        let answered_prompts = self
            .answered
            .keys()
            .filter(|id| matches!(self.seen.get(*id), Some((Intensity::Prompt, _))))
            .count() as u64;
        self.prompts_unanswered = self.prompts.saturating_sub(answered_prompts);

        // Episodes per event, in time order (the sort is stable: log order
        // breaks ties).
        let mut runs = std::mem::take(&mut self.run_list);
        runs.sort_by_key(|r| r.0);
        let mut open: BTreeMap<String, usize> = BTreeMap::new();
        for (at, event, blocked, ids) in runs {
            let sources: Vec<String> = ids
                .iter()
                .filter_map(|id| match self.seen.get(id) {
                    Some((Intensity::Block, src)) => Some(src.clone()),
                    _ => None,
                })
                .collect();
            match (blocked, open.get(&event).copied()) {
                (true, Some(i)) => {
                    let ep = &mut self.block_episodes[i];
                    ep.blocked_runs += 1;
                    for s in sources {
                        if !ep.sources.contains(&s) {
                            ep.sources.push(s);
                        }
                    }
                }
                (true, None) => {
                    let mut uniq: Vec<String> = Vec::new();
                    for s in sources {
                        if !uniq.contains(&s) {
                            uniq.push(s);
                        }
                    }
                    open.insert(event.clone(), self.block_episodes.len());
                    self.block_episodes.push(BlockEpisode {
                        event,
                        sources: uniq,
                        blocked_at: at,
                        resolved_at: None,
                        resolution_secs: None,
                        blocked_runs: 1,
                    });
                }
                (false, Some(i)) => {
                    let ep = &mut self.block_episodes[i];
                    ep.resolved_at = Some(at);
                    ep.resolution_secs = Some((at - ep.blocked_at).num_seconds().max(0));
                    open.remove(&event);
                }
                (false, None) => {}
            }
        }
        let times: Vec<i64> = self
            .block_episodes
            .iter()
            .filter_map(|e| e.resolution_secs)
            .collect();
        self.blocks_resolved = times.len() as u64;
        self.blocks_unresolved = self.block_episodes.len() as u64 - self.blocks_resolved;
        self.mean_resolution_secs =
            (!times.is_empty()).then(|| times.iter().sum::<i64>() as f64 / times.len() as f64);
        self.max_resolution_secs = times.iter().copied().max();
        self.seen.clear();
        self.answered.clear();
        self
    }

    /// Reads the log at `path` (with its rotated files, through the signal
    /// log's own reader) for `issue`.
    pub fn from_log(path: &Path, issue: &str) -> Result<IssueMetrics, String> {
        let mut m = IssueMetrics::new(issue);
        let mut records = match ahp_signals_log::read_all(path) {
            Ok(r) => r,
            Err(ahp_signals_log::LogError::Open { error, .. })
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(m.finish());
            }
            Err(e) => return Err(e.to_string()),
        };
        for record in records.by_ref() {
            match record.map_err(|e| e.to_string())? {
                Record::Signal(s) => m.add_signal(&s),
                Record::Response(r) => m.add_response(&r),
                Record::Run(r) => m.add_run(&r),
                _ => {}
            }
        }
        m.skipped_lines = records.skipped() as u64;
        Ok(m.finish())
    }

    /// A one-sentence summary.
    pub fn summary(&self) -> String {
        let b = &self.by_intensity;
        let mut s = format!(
            "{} signal{} ({} block, {} control, {} prompt, {} aid) in {} dispatch{}",
            self.signals,
            plural(self.signals),
            b.block,
            b.control,
            b.prompt,
            b.aid,
            self.runs,
            if self.runs == 1 { "" } else { "es" }
        );
        if !self.block_episodes.is_empty() {
            s.push_str(&format!(
                "; {} block episode{}: {} resolved{}, {} unresolved",
                self.block_episodes.len(),
                plural(self.block_episodes.len() as u64),
                self.blocks_resolved,
                self.mean_resolution_secs
                    .map(|m| format!(" (mean {})", duration(m.round() as i64)))
                    .unwrap_or_default(),
                self.blocks_unresolved
            ));
        }
        if self.prompts > 0 {
            s.push_str(&format!(
                "; {} prompt{}, {} dismissed",
                self.prompts,
                plural(self.prompts),
                self.prompts_dismissed
            ));
        }
        if self.escalations > 0 {
            s.push_str(&format!(
                "; {} escalation{}",
                self.escalations,
                plural(self.escalations)
            ));
        }
        s
    }

    /// The metrics as Markdown (tables).
    pub fn to_markdown(&self) -> String {
        let b = &self.by_intensity;
        let mut out = String::new();
        out.push_str("| metric | value |\n|---|---|\n");
        let events: Vec<String> = self
            .runs_by_event
            .iter()
            .map(|(e, n)| format!("{} {n}", cell(e)))
            .collect();
        out.push_str(&format!(
            "| dispatches | {}{} |\n",
            self.runs,
            if events.is_empty() {
                String::new()
            } else {
                format!(" ({})", events.join(", "))
            }
        ));
        out.push_str(&format!(
            "| signals | {} (block {}, control {}, prompt {}, aid {}) |\n",
            self.signals, b.block, b.control, b.prompt, b.aid
        ));
        out.push_str(&format!(
            "| block episodes | {} ({} resolved, {} unresolved) |\n",
            self.block_episodes.len(),
            self.blocks_resolved,
            self.blocks_unresolved
        ));
        out.push_str(&format!(
            "| time to resolve a block | {} |\n",
            match (self.mean_resolution_secs, self.max_resolution_secs) {
                (Some(mean), Some(max)) => format!(
                    "mean {}, max {}",
                    duration(mean.round() as i64),
                    duration(max)
                ),
                _ => "–".to_string(),
            }
        ));
        out.push_str(&format!(
            "| blocks overridden (proceed with risk) | {} |\n",
            self.blocks_overridden
        ));
        out.push_str(&format!(
            "| prompts | {} ({} dismissed, {} acknowledged, {} unanswered) |\n",
            self.prompts,
            self.prompts_dismissed,
            self.prompts_acknowledged,
            self.prompts_unanswered
        ));
        out.push_str(&format!("| escalations | {} |\n", self.escalations));
        if let (Some(first), Some(last)) = (self.first_seen, self.last_seen) {
            out.push_str(&format!(
                "| active | {} → {} ({}) |\n",
                first.format("%Y-%m-%d %H:%M UTC"),
                last.format("%Y-%m-%d %H:%M UTC"),
                duration((last - first).num_seconds())
            ));
        }
        if !self.block_episodes.is_empty() {
            out.push_str("\n### Blocks\n\n| event | sources | blocked at | resolved after |\n|---|---|---|---|\n");
            for e in &self.block_episodes {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    cell(&e.event),
                    cell(&e.sources.join(", ")),
                    e.blocked_at.format("%Y-%m-%d %H:%M:%S UTC"),
                    e.resolution_secs
                        .map(duration)
                        .unwrap_or_else(|| "unresolved".into())
                ));
            }
        }
        if !self.by_source.is_empty() {
            out.push_str("\n### Signals by source\n\n| source | block | control | prompt | aid |\n|---|---|---|---|---|\n");
            for (src, c) in &self.by_source {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    cell(src),
                    c.block,
                    c.control,
                    c.prompt,
                    c.aid
                ));
            }
        }
        if !self.escalations_by_rule.is_empty() {
            out.push_str("\n### Escalations\n\n| rule | signals |\n|---|---|\n");
            for (rule, n) in &self.escalations_by_rule {
                out.push_str(&format!("| {} | {n} |\n", cell(rule)));
            }
        }
        out
    }
}

/// `1h 5m`, `12m 30s`, `45s`.
fn duration(secs: i64) -> String {
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Writes retrospectives at issue close. See the [module
/// documentation](self).
#[derive(Debug, Clone)]
pub struct RetrospectiveGenerator {
    generate_metrics: bool,
    archive_issue: bool,
    output: Option<Template>,
    log: String,
    project_dir: Option<PathBuf>,
}

impl RetrospectiveGenerator {
    /// Builds the generator from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::workflow::retrospective::RetrospectiveGenerator;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let err = RetrospectiveGenerator::from_config(OracleConfig::new(&json!({"generate_metric": true}), None)).unwrap_err();
    /// assert!(err.message.contains("did you mean `generate_metrics`"), "{err}");
    /// let err = RetrospectiveGenerator::from_config(OracleConfig::new(&json!({"output": ""}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("output"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: RetrospectiveGeneratorConfig = cfg.parse()?;
        let path =
            |value: Option<String>, key: &str| -> Result<Option<String>, OracleConfigError> {
                match value {
                    Some(s) if s.trim().is_empty() => Err(OracleConfigError::at(
                        key,
                        format!("`{key}` must not be empty; remove it for the default"),
                    )),
                    other => Ok(other.map(|s| s.trim().to_string())),
                }
            };
        let (output, log) = (path(c.output, "output")?, path(c.log, "log")?);
        Ok(RetrospectiveGenerator {
            generate_metrics: c.generate_metrics.unwrap_or(true),
            archive_issue: c.archive_issue.unwrap_or(false),
            output: output.map(|o| output_template(&o)).transpose()?,
            log: log.unwrap_or_else(|| ahp_engine::paths::DEFAULT_LOG.into()),
            project_dir: cfg.project_dir(),
        })
    }

    /// Where the retrospective of the context's issue `id` goes, relative
    /// to the project (or absolute).
    fn output_path(&self, ctx: &HookContext, id: &str, issue_path: Option<&str>) -> PathBuf {
        let safe_id = path_segment(id);
        if let Some(o) = &self.output {
            return PathBuf::from(o.render_escaped(ctx, path_segment));
        }
        match issue_path {
            Some(p) => {
                let p = Path::new(p);
                let stem = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| safe_id.clone());
                p.with_file_name(format!("{stem}.retrospective.md"))
            }
            None => PathBuf::from(".ahp/retrospectives").join(format!("{safe_id}.md")),
        }
    }
}

/// Parses `output`: `{{ path }}` placeholders, as everywhere in ahp. The
/// single-brace `{id}` of earlier versions is an error that shows the
/// setting rewritten, so a path is never written with a literal `{id}` in
/// it.
fn output_template(src: &str) -> Result<Template, OracleConfigError> {
    static OLD: OnceLock<Option<Regex>> = OnceLock::new();
    let old = OLD
        .get_or_init(|| Regex::new(r"(?:^|[^{])(\{([A-Za-z_][A-Za-z0-9_.]*)\})(?:[^}]|$)").ok())
        .as_ref();
    if let Some(caps) = old.and_then(|re| re.captures(src)) {
        let (whole, name) = (&caps[1], &caps[2]);
        let path = match name {
            "id" | "title" => format!("issue.{name}"),
            other => other.to_string(),
        };
        let fixed = src.replace(whole, &format!("{{{{ {path} }}}}"));
        return Err(OracleConfigError::at(
            "output",
            format!(
                "`{whole}` is the old placeholder form; placeholders are written `{{{{ {path} }}}}` \
                 everywhere in ahp (as in Rules messages): output: \"{fixed}\""
            ),
        ));
    }
    crate::policy::rules::template(src, "output")
}

/// `value` as one path segment: what is not a letter, a digit, `-`, `_`
/// or `.` becomes `_`, and a value of dots alone (`..`) becomes `_`, so
/// a placeholder cannot add directories or climb out of one.
fn path_segment(value: &str) -> String {
    let out: String = value
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.chars().all(|c| c == '.') {
        "_".to_string()
    } else {
        out
    }
}

#[async_trait]
impl Oracle for RetrospectiveGenerator {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let id = ctx
            .lookup("issue.id")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or_else(|| {
                OracleError::new(
                    "no issue in the context (issue.id): run it at post-issue-close with --issue PATH",
                )
            })?;
        let title = ctx
            .lookup("issue.title")
            .and_then(|v| v.as_str().map(str::to_string));
        let issue_path = ctx
            .lookup("issue.path")
            .and_then(|v| v.as_str().map(str::to_string));
        let dir = project_dir_for(self.project_dir.as_deref(), ctx);
        let metrics =
            IssueMetrics::from_log(&dir.join(&self.log), &id).map_err(OracleError::new)?;

        let mut doc = format!(
            "# Retrospective: {}{}\n\nClosed {}.\n\n",
            one_line(&id),
            title
                .as_deref()
                .map(|t| format!(" — {}", one_line(t)))
                .unwrap_or_default(),
            ctx.timestamp.format("%Y-%m-%d %H:%M UTC"),
        );
        if self.generate_metrics {
            doc.push_str(&format!(
                "## Metrics\n\nFrom the signal log (`{}`): {}.\n\n{}\n",
                self.log,
                metrics.summary(),
                metrics.to_markdown()
            ));
        }
        doc.push_str(
            "## What went well\n\n- \n\n## What to improve\n\n- \n\n## Follow-ups\n\n- \n",
        );
        let out = self.output_path(ctx, &id, issue_path.as_deref());
        write_in_project(&dir, &out, doc.as_bytes())
            .map_err(|e| OracleError::new(format!("retrospective: {e}")))?;
        let mut files = vec![out.to_string_lossy().into_owned()];
        if self.archive_issue
            && let Some(p) = &issue_path
        {
            archive_into(&dir, Path::new(p), &metrics)?;
            files.push(p.clone());
        }
        let info = if self.generate_metrics {
            format!(
                "Retrospective of {id} written to {}: {}",
                files[0],
                metrics.summary()
            )
        } else {
            format!("Retrospective of {id} written to {}", files[0])
        };
        let mut signal = Signal::aid(info)
            .with_type(SIGNAL_TYPE)
            .with_files(files)
            .with_resolution_path([format!(
                "fill in what went well and what to improve in {}",
                out.display()
            )]);
        if self.generate_metrics
            && let Ok(data) = serde_json::to_value(&metrics)
        {
            signal = signal.with_data(data);
        }
        Ok(vec![signal])
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Aid)
    }
}

/// One line of Markdown text: line breaks and other control characters
/// (Unicode's line and paragraph separators too) become spaces, so text
/// from an issue file cannot start a line of its own in the document.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A table cell: one line, and `|` escaped so it cannot open a column.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// Writes (or replaces) the `## Retrospective` section of the issue file
/// `rel` of the project `dir`.
fn archive_into(dir: &Path, rel: &Path, metrics: &IssueMetrics) -> Result<(), OracleError> {
    let issue_file = dir.join(rel);
    let text = std::fs::read_to_string(&issue_file).map_err(|e| {
        OracleError::new(format!(
            "archive_issue: cannot read {}: {e}",
            issue_file.display()
        ))
    })?;
    let section = format!(
        "{ISSUE_SECTION}\n\n{}.\n\n{}",
        metrics.summary(),
        metrics.to_markdown().replace("\n### ", "\n#### ")
    );
    let mut out = String::with_capacity(text.len() + section.len());
    match text.find(&format!("\n{ISSUE_SECTION}\n")) {
        Some(start) => {
            let after = start + 1 + ISSUE_SECTION.len();
            let end = text[after..]
                .find("\n## ")
                .map(|e| after + e + 1)
                .unwrap_or(text.len());
            out.push_str(&text[..start + 1]);
            out.push_str(&section);
            if end < text.len() {
                out.push('\n');
                out.push_str(&text[end..]);
            }
        }
        None => {
            out.push_str(text.trim_end());
            out.push_str("\n\n");
            out.push_str(&section);
        }
    }
    write_in_project(dir, rel, out.as_bytes())
        .map_err(|e| OracleError::new(format!("archive_issue: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_issue_stays_on_its_line_and_in_its_cell() {
        assert_eq!(one_line("a\n---\r\nb\u{2028}c\td"), "a ---  b c d");
        assert_eq!(cell("x | y\n| z"), "x \\| y \\| z");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(45), "45s");
        assert_eq!(duration(600), "10m");
        assert_eq!(duration(750), "12m 30s");
        assert_eq!(duration(3900), "1h 5m");
    }

    #[test]
    fn output_paths() {
        let ctx = |id: &str| -> HookContext {
            serde_json::from_value(serde_json::json!({"issue": {"id": id, "type": "fix/bug"}}))
                .unwrap()
        };
        let g = RetrospectiveGenerator::from_config(OracleConfig::empty()).unwrap();
        assert_eq!(
            g.output_path(&ctx("FEAT-1"), "FEAT-1", Some("Issues/FEAT-1.md")),
            PathBuf::from("Issues/FEAT-1.retrospective.md")
        );
        assert_eq!(
            g.output_path(&ctx("a/b"), "a/b", None),
            PathBuf::from(".ahp/retrospectives/a_b.md")
        );
        let v = serde_json::json!({"output": "docs/{{ issue.type }}/{{issue.id}}.md"});
        let g = RetrospectiveGenerator::from_config(OracleConfig::new(&v, None)).unwrap();
        assert_eq!(
            g.output_path(&ctx("X-2"), "X-2", None),
            PathBuf::from("docs/fix_bug/X-2.md")
        );
        assert_eq!(
            g.output_path(&ctx(".."), "..", None),
            PathBuf::from("docs/fix_bug/_.md")
        );
    }

    #[test]
    fn the_old_placeholder_form_is_an_error_showing_the_new_one() {
        for (old, fixed) in [
            ("docs/{id}.md", "output: \"docs/{{ issue.id }}.md\""),
            ("{title}-retro.md", "output: \"{{ issue.title }}-retro.md\""),
            ("r/{issue.type}/x.md", "output: \"r/{{ issue.type }}/x.md\""),
        ] {
            let v = serde_json::json!({ "output": old });
            let err = RetrospectiveGenerator::from_config(OracleConfig::new(&v, None)).unwrap_err();
            assert_eq!(err.key.as_deref(), Some("output"));
            assert!(err.message.contains(fixed), "{old}: {err}");
        }
        let v = serde_json::json!({"output": "docs/{{ issue.id"});
        let err = RetrospectiveGenerator::from_config(OracleConfig::new(&v, None)).unwrap_err();
        assert!(err.message.contains("unclosed `{{`"), "{err}");
    }

    #[test]
    fn the_issue_section_is_replaced_not_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("i.md");
        std::fs::write(&p, "# I\n\n## Tasks\n\n- [x] a\n").unwrap();
        let m = IssueMetrics::new("I").finish();
        archive_into(dir.path(), Path::new("i.md"), &m).unwrap();
        archive_into(dir.path(), Path::new("i.md"), &m).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.matches(ISSUE_SECTION).count(), 1, "{text}");
        assert!(text.starts_with("# I\n\n## Tasks\n\n- [x] a\n\n## Retrospective\n"));
    }
}
