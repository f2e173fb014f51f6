//! The `ReviewTrigger` oracle: after an issue is submitted, says who should
//! review it — the code owners of the changed files (a `CODEOWNERS` file)
//! plus any fixed reviewers — and can run a command to notify them
//! (SPEC §5).
//!
//! ```yaml
//! hooks:
//!   post-issue-submit:
//!     - oracle: ReviewTrigger
//!       config:
//!         notify_reviewers: true        # default true: run `command` when set
//!         create_pr: false              # true: the aid asks the agent to open the pull request
//!         codeowners: .github/CODEOWNERS  # default: first of CODEOWNERS, .github/CODEOWNERS, docs/CODEOWNERS
//!         reviewers: ["@lead"]          # optional: always asked, for every change
//!         command: 'gh pr edit --add-reviewer "$(echo $AHP_REVIEWERS | tr -d @)"'   # optional
//!         timeout_ms: 30000             # default 30000, at most 600000
//! ```
//!
//! **Who.** The changed files are `files.changed` of the context (paths
//! relative to the project root), or the issue's `issue.files` when the
//! context has no `files`. Each file's owners come from the CODEOWNERS line
//! that matches it last (see [`CodeOwners`]); the reviewers are all those
//! owners plus `reviewers`, without duplicates (ignoring case), sorted.
//!
//! **What it says.** Always one **aid**: type `review-requested`, context
//! `Review requested from @a, @b for FEAT-0123 (7 files)`, and follow-ups
//! naming each owner's files (`@a: src/api.rs, src/db.rs`), the fixed
//! reviewers (`@lead: the whole change (7 files)`) and files nobody owns.
//! With no reviewer at all it is of type `review-unassigned` and says why.
//!
//! **Pull requests.** ahp does not open pull requests (it neither pushes
//! nor holds the forge's credentials). `create_pr: true` (the AHP seed's
//! key) loads with a warning saying so, and adds a follow-up asking the
//! agent to open one: `gh pr create --fill --reviewer a,org/team`, naming
//! only the reviewers whose handles GitHub accepts.
//!
//! **Notifying.** With `notify_reviewers: true` and a `command`, the command
//! runs (`sh -c`, in the project root, its process group killed after
//! `timeout_ms`) with `AHP_REVIEWERS` (the reviewers joined by commas, e.g.
//! `@a,@org/team`), `AHP_ISSUE_ID` (empty when unknown) and
//! `AHP_PROJECT_DIR`. The review request has already happened by then, so a
//! failing, unstartable or timed-out command does not fail the oracle: the
//! aid says what went wrong. `notify_reviewers: false` names the reviewers
//! without running the command. A CODEOWNERS line that cannot be used is
//! skipped and recorded as a note in the log.
//!
//! ```
//! use ahp_oracles::workflow::review::ReviewTrigger;
//! use ahp_engine::{HookContext, OracleConfig, Payload};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("CODEOWNERS"), "*.rs @rustaceans\n/docs/ @writers\n").unwrap();
//! let config = json!({"reviewers": ["lead"]});
//! let trigger = ReviewTrigger::from_config(OracleConfig::new(&config, Some(dir.path()))).unwrap();
//! let ctx: HookContext = serde_json::from_value(json!({
//!     "issue": {"id": "FEAT-0123"},
//!     "files": {"changed": ["src/lib.rs", "docs/guide.md"], "changed_count": 2},
//! })).unwrap();
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let eval = trigger.review(&ctx).await.unwrap();
//! let Payload::Aid(aid) = &eval.signals[0].payload else { unreachable!() };
//! assert_eq!(aid.context_info, "Review requested from @lead, @rustaceans, @writers for FEAT-0123 (2 files)");
//! assert!(aid.follow_ups.contains(&"@writers: docs/guide.md".to_string()));
//! # });
//! ```

use crate::scripts::process::{self, ProcessError};
use crate::settings::{Millis, timeout_ms};
use crate::template::truncate;
use ahp_engine::{
    Evaluation, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError,
    Signal, async_trait,
};
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// ReviewTrigger's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewTriggerConfig {
    /// Run `command` to notify the reviewers (default true); `false`
    /// keeps the command from running, and the aid still names them.
    pub notify_reviewers: Option<bool>,
    /// Suggest opening a pull request (default false).
    pub create_pr: Option<bool>,
    /// A CODEOWNERS file, relative to the project root (default: the usual
    /// places).
    #[schemars(length(min = 1))]
    pub codeowners: Option<String>,
    /// Reviewers always asked: `@alice`, `@org/team`.
    pub reviewers: Option<Vec<String>>,
    /// A command run with the reviewers in `$AHP_REVIEWERS` (joined by
    /// commas) and the issue id in `$AHP_ISSUE_ID` (needs `ahp trust` in
    /// a project).
    #[schemars(length(min = 1))]
    pub command: Option<String>,
    /// The command's time limit in milliseconds.
    pub timeout_ms: Option<Millis>,
}

/// Where a CODEOWNERS file is looked for, in order, under the project root.
pub const CODEOWNERS_LOCATIONS: &[&str] = &["CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS"];

/// The signal type when reviewers were found.
pub const REQUESTED_TYPE: &str = "review-requested";

/// The signal type when nobody could be named.
pub const UNASSIGNED_TYPE: &str = "review-unassigned";

/// The timeout of `command` when `timeout_ms` is not set (30 s).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The largest `timeout_ms` accepted (10 minutes).
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The largest CODEOWNERS file read.
const MAX_CODEOWNERS_BYTES: u64 = 1 << 20;

/// How many files a follow-up names before "… and N more".
const FILES_SHOWN: usize = 10;

/// One usable line of a CODEOWNERS file.
#[derive(Debug, Clone)]
pub struct OwnerRule {
    /// The pattern as written.
    pub pattern: String,
    /// The owners (`@user`, `@org/team`, emails); empty = nobody owns the
    /// matching files (a later line can take ownership away).
    pub owners: Vec<String>,
    /// The line of the file (1-based).
    pub line: usize,
    regex: Regex,
}

impl OwnerRule {
    /// Whether the pattern matches `path` (relative to the repository root).
    pub fn matches(&self, path: &str) -> bool {
        self.regex.is_match(normalize_path(path))
    }
}

/// A parsed CODEOWNERS file (GitHub / GitLab syntax).
///
/// Each line is a pattern and its owners; the **last** line whose pattern
/// matches a file decides its owners. Patterns follow `.gitignore` rules as
/// GitHub applies them:
///
/// * a pattern with a `/` at the start or in the middle is anchored at the
///   repository root (`/build/logs`, `docs/api`); otherwise it matches at any
///   depth (`*.js`, `logs`);
/// * `*` matches within one path segment, `?` one character, `**` any number
///   of segments (`**/logs`, `docs/**`, `a/**/b`);
/// * a pattern naming a directory owns everything below it (`/apps/` or
///   `/apps`; a trailing `/` matches directories only);
/// * a last segment with a wildcard matches only at that level: `docs/*`
///   owns `docs/a.md` but not `docs/sub/b.md` (GitHub's behaviour).
///
/// `#` starts a comment (at the start of a line, or after a blank);
/// `\#` and `\ ` escape. Unsupported lines (`!` negation, no usable owner
/// token, GitLab `[Section]` headers) are skipped with a note.
///
/// ```
/// use ahp_oracles::workflow::review::CodeOwners;
/// let owners = CodeOwners::parse("* @everyone\n*.rs @rust\n/docs/* @docs\n/vendor/\n");
/// assert_eq!(owners.owners_of("src/main.rs"), Some(&["@rust".to_string()][..]));
/// assert_eq!(owners.owners_of("docs/a.md"), Some(&["@docs".to_string()][..]));
/// assert_eq!(owners.owners_of("docs/deep/b.md"), Some(&["@everyone".to_string()][..]));
/// assert_eq!(owners.owners_of("vendor/lib.c"), Some(&[][..])); // explicitly unowned
/// ```
#[derive(Debug, Clone, Default)]
pub struct CodeOwners {
    /// The usable lines, in file order.
    pub rules: Vec<OwnerRule>,
    /// Lines that were skipped, and why (`line 4: …`).
    pub notes: Vec<String>,
}

impl CodeOwners {
    /// Parses the text of a CODEOWNERS file. Never fails: unusable lines
    /// are skipped and listed in [`CodeOwners::notes`].
    pub fn parse(text: &str) -> CodeOwners {
        let mut out = CodeOwners::default();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.starts_with('[') || trimmed.starts_with("^[") {
                out.notes.push(format!(
                    "line {line}: GitLab section headers are not supported; the lines below it are read as plain rules"
                ));
                continue;
            }
            let (pattern, rest) = split_pattern(trimmed);
            if pattern.starts_with('!') {
                out.notes.push(format!(
                    "line {line}: `!` negation is not supported in CODEOWNERS; line ignored"
                ));
                continue;
            }
            let Some(regex) = pattern_regex(&pattern) else {
                out.notes.push(format!(
                    "line {line}: `{pattern}` is not a usable pattern; line ignored"
                ));
                continue;
            };
            let mut owners = Vec::new();
            for token in rest.split_whitespace() {
                if token.starts_with('#') {
                    break;
                }
                if token.contains('@') && token.len() > 1 {
                    owners.push(token.to_string());
                } else {
                    out.notes.push(format!(
                        "line {line}: `{token}` is not an owner (expected @user, @org/team or an email); ignored"
                    ));
                }
            }
            out.rules.push(OwnerRule {
                pattern,
                owners,
                line,
                regex,
            });
        }
        out
    }

    /// Reads and parses the CODEOWNERS file at `path` of the project
    /// `root`: only a regular file inside it (see [`crate::project_file`]).
    pub fn load(root: &Path, path: &Path) -> Result<CodeOwners, String> {
        let bytes = crate::project_file::read_in_project(root, path, MAX_CODEOWNERS_BYTES)
            .map_err(|e| e.to_string())?;
        Ok(CodeOwners::parse(&String::from_utf8_lossy(&bytes)))
    }

    /// The rule deciding `path`: the last one that matches.
    pub fn rule_for(&self, path: &str) -> Option<&OwnerRule> {
        self.rules.iter().rev().find(|r| r.matches(path))
    }

    /// The owners of `path`: `None` when no line matches, an empty slice
    /// when the deciding line names nobody.
    pub fn owners_of(&self, path: &str) -> Option<&[String]> {
        self.rule_for(path).map(|r| r.owners.as_slice())
    }
}

/// The pattern (with `\#`, `\ ` unescaped) and the rest of a line.
fn split_pattern(line: &str) -> (String, &str) {
    let mut pattern = String::new();
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, next)) = chars.next() {
                    pattern.push(next);
                }
            }
            c if c.is_whitespace() => return (pattern, &line[i..]),
            c => pattern.push(c),
        }
    }
    (pattern, "")
}

/// `./a/b` and `/a/b` → `a/b`.
fn normalize_path(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.trim_start_matches('/')
}

/// Translates a CODEOWNERS pattern into an anchored regex (see
/// [`CodeOwners`] for the rules); `None` for an empty pattern.
fn pattern_regex(pattern: &str) -> Option<Regex> {
    let dir_only = pattern.ends_with('/');
    let p = pattern.trim_end_matches('/');
    let anchored = p.starts_with('/') || p.trim_start_matches('/').contains('/');
    let p = p.strip_prefix('/').unwrap_or(p);
    if p.is_empty() {
        return None;
    }
    let segments: Vec<&str> = p.split('/').collect();
    let mut re = String::from("^");
    if !anchored {
        re.push_str("(?:.*/)?");
    }
    let last_index = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        let last = i == last_index;
        if *seg == "**" {
            re.push_str(if last { ".*" } else { "(?:.*/)?" });
            continue;
        }
        if seg.is_empty() {
            // `a//b`: git treats the double slash as one.
            continue;
        }
        let mut stars = false;
        for c in seg.chars() {
            match c {
                '*' if stars => {}
                '*' => {
                    stars = true;
                    re.push_str("[^/]*");
                }
                '?' => {
                    stars = false;
                    re.push_str("[^/]");
                }
                c => {
                    stars = false;
                    re.push_str(&regex::escape(&c.to_string()));
                }
            }
        }
        if !last {
            re.push('/');
        }
    }
    let tail = segments[last_index];
    if tail == "**" {
        re.push('$');
    } else if dir_only {
        re.push_str("/.*$");
    } else if tail.contains('*') || tail.contains('?') {
        re.push('$');
    } else {
        re.push_str("(?:/.*)?$");
    }
    Regex::new(&re).ok()
}

/// Names the reviewers of a submitted issue. Build with
/// [`ReviewTrigger::from_config`]; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct ReviewTrigger {
    notify_reviewers: bool,
    /// `notify_reviewers: false` with no `command`: a setting that changes
    /// nothing, said as a warning.
    idle_switch: bool,
    create_pr: bool,
    codeowners: Option<PathBuf>,
    reviewers: Vec<String>,
    command: Option<String>,
    timeout: Duration,
    project_dir: Option<PathBuf>,
}

impl ReviewTrigger {
    /// Reads `notify_reviewers` (default true), `codeowners` (a path, which
    /// must exist; relative to the project root), `reviewers` (a list of
    /// handles; `alice` is read as `@alice`), `command` and `timeout_ms`
    /// (1–600000, default 30000).
    ///
    /// ```
    /// use ahp_oracles::workflow::review::ReviewTrigger;
    /// use ahp_engine::OracleConfig;
    /// let bad = serde_json::json!({"reviewer": ["@a"]});
    /// let err = ReviewTrigger::from_config(OracleConfig::new(&bad, None)).unwrap_err();
    /// assert!(err.to_string().contains("did you mean `reviewers`"), "{err}");
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: ReviewTriggerConfig = cfg.parse()?;
        // A placeholder would reach the shell as it is written: the
        // values come in the environment (and so are never shell code).
        if c.command.as_deref().is_some_and(|cmd| cmd.contains("{{")) {
            return Err(OracleConfigError::at(
                "command",
                "placeholders are not filled in a command: read the reviewers from $AHP_REVIEWERS (joined by commas) and the issue id from $AHP_ISSUE_ID",
            ));
        }
        let project_dir = cfg.project_dir();
        let notify_reviewers = c.notify_reviewers.unwrap_or(true);
        let idle_switch = c.notify_reviewers == Some(false) && c.command.is_none();
        let create_pr = c.create_pr.unwrap_or(false);
        let codeowners = match c.codeowners.as_deref() {
            None => None,
            Some(p) if p.trim().is_empty() => {
                return Err(OracleConfigError::at(
                    "codeowners",
                    "the path must not be empty; remove the key to look in the usual places",
                ));
            }
            Some(p) => {
                let path = match &project_dir {
                    Some(root) if Path::new(p).is_relative() => root.join(p),
                    _ => PathBuf::from(p),
                };
                if !path.is_file() {
                    return Err(OracleConfigError::at(
                        "codeowners",
                        format!(
                            "{} does not exist; give the path of a CODEOWNERS file (relative to the project root), or remove the key to look in {}",
                            path.display(),
                            CODEOWNERS_LOCATIONS.join(", ")
                        ),
                    ));
                }
                Some(path)
            }
        };
        let mut reviewers = Vec::new();
        for (i, s) in c.reviewers.unwrap_or_default().iter().enumerate() {
            let s = s.trim();
            if s.is_empty() || s.contains(char::is_whitespace) {
                return Err(OracleConfigError::at(
                    format!("reviewers.{i}"),
                    "expected one handle such as `@alice` or `@org/team`",
                ));
            }
            reviewers.push(if s.contains('@') {
                s.to_string()
            } else {
                format!("@{s}")
            });
        }
        let command = match c.command.as_deref() {
            None => None,
            Some(c) if c.trim().is_empty() => {
                return Err(OracleConfigError::at(
                    "command",
                    "the command must not be empty; remove the key to run none",
                ));
            }
            Some(c) => Some(c.to_string()),
        };
        let timeout_ms = timeout_ms(c.timeout_ms, "timeout_ms", MAX_TIMEOUT_MS)?
            .map_or(DEFAULT_TIMEOUT_MS, |d| {
                u64::try_from(d.as_millis()).unwrap_or(MAX_TIMEOUT_MS)
            });
        Ok(ReviewTrigger {
            notify_reviewers,
            idle_switch,
            create_pr,
            codeowners,
            reviewers,
            command,
            timeout: Duration::from_millis(timeout_ms),
            project_dir,
        })
    }

    /// The project root: the configured one, else an existing `work_dir` of
    /// the context, else the current directory.
    fn root(&self, ctx: &HookContext) -> PathBuf {
        if let Some(p) = &self.project_dir {
            return p.clone();
        }
        match ctx.work_dir.as_deref().filter(|w| Path::new(w).is_dir()) {
            Some(w) => PathBuf::from(w),
            None => PathBuf::from("."),
        }
    }

    /// The CODEOWNERS file to read, if any.
    fn codeowners_file(&self, root: &Path) -> Option<PathBuf> {
        if let Some(p) = &self.codeowners {
            return Some(p.clone());
        }
        CODEOWNERS_LOCATIONS
            .iter()
            .map(|l| root.join(l))
            .find(|p| p.is_file())
    }

    /// The aid for `ctx` and the notes for the log (skipped CODEOWNERS
    /// lines). This is what [`Oracle::evaluate_full`] returns.
    pub async fn review(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        let root = self.root(ctx);
        let files = changed_files(ctx);
        let issue_id = ctx
            .lookup("issue.id")
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.is_empty());
        let mut notes = Vec::new();

        let owners_file = self.codeowners_file(&root);
        let codeowners = match &owners_file {
            Some(path) => {
                let parsed = CodeOwners::load(&root, path).map_err(OracleError::new)?;
                notes.extend(
                    parsed
                        .notes
                        .iter()
                        .map(|n| format!("{}: {n}", path.display())),
                );
                Some(parsed)
            }
            None => None,
        };

        // Owner → files, and the files nobody owns.
        let mut by_owner: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
        let mut unowned: Vec<String> = Vec::new();
        for file in &files {
            let owners = codeowners.as_ref().and_then(|c| c.owners_of(file));
            match owners {
                Some(list) if !list.is_empty() => {
                    for o in list {
                        by_owner
                            .entry(o.to_lowercase())
                            .or_insert_with(|| (o.clone(), Vec::new()))
                            .1
                            .push(file.clone());
                    }
                }
                _ => unowned.push(file.clone()),
            }
        }
        let mut reviewers: BTreeMap<String, String> = by_owner
            .iter()
            .map(|(k, (name, _))| (k.clone(), name.clone()))
            .collect();
        for r in &self.reviewers {
            reviewers
                .entry(r.to_lowercase())
                .or_insert_with(|| r.clone());
        }
        let spelled = |r: &String| reviewers.get(&r.to_lowercase()).unwrap_or(r).clone();
        let fixed: Vec<String> = self.reviewers.iter().map(spelled).collect();
        let reviewers: Vec<String> = reviewers.values().cloned().collect();

        let n = files.len();
        let files_note = format!("({n} {})", if n == 1 { "file" } else { "files" });
        let target = match &issue_id {
            Some(id) => id.clone(),
            None => "this change".to_string(),
        };
        let mut follow_ups = Vec::new();
        for (key, (name, owned)) in &by_owner {
            if self.reviewers.iter().any(|r| r.to_lowercase() == *key) {
                continue;
            }
            follow_ups.push(format!("{name}: {}", file_list(owned)));
        }
        for r in &fixed {
            follow_ups.push(format!("{r}: the whole change {files_note}"));
        }
        if codeowners.is_some() && !unowned.is_empty() {
            follow_ups.push(format!("no code owner: {}", file_list(&unowned)));
        }
        if self.create_pr {
            follow_ups.push(pull_request_step(&target, &reviewers));
        }

        if reviewers.is_empty() {
            let why = match (&owners_file, files.is_empty()) {
                (None, _) => format!(
                    "no CODEOWNERS file (looked for {}) and no `reviewers` configured",
                    CODEOWNERS_LOCATIONS.join(", ")
                ),
                (Some(p), true) => format!(
                    "no changed files to match against {} and no `reviewers` configured",
                    p.display()
                ),
                (Some(p), false) => format!(
                    "no line of {} names an owner of the changed files, and no `reviewers` are configured",
                    p.display()
                ),
            };
            let mut signal = Signal::aid(format!(
                "No reviewer found for {target} {files_note}: {why}"
            ))
            .with_resolution_path(follow_ups)
            .with_type(UNASSIGNED_TYPE)
            .with_files(files.clone());
            if let ahp_engine::Payload::Aid(a) = &mut signal.payload {
                a.best_practices.push(
                    "add a CODEOWNERS file (`src/ @team`) or `reviewers` in the ReviewTrigger config so reviews are requested automatically".to_string(),
                );
            }
            return Ok(Evaluation {
                signals: vec![signal],
                notes,
                redactions: Vec::new(),
            });
        }

        let mut info = format!(
            "Review requested from {} for {target} {files_note}",
            reviewers.join(", ")
        );
        if self.notify_reviewers
            && let Some(command) = &self.command
        {
            let outcome = self
                .notify(command, &root, &reviewers, issue_id.as_deref())
                .await;
            info.push_str(". ");
            info.push_str(&outcome);
        }
        let signal = Signal::aid(info)
            .with_resolution_path(follow_ups)
            .with_type(REQUESTED_TYPE)
            .with_files(files);
        Ok(Evaluation {
            signals: vec![signal],
            notes,
            redactions: Vec::new(),
        })
    }

    /// Runs the notification command; says how it went, in one sentence.
    async fn notify(
        &self,
        command: &str,
        root: &Path,
        reviewers: &[String],
        issue_id: Option<&str>,
    ) -> String {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.current_dir(root);
        cmd.arg("-c")
            .arg(command)
            .env("AHP_REVIEWERS", reviewers.join(","))
            .env("AHP_ISSUE_ID", issue_id.unwrap_or(""))
            .env("AHP_PROJECT_DIR", root);
        match process::run(cmd, Vec::new(), self.timeout).await {
            Ok(run) if run.status.success() => match first_line(&run.stdout.text()) {
                Some(line) => format!("Reviewers notified: {line}"),
                None => "Reviewers notified.".to_string(),
            },
            Ok(run) => {
                let code = match run.status.code() {
                    Some(c) => format!("exit {c}"),
                    None => "killed by a signal".to_string(),
                };
                let detail = first_line(&run.stderr.text())
                    .or_else(|| first_line(&run.stdout.text()))
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default();
                format!(
                    "The notification command failed ({code}){detail}; notify the reviewers by hand"
                )
            }
            Err(ProcessError::TimedOut(t)) => format!(
                "The notification command timed out after {} ms (its process group was killed); notify the reviewers by hand",
                t.as_millis()
            ),
            Err(e) => format!(
                "The notification command could not run ({e}); notify the reviewers by hand"
            ),
        }
    }
}

/// The follow-up of `create_pr: true`: ahp does not open the pull request
/// (see [`ReviewTrigger`]'s config warning), so the agent is asked to, with
/// a `gh` command naming the reviewers. Only handles GitHub accepts go into
/// the command: a CODEOWNERS token is repository text the agent may paste
/// into a shell.
fn pull_request_step(target: &str, reviewers: &[String]) -> String {
    let handles: Vec<&str> = reviewers
        .iter()
        .filter_map(|r| r.strip_prefix('@'))
        .filter(|h| {
            let (user, team) = h.split_once('/').unwrap_or((h, ""));
            let ok = |s: &str, extra: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || extra.contains(c))
            };
            ok(user, "") && (team.is_empty() && !h.contains('/') || ok(team, "._"))
        })
        .collect();
    let reviewer_flag = if handles.is_empty() {
        String::new()
    } else {
        format!(" --reviewer {}", handles.join(","))
    };
    format!(
        "open a pull request for {target} (create_pr: ahp does not open it itself), e.g. `gh pr create --fill{reviewer_flag}`"
    )
}

/// The changed files: `files.changed`, else `issue.files`.
fn changed_files(ctx: &HookContext) -> Vec<String> {
    let list = match &ctx.files {
        Some(f) => f.changed.clone(),
        None => ctx
            .lookup("issue.files")
            .and_then(|v| {
                v.as_array().map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
            })
            .unwrap_or_default(),
    };
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for f in list {
        let f = normalize_path(&f).to_string();
        if !f.is_empty() && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// `a, b, c, … and 4 more`.
fn file_list(files: &[String]) -> String {
    let mut shown: Vec<&str> = files.iter().take(FILES_SHOWN).map(String::as_str).collect();
    let more;
    if files.len() > FILES_SHOWN {
        more = format!("… and {} more", files.len() - FILES_SHOWN);
        shown.push(&more);
    }
    shown.join(", ")
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| truncate(l, 200))
}

#[async_trait]
impl Oracle for ReviewTrigger {
    fn time_needed(&self) -> Option<Duration> {
        self.command
            .as_ref()
            .filter(|_| self.notify_reviewers)
            .map(|_| self.timeout)
    }

    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.review(ctx).await?.signals)
    }

    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        self.review(ctx).await
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Aid)
    }

    fn config_warnings(&self) -> Vec<ahp_engine::OracleConfigWarning> {
        let mut out = Vec::new();
        if self.create_pr {
            out.push(OracleConfigError::at(
                "create_pr",
                "ahp does not open pull requests itself: that needs the branch pushed and the \
                 forge's credentials, which a policy check does not hold. The review aid asks the \
                 agent to open one (`gh pr create --fill --reviewer …`); to open it from the hook \
                 instead, set `command:` (it runs once the project is trusted)",
            ));
        }
        if self.idle_switch {
            out.push(OracleConfigError::at(
                "notify_reviewers",
                "`false` keeps `command` from running, and this entry has no `command`: it \
                 changes nothing (the aid names the reviewers either way)",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_reviewers_false_with_no_command_is_said_to_change_nothing() {
        let warned = |config: serde_json::Value| {
            ReviewTrigger::from_config(OracleConfig::new(&config, None))
                .map(|r| {
                    r.config_warnings()
                        .iter()
                        .any(|w| w.key.as_deref() == Some("notify_reviewers"))
                })
                .unwrap_or(false)
        };
        assert!(warned(serde_json::json!({"notify_reviewers": false})));
        assert!(!warned(
            serde_json::json!({"notify_reviewers": false, "command": "notify-send x"})
        ));
        assert!(!warned(serde_json::json!({"notify_reviewers": true})));
    }

    fn matches(pattern: &str, path: &str) -> bool {
        let re = pattern_regex(pattern).unwrap_or_else(|| panic!("no regex for {pattern}"));
        re.is_match(path)
    }

    #[test]
    fn gitignore_style_patterns() {
        let cases: &[(&str, &str, bool)] = &[
            // Unanchored names match at any depth, and below directories.
            ("*", "a/b/c.txt", true),
            ("*.js", "app.js", true),
            ("*.js", "web/src/app.js", true),
            ("*.js", "app.jsx", false),
            ("logs", "logs/a.log", true),
            ("logs", "deep/logs/a.log", true),
            ("logs", "deep/mylogs/a.log", false),
            // Leading slash: root only.
            ("/build/logs/", "build/logs/a.log", true),
            ("/build/logs/", "build/logs/deep/a.log", true),
            ("/build/logs/", "x/build/logs/a.log", false),
            ("/docs", "docs/guide.md", true),
            ("/docs", "src/docs/guide.md", false),
            ("/README.md", "README.md", true),
            ("/README.md", "docs/README.md", false),
            // A middle slash anchors too.
            ("docs/api", "docs/api/x.md", true),
            ("docs/api", "src/docs/api/x.md", false),
            // Trailing slash: directories only, at any depth when unanchored.
            ("apps/", "apps/a.rs", true),
            ("apps/", "x/apps/a.rs", true),
            ("apps/", "apps", false),
            // A wildcard last segment matches that level only.
            ("docs/*", "docs/getting-started.md", true),
            ("docs/*", "docs/build-app/troubleshooting.md", false),
            ("/*", "README.md", true),
            ("/*", "src/lib.rs", false),
            // `**`.
            ("**/logs", "logs/a", true),
            ("**/logs", "x/y/logs/a", true),
            ("docs/**", "docs/a/b/c.md", true),
            ("docs/**", "docs", false),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("a/**/b", "a/x/y/c", false),
            ("docs/**/*.md", "docs/a/b.md", true),
            ("docs/**/*.md", "docs/b.md", true),
            ("docs/**/*.md", "docs/b.txt", false),
            // `?` and literal characters.
            ("file?.txt", "file1.txt", true),
            ("file?.txt", "file10.txt", false),
            ("a+b(c).txt", "a+b(c).txt", true),
            ("[ab].txt", "[ab].txt", true),
            ("[ab].txt", "a.txt", false),
            // Case matters.
            ("*.RS", "lib.rs", false),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(
                matches(pattern, path),
                *want,
                "pattern {pattern:?} on {path:?}"
            );
        }
        assert!(pattern_regex("/").is_none());
        assert!(pattern_regex("").is_none());
    }

    #[test]
    fn escapes_and_comments() {
        let owners = CodeOwners::parse(
            "# comment\n\\#notes.md @hash # trailing comment\nmy\\ file.txt @space\n",
        );
        assert_eq!(owners.rules.len(), 2);
        assert_eq!(owners.rules[0].pattern, "#notes.md");
        assert_eq!(owners.rules[0].owners, ["@hash"]);
        assert_eq!(
            owners.owners_of("my file.txt"),
            Some(&["@space".to_string()][..])
        );
        assert!(owners.notes.is_empty(), "{:?}", owners.notes);
    }

    #[test]
    fn paths_are_normalized() {
        assert_eq!(normalize_path("./src/a.rs"), "src/a.rs");
        assert_eq!(normalize_path("/src/a.rs"), "src/a.rs");
        assert_eq!(normalize_path("src/a.rs"), "src/a.rs");
    }

    #[test]
    fn file_lists_are_capped() {
        let files: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
        assert_eq!(
            file_list(&files),
            "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, … and 2 more"
        );
    }
}
