//! `ahp signals`: query, statistics, tuning, an HTML report and replay over
//! the signal log.

use crate::ops::policy::{apply_trust, runtime};
use ahp_config::LoadedConfig;
use ahp_engine::{Engine, EntryStatus, Event, HookContext, Intensity, Outcome, Registry};
use ahp_signals_log::analytics::breakdown::OriginRow;
use ahp_signals_log::analytics::query::{Filter, parse_time};
use ahp_signals_log::analytics::stats::{Stats, StatsBuilder};
use ahp_signals_log::analytics::{report, tune};
use ahp_signals_log::{Recent, Record, Selection, human_bytes};
use anyhow::{Context, Result, anyhow};
use clap::{Subcommand, ValueEnum};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Output format of `ahp signals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutFormat {
    /// Aligned tables for people.
    Text,
    /// JSON (JSON lines for `query`).
    Json,
}

/// Where the log is and how to print.
#[derive(Debug, clap::Args)]
pub(crate) struct Common {
    /// The log to read (default: <project>/.ahp/signals.jsonl), with its rotated files.
    ///
    /// Repeat it, or give a glob (`*`, `?`; quote it: --log 'collected/*/signals.jsonl'),
    /// to read several logs as one analysis: their records are merged by timestamp (on a tie
    /// the log named first comes first) and each log keeps its own order. A log named twice is
    /// read once; a named log must exist and a glob must match.
    #[arg(long, value_name = "PATH")]
    log: Vec<PathBuf>,
    /// Project root (default: the repository root, or a folder in it with a hooks file in .ahp/; outside a repository, the nearest ancestor with .ahp/; else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Record filters (all that are given must match).
#[derive(Debug, Default, clap::Args)]
pub(crate) struct FilterArgs {
    /// Event (any alias).
    #[arg(long)]
    event: Option<String>,
    /// Source: the entry id that raised a signal, or that ran in a run.
    #[arg(long)]
    source: Option<String>,
    /// Signal intensity: aid, prompt, control, block.
    #[arg(long)]
    intensity: Option<String>,
    /// Issue id.
    #[arg(long)]
    issue: Option<String>,
    /// Session id (runs and stop-loop releases).
    #[arg(long)]
    session: Option<String>,
    /// From this time on: RFC 3339 or a duration back from now (30m, 24h, 7d).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Before this time (exclusive): RFC 3339 or a duration back from now.
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Record kind: signal, response, run, info, warning, error, release.
    #[arg(long)]
    kind: Option<String>,
}

/// `ahp signals <command>`.
#[derive(Debug, Subcommand)]
pub(crate) enum SignalsCommand {
    /// Print the records that match the filters, with the responses to the signals they select
    /// (a table with a header; JSON lines with --format json).
    Query {
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Per source and event: firings, intensity mix, fire rate, block rate, MTTR, dismissal and
    /// override rates (a signal's latest answer counts).
    Stats {
        /// Read the records shipped to this PostgreSQL database (every machine and project)
        /// instead of a local log; password from PGPASSWORD.
        #[arg(long, value_name = "URL", conflicts_with = "log")]
        db: Option<String>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Concrete tuning suggestions with their evidence.
    ///
    /// Thresholds: prompts dismissed ≥ 50% of ≥ 20; blocks overridden
    /// (proceed_with_risk) ≥ 30% of ≥ 10; never fired in ≥ 50 runs; blocks
    /// ≥ 50% of ≥ 50 runs.
    Tune {
        /// Read the records shipped to this PostgreSQL database (every machine and project)
        /// instead of a local log; password from PGPASSWORD.
        #[arg(long, value_name = "URL", conflicts_with = "log")]
        db: Option<String>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write a self-contained HTML report (inline CSS and SVG, no script, no network).
    Report {
        /// The HTML file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Read the records shipped to this PostgreSQL database (every machine and project)
        /// instead of a local log; password from PGPASSWORD.
        #[arg(long, value_name = "URL", conflicts_with = "log")]
        db: Option<String>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Deliver the log to PostgreSQL or an OpenTelemetry collector, from where the last
    /// delivery to that sink stopped.
    ///
    /// At least once, and each record carries its id, so the sink keeps it once: a
    /// shipper stopped mid-batch and started again sends that batch again. The position
    /// is kept per sink in <log>.ship/, and rotation keeps a segment until every sink
    /// has it. Run it once (cron, a post-session entry) or with --follow.
    Ship {
        /// The sink: a PostgreSQL URL (postgres://user@host/db; the password from
        /// PGPASSWORD) or an OTLP/HTTP endpoint (http://collector:4318).
        #[arg(long, value_name = "URL")]
        to: String,
        /// An HTTP header for an OTLP endpoint, as Name=value (repeatable; default:
        /// OTEL_EXPORTER_OTLP_HEADERS).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Keep shipping what is appended, looking every --interval.
        #[arg(long)]
        follow: bool,
        /// How often --follow looks for new records (500ms, 2s, 1m).
        #[arg(long, default_value = "2s", value_parser = super::ship::parse_interval)]
        interval: std::time::Duration,
        /// The most records in one delivery.
        #[arg(long, default_value_t = 500)]
        batch: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Re-decide the logged runs against a candidate policy and print what would change.
    ///
    /// Nothing is logged and async entries are not run. Script hooks,
    /// oracles that run commands (tests, linters) and oracles that write
    /// files (RetrospectiveGenerator) would run FOR REAL on today's working
    /// tree, with side effects and a different input than the one logged;
    /// so they are left out unless --allow-scripts, and left out of both
    /// sides of the comparison.
    Replay {
        /// The project directory whose .ahp/hooks.yaml (and hooks) is the candidate policy; it must exist.
        #[arg(long, value_name = "DIR")]
        config: PathBuf,
        /// Also run script hooks and command-running or file-writing oracles (they run for real).
        #[arg(long)]
        allow_scripts: bool,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        common: Common,
    },
}

/// Runs `ahp signals …`; returns the exit code.
pub(crate) fn run(cmd: SignalsCommand, registry: Registry) -> Result<u8> {
    match cmd {
        SignalsCommand::Query { filter, common } => {
            let mut select = Selection::new(filter.build()?);
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            let text = common.format == OutFormat::Text;
            if text {
                writeln!(out, "{}", query_header())?;
            }
            let mut n = 0u64;
            let read = for_each(&common, |r| {
                if select.matches(&r) {
                    n += 1;
                    match common.format {
                        OutFormat::Json => serde_json::to_writer(&mut out, &r)?,
                        OutFormat::Text => write!(out, "{}", text_line(&r))?,
                    }
                    writeln!(out)?;
                }
                Ok(())
            })?;
            out.flush()?;
            match read {
                Read::NoLog(path) => eprintln!("{}", no_signals_yet(&path)),
                Read::Done if text => eprintln!("{n} records"),
                Read::Done => {}
            }
            Ok(0)
        }
        SignalsCommand::Stats { db, filter, common } => {
            let (stats, read) = stats_from(db.as_deref(), &common, filter.build()?)?;
            match (common.format, read) {
                (OutFormat::Json, read) => {
                    if let Read::NoLog(path) = read {
                        eprintln!("{}", no_signals_yet(&path));
                    }
                    crate::ops::output::print(&format!(
                        "{}\n",
                        serde_json::to_string_pretty(&stats)?
                    ))?
                }
                (OutFormat::Text, Read::NoLog(path)) => {
                    crate::ops::output::print(&format!("{}\n", no_signals_yet(&path)))?
                }
                (OutFormat::Text, Read::Done) => crate::ops::output::print(&stats_table(&stats))?,
            }
            Ok(0)
        }
        SignalsCommand::Tune { db, filter, common } => {
            let (stats, read) = stats_from(db.as_deref(), &common, filter.build()?)?;
            let findings = tune::suggest(&stats, &registry);
            let text = match (common.format, read) {
                (OutFormat::Json, read) => {
                    if let Read::NoLog(path) = read {
                        eprintln!("{}", no_signals_yet(&path));
                    }
                    format!("{}\n", serde_json::to_string_pretty(&findings)?)
                }
                (OutFormat::Text, Read::NoLog(path)) => format!("{}\n", no_signals_yet(&path)),
                (OutFormat::Text, Read::Done) if findings.is_empty() => "no suggestions\n".into(),
                (OutFormat::Text, Read::Done) => findings
                    .iter()
                    .map(|f| format!("{}  [{}]\n", one_line(&f.suggestion), one_line(&f.event)))
                    .collect(),
            };
            crate::ops::output::print(&text)?;
            Ok(0)
        }
        SignalsCommand::Report {
            out,
            db,
            filter,
            common,
        } => {
            let source = match &db {
                Some(url) => crate::ship::postgres::redact(url),
                None => log_paths(&common)?
                    .iter()
                    .map(|p| ahp_config::path_line(p).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let (stats, origins, read) =
                stats_and_origins(db.as_deref(), &common, filter.build()?)?;
            if let Read::NoLog(path) = read {
                eprintln!("{}", no_signals_yet(&path));
            }
            let findings = tune::suggest(&stats, &registry);
            let title = format!("ahp signals — {source}");
            let html = report::render_with(&title, &stats, &findings, &origins);
            std::fs::write(&out, html)
                .with_context(|| format!("cannot write {}", ahp_config::path_line(&out)))?;
            eprintln!("wrote {}", ahp_config::path_line(&out));
            Ok(0)
        }
        SignalsCommand::Ship {
            to,
            headers,
            follow,
            interval,
            batch,
            common,
        } => {
            let project = crate::ops::policy::load_options(common.project.clone())?.project_root;
            super::ship::run(super::ship::ShipArgs {
                to,
                headers,
                follow,
                interval,
                batch,
                log: log_path(&common)?,
                project,
            })
        }
        SignalsCommand::Replay {
            config,
            allow_scripts,
            filter,
            common,
        } => replay(&common, &filter.build()?, &config, allow_scripts, registry),
    }
}

/// What a caller says when the project has no log yet.
fn no_signals_yet(path: &Path) -> String {
    format!(
        "no signals yet: {} does not exist (ahp writes it at the first hook call)",
        ahp_config::path_line(path)
    )
}

impl FilterArgs {
    fn build(&self) -> Result<Filter> {
        let now = chrono::Utc::now();
        let time = |t: &Option<String>| t.as_deref().map(|t| parse_time(t, now)).transpose();
        Ok(Filter {
            event: self
                .event
                .as_deref()
                .map(|e| Event::parse(e).map_err(|e| anyhow!("{e}")))
                .transpose()?,
            source: self.source.clone(),
            intensity: self
                .intensity
                .as_deref()
                .map(|i| {
                    Intensity::ALL
                        .iter()
                        .copied()
                        .find(|x| x.as_str() == i)
                        .ok_or_else(|| {
                            anyhow!("unknown intensity `{i}`: aid, prompt, control or block")
                        })
                })
                .transpose()?,
            issue: self.issue.clone(),
            session: self.session.clone(),
            since: time(&self.since)?,
            until: time(&self.until)?,
            kinds: match &self.kind {
                Some(k) if !Record::KINDS.contains(&k.as_str()) => {
                    return Err(anyhow!(
                        "unknown kind `{k}`: one of {}",
                        Record::KINDS.join(", ")
                    ));
                }
                k => k.iter().cloned().collect(),
            },
        })
    }
}

/// The log a command that reads a single log reads: the one `--log`
/// names, else the project's; several are an error (`ship`).
fn log_path(common: &Common) -> Result<PathBuf> {
    match log_paths(common)?.as_slice() {
        [one] => Ok(one.clone()),
        many => Err(anyhow!(
            "this command reads one log; --log names {}",
            many.len()
        )),
    }
}

/// The logs `--log` names (globs expanded), else the project's log.
fn log_paths(common: &Common) -> Result<Vec<PathBuf>> {
    if common.log.is_empty() {
        return Ok(vec![crate::ops::policy::log_path(
            None,
            common.project.clone(),
        )?]);
    }
    crate::ops::logs::expand(&common.log)
}

/// The project's own log when it does not exist yet: no records rather
/// than an error. A log named with `--log` must exist: a missing one is
/// more likely a typo than an empty history.
fn missing_default(
    common: &Common,
    paths: &[PathBuf],
    e: &ahp_signals_log::LogError,
) -> Option<PathBuf> {
    match (e, paths) {
        (ahp_signals_log::LogError::Open { path, error }, [only])
            if common.log.is_empty()
                && path == only
                && error.kind() == std::io::ErrorKind::NotFound =>
        {
            Some(path.clone())
        }
        _ => None,
    }
}

/// How a read of the log ended.
enum Read {
    /// Every record was read.
    Done,
    /// The project has no log yet (the default log does not exist).
    NoLog(PathBuf),
}

/// Streams every record of the logs to `f` (merged by timestamp when
/// there are several); a progress bar on stderr when it is a terminal and
/// the read takes a while.
///
/// A project that has no log yet has no records: [`Read::NoLog`].
fn for_each(common: &Common, mut f: impl FnMut(Record) -> Result<()>) -> Result<Read> {
    let paths = log_paths(common)?;
    let mut reader = match ahp_signals_log::read_many(&paths) {
        Ok(reader) => reader,
        Err(e) => match missing_default(common, &paths, &e) {
            Some(path) => return Ok(Read::NoLog(path)),
            None => return Err(e.into()),
        },
    };
    let mut progress = Progress::new(std::io::stderr().is_terminal(), reader.total_bytes());
    let mut n = 0u64;
    while let Some(record) = reader.next() {
        f(record?)?;
        n += 1;
        if n.is_multiple_of(Progress::CHECK_EVERY) {
            progress.tick(reader.bytes_read(), n);
        }
    }
    progress.clear();
    for (path, r) in paths.iter().zip(reader.logs()) {
        warn_skipped(path, r.skipped(), &r.skipped_at(), r.unreadable());
    }
    Ok(Read::Done)
}

/// Says on stderr what of a log was not read: how many unreadable lines,
/// and where the first ones are; the rotated segments left out, and why.
fn warn_skipped(
    log: &Path,
    count: usize,
    at: &[(PathBuf, usize)],
    unreadable: &[ahp_signals_log::Unreadable],
) {
    /// Locations shown; the count is always whole.
    const SHOWN: usize = 5;
    if count > 0 {
        let mut places: Vec<String> = at
            .iter()
            .take(SHOWN)
            .map(|(file, line)| format!("{}:{line}", ahp_config::path_line(file)))
            .collect();
        if count > places.len() && !places.is_empty() {
            places.push("…".into());
        }
        let places = if places.is_empty() {
            String::new()
        } else {
            format!(" ({})", places.join(", "))
        };
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&format!(
                "{count} unreadable lines skipped in {}{places}",
                ahp_config::path_line(log)
            ))
        );
    }
    for (file, why) in unreadable {
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&format!(
                "the log segment {} cannot be read ({why}); its records from there on are left out",
                ahp_config::path_line(file)
            ))
        );
    }
}

/// The progress bar of a long read: drawn on stderr (only when it is a
/// terminal), first after [`Progress::DELAY`], then at most every
/// [`Progress::EVERY`], and erased at the end.
struct Progress {
    on: bool,
    total: u64,
    started: Instant,
    last: Option<Instant>,
    width: usize,
}

impl Progress {
    /// Records between two looks at the clock (no system call per record).
    const CHECK_EVERY: u64 = 1024;
    /// Reads shorter than this show no bar.
    const DELAY: Duration = Duration::from_millis(300);
    /// The least time between two redraws.
    const EVERY: Duration = Duration::from_millis(100);

    fn new(on: bool, total: u64) -> Progress {
        Progress {
            on,
            total,
            started: Instant::now(),
            last: None,
            width: 0,
        }
    }

    fn tick(&mut self, done: u64, records: u64) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        let due = match self.last {
            None => now.duration_since(self.started) >= Self::DELAY,
            Some(last) => now.duration_since(last) >= Self::EVERY,
        };
        if !due {
            return;
        }
        self.last = Some(now);
        let line = progress_line(done, self.total, records, now.duration_since(self.started));
        // Pad over a longer previous line.
        let pad = self.width.saturating_sub(line.chars().count());
        self.width = line.chars().count();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}{}", " ".repeat(pad));
        let _ = err.flush();
    }

    /// Erases the bar, if it was drawn.
    fn clear(&mut self) {
        if self.width > 0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.width));
            let _ = err.flush();
            self.width = 0;
        }
    }
}

/// One line of the progress bar: a 30-cell bar and the share of the bytes
/// read (capped at 100%: the log can grow while it is read), bytes, records
/// and elapsed time.
fn progress_line(done: u64, total: u64, records: u64, elapsed: Duration) -> String {
    const CELLS: u64 = 30;
    let ratio = if total == 0 {
        1.0
    } else {
        (done as f64 / total as f64).min(1.0)
    };
    let filled = ((ratio * CELLS as f64) as u64).min(CELLS) as usize;
    format!(
        "[{}{}] {:>3}%  {} / {}  {records} records  {:.1}s",
        "#".repeat(filled),
        "-".repeat(CELLS as usize - filled),
        (ratio * 100.0).floor() as u64,
        human_bytes(done),
        human_bytes(total),
        elapsed.as_secs_f64()
    )
}

/// The statistics of the records `filter` selects, with the responses to
/// the signals it selects: every core parses, one thread folds in order
/// (the figures are those of a plain read).
fn stats(common: &Common, filter: Filter) -> Result<(Stats, Read)> {
    let paths = log_paths(common)?;
    let logs = match ahp_signals_log::scan::open(&paths) {
        Ok(logs) => logs,
        Err(e) => match missing_default(common, &paths, &e) {
            Some(path) => return Ok((StatsBuilder::new().finish(), Read::NoLog(path))),
            None => return Err(e.into()),
        },
    };
    let mut progress = Progress::new(std::io::stderr().is_terminal(), logs.total_bytes());
    let (stats, skipped) = logs.stats(filter, |bytes, records| progress.tick(bytes, records))?;
    progress.clear();
    for s in &skipped {
        warn_skipped(&s.log, s.count, &s.at, &s.unreadable);
    }
    Ok((stats, Read::Done))
}

/// The statistics from the database at `db` when given, else from the log.
fn stats_from(db: Option<&str>, common: &Common, filter: Filter) -> Result<(Stats, Read)> {
    stats_and_origins(db, common, filter).map(|(s, _, r)| (s, r))
}

/// As [`stats_from`], with the figures per developer and project that the
/// database's records allow (none from a local log).
fn stats_and_origins(
    db: Option<&str>,
    common: &Common,
    filter: Filter,
) -> Result<(Stats, Vec<OriginRow>, Read)> {
    match db {
        Some(url) => {
            let (stats, origins) = super::ship::db_stats(url, filter)?;
            Ok((stats, origins, Read::Done))
        }
        None => stats(common, filter).map(|(s, r)| (s, Vec::new(), r)),
    }
}

/// The columns of `query`'s text lines: what each record puts in them is
/// documented on [`text_line`].
fn query_header() -> String {
    columns(
        "TIME",
        "KIND",
        "LEVEL",
        "SOURCE/SCOPE",
        "EVENT",
        "ID",
        "MESSAGE",
    )
}

fn columns(
    ts: &str,
    kind: &str,
    level: &str,
    source: &str,
    event: &str,
    id: &str,
    message: &str,
) -> String {
    let line =
        format!("{ts:<20}  {kind:<9} {level:<19} {source:<24} {event:<18} {id:<36}  {message}");
    line.trim_end().to_string()
}

/// Text on one terminal line: line breaks and tabs become spaces, control
/// characters are escaped and secrets masked.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if c == '\n' || c == '\r' || c == '\t' {
                ' '
            } else {
                c
            }
        })
        .collect();
    crate::ops::output::terminal_safe(&flat).into_owned()
}

/// What a run decided on, for people: the tool command (or the tool and
/// the file it touches), else the issue, else the session.
/// Whether the log masked a value of `context` (a credential, a key
/// named like one): what an entry decided on is then not in the record.
fn holds_mask(context: &serde_json::Value) -> bool {
    match context {
        serde_json::Value::String(s) => s.contains("***"),
        serde_json::Value::Array(items) => items.iter().any(holds_mask),
        serde_json::Value::Object(m) => m.values().any(holds_mask),
        _ => false,
    }
}

fn run_input(context: &serde_json::Value) -> String {
    const MAX: usize = 80;
    let text = |p: &str| context.pointer(p).and_then(|v| v.as_str());
    let tool = text("/tool/name");
    let described = if let Some(cmd) = text("/tool/input/command") {
        cmd.to_string()
    } else if let Some(file) = text("/tool/input/file_path").or_else(|| text("/tool/input/path")) {
        format!("{} {file}", tool.unwrap_or("tool"))
    } else if let Some(tool) = tool {
        tool.to_string()
    } else if let Some(issue) = text("/issue/id") {
        format!("issue {issue}")
    } else if let Some(session) = text("/session_id") {
        format!("session {session}")
    } else {
        "-".to_string()
    };
    let line = one_line(&described);
    match line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// One record as a line under [`query_header`]: a signal shows its
/// intensity, source, event, id and message; a response its action and the
/// signal it answers; a run its outcome, issue (or session), correlation id
/// and input; a diagnostic its source and message.
fn text_line(r: &Record) -> String {
    let ts = r
        .timestamp()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let event = |e: Option<Event>| e.map_or("-", |e| e.as_str());
    match r {
        Record::Signal(s) => columns(
            &ts,
            "signal",
            s.intensity().as_str(),
            &one_line(&s.header.source),
            event(s.context.hook),
            &s.header.id.to_string(),
            &one_line(&s.payload.summary()),
        ),
        Record::Response(x) => columns(
            &ts,
            "response",
            x.action.as_str(),
            "-",
            "-",
            &x.signal_id.to_string(),
            "answers the signal of this id",
        ),
        Record::Run(x) => columns(
            &ts,
            "run",
            x.outcome.as_str(),
            &one_line(
                x.issue_id
                    .as_deref()
                    .or(x.session_id.as_deref())
                    .unwrap_or("-"),
            ),
            x.event.as_str(),
            &one_line(&x.correlation_id),
            &run_input(&x.context),
        ),
        Record::Release(x) => columns(
            &ts,
            "release",
            "-",
            &one_line(&x.session_id),
            x.event.as_str(),
            "-",
            &format!(
                "stop loop released after {} blocks (cap {})",
                x.consecutive_blocks, x.cap
            ),
        ),
        Record::Info(d) | Record::Warning(d) | Record::Error(d) => columns(
            &ts,
            r.kind(),
            "-",
            &one_line(&d.source),
            event(d.event),
            "-",
            &one_line(&d.message),
        ),
    }
}

/// Left-aligns the first two columns, right-aligns the rest. Cells come
/// from the log (a cloned repository can commit one), so each is made one
/// terminal-safe line first.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| one_line(c)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - c.chars().count();
            if i < 2 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
            l.push_str("  ");
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for r in &rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |r| format!("{:.1}%", r * 100.0))
}

fn stats_table(s: &Stats) -> String {
    let rows: Vec<Vec<String>> = s
        .rows
        .iter()
        .filter(|r| !r.shadow)
        .map(|r| {
            vec![
                r.source.clone(),
                r.event.clone(),
                r.firings.to_string(),
                format!(
                    "{}/{}/{}/{}",
                    r.intensity.aid, r.intensity.prompt, r.intensity.control, r.intensity.block
                ),
                r.runs_selected.to_string(),
                pct(r.fire_rate),
                pct(r.block_rate),
                r.mttr_secs
                    .map_or_else(|| "-".into(), |m| format!("{m:.0}s")),
                pct(r.dismissal_rate),
                pct(r.proceed_with_risk_rate),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "SOURCE",
            "EVENT",
            "FIRINGS",
            "AID/PROMPT/CONTROL/BLOCK",
            "RUNS",
            "FIRE RATE",
            "BLOCK RATE",
            "MTTR",
            "DISMISSED",
            "PROCEED W/ RISK",
        ],
        &rows,
    );
    let shadow: Vec<Vec<String>> = s
        .rows
        .iter()
        .filter(|r| r.shadow)
        .map(|r| {
            let of_runs = |n: u64| {
                if r.runs_selected == 0 {
                    n.to_string()
                } else {
                    format!("{n} ({:.1}%)", n as f64 * 100.0 / r.runs_selected as f64)
                }
            };
            vec![
                r.source.clone(),
                r.event.clone(),
                r.runs_selected.to_string(),
                of_runs(r.blocks),
                of_runs(r.prompts),
                r.sessions.to_string(),
            ]
        })
        .collect();
    if !shadow.is_empty() {
        out.push_str(
            "\nShadow entries (mode: shadow): what they would have done; none of it reached an agent\n",
        );
        out.push_str(&table(
            &[
                "SOURCE",
                "EVENT",
                "RUNS",
                "WOULD BLOCK",
                "WOULD ASK",
                "SESSIONS",
            ],
            &shadow,
        ));
    }
    out.push_str(&format!(
        "\n{} records: {} signals, {} responses ({} superseded by a later answer, {} unattributed), {} runs\n",
        s.records, s.signals, s.responses, s.superseded_responses, s.unattributed_responses, s.runs
    ));
    out
}

/// Leaves out script hooks and entries of oracles that run commands or
/// write files (a replay changes nothing: RetrospectiveGenerator wrote a
/// retrospective, and with `archive_issue` rewrote the file a record's
/// `issue.path` named); returns them, by event and entry id.
fn skip_scripts(cfg: &mut LoadedConfig, registry: &Registry) -> BTreeSet<(Event, String)> {
    const REASON: &str = "replay without --allow-scripts";
    let hooks = std::mem::take(&mut cfg.script_hooks);
    let mut skipped = BTreeSet::new();
    for h in hooks {
        skipped.insert((h.trigger, h.name.clone()));
        cfg.skipped_hooks.push((h.name, REASON.to_string()));
    }
    let entries: Vec<(Event, String)> = cfg
        .entries
        .iter()
        .filter(|e| {
            e.node.get("hook").is_some()
                || e.oracle().is_some_and(|o| {
                    registry.resolve(o) == Some("Script")
                        || !registry.command_keys(o).is_empty()
                        || registry.writes_files(o)
                })
        })
        .map(|e| (e.event, e.id.clone()))
        .collect();
    skipped.extend(entries.iter().cloned());
    cfg.skip_entries(entries, REASON);
    skipped
}

/// The entries that signalled, but for those left out of the replay.
fn signalled(
    event: Event,
    entries: &[ahp_engine::EntryRun],
    left_out: &BTreeSet<(Event, String)>,
) -> BTreeSet<String> {
    entries
        .iter()
        .filter(|e| e.status == EntryStatus::Signalled)
        .filter(|e| !left_out.contains(&(event, e.id.clone())))
        .map(|e| e.id.clone())
        .collect()
}

/// How many correlation ids' signals replay remembers to recompute a logged
/// outcome without the entries it did not replay.
const SIGNALS_WINDOW: usize = 100_000;

fn replay(
    common: &Common,
    filter: &Filter,
    config: &Path,
    allow_scripts: bool,
    registry: Registry,
) -> Result<u8> {
    // Without this check a typo in the path loads no project policy and
    // replays against the built-in one, which looks like a real answer.
    match std::fs::metadata(config) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(anyhow!(
                "--config {}: not a directory; pass the project directory whose .ahp/hooks.yaml is the candidate policy",
                ahp_config::path_line(config)
            ));
        }
        Err(e) => {
            return Err(anyhow!(
                "--config {}: {e}; pass the project directory whose .ahp/hooks.yaml is the candidate policy",
                ahp_config::path_line(config)
            ));
        }
    }
    let opts = crate::ops::policy::load_options(Some(config.to_path_buf()))?;
    let mut cfg = LoadedConfig::load(&opts)?;
    if !opts.project_root.join(".ahp").join("hooks.yaml").exists() {
        eprintln!(
            "note: {} has no .ahp/hooks.yaml: the candidate is the built-in policy (and your user policy)",
            ahp_config::path_line(&opts.project_root)
        );
    }
    apply_trust(&mut cfg, &registry);
    let left_out = if allow_scripts {
        BTreeSet::new()
    } else {
        skip_scripts(&mut cfg, &registry)
    };
    let (policy, warnings) = cfg.compile_events(&registry, None)?;
    for w in warnings {
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&w.to_string())
        );
    }
    let engine = Engine::builder()
        .registry(registry)
        .policy(policy)
        .defer_detached(true)
        .build()?;
    let rt = runtime()?;
    let (mut runs, mut flips, mut changed) = (0u64, 0u64, 0u64);
    // Changed runs the log cannot reproduce: their input was masked, or a
    // signal of theirs escalated (replay has no history to escalate by).
    let mut not_reproducible = 0u64;
    // Logged runs in which an entry that was not replayed signalled.
    let mut runs_with_left_out = 0u64;
    // source → (added, removed)
    let mut by_source: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut flip_counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut lines: Vec<serde_json::Value> = Vec::new();
    // correlation id → (source, intensity, escalated) of the signals logged
    // before its run.
    let mut logged_signals: Recent<String, Vec<(String, Intensity, bool)>> =
        Recent::new(SIGNALS_WINDOW);
    let json = common.format == OutFormat::Json;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let read = for_each(common, |r| {
        let run = match r {
            Record::Signal(s) => {
                if let Some(corr) = s.header.correlation_id.clone() {
                    let seen = (
                        s.header.source.clone(),
                        s.intensity(),
                        s.header.escalated_from.is_some(),
                    );
                    match logged_signals.get_mut(&corr) {
                        Some(list) => list.push(seen),
                        None => logged_signals.insert(corr, vec![seen]),
                    }
                }
                return Ok(());
            }
            Record::Run(run) => run,
            _ => return Ok(()),
        };
        let signals = logged_signals
            .remove(&run.correlation_id)
            .unwrap_or_default();
        let run = Record::Run(run);
        if !filter.matches(&run) {
            return Ok(());
        }
        let Record::Run(run) = run else {
            return Ok(());
        };
        runs += 1;
        let ctx: HookContext = match serde_json::from_value(run.context.clone()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "warning: run {}: context unreadable: {e}",
                    one_line(&run.correlation_id)
                );
                return Ok(());
            }
        };
        let verdict = rt.block_on(engine.dispatch(run.event, ctx));
        // What was not replayed is left out of both sides: its logged
        // signals are not "removed", and the logged outcome is taken
        // without them.
        let left_out_signalled = run.entries.iter().any(|e| {
            e.status == EntryStatus::Signalled && left_out.contains(&(run.event, e.id.clone()))
        });
        let before_outcome = if left_out_signalled {
            runs_with_left_out += 1;
            Outcome::from_strongest(
                signals
                    .iter()
                    .filter(|(source, _, _)| !left_out.contains(&(run.event, source.clone())))
                    .map(|(_, i, _)| *i)
                    .max(),
            )
        } else {
            run.outcome
        };
        let before = signalled(run.event, &run.entries, &left_out);
        let after = signalled(run.event, &verdict.entries, &left_out);
        let added: Vec<&String> = after.difference(&before).collect();
        let removed: Vec<&String> = before.difference(&after).collect();
        let flipped = verdict.outcome != before_outcome;
        if !flipped && added.is_empty() && removed.is_empty() {
            return Ok(());
        }
        // What the log cannot reproduce is listed, not counted.
        let unsure = if signals.iter().any(|(_, _, escalated)| *escalated) {
            Some("escalated")
        } else if holds_mask(&run.context) {
            Some("masked input")
        } else {
            None
        };
        if unsure.is_some() {
            not_reproducible += 1;
        } else {
            changed += 1;
            for s in &added {
                by_source.entry((*s).clone()).or_default().0 += 1;
            }
            for s in &removed {
                by_source.entry((*s).clone()).or_default().1 += 1;
            }
            if flipped {
                flips += 1;
                *flip_counts
                    .entry((
                        before_outcome.as_str().into(),
                        verdict.outcome.as_str().into(),
                    ))
                    .or_default() += 1;
            }
        }
        let input = run_input(&run.context);
        if json {
            let mut line = serde_json::json!({
                "event": run.event.as_str(), "correlation_id": run.correlation_id,
                "timestamp": run.timestamp, "input": input,
                "issue_id": run.issue_id, "session_id": run.session_id,
                "before": before_outcome.as_str(),
                "after": verdict.outcome.as_str(), "added": added, "removed": removed,
            });
            if let Some(why) = unsure {
                line["not_reproducible"] = why.into();
            }
            lines.push(line);
        } else {
            let short: String = one_line(&run.correlation_id).chars().take(8).collect();
            let arrow = if unsure.is_some() { "?" } else { "→" };
            let mut l = format!(
                "{:<20} {} {arrow} {}  {input}",
                run.event.as_str(),
                before_outcome.as_str(),
                verdict.outcome.as_str()
            );
            for a in &added {
                l.push_str(&format!("  +{}", one_line(a)));
            }
            for a in &removed {
                l.push_str(&format!("  -{}", one_line(a)));
            }
            if let Some(issue) = &run.issue_id {
                l.push_str(&format!("  [issue {}]", one_line(issue)));
            }
            if let Some(why) = unsure {
                l.push_str(&format!("  (not reproducible: {why})"));
            }
            writeln!(out, "{l}  ({short}…)")?;
        }
        Ok(())
    })?;
    if let Read::NoLog(path) = &read {
        eprintln!("{}", no_signals_yet(path));
    }
    let not_replayed: Vec<String> = left_out
        .iter()
        .map(|(event, id)| format!("{} {}", event.as_str(), one_line(id)))
        .collect();
    if json {
        let summary = serde_json::json!({
            "runs": runs, "changed": changed, "outcome_flips": flips,
            "not_reproducible": not_reproducible,
            "flips": flip_counts.iter().map(|((a, b), n)| serde_json::json!({"from": a, "to": b, "count": n})).collect::<Vec<_>>(),
            "signals_by_source": by_source.iter().map(|(s, (a, r))| serde_json::json!({"source": s, "added": a, "removed": r})).collect::<Vec<_>>(),
            "not_replayed": left_out.iter().map(|(e, id)| serde_json::json!({"event": e.as_str(), "id": id})).collect::<Vec<_>>(),
            "runs_with_not_replayed_signals": runs_with_left_out,
            "changes": lines,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        writeln!(
            out,
            "\n{runs} runs replayed: {changed} changed, {flips} outcome flips"
        )?;
        if not_reproducible > 0 {
            writeln!(
                out,
                "  {not_reproducible} other runs answered differently but are not counted: \
                 their logged input was masked (`***`) or a signal of theirs was escalated, \
                 which replay cannot reproduce (marked `?` above)"
            )?;
        }
        for ((a, b), n) in &flip_counts {
            writeln!(out, "  {a} → {b}: {n}")?;
        }
        for (s, (a, r)) in &by_source {
            writeln!(out, "  {}: +{a} / -{r} runs with signals", one_line(s))?;
        }
        if !left_out.is_empty() {
            writeln!(
                out,
                "not replayed: {} {} (scripts; pass --allow-scripts): {}; left out of both sides, in the {runs_with_left_out} runs where they signalled too",
                left_out.len(),
                if left_out.len() == 1 {
                    "entry"
                } else {
                    "entries"
                },
                not_replayed.join(", ")
            )?;
        }
    }
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_shows_share_bytes_records_and_time() {
        let mib = 1024 * 1024;
        assert_eq!(
            progress_line(0, 200 * mib, 0, Duration::ZERO),
            "[------------------------------]   0%  0 B / 200.0 MiB  0 records  0.0s"
        );
        assert_eq!(
            progress_line(90 * mib, 200 * mib, 1_234_567, Duration::from_millis(2_345)),
            "[#############-----------------]  45%  90.0 MiB / 200.0 MiB  1234567 records  2.3s"
        );
        assert_eq!(
            progress_line(200 * mib, 200 * mib, 9, Duration::from_secs(61)),
            "[##############################] 100%  200.0 MiB / 200.0 MiB  9 records  61.0s"
        );
        // A log that grew while being read stops at 100%; an empty one is done.
        assert!(progress_line(300, 200, 1, Duration::ZERO).contains("] 100%  300 B / 200 B"));
        assert!(progress_line(0, 0, 0, Duration::ZERO).starts_with("[######"));
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * mib), "3.0 GiB");
    }

    #[test]
    fn the_progress_bar_draws_nothing_when_off_or_early() {
        let mut p = Progress::new(false, 100);
        p.tick(50, 1);
        assert_eq!(p.width, 0);
        let mut p = Progress::new(true, 100);
        p.tick(50, 1); // before the delay
        assert_eq!((p.width, p.last), (0, None));
    }
}
