//! Changed files and commits, read from git by running the `git` command
//! (never a git library: shelling out is exact and costs no build time).
//!
//! What "the change" is ([`Git::changes`]): every file that differs between
//! the **merge base** of HEAD with the trunk branch and the **working tree**
//! — committed on the branch since it left the trunk, staged, unstaged, and
//! untracked (not ignored) files, each once. Paths are relative to the
//! repository root with `/` separators; a rename is reported under its new
//! path (the old one in [`ChangedFile::old_path`]). Line counts come from
//! `git diff --numstat` (untracked files are counted by reading them); a
//! binary file is flagged and counts 0 lines.
//!
//! The files ahp itself writes as it runs ([`is_ahp_output`]: the signal
//! log and its rotations, the retrospectives) are never
//! part of the change, whatever `.gitignore` says: otherwise every hook
//! call would grow the change it judges.
//!
//! The trunk is the name given (e.g. `settings.trunk`), else `main` when
//! that branch exists, else `master`, else `origin/main` or `origin/master`
//! (a CI clone often has only the remote branch). On the trunk itself the
//! merge base is HEAD, so only staged, unstaged and untracked files count;
//! the same holds without any trunk branch or without a common history.
//!
//! Every command runs through [`crate::scripts::process::run`] with a timeout
//! (default [`DEFAULT_TIMEOUT`]), machine-readable `-z` output (file names
//! with spaces, newlines or any Unicode come through intact), and options
//! that keep user configuration (colours, external diff tools, signatures)
//! out of the output.
//!
//! The API is async (the oracles are): [`ChangedFiles`] is an
//! `async_trait`, so a test or another backend can stand in for [`Git`].
//!
//! ```no_run
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use ahp_oracles::workflow::git::{ChangedFiles, Git};
//! let git = Git::new(".");
//! let change = git.changes(None).await?;
//! println!("{} files changed against {:?}", change.files.len(), change.trunk);
//! let commits = git.commits_since_base(None).await?;
//! let ctx = serde_json::json!({"files": change.to_context(), "git": change.git_context(&commits)});
//! # Ok::<(), ahp_oracles::workflow::git::GitError>(())
//! # });
//! ```

use crate::scripts::process::{ProcessError, Run, run};
use ahp_engine::{HookContext, async_trait};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// How long one git command may run before its process group is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of an untracked file is read to count its lines; a longer file
/// is counted up to here.
const UNTRACKED_READ_CAP: u64 = 16 << 20;

/// Git's binary heuristic: a NUL byte in the first 8000 bytes.
const BINARY_SNIFF: usize = 8000;

ahp_engine::name_enum! {
    /// What happened to a file, relative to the merge base.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum FileStatus {
        /// New and tracked (staged or committed on the branch).
        Added => "added",
        /// Changed (content, mode or type), or in a merge conflict.
        Modified => "modified",
        /// Removed.
        Deleted => "deleted",
        /// Moved; the file's path is the new one.
        Renamed => "renamed",
        /// New and not yet added to git (and not ignored).
        Untracked => "untracked",
    }
}

impl FileStatus {
    /// Parses a name as written by [`FileStatus::as_str`].
    pub fn parse(name: &str) -> Option<FileStatus> {
        FileStatus::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Relative to the repository root, `/`-separated; the new path of a
    /// rename.
    pub path: String,
    /// What happened to it.
    pub status: FileStatus,
    /// Lines added (0 for binary files).
    pub added: u64,
    /// Lines removed (0 for binary files).
    pub removed: u64,
    /// Git sees it as binary (`-` in `--numstat`).
    pub binary: bool,
    /// The path before a rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
}

impl ChangedFile {
    /// A file with no line counts.
    pub fn new(path: impl Into<String>, status: FileStatus) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            status,
            added: 0,
            removed: 0,
            binary: false,
            old_path: None,
        }
    }
}

/// The change of the work in progress (see the [module docs](self)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// The trunk branch compared against, when one was found.
    pub trunk: Option<String>,
    /// The merge base of HEAD with the trunk (full sha), when there is one.
    pub merge_base: Option<String>,
    /// The changed files, sorted by path, each once.
    pub files: Vec<ChangedFile>,
    /// Sum of the files' added lines.
    pub lines_added: u64,
    /// Sum of the files' removed lines.
    pub lines_removed: u64,
}

impl ChangeSet {
    /// A change set of these files (sorted, deduplicated by path — the
    /// first entry of a path wins), with the line totals summed.
    pub fn from_files(
        trunk: Option<String>,
        merge_base: Option<String>,
        files: Vec<ChangedFile>,
    ) -> ChangeSet {
        let mut by_path: BTreeMap<String, ChangedFile> = BTreeMap::new();
        for f in files {
            by_path.entry(f.path.clone()).or_insert(f);
        }
        let files: Vec<ChangedFile> = by_path.into_values().collect();
        ChangeSet {
            trunk,
            merge_base,
            lines_added: files.iter().map(|f| f.added).sum(),
            lines_removed: files.iter().map(|f| f.removed).sum(),
            files,
        }
    }

    /// The changed paths.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// The context's `files` object: `{changed, changed_count, lines_added,
    /// lines_removed, details: [{path, status, added, removed, binary}]}`
    /// (a rename's detail also has `old_path`).
    ///
    /// ```
    /// use ahp_oracles::workflow::git::{ChangeSet, ChangedFile, FileStatus};
    /// let c = ChangeSet::from_files(None, None, vec![ChangedFile::new("src/a.rs", FileStatus::Added)]);
    /// let v = c.to_context();
    /// assert_eq!(v["changed"], serde_json::json!(["src/a.rs"]));
    /// assert_eq!(v["changed_count"], 1);
    /// assert_eq!(v["details"][0]["status"], "added");
    /// ```
    pub fn to_context(&self) -> Value {
        json!({
            "changed": self.paths(),
            "changed_count": self.files.len(),
            "lines_added": self.lines_added,
            "lines_removed": self.lines_removed,
            "details": self.files,
        })
    }

    /// The context's `git` object: `{trunk, merge_base, commits: [{sha,
    /// subject, body}]}` (commits oldest first, as given).
    pub fn git_context(&self, commits: &[Commit]) -> Value {
        json!({
            "trunk": self.trunk,
            "merge_base": self.merge_base,
            "commits": commits,
        })
    }

    /// The change as the context gives it (`files.changed`, with
    /// `files.details` for statuses and line counts when present; `trunk`
    /// and `merge_base` from `git.*`). `None` when the context has no
    /// `files`, or only a `changed_count` without the list — then the
    /// change has to be computed.
    ///
    /// ```
    /// use ahp_oracles::workflow::git::{ChangeSet, FileStatus};
    /// let ctx: ahp_engine::HookContext = serde_json::from_value(serde_json::json!({
    ///     "files": {"changed": ["a.rs", "b.rs"], "details": [{"path": "b.rs", "status": "deleted"}]}
    /// })).unwrap();
    /// let c = ChangeSet::from_context(&ctx).unwrap();
    /// assert_eq!(c.files[0].status, FileStatus::Modified); // no detail: assumed modified
    /// assert_eq!(c.files[1].status, FileStatus::Deleted);
    /// ```
    pub fn from_context(ctx: &HookContext) -> Option<ChangeSet> {
        let files = ctx.files.as_ref()?;
        let mut details: HashMap<String, ChangedFile> = HashMap::new();
        let mut detail_order: Vec<String> = Vec::new();
        if let Some(Value::Array(items)) = files.extra.get("details") {
            for item in items {
                let Some(path) = item.get("path").and_then(Value::as_str) else {
                    continue;
                };
                let status = item
                    .get("status")
                    .and_then(Value::as_str)
                    .and_then(FileStatus::parse)
                    .unwrap_or(FileStatus::Modified);
                let num = |k: &str| item.get(k).and_then(Value::as_u64).unwrap_or(0);
                let f = ChangedFile {
                    path: path.to_string(),
                    status,
                    added: num("added"),
                    removed: num("removed"),
                    binary: item.get("binary").and_then(Value::as_bool).unwrap_or(false),
                    old_path: item
                        .get("old_path")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                };
                detail_order.push(f.path.clone());
                details.insert(f.path.clone(), f);
            }
        }
        let paths: Vec<String> = if files.changed.is_empty() {
            detail_order
        } else {
            files.changed.clone()
        };
        if paths.is_empty() && files.changed_count > 0 {
            return None;
        }
        let list = paths
            .into_iter()
            .map(|p| {
                details
                    .remove(&p)
                    .unwrap_or_else(|| ChangedFile::new(p, FileStatus::Modified))
            })
            .collect();
        let text = |path: &str| {
            ctx.lookup(path)
                .and_then(|v| v.as_str().map(str::to_string))
        };
        Some(ChangeSet::from_files(
            text("git.trunk"),
            text("git.merge_base"),
            list,
        ))
    }
}

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// The full sha.
    pub sha: String,
    /// The subject (first paragraph of the message, on one line).
    pub subject: String,
    /// The rest of the message, without trailing blank lines.
    #[serde(default)]
    pub body: String,
}

impl Commit {
    /// The first 7 characters of the sha.
    pub fn short_sha(&self) -> &str {
        match self.sha.char_indices().nth(7) {
            Some((i, _)) => &self.sha[..i],
            None => &self.sha,
        }
    }

    /// The commits of the context's `git.commits`: `Ok(None)` when absent,
    /// an error naming the bad item when it is not a list of `{sha,
    /// subject, body}` (a `message` is accepted instead of subject and
    /// body: its first line is the subject).
    ///
    /// ```
    /// use ahp_oracles::workflow::git::Commit;
    /// let ctx: ahp_engine::HookContext = serde_json::from_value(serde_json::json!({
    ///     "git": {"commits": [{"sha": "abc1234def", "subject": "feat: x"}]}
    /// })).unwrap();
    /// let commits = Commit::from_context(&ctx).unwrap().unwrap();
    /// assert_eq!(commits[0].short_sha(), "abc1234");
    /// ```
    pub fn from_context(ctx: &HookContext) -> Result<Option<Vec<Commit>>, String> {
        let Some(value) = ctx.lookup("git.commits") else {
            return Ok(None);
        };
        let Value::Array(items) = value.as_ref() else {
            return Err(format!(
                "git.commits must be a list of {{sha, subject, body}}, found {}",
                ahp_engine::oracle::kind_of(&value)
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
            let (subject, body) = match (text("subject"), text("message")) {
                (Some(s), _) => (s, text("body").unwrap_or_default()),
                (None, Some(m)) => {
                    let (s, b) = m.split_once('\n').unwrap_or((m.as_str(), ""));
                    (s.trim_end().to_string(), b.trim().to_string())
                }
                (None, None) => {
                    return Err(format!(
                        "git.commits.{i} has no `subject` (expected {{sha, subject, body}})"
                    ));
                }
            };
            out.push(Commit {
                sha: text("sha").unwrap_or_default(),
                subject,
                body,
            });
        }
        Ok(Some(out))
    }
}

/// Why git could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The directory is not inside a git work tree.
    #[error("{} is not inside a git repository; pass the changed files in the context (files.changed) or run inside a repository", dir.display())]
    NotARepository {
        /// The directory asked about.
        dir: PathBuf,
    },
    /// The directory does not exist.
    #[error("project directory {} does not exist; pass the changed files in the context (files.changed) or run inside a repository", dir.display())]
    NoSuchDirectory {
        /// The directory asked about.
        dir: PathBuf,
    },
    /// The git program could not be found.
    #[error(
        "git is not installed (or `{program}` is not on PATH): install git, or pass the changed files in the context (files.changed)"
    )]
    GitNotFound {
        /// The program that was run.
        program: String,
    },
    /// A trunk branch was named but does not exist.
    #[error("trunk branch `{name}` does not exist in {}; name an existing branch (settings.trunk) or leave it out to use main or master", dir.display())]
    TrunkNotFound {
        /// The name given.
        name: String,
        /// The repository.
        dir: PathBuf,
    },
    /// A git command failed.
    #[error("`{command}` failed{}: {stderr}", code.map(|c| format!(" (exit {c})")).unwrap_or_default())]
    Command {
        /// The command line.
        command: String,
        /// Its exit code, when it exited.
        code: Option<i32>,
        /// What it said on stderr (trimmed).
        stderr: String,
    },
    /// A git command ran out of time.
    #[error("`{command}` timed out after {} ms; its process group was killed", timeout.as_millis())]
    TimedOut {
        /// The command line.
        command: String,
        /// The limit.
        timeout: Duration,
    },
    /// A git command printed more than the output cap.
    #[error(
        "`{command}` printed more than 1 MiB: too many changed files to list (is a build or dependency directory missing from .gitignore?)"
    )]
    TooMuchOutput {
        /// The command line.
        command: String,
    },
    /// Anything else (could not start git, unexpected output).
    #[error("{0}")]
    Other(String),
}

/// A source of changed files: [`Git`], or a stand-in in tests.
#[async_trait]
pub trait ChangedFiles: Send + Sync {
    /// The change against the merge base with `trunk` (`None`: main, else
    /// master); see the [module docs](self).
    async fn changes(&self, trunk: Option<&str>) -> Result<ChangeSet, GitError>;
}

/// Reads changes and commits from the git repository containing a
/// directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    program: OsString,
    timeout: Duration,
}

/// HEAD, the trunk and their merge base.
struct Base {
    top: PathBuf,
    head: Option<String>,
    trunk: Option<String>,
    merge_base: Option<String>,
}

impl Git {
    /// A reader for the repository containing `project_dir` (any directory
    /// inside the work tree).
    pub fn new(project_dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: project_dir.into(),
            program: OsString::from("git"),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    #[cfg(test)]
    fn with_program(mut self, program: impl Into<OsString>) -> Git {
        self.program = program.into();
        self
    }

    /// The directory given to [`Git::new`].
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The branch checked out; `None` on a detached HEAD, outside a
    /// repository, or when git cannot tell.
    pub async fn current_branch(&self) -> Option<String> {
        let out = self
            .ok(&self.dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
            .await
            .ok()?;
        Some(out.stdout.text().trim().to_string()).filter(|b| !b.is_empty())
    }

    /// The local branches, by short name.
    pub async fn local_branches(&self) -> Result<Vec<String>, GitError> {
        let out = self
            .ok(
                &self.dir,
                &["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
            )
            .await?;
        Ok(out
            .stdout
            .text()
            .lines()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The bytes of `path` (relative to the top of the work tree) at
    /// `revision`, within the output cap of every git command. A revision
    /// that starts with `-` is refused: git would read it as an option
    /// (`--output=FILE` writes FILE); name a branch as `refs/heads/NAME`.
    pub async fn file_at(&self, revision: &str, path: &str) -> Result<Vec<u8>, GitError> {
        if revision.starts_with('-') {
            return Err(GitError::Command {
                command: "git show".into(),
                code: None,
                stderr: format!("`{revision}` reads as an option, not a revision"),
            });
        }
        let out = self
            .ok(&self.dir, &["show", &format!("{revision}:{path}")])
            .await?;
        Ok(out.stdout.data)
    }

    /// The root of the work tree.
    pub async fn toplevel(&self) -> Result<PathBuf, GitError> {
        if !self.dir.is_dir() {
            return Err(GitError::NoSuchDirectory {
                dir: self.dir.clone(),
            });
        }
        let out = self
            .run(&self.dir, &["rev-parse", "--show-toplevel"])
            .await?;
        if !out.status.success() {
            let stderr = out.stderr.text();
            if stderr.contains("not a git repository") {
                return Err(GitError::NotARepository {
                    dir: self.dir.clone(),
                });
            }
            return Err(failed("git rev-parse --show-toplevel", &out));
        }
        let text = out.stdout.text();
        let top = text.trim_end_matches(['\n', '\r']);
        if top.is_empty() {
            // A bare repository or the inside of .git.
            return Err(GitError::NotARepository {
                dir: self.dir.clone(),
            });
        }
        Ok(PathBuf::from(top))
    }

    /// The changed files (see the [module docs](self)).
    pub async fn changes(&self, trunk: Option<&str>) -> Result<ChangeSet, GitError> {
        let base = self.base(trunk).await?;
        let from = match (&base.merge_base, &base.head) {
            (Some(b), _) => b.clone(),
            (None, Some(h)) => h.clone(),
            (None, None) => self.empty_tree(&base.top).await?,
        };
        let diff_args = [
            "diff",
            "--raw",
            "--numstat",
            "-z",
            "-M",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=dirty",
            from.as_str(),
            "--",
        ];
        let out = self.ok(&base.top, &diff_args).await?;
        let mut files = parse_diff(&out.stdout.data)?;

        let untracked = self
            .ok(
                &base.top,
                &["ls-files", "-z", "--others", "--exclude-standard"],
            )
            .await?;
        for path in split_z(&untracked.stdout.data) {
            let path = path.trim_end_matches('/').to_string();
            if path.is_empty() {
                continue;
            }
            let (added, binary) = count_lines(&base.top.join(&path));
            files.push(ChangedFile {
                path,
                status: FileStatus::Untracked,
                added,
                removed: 0,
                binary,
                old_path: None,
            });
        }
        files.retain(|f| !is_ahp_output(&f.path));
        Ok(ChangeSet::from_files(base.trunk, base.merge_base, files))
    }

    /// The commits on HEAD since the merge base with the trunk, oldest
    /// first (parents before children), merge commits left out (their messages are git's). Empty on
    /// the trunk itself, without a trunk branch, without a common history,
    /// and in a repository with no commit yet.
    pub async fn commits_since_base(&self, trunk: Option<&str>) -> Result<Vec<Commit>, GitError> {
        let base = self.base(trunk).await?;
        let (Some(merge_base), Some(_)) = (base.merge_base, base.head) else {
            return Ok(Vec::new());
        };
        let range = format!("{merge_base}..HEAD");
        let out = self
            .ok(
                &base.top,
                &[
                    "log",
                    "--no-merges",
                    "--topo-order",
                    "--reverse",
                    "-z",
                    "--no-color",
                    "--no-show-signature",
                    "--format=tformat:%H%x00%s%x00%b",
                    range.as_str(),
                    "--",
                ],
            )
            .await?;
        parse_log(&out.stdout.data)
    }

    /// The latest `limit` commits (newest first) touching any of `paths`
    /// (relative to the directory given to [`Git::new`], taken literally —
    /// no glob). Empty without paths or without any commit.
    pub async fn log_for_paths(
        &self,
        paths: &[String],
        limit: usize,
    ) -> Result<Vec<Commit>, GitError> {
        if paths.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let top = self.toplevel().await?;
        if self.rev(&top, "HEAD^{commit}").await?.is_none() {
            return Ok(Vec::new());
        }
        let n = format!("-n{limit}");
        let mut args: Vec<&str> = vec![
            "--literal-pathspecs",
            "log",
            n.as_str(),
            "--topo-order",
            "-z",
            "--no-color",
            "--no-show-signature",
            "--format=tformat:%H%x00%s%x00%b",
            "HEAD",
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = self.ok(&self.dir, &args).await?;
        parse_log(&out.stdout.data)
    }

    /// The files under the directory given to [`Git::new`], tracked and
    /// untracked (not ignored), relative to it, sorted.
    pub async fn list_files(&self) -> Result<Vec<String>, GitError> {
        self.toplevel().await?;
        let out = self
            .ok(
                &self.dir,
                &[
                    "ls-files",
                    "-z",
                    "--cached",
                    "--others",
                    "--exclude-standard",
                ],
            )
            .await?;
        let mut files = split_z(&out.stdout.data);
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// Finds the work tree, HEAD, the trunk and the merge base.
    async fn base(&self, trunk: Option<&str>) -> Result<Base, GitError> {
        let top = self.toplevel().await?;
        let head = self.rev(&top, "HEAD^{commit}").await?;
        let trunk = self.trunk(&top, trunk).await?;
        let merge_base = match (&head, &trunk) {
            (Some(head), Some((_, trunk_sha))) => {
                let out = self.run(&top, &["merge-base", trunk_sha, head]).await?;
                match out.status.code() {
                    Some(0) => Some(out.stdout.text().trim().to_string()),
                    Some(1) => None, // no common history
                    _ => return Err(failed("git merge-base", &out)),
                }
            }
            _ => None,
        };
        Ok(Base {
            top,
            head,
            trunk: trunk.map(|(name, _)| name),
            merge_base,
        })
    }

    /// The trunk's name and sha: the given name (an error when it does not
    /// exist), else the first existing of main, master, origin/main,
    /// origin/master.
    async fn trunk(
        &self,
        top: &Path,
        given: Option<&str>,
    ) -> Result<Option<(String, String)>, GitError> {
        if let Some(name) = given.map(str::trim).filter(|n| !n.is_empty()) {
            let sha = if name.starts_with('-') {
                None
            } else {
                self.rev(top, &format!("{name}^{{commit}}")).await?
            };
            return match sha {
                Some(sha) => Ok(Some((name.to_string(), sha))),
                None => Err(GitError::TrunkNotFound {
                    name: name.to_string(),
                    dir: top.to_path_buf(),
                }),
            };
        }
        for (name, reference) in [
            ("main", "refs/heads/main"),
            ("master", "refs/heads/master"),
            ("origin/main", "refs/remotes/origin/main"),
            ("origin/master", "refs/remotes/origin/master"),
        ] {
            if let Some(sha) = self.rev(top, &format!("{reference}^{{commit}}")).await? {
                return Ok(Some((name.to_string(), sha)));
            }
        }
        Ok(None)
    }

    /// The sha a revision names, `None` when it names nothing.
    async fn rev(&self, top: &Path, revision: &str) -> Result<Option<String>, GitError> {
        let out = self
            .run(top, &["rev-parse", "--verify", "--quiet", revision])
            .await?;
        match out.status.code() {
            Some(0) => Ok(Some(out.stdout.text().trim().to_string())),
            Some(1) | Some(128) => Ok(None),
            _ => Err(failed("git rev-parse --verify", &out)),
        }
    }

    /// The id of the empty tree in this repository's hash format.
    async fn empty_tree(&self, top: &Path) -> Result<String, GitError> {
        let out = self
            .ok(top, &["hash-object", "-t", "tree", "--stdin"])
            .await?;
        Ok(out.stdout.text().trim().to_string())
    }

    /// Runs git and requires success.
    async fn ok(&self, cwd: &Path, args: &[&str]) -> Result<Run, GitError> {
        let out = self.run(cwd, args).await?;
        if !out.status.success() {
            return Err(failed(&command_line(args), &out));
        }
        if out.stdout.truncated {
            return Err(GitError::TooMuchOutput {
                command: command_line(args),
            });
        }
        Ok(out)
    }

    /// Runs git in `cwd` with the C locale (so messages can be recognized).
    async fn run(&self, cwd: &Path, args: &[&str]) -> Result<Run, GitError> {
        let mut cmd = command(&self.program, cwd, self.timeout).await;
        cmd.args(args)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0");
        match run(cmd, Vec::new(), self.timeout).await {
            Ok(out) => Ok(out),
            Err(ProcessError::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                if cwd.is_dir() {
                    Err(GitError::GitNotFound {
                        program: self.program.to_string_lossy().into_owned(),
                    })
                } else {
                    Err(GitError::NoSuchDirectory {
                        dir: cwd.to_path_buf(),
                    })
                }
            }
            Err(ProcessError::TimedOut(timeout)) => Err(GitError::TimedOut {
                command: command_line(args),
                timeout,
            }),
            Err(e) => Err(GitError::Other(format!("`{}`: {e}", command_line(args)))),
        }
    }
}

#[async_trait]
impl ChangedFiles for Git {
    async fn changes(&self, trunk: Option<&str>) -> Result<ChangeSet, GitError> {
        Git::changes(self, trunk).await
    }
}

/// `program` (git) in `dir`, with the options every git that ahp runs in a
/// project gets: [`ahp_engine::GIT_SAFE_CONFIG`], and every content filter
/// that the repository's own config defines (`.git/config`, and what it
/// includes) switched off. Such a filter is a program git runs on the work
/// tree's files whenever it compares them (`git diff`, `git status`); a
/// repository that comes with its `.git` would otherwise run code through
/// ahp, trusted or not. The user's own filters (git-lfs in `~/.gitconfig`)
/// stay. They are switched off through `GIT_CONFIG_COUNT` and its
/// `GIT_CONFIG_KEY_n`/`VALUE_n`, where a name holding `=` (`filter.x=y`)
/// stays whole: `-c` would split it there. A submodule's config is its
/// own: the git that compares a work tree is told not to look into them
/// (`--ignore-submodules=dirty`).
pub(crate) async fn command(program: &OsStr, dir: &Path, timeout: Duration) -> Command {
    let mut cmd = Command::new(program);
    // A partial clone fetches what it lacks on demand: never from here.
    cmd.current_dir(dir)
        .args(ahp_engine::GIT_SAFE_CONFIG)
        .env("GIT_NO_LAZY_FETCH", "1");
    let off = repository_filters_off(program, dir, timeout).await;
    if !off.is_empty() {
        // After the user's own settings of this kind, which stay.
        let theirs: usize = std::env::var("GIT_CONFIG_COUNT")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        cmd.env("GIT_CONFIG_COUNT", (theirs + off.len()).to_string());
        for (i, (key, value)) in off.into_iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{}", theirs + i), key)
                .env(format!("GIT_CONFIG_VALUE_{}", theirs + i), value);
        }
    }
    cmd
}

/// The settings (`filter.NAME.clean` = nothing, …) that switch off the
/// filters defined in the repository's config, looked up once per
/// directory.
async fn repository_filters_off(
    program: &OsStr,
    dir: &Path,
    timeout: Duration,
) -> Vec<(String, String)> {
    type Settings = Vec<(String, String)>;
    static SEEN: std::sync::Mutex<Vec<(PathBuf, Settings)>> = std::sync::Mutex::new(Vec::new());
    let known = |seen: &[(PathBuf, Settings)]| {
        seen.iter()
            .find(|(d, _)| d == dir)
            .map(|(_, options)| options.clone())
    };
    if let Some(options) = SEEN.lock().ok().and_then(|s| known(&s)) {
        return options;
    }
    let mut lookup = Command::new(program);
    lookup
        .current_dir(dir)
        .args(ahp_engine::GIT_SAFE_CONFIG)
        .args(["config", "--show-scope", "--name-only", "--get-regexp"])
        .arg(r"^filter\..*\.(clean|smudge|process|required)$");
    // No config, or no git: nothing to switch off (the git that follows
    // fails, and says why).
    let listed = run(lookup, Vec::new(), timeout)
        .await
        .map(|r| r.stdout.text())
        .unwrap_or_default();
    let mut options = Vec::new();
    for line in listed.lines() {
        let Some((scope, key)) = line.split_once('\t') else {
            continue;
        };
        let Some(name) = key
            .strip_prefix("filter.")
            .and_then(|k| k.rsplit_once('.'))
            .map(|(name, _)| name)
        else {
            continue;
        };
        if !matches!(scope, "local" | "worktree") {
            continue;
        }
        for (key, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            let setting = (format!("filter.{name}.{key}"), value.to_string());
            if !options.contains(&setting) {
                options.push(setting);
            }
        }
    }
    if let Ok(mut seen) = SEEN.lock() {
        seen.push((dir.to_path_buf(), options.clone()));
    }
    options
}

/// Whether a path (relative, `/`-separated) is a file ahp writes as it
/// runs, in the `.ahp/` directory of any project in the repository: the
/// signal log `signals.jsonl`, its rotations (`signals.jsonl.1.gz`, …, and
/// an older ahp's `signals.jsonl.1`, …), its shippers' cursors
/// (`signals.jsonl.ship/NAME.json`) and the retrospectives
/// (`retrospectives/NAME.md`). The names are matched
/// exactly, because what is left out of the change is also left out of the
/// oracles that scan it (SecurityScanner): a file an agent names to look
/// like ahp's (`signals.jsonl.sh`, `retrospectives/x/run.sh`) still counts.
/// The policy files (`hooks.yaml`, `hooks.local.yaml`, `hooks.schema.json`)
/// are the user's, even when `ahp init` wrote them first, and count too.
///
/// ```
/// use ahp_oracles::workflow::git::is_ahp_output;
/// assert!(is_ahp_output(".ahp/signals.jsonl"));
/// assert!(is_ahp_output(".ahp/signals.jsonl.3"));
/// assert!(is_ahp_output(".ahp/signals.jsonl.3.gz"));
/// assert!(is_ahp_output(".ahp/signals.jsonl.ship/postgres-0123.json"));
/// assert!(!is_ahp_output(".ahp/signals.jsonl.ship/run.sh"));
/// assert!(is_ahp_output("services/api/.ahp/retrospectives/ISS-1.md"));
/// assert!(!is_ahp_output(".ahp/hooks.yaml"));
/// assert!(!is_ahp_output("docs/signals.jsonl"));
/// assert!(!is_ahp_output(".ahp/signals.jsonl.sh"));
/// assert!(!is_ahp_output(".ahp/retrospectives/x/run.sh"));
/// ```
pub fn is_ahp_output(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let n = parts.len();
    let in_ahp = |dir_at: usize| dir_at < n && parts[dir_at] == ".ahp";
    let log = ahp_engine::paths::is_log_file_name;
    let retrospective = |name: &str| name.len() > 3 && name.ends_with(".md");
    (n >= 2 && in_ahp(n - 2) && log(parts[n - 1]))
        || (n >= 3
            && in_ahp(n - 3)
            && parts[n - 2] == "retrospectives"
            && retrospective(parts[n - 1]))
        || (n >= 3
            && in_ahp(n - 3)
            && parts[n - 2] == format!("{}.ship", ahp_engine::paths::LOG_FILE)
            && parts[n - 1].ends_with(".json"))
}

/// The change for an oracle: the context's (`files.changed`, see
/// [`ChangeSet::from_context`]) when it has one, else computed by git in
/// `project_dir` against the context's `git.trunk` (or main/master).
pub async fn resolve_changes(ctx: &HookContext, project_dir: &Path) -> Result<ChangeSet, GitError> {
    if let Some(change) = ChangeSet::from_context(ctx) {
        return Ok(change);
    }
    let trunk = context_trunk(ctx);
    Git::new(project_dir).changes(trunk.as_deref()).await
}

/// The commits for an oracle: the context's `git.commits` when present,
/// else computed by git in `project_dir` ([`Git::commits_since_base`]).
pub async fn resolve_commits(ctx: &HookContext, project_dir: &Path) -> Result<Vec<Commit>, String> {
    if let Some(commits) = Commit::from_context(ctx)? {
        return Ok(commits);
    }
    let trunk = context_trunk(ctx);
    Git::new(project_dir)
        .commits_since_base(trunk.as_deref())
        .await
        .map_err(|e| e.to_string())
}

/// The context's `git.trunk`, when it is a string.
pub fn context_trunk(ctx: &HookContext) -> Option<String> {
    ctx.lookup("git.trunk")
        .and_then(|v| v.as_str().map(str::to_string))
}

/// Where an oracle finds the project: the configured directory, else the
/// context's `work_dir`, else the current directory.
pub fn project_dir_for(configured: Option<&Path>, ctx: &HookContext) -> PathBuf {
    configured
        .map(Path::to_path_buf)
        .or_else(|| ctx.work_dir.as_ref().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."))
}

fn command_line(args: &[&str]) -> String {
    let mut s = String::from("git");
    for a in args.iter().take(8) {
        s.push(' ');
        s.push_str(a);
    }
    if args.len() > 8 {
        s.push_str(" …");
    }
    s
}

fn failed(command: &str, out: &Run) -> GitError {
    GitError::Command {
        command: command.to_string(),
        code: out.status.code(),
        stderr: crate::template::truncate(out.stderr.text().trim(), 500),
    }
}

/// The NUL-separated fields of `-z` output (the empty field after the last
/// NUL dropped), decoded lossily.
fn split_z(data: &[u8]) -> Vec<String> {
    let mut fields: Vec<String> = data
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if fields.last().is_some_and(String::is_empty) {
        fields.pop();
    }
    fields
}

/// Parses `git diff --raw --numstat -z`: first the raw records
/// (`:meta STATUS\0path\0`, or `\0old\0new\0` for renames and copies), then
/// the numstat records (`added\tremoved\tpath\0`, or
/// `added\tremoved\t\0old\0new\0`).
fn parse_diff(data: &[u8]) -> Result<Vec<ChangedFile>, GitError> {
    let bad = |what: &str| GitError::Other(format!("unexpected `git diff -z` output: {what}"));
    let fields = split_z(data);
    let mut it = fields.into_iter();
    let mut raws: Vec<ChangedFile> = Vec::new();
    let mut nums: Vec<(String, Option<(u64, u64)>)> = Vec::new();
    while let Some(field) = it.next() {
        if let Some(meta) = field.strip_prefix(':') {
            let letter = meta
                .rsplit(' ')
                .next()
                .and_then(|s| s.chars().next())
                .ok_or_else(|| bad("a raw record without a status"))?;
            let first = it
                .next()
                .ok_or_else(|| bad("a raw record without a path"))?;
            let (old_path, path) = if matches!(letter, 'R' | 'C') {
                let new = it
                    .next()
                    .ok_or_else(|| bad("a rename without a new path"))?;
                (Some(first), new)
            } else {
                (None, first)
            };
            let status = match letter {
                'A' => FileStatus::Added,
                'D' => FileStatus::Deleted,
                'R' => FileStatus::Renamed,
                'C' => FileStatus::Added,
                _ => FileStatus::Modified, // M, T (type), U (unmerged), X
            };
            let old_path = if status == FileStatus::Renamed {
                old_path
            } else {
                None
            };
            raws.push(ChangedFile {
                path,
                status,
                added: 0,
                removed: 0,
                binary: false,
                old_path,
            });
        } else {
            let mut parts = field.splitn(3, '\t');
            let (Some(added), Some(removed), Some(rest)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(bad(&format!("a numstat record `{field}`")));
            };
            let path = if rest.is_empty() {
                let _old = it
                    .next()
                    .ok_or_else(|| bad("a numstat rename without paths"))?;
                it.next()
                    .ok_or_else(|| bad("a numstat rename without a new path"))?
            } else {
                rest.to_string()
            };
            let counts = match (added.parse::<u64>(), removed.parse::<u64>()) {
                (Ok(a), Ok(r)) => Some((a, r)),
                _ => None, // `-`: binary
            };
            nums.push((path, counts));
        }
    }
    let mut by_path: HashMap<&str, Option<(u64, u64)>> = HashMap::new();
    for (path, counts) in &nums {
        by_path.insert(path.as_str(), *counts);
    }
    for (i, f) in raws.iter_mut().enumerate() {
        let counts = match nums.get(i) {
            Some((path, counts)) if *path == f.path => Some(*counts),
            _ => by_path.get(f.path.as_str()).copied(),
        };
        match counts {
            Some(Some((a, r))) => {
                f.added = a;
                f.removed = r;
            }
            Some(None) => f.binary = true,
            None => {}
        }
    }
    Ok(raws)
}

/// Parses `git log -z --format=tformat:%H%x00%s%x00%b`: three fields a
/// commit.
fn parse_log(data: &[u8]) -> Result<Vec<Commit>, GitError> {
    let fields = split_z(data);
    if !fields.len().is_multiple_of(3) {
        return Err(GitError::Other(format!(
            "unexpected `git log -z` output: {} fields, not a multiple of 3",
            fields.len()
        )));
    }
    Ok(fields
        .chunks(3)
        .map(|c| Commit {
            sha: c[0].trim().to_string(),
            subject: c[1].clone(),
            body: c[2].trim_end().to_string(),
        })
        .collect())
}

/// Lines of an untracked file (as `--numstat` counts them: newlines, plus
/// an unterminated last line) and whether it looks binary (a NUL in the
/// first 8000 bytes, git's rule). A symlink counts one line (its target);
/// unreadable files count 0.
fn count_lines(path: &Path) -> (u64, bool) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (0, false);
    };
    if meta.file_type().is_symlink() {
        return (1, false);
    }
    if !meta.is_file() {
        return (0, false);
    }
    let Ok(file) = std::fs::File::open(path) else {
        return (0, false);
    };
    let mut reader = file.take(UNTRACKED_READ_CAP);
    let mut buf = vec![0u8; 64 * 1024];
    let (mut lines, mut seen, mut last) = (0u64, 0usize, b'\n');
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        if seen < BINARY_SNIFF {
            let sniff = &chunk[..chunk.len().min(BINARY_SNIFF - seen)];
            if sniff.contains(&0) {
                return (0, true);
            }
        }
        seen = seen.saturating_add(n);
        lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        last = chunk[n - 1];
    }
    if last != b'\n' {
        lines += 1;
    }
    (lines, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_missing_git_program_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Git::new(dir.path())
            .with_program(dir.path().join("no-such-git"))
            .changes(None)
            .await
            .unwrap_err();
        assert!(matches!(err, GitError::GitNotFound { .. }), "{err}");
        assert!(err.to_string().starts_with("git is not installed"), "{err}");
    }

    #[test]
    fn parses_raw_and_numstat_records() {
        let data = b":100644 100644 aaa bbb M\0src/a b.rs\0:100644 100644 ccc ccc R100\0old\nname\0new name\0:000000 100644 000 ddd A\0img.png\0\
3\t1\tsrc/a b.rs\0\
0\t0\t\0old\nname\0new name\0\
-\t-\timg.png\0";
        let files = parse_diff(data).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].path, "src/a b.rs");
        assert_eq!((files[0].added, files[0].removed), (3, 1));
        assert_eq!(files[1].status, FileStatus::Renamed);
        assert_eq!(files[1].path, "new name");
        assert_eq!(files[1].old_path.as_deref(), Some("old\nname"));
        assert!(files[2].binary);
        assert_eq!(files[2].status, FileStatus::Added);
    }

    #[test]
    fn garbage_diff_output_is_an_error() {
        assert!(parse_diff(b"what\0").is_err());
        assert!(parse_diff(b":100644 100644 a b M").is_err());
    }

    #[test]
    fn parses_log_records() {
        let data = b"aaa\0feat: x\0body\n\n\0bbb\0second\0\0";
        let commits = parse_log(data).unwrap();
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].body, "body");
        assert_eq!(commits[1].subject, "second");
        assert_eq!(commits[1].body, "");
        assert!(parse_log(b"aaa\0x\0").is_err());
    }

    #[test]
    fn counts_lines_like_numstat() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "a\nb\nc").unwrap();
        assert_eq!(count_lines(&p), (3, false));
        std::fs::write(&p, "a\nb\n").unwrap();
        assert_eq!(count_lines(&p), (2, false));
        std::fs::write(&p, "").unwrap();
        assert_eq!(count_lines(&p), (0, false));
        std::fs::write(&p, b"a\0b\n").unwrap();
        assert_eq!(count_lines(&p), (0, true));
        assert_eq!(count_lines(&dir.path().join("missing")), (0, false));
    }

    #[test]
    fn status_names_round_trip() {
        for s in ["added", "modified", "deleted", "renamed", "untracked"] {
            assert_eq!(FileStatus::parse(s).unwrap().as_str(), s);
        }
        assert_eq!(FileStatus::parse("copied"), None);
    }
}
