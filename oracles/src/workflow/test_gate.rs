//! The `TestGate` oracle: the tests must pass (and cover enough) before the
//! work goes on — typically at `pre-issue-submit` / `pre-issue-close`
//! (SPEC §5).
//!
//! ```yaml
//! - oracle: TestGate
//!   config:
//!     command: cargo nextest run --profile ci   # optional; run in the project root
//!     timeout_ms: 600000                       # default 600000 (10 minutes)
//!     require_all_pass: true                   # default true
//!     junit: [target/nextest/ci/junit.xml]     # paths or globs, relative to the project root
//!     coverage: { format: lcov, path: target/lcov.info }   # lcov | cobertura | llvm-cov-json
//!     coverage_threshold: 80                   # percent of lines, 0–100
//! ```
//!
//! At least one of `command`, `junit`, `coverage` and `coverage_threshold`
//! must be set. In order:
//!
//! 1. **`command`** runs with `sh -c` in the project root, in its own
//!    process group, killed after `timeout_ms` (a timeout is an error: the
//!    gate could not decide). A non-zero exit means failing tests: without
//!    JUnit reports the block quotes the end of the command's output.
//! 2. **`junit`** reports (every file matching every entry; `*`, `?`,
//!    `**`, `[abc]`, `{a,b}`) name the failing tests as `classname::name`
//!    with the first line of their message — see [`junit`].
//! 3. **`coverage`**: line coverage below `coverage_threshold` blocks with
//!    the gap (`line coverage 72.4% < 80% (−7.6 points)`) and the
//!    least-covered files as the resolution path — see [`coverage`].
//!    `coverage_threshold` without `coverage` (the AHP seed's form) reads
//!    the first report of [`DEFAULT_COVERAGE_REPORTS`] that exists
//!    (`lcov.info`, `coverage/lcov.info`, `coverage.xml`, …); none there
//!    is an error naming where it looked.
//!
//! ahp never guesses a test command: `require_all_pass` written without
//! `command` or `junit` has no tests to require, and loads with a warning
//! saying so.
//!
//! Signals: a **block** of type `tests-failed` (a **prompt** of the same
//! type with `require_all_pass: false`) and a **block** of type
//! `coverage-below-threshold`. A configured report that is missing or does
//! not parse is an error (never a silent pass); so is an entry of `junit`
//! that matches no file — except after a failing `command` (which may have
//! stopped before writing its reports): then the command's failure blocks
//! and the report problem is noted in the log. Without `coverage_threshold`, the coverage report
//! is still read and its number noted in the log.
//!
//! Reports are read as they are on disk: when `command` does not rewrite
//! them, a report from an earlier run is read as if it were fresh.
//!
//! ```
//! use ahp_oracles::workflow::test_gate::TestGate;
//! use ahp_engine::OracleConfig;
//! use serde_json::json;
//! let config = json!({"command": "cargo test", "coverage_threshold": 120});
//! let err = TestGate::from_config(OracleConfig::new(&config, None)).unwrap_err();
//! assert_eq!(err.key.as_deref(), Some("coverage_threshold"));
//! let config = json!({"coverage_threshold": 80});
//! assert!(TestGate::from_config(OracleConfig::new(&config, None)).is_ok());
//! let config = json!({"junit": "reports/*.xml"});
//! assert!(TestGate::from_config(OracleConfig::new(&config, None)).is_ok());
//! ```

pub mod coverage;
pub mod junit;

use crate::scripts::command::{
    MAX_TIMEOUT_MS, combined_output, exit_text, project_dir, relative_to, run_command, tail_lines,
};
use crate::settings::{Millis, timeout_ms};
use ahp_engine::oracle::Strings;
use ahp_engine::{
    Evaluation, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError,
    Severity, Signal, async_trait,
};
use coverage::{CoverageFormat, CoverageReport};
use junit::JunitReport;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// TestGate's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestGateConfig {
    /// The test command (needs `ahp trust` in a project).
    #[schemars(length(min = 1))]
    pub command: Option<String>,
    /// Its time limit in milliseconds (default ten minutes).
    pub timeout_ms: Option<Millis>,
    /// Every test must pass (default true).
    pub require_all_pass: Option<bool>,
    /// The lowest line coverage accepted, in percent.
    #[schemars(range(min = 0.0, max = 100.0))]
    pub coverage_threshold: Option<f64>,
    /// JUnit XML reports: a path or glob, or a list of them.
    pub junit: Option<Strings>,
    /// The coverage report read.
    pub coverage: Option<CoverageSpec>,
}

/// `coverage:` of TestGate.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverageSpec {
    /// The report's format.
    pub format: CoverageFormat,
    /// Its path, relative to the project root.
    #[schemars(length(min = 1))]
    pub path: String,
}

/// The default `timeout_ms`: ten minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;

/// The signal type of failing tests.
pub const TESTS_FAILED_TYPE: &str = "tests-failed";

/// The signal type of coverage below the threshold.
pub const COVERAGE_TYPE: &str = "coverage-below-threshold";

/// How many failing tests a signal names one by one.
pub const MAX_NAMED_TESTS: usize = 20;

/// How many of the least-covered files a coverage block names.
pub const MAX_NAMED_FILES: usize = 5;

/// Where a coverage report is looked for, in order, when
/// `coverage_threshold` is set without `coverage`: the default outputs of
/// common tools (cargo llvm-cov / grcov, c8 / nyc / jest, coverage.py,
/// tarpaulin, istanbul), relative to the project root.
pub const DEFAULT_COVERAGE_REPORTS: &[(&str, CoverageFormat)] = &[
    ("lcov.info", CoverageFormat::Lcov),
    ("coverage/lcov.info", CoverageFormat::Lcov),
    ("target/lcov.info", CoverageFormat::Lcov),
    ("coverage.xml", CoverageFormat::Cobertura),
    ("cobertura.xml", CoverageFormat::Cobertura),
    ("coverage/cobertura-coverage.xml", CoverageFormat::Cobertura),
    ("target/cobertura.xml", CoverageFormat::Cobertura),
];

/// How many lines of the command's output a block quotes.
pub const OUTPUT_TAIL_LINES: usize = 20;

/// The most files one `junit` glob may visit while matching.
const MAX_WALK: usize = 200_000;

/// Where the coverage report is and how to read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageSource {
    /// The report's format.
    pub format: CoverageFormat,
    /// Its path, relative to the project root.
    pub path: String,
}

/// Runs the tests and/or reads their reports; blocks on failing tests and
/// on coverage below the threshold. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct TestGate {
    command: Option<String>,
    timeout: Duration,
    require_all_pass: bool,
    coverage_threshold: Option<f64>,
    junit: Vec<String>,
    coverage: Option<CoverageSource>,
    project_dir: Option<PathBuf>,
    /// Whether `require_all_pass` was written (its warning is about a
    /// setting the user made, not the default).
    require_all_pass_set: bool,
}

impl TestGate {
    /// Builds the oracle from its `config:` map; every setting is checked
    /// here.
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: TestGateConfig = cfg.parse()?;
        let command = match c.command {
            Some(cmd) if cmd.trim().is_empty() => {
                return Err(OracleConfigError::at(
                    "command",
                    "`command` must not be empty, e.g. `command: cargo test`",
                ));
            }
            other => other.map(|cmd| cmd.trim().to_string()),
        };
        let timeout = timeout_ms(c.timeout_ms, "timeout_ms", MAX_TIMEOUT_MS)?
            .unwrap_or(Duration::from_millis(DEFAULT_TIMEOUT_MS));
        let require_all_pass_given = c.require_all_pass;
        let require_all_pass = require_all_pass_given.unwrap_or(true);
        let coverage_threshold = match c.coverage_threshold {
            Some(t) if !(0.0..=100.0).contains(&t) => {
                return Err(OracleConfigError::at(
                    "coverage_threshold",
                    format!("must be a percentage between 0 and 100 (e.g. 80), found {t}"),
                ));
            }
            other => other,
        };
        let junit = read_junit(c.junit)?;
        let coverage = match c.coverage {
            None => None,
            Some(spec) if spec.path.trim().is_empty() => {
                return Err(OracleConfigError::at(
                    "coverage.path",
                    "`path` must not be empty, e.g. `path: target/lcov.info`",
                ));
            }
            Some(spec) => Some(CoverageSource {
                format: spec.format,
                path: spec.path.trim().to_string(),
            }),
        };
        if command.is_none()
            && junit.is_empty()
            && coverage.is_none()
            && coverage_threshold.is_none()
        {
            return Err(OracleConfigError::whole(
                "TestGate has nothing to check: set command, junit, coverage or coverage_threshold (e.g. `command: cargo test`)",
            ));
        }
        Ok(TestGate {
            command,
            timeout,
            require_all_pass,
            coverage_threshold,
            junit,
            coverage,
            project_dir: cfg.project_dir(),
            require_all_pass_set: require_all_pass_given.is_some(),
        })
    }

    /// The test command, when one is configured.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    /// The time limit of the test command.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The JUnit report paths and globs.
    pub fn junit(&self) -> &[String] {
        &self.junit
    }

    /// The coverage report, when one is configured.
    pub fn coverage(&self) -> Option<&CoverageSource> {
        self.coverage.as_ref()
    }

    /// Reads every configured JUnit report under `root` into one report,
    /// with the files read. A pattern matching nothing, an unreadable file
    /// or one that does not parse is an error naming the file.
    pub fn read_junit(&self, root: &Path) -> Result<(JunitReport, Vec<String>), OracleError> {
        let mut report = JunitReport::default();
        let mut paths = Vec::new();
        for pattern in &self.junit {
            let files = expand(root, pattern).map_err(OracleError::new)?;
            if files.is_empty() {
                return Err(OracleError::new(format!(
                    "JUnit report `{pattern}` not found in {}{}",
                    root.display(),
                    match &self.command {
                        Some(c) => format!(" (does `{c}` write it?)"),
                        None => " (run the tests first, or fix the path)".to_string(),
                    }
                )));
            }
            for file in files {
                let shown = relative_to(root, &file.to_string_lossy());
                let text = read_text(root, &file)
                    .map_err(|e| OracleError::new(format!("JUnit report {shown}: {e}")))?;
                let one = junit::parse_junit(&text).map_err(|e| {
                    OracleError::new(format!("JUnit report {shown} does not parse: {e}"))
                })?;
                report.merge(one);
                paths.push(shown);
            }
        }
        Ok((report, paths))
    }

    /// The coverage report to read under `root`: the configured one, else
    /// (with a `coverage_threshold`) the first of
    /// [`DEFAULT_COVERAGE_REPORTS`] that exists; a threshold with no report
    /// to compare is an error naming where it looked.
    pub fn coverage_source(&self, root: &Path) -> Result<Option<CoverageSource>, OracleError> {
        if let Some(src) = &self.coverage {
            return Ok(Some(src.clone()));
        }
        let Some(threshold) = self.coverage_threshold else {
            return Ok(None);
        };
        let found = DEFAULT_COVERAGE_REPORTS
            .iter()
            .find(|(path, _)| root.join(path).is_file());
        match found {
            Some((path, format)) => Ok(Some(CoverageSource {
                format: *format,
                path: (*path).to_string(),
            })),
            None => Err(OracleError::new(format!(
                "coverage_threshold {}% needs a coverage report, and none of {} exists in {}: \
                 generate one (e.g. `cargo llvm-cov --lcov --output-path lcov.info`, \
                 `pytest --cov --cov-report=xml`, `npx c8 --reporter=lcov npm test`) or set \
                 `coverage: {{format: lcov, path: PATH}}`",
                trim_number(threshold),
                DEFAULT_COVERAGE_REPORTS
                    .iter()
                    .map(|(p, _)| *p)
                    .collect::<Vec<_>>()
                    .join(", "),
                root.display()
            ))),
        }
    }

    /// Reads the coverage report under `root` (see
    /// [`TestGate::coverage_source`]), with where it was.
    pub fn read_coverage(
        &self,
        root: &Path,
    ) -> Result<Option<(CoverageSource, CoverageReport)>, OracleError> {
        let Some(src) = self.coverage_source(root)? else {
            return Ok(None);
        };
        let text = read_text(root, Path::new(&src.path)).map_err(|e| {
            OracleError::new(format!(
                "coverage report {} ({}): {e}",
                src.path, src.format
            ))
        })?;
        let report = src.format.parse(&text).map_err(|e| {
            OracleError::new(format!(
                "coverage report {} does not parse as {}: {e}",
                src.path, src.format
            ))
        })?;
        Ok(Some((src, report)))
    }

    fn failing_tests_signal(
        &self,
        report: &JunitReport,
        reports: &[String],
        command_exit: Option<String>,
    ) -> Signal {
        let failing = report.failing();
        let mut reason = format!(
            "{failing} of {} test{} failed",
            report.total,
            if report.total == 1 { "" } else { "s" }
        );
        if report.errored > 0 && report.failed > 0 {
            reason.push_str(&format!(
                " ({} failures, {} errors)",
                report.failed, report.errored
            ));
        } else if report.errored > 0 {
            reason.push_str(" (errors)");
        }
        if let Some(exit) = &command_exit {
            reason.push_str(&format!(
                "; `{}` ended with {exit}",
                self.command.as_deref().unwrap_or("")
            ));
        }
        let named: Vec<String> = report
            .problems
            .iter()
            .take(3)
            .map(|p| p.describe())
            .collect();
        reason.push_str(": ");
        reason.push_str(&named.join("; "));
        if failing > named.len() {
            reason.push_str(&format!("; and {} more", failing - named.len()));
        }
        let mut steps: Vec<String> = report
            .problems
            .iter()
            .take(MAX_NAMED_TESTS)
            .map(|p| format!("fix {}", p.describe()))
            .collect();
        if report.problems.len() > MAX_NAMED_TESTS {
            steps.push(format!(
                "… and {} more failing tests (see {})",
                report.problems.len() - MAX_NAMED_TESTS,
                reports.join(", ")
            ));
        }
        steps.push(self.rerun_step());
        self.tests_signal(reason, steps)
            .with_files(reports.iter().cloned())
    }

    fn rerun_step(&self) -> String {
        match &self.command {
            Some(c) => format!("re-run `{c}` until every test passes"),
            None => "re-run the tests (and regenerate the JUnit reports) until every test passes"
                .to_string(),
        }
    }

    /// A block (or a prompt without `require_all_pass`) about failing tests.
    fn tests_signal(&self, reason: String, steps: Vec<String>) -> Signal {
        let signal = if self.require_all_pass {
            Signal::block(reason)
        } else {
            Signal::prompt(format!(
                "{reason} (require_all_pass is false: going on is allowed)"
            ))
            .with_severity(Severity::High)
        };
        signal
            .with_type(TESTS_FAILED_TYPE)
            .with_resolution_path(steps)
    }

    fn coverage_signal(
        &self,
        root: &Path,
        path: &str,
        report: &CoverageReport,
        threshold: f64,
    ) -> Signal {
        let (shown, gap) = format_gap(report.percent, threshold);
        let reason = format!(
            "line coverage {shown}% < {}% (−{gap} points){}",
            trim_number(threshold),
            match (report.lines_covered, report.lines_valid) {
                (Some(c), Some(v)) => format!(", {c} of {v} lines covered"),
                _ => String::new(),
            }
        );
        let least = report.least_covered(MAX_NAMED_FILES);
        let mut steps: Vec<String> = least
            .iter()
            .map(|f| {
                format!(
                    "add tests for {}: {}% ({} of {} lines covered)",
                    relative_to(root, &f.path),
                    trim_number((f.percent() * 10.0).floor() / 10.0),
                    f.lines_covered,
                    f.lines_valid
                )
            })
            .collect();
        if least.is_empty() {
            steps.push("add tests for the code the change introduces".to_string());
        }
        steps.push(match &self.command {
            Some(c) => format!(
                "re-run `{c}` and check that {path} reaches {}%",
                trim_number(threshold)
            ),
            None => format!(
                "regenerate {path} and check that it reaches {}%",
                trim_number(threshold)
            ),
        });
        Signal::block(reason)
            .with_type(COVERAGE_TYPE)
            .with_resolution_path(steps)
            .with_files(least.iter().map(|f| relative_to(root, &f.path)))
    }
}

/// `junit`: globs of report paths, each checked.
fn read_junit(given: Option<Strings>) -> Result<Vec<String>, OracleConfigError> {
    let example = "e.g. `junit: [target/junit.xml, reports/**/*.xml]`";
    let mut out = Vec::new();
    for (i, s) in given.map(|g| g.0).unwrap_or_default().iter().enumerate() {
        let key = format!("junit.{i}");
        let s = s.trim().to_string();
        if s.is_empty() {
            return Err(OracleConfigError::at(
                key,
                format!("a report path must not be empty; {example}"),
            ));
        }
        globset::GlobBuilder::new(&s)
            .literal_separator(true)
            .build()
            .map_err(|e| OracleConfigError::at(&key, format!("bad glob `{s}`: {e}")))?;
        out.push(s);
    }
    Ok(out)
}

/// The largest report read.
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a report as text (invalid UTF-8 replaced): only a regular file
/// inside the project (see [`crate::project_file`]); a missing file says so.
fn read_text(root: &Path, path: &Path) -> Result<String, String> {
    crate::project_file::read_in_project(root, path, MAX_REPORT_BYTES)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| e.to_string())
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// The files matching `pattern` (a path or a glob, relative to `root`),
/// sorted. Only the directories under the pattern's literal prefix are
/// walked; symbolic links to directories are not followed.
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    if !has_glob(pattern) {
        let p = root.join(pattern);
        return Ok(if p.is_file() { vec![p] } else { Vec::new() });
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts.iter().take_while(|p| !has_glob(p)).count();
    let mut base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        root.to_path_buf()
    };
    for p in &parts[..literal] {
        if !p.is_empty() {
            base.push(p);
        }
    }
    let rest = parts[literal..].join("/");
    let matcher = globset::GlobBuilder::new(&rest)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("bad glob `{pattern}`: {e}"))?
        .compile_matcher();
    let max_depth = if rest.contains("**") {
        usize::MAX
    } else {
        parts.len() - literal
    };
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut todo = vec![(base.clone(), 0usize)];
    while let Some((dir, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_WALK {
                return Err(format!(
                    "the glob `{pattern}` visits more than {MAX_WALK} files; make its directory part more specific"
                ));
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let Ok(rel) = path.strip_prefix(&base) else {
                continue;
            };
            if kind.is_dir() {
                if depth + 1 < max_depth && entry.file_name() != ".git" {
                    todo.push((path, depth + 1));
                }
            } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
                && matcher.is_match(rel)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A percentage without a useless `.0` (`80`, `72.5`).
fn trim_number(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// `value` and `threshold - value`, rounded to as few decimals (1 to 4) as
/// keep `value` reading below the threshold.
fn format_gap(value: f64, threshold: f64) -> (String, String) {
    for decimals in 1..=4usize {
        let factor = 10f64.powi(decimals as i32);
        let shown = (value * factor).round() / factor;
        let last = decimals == 4;
        if shown < threshold || last {
            let shown = if last {
                (value * factor).floor() / factor
            } else {
                shown
            };
            let gap = (((threshold - value) * factor).round() / factor).max(1.0 / factor);
            return (format!("{shown:.decimals$}"), format!("{gap:.decimals$}"));
        }
    }
    (value.to_string(), (threshold - value).to_string())
}

#[async_trait]
impl Oracle for TestGate {
    fn time_needed(&self) -> Option<Duration> {
        self.command.as_ref().map(|_| self.timeout)
    }

    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.evaluate_full(ctx).await?.signals)
    }

    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        let root = project_dir(self.project_dir.as_deref(), ctx);
        let mut eval = Evaluation::default();

        // 1. The command.
        let mut command_failed: Option<(String, String)> = None; // (exit, output)
        if let Some(cmd) = &self.command {
            let run = run_command("test command", cmd, &root, self.timeout).await?;
            if run.status.success() {
                eval.notes.push(format!("test command `{cmd}` passed"));
            } else {
                command_failed = Some((exit_text(&run), combined_output(&run)));
            }
        }

        // 2. The JUnit reports.
        let junit = if self.junit.is_empty() {
            None
        } else {
            match self.read_junit(&root) {
                Ok((report, paths)) => {
                    eval.notes.push(format!(
                        "JUnit ({}): {} tests, {} passed, {} failed, {} errors, {} skipped",
                        paths.join(", "),
                        report.total,
                        report.passed,
                        report.failed,
                        report.errored,
                        report.skipped
                    ));
                    Some((report, paths))
                }
                // The command failed (perhaps before writing its reports):
                // its failure is the verdict, the report problem a note.
                Err(e) if command_failed.is_some() => {
                    eval.notes
                        .push(format!("{e}; the failing test command is reported instead"));
                    None
                }
                Err(e) => return Err(e),
            }
        };

        match (&junit, &command_failed) {
            (Some((report, paths)), failed) if report.failing() > 0 => {
                eval.signals.push(self.failing_tests_signal(
                    report,
                    paths,
                    failed.as_ref().map(|(exit, _)| exit.clone()),
                ));
            }
            (_, Some((exit, output))) => {
                let cmd = self.command.as_deref().unwrap_or("");
                let (tail, skipped) = tail_lines(output, OUTPUT_TAIL_LINES);
                let mut reason = format!("test command `{cmd}` failed ({exit})");
                if let Some((report, _)) = &junit {
                    reason.push_str(&format!(
                        " although the JUnit reports show no failing test ({} tests): a build error, a crash, or reports from an earlier run?",
                        report.total
                    ));
                }
                if tail.is_empty() {
                    reason.push_str(" without any output");
                } else {
                    reason.push_str(&format!(
                        "; {}its output:\n{}",
                        if skipped > 0 { "the end of " } else { "" },
                        tail.join("\n")
                    ));
                }
                let steps = vec![
                    "read the output above and fix what fails".to_string(),
                    self.rerun_step(),
                ];
                eval.signals.push(self.tests_signal(reason, steps));
            }
            _ => {}
        }

        // 3. Coverage.
        let coverage = match self.read_coverage(&root) {
            Ok(c) => c,
            Err(e) if command_failed.is_some() => {
                eval.notes
                    .push(format!("{e}; the failing test command is reported instead"));
                None
            }
            Err(e) => return Err(e),
        };
        if let Some((src, report)) = coverage {
            let shown = trim_number((report.percent * 10.0).floor() / 10.0);
            match self.coverage_threshold {
                Some(t) if report.percent < t => {
                    eval.signals
                        .push(self.coverage_signal(&root, &src.path, &report, t));
                }
                Some(t) => eval.notes.push(format!(
                    "line coverage {shown}% in {} (threshold {}%)",
                    src.path,
                    trim_number(t)
                )),
                None => eval
                    .notes
                    .push(format!("line coverage {shown}% in {}", src.path)),
            }
        }
        Ok(eval)
    }

    fn config_warnings(&self) -> Vec<ahp_engine::OracleConfigWarning> {
        if !self.require_all_pass_set || self.command.is_some() || !self.junit.is_empty() {
            return Vec::new();
        }
        vec![OracleConfigError::at(
            "require_all_pass",
            "no tests are run or read here, so there is nothing for it to require: ahp does not \
             guess a test command (a repository's own command runs only once trusted); set \
             `command: cargo test` (or your test command) or `junit: PATH`",
        )]
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(
            if self.require_all_pass || self.coverage_threshold.is_some() {
                Intensity::Block
            } else {
                Intensity::Prompt
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_never_reads_as_reaching_the_threshold() {
        assert_eq!(format_gap(72.4, 80.0), ("72.4".into(), "7.6".into()));
        assert_eq!(format_gap(79.96, 80.0), ("79.96".into(), "0.04".into()));
        assert_eq!(format_gap(0.0, 50.0), ("0.0".into(), "50.0".into()));
        assert_eq!(
            format_gap(79.999999, 80.0),
            ("79.9999".into(), "0.0001".into())
        );
        assert_eq!(trim_number(80.0), "80");
        assert_eq!(trim_number(72.5), "72.5");
    }

    #[test]
    fn globs_expand_under_their_literal_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "r/a.xml",
            "r/b.xml",
            "r/c.txt",
            "r/sub/d.xml",
            "other/e.xml",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let names = |pat: &str| -> Vec<String> {
            expand(root, pat)
                .unwrap()
                .iter()
                .map(|p| relative_to(root, &p.to_string_lossy()))
                .collect()
        };
        assert_eq!(names("r/*.xml"), vec!["r/a.xml", "r/b.xml"]);
        assert_eq!(
            names("r/**/*.xml"),
            vec!["r/a.xml", "r/b.xml", "r/sub/d.xml"]
        );
        assert_eq!(names("**/e.xml"), vec!["other/e.xml"]);
        assert_eq!(names("r/{a,c}.*"), vec!["r/a.xml", "r/c.txt"]);
        assert_eq!(names("r/a.xml"), vec!["r/a.xml"]);
        assert!(names("nope/*.xml").is_empty());
        assert!(names("r/zzz.xml").is_empty());
    }
}
