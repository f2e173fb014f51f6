//! The `ContextLoader` oracle: at issue start, an **aid** with what the
//! agent should look at first — the issue's files (`issue.files`), each
//! with its size and first lines, and the recent commits touching them
//! (SPEC §5). It never blocks: a listed file that does not exist is noted
//! (and becomes a follow-up), and without git the history is skipped with
//! a note.
//!
//! ```yaml
//! hooks:
//!   post-issue-start:
//!     - oracle: ContextLoader
//!       config:
//!         include_files: true        # true (default): the issue's files; false: none;
//!                                    # globs: the issue's files plus project files matching them
//!         include_git_history: true  # default true: recent commits touching the files
//!         history_limit: 10          # default 10 commits
//!         preview_lines: 5           # default 5 first lines per file (0: sizes only)
//!         max_file_bytes: 20000      # default 20000: read at most this much of one file
//!         max_total_bytes: 100000    # default 100000: read at most this much in all
//! ```
//!
//! Paths are relative to the project directory; absolute paths and paths
//! with `..` are outside the project and are not read, nor are `.env`
//! files (PathGuard's `confirm` list): they are named as not read. At most
//! [`MAX_FILES`] files are listed. Without any file (no `issue.files` and
//! no glob match) there is nothing to say: no signal.

use crate::pathglob::Globs;
use crate::settings::{BoolOrList, at_least};
use crate::template::truncate;
use crate::workflow::git::{Git, GitError, project_dir_for};
use ahp_engine::oracle::kind_of;
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Signal,
    async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// ContextLoader's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextLoaderConfig {
    /// The issue's files (true, default), none (false), or these globs.
    pub include_files: Option<BoolOrList<String>>,
    /// The recent commits touching them (default true).
    pub include_git_history: Option<bool>,
    /// Commits listed at most (default 10).
    #[schemars(range(min = 1))]
    pub history_limit: Option<u64>,
    /// First lines shown of each file (default 5).
    pub preview_lines: Option<u64>,
    /// Files larger than this are listed without a preview (default 20000).
    #[schemars(range(min = 1))]
    pub max_file_bytes: Option<u64>,
    /// Bytes read in all (default 100000).
    #[schemars(range(min = 1))]
    pub max_total_bytes: Option<u64>,
}

/// The signal type.
pub const SIGNAL_TYPE: &str = "issue-context";

/// The most files one aid lists.
pub const MAX_FILES: usize = 50;

/// How many characters of a preview line are shown.
const LINE_CHARS: usize = 160;

/// Git's binary heuristic: a NUL byte in the first 8000 bytes.
const BINARY_SNIFF: usize = 8000;

/// How many entries a directory walk (globs without git) visits at most.
const WALK_LIMIT: usize = 20_000;

/// Gives the agent the issue's files and their history. See the [module
/// documentation](self).
#[derive(Debug, Clone)]
pub struct ContextLoader {
    show_files: bool,
    globs: Option<Globs>,
    history: bool,
    history_limit: usize,
    preview_lines: usize,
    max_file_bytes: u64,
    max_total_bytes: u64,
    project_dir: Option<PathBuf>,
}

impl ContextLoader {
    /// Builds the loader from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::workflow::context_loader::ContextLoader;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// assert!(ContextLoader::from_config(OracleConfig::empty()).is_ok());
    /// let err = ContextLoader::from_config(OracleConfig::new(&json!({"include_files": "yes"}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("include_files"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: ContextLoaderConfig = cfg.parse()?;
        let (show_files, globs) = match c.include_files {
            None | Some(BoolOrList::Bool(true)) => (true, None),
            Some(BoolOrList::Bool(false)) => (false, None),
            Some(BoolOrList::List(globs)) => (true, Some(Globs::new(&globs, "include_files")?)),
        };
        let history = c.include_git_history.unwrap_or(true);
        if !show_files && !history {
            return Err(OracleConfigError::whole(
                "include_files and include_git_history are both false, so ContextLoader has nothing to give; enable one of them or remove the entry",
            ));
        }
        let history_limit = at_least(c.history_limit, "history_limit", 10, 1)?;
        let preview_lines = at_least(c.preview_lines, "preview_lines", 5, 0)?;
        let max_file_bytes = at_least(c.max_file_bytes, "max_file_bytes", 20_000, 1)?;
        let max_total_bytes = at_least(c.max_total_bytes, "max_total_bytes", 100_000, 1)?;
        Ok(ContextLoader {
            show_files,
            globs,
            history,
            history_limit: usize::try_from(history_limit).unwrap_or(usize::MAX),
            preview_lines: usize::try_from(preview_lines).unwrap_or(usize::MAX),
            max_file_bytes,
            max_total_bytes,
            project_dir: cfg.project_dir(),
        })
    }

    /// The files to talk about: the issue's, then the glob matches.
    async fn paths(&self, ctx: &HookContext, dir: &Path) -> Result<Vec<String>, OracleError> {
        let mut paths: Vec<String> = match ctx.lookup("issue.files").as_deref() {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(other) => {
                return Err(OracleError::new(format!(
                    "issue.files must be a list of paths, found {}",
                    kind_of(other)
                )));
            }
        };
        if let Some(globs) = &self.globs {
            let all = match Git::new(dir).list_files().await {
                Ok(files) => files,
                Err(_) => walk(dir),
            };
            paths.extend(all.into_iter().filter(|p| globs.is_match(p)));
        }
        let mut seen = std::collections::HashSet::new();
        paths.retain(|p| !p.trim().is_empty() && seen.insert(p.trim().to_string()));
        Ok(paths)
    }
}

#[async_trait]
impl Oracle for ContextLoader {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let dir = project_dir_for(self.project_dir.as_deref(), ctx);
        let mut paths = self.paths(ctx, &dir).await?;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let more = paths.len().saturating_sub(MAX_FILES);
        paths.truncate(MAX_FILES);

        let (inside, outside): (Vec<String>, Vec<String>) =
            paths.into_iter().partition(|p| inside_project(p));
        let issue = match ctx.lookup("issue.id").as_deref().and_then(Value::as_str) {
            Some(id) => match ctx.lookup("issue.title").as_deref().and_then(Value::as_str) {
                Some(title) => format!("{id} \"{}\"", truncate(title, 100)),
                None => id.to_string(),
            },
            None => "the issue".to_string(),
        };

        let mut text = Vec::new();
        let mut follow_ups = Vec::new();
        let mut missing = Vec::new();
        if self.show_files {
            text.push(format!(
                "Files of {issue} ({}):",
                inside.len() + outside.len() + more
            ));
            let mut budget = self.max_total_bytes;
            for p in &inside {
                let (lines, found) = self.describe(p, &dir, &dir.join(p), &mut budget);
                if !found {
                    missing.push(p.clone());
                }
                text.extend(lines);
            }
            for p in &outside {
                text.push(format!("- {p}: outside the project, not read"));
            }
            if more > 0 {
                text.push(format!("- … and {more} more, not listed"));
            }
        } else {
            missing = inside
                .iter()
                .filter(|p| !dir.join(p).exists())
                .cloned()
                .collect();
        }

        if self.history && !inside.is_empty() {
            let git = Git::new(&dir);
            match git.log_for_paths(&inside, self.history_limit).await {
                Ok(commits) if commits.is_empty() => {
                    text.push("No commits touch these files yet.".to_string())
                }
                Ok(commits) => {
                    text.push(format!("Recent commits touching them ({}):", commits.len()));
                    text.extend(
                        commits
                            .iter()
                            .map(|c| format!("- {} {}", c.short_sha(), truncate(&c.subject, 120))),
                    );
                }
                Err(e @ GitError::NotARepository { .. })
                | Err(e @ GitError::GitNotFound { .. }) => {
                    text.push(format!("Git history skipped: {}.", short_git_reason(&e)))
                }
                Err(e) => text.push(format!("Git history skipped: {e}")),
            }
        }

        if !missing.is_empty() {
            follow_ups.push(format!(
                "the issue lists files that do not exist: {} — fix the paths in the issue's `files`, or create them if this issue is meant to",
                missing.join(", ")
            ));
        }
        if !outside.is_empty() {
            follow_ups.push(format!(
                "the issue lists paths outside the project ({}); list project-relative paths instead",
                outside.join(", ")
            ));
        }
        let mut signal = Signal::aid(text.join("\n"))
            .with_type(SIGNAL_TYPE)
            .with_files(inside)
            .with_resolution_path(follow_ups);
        if let ahp_engine::Payload::Aid(a) = &mut signal.payload {
            a.best_practices =
                vec!["read these files and their recent commits before changing them".to_string()];
        }
        Ok(vec![signal])
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Aid)
    }
}

/// Whether a project file is one PathGuard asks about before it is read
/// (`.env`, `config/.env.production`; not `.env.example`).
fn holds_secrets(path: &str) -> bool {
    use crate::policy::sensitive::{CONFIRM, NEVER, PathSet};
    use std::sync::OnceLock;
    static LISTS: OnceLock<Option<(PathSet, PathSet)>> = OnceLock::new();
    let lists =
        LISTS.get_or_init(|| Some((PathSet::new(CONFIRM).ok()?, PathSet::new(NEVER).ok()?)));
    // Unreachable (the built-in globs are tested); if it were, keep out.
    let Some((confirm, never)) = lists else {
        return true;
    };
    confirm.matches(path) && !never.matches(path)
}

impl ContextLoader {
    /// The lines describing one file, and whether it exists.
    fn describe(
        &self,
        shown: &str,
        dir: &Path,
        full: &Path,
        budget: &mut u64,
    ) -> (Vec<String>, bool) {
        use crate::project_file::{ReadError, open_in_project};
        // Only a count of entries is shown of a directory.
        if std::fs::metadata(full).is_ok_and(|m| m.is_dir()) {
            let entries = std::fs::read_dir(full).map(|d| d.count()).unwrap_or(0);
            return (
                vec![format!(
                    "- {}/ (directory, {entries} entr{})",
                    shown.trim_end_matches('/'),
                    if entries == 1 { "y" } else { "ies" }
                )],
                true,
            );
        }
        // `.env` and its kin are asked about before an agent reads them
        // (PathGuard); a policy's `include_files` must not hand them over
        // (a repository's own, untrusted, could).
        if holds_secrets(shown) {
            return (
                vec![format!("- {shown}: not read (it may hold secrets)")],
                full.exists(),
            );
        }
        // A repository can commit `notes.md -> ~/.ssh/id_rsa`, or a FIFO.
        let (file, meta) = match open_in_project(dir, Path::new(shown)) {
            Ok(opened) => opened,
            Err(ReadError::NotFound { .. }) => {
                return (vec![format!("- {shown}: not found")], false);
            }
            Err(e @ (ReadError::OutsideProject { .. } | ReadError::NotAFile { .. })) => {
                let why = match e {
                    ReadError::OutsideProject { .. } => "a symlink to outside the project",
                    _ => "not a regular file",
                };
                return (vec![format!("- {shown}: not read ({why})")], true);
            }
            Err(_) => return (vec![format!("- {shown}: could not be read")], true),
        };
        let size = meta.len();
        if *budget == 0 {
            return (
                vec![format!(
                    "- {shown} ({}; not read: max_total_bytes reached)",
                    human(size)
                )],
                true,
            );
        }
        let want = size.min(self.max_file_bytes).min(*budget);
        let mut data = Vec::new();
        let read = file.take(want).read_to_end(&mut data).is_ok();
        if !read {
            return (
                vec![format!("- {shown} ({}; could not be read)", human(size))],
                true,
            );
        }
        *budget = budget.saturating_sub(data.len() as u64);
        if data[..data.len().min(BINARY_SNIFF)].contains(&0) {
            return (vec![format!("- {shown} (binary, {})", human(size))], true);
        }
        let whole = data.len() as u64 >= size;
        let mut lines = data.iter().filter(|b| **b == b'\n').count();
        if whole && data.last().is_some_and(|b| *b != b'\n') {
            lines += 1;
        }
        let mut out = vec![if whole {
            format!(
                "- {shown} ({lines} line{}, {})",
                if lines == 1 { "" } else { "s" },
                human(size)
            )
        } else {
            format!(
                "- {shown} (at least {lines} lines, {}; first {} read)",
                human(size),
                human(data.len() as u64)
            )
        }];
        let text = String::from_utf8_lossy(&data);
        out.extend(text.lines().take(self.preview_lines).map(|l| {
            format!("    | {}", truncate(l.trim_end(), LINE_CHARS))
                .trim_end()
                .to_string()
        }));
        (out, true)
    }
}

/// `dir is not inside a git repository` without the advice meant for
/// changed files.
fn short_git_reason(e: &GitError) -> String {
    match e {
        GitError::NotARepository { dir } => {
            format!("{} is not inside a git repository", dir.display())
        }
        GitError::GitNotFound { .. } => "git is not installed".to_string(),
        other => other.to_string(),
    }
}

/// A relative path without `..`.
fn inside_project(p: &str) -> bool {
    let path = Path::new(p);
    !path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// `812 bytes`, `3.4 KB`, `1.2 MB`.
fn human(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} byte{}", if bytes == 1 { "" } else { "s" })
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// The files under `dir` (relative, `/`-separated), skipping hidden
/// directories, `target` and `node_modules`; at most [`WALK_LIMIT`]
/// entries are visited.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let mut visited = 0usize;
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > WALK_LIMIT {
                out.sort();
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = rel.join(&name);
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    if !name.starts_with('.') && name != "target" && name != "node_modules" {
                        stack.push(child);
                    }
                }
                Ok(_) => out.push(child.to_string_lossy().replace('\\', "/")),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_project_are_refused() {
        assert!(inside_project("src/a.rs"));
        assert!(inside_project("./src/a.rs"));
        assert!(!inside_project("../secret"));
        assert!(!inside_project("src/../../x"));
        assert!(!inside_project("/etc/passwd"));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human(1), "1 byte");
        assert_eq!(human(812), "812 bytes");
        assert_eq!(human(3482), "3.4 KB");
        assert_eq!(human(1_300_000), "1.2 MB");
    }

    #[test]
    fn walk_skips_hidden_and_build_directories() {
        let dir = tempfile::tempdir().unwrap();
        for p in ["a.md", "docs/b.md", ".git/x", "target/y", "node_modules/z"] {
            let full = dir.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "x").unwrap();
        }
        assert_eq!(walk(dir.path()), ["a.md", "docs/b.md"]);
    }
}
