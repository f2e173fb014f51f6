//! The hook context: everything oracles see about an event (SPEC §3).
//!
//! Known fields are typed; anything else a caller sends is kept in `extra`
//! and is still reachable by dotted path, so a `when` condition or a Rules
//! oracle can test fields ahp does not know about. The paths ahp's events
//! provide, and their kinds, are described in [`crate::context_shape`].

use crate::Event;
use crate::signal::{ModOp, Modification};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The tool call of a tool event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name (normalized by adapters: shell, write, edit, read,
    /// fetch, mcp; the agent's own name stays in `raw_name`).
    #[serde(default)]
    pub name: String,
    /// The agent's own name for the tool (e.g. `Bash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_name: Option<String>,
    /// The tool's input, as the agent sent it.
    #[serde(default)]
    pub input: Value,
    /// The file the tool acts on, whatever the agent calls the field
    /// (`file_path`, `path`, `filePath`, `notebook_path`): set by adapters
    /// so that `when: {tool.path: …}` means the same in every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The folder the agent runs this call in, where it says so apart from
    /// its session's working directory (Gemini CLI's `dir_path`, Cursor's
    /// shell `cwd`): a shell call's relative paths are read from it. The
    /// project is still found from the session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
    /// The agent's id for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_id: Option<String>,
    /// For post events: what the tool returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// For a shell tool: the model of its command line (set at dispatch,
    /// see [`crate::shell`]): `tool.shell.commands.*.name`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<crate::shell::Shell>,
}

impl ToolCall {
    /// The command line of a shell tool call: `input.command` (a string,
    /// or a list of words joined with spaces) or `input.cmd`.
    ///
    /// ```
    /// use ahp_engine::ToolCall;
    /// let t = ToolCall { input: serde_json::json!({"command": ["bash", "-lc", "ls -la"]}), ..ToolCall::default() };
    /// assert_eq!(t.command_line().as_deref(), Some("bash -lc 'ls -la'"));
    /// ```
    pub fn command_line(&self) -> Option<String> {
        ["command", "cmd"]
            .iter()
            .find_map(|k| match self.input.get(*k)? {
                Value::String(s) => Some(s.clone()),
                // An argv (Codex's exec form): each word quoted, so that the
                // line parses back into the same words.
                Value::Array(parts) => Some(
                    parts
                        .iter()
                        .map(|p| match p {
                            Value::String(s) => crate::shell::quote(s),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
    }

    /// Sets [`ToolCall::shell`] from the command line of a `shell` tool
    /// call run in its own [`ToolCall::work_dir`], else in `work_dir` (a
    /// no-op for other tools, or when it is set already). The folder is
    /// the payload's, never one the tool input names: the model writes the
    /// input, and an agent that ignores an unknown `cwd` key runs the
    /// command where it always does.
    ///
    /// ```
    /// use ahp_engine::ToolCall;
    /// let mut t = ToolCall { name: "shell".into(), input: serde_json::json!({"command": "sudo rm -rf /"}), ..ToolCall::default() };
    /// t.model_shell(Some("/srv/app"));
    /// assert_eq!(t.shell.unwrap().commands[0].name, "rm");
    /// ```
    pub fn model_shell(&mut self, work_dir: Option<&str>) {
        if self.shell.is_none()
            && self.name == "shell"
            && let Some(line) = self.command_line()
        {
            self.shell = Some(crate::shell::model_in(
                &line,
                None,
                work_dir,
                self.work_dir.as_deref(),
            ));
        }
    }
}

/// Changed files of the work in progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Files {
    /// Paths relative to the project root.
    #[serde(default)]
    pub changed: Vec<String>,
    /// Number of changed files (defaults to `changed.len()`).
    #[serde(default)]
    pub changed_count: usize,
    /// Anything else (lines added/removed, batches, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Agent turn and stop fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The user's prompt, for pre-agent-turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Why the agent stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Steps taken in the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_count: Option<u64>,
    /// The agent's last message (a string, or the agent's message object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_message: Option<Value>,
    /// True when the agent already continues because of a stop hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_hook_active: Option<bool>,
    /// Anything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What ahp knows about an event. Build one from JSON (`serde_json`) or
/// with struct update syntax.
///
/// ```
/// use ahp_engine::HookContext;
/// let ctx: HookContext = serde_json::from_str(
///     r#"{"tool": {"name": "Bash", "input": {"command": "rm -rf /"}}, "team": "core"}"#,
/// ).unwrap();
/// assert_eq!(ctx.lookup("tool.input.command").unwrap().as_str(), Some("rm -rf /"));
/// assert_eq!(ctx.lookup("team").unwrap().as_str(), Some("core"));
/// assert!(ctx.lookup("tool.input.missing").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookContext {
    /// The event (set by the engine at dispatch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Event>,
    /// When the event happened (RFC 3339); now, when not given.
    #[serde(default = "Utc::now")]
    pub timestamp: DateTime<Utc>,
    /// The agent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The working directory of the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
    /// development, staging, production, sandbox, … (from settings when not
    /// given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// Ties the records of one dispatch together (generated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The issue being worked on: id, type, status, stage, title, path,
    /// frontmatter, checklist, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<Value>,
    /// Changed files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Files>,
    /// The tool call, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolCall>,
    /// Turn and stop fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
    /// Subagent fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<Value>,
    /// The original payload, as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
    /// Every other top-level field (e.g. `checklist`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for HookContext {
    fn default() -> Self {
        HookContext {
            event: None,
            timestamp: Utc::now(),
            session_id: None,
            work_dir: None,
            environment: None,
            correlation_id: None,
            issue: None,
            files: None,
            tool: None,
            turn: None,
            subagent: None,
            raw: None,
            extra: Map::new(),
        }
    }
}

/// A modification that cannot be applied to the context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot apply modification to `{target}`: {reason}")]
pub struct ContextError {
    /// The modification's target path.
    pub target: String,
    /// What went wrong.
    pub reason: String,
}

fn navigate<'a>(mut v: &'a Value, segs: &[&str]) -> Option<&'a Value> {
    for seg in segs {
        v = match v {
            Value::Object(m) => m.get(*seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

fn navigate_cow<'a>(v: Cow<'a, Value>, segs: &[&str]) -> Option<Cow<'a, Value>> {
    if let Some(star) = segs.iter().position(|s| *s == "*") {
        // `list.*.field`: the field of every item, as one list (lists of
        // lists flattened one level), so that a matcher tests any of them.
        let list = navigate(&v, &segs[..star])?.as_array()?;
        let mut out = Vec::new();
        for item in list {
            match navigate_cow(Cow::Borrowed(item), &segs[star + 1..]).map(Cow::into_owned) {
                Some(Value::Array(items)) => out.extend(items),
                Some(other) => out.push(other),
                None => {}
            }
        }
        return Some(Cow::Owned(Value::Array(out)));
    }
    match v {
        Cow::Borrowed(b) => navigate(b, segs).map(Cow::Borrowed),
        Cow::Owned(o) => navigate(&o, segs).cloned().map(Cow::Owned),
    }
}

fn owned<T: Serialize>(t: &T) -> Option<Cow<'static, Value>> {
    serde_json::to_value(t).ok().map(Cow::Owned)
}

impl HookContext {
    /// A context for `event` with the current time and nothing else.
    pub fn for_event(event: Event) -> Self {
        HookContext {
            event: Some(event),
            ..HookContext::default()
        }
    }

    /// The value at a dotted path (`tool.input.command`, `files.changed.0`),
    /// or `None` when any segment is missing. Never fails. A `*` segment
    /// takes every item of a list: `tool.shell.commands.*.name` is the list
    /// of the command names.
    pub fn lookup(&self, path: &str) -> Option<Cow<'_, Value>> {
        let segs: Vec<&str> = path.split('.').collect();
        let (first, rest) = segs.split_first()?;
        let root: Cow<'_, Value> = match *first {
            "event" => Cow::Owned(Value::String(self.event?.as_str().to_string())),
            "timestamp" => Cow::Owned(Value::String(self.timestamp.to_rfc3339())),
            "session_id" => Cow::Owned(Value::String(self.session_id.clone()?)),
            "work_dir" => Cow::Owned(Value::String(self.work_dir.clone()?)),
            "environment" => Cow::Owned(Value::String(self.environment.clone()?)),
            "correlation_id" => Cow::Owned(Value::String(self.correlation_id.clone()?)),
            "issue" => Cow::Borrowed(self.issue.as_ref()?),
            "subagent" => Cow::Borrowed(self.subagent.as_ref()?),
            "raw" => Cow::Borrowed(self.raw.as_ref()?),
            "tool" => {
                // The hot path of pre-tool-use conditions: borrow, no copy.
                let tool = self.tool.as_ref()?;
                return match rest.split_first() {
                    Some((&"input", r)) => navigate_cow(Cow::Borrowed(&tool.input), r),
                    Some((&"response", r)) => {
                        navigate_cow(Cow::Borrowed(tool.response.as_ref()?), r)
                    }
                    Some((&"name", [])) => Some(Cow::Owned(Value::String(tool.name.clone()))),
                    _ => navigate_cow(owned(tool)?, rest),
                };
            }
            "files" => owned(self.files.as_ref()?)?,
            "turn" => owned(self.turn.as_ref()?)?,
            other => Cow::Borrowed(self.extra.get(other)?),
        };
        navigate_cow(root, rest)
    }

    /// The whole context as one JSON value (what `ahp run` receives and what
    /// script hooks are given).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Applies one modification. Targets under `tool.input` are changed in
    /// place; anything else goes through the JSON form, so every path a
    /// condition can read can also be written. A modification that fails
    /// changes nothing; `remove` of a path that does not exist is a no-op.
    pub fn apply(&mut self, m: &Modification) -> Result<(), ContextError> {
        let err = |reason: String| ContextError {
            target: m.target.clone(),
            reason,
        };
        if m.target.is_empty() {
            return Err(err("empty target".into()));
        }
        let segs: Vec<&str> = m.target.split('.').collect();
        if let (Some(tool), ["tool", "input", rest @ ..]) = (self.tool.as_mut(), segs.as_slice()) {
            return apply_at(&mut tool.input, rest, m).map_err(err);
        }
        let mut whole = serde_json::to_value(&*self).map_err(|e| err(e.to_string()))?;
        apply_at(&mut whole, &segs, m).map_err(err)?;
        *self = serde_json::from_value(whole).map_err(|e| err(e.to_string()))?;
        Ok(())
    }
}

/// Deep merge: objects merge key by key, everything else replaces.
pub fn deep_merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => deep_merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn apply_at(root: &mut Value, segs: &[&str], m: &Modification) -> Result<(), String> {
    // Checked before anything is touched: a modification that fails must
    // leave no trace (no parents created on the way to the error).
    let value = match m.op {
        ModOp::Remove => return remove_at(root, segs),
        ModOp::Set | ModOp::Merge => m
            .value
            .clone()
            .ok_or_else(|| format!("`{}` needs a value", format!("{:?}", m.op).to_lowercase()))?,
    };
    let Some((last, parents)) = segs.split_last() else {
        match m.op {
            ModOp::Merge => deep_merge(root, value),
            _ => *root = value,
        }
        return Ok(());
    };
    let mut cur = root;
    for seg in parents {
        if cur.is_null() {
            *cur = Value::Object(Map::new());
        }
        cur = match cur {
            Value::Object(map) => map
                .entry(seg.to_string())
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(a) => {
                let i = list_index(seg, a.len())?;
                &mut a[i]
            }
            _ => return Err(format!("`{seg}` is inside a value that is not an object")),
        };
    }
    // Objects are only created where nothing was (or null), and below a
    // created object every later step succeeds: so an error above came
    // before any change. What is left cannot fail once `cur` is an object.
    if cur.is_null() {
        *cur = Value::Object(Map::new());
    }
    match cur {
        Value::Object(map) if m.op == ModOp::Set => {
            map.insert(last.to_string(), value);
        }
        Value::Object(map) => {
            let slot = map.entry(last.to_string()).or_insert(Value::Null);
            deep_merge(slot, value);
        }
        Value::Array(a) => {
            let i = list_index(last, a.len())?;
            let slot = &mut a[i];
            match m.op {
                ModOp::Merge => deep_merge(slot, value),
                _ => *slot = value,
            }
        }
        _ => return Err(format!("`{last}` is inside a value that is not an object")),
    }
    Ok(())
}

/// The position `seg` names in a list of `len` items.
fn list_index(seg: &str, len: usize) -> Result<usize, String> {
    let i: usize = seg
        .parse()
        .map_err(|_| format!("`{seg}` is not an index into a list"))?;
    if i < len {
        Ok(i)
    } else {
        Err(format!("index {i} out of range (length {len})"))
    }
}

/// `remove`: deletes the target; a path that does not exist (a missing key
/// or null on the way) is a no-op and creates nothing.
fn remove_at(root: &mut Value, segs: &[&str]) -> Result<(), String> {
    let Some((last, parents)) = segs.split_last() else {
        *root = Value::Null;
        return Ok(());
    };
    let mut cur = root;
    for seg in parents {
        cur = match cur {
            Value::Object(map) => match map.get_mut(*seg) {
                Some(v) => v,
                None => return Ok(()),
            },
            Value::Array(a) => {
                let i = list_index(seg, a.len())?;
                &mut a[i]
            }
            Value::Null => return Ok(()),
            _ => return Err(format!("`{seg}` is inside a value that is not an object")),
        };
    }
    match cur {
        Value::Object(map) => {
            map.remove(*last);
        }
        Value::Array(a) => {
            let i = list_index(last, a.len())?;
            a.remove(i);
        }
        Value::Null => {}
        _ => return Err(format!("`{last}` is inside a value that is not an object")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> HookContext {
        serde_json::from_value(json!({
            "event": "PreToolUse",
            "session_id": "s1",
            "tool": {"name": "Bash", "input": {"command": "ls", "args": ["-l"]}},
            "files": {"changed": ["a.rs", "b.rs"], "changed_count": 2},
            "checklist": {"incomplete_count": 3},
        }))
        .unwrap()
    }

    #[test]
    fn lookup_reaches_typed_and_extra_fields() {
        let c = ctx();
        assert_eq!(c.lookup("event").unwrap().as_str(), Some("pre-tool-use"));
        assert_eq!(c.lookup("tool.name").unwrap().as_str(), Some("Bash"));
        assert_eq!(c.lookup("tool.input.args.0").unwrap().as_str(), Some("-l"));
        assert_eq!(c.lookup("files.changed_count").unwrap().as_u64(), Some(2));
        assert_eq!(c.lookup("files.changed.1").unwrap().as_str(), Some("b.rs"));
        assert_eq!(
            c.lookup("checklist.incomplete_count").unwrap().as_u64(),
            Some(3)
        );
        assert!(c.lookup("issue.id").is_none());
        assert!(c.lookup("tool.input.args.9").is_none());
        assert!(c.lookup("").is_none());
    }

    #[test]
    fn modifications_apply_in_place_and_through_json() {
        let mut c = ctx();
        c.apply(&Modification::set("tool.input.command", json!("ls -a")))
            .unwrap();
        c.apply(&Modification::merge("tool.input", json!({"timeout": 5})))
            .unwrap();
        c.apply(&Modification::set(
            "files.batches",
            json!([["a.rs"], ["b.rs"]]),
        ))
        .unwrap();
        c.apply(&Modification::set("environment", json!("staging")))
            .unwrap();
        c.apply(&Modification::remove("tool.input.args")).unwrap();
        assert_eq!(
            c.tool.as_ref().unwrap().input,
            json!({"command": "ls -a", "timeout": 5})
        );
        assert_eq!(
            c.lookup("files.batches.1.0").unwrap().as_str(),
            Some("b.rs")
        );
        assert_eq!(c.environment.as_deref(), Some("staging"));
        let bad = c
            .apply(&Modification::set("event", json!("nope")))
            .unwrap_err();
        assert!(bad.to_string().contains("event"), "{bad}");
    }
}
