//! The `LintChecker` oracle: runs the project's linters and reports their
//! findings; with `auto_fix`, runs their fixers first and reports what they
//! rewrote (SPEC §5).
//!
//! ```yaml
//! - oracle: LintChecker
//!   config:
//!     auto_fix: true              # default false
//!     timeout_ms: 300000          # default for every linter (5 minutes)
//!     linters:
//!       - name: rustfmt
//!         command: cargo fmt --all -- --check
//!         fix: cargo fmt --all
//!       - name: clippy
//!         command: cargo clippy --workspace -- -D warnings
//!         timeout_ms: 900000
//!       - npx eslint .            # shorthand: the command is also the name
//! ```
//!
//! Each linter runs with `sh -c` in the project root, one after the other
//! (fixers of different linters may touch the same files). Exit 0 means
//! clean; any other exit is a finding, shown as the first
//! [`MAX_FINDING_LINES`] lines of its output (stdout, then stderr). A
//! linter that cannot start (not installed: the shell's exit 127/126) or
//! runs past its time limit is an error: the oracle could not decide.
//!
//! Signals:
//! * a **prompt** of type `lint-findings` listing, per linter, what it
//!   reported (and, after a fix, what is still failing);
//! * with `auto_fix` and a linter with a `fix` command that failed: the
//!   fixer runs, the linter runs again, and a **control** of type
//!   `lint-autofix` reports the files the fixer changed, as the
//!   modification `files.fixed = [paths]` (its description names the fixer
//!   of each file). The files are already rewritten on disk, so the control
//!   is marked not reversible by ahp: review it with `git diff`.
//!
//! **Which files are watched for changes.** Before a fixer runs, the oracle
//! records size, modification time and a content hash of: the context's
//! `files.changed`, the files with uncommitted changes in git
//! (`git status`), and every existing file the linter's output names. A
//! file that was clean in git and is dirty after the fixer also counts as
//! changed by it. Outside git, a file that the linter did not name and that
//! is not among `files.changed` is not seen.
//!
//! ```
//! use ahp_oracles::workflow::lint::LintChecker;
//! use ahp_engine::OracleConfig;
//! use serde_json::json;
//! let config = json!({"linters": [{"name": "fmt", "command": "cargo fmt --check", "fix": "cargo fmt"}], "auto_fix": true});
//! let lint = LintChecker::from_config(OracleConfig::new(&config, None)).unwrap();
//! assert_eq!(lint.linters()[0].fix.as_deref(), Some("cargo fmt"));
//! let bad = json!({"linters": [{"name": "fmt", "comand": "cargo fmt --check"}]});
//! let err = LintChecker::from_config(OracleConfig::new(&bad, None)).unwrap_err();
//! assert_eq!(err.key.as_deref(), Some("linters.0.comand"));
//! ```

use crate::scripts::command::{
    MAX_TIMEOUT_MS, changed_files, combined_output, exit_text, head_lines, project_dir,
    relative_to, run_command,
};
use crate::scripts::process;
use crate::settings::{Millis, timeout_ms};
use ahp_engine::{
    ControlPayload, Evaluation, HookContext, Modification, Oracle, OracleConfig, OracleConfigError,
    OracleError, Payload, Signal, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// LintChecker's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintCheckerConfig {
    /// The linters: a command, or `{name, command, fix, timeout_ms}` (they
    /// need `ahp trust` in a project).
    // Required (the schema says so); an `Option` so that absent or null
    // gets a message with an example.
    #[schemars(with = "Vec<LinterItem>", length(min = 1))]
    pub linters: Option<Vec<LinterItem>>,
    /// Run the fixers of linters that fail (default false).
    pub auto_fix: Option<bool>,
    /// Each linter's time limit in milliseconds.
    pub timeout_ms: Option<Millis>,
}

/// One linter: its command, or a map.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(untagged)]
pub enum LinterItem {
    /// The command, which is also its name.
    Command(String),
    /// A named linter.
    Spec(LinterSpec),
}

impl<'de> Deserialize<'de> for LinterItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LinterItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a linter command or a map `{name, command, fix}`")
            }
            fn visit_str<E>(self, s: &str) -> Result<LinterItem, E> {
                Ok(LinterItem::Command(s.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<LinterItem, A::Error> {
                LinterSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(LinterItem::Spec)
            }
        }
        d.deserialize_any(V)
    }
}

/// The map form of a linter.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinterSpec {
    /// Shown in findings (default: the command).
    pub name: Option<String>,
    /// The lint command.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Its fixer.
    pub fix: Option<String>,
    /// Its time limit in milliseconds.
    pub timeout_ms: Option<Millis>,
}

/// The default time limit of each linter and fixer: five minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;

/// How many lines of a linter's output a finding shows.
pub const MAX_FINDING_LINES: usize = 20;

/// The signal type of the findings prompt.
pub const FINDINGS_TYPE: &str = "lint-findings";

/// The signal type of the control reporting what the fixers changed.
pub const AUTOFIX_TYPE: &str = "lint-autofix";

/// The context path the control sets to the list of fixed files.
pub const FIXED_TARGET: &str = "files.fixed";

/// The most files a linter's output may name that are watched for changes.
const MAX_MENTIONED: usize = 2_000;

/// Files bigger than this are compared by size and time only, not hashed.
const MAX_HASHED: u64 = 64 << 20;

/// How long each git query may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// One configured linter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linter {
    /// Its name in messages (unique).
    pub name: String,
    /// The check: exit 0 = clean.
    pub command: String,
    /// The command that fixes what it can, when there is one.
    pub fix: Option<String>,
    /// The time limit of the check and of the fixer.
    pub timeout: Duration,
}

/// Runs linters, reports findings, and with `auto_fix` applies their
/// fixers. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct LintChecker {
    linters: Vec<Linter>,
    auto_fix: bool,
    project_dir: Option<PathBuf>,
}

/// What one linter reported.
struct Finding {
    linter: String,
    command: String,
    exit: String,
    lines: Vec<String>,
    more: usize,
    /// The fixer ran (and how many files it changed) but the linter still fails.
    after_fix: Option<(String, usize)>,
    /// A fix command exists but did not run (no `auto_fix`).
    fix_available: Option<String>,
}

impl LintChecker {
    /// Builds the oracle from its `config:` map; every setting is checked
    /// here.
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let example = "e.g. `linters: [{name: clippy, command: cargo clippy -- -D warnings}]`";
        let c: LintCheckerConfig = cfg.parse()?;
        let Some(items) = c.linters else {
            return Err(OracleConfigError::whole(format!(
                "LintChecker needs `linters`, {example}"
            )));
        };
        let default_timeout = timeout_ms(c.timeout_ms, "timeout_ms", MAX_TIMEOUT_MS)?
            .unwrap_or(Duration::from_millis(DEFAULT_TIMEOUT_MS));
        let auto_fix = c.auto_fix.unwrap_or(false);
        if items.is_empty() {
            return Err(OracleConfigError::at(
                "linters",
                format!("the list is empty: add at least one linter, {example}"),
            ));
        }
        let mut linters: Vec<Linter> = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let key = format!("linters.{i}");
            let linter = match item {
                LinterItem::Command(s) if !s.trim().is_empty() => Linter {
                    name: s.trim().to_string(),
                    command: s.trim().to_string(),
                    fix: None,
                    timeout: default_timeout,
                },
                LinterItem::Command(_) => {
                    return Err(OracleConfigError::at(
                        key,
                        format!("a linter command must not be empty; {example}"),
                    ));
                }
                LinterItem::Spec(m) => {
                    let command = m.command.trim().to_string();
                    if command.is_empty() {
                        return Err(OracleConfigError::at(
                            format!("{key}.command"),
                            "`command` must not be empty, e.g. `command: cargo clippy`",
                        ));
                    }
                    let name = match m.name {
                        Some(n) if !n.trim().is_empty() => n.trim().to_string(),
                        Some(_) => {
                            return Err(OracleConfigError::at(
                                format!("{key}.name"),
                                "`name` must not be empty (leave it out to use the command)",
                            ));
                        }
                        None => command.clone(),
                    };
                    let fix = match m.fix {
                        Some(f) if !f.trim().is_empty() => Some(f.trim().to_string()),
                        Some(_) => {
                            return Err(OracleConfigError::at(
                                format!("{key}.fix"),
                                "`fix` must not be empty (leave it out when there is no fixer)",
                            ));
                        }
                        None => None,
                    };
                    let timeout =
                        timeout_ms(m.timeout_ms, &format!("{key}.timeout_ms"), MAX_TIMEOUT_MS)?
                            .unwrap_or(default_timeout);
                    Linter {
                        name,
                        command,
                        fix,
                        timeout,
                    }
                }
            };
            if linters.iter().any(|l| l.name == linter.name) {
                return Err(OracleConfigError::at(
                    key,
                    format!(
                        "two linters are named `{}`; give each its own `name`",
                        linter.name
                    ),
                ));
            }
            linters.push(linter);
        }
        Ok(LintChecker {
            linters,
            auto_fix,
            project_dir: cfg.project_dir(),
        })
    }

    /// The configured linters, in order.
    pub fn linters(&self) -> &[Linter] {
        &self.linters
    }

    /// Whether fixers run.
    pub fn auto_fix(&self) -> bool {
        self.auto_fix
    }

    /// Runs one linter, and its fixer when allowed; a finding when it still
    /// fails. Fixed files are added to `fixed` (path → fixer names).
    async fn check(
        &self,
        linter: &Linter,
        root: &Path,
        changed: Option<&[String]>,
        fixed: &mut BTreeMap<String, Vec<String>>,
        mentioned: &mut BTreeSet<String>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Finding>, OracleError> {
        let what = format!("linter `{}`", linter.name);
        let run = run_command(&what, &linter.command, root, linter.timeout).await?;
        if run.status.success() {
            notes.push(format!("linter `{}` passed", linter.name));
            return Ok(None);
        }
        let mut output = combined_output(&run);
        let mut exit = exit_text(&run);
        let names = mentioned_files(root, &output);
        let mut after_fix = None;
        match (&linter.fix, self.auto_fix) {
            (Some(fix), true) => {
                let dirty_before = git_dirty(root).await;
                let mut watch: BTreeSet<String> = names.iter().cloned().collect();
                watch.extend(changed.unwrap_or_default().iter().cloned());
                if let Some(d) = &dirty_before {
                    watch.extend(d.iter().cloned());
                }
                let before = snapshot(root, &watch);
                let fixer = format!("fixer of linter `{}`", linter.name);
                let fix_run = run_command(&fixer, fix, root, linter.timeout).await?;
                if !fix_run.status.success() {
                    notes.push(format!(
                        "fixer `{fix}` of linter `{}` ended with {}",
                        linter.name,
                        exit_text(&fix_run)
                    ));
                }
                let after = snapshot(root, &watch);
                let mut rewritten: BTreeSet<String> = watch
                    .iter()
                    .filter(|p| differs(before.get(*p), after.get(*p)))
                    .cloned()
                    .collect();
                if let (Some(before), Some(now)) = (&dirty_before, git_dirty(root).await) {
                    rewritten.extend(now.difference(before).cloned());
                }
                for path in &rewritten {
                    fixed
                        .entry(path.clone())
                        .or_default()
                        .push(linter.name.clone());
                }
                let rerun = run_command(&what, &linter.command, root, linter.timeout).await?;
                if rerun.status.success() {
                    notes.push(format!(
                        "linter `{}` passes after `{fix}` changed {} file(s)",
                        linter.name,
                        rewritten.len()
                    ));
                    return Ok(None);
                }
                output = combined_output(&rerun);
                exit = exit_text(&rerun);
                after_fix = Some((fix.clone(), rewritten.len()));
                mentioned.extend(mentioned_files(root, &output));
            }
            _ => mentioned.extend(names),
        }
        let (lines, more) = head_lines(&output, MAX_FINDING_LINES);
        Ok(Some(Finding {
            linter: linter.name.clone(),
            command: linter.command.clone(),
            exit,
            lines,
            more,
            after_fix,
            fix_available: if self.auto_fix {
                None
            } else {
                linter.fix.clone()
            },
        }))
    }
}

/// The findings prompt.
fn findings_signal(findings: &[Finding], mentioned: &BTreeSet<String>) -> Signal {
    let mut message = if findings.len() == 1 {
        format!("linter `{}` reports findings", findings[0].linter)
    } else {
        format!("{} linters report findings", findings.len())
    };
    let mut suggestions = Vec::new();
    for f in findings {
        message.push_str(&format!("\n\n`{}` (`{}`, {})", f.linter, f.command, f.exit));
        if let Some((fix, n)) = &f.after_fix {
            message.push_str(&format!(
                ", still failing after `{fix}` changed {n} file{}",
                if *n == 1 { "" } else { "s" }
            ));
        }
        message.push(':');
        if f.lines.is_empty() {
            message.push_str("\n  (no output)");
        }
        for line in &f.lines {
            message.push_str("\n  ");
            message.push_str(line);
        }
        if f.more > 0 {
            message.push_str(&format!("\n  … {} more lines", f.more));
        }
        if let Some(fix) = &f.fix_available {
            suggestions.push(format!(
                "run `{fix}` to fix what `{}` can fix automatically",
                f.linter
            ));
        }
        suggestions.push(match &f.after_fix {
            Some(_) => format!(
                "fix by hand what the fixer left, then re-run `{}`",
                f.command
            ),
            None => format!(
                "fix the findings of `{}`, then re-run `{}`",
                f.linter, f.command
            ),
        });
    }
    Signal::prompt(message)
        .with_type(FINDINGS_TYPE)
        .with_resolution_path(suggestions)
        .with_files(mentioned.iter().take(50).cloned())
}

/// The control reporting the files the fixers rewrote.
fn autofix_signal(fixed: &BTreeMap<String, Vec<String>>) -> Signal {
    let paths: Vec<String> = fixed.keys().cloned().collect();
    let description = fixed
        .iter()
        .map(|(path, by)| {
            let by: Vec<String> = by.iter().map(|n| format!("`{n}`")).collect();
            format!("{path}: rewritten by the fixer of {}", by.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let n = paths.len();
    let modification =
        Modification::set(FIXED_TARGET, Value::from(paths.clone())).describe(description);
    Signal::new(Payload::Control(ControlPayload {
        modifications: vec![modification],
        reversible: false,
        message: Some(format!(
            "the linters' fixers rewrote {n} file{}: {}; review the changes with `git diff`",
            if n == 1 { "" } else { "s" },
            paths.join(", ")
        )),
    }))
    .with_type(AUTOFIX_TYPE)
    .with_files(paths)
}

/// Existing files under `root` that `output` names (relative paths, or
/// absolute ones inside `root`), relative to `root`.
fn mentioned_files(root: &Path, output: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ':' | '(' | ')' | '"' | '\'' | ',' | '[' | ']' | '<' | '>' | '`' | '=' | '{' | '}'
            )
    };
    for token in output.split(separators) {
        if found.len() >= MAX_MENTIONED {
            break;
        }
        let token = token.trim_end_matches('.');
        if token.len() < 2 || token.len() > 1024 || !(token.contains('.') || token.contains('/')) {
            continue;
        }
        let rel = relative_to(root, token);
        if rel.is_empty()
            || Path::new(&rel).is_absolute()
            || rel.split('/').any(|c| c == "..")
            || found.contains(&rel)
        {
            continue;
        }
        if root.join(&rel).is_file() {
            found.insert(rel);
        }
    }
    found.into_iter().collect()
}

/// What is known about a file to tell whether a fixer changed it.
#[derive(Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    hash: Option<u64>,
}

/// Whether a file changed between two snapshots: by content when both
/// were hashed (a rewrite with the same bytes is no change), else by size
/// and modification time.
fn differs(before: Option<&Option<Stamp>>, after: Option<&Option<Stamp>>) -> bool {
    match (
        before.and_then(Option::as_ref),
        after.and_then(Option::as_ref),
    ) {
        (None, None) => false,
        (Some(a), Some(b)) => match (a.hash, b.hash) {
            (Some(x), Some(y)) => a.len != b.len || x != y,
            _ => a.len != b.len || a.modified != b.modified,
        },
        _ => true,
    }
}

/// Size, time and content hash of each path (`None`: no such file).
fn snapshot(root: &Path, paths: &BTreeSet<String>) -> BTreeMap<String, Option<Stamp>> {
    paths
        .iter()
        .map(|p| {
            let full = root.join(p);
            let stamp = std::fs::metadata(&full)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| {
                    let hash = if m.len() <= MAX_HASHED {
                        std::fs::read(&full).ok().map(|bytes| {
                            let mut h = std::collections::hash_map::DefaultHasher::new();
                            bytes.hash(&mut h);
                            h.finish()
                        })
                    } else {
                        None
                    };
                    Stamp {
                        len: m.len(),
                        modified: m.modified().ok(),
                        hash,
                    }
                });
            (p.clone(), stamp)
        })
        .collect()
}

/// Files under `root` with uncommitted changes (staged, unstaged,
/// untracked), relative to `root`; `None` outside a git work tree.
async fn git_dirty(root: &Path) -> Option<BTreeSet<String>> {
    let prefix = git(root, &["rev-parse", "--show-prefix"]).await?;
    let prefix = prefix.trim_end_matches(['\n', '\r']).to_string();
    let status = git(
        root,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=dirty",
        ],
    )
    .await?;
    let mut out = BTreeSet::new();
    let mut entries = status.split('\0');
    while let Some(entry) = entries.next() {
        let (Some(code), Some(path)) = (entry.get(..3), entry.get(3..)) else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        if code.starts_with('R') || code.starts_with('C') {
            entries.next(); // the original path of a rename or copy
        }
        if let Some(rel) = path.strip_prefix(prefix.as_str()) {
            out.insert(rel.to_string());
        }
    }
    Some(out)
}

/// Runs git in `root`; its stdout when it succeeds.
async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let mut cmd = super::git::command("git".as_ref(), root, GIT_TIMEOUT).await;
    cmd.args(args);
    match process::run(cmd, Vec::new(), GIT_TIMEOUT).await {
        Ok(run) if run.status.success() => Some(run.stdout.text()),
        _ => None,
    }
}

#[async_trait]
impl Oracle for LintChecker {
    /// The linters run one after the other, each fixer after its check.
    fn time_needed(&self) -> Option<Duration> {
        let runs = |l: &Linter| {
            if self.auto_fix && l.fix.is_some() {
                2
            } else {
                1
            }
        };
        Some(
            self.linters
                .iter()
                .map(|l| l.timeout.saturating_mul(runs(l)))
                .fold(Duration::ZERO, Duration::saturating_add),
        )
    }

    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.evaluate_full(ctx).await?.signals)
    }

    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        let root = project_dir(self.project_dir.as_deref(), ctx);
        let changed = changed_files(ctx);
        let mut eval = Evaluation::default();
        let mut findings = Vec::new();
        let mut fixed = BTreeMap::new();
        let mut mentioned = BTreeSet::new();
        for linter in &self.linters {
            if let Some(f) = self
                .check(
                    linter,
                    &root,
                    changed.as_deref(),
                    &mut fixed,
                    &mut mentioned,
                    &mut eval.notes,
                )
                .await?
            {
                findings.push(f);
            }
        }
        if !fixed.is_empty() {
            eval.signals.push(autofix_signal(&fixed));
        }
        if !findings.is_empty() {
            eval.signals.push(findings_signal(&findings, &mentioned));
        }
        Ok(eval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(root.join("b.py"), "").unwrap();
        let out = format!(
            "warning: unused\n  --> src/a.rs:3:5\nDiff in {}/src/a.rs at line 1:\nb.py:1:1: F401 `os` imported\n./b.py.\nmissing.rs:1\n../etc/passwd\n",
            root.display()
        );
        assert_eq!(mentioned_files(root, &out), vec!["b.py", "src/a.rs"]);
    }

    #[test]
    fn snapshots_see_content_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a"), "one").unwrap();
        let watch: BTreeSet<String> = ["a".to_string(), "gone".to_string()].into();
        let before = snapshot(root, &watch);
        assert_eq!(before, snapshot(root, &watch));
        std::fs::write(root.join("a"), "two").unwrap();
        std::fs::write(root.join("gone"), "now here").unwrap();
        let after = snapshot(root, &watch);
        assert!(differs(before.get("a"), after.get("a")));
        assert!(differs(before.get("gone"), after.get("gone")));
        // The same bytes written again: no change.
        std::fs::write(root.join("a"), "two").unwrap();
        let again = snapshot(root, &watch);
        assert!(!differs(after.get("a"), again.get("a")));
    }
}
