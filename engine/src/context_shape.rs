//! The shape of the hook context: which dotted paths ahp's events provide,
//! and what kind of value sits at each (SPEC §3, and what the adapters and
//! `ahp run` actually fill).
//!
//! A `when` key or a Rules condition that names a path no event provides
//! never holds, so its entry is silently off. The loader checks every path
//! against this description and reports the typo with a "did you mean";
//! it also reports a comparison that can never hold (an object compared
//! with a string).
//!
//! Some objects are *open*: an agent, the caller of `ahp run` or an
//! earlier control may put fields of its own there (the top level keeps
//! every payload field an adapter does not map). A name there that is close
//! to a known one is still a typo ([`Level::Error`]); any other unknown
//! name is only a [`Level::Warning`]. Below a *map* (`tool.input`, `raw`,
//! `issue.frontmatter`) anything goes.
//!
//! ```
//! use ahp_engine::context_shape::{check_path, Level};
//! assert!(check_path("tool.input.command").is_none());
//! let typo = check_path("tool.nme").unwrap();
//! assert_eq!(typo.level, Level::Error);
//! assert!(typo.help.unwrap().contains("did you mean `tool.name`"));
//! let custom = check_path("team").unwrap();
//! assert_eq!(custom.level, Level::Warning);
//! ```

use crate::Event;
use crate::condition::{CmpOp, Matcher};
use crate::pattern::Pattern;
use crate::suggest::did_you_mean;
use serde_json::Value;

/// What kind of value a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Text,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// An object with these fields; `open` when others may appear too.
    Object {
        /// The fields ahp knows.
        fields: &'static [Field],
        /// Whether fields ahp does not know may appear.
        open: bool,
    },
    /// An object whose keys are the agent's or the user's: anything goes.
    Map,
    /// A list of items of this kind, indexed by number (`files.changed.0`).
    List(&'static Kind),
    /// Whatever the agent sends (a string or an object, …).
    Any,
}

impl Kind {
    /// How the kind is named in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "a string",
            Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::Object { .. } | Kind::Map => "an object",
            Kind::List(_) => "a list",
            Kind::Any => "any value",
        }
    }
}

/// One named field of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The key.
    pub name: &'static str,
    /// Its kind.
    pub kind: Kind,
}

const fn f(name: &'static str, kind: Kind) -> Field {
    Field { name, kind }
}

const TEXTS: Kind = Kind::List(&Kind::Text);

/// `tool`: a typed struct, so a field it does not have cannot exist (an
/// unknown key in a caller's `tool` object is dropped when it is read).
const TOOL: &[Field] = &[
    f("name", Kind::Text),
    f("raw_name", Kind::Text),
    f("input", Kind::Map),
    f("path", Kind::Text),
    f("work_dir", Kind::Text),
    f("use_id", Kind::Text),
    f("response", Kind::Any),
    f(
        "shell",
        Kind::Object {
            fields: SHELL,
            open: false,
        },
    ),
];

/// `tool.shell`, the model of a shell command line ([`crate::shell`]).
const SHELL: &[Field] = &[
    f("parsed", Kind::Bool),
    f(
        "commands",
        Kind::List(&Kind::Object {
            fields: SIMPLE_COMMAND,
            open: false,
        }),
    ),
];

const SIMPLE_COMMAND: &[Field] = &[
    f("name", Kind::Text),
    f("path", Kind::Text),
    f("args", TEXTS),
    f("env", Kind::Map),
    f(
        "redirects",
        Kind::List(&Kind::Object {
            fields: REDIRECT,
            open: false,
        }),
    ),
    f("wrappers", TEXTS),
    f("pipeline", Kind::Number),
    f("stage", Kind::Number),
    f("stages", Kind::Number),
    f("depth", Kind::Number),
    f("via", Kind::Text),
    f("cwd", Kind::Text),
];

const REDIRECT: &[Field] = &[
    f("op", Kind::Text),
    f("fd", Kind::Number),
    f("target", Kind::Text),
];

/// `issue`, as `--issue` / `issue.path` loads it (oracles' `context_issue`).
const ISSUE: &[Field] = &[
    f("id", Kind::Text),
    f("uid", Kind::Text),
    f("type", Kind::Text),
    f("status", Kind::Text),
    f("stage", Kind::Text),
    f("title", Kind::Text),
    f("path", Kind::Text),
    f("parent", Kind::Text),
    f("dependencies", TEXTS),
    f("related", TEXTS),
    f("tags", TEXTS),
    f("files", TEXTS),
    f("solution", Kind::Text),
    f("created_at", Kind::Text),
    f("updated_at", Kind::Text),
    f("closed_at", Kind::Text),
    f("frontmatter", Kind::Map),
];

const CHECKLIST_ITEM: &[Field] = &[
    f("id", Kind::Text),
    f("text", Kind::Text),
    f("state", Kind::Text),
    f("section", Kind::Text),
    f("depends_on", TEXTS),
    f("blocked_by", TEXTS),
    f("line", Kind::Number),
];

/// `checklist`, from the issue file's boxes.
const CHECKLIST: &[Field] = &[
    f("total", Kind::Number),
    f("done", Kind::Number),
    f("incomplete_count", Kind::Number),
    f("completion_rate", Kind::Number),
    f(
        "items",
        Kind::List(&Kind::Object {
            fields: CHECKLIST_ITEM,
            open: true,
        }),
    ),
];

const CHANGED_FILE: &[Field] = &[
    f("path", Kind::Text),
    f("status", Kind::Text),
    f("added", Kind::Number),
    f("removed", Kind::Number),
    f("binary", Kind::Bool),
    f("old_path", Kind::Text),
];

/// `files`, from git on issue events (or the caller).
const FILES: &[Field] = &[
    f("changed", TEXTS),
    f("changed_count", Kind::Number),
    f("lines_added", Kind::Number),
    f("lines_removed", Kind::Number),
    f(
        "details",
        Kind::List(&Kind::Object {
            fields: CHANGED_FILE,
            open: true,
        }),
    ),
];

const COMMIT: &[Field] = &[
    f("sha", Kind::Text),
    f("subject", Kind::Text),
    f("body", Kind::Text),
];

/// `git`, from git on issue events.
const GIT: &[Field] = &[
    f("trunk", Kind::Text),
    f("merge_base", Kind::Text),
    f(
        "commits",
        Kind::List(&Kind::Object {
            fields: COMMIT,
            open: true,
        }),
    ),
];

/// `turn`, on prompt and stop events.
const TURN: &[Field] = &[
    f("prompt", Kind::Text),
    f("stop_reason", Kind::Text),
    f("step_count", Kind::Number),
    f("final_message", Kind::Any),
    f("stop_hook_active", Kind::Bool),
];

/// `agent`, set by `ahp hook AGENT`.
const AGENT: &[Field] = &[f("name", Kind::Text), f("event", Kind::Text)];

/// The top level: SPEC §3's fields and what ahp adds (`checklist`, `git`,
/// `agent`).
const ROOT: &[Field] = &[
    f("event", Kind::Text),
    f("timestamp", Kind::Text),
    f("session_id", Kind::Text),
    f("work_dir", Kind::Text),
    f("environment", Kind::Text),
    f("correlation_id", Kind::Text),
    f(
        "issue",
        Kind::Object {
            fields: ISSUE,
            open: true,
        },
    ),
    f(
        "files",
        Kind::Object {
            fields: FILES,
            open: true,
        },
    ),
    f(
        "tool",
        Kind::Object {
            fields: TOOL,
            open: false,
        },
    ),
    f(
        "turn",
        Kind::Object {
            fields: TURN,
            open: true,
        },
    ),
    f("subagent", Kind::Map),
    f("raw", Kind::Map),
    f(
        "checklist",
        Kind::Object {
            fields: CHECKLIST,
            open: true,
        },
    ),
    f(
        "git",
        Kind::Object {
            fields: GIT,
            open: true,
        },
    ),
    f(
        "agent",
        Kind::Object {
            fields: AGENT,
            open: true,
        },
    ),
];

/// Payload fields the agents send that the adapters keep at the top level
/// under their own names (see tests/fixtures/agents), whatever their
/// shape. Known, so never reported; never suggested for a typo either,
/// since agents spell one thing several ways (`transcriptPath`,
/// `transcript_path`) and a near miss of one is likely another's.
const AGENT_FIELDS: &[&str] = &[
    "CLAUDE_ENV_FILE",
    "agentDescription",
    "agentDisplayName",
    "agentName",
    "agent_description",
    "agent_display_name",
    "agent_id",
    "agent_name",
    "agent_transcript_path",
    "agent_type",
    "args",
    "attachments",
    "background_tasks",
    "body",
    "compact_summary",
    "composer_mode",
    "content",
    "context",
    "context_tokens",
    "context_usage_percent",
    "context_window_size",
    "conversation_id",
    "cursor_version",
    "customInstructions",
    "custom_instructions",
    "details",
    "duration",
    "duration_ms",
    "duration_seconds",
    "edits",
    "elapsed_time",
    "error",
    "errorContext",
    "error_context",
    "error_details",
    "error_message",
    "error_type",
    "estimated_token_count",
    "execution_id",
    "exit_reason",
    "file_path",
    "final_status",
    "generation_id",
    "hookName",
    "initialPrompt",
    "initial_prompt",
    "is_background_agent",
    "is_first_compaction",
    "is_interrupt",
    "loop_count",
    "message",
    "message_count",
    "message_id",
    "messages_to_compact",
    "model",
    "model_name",
    "notification_type",
    "output",
    "permission_mode",
    "permission_suggestions",
    "reason",
    "recoverable",
    "response",
    "result_json",
    "sessionId",
    "session_crons",
    "session_duration_ms",
    "severity",
    "sink",
    "source",
    "status",
    "stop_reason",
    "subagent_name",
    "subagent_type",
    "task_description",
    "text",
    "title",
    "token_count",
    "toolInput",
    "tool_execution_count",
    "tool_output",
    "tool_result",
    "total_steps",
    "transcriptPath",
    "transcript_path",
    "trigger",
    "turn_id",
    "user_email",
    "workspace_roots",
];

/// The whole context.
pub const CONTEXT: Kind = Kind::Object {
    fields: ROOT,
    open: true,
};

pub use crate::condition::TOOL_NAME_KEY;

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The path or comparison can never hold: a typo or a mistake.
    Error,
    /// ahp does not provide the path; an agent or the caller might.
    Warning,
}

/// Something wrong with a path or with what it is compared to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathFinding {
    /// Error or warning.
    pub level: Level,
    /// What is wrong.
    pub message: String,
    /// How to fix it (a "did you mean", the known fields), if known.
    pub help: Option<String>,
}

impl PathFinding {
    fn error(message: String, help: Option<String>) -> Self {
        PathFinding {
            level: Level::Error,
            message,
            help,
        }
    }

    fn warning(message: String, help: Option<String>) -> Self {
        PathFinding {
            level: Level::Warning,
            message,
            help,
        }
    }
}

fn join(prefix: &str, seg: &str) -> String {
    if prefix.is_empty() {
        seg.to_string()
    } else {
        format!("{prefix}.{seg}")
    }
}

fn names(fields: &[Field]) -> String {
    fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// The kind at `path`, or what is wrong with it. `Kind::Any` below maps and
/// unknown-but-possible fields.
///
/// ```
/// use ahp_engine::context_shape::{resolve, Kind};
/// assert_eq!(resolve("files.changed_count"), Ok(Kind::Number));
/// assert_eq!(resolve("checklist.items.0.state"), Ok(Kind::Text));
/// assert_eq!(resolve("tool.input.anything.at.all"), Ok(Kind::Any));
/// assert!(resolve("checklist.incomplet_count").is_err());
/// ```
pub fn resolve(path: &str) -> Result<Kind, PathFinding> {
    let mut cur = CONTEXT;
    let mut walked = String::new();
    let segs: Vec<&str> = path.split('.').collect();
    for (i, seg) in segs.iter().enumerate() {
        let rest = &segs[i + 1..];
        cur = match cur {
            Kind::Map | Kind::Any => return Ok(Kind::Any),
            Kind::Object { fields, open } => match fields.iter().find(|f| f.name == *seg) {
                Some(field) => field.kind,
                None if walked.is_empty() && AGENT_FIELDS.contains(seg) => return Ok(Kind::Any),
                None => return Err(unknown_field(&walked, seg, rest, fields, open)),
            },
            Kind::List(item) => {
                if *seg != "*" && seg.parse::<usize>().is_err() {
                    let example = join(&join(&walked, "0"), seg);
                    return Err(PathFinding::error(
                        format!("`{walked}` is a list: `{seg}` is not an index into it"),
                        Some(format!(
                            "name an item by its position, e.g. `{example}`, or every item with `*`{}",
                            if walked == "files.changed" {
                                ", or test `files.changed_count`"
                            } else {
                                ""
                            }
                        )),
                    ));
                }
                *item
            }
            scalar => {
                return Err(PathFinding::error(
                    format!("`{walked}` is {}: it has no field `{seg}`", scalar.name()),
                    Some(format!("test `{walked}` itself")),
                ));
            }
        };
        walked = join(&walked, seg);
    }
    Ok(cur)
}

fn unknown_field(
    walked: &str,
    seg: &str,
    rest: &[&str],
    fields: &[Field],
    open: bool,
) -> PathFinding {
    let tail: String = rest.iter().map(|s| format!(".{s}")).collect();
    let full = format!("{}{tail}", join(walked, seg));
    if let Some(s) = did_you_mean(seg, fields.iter().map(|f| f.name)) {
        // The rest may be in the same wrong case (`TOOL.NAME`).
        let fixed = format!("{}{tail}", join(walked, s));
        let fixed = match resolve(&fixed) {
            Err(_) if resolve(&fixed.to_lowercase()).is_ok() => fixed.to_lowercase(),
            _ => fixed,
        };
        return PathFinding::error(
            format!("no event provides `{full}`"),
            Some(format!("did you mean `{fixed}`?")),
        );
    }
    let known = if walked.is_empty() {
        "known top-level fields".to_string()
    } else {
        format!("fields of `{walked}`")
    };
    if !open {
        return PathFinding::error(
            format!("no event provides `{full}`: `{walked}` has no field `{seg}`"),
            Some(format!("{known}: {}", names(fields))),
        );
    }
    // `issue.checklist.total` for `checklist.total`: the field lives
    // elsewhere than SPEC's prose suggests.
    if !walked.is_empty() {
        let moved = format!("{seg}{tail}");
        if resolve(&moved).is_ok() {
            return PathFinding::warning(
                format!("ahp does not provide `{full}`"),
                Some(format!("did you mean `{moved}`?")),
            );
        }
    }
    let frontmatter = if walked == "issue" {
        format!("; the issue file's own frontmatter fields are under `issue.frontmatter.{seg}`")
    } else {
        String::new()
    };
    PathFinding::warning(
        format!(
            "no event ahp knows provides `{full}`: it holds only if an agent or the caller's context sends it"
        ),
        Some(format!("{known}: {}{frontmatter}", names(fields))),
    )
}

/// Checks a path alone (a `{{ placeholder }}`, a truthiness test).
pub fn check_path(path: &str) -> Option<PathFinding> {
    if path == TOOL_NAME_KEY {
        return None;
    }
    resolve(path).err()
}

/// Checks a `when` clause or a Rules comparison: the path, then whether the
/// matcher can ever hold for a value of the path's kind.
///
/// ```
/// use ahp_engine::condition::Matcher;
/// use ahp_engine::context_shape::{check_clause, Level};
/// use serde_json::json;
/// let m = |v| Matcher::parse(&v).unwrap();
/// assert!(check_clause("tool", &m(json!(["Bash", "Database"]))).is_none());
/// assert!(check_clause("files.changed_count", &m(json!("> 10"))).is_none());
/// let never = check_clause("tool.input", &m(json!("shell"))).unwrap();
/// assert_eq!(never.level, Level::Error);
/// assert!(never.message.contains("never holds"), "{}", never.message);
/// assert!(check_clause("tool", &m(json!([]))).is_some());
/// assert!(check_clause("tool.name", &m(json!("> 3"))).is_some());
/// ```
pub fn check_clause(path: &str, matcher: &Matcher) -> Option<PathFinding> {
    let kind = if path == TOOL_NAME_KEY {
        Kind::Text
    } else {
        match resolve(path) {
            Ok(k) => k,
            Err(f) => return Some(f),
        }
    };
    if matches!(matcher, Matcher::AnyOf(ms) if ms.is_empty()) {
        return Some(PathFinding::error(
            format!("`{path}: []` is an empty list, which matches nothing: this never holds"),
            Some("list the values that should match, or leave the key out".into()),
        ));
    }
    if NAMES.contains(&path) && compares_with_number(matcher) {
        return Some(PathFinding::error(
            format!(
                "`{path}` is a name, never a number: compared with {matcher}, this never holds"
            ),
            Some(format!(
                "write the name itself (`{path}: shell`), a list of names, or a `~regex`"
            )),
        ));
    }
    let why = never_holds(kind, matcher)?;
    Some(PathFinding::error(
        format!(
            "`{path}` is {}: compared with {matcher}, this never holds",
            kind.name()
        ),
        Some(why),
    ))
}

/// The shared name of an agent's own tool name, when some agent's table
/// maps it to another one (`Bash` → `shell`); the adapters know the
/// tables, the loader and the oracles get this function from them (see
/// [`check_tool_name`]). A prefix rule (`mcp__…` → `mcp`) maps every
/// name that starts with its prefix, whatever follows.
pub type SharedToolName = fn(&str) -> Option<&'static str>;

/// The path of ahp's shared tool name.
pub const TOOL_NAME_PATH: &str = "tool.name";

/// `tool.name == 'Bash'` never holds and `tool.name != 'Bash'` always does:
/// `tool.name` is ahp's shared name (`shell`), and the agent's own is
/// `tool.raw_name`. An error with the ways to say it, for a `tool.name`
/// clause whose value `shared` maps to another name (a list is checked
/// item by item by the caller, for the item's position). A `~regex` that
/// only matches such names (`~^Bash$`, `~^mcp__github`) is the same
/// mistake.
///
/// ```
/// use ahp_engine::condition::Matcher;
/// use ahp_engine::context_shape::check_tool_name;
/// use serde_json::json;
/// let shared = |n: &str| (n == "Bash").then_some("shell");
/// let f = check_tool_name(&Matcher::parse(&json!("Bash")).unwrap(), shared).unwrap();
/// assert!(f.message.contains("this never holds"));
/// assert!(f.help.unwrap().contains("`tool: Bash`"));
/// assert!(check_tool_name(&Matcher::parse(&json!("shell")).unwrap(), shared).is_none());
/// let f = check_tool_name(&Matcher::parse(&json!("~^Bash$")).unwrap(), shared).unwrap();
/// assert!(f.message.contains("this never holds"));
/// ```
pub fn check_tool_name(matcher: &Matcher, shared: SharedToolName) -> Option<PathFinding> {
    let (name, outcome) = match matcher {
        Matcher::Equals(Value::String(s)) | Matcher::Compare(CmpOp::Eq, Value::String(s)) => {
            (s, "never holds")
        }
        Matcher::Compare(CmpOp::Ne, Value::String(s)) => (s, "holds for every tool"),
        Matcher::Regex(p) => return check_tool_name_pattern(p, "~", "never holds", shared),
        Matcher::NotRegex(p) => {
            return check_tool_name_pattern(p, "!~", "holds for every tool", shared);
        }
        _ => return None,
    };
    // `"Bash "` never equals `shell` either.
    let ours = shared(name.trim()).filter(|ours| ours != name)?;
    Some(PathFinding::error(
        format!(
            "`{TOOL_NAME_PATH}` is ahp's shared name of the tool, and an agent's `{name}` is `{ours}` there: this {outcome}"
        ),
        Some(format!(
            "write `tool: {name}` (the agent's name or ahp's, any case), `{TOOL_NAME_PATH}: {ours}`, or `tool.raw_name: {name}` (only the agent's name)"
        )),
    ))
}

/// [`check_tool_name`] of a `~regex` (or `!~regex`) whose matches are a
/// finite set of literals anchored at the start: `~^Bash$` and `~^(Edit|Write)$`
/// as `Bash` is, and `~^mcp__github` when every name that starts so has a
/// shared name that does not (the agents' `mcp__SERVER__TOOL` names are
/// `mcp`). That every name with a prefix is renamed is asked of `shared`
/// with the prefix and a character no tool name holds. A pattern that also
/// matches some name `tool.name` can hold (`~^(shell|Bash)$`) passes.
fn check_tool_name_pattern(
    pattern: &Pattern,
    op: &str,
    outcome: &str,
    shared: SharedToolName,
) -> Option<PathFinding> {
    let (words, start, end) = pattern.exact_literals()?;
    if !start || words.is_empty() {
        return None;
    }
    let mut theirs: Vec<(&str, &str)> = Vec::new();
    for word in words {
        let word = std::str::from_utf8(word).ok()?;
        let ours = if end {
            shared(word).filter(|ours| *ours != word)
        } else {
            shared(&format!("{word}\u{1}")).filter(|ours| !ours.starts_with(word))
        }?;
        if !theirs.iter().any(|(w, _)| w.eq_ignore_ascii_case(word)) {
            theirs.push((word, ours));
        }
    }
    let ours = theirs.first().map(|(_, ours)| *ours)?;
    let tail = if end { "" } else { "…" };
    let listed: Vec<String> = theirs
        .iter()
        .take(3)
        .map(|(w, o)| format!("`{w}{tail}` is `{o}`"))
        .collect();
    let source = pattern.as_str();
    Some(PathFinding::error(
        format!(
            "`{TOOL_NAME_PATH}` is ahp's shared name of the tool, and an agent's {} there: `{op}{source}` matches no name `{TOOL_NAME_PATH}` holds, so this {outcome}",
            listed.join(", ")
        ),
        Some(format!(
            "write `tool: \"{op}{source}\"` (matched against the agent's name and ahp's), `tool.raw_name: \"{op}{source}\"` (only the agent's name), or `{TOOL_NAME_PATH}: {ours}`"
        )),
    ))
}

/// Why `matcher` can never hold for a value of `kind`, if it cannot.
fn never_holds(kind: Kind, matcher: &Matcher) -> Option<String> {
    let fits = |what: &str| Some(what.to_string());
    match (kind, matcher) {
        (Kind::Any | Kind::Text, _) => None,
        (_, Matcher::AnyOf(ms)) => {
            let whys: Vec<String> = ms
                .iter()
                .map(|m| never_holds(kind, m))
                .collect::<Option<_>>()?;
            whys.into_iter().next()
        }
        (_, Matcher::Regex(_) | Matcher::NotRegex(_)) => None,
        (_, Matcher::Compare(CmpOp::Ne, _)) => None,
        (Kind::Object { fields, .. }, Matcher::Equals(v) | Matcher::Compare(_, v))
            if !v.is_null() =>
        {
            let hint = fields
                .iter()
                .find(|f| f.name == "name")
                .map(|_| " (for the tool's name, write `tool` or `tool.name`)")
                .unwrap_or_default();
            fits(&format!(
                "an object never equals or compares with a value: test one of its fields ({}){hint}",
                names(fields)
            ))
        }
        (Kind::Map, Matcher::Equals(v) | Matcher::Compare(_, v)) if !v.is_null() => fits(
            "an object never equals or compares with a value: test one of its fields (`path.field`)",
        ),
        (Kind::List(_), Matcher::Compare(..)) => fits(
            "a list never compares with a value; equality holds when any item equals (use a `_count` field for sizes)",
        ),
        (Kind::List(item), Matcher::Equals(_)) => never_holds(*item, matcher),
        (Kind::Number, Matcher::Equals(v) | Matcher::Compare(_, v))
            if !is_numeric(v) && !v.is_null() =>
        {
            fits("write a number, e.g. `> 10` or `3`")
        }
        (Kind::Bool, Matcher::Equals(v) | Matcher::Compare(_, v))
            if !v.is_boolean() && !v.is_null() =>
        {
            fits("write `true` or `false` without quotes")
        }
        _ => None,
    }
}

/// Paths whose value is a name (of a tool, an agent, an event), never a
/// number: an ordering comparison with a number never holds for them.
const NAMES: &[&str] = &[
    TOOL_NAME_KEY,
    TOOL_NAME_PATH,
    "tool.raw_name",
    "event",
    "agent.name",
    "agent.event",
];

/// Whether `m` orders by a number (`> 3`), alone or in every item of a list.
fn compares_with_number(m: &Matcher) -> bool {
    match m {
        Matcher::Compare(CmpOp::Gt | CmpOp::Ge | CmpOp::Lt | CmpOp::Le, v) => is_numeric(v),
        Matcher::AnyOf(ms) => !ms.is_empty() && ms.iter().all(compares_with_number),
        _ => false,
    }
}

/// A `when: {event: …}` value of an entry of `event`: the context holds
/// the canonical name (`pre-tool-use`), so an alias (`PreToolUse`) never
/// equals it, and another event never holds under this entry's event.
///
/// ```
/// use ahp_engine::{condition::Matcher, context_shape::check_event_value, Event};
/// use serde_json::json;
/// let m = |v| Matcher::parse(&v).unwrap();
/// let f = check_event_value(&m(json!("PreToolUse")), Event::PreToolUse).unwrap();
/// assert!(f.help.unwrap().contains("`event: pre-tool-use`"));
/// assert!(check_event_value(&m(json!("post-tool-use")), Event::PreToolUse).is_some());
/// assert!(check_event_value(&m(json!("pre-tool-use")), Event::PreToolUse).is_none());
/// ```
pub fn check_event_value(matcher: &Matcher, event: Event) -> Option<PathFinding> {
    let names: Vec<&str> = match matcher {
        Matcher::Equals(Value::String(s)) | Matcher::Compare(CmpOp::Eq, Value::String(s)) => {
            vec![s.as_str()]
        }
        Matcher::AnyOf(ms) => ms
            .iter()
            .map(|m| match m {
                Matcher::Equals(Value::String(s)) => Some(s.as_str()),
                _ => None,
            })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let holds = names.iter().any(|n| *n == event.as_str());
    if holds {
        return None;
    }
    let alias = names.iter().find_map(|n| {
        Event::parse(n)
            .ok()
            .filter(|e| e.as_str() != *n)
            .map(|e| (*n, e))
    });
    let help = match alias {
        Some((n, e)) => format!(
            "the context holds the canonical name: `{n}` is `{e}` there; write `event: {e}`, or leave the key out (the entry's event already decides when it runs)"
        ),
        None => "leave the key out, or put the entry under the event it is for".to_string(),
    };
    Some(PathFinding::error(
        format!(
            "this entry runs on {event}, where `event` is `{event}`: compared with {matcher}, this never holds"
        ),
        Some(help),
    ))
}

fn is_numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => s.trim().parse::<f64>().is_ok_and(f64::is_finite),
        _ => false,
    }
}

/// Whether `event` can provide `path` at all. Only the tool call is tied to
/// events: adapters set it for tool events alone, while an issue (and its
/// checklist) can come with any event that names one.
///
/// ```
/// use ahp_engine::{context_shape::check_event, Event};
/// assert!(check_event("tool.input.command", Event::PreToolUse).is_none());
/// assert!(check_event("tool.name", Event::PreIssueSubmit).is_some());
/// assert!(check_event("checklist.total", Event::PreToolUse).is_none());
/// ```
pub fn check_event(path: &str, event: Event) -> Option<PathFinding> {
    let root = path.split('.').next().unwrap_or_default();
    let tool_event = matches!(
        event,
        Event::PreToolUse | Event::PostToolUse | Event::PostToolUseFailure
    );
    if root == "tool" && !tool_event {
        return Some(PathFinding::warning(
            format!(
                "{event} carries no tool call, so `{path}` holds only if the caller's context sends one"
            ),
            Some(
                "tool fields are set on pre-tool-use, post-tool-use and post-tool-use-failure"
                    .into(),
            ),
        ));
    }
    ((root == "files" || root == "git") && !event.is_issue()).then(|| {
        PathFinding::warning(
            format!("ahp computes `{root}` only for issue events, so on {event} `{path}` holds only if the caller's context sends it"),
            Some("use it on pre-issue-* / post-issue-* entries, or FileChangeLimiter on tool calls".into()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Matcher {
        Matcher::parse(&v).unwrap()
    }

    #[test]
    fn known_paths_resolve() {
        for p in [
            "event",
            "tool.name",
            "tool.raw_name",
            "tool.input.command",
            "tool.response.stdout",
            "issue.type",
            "issue.frontmatter.sprint",
            "issue.tags.0",
            "checklist.incomplete_count",
            "checklist.items.3.state",
            "files.changed.0",
            "files.details.0.status",
            "git.commits.0.subject",
            "turn.final_message.content",
            "raw.anything",
            "subagent.name",
            "agent.name",
        ] {
            assert!(resolve(p).is_ok(), "{p}: {:?}", resolve(p));
        }
    }

    #[test]
    fn typos_are_errors_with_suggestions() {
        let e = resolve("checklist.incomplet_count").unwrap_err();
        assert_eq!(e.level, Level::Error);
        assert_eq!(
            e.help.as_deref(),
            Some("did you mean `checklist.incomplete_count`?")
        );
        let e = resolve("isue.type").unwrap_err();
        assert_eq!(e.help.as_deref(), Some("did you mean `issue.type`?"));
        let e = resolve("Tool.name").unwrap_err();
        assert_eq!(e.level, Level::Error);
        // A path in the wrong case is suggested whole in the right one.
        let e = resolve("TOOL.NAME").unwrap_err();
        assert_eq!(e.help.as_deref(), Some("did you mean `tool.name`?"));
        let e = resolve("ISSUE.type").unwrap_err();
        assert_eq!(e.help.as_deref(), Some("did you mean `issue.type`?"));
        // Closed: anything unknown is an error, even far from every name.
        let e = resolve("tool.command").unwrap_err();
        assert_eq!(e.level, Level::Error);
        assert!(e.help.unwrap().contains("name, raw_name, input"));
        let e = resolve("tool.name.first").unwrap_err();
        assert_eq!(e.level, Level::Error);
        let e = resolve("files.changed.foo").unwrap_err();
        assert!(e.help.unwrap().contains("files.changed_count"));
    }

    #[test]
    fn unknown_names_in_open_objects_are_warnings() {
        let e = resolve("team").unwrap_err();
        assert_eq!(e.level, Level::Warning);
        let e = resolve("issue.sprint").unwrap_err();
        assert_eq!(e.level, Level::Warning);
        assert!(e.help.unwrap().contains("issue.frontmatter.sprint"));
        let e = resolve("issue.checklist.total").unwrap_err();
        assert_eq!(e.help.as_deref(), Some("did you mean `checklist.total`?"));
    }

    #[test]
    fn comparisons_that_never_hold() {
        assert!(check_clause("tool.input", &m(json!("shell"))).is_some());
        assert!(check_clause("checklist", &m(json!("> 0"))).is_some());
        assert!(check_clause("files.changed", &m(json!("> 3"))).is_some());
        assert!(check_clause("checklist.items", &m(json!("done"))).is_some());
        assert!(check_clause("files.changed_count", &m(json!("many"))).is_some());
        assert!(check_clause("turn.stop_hook_active", &m(json!("yes"))).is_some());
        assert!(check_clause("checklist.total", &m(json!(["> 3", "many"]))).is_none());
        assert!(check_clause("checklist.total", &m(json!(["zero", "many"]))).is_some());
        // These can hold.
        for (p, v) in [
            ("files.changed", json!("src/a.rs")),
            ("files.changed_count", json!("> 10")),
            ("files.changed_count", json!("10")),
            ("tool.input", json!("~rm -rf")),
            ("tool.input", json!("!= x")),
            ("issue.parent", json!(null)),
            ("tool", json!("Bash")),
            ("turn.stop_hook_active", json!(true)),
        ] {
            assert!(check_clause(p, &m(v.clone())).is_none(), "{p}: {v}");
        }
    }
}
