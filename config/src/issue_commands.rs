//! `settings.issue_commands`: the shell commands that are issue lifecycle
//! events.
//!
//! In an issue workflow the agent itself starts, submits and closes issues,
//! by running the tracker's command line as a shell tool call (`monoco
//! issue close FEAT-0123`). Each entry of this map describes one tracker's
//! command shape; `ahp hook` finds matching commands in the shell-command
//! model of a pre- or post-tool call ([`IssueCommand::find`]) and dispatches
//! the matching `pre-issue-*` / `post-issue-*` event with the issue loaded.
//! The builtin layer names Monoco's; a layer adds another tracker under
//! its own key, or switches one off with `enabled: false` (the map merges
//! key by key like every setting).
//!
//! ```yaml
//! settings:
//!   issue_commands:
//!     tickets:
//!       command: "tk {{ verb }} {{ id }}"         # program, words, placeholders
//!       verbs: {begin: start, done: close}         # word → lifecycle step
//!       id: "TK-[0-9]+"                            # what an issue id looks like
//!       issue_files: ["docs/tickets/{{ id }}.md"]  # where its file is
//! ```
//!
//! ```
//! use ahp_config::issue_commands::{IssueCommand, Lifecycle};
//! use ahp_config::{Layer, LoadedConfig, SourceFile};
//! let cfg = LoadedConfig::from_files(".".into(), vec![SourceFile {
//!     layer: Layer::Project,
//!     path: ".ahp/hooks.yaml".into(),
//!     text: "settings:\n  issue_commands:\n    tickets:\n      command: tk {{ verb }} {{ id }}\n      verbs: {done: close}\n      id: TK-[0-9]+\n".into(),
//! }.into()]).unwrap();
//! let commands = cfg.issue_commands().unwrap();
//! let tickets = commands.iter().find(|c| c.name == "tickets").unwrap();
//! let shell = ahp_engine::shell::model("cd app && ./scripts/tk done TK-12", None, None);
//! let found = tickets.find(&shell);
//! assert_eq!(found[0].lifecycle, Lifecycle::Close);
//! assert_eq!(found[0].id.as_deref(), Some("TK-12"));
//! ```

use crate::load::LoadedConfig;
use crate::source::{ConfigError, ConfigErrors};
use crate::yaml::{Node, NodeValue};
use ahp_engine::Event;
use ahp_engine::pattern::Pattern;
use ahp_engine::shell::{Shell, SimpleCommand};
use serde::Deserialize;
use std::collections::BTreeMap;

ahp_engine::name_enum! {
    /// A step of an issue's life, as Monoco names them: each has a `pre-issue-*`
    /// and a `post-issue-*` event.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Lifecycle {
        /// `issue create`.
        Create => "create",
        /// `issue start`.
        Start => "start",
        /// `issue submit`.
        Submit => "submit",
        /// `issue close`.
        Close => "close",
        /// `issue open`: a closed or cancelled issue opened again.
        Open => "open",
        /// `issue cancel`.
        Cancel => "cancel",
        /// `issue delete`.
        Delete => "delete",
    }
}

impl Lifecycle {
    /// The step named `name` (any case).
    pub fn parse(name: &str) -> Option<Lifecycle> {
        Lifecycle::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(name.trim()))
    }

    /// The event before the command runs (`pre-issue-close`).
    pub fn pre_event(self) -> Event {
        match self {
            Lifecycle::Create => Event::PreIssueCreate,
            Lifecycle::Start => Event::PreIssueStart,
            Lifecycle::Submit => Event::PreIssueSubmit,
            Lifecycle::Close => Event::PreIssueClose,
            Lifecycle::Open => Event::PreIssueOpen,
            Lifecycle::Cancel => Event::PreIssueCancel,
            Lifecycle::Delete => Event::PreIssueDelete,
        }
    }

    /// The event after it succeeded (`post-issue-close`).
    pub fn post_event(self) -> Event {
        match self {
            Lifecycle::Create => Event::PostIssueCreate,
            Lifecycle::Start => Event::PostIssueStart,
            Lifecycle::Submit => Event::PostIssueSubmit,
            Lifecycle::Close => Event::PostIssueClose,
            Lifecycle::Open => Event::PostIssueOpen,
            Lifecycle::Cancel => Event::PostIssueCancel,
            Lifecycle::Delete => Event::PostIssueDelete,
        }
    }
}

/// One word of a command shape.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ShapeWord {
    /// A word the command has (compared ignoring case).
    Literal(String),
    /// `{{ verb }}`: a word of `verbs`.
    Verb,
    /// `{{ id }}`: the first later word that looks like an issue id.
    Id,
}

/// One tracker's command shape, checked (see the module documentation).
#[derive(Debug, Clone)]
pub struct IssueCommand {
    /// The key under `settings.issue_commands` (`monoco`).
    pub name: String,
    /// The shape as written (`monoco issue {{ verb }} {{ id }}`).
    pub command: String,
    /// The program, without its directory (`monoco`).
    program: String,
    /// The words after the program.
    words: Vec<ShapeWord>,
    /// Command word (lower case) → step, for `{{ verb }}`.
    verbs: BTreeMap<String, Lifecycle>,
    /// The step of a shape without `{{ verb }}`.
    lifecycle: Option<Lifecycle>,
    /// What an issue id looks like (anchored).
    id: Pattern,
    /// Globs under the project root, with `{{ id }}`, where the issue file is.
    pub issue_files: Vec<String>,
    /// A git branch glob with `{{ id }}` (`{{ id }}-*`): when a local branch
    /// other than the current one matches, the issue is judged as that
    /// branch has it, where its work is (Monoco closes from the trunk and
    /// merges the issue file from the issue's branch).
    pub issue_branch: Option<String>,
}

/// A command of a shell tool call that is an issue lifecycle step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCommand {
    /// Which `settings.issue_commands` entry matched.
    pub tracker: String,
    /// The step.
    pub lifecycle: Lifecycle,
    /// The issue id, when the command names one (`create` does not).
    pub id: Option<String>,
    /// The command in the shape's words: program, step and id, without
    /// its other arguments (they may hold expanded secrets).
    pub command: String,
    /// The directory a `cd` earlier in the line moved to, if any.
    pub cwd: Option<String>,
}

/// Programs that run another program named among their arguments:
/// `uv run monoco …`, `uvx --from monoco-toolkit monoco …`, `python -m
/// monoco …`, `npx tk …`.
const LAUNCHERS: &[&str] = &[
    "uv", "uvx", "pipx", "poetry", "pdm", "hatch", "rye", "conda", "mamba", "pixi", "python",
    "python3", "npx", "pnpm", "bunx", "yarn", "mise", "devbox",
];

/// Most distinct issue commands one tool call is gated for; the rest are
/// named in a warning (a line of hundreds of closes is not a workflow).
pub const MAX_FOUND: usize = 8;

/// Most issue commands [`IssueCommand::find`] lists for one line.
pub const MAX_SCANNED: usize = 64;

/// The default id shape: Monoco's (`FEAT-0123`, with an optional
/// `project::` namespace).
pub const DEFAULT_ID: &str = "(?:[A-Za-z0-9_.-]+::)?[A-Za-z][A-Za-z0-9]*-[0-9]+";

impl IssueCommand {
    /// The issue commands of `shell`, in the order the line runs them.
    pub fn find(&self, shell: &Shell) -> Vec<FoundCommand> {
        let mut out = Vec::new();
        for c in &shell.commands {
            if out.len() >= MAX_SCANNED {
                break;
            }
            if let Some(found) = self.match_command(c) {
                out.push(found);
            }
        }
        out
    }

    fn match_command(&self, c: &SimpleCommand) -> Option<FoundCommand> {
        let rest: &[String] = if c.name.eq_ignore_ascii_case(&self.program) {
            &c.args
        } else if is_launcher(&c.name) {
            let at = c.args.iter().position(|a| self.names_program(a))?;
            &c.args[at + 1..]
        } else {
            return None;
        };
        // `monoco issue close --help` asks for help; it closes nothing.
        if rest.iter().any(|a| a == "--help" || a == "-h") {
            return None;
        }
        let mut i = 0;
        let mut lifecycle = self.lifecycle;
        let mut id = None;
        for word in &self.words {
            match word {
                ShapeWord::Literal(l) => {
                    i = next_positional(rest, i, |w| w.eq_ignore_ascii_case(l))? + 1;
                }
                ShapeWord::Verb => {
                    let at = next_positional(rest, i, |w| {
                        self.verbs.contains_key(&w.to_ascii_lowercase())
                    })?;
                    lifecycle = self.verbs.get(&rest[at].to_ascii_lowercase()).copied();
                    i = at + 1;
                }
                ShapeWord::Id => {
                    // Optional (`issue create` names none); the first later
                    // word that looks like an id, wherever flags put it.
                    if let Some(at) = rest[i..]
                        .iter()
                        .position(|w| !w.starts_with('-') && self.id.is_match(w))
                    {
                        id = Some(rest[i + at].clone());
                        i += at + 1;
                    }
                }
            }
        }
        let lifecycle = lifecycle?;
        let mut command = vec![self.program.clone()];
        for word in &self.words {
            match word {
                ShapeWord::Literal(l) => command.push(l.clone()),
                ShapeWord::Verb => command.push(
                    self.verbs
                        .iter()
                        .find(|(_, l)| **l == lifecycle)
                        .map(|(w, _)| w.clone())
                        .unwrap_or_else(|| lifecycle.as_str().to_string()),
                ),
                ShapeWord::Id => command.extend(id.clone()),
            }
        }
        Some(FoundCommand {
            tracker: self.name.clone(),
            lifecycle,
            id,
            command: command.join(" "),
            cwd: c.cwd.clone(),
        })
    }

    /// Whether a launcher's argument runs this program: `monoco`,
    /// `.venv/bin/monoco`, and for `python -m`, `-mmonoco`, `monoco.main`
    /// or `monoco.__main__`.
    fn names_program(&self, arg: &str) -> bool {
        let a = arg
            .strip_prefix("-m")
            .filter(|m| !m.is_empty())
            .unwrap_or(arg);
        let a = basename(a);
        a.eq_ignore_ascii_case(&self.program)
            || a.split('.')
                .next()
                .is_some_and(|m| m.eq_ignore_ascii_case(&self.program))
                && a.contains('.')
    }

    /// The issue commands of a line the shell model could not parse
    /// (too long, too deep): found in its words, split at whitespace,
    /// quotes and shell operators, so that what cannot be modelled is not
    /// waved through.
    pub fn find_text(&self, line: &str) -> Vec<FoundCommand> {
        let words: Vec<String> = line
            .split(|c: char| c.is_whitespace() || "\"'`;&|()<>".contains(c))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        let mut out = Vec::new();
        for (i, w) in words.iter().enumerate() {
            if out.len() >= MAX_SCANNED {
                break;
            }
            let name = basename(w);
            if !name.eq_ignore_ascii_case(&self.program) {
                continue;
            }
            let c = SimpleCommand {
                name: name.to_string(),
                args: words[i + 1..].iter().take(64).cloned().collect(),
                ..SimpleCommand::default()
            };
            out.extend(self.match_command(&c));
        }
        out
    }
}

/// Programs that run another program named among their arguments (see
/// [`LAUNCHERS`]), and versioned Pythons (`python3.11`).
fn is_launcher(name: &str) -> bool {
    LAUNCHERS.contains(&name)
        || name
            .strip_prefix("python")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The index of the first word from `from` on that `wanted` accepts,
/// skipping only options and the one word after an option (its value):
/// `monoco --root app issue close` still has `issue` as its next word, but
/// `monoco list issue` is not `monoco issue`.
fn next_positional(words: &[String], from: usize, wanted: impl Fn(&str) -> bool) -> Option<usize> {
    let mut after_option = false;
    for (i, w) in words.iter().enumerate().skip(from) {
        if wanted(w) {
            return Some(i);
        }
        if w.starts_with('-') && w.len() > 1 {
            after_option = !w.contains('=');
        } else if after_option {
            after_option = false;
        } else {
            return None;
        }
    }
    None
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// How `settings.issue_commands.NAME` reads.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    command: Option<String>,
    verbs: Option<BTreeMap<String, String>>,
    lifecycle: Option<String>,
    id: Option<String>,
    issue_files: Option<Vec<String>>,
    issue_branch: Option<String>,
    enabled: Option<bool>,
}

impl LoadedConfig {
    /// `settings.issue_commands`, checked: the enabled entries of every
    /// layer, merged by name (see the module documentation).
    pub fn issue_commands(&self) -> Result<Vec<IssueCommand>, ConfigErrors> {
        let (out, errors) = self.issue_commands_with_errors();
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(ConfigErrors(errors))
        }
    }

    /// [`LoadedConfig::issue_commands`] leaving out each entry that does
    /// not check (listed as errors), so that one broken tracker does not
    /// switch the others off.
    pub fn issue_commands_with_errors(&self) -> (Vec<IssueCommand>, Vec<ConfigError>) {
        let Some(node) = self.settings.as_ref().and_then(|s| s.get("issue_commands")) else {
            return (Vec::new(), Vec::new());
        };
        let mut errors = Vec::new();
        let mut out = Vec::new();
        match &node.value {
            NodeValue::Map(m) => {
                for (key, n) in m {
                    match read(&key.name, n) {
                        Ok(Some(c)) => out.push(c),
                        Ok(None) => {}
                        Err(e) => errors.push(e),
                    }
                }
            }
            _ => errors.push(
                ConfigError::at(
                    &node.origin,
                    Some("settings.issue_commands".into()),
                    format!(
                        "expected a map of name → command shape, found {}",
                        node.kind()
                    ),
                )
                .help(format!(
                    "{HELP}\nto switch one tracker off: `monoco: {{enabled: false}}`"
                )),
            ),
        }
        (out, errors)
    }
}

const HELP: &str = "example:\nissue_commands:\n  tickets:\n    command: \"tk {{ verb }} {{ id }}\"\n    verbs: {begin: start, done: close}\n    issue_files: [\"docs/tickets/{{ id }}.md\"]";

fn read(name: &str, node: &Node) -> Result<Option<IssueCommand>, ConfigError> {
    let path = format!("settings.issue_commands.{name}");
    let at = |key: &str, message: String| {
        let origin = node
            .find_key(key)
            .map(|k| k.origin.clone())
            .or_else(|| node.find(key).map(|n| n.origin.clone()))
            .filter(|_| !key.is_empty())
            .unwrap_or_else(|| node.origin.clone());
        let full = if key.is_empty() {
            path.clone()
        } else {
            format!("{path}.{key}")
        };
        ConfigError::at(&origin, Some(full), message)
    };
    let spec: Spec = ahp_engine::oracle::from_value(&node.to_json())
        .map_err(|e| at(e.key.as_deref().unwrap_or(""), e.message).help(HELP))?;
    if spec.enabled == Some(false) {
        return Ok(None);
    }
    let Some(command) = spec.command else {
        return Err(at(
            "",
            "`command` is missing: the command shape this entry gates".into(),
        )
        .help(HELP));
    };
    if command.split_whitespace().any(|w| {
        (w.contains("{{") && !w.starts_with("{{")) || (w.contains("}}") && !w.ends_with("}}"))
    }) || command.contains("}}{{")
    {
        return Err(at(
            "command",
            "a placeholder is a word of its own: write `tk {{ verb }} {{ id }}`, with spaces around each".into(),
        ));
    }
    let mut words = Vec::new();
    let mut text = command.as_str();
    let mut program = None;
    while let Some(word) = next_word(&mut text) {
        let w = match word.as_str() {
            "{{verb}}" => ShapeWord::Verb,
            "{{id}}" => ShapeWord::Id,
            w if w.contains("{{") || w.contains("}}") => {
                return Err(at(
                    "command",
                    format!(
                        "`{w}` is no placeholder: the shape knows `{{{{ verb }}}}` and `{{{{ id }}}}`"
                    ),
                ));
            }
            w => ShapeWord::Literal(w.to_string()),
        };
        match (&program, w) {
            (None, ShapeWord::Literal(p)) => program = Some(basename(&p).to_string()),
            (None, _) => {
                return Err(at(
                    "command",
                    "the shape starts with its program (`monoco issue {{ verb }} {{ id }}`), not a placeholder".into(),
                ));
            }
            (Some(_), w) => words.push(w),
        }
    }
    let Some(program) = program.filter(|p| !p.is_empty()) else {
        return Err(at("command", "an empty shape matches no command".into()).help(HELP));
    };
    let has_verb = words.contains(&ShapeWord::Verb);
    if words.iter().filter(|w| **w == ShapeWord::Verb).count() > 1
        || words.iter().filter(|w| **w == ShapeWord::Id).count() > 1
    {
        return Err(at(
            "command",
            "`{{ verb }}` and `{{ id }}` may each appear once".into(),
        ));
    }
    let lifecycle = match (&spec.lifecycle, has_verb) {
        (Some(_), true) => {
            return Err(at(
                "lifecycle",
                "a shape with `{{ verb }}` takes its step from `verbs`; remove `lifecycle` or the placeholder".into(),
            ));
        }
        (Some(l), false) => Some(step(l).map_err(|m| at("lifecycle", m))?),
        (None, false) => {
            return Err(at(
                "command",
                "the shape names no step: add `{{ verb }}` (with `verbs`), or `lifecycle: close` for a command that is always one step".into(),
            ));
        }
        (None, true) => None,
    };
    if spec.verbs.is_some() && !has_verb {
        return Err(at(
            "verbs",
            "`verbs` needs a `{{ verb }}` in `command`".into(),
        ));
    }
    let verbs = match spec.verbs {
        None => Lifecycle::ALL
            .into_iter()
            .map(|l| (l.as_str().to_string(), l))
            .collect(),
        Some(map) if map.is_empty() => {
            return Err(at(
                "verbs",
                "an empty `verbs` map matches no command".into(),
            ));
        }
        Some(map) => {
            let mut out = BTreeMap::new();
            for (word, to) in map {
                let l = step(&to).map_err(|m| at(&format!("verbs.{word}"), m))?;
                out.insert(word.to_ascii_lowercase(), l);
            }
            out
        }
    };
    let id_source = spec.id.as_deref().unwrap_or(DEFAULT_ID);
    let id = Pattern::new(&format!("^(?:{id_source})$"))
        .map_err(|e| at("id", format!("not a regular expression: {}", e.0)))?;
    let issue_files = spec.issue_files.unwrap_or_default();
    for (i, glob) in issue_files.iter().enumerate() {
        let g = glob.trim();
        if g.is_empty()
            || g.starts_with('/')
            || g.split('/').any(|s| s == "..")
            || g.starts_with('~')
        {
            return Err(at(
                &format!("issue_files.{i}"),
                format!(
                    "`{glob}` is not a path under the project root: issue files are looked up inside the project only"
                ),
            ));
        }
        if !g.contains("{{ id }}") && !g.contains("{{id}}") {
            return Err(at(
                &format!("issue_files.{i}"),
                format!(
                    "`{glob}` does not name the issue: put `{{{{ id }}}}` where the id goes (`Issues/**/{{{{ id }}}}-*.md`)"
                ),
            ));
        }
        check_glob(g).map_err(|e| {
            at(
                &format!("issue_files.{i}"),
                format!("`{glob}` is not a glob: {e}"),
            )
        })?;
    }
    if let Some(b) = &spec.issue_branch
        && !b.contains("{{ id }}")
        && !b.contains("{{id}}")
    {
        return Err(at(
            "issue_branch",
            format!(
                "`{b}` does not name the issue: put `{{{{ id }}}}` where the id goes (`{{{{ id }}}}-*`)"
            ),
        ));
    }
    if let Some(b) = &spec.issue_branch {
        check_glob(b).map_err(|e| at("issue_branch", format!("`{b}` is not a glob: {e}")))?;
    }
    Ok(Some(IssueCommand {
        name: name.to_string(),
        command,
        program,
        words,
        verbs,
        lifecycle,
        id,
        issue_files,
        issue_branch: spec.issue_branch,
    }))
}

/// Whether `glob` (with `{{ id }}` in it) reads in the syntax the lookup
/// compiles (`*`, `?`, `**`, `{a,b}`, `[..]`): checked at load so that a
/// typo is an error rather than a lookup that never matches.
fn check_glob(glob: &str) -> Result<(), &'static str> {
    let g = glob.replace("{{ id }}", "ID").replace("{{id}}", "ID");
    let (mut depth, mut class) = (0u32, false);
    for c in g.chars() {
        match (c, class) {
            ('[', false) => class = true,
            (']', true) => class = false,
            ('{', false) if depth > 0 => return Err("alternatives `{a,b}` do not nest"),
            ('{', false) => depth += 1,
            ('}', false) if depth == 0 => return Err("a `}` closes no `{`"),
            ('}', false) => depth -= 1,
            _ => {}
        }
    }
    match (class, depth) {
        (true, _) => Err("a `[` is not closed"),
        (_, 1..) => Err("a `{` is not closed"),
        _ => Ok(()),
    }
}

/// The next word of a shape; `{{ x }}` with its spaces is one word,
/// returned without them (`{{x}}`).
fn next_word(text: &mut &str) -> Option<String> {
    let t = text.trim_start();
    if t.is_empty() {
        *text = t;
        return None;
    }
    if let Some(rest) = t.strip_prefix("{{")
        && let Some(end) = rest.find("}}")
    {
        let inner: String = rest[..end].split_whitespace().collect();
        *text = &rest[end + 2..];
        return Some(format!("{{{{{inner}}}}}"));
    }
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    *text = &t[end..];
    Some(t[..end].to_string())
}

fn step(name: &str) -> Result<Lifecycle, String> {
    Lifecycle::parse(name).ok_or_else(|| {
        let names = Lifecycle::ALL.map(Lifecycle::as_str);
        let hint = ahp_engine::suggest::did_you_mean(name, names)
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        format!(
            "`{name}` is no issue lifecycle step{hint}; known: {}",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layer, SourceFile};

    fn commands(yaml: &str) -> Result<Vec<IssueCommand>, ConfigErrors> {
        let cfg = LoadedConfig::from_files(
            ".".into(),
            vec![
                SourceFile {
                    layer: Layer::Project,
                    path: ".ahp/hooks.yaml".into(),
                    text: yaml.into(),
                }
                .into(),
            ],
        )
        .unwrap();
        cfg.issue_commands()
    }

    fn monoco() -> IssueCommand {
        commands("settings:\n  issue_commands:\n    monoco:\n      command: monoco issue {{ verb }} {{ id }}\n")
            .unwrap()
            .remove(0)
    }

    fn found(line: &str) -> Vec<(Lifecycle, Option<String>)> {
        monoco()
            .find(&ahp_engine::shell::model(line, None, None))
            .into_iter()
            .map(|f| (f.lifecycle, f.id))
            .collect()
    }

    #[test]
    fn monoco_commands_are_found_however_they_are_run() {
        let close = vec![(Lifecycle::Close, Some("FEAT-0001".to_string()))];
        for line in [
            "monoco issue close FEAT-0001",
            "monoco issue close FEAT-0001 --solution implemented",
            "monoco issue close --solution implemented FEAT-0001",
            "cd app && monoco issue close FEAT-0001",
            "uv run monoco issue close FEAT-0001",
            "uv run --with rich monoco issue close FEAT-0001",
            "uvx --from monoco-toolkit monoco issue close FEAT-0001",
            "python3 -m monoco issue close FEAT-0001",
            ".venv/bin/monoco issue close FEAT-0001",
            "sudo -u dev monoco issue close FEAT-0001",
            "bash -c 'monoco issue close FEAT-0001'",
            "monoco --root . issue close FEAT-0001",
            "M=monoco; $M issue CLOSE FEAT-0001",
            "git add -A && monoco issue close FEAT-0001 | tail -5",
        ] {
            assert_eq!(found(line), close, "{line}");
        }
        assert_eq!(
            found("monoco issue create feature -t 'Add login'"),
            [(Lifecycle::Create, None)]
        );
        assert_eq!(
            found("monoco issue submit FEAT-1 && monoco issue close FEAT-1"),
            [
                (Lifecycle::Submit, Some("FEAT-1".into())),
                (Lifecycle::Close, Some("FEAT-1".into()))
            ]
        );
    }

    #[test]
    fn other_commands_are_not_issue_commands() {
        for line in [
            "monoco issue list",
            "monoco issue show FEAT-0001",
            "echo monoco issue close FEAT-0001",
            "grep 'monoco issue close' notes.md",
            "monoco list issue close FEAT-1",
            "git commit -m 'monoco issue close FEAT-1'",
        ] {
            assert_eq!(found(line), [], "{line}");
        }
    }

    #[test]
    fn a_shape_error_names_the_key_and_line() {
        for (yaml, key, needle) in [
            (
                "    t:\n      command: tk {{ verb }} {{ id }}\n      verbs: {done: closed}\n",
                "verbs.done",
                "did you mean `close`",
            ),
            (
                "    t:\n      command: tk done {{ id }}\n",
                "command",
                "names no step",
            ),
            (
                "    t:\n      command: tk {{ verb }}\n      lifecycle: close\n",
                "lifecycle",
                "takes its step",
            ),
            (
                "    t:\n      command: tk {{ verb }} {{ idd }}\n",
                "command",
                "no placeholder",
            ),
            (
                "    t:\n      command: tk {{ verb }}\n      issue_files: [\"../x/{{ id }}.md\"]\n",
                "issue_files.0",
                "under the project root",
            ),
            (
                "    t:\n      command: tk {{ verb }}\n      issue_files: [docs/x.md]\n",
                "issue_files.0",
                "does not name the issue",
            ),
            (
                "    t:\n      command: tk {{ verb }}\n      id: \"(\"\n",
                "id",
                "regular expression",
            ),
            ("    t:\n      comand: tk {{ verb }}\n", "comand", "command"),
        ] {
            let errs = commands(&format!("settings:\n  issue_commands:\n{yaml}")).unwrap_err();
            let e = &errs.0[0];
            assert_eq!(
                e.key.as_deref(),
                Some(format!("settings.issue_commands.t.{key}").as_str()),
                "{yaml}"
            );
            assert!(e.to_string().contains(needle), "{yaml}: {e}");
            assert!(e.line >= 3, "{yaml}: {e}");
        }
    }

    #[test]
    fn enabled_false_switches_an_entry_off() {
        let c = commands("settings:\n  issue_commands:\n    monoco: {enabled: false}\n").unwrap();
        assert!(c.is_empty());
    }
}
