//! The `FileChangeLimiter` oracle: a change of more than `max_files` files
//! is too big to review in one go (SPEC §5). By default it answers with a
//! **control** that splits the change into batches — grouped by top-level
//! directory — written to `files.batches` for the caller (and for later
//! oracles) to work through; or with a **prompt** or a **block** listing
//! how many files each directory has.
//!
//! The changed files come from the context's `files.changed`; when the
//! context has none, they are computed with [`crate::workflow::git`] in the project
//! (against `git.trunk` when the context names it, else main/master).
//!
//! ```yaml
//! hooks:
//!   pre-issue-submit:
//!     - oracle: FileChangeLimiter
//!       config:
//!         max_files: 20            # required, ≥ 1: more changed files than this fire
//!         action: control          # control (default) | prompt | block
//!         control_action: split_batch   # the only one (default)
//!         batch_size: 20           # files per batch (default: max_files)
//!         exclude: ["*.lock", "docs/generated/**"]   # not counted, not batched
//! ```
//!
//! **The batch plan.** Files are grouped by their top-level directory
//! (files at the root form one group). A group that fits in `batch_size`
//! stays whole; a larger one is cut into pieces of `batch_size` (in path
//! order, so subdirectories stay together). Pieces are packed first-fit,
//! largest first, so the plan has few batches; files are sorted within a
//! batch. Exactly `max_files` files is within the limit.
//!
//! ```
//! use ahp_oracles::workflow::file_limit::split_batches;
//! let files: Vec<String> = ["src/a.rs", "src/b.rs", "docs/x.md", "README.md"]
//!     .iter().map(|s| s.to_string()).collect();
//! let batches = split_batches(&files, 3);
//! assert_eq!(batches, vec![
//!     vec!["README.md".to_string(), "src/a.rs".into(), "src/b.rs".into()],
//!     vec!["docs/x.md".to_string()],
//! ]);
//! ```

use crate::pathglob::Globs;
use crate::workflow::git::{GitError, project_dir_for, resolve_changes};
use ahp_engine::oracle::Strings;
use ahp_engine::{
    HookContext, Intensity, Modification, Oracle, OracleConfig, OracleConfigError, OracleError,
    Severity, Signal, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The signal type of every FileChangeLimiter signal.
pub const SIGNAL_TYPE: &str = "too-many-files";

/// Where the control writes the batch plan.
pub const BATCHES_TARGET: &str = "files.batches";

/// How many file names a message lists at most.
const MAX_NAMED: usize = 10;

/// FileChangeLimiter's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileChangeLimiterConfig {
    /// More changed files than this fire.
    // Required (the schema says so); an `Option` so that absent or null
    // gets a message with an example.
    #[schemars(with = "u64", range(min = 1))]
    pub max_files: Option<u64>,
    /// What to say past the limit (default control).
    #[serde(default)]
    pub action: LimitAction,
    /// How the control reorganises the change (the only one, the default).
    pub control_action: Option<ControlAction>,
    /// Files per batch (default: max_files).
    #[schemars(range(min = 1))]
    pub batch_size: Option<u64>,
    /// Globs of files not counted and not batched.
    pub exclude: Option<Strings>,
}

/// How a FileChangeLimiter control reorganises the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlAction {
    /// Batches by top-level directory.
    SplitBatch,
}

/// What the limiter says when the limit is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LimitAction {
    #[default]
    /// A control with a batch plan (`control_action`).
    Control,
    /// A prompt listing the counts per directory.
    Prompt,
    /// A block listing the counts per directory.
    Block,
}

/// Limits the number of changed files. See the [module
/// documentation](self).
#[derive(Debug, Clone)]
pub struct FileChangeLimiter {
    max_files: usize,
    action: LimitAction,
    batch_size: usize,
    exclude: Option<Globs>,
    project_dir: Option<PathBuf>,
}

/// A whole number ≥ 1 at `key`.
fn positive(n: u64, key: &str, example: &str) -> Result<usize, OracleConfigError> {
    match n {
        0 => Err(OracleConfigError::at(
            key,
            format!(
                "`{key}` must be a whole number of at least 1 (e.g. `{key}: {example}`), found 0"
            ),
        )),
        n => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

impl FileChangeLimiter {
    /// Builds the limiter from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::workflow::file_limit::FileChangeLimiter;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let err = FileChangeLimiter::from_config(OracleConfig::new(&json!({"max_files": 0}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("max_files"));
    /// let err = FileChangeLimiter::from_config(OracleConfig::new(&json!({"max_files": 5, "action": "warn"}), None)).unwrap_err();
    /// assert!(err.message.contains("expected one of control, prompt, block"), "{err}");
    /// let err = FileChangeLimiter::from_config(OracleConfig::new(&json!({"max_files": 5, "exclude": [1]}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("exclude.0"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: FileChangeLimiterConfig = cfg.parse()?;
        let max_files = c.max_files.ok_or_else(|| {
            OracleConfigError::at(
                "max_files",
                "missing `max_files`: the most changed files allowed, e.g. `max_files: 20`",
            )
        })?;
        let max_files = positive(max_files, "max_files", "20")?;
        let batch_size = match c.batch_size {
            Some(n) => positive(n, "batch_size", "10")?,
            None => max_files,
        };
        let exclude = match c.exclude {
            Some(globs) => Some(Globs::new(&globs.0, "exclude")?),
            None => None,
        };
        Ok(FileChangeLimiter {
            max_files,
            action: c.action,
            batch_size,
            exclude,
            project_dir: cfg.project_dir(),
        })
    }

    /// The answer to a change too large for git to list within its
    /// output cap: refused under `action: block`, else a question (no
    /// batches can be planned from names not read).
    fn beyond_count(&self) -> Signal {
        let message = format!(
            "more files changed than ahp can list (git's list of their names passed 1 MiB; limit {})",
            self.max_files
        );
        let steps = [
            "check that build output and dependencies are in .gitignore".to_string(),
            format!(
                "split the change so that no submission has more than {} files",
                self.max_files
            ),
        ];
        match self.action {
            LimitAction::Block => Signal::block(message).with_resolution_path(steps),
            LimitAction::Prompt | LimitAction::Control => Signal::prompt(message)
                .with_severity(Severity::Medium)
                .with_resolution_path(steps),
        }
    }

    /// The signal for these changed paths (none within the limit). This is
    /// what [`Oracle::evaluate`] returns once the paths are known.
    ///
    /// ```
    /// use ahp_oracles::workflow::file_limit::FileChangeLimiter;
    /// use ahp_engine::{OracleConfig, Intensity};
    /// let limiter = FileChangeLimiter::from_config(OracleConfig::new(&serde_json::json!({"max_files": 2}), None)).unwrap();
    /// let paths: Vec<String> = vec!["a/1".into(), "a/2".into(), "b/1".into()];
    /// let s = limiter.check(&paths).unwrap();
    /// assert_eq!(s.intensity(), Intensity::Control);
    /// assert_eq!(s.payload.summary(), "3 files changed (limit 2): split into 2 batches");
    /// assert!(limiter.check(&paths[..2]).is_none());
    /// ```
    pub fn check(&self, paths: &[String]) -> Option<Signal> {
        let (counted, excluded): (Vec<String>, Vec<String>) = paths
            .iter()
            .cloned()
            .partition(|p| !self.exclude.as_ref().is_some_and(|g| g.is_match(p)));
        let n = counted.len();
        if n <= self.max_files {
            return None;
        }
        let batches = split_batches(&counted, self.batch_size);
        let plan = describe_plan(&batches);
        let excluded_note = if excluded.is_empty() {
            String::new()
        } else {
            format!(
                " ({} excluded file{} not counted: {})",
                excluded.len(),
                plural(excluded.len()),
                crate::scripts::command::name_some(&excluded, MAX_NAMED)
            )
        };
        let head = format!("{n} files changed (limit {})", self.max_files);
        let signal = match self.action {
            LimitAction::Control => {
                let message = format!(
                    "{head}: split into {} batch{}",
                    batches.len(),
                    if batches.len() == 1 { "" } else { "es" }
                );
                let description = format!(
                    "work through the change in batches of at most {} files, one batch at a time — {plan}{excluded_note}",
                    self.batch_size
                );
                Signal::control(vec![
                    Modification::set(BATCHES_TARGET, json!(batches)).describe(description)
                ])
                .with_message(message)
            }
            LimitAction::Prompt => Signal::prompt(format!(
                "{head}: {}{excluded_note}",
                per_directory(&counted)
            ))
            .with_severity(Severity::Medium)
            .with_resolution_path([
                self.split_step(&batches, &plan),
                format!(
                    "if the change cannot be split, confirm with the user that reviewing {n} files at once is fine"
                ),
            ]),
            LimitAction::Block => Signal::block(format!(
                "{head}: {}{excluded_note}",
                per_directory(&counted)
            ))
            .with_resolution_path([
                self.split_step(&batches, &plan),
                format!(
                    "submit each batch on its own, so that no submission has more than {} files",
                    self.max_files
                ),
            ]),
        };
        Some(signal.with_type(SIGNAL_TYPE).with_files(counted))
    }

    fn split_step(&self, batches: &[Vec<String>], plan: &str) -> String {
        format!(
            "split the change into {} batch{} of at most {} files: {plan}",
            batches.len(),
            if batches.len() == 1 { "" } else { "es" },
            self.batch_size
        )
    }
}

#[async_trait]
impl Oracle for FileChangeLimiter {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let dir = project_dir_for(self.project_dir.as_deref(), ctx);
        let change = match resolve_changes(ctx, &dir).await {
            Ok(change) => change,
            // A list of names past git's output cap is far past any limit:
            // an error there would let the largest changes through.
            Err(GitError::TooMuchOutput { .. }) => return Ok(vec![self.beyond_count()]),
            Err(e) => {
                return Err(OracleError::new(format!(
                    "cannot count the changed files: {e}"
                )));
            }
        };
        Ok(self.check(&change.paths()).into_iter().collect())
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(match self.action {
            LimitAction::Control => Intensity::Control,
            LimitAction::Prompt => Intensity::Prompt,
            LimitAction::Block => Intensity::Block,
        })
    }
}

/// The top-level directory of a path (`src` for `src/a/b.rs`), or `None`
/// for a file at the root.
fn top_dir(path: &str) -> Option<&str> {
    path.trim_start_matches("./")
        .split_once('/')
        .map(|(d, _)| d)
}

fn label(dir: Option<&str>) -> String {
    match dir {
        Some(d) => format!("{d}/"),
        None => "(root)".to_string(),
    }
}

/// Splits `files` into batches of at most `batch_size` (≥ 1), grouped by
/// top-level directory: see the [module documentation](self).
pub fn split_batches(files: &[String], batch_size: usize) -> Vec<Vec<String>> {
    let size = batch_size.max(1);
    let mut groups: BTreeMap<Option<&str>, Vec<&String>> = BTreeMap::new();
    for f in files {
        groups.entry(top_dir(f)).or_default().push(f);
    }
    let mut pieces: Vec<Vec<&String>> = Vec::new();
    for (_, mut group) in groups {
        group.sort();
        group.dedup();
        pieces.extend(group.chunks(size).map(<[&String]>::to_vec));
    }
    // Largest first; the sort is stable, so equal sizes keep directory order.
    pieces.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut batches: Vec<Vec<&String>> = Vec::new();
    for piece in pieces {
        match batches.iter_mut().find(|b| b.len() + piece.len() <= size) {
            Some(batch) => batch.extend(piece),
            None => batches.push(piece),
        }
    }
    batches
        .into_iter()
        .map(|mut b| {
            b.sort();
            b.into_iter().cloned().collect()
        })
        .collect()
}

/// `src/ 12, tests/ 8, (root) 1` — largest first.
fn per_directory(files: &[String]) -> String {
    let mut counts: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    for f in files {
        *counts.entry(top_dir(f)).or_default() += 1;
    }
    let mut counts: Vec<(Option<&str>, usize)> = counts.into_iter().collect();
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
        .iter()
        .map(|(d, n)| format!("{} {n}", label(*d)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `batch 1: src/ (12), tests/ (8); batch 2: docs/ (5)`.
fn describe_plan(batches: &[Vec<String>]) -> String {
    batches
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut dirs: Vec<(Option<&str>, usize)> = Vec::new();
            for f in b {
                let d = top_dir(f);
                match dirs.iter_mut().find(|(x, _)| *x == d) {
                    Some((_, n)) => *n += 1,
                    None => dirs.push((d, 1)),
                }
            }
            let dirs: Vec<String> = dirs
                .iter()
                .map(|(d, n)| format!("{} ({n})", label(*d)))
                .collect();
            format!("batch {}: {}", i + 1, dirs.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(spec: &[(&str, usize)]) -> Vec<String> {
        spec.iter()
            .flat_map(|(dir, n)| (0..*n).map(move |i| format!("{dir}/f{i:02}.rs")))
            .collect()
    }

    #[test]
    fn directories_stay_together_when_they_fit() {
        let files = paths(&[("src", 12), ("tests", 8), ("docs", 5)]);
        let b = split_batches(&files, 20);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].len(), 20);
        assert!(
            b[0].iter()
                .all(|f| f.starts_with("src/") || f.starts_with("tests/"))
        );
        assert!(b[1].iter().all(|f| f.starts_with("docs/")));
        assert_eq!(
            describe_plan(&b),
            "batch 1: src/ (12), tests/ (8); batch 2: docs/ (5)"
        );
    }

    #[test]
    fn a_directory_larger_than_a_batch_is_cut() {
        let files = paths(&[("src", 7)]);
        let b = split_batches(&files, 3);
        assert_eq!(b.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
        let flat: Vec<String> = b.concat();
        assert_eq!(flat, files, "in path order, nothing lost");
    }

    #[test]
    fn root_files_form_one_group() {
        let files: Vec<String> = vec!["Cargo.toml".into(), "README.md".into(), "src/a.rs".into()];
        assert_eq!(per_directory(&files), "(root) 2, src/ 1");
        assert_eq!(top_dir("./src/x"), Some("src"));
    }
}
