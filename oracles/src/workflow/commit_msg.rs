//! The `CommitMessageValidator` oracle: the commits of the branch must
//! follow the team's message rules — the Conventional Commits preset, a
//! regex, a required issue id, a subject length (SPEC §5). Offending
//! commits give one **prompt** (severity medium) listing each as
//! `abc1234 "subject" — why`, with suggestions showing the expected format.
//! No commits (or none offending) is an accept.
//!
//! The commits come from the context's `git.commits` (`[{sha, subject,
//! body}]`, oldest first); when the context has none, they are read with
//! [`crate::workflow::git`]: the commits since the merge base with the trunk
//! (`git.trunk`, else main/master), merge commits left out.
//!
//! **On a tool call** (an event with a `tool`, e.g. `pre-tool-use`) the
//! branch's commits are not looked at: only the message of the `git
//! commit` the shell command is about to make is checked, and any other
//! tool call is accepted without a word. The message is read from `-m MSG`
//! (several are paragraphs), `--message=MSG`, `-F FILE` / `--file=FILE`
//! (a file inside the project only), `-F -` with a here-document, a
//! `$(cat <<'EOF' … EOF)` argument, `--trailer`, after `git -C DIR` and
//! `cd DIR &&`. The commit is found wherever the shell would run it: in
//! `sh -c` / `bash -lc` / `eval` (a literal script), in `$(…)` and
//! backquotes, after `if … then`, `{`, `!`, and behind wrappers such as
//! `sudo -u USER`, `timeout 60`, `env`, `xargs`; git's abbreviated long
//! options (`--mess=`) count as the option they abbreviate. A message that cannot be known before the commit runs (an
//! editor opens, `--amend`/`-C` reuse a message, the shell builds it from
//! a variable, the file is written by the same command) is not guessed at:
//! the call is accepted and a note says why; the branch's commits are
//! checked at the issue events. When `required_fields: [issue_id]` is set
//! and the tool call names no issue, that rule is left out (noted).
//!
//! ```yaml
//! hooks:
//!   pre-issue-submit:
//!     - oracle: CommitMessageValidator
//!       config:
//!         preset: conventional      # Conventional Commits 1.0: type(scope)!: description
//!         types: [feat, fix, docs, style, refactor, perf, test, build, ci, chore, revert]
//!         pattern: '^[^a-z]'        # optional regex the subject must match (with or without a preset)
//!         required_fields: [issue_id]   # the subject or body must name the context's issue.id
//!         max_subject_length: 72    # default 72; 0 = no limit
//!         ignore: ['^Merge ', '^Revert "', '^(fixup|squash|amend)! ']   # the default: subjects not checked
//! ```
//!
//! **Conventional Commits 1.0**: `type(scope)!: description` — a type from
//! `types` (compared ignoring case, as the specification asks), an optional
//! non-empty scope in parentheses, an optional `!` for a breaking change,
//! then a colon, one space and a non-empty description.
//!
//! ```
//! use ahp_oracles::workflow::commit_msg::CommitMessageValidator;
//! use ahp_engine::OracleConfig;
//! use serde_json::json;
//! let v = CommitMessageValidator::from_config(OracleConfig::new(&json!({"preset": "conventional"}), None)).unwrap();
//! assert!(v.problems("feat(parser)!: drop the old syntax", "", None).is_empty());
//! assert_eq!(v.problems("Added stuff", "", None),
//!     vec!["not in Conventional Commits form `type(scope)!: description`".to_string()]);
//! ```

use crate::template::truncate;
use crate::workflow::git::{Commit, project_dir_for, resolve_commits};
use ahp_engine::suggest::did_you_mean;
use ahp_engine::{
    Evaluation, Event, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError,
    OracleError, Severity, Signal, async_trait,
};
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// CommitMessageValidator's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitMessageValidatorConfig {
    /// `conventional`: Conventional Commits subjects.
    pub preset: Option<Preset>,
    /// The types the preset allows (default: the Angular convention's).
    pub types: Option<Vec<String>>,
    /// A regex every message must match.
    pub pattern: Option<String>,
    /// Fields a message must carry: `issue_id`.
    pub required_fields: Option<Vec<RequiredField>>,
    /// The longest subject line, in characters (0 = no limit).
    pub max_subject_length: Option<u64>,
    /// Regexes of messages not checked (default: merges, reverts, fixups).
    pub ignore: Option<Vec<String>>,
}

/// A commit message convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Conventional Commits: `type(scope)!: subject`.
    Conventional,
}

/// A field a commit message must carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequiredField {
    /// The issue's id (`FEAT-0123`).
    IssueId,
}

/// The Conventional Commits types of the preset (the Angular convention's).
pub const DEFAULT_TYPES: &[&str] = &[
    "feat", "fix", "docs", "style", "refactor", "perf", "test", "build", "ci", "chore", "revert",
];

/// Subjects that are not checked by default: git's own merge and revert
/// messages, and fixup/squash commits meant to be folded away.
pub const DEFAULT_IGNORE: &[&str] = &[r"^Merge ", r#"^Revert ""#, r"^(fixup|squash|amend)! "];

/// The default `max_subject_length`.
pub const DEFAULT_MAX_SUBJECT: usize = 72;

/// The signal type.
pub const SIGNAL_TYPE: &str = "commit-message";

/// The size limit of one compiled regex.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// How many commits a prompt lists at most.
const MAX_LISTED: usize = 20;

fn conventional_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // The pattern is a constant: a failure here is a bug caught by the tests.
        Regex::new(r"^(?P<type>[^\s():!]+)(?:\((?P<scope>[^()]*)\))?(?P<bang>!)?:(?P<space>\s*)(?P<desc>.*)$")
            .unwrap_or_else(|_| unreachable!("constant regex"))
    })
}

/// Which rule a problem broke (for the suggestions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    Conventional,
    Pattern,
    IssueId,
    Length,
}

/// Checks commit messages. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct CommitMessageValidator {
    conventional: Option<Vec<String>>,
    pattern: Option<Regex>,
    require_issue_id: bool,
    max_subject_length: usize,
    ignore: Vec<Regex>,
    project_dir: Option<PathBuf>,
}

fn compile(pattern: &str, key: &str) -> Result<Regex, OracleConfigError> {
    // Counted against the policy's regex budget, as a Rules condition is.
    ahp_engine::pattern::charge_regex(pattern, false)
        .map_err(|e| OracleConfigError::at(key, e.0))?;
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| OracleConfigError::at(key, format!("invalid regex `{pattern}`: {e}")))
}

/// Trimmed items of a list of strings at `key`; an empty one is an error.
fn trimmed(list: Option<Vec<String>>, key: &str) -> Result<Option<Vec<String>>, OracleConfigError> {
    let Some(list) = list else {
        return Ok(None);
    };
    list.into_iter()
        .enumerate()
        .map(|(i, s)| match s.trim() {
            "" => Err(OracleConfigError::at(
                format!("{key}.{i}"),
                "must not be empty",
            )),
            t => Ok(t.to_string()),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

impl CommitMessageValidator {
    /// Builds the validator from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::workflow::commit_msg::CommitMessageValidator;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let err = CommitMessageValidator::from_config(OracleConfig::new(&json!({"required_fields": ["ticket"]}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("required_fields.0"));
    /// assert!(err.message.contains("issue_id"), "{err}");
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: CommitMessageValidatorConfig = cfg.parse()?;
        let preset = c.preset;
        let types = trimmed(c.types, "types")?;
        let conventional = match (preset, types) {
            (Some(_), Some(types)) if types.is_empty() => {
                return Err(OracleConfigError::at(
                    "types",
                    "an empty list allows no commit at all; list the types, e.g. [feat, fix, docs]",
                ));
            }
            (Some(_), Some(types)) => {
                for (i, t) in types.iter().enumerate() {
                    if t.contains(|c: char| c.is_whitespace() || "():!".contains(c)) {
                        return Err(OracleConfigError::at(
                            format!("types.{i}"),
                            format!(
                                "`{t}` cannot be a commit type: a type is one word without spaces, parentheses, `!` or `:`"
                            ),
                        ));
                    }
                }
                Some(types.iter().map(|t| t.to_ascii_lowercase()).collect())
            }
            (Some(_), None) => Some(DEFAULT_TYPES.iter().map(|t| t.to_string()).collect()),
            (None, Some(_)) => {
                return Err(OracleConfigError::at(
                    "types",
                    "`types` belongs to the Conventional Commits preset: add `preset: conventional`",
                ));
            }
            (None, None) => None,
        };

        let pattern = match c.pattern {
            None => None,
            Some(p) if p.trim().is_empty() => {
                return Err(OracleConfigError::at(
                    "pattern",
                    "an empty pattern checks nothing; remove it or write a regex, e.g. '^[A-Z]+-[0-9]+: '",
                ));
            }
            Some(p) => Some(compile(&p, "pattern")?),
        };
        let require_issue_id = c
            .required_fields
            .is_some_and(|f| f.contains(&RequiredField::IssueId));
        let max_subject_length = c.max_subject_length.map_or(DEFAULT_MAX_SUBJECT, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        });
        let ignore = match trimmed(c.ignore, "ignore")? {
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, p)| compile(p, &format!("ignore.{i}")))
                .collect::<Result<Vec<_>, _>>()?,
            None => DEFAULT_IGNORE
                .iter()
                .map(|p| compile(p, "ignore"))
                .collect::<Result<Vec<_>, _>>()?,
        };

        Ok(CommitMessageValidator {
            conventional,
            pattern,
            require_issue_id,
            max_subject_length,
            ignore,
            project_dir: cfg.project_dir(),
        })
    }

    /// What is wrong with one message (empty: nothing). `issue_id` is
    /// needed when `required_fields` has `issue_id`.
    pub fn problems(&self, subject: &str, body: &str, issue_id: Option<&str>) -> Vec<String> {
        self.check(subject, body, issue_id)
            .into_iter()
            .map(|(_, why)| why)
            .collect()
    }

    /// Whether a subject is skipped (`ignore`).
    pub fn ignored(&self, subject: &str) -> bool {
        self.ignore.iter().any(|r| r.is_match(subject))
    }

    fn check(&self, subject: &str, body: &str, issue_id: Option<&str>) -> Vec<(Rule, String)> {
        let mut out = Vec::new();
        if let Some(types) = &self.conventional
            && let Some(why) = conventional_problem(subject, types)
        {
            out.push((Rule::Conventional, why));
        }
        if let Some(p) = &self.pattern
            && !p.is_match(subject)
        {
            out.push((
                Rule::Pattern,
                format!("does not match the pattern `{}`", p.as_str()),
            ));
        }
        if self.require_issue_id
            && let Some(id) = issue_id
            && !mentions(subject, id)
            && !mentions(body, id)
        {
            out.push((Rule::IssueId, format!("does not mention the issue id {id}")));
        }
        let len = subject.chars().count();
        if self.max_subject_length > 0 && len > self.max_subject_length {
            out.push((
                Rule::Length,
                format!(
                    "subject is {len} characters (max {})",
                    self.max_subject_length
                ),
            ));
        }
        out
    }

    /// The signal for these commits (none when all pass or there are
    /// none). Fails when `issue_id` is required but not known.
    pub fn signal(
        &self,
        commits: &[Commit],
        issue_id: Option<&str>,
        rebase_base: Option<&str>,
    ) -> Result<Option<Signal>, OracleError> {
        let checked: Vec<&Commit> = commits
            .iter()
            .filter(|c| !self.ignored(&c.subject))
            .collect();
        if checked.is_empty() {
            return Ok(None);
        }
        if self.require_issue_id && issue_id.is_none() {
            return Err(OracleError::new(
                "required_fields has issue_id, but the context has no issue.id to look for (run with --issue, or send issue.id in the context)",
            ));
        }
        let mut lines = Vec::new();
        let mut broken: Vec<Rule> = Vec::new();
        for c in &checked {
            let problems = self.check(&c.subject, &c.body, issue_id);
            if problems.is_empty() {
                continue;
            }
            broken.extend(problems.iter().map(|(r, _)| *r));
            let why: Vec<String> = problems.into_iter().map(|(_, w)| w).collect();
            lines.push(format!(
                "{} \"{}\" — {}",
                c.short_sha(),
                truncate(&c.subject, 100),
                why.join("; ")
            ));
        }
        if lines.is_empty() {
            return Ok(None);
        }
        broken.sort();
        broken.dedup();
        let offending = lines.len();
        if offending > MAX_LISTED {
            let more = offending - MAX_LISTED;
            lines.truncate(MAX_LISTED);
            lines.push(format!("… and {more} more"));
        }
        let message = format!(
            "{offending} of {} commit{} {} not follow the commit message rules:\n{}",
            checked.len(),
            if checked.len() == 1 { "" } else { "s" },
            if offending == 1 { "does" } else { "do" },
            lines.join("\n")
        );
        let mut suggestions: Vec<String> = broken
            .iter()
            .map(|r| self.suggestion(*r, issue_id))
            .collect();
        suggestions.push(match rebase_base {
            Some(base) => format!(
                "reword them with `git rebase -i {}` (mark each as `reword`), or `git commit --amend` for the last one",
                base.get(..12).unwrap_or(base)
            ),
            None => "reword them with `git rebase -i <trunk>` (mark each as `reword`), or `git commit --amend` for the last one".to_string(),
        });
        Ok(Some(
            Signal::prompt(message)
                .with_severity(Severity::Medium)
                .with_type(SIGNAL_TYPE)
                .with_resolution_path(suggestions),
        ))
    }

    fn suggestion(&self, rule: Rule, issue_id: Option<&str>) -> String {
        match rule {
            Rule::Conventional => {
                let types = self.conventional.as_deref().unwrap_or_default();
                let example = if types.iter().any(|t| t == "feat") {
                    "feat"
                } else {
                    types.first().map(String::as_str).unwrap_or("feat")
                };
                format!(
                    "write the subject as `type(scope): description` (Conventional Commits 1.0), with type one of {}; the scope is optional and `!` before the colon marks a breaking change — e.g. `{example}(parser): support nested lists`",
                    types.join(", ")
                )
            }
            Rule::Pattern => format!(
                "make the subject match `{}`",
                self.pattern.as_ref().map(Regex::as_str).unwrap_or_default()
            ),
            Rule::IssueId => {
                let id = issue_id.unwrap_or("the issue id");
                format!(
                    "mention {id} in the subject or body, e.g. `fix(parser): handle empty input ({id})` or a `Refs: {id}` line"
                )
            }
            Rule::Length => format!(
                "keep the subject within {} characters and put the details in the body",
                self.max_subject_length
            ),
        }
    }
}

/// Why a subject is not a Conventional Commit (`None`: it is).
fn conventional_problem(subject: &str, types: &[String]) -> Option<String> {
    let form = "not in Conventional Commits form `type(scope)!: description`";
    let Some(caps) = conventional_regex().captures(subject) else {
        return Some(form.to_string());
    };
    let ty = caps.name("type").map_or("", |m| m.as_str());
    if !types.iter().any(|t| t.eq_ignore_ascii_case(ty)) {
        let hint = did_you_mean(&ty.to_ascii_lowercase(), types.iter().map(String::as_str))
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        return Some(format!(
            "unknown type `{ty}`{hint}; expected one of {}",
            types.join(", ")
        ));
    }
    if caps
        .name("scope")
        .is_some_and(|s| s.as_str().trim().is_empty())
    {
        return Some("empty scope `()`: name a scope or leave the parentheses out".to_string());
    }
    let space = caps.name("space").map_or("", |m| m.as_str());
    let desc = caps.name("desc").map_or("", |m| m.as_str());
    if desc.trim().is_empty() {
        return Some("no description after the colon".to_string());
    }
    if space != " " {
        return Some("the colon must be followed by exactly one space".to_string());
    }
    None
}

/// Whether `text` names `id` as a whole word (case-insensitive):
/// `FEAT-0123` is in "fix (feat-0123)" but not in "FEAT-01234".
fn mentions(text: &str, id: &str) -> bool {
    let id = id.trim();
    if id.is_empty() {
        return false;
    }
    let hay = text.to_lowercase();
    let needle = id.to_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    hay.match_indices(&needle).any(|(i, m)| {
        !word(hay[..i].chars().next_back()) && !word(hay[i + m.len()..].chars().next())
    })
}

/// A `git commit` found in a shell command, with what is known of its
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingCommit {
    /// The message it will be made with.
    Known {
        /// The subject (first paragraph, on one line, as `git log` shows it).
        subject: String,
        /// The rest of the message.
        body: String,
    },
    /// Why its message cannot be known before it runs.
    Unknown(String),
}

/// The largest `-F` file read.
const MAX_MESSAGE_FILE: u64 = 1 << 20;

/// The message `git commit` makes of `text` without an editor (git's
/// `whitespace` clean-up: trailing blanks and surrounding blank lines
/// dropped, runs of blank lines made one), split like `git log`'s `%s` and
/// `%b`.
fn split_message(text: &str) -> (String, String) {
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() && lines.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let cut = lines
        .iter()
        .position(|l| l.is_empty())
        .unwrap_or(lines.len());
    let subject = lines[..cut].join(" ");
    let body = lines.get(cut + 1..).unwrap_or_default().join("\n");
    (subject, body)
}

/// The `git commit`s of a shell command line and their messages. `root`
/// is the project: `-F` files are read only inside it, relative to the
/// directory the command runs in (`cd DIR`, `git -C DIR` followed).
///
/// ```
/// use ahp_oracles::workflow::commit_msg::{pending_commits, PendingCommit};
/// let dir = tempfile::tempdir().unwrap();
/// let found = pending_commits("git add -A && git commit -m 'feat: x' -m 'Why.'", dir.path());
/// assert_eq!(found, vec![PendingCommit::Known { subject: "feat: x".into(), body: "Why.".into() }]);
/// assert!(pending_commits("ls -la", dir.path()).is_empty());
/// assert!(matches!(&pending_commits("git commit", dir.path())[0], PendingCommit::Unknown(why) if why.contains("editor")));
/// ```
pub fn pending_commits(script: &str, root: &Path) -> Vec<PendingCommit> {
    let mut found = Vec::new();
    // Where the commands run, relative to the project; `None` once a `cd`
    // leads somewhere unknown.
    let mut cwd: Option<PathBuf> = Some(PathBuf::new());
    commits_in(script, root, &mut cwd, 0, &mut found);
    found
}

/// How deep `sh -c`, `eval` and command substitutions are followed.
const MAX_NESTING: usize = 8;

/// Words that may stand before the program of a simple command: shell
/// keywords, and programs that run the rest of their arguments as a
/// command.
const PREFIXES: &[&str] = &[
    "!",
    "{",
    "if",
    "then",
    "else",
    "elif",
    "while",
    "until",
    "do",
    "time",
    "exec",
    "command",
    "builtin",
    "sudo",
    "doas",
    "env",
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "stdbuf",
    "xargs",
    "chronic",
    "unbuffer",
    "caffeinate",
    "setsid",
    "flock",
];

/// Shells whose `-c SCRIPT` is a command line of its own.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"];

/// The `git commit`s of `script` (and of the command lines it runs: `sh -c`,
/// `eval`, command substitutions) appended to `found`.
fn commits_in(
    script: &str,
    root: &Path,
    cwd: &mut Option<PathBuf>,
    depth: usize,
    found: &mut Vec<PendingCommit>,
) {
    if depth > MAX_NESTING {
        if script.contains("commit") {
            found.push(PendingCommit::Unknown(
                "it is nested too deeply in `sh -c`, `eval` or `$(…)` to be read".into(),
            ));
        }
        return;
    }
    for cmd in crate::scripts::command::simple_commands(script) {
        // The shell runs command substitutions too, wherever they stand;
        // each in a subshell, so a `cd` there stays there.
        for inner in &cmd.substitutions {
            commits_in(inner, root, &mut cwd.clone(), depth + 1, found);
        }
        let mut words = cmd.words.iter().peekable();
        // Assignments, keywords and wrappers before the program, with the
        // wrappers' options and their values (`sudo -u root`, `timeout 5`).
        let mut wrapped = false;
        let mut option_value = false;
        while let Some(w) = words.peek() {
            let t = w.text.as_str();
            let base = t.rsplit('/').next().unwrap_or_default();
            if base == "git" || SHELLS.contains(&base) || base == "eval" {
                break;
            }
            let assignment = t.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if assignment || PREFIXES.contains(&base) {
                wrapped |= !assignment;
                option_value = false;
            } else if t.starts_with('-') && t.len() > 1 {
                option_value = !t.contains('=');
            } else if wrapped && (option_value || t.starts_with(|c: char| c.is_ascii_digit())) {
                option_value = false;
            } else {
                break;
            }
            words.next();
        }
        let Some(program) = words.next() else {
            continue;
        };
        let name = program.text.rsplit('/').next().unwrap_or_default();
        if name == "cd" {
            *cwd = match (cwd.take(), words.next()) {
                (Some(c), Some(dir)) if dir.literal && !dir.text.starts_with(['~', '-']) => {
                    Some(c.join(&dir.text))
                }
                _ => None,
            };
            continue;
        }
        if SHELLS.contains(&name) || name == "eval" {
            let rest: Vec<&crate::scripts::command::Word> = words.collect();
            let inner = if name == "eval" {
                let all_literal = rest.iter().all(|w| w.literal);
                let text = rest
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                Some((text, all_literal))
            } else {
                // `sh -c SCRIPT`, `bash -lc SCRIPT`: the first word after
                // the options, one of which holds `c`; `bash run.sh -c x`
                // runs a script file, with `-c` its argument.
                let mut script = None;
                let mut has_c = false;
                let mut k = 0;
                while let Some(w) = rest.get(k) {
                    let t = w.text.as_str();
                    k += 1;
                    if t == "--" {
                        script = rest.get(k).filter(|_| has_c);
                        break;
                    }
                    if ["-o", "+o", "-O", "+O"].contains(&t) {
                        k += 1;
                    } else if t.len() > 1 && t.starts_with(['-', '+']) {
                        has_c |= t.starts_with('-') && !t.starts_with("--") && t.contains('c');
                    } else {
                        script = Some(w).filter(|_| has_c);
                        break;
                    }
                }
                script.map(|w| (w.text.clone(), w.literal))
            };
            match inner {
                // `eval` runs in this shell (a `cd` there stays); `sh -c`
                // in a new one.
                Some((text, true)) if name == "eval" => {
                    commits_in(&text, root, cwd, depth + 1, found)
                }
                Some((text, true)) => commits_in(&text, root, &mut cwd.clone(), depth + 1, found),
                Some((text, false)) if text.contains("commit") => {
                    found.push(PendingCommit::Unknown(format!(
                        "it runs in a command line the shell builds first (`{name}` with a variable or a command substitution)"
                    )))
                }
                _ => {}
            }
            continue;
        }
        if name != "git" {
            continue;
        }
        let mut dir = cwd.clone();
        let mut is_commit = false;
        while let Some(w) = words.next() {
            let t = w.text.as_str();
            match t {
                "-C" => {
                    dir = match (dir, words.next()) {
                        (Some(d), Some(to)) if to.literal => Some(d.join(&to.text)),
                        _ => None,
                    };
                }
                "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
                | "--super-prefix" => {
                    words.next();
                }
                _ if t.starts_with('-') => {}
                "commit" => {
                    is_commit = true;
                    break;
                }
                _ => break,
            }
        }
        if !is_commit {
            continue;
        }
        let rest: Vec<&crate::scripts::command::Word> = words.collect();
        found.push(commit_message(
            &rest,
            cmd.stdin.as_ref(),
            root,
            dir.as_deref(),
        ));
    }
}

/// `git commit`'s long options: git takes any unambiguous prefix of one
/// (`--mess=…` is `--message=…`).
const COMMIT_LONG_OPTIONS: &[&str] = &[
    "all",
    "allow-empty",
    "allow-empty-message",
    "amend",
    "author",
    "branch",
    "cleanup",
    "date",
    "dry-run",
    "edit",
    "file",
    "fixup",
    "gpg-sign",
    "include",
    "interactive",
    "long",
    "message",
    "no-edit",
    "no-gpg-sign",
    "no-post-rewrite",
    "no-signoff",
    "no-status",
    "no-verify",
    "null",
    "only",
    "patch",
    "pathspec-file-nul",
    "pathspec-from-file",
    "porcelain",
    "quiet",
    "reedit-message",
    "reset-author",
    "reuse-message",
    "short",
    "signoff",
    "squash",
    "status",
    "template",
    "trailer",
    "untracked-files",
    "verbose",
    "verify",
];

/// The long option `name` stands for, as git resolves an abbreviation.
fn long_option(name: &str) -> &str {
    if COMMIT_LONG_OPTIONS.contains(&name) {
        return name;
    }
    let mut candidates = COMMIT_LONG_OPTIONS
        .iter()
        .filter(|o| !name.is_empty() && o.starts_with(name));
    match (candidates.next(), candidates.next()) {
        (Some(only), None) => only,
        _ => name,
    }
}

/// The message of one `git commit` from its arguments.
fn commit_message(
    args: &[&crate::scripts::command::Word],
    stdin: Option<&crate::scripts::command::Word>,
    root: &Path,
    dir: Option<&Path>,
) -> PendingCommit {
    use crate::scripts::command::Word;
    let mut paragraphs: Vec<Word> = Vec::new();
    let mut file: Option<Word> = None;
    let mut trailers: Vec<Word> = Vec::new();
    let mut reuses = false;
    let mut fixup = false;
    // (kind, value): m message, F file, t trailer, C reused commit, f
    // fixup/squash target, _ a value that says nothing about the message.
    let mut picks: Vec<(char, Word)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = args[i];
        i += 1;
        let t = w.text.as_str();
        if t == "--" {
            break;
        }
        // A value glued to its option (`-mMSG`, `--message=MSG`) comes from
        // the same word; otherwise it is the next one.
        let take = |glued: Option<&str>, i: &mut usize| match glued {
            Some(v) => Some(Word {
                text: v.to_string(),
                literal: w.literal,
            }),
            None => {
                let v = args.get(*i).map(|a| (*a).clone());
                *i += 1;
                v
            }
        };
        if let Some(long) = t.strip_prefix("--") {
            let (name, glued) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let kind = match long_option(name) {
                "message" => 'm',
                "file" => 'F',
                "trailer" => 't',
                "reuse-message" | "reedit-message" => 'C',
                "fixup" | "squash" => 'f',
                "author" | "date" | "template" | "cleanup" | "pathspec-from-file" => '_',
                "amend" | "no-edit" => {
                    reuses = true;
                    continue;
                }
                _ => continue,
            };
            if let Some(v) = take(glued, &mut i) {
                picks.push((kind, v));
            }
        } else if t.len() > 1 && t.starts_with('-') {
            for (k, c) in t.char_indices().skip(1) {
                let kind = match c {
                    'm' => 'm',
                    'F' => 'F',
                    'C' | 'c' => 'C',
                    't' => '_',
                    // Optional values, glued only: the rest is theirs.
                    'S' | 'u' => break,
                    _ => continue,
                };
                let glued = &t[k + c.len_utf8()..];
                if let Some(v) = take((!glued.is_empty()).then_some(glued), &mut i) {
                    picks.push((kind, v));
                }
                break;
            }
        }
    }
    for (kind, w) in picks {
        match kind {
            'm' => paragraphs.push(w),
            'F' => file = Some(w),
            't' => trailers.push(w),
            'C' => reuses = true,
            'f' => fixup = true,
            _ => {}
        }
    }
    let text = if !paragraphs.is_empty() {
        if paragraphs.iter().any(|w| !w.literal) {
            return PendingCommit::Unknown(
                "its message is built by the shell (a variable or a command substitution)".into(),
            );
        }
        paragraphs
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    } else if let Some(f) = file {
        if ["-", "/dev/stdin", "/dev/fd/0"].contains(&f.text.as_str()) {
            match stdin {
                Some(s) if s.literal => s.text.clone(),
                Some(_) => {
                    return PendingCommit::Unknown(
                        "its message is built by the shell (a here-document with expansions)"
                            .into(),
                    );
                }
                None => return PendingCommit::Unknown("its message comes from stdin".into()),
            }
        } else if !f.literal {
            return PendingCommit::Unknown(
                "its message file is named by the shell (a variable or a command substitution)"
                    .into(),
            );
        } else {
            let Some(dir) = dir else {
                return PendingCommit::Unknown(format!(
                    "the directory it runs in is not known, so `{}` cannot be found",
                    f.text
                ));
            };
            match crate::project_file::read_in_project(root, &dir.join(&f.text), MAX_MESSAGE_FILE) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => {
                    return PendingCommit::Unknown(format!(
                        "its message file cannot be read before the commit runs: {e}"
                    ));
                }
            }
        }
    } else if fixup {
        return PendingCommit::Unknown(
            "a fixup/squash commit takes its message from the commit it folds into".into(),
        );
    } else if reuses {
        return PendingCommit::Unknown(
            "it reuses an existing message (--amend, --no-edit, -C or -c)".into(),
        );
    } else {
        return PendingCommit::Unknown("its message is written in an editor".into());
    };
    let mut text = text;
    for t in trailers.iter().filter(|t| t.literal) {
        let line = match t.text.split_once('=') {
            Some((k, v)) if !t.text.contains(':') => format!("{}: {}", k.trim(), v.trim()),
            _ => t.text.clone(),
        };
        text.push_str("\n\n");
        text.push_str(&line);
    }
    let (subject, body) = split_message(&text);
    PendingCommit::Known { subject, body }
}

/// Whether the context is a tool call (its event is about a tool, or it
/// carries one).
fn is_tool_call(ctx: &HookContext) -> bool {
    ctx.tool.is_some()
        || matches!(
            ctx.event,
            Some(Event::PreToolUse | Event::PostToolUse | Event::PostToolUseFailure)
        )
}

/// The shell command line of a tool call: `tool.input.command` (a string,
/// or Codex's `["bash", "-lc", "…"]`), or `tool.input.cmd`.
fn shell_command(ctx: &HookContext) -> Option<String> {
    let tool = ctx.tool.as_ref()?;
    if ["write", "edit", "read", "fetch"].contains(&tool.name.to_ascii_lowercase().as_str()) {
        return None;
    }
    let input = tool
        .input
        .get("command")
        .or_else(|| tool.input.get("cmd"))?;
    match input {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script, ..]
                    if shell
                        .rsplit('/')
                        .next()
                        .is_some_and(|s| ["bash", "sh", "zsh", "dash"].contains(&s))
                        && flag.starts_with('-')
                        && flag.contains('c') =>
                {
                    Some(script.to_string())
                }
                // A program and its arguments, with no shell: quoted so
                // the splitter sees the same words.
                _ => Some(
                    words
                        .iter()
                        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            }
        }
        _ => None,
    }
}

impl CommitMessageValidator {
    /// The evaluation of a tool call: only the commit it is about to make.
    fn evaluate_tool_call(&self, ctx: &HookContext) -> Evaluation {
        let mut ev = Evaluation::default();
        let Some(script) = shell_command(ctx) else {
            return ev;
        };
        let root = project_dir_for(self.project_dir.as_deref(), ctx);
        let issue_id = ctx
            .lookup("issue.id")
            .and_then(|v| v.as_str().map(str::to_string));
        let mut lines = Vec::new();
        let mut broken: Vec<Rule> = Vec::new();
        for commit in pending_commits(&script, &root) {
            let (subject, body) = match commit {
                PendingCommit::Known { subject, body } => (subject, body),
                PendingCommit::Unknown(why) => {
                    ev.notes.push(format!(
                        "the message of a `git commit` in this tool call is not checked: {why}; the branch's commits are checked at the issue events"
                    ));
                    continue;
                }
            };
            if self.ignored(&subject) {
                continue;
            }
            if self.require_issue_id && issue_id.is_none() {
                ev.notes.push("required_fields has issue_id, but this tool call names no issue: the pending commit message was checked without that rule".into());
            }
            let problems = self.check(&subject, &body, issue_id.as_deref());
            if problems.is_empty() {
                continue;
            }
            broken.extend(problems.iter().map(|(r, _)| *r));
            let why: Vec<String> = problems.into_iter().map(|(_, w)| w).collect();
            lines.push(format!(
                "\"{}\" — {}",
                truncate(&subject, 100),
                why.join("; ")
            ));
        }
        if lines.is_empty() {
            return ev;
        }
        broken.sort();
        broken.dedup();
        let message = format!(
            "the commit message of this `git commit` does not follow the commit message rules:\n{}",
            lines.join("\n")
        );
        let mut suggestions: Vec<String> = broken
            .iter()
            .map(|r| self.suggestion(*r, issue_id.as_deref()))
            .collect();
        suggestions.push("change the message in the command before it runs".to_string());
        ev.signals.push(
            Signal::prompt(message)
                .with_severity(Severity::Medium)
                .with_type(SIGNAL_TYPE)
                .with_resolution_path(suggestions),
        );
        ev
    }
}

#[async_trait]
impl Oracle for CommitMessageValidator {
    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        if is_tool_call(ctx) {
            return Ok(self.evaluate_tool_call(ctx));
        }
        Ok(Evaluation::from(self.evaluate(ctx).await?))
    }

    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        if is_tool_call(ctx) {
            return Ok(self.evaluate_tool_call(ctx).signals);
        }
        let dir = project_dir_for(self.project_dir.as_deref(), ctx);
        let commits = resolve_commits(ctx, &dir)
            .await
            .map_err(|e| OracleError::new(format!("cannot read the commits: {e}")))?;
        let issue_id = ctx
            .lookup("issue.id")
            .and_then(|v| v.as_str().map(str::to_string));
        let base = ctx
            .lookup("git.merge_base")
            .and_then(|v| v.as_str().map(str::to_string))
            .or_else(|| crate::workflow::git::context_trunk(ctx));
        Ok(self
            .signal(&commits, issue_id.as_deref(), base.as_deref())?
            .into_iter()
            .collect())
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Prompt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_ids_are_whole_words() {
        assert!(mentions("fix: x (FEAT-0123)", "FEAT-0123"));
        assert!(mentions("feat-0123 done", "FEAT-0123"));
        assert!(!mentions("FEAT-01234", "FEAT-0123"));
        assert!(!mentions("XFEAT-0123", "FEAT-0123"));
        assert!(!mentions("anything", " "));
    }

    #[test]
    fn conventional_regex_compiles_and_splits() {
        let types: Vec<String> = DEFAULT_TYPES.iter().map(|s| s.to_string()).collect();
        assert_eq!(conventional_problem("feat: x", &types), None);
        assert_eq!(conventional_problem("FIX(core)!: x", &types), None);
        assert!(
            conventional_problem("feat:x", &types)
                .unwrap()
                .contains("exactly one space")
        );
        assert!(conventional_problem("feat:  x", &types).is_some());
        assert!(
            conventional_problem("feat(): x", &types)
                .unwrap()
                .contains("empty scope")
        );
        assert!(
            conventional_problem("feat: ", &types)
                .unwrap()
                .contains("no description")
        );
        assert!(
            conventional_problem("fxi: typo", &types)
                .unwrap()
                .contains("did you mean `fix`")
        );
    }
}

#[cfg(test)]
mod pending_tests {
    use super::*;

    fn known(subject: &str, body: &str) -> PendingCommit {
        PendingCommit::Known {
            subject: subject.into(),
            body: body.into(),
        }
    }

    #[test]
    fn messages_of_pending_commits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let p = |s: &str| pending_commits(s, root);
        assert_eq!(p("git commit -m 'feat: x'"), vec![known("feat: x", "")]);
        assert_eq!(
            p("git commit -m 'a\nb' -m 'c'"),
            vec![known("a b", "c")],
            "the first paragraph is the subject, on one line"
        );
        assert_eq!(p("git commit -qam 'fix: y'"), vec![known("fix: y", "")]);
        assert_eq!(
            p("git commit --message=fix:\\ z"),
            vec![known("fix: z", "")]
        );
        assert_eq!(
            p("git commit -m 'feat: t' --trailer 'Refs=FEAT-1'"),
            vec![known("feat: t", "Refs: FEAT-1")]
        );
        assert_eq!(
            p("/usr/bin/git -c user.name=x --no-pager commit -S -m 'feat: s'"),
            vec![known("feat: s", "")]
        );
        // `-- -m x`: after `--` words are paths.
        assert!(matches!(
            &p("git commit -- -m x")[0],
            PendingCommit::Unknown(_)
        ));
        // Two commits in one line are both found; other git commands none.
        assert_eq!(p("git commit -m a; git commit -m b").len(), 2);
        assert!(p("git log -m 'x'; git commit-tree x; echo git commit").is_empty());
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/m.txt"), "feat: from file\n\n\n# kept\n").unwrap();
        assert_eq!(
            p("cd sub && git commit -F m.txt"),
            vec![known("feat: from file", "# kept")]
        );
        assert_eq!(
            p("git -C sub commit -F m.txt"),
            vec![known("feat: from file", "# kept")]
        );
        assert!(
            matches!(&p("cd \"$D\" && git commit -F m.txt")[0], PendingCommit::Unknown(w) if w.contains("directory"))
        );
        assert!(
            matches!(&p("git commit -F -")[0], PendingCommit::Unknown(w) if w.contains("stdin"))
        );
        assert!(
            matches!(&p("git commit -C HEAD")[0], PendingCommit::Unknown(w) if w.contains("reuses"))
        );
    }

    #[tokio::test]
    async fn a_tool_call_without_an_issue_leaves_the_issue_id_rule_out() {
        let v = CommitMessageValidator::from_config(OracleConfig::new(
            &serde_json::json!({"preset": "conventional", "required_fields": ["issue_id"]}),
            None,
        ))
        .unwrap();
        let ctx: HookContext = serde_json::from_value(serde_json::json!({
            "event": "pre-tool-use",
            "tool": {"name": "shell", "input": {"command": "git commit -m 'feat: x'"}}
        }))
        .unwrap();
        let ev = v.evaluate_full(&ctx).await.unwrap();
        assert!(ev.signals.is_empty());
        assert!(
            ev.notes.iter().any(|n| n.contains("names no issue")),
            "{:?}",
            ev.notes
        );
        let mut with_issue = ctx.clone();
        with_issue.issue = serde_json::from_value(serde_json::json!({"id": "FEAT-9"})).ok();
        let ev = v.evaluate_full(&with_issue).await.unwrap();
        assert_eq!(ev.signals.len(), 1, "{ev:?}");
    }
}
