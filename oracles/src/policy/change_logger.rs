//! The `ChangeLogger` oracle (SPEC §5): after a tool call (`post-tool-use`)
//! it records what changed — the tool, the files, the size of the change —
//! as an **aid** signal of type `change` whose payload carries the change
//! as structured `data`, so the signal log holds one queryable record per
//! change (`ahp signals query --source ChangeLogger`).
//!
//! What it understands of a tool's input (by its keys, so it works for any
//! agent's tool names):
//!
//! * a file path (`file_path`, `path`, `filePath`, `notebook_path`,
//!   `target_file`, `filename`) with `content`/`contents`/`file_text` — a
//!   **write**: the lines and bytes written;
//! * a path with `old_string`/`new_string` (also `old_str`/`new_str`,
//!   `oldText`/`newText`), or `edits: [{old_string, new_string}]`, or a
//!   notebook's `new_source` — an **edit**: lines and bytes removed and
//!   added;
//! * a patch (a unified diff, or an `*** Begin Patch` block, in any string
//!   of the input) — each file of the patch with its `+`/`-` line counts;
//! * a `command` — a **command**: its text and exit code (from the tool's
//!   response: `exit_code`, `exitCode` or `returncode`).
//!
//! A tool call with none of these (a read, a search) changed nothing and
//! says nothing.
//!
//! ```yaml
//! hooks:
//!   post-tool-use:
//!     - oracle: ChangeLogger
//!       config:
//!         log_level: info      # info (default) | debug
//!         fields: [tool, files, lines, bytes]   # default: by log_level
//! ```
//!
//! **Fields** of `data`: `tool`, `files` (paths), `lines` (`lines_added`,
//! `lines_removed`), `bytes` (`bytes_added`, `bytes_removed`),
//! `operations` (one entry per file: `path`, `op`, and its counts),
//! `command` (the command text, at most 500 characters) and `exit_code`.
//! `info` records tool, files, lines, bytes and exit_code; `debug` adds
//! operations and command. `fields` replaces the level's choice.
//!
//! ```
//! use ahp_oracles::policy::change_logger::ChangeLogger;
//! use ahp_engine::{OracleConfig, Payload};
//! use serde_json::json;
//!
//! let logger = ChangeLogger::from_config(OracleConfig::empty()).unwrap();
//! let input = json!({"file_path": "src/a.rs", "old_string": "a\nb\n", "new_string": "a\nb\nc\nd\n"});
//! let s = logger.record("Edit", &input, None).unwrap();
//! assert_eq!(s.payload.summary(), "Edit src/a.rs: +2 -0 lines (+4 bytes)");
//! let Payload::Aid(aid) = &s.payload else { unreachable!() };
//! let data = aid.data.as_ref().unwrap();
//! assert_eq!(data["lines_added"], 2);
//! assert_eq!(data["files"], json!(["src/a.rs"]));
//! assert!(logger.record("Read", &json!({"file_path": "src/a.rs"}), None).is_none());
//! ```

use crate::template::truncate;
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Signal,
    async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The signal type of every ChangeLogger signal.
pub const SIGNAL_TYPE: &str = "change";

/// ChangeLogger's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeLoggerConfig {
    /// `info` (default) or `debug` (adds operations and the command).
    #[serde(default)]
    pub log_level: LogLevel,
    /// The fields recorded, replacing the level's choice.
    pub fields: Option<Vec<Field>>,
}

/// How much ChangeLogger records by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// tool, files, lines, bytes, exit_code.
    #[default]
    Info,
    /// Every field.
    Debug,
}

/// One field of a change record, in the order of [`FIELDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// The tool's name.
    Tool,
    /// The files it touched.
    Files,
    /// Lines added and removed.
    Lines,
    /// Bytes written.
    Bytes,
    /// What it did to each file.
    Operations,
    /// The shell command.
    Command,
    /// The command's exit code.
    ExitCode,
}

/// Every field `data` can carry.
pub const FIELDS: [&str; 7] = [
    "tool",
    "files",
    "lines",
    "bytes",
    "operations",
    "command",
    "exit_code",
];

const INFO_FIELDS: [&str; 5] = ["tool", "files", "lines", "bytes", "exit_code"];

/// How many characters of a command are recorded.
const MAX_COMMAND: usize = 500;

const PATH_KEYS: [&str; 6] = [
    "file_path",
    "path",
    "filePath",
    "notebook_path",
    "target_file",
    "filename",
];

/// One file's part of a change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operation {
    /// The file.
    pub path: String,
    /// `write`, `edit`, `add`, `update`, `delete`, `move` or `patch`.
    pub op: String,
    /// Lines added.
    pub lines_added: u64,
    /// Lines removed.
    pub lines_removed: u64,
    /// Bytes added (written).
    pub bytes_added: u64,
    /// Bytes removed (replaced).
    pub bytes_removed: u64,
}

/// Records what a tool call changed. See the [module
/// documentation](self).
#[derive(Debug, Clone)]
pub struct ChangeLogger {
    fields: Vec<&'static str>,
}

impl ChangeLogger {
    /// Builds the logger from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::policy::change_logger::ChangeLogger;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let err = ChangeLogger::from_config(OracleConfig::new(&json!({"log_level": "verbose"}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("log_level"));
    /// let err = ChangeLogger::from_config(OracleConfig::new(&json!({"fields": ["tool", "line"]}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("fields.1"));
    /// assert!(err.message.contains("did you mean `lines`"), "{err}");
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: ChangeLoggerConfig = cfg.parse()?;
        let fields: Vec<&'static str> = match c.fields {
            None if c.log_level == LogLevel::Debug => FIELDS.to_vec(),
            None => INFO_FIELDS.to_vec(),
            Some(given) => {
                let mut out = Vec::new();
                for f in given {
                    let name = FIELDS[f as usize];
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
                out
            }
        };
        Ok(ChangeLogger { fields })
    }

    /// The aid signal for one tool call, or `None` when it changed nothing.
    pub fn record(&self, tool: &str, input: &Value, response: Option<&Value>) -> Option<Signal> {
        let ops = operations(input);
        let command = input
            .get("command")
            .and_then(|c| match c {
                Value::String(s) => Some(s.clone()),
                Value::Array(parts) => Some(
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
            .filter(|c| !c.trim().is_empty());
        if ops.is_empty() && command.is_none() {
            return None;
        }
        let exit_code = response.and_then(|r| {
            ["exit_code", "exitCode", "returncode"]
                .iter()
                .find_map(|k| r.get(*k).and_then(Value::as_i64))
        });
        let files: Vec<String> = {
            let mut f: Vec<String> = Vec::new();
            for o in &ops {
                if !f.contains(&o.path) {
                    f.push(o.path.clone());
                }
            }
            f
        };
        let added: u64 = ops.iter().map(|o| o.lines_added).sum();
        let removed: u64 = ops.iter().map(|o| o.lines_removed).sum();
        let bytes_added: u64 = ops.iter().map(|o| o.bytes_added).sum();
        let bytes_removed: u64 = ops.iter().map(|o| o.bytes_removed).sum();

        let summary = if ops.is_empty() {
            let cmd = command.as_deref().unwrap_or_default();
            let shown = truncate(cmd.lines().next().unwrap_or_default(), 120);
            match exit_code {
                Some(code) => format!("{tool}: `{shown}` (exit {code})"),
                None => format!("{tool}: `{shown}`"),
            }
        } else {
            let what = if files.len() == 1 {
                files[0].clone()
            } else {
                format!("{} files", files.len())
            };
            let only_writes = ops.iter().all(|o| o.op == "write");
            if only_writes {
                format!(
                    "{tool} {what}: {added} line{} ({bytes_added} bytes) written",
                    if added == 1 { "" } else { "s" }
                )
            } else {
                let delta = bytes_added as i64 - bytes_removed as i64;
                format!("{tool} {what}: +{added} -{removed} lines ({delta:+} bytes)")
            }
        };

        let mut data = Map::new();
        for f in &self.fields {
            match *f {
                "tool" => {
                    data.insert("tool".into(), json!(tool));
                }
                "files" => {
                    data.insert("files".into(), json!(files));
                }
                "lines" => {
                    data.insert("lines_added".into(), json!(added));
                    data.insert("lines_removed".into(), json!(removed));
                }
                "bytes" => {
                    data.insert("bytes_added".into(), json!(bytes_added));
                    data.insert("bytes_removed".into(), json!(bytes_removed));
                }
                "operations" if !ops.is_empty() => {
                    let list: Vec<Value> = ops
                        .iter()
                        .map(|o| {
                            json!({"path": o.path, "op": o.op, "lines_added": o.lines_added,
                                   "lines_removed": o.lines_removed, "bytes_added": o.bytes_added,
                                   "bytes_removed": o.bytes_removed})
                        })
                        .collect();
                    data.insert("operations".into(), Value::Array(list));
                }
                "command" => {
                    if let Some(c) = &command {
                        data.insert("command".into(), json!(truncate(c, MAX_COMMAND)));
                    }
                }
                "exit_code" => {
                    if let Some(code) = exit_code {
                        data.insert("exit_code".into(), json!(code));
                    }
                }
                _ => {}
            }
        }
        Some(
            Signal::aid(summary)
                .with_type(SIGNAL_TYPE)
                .with_files(files)
                .with_data(Value::Object(data)),
        )
    }
}

#[async_trait]
impl Oracle for ChangeLogger {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let Some(tool) = &ctx.tool else {
            return Ok(Vec::new());
        };
        let name = tool.raw_name.as_deref().unwrap_or(&tool.name);
        Ok(self
            .record(name, &tool.input, tool.response.as_ref())
            .into_iter()
            .collect())
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Aid)
    }
}

fn count_lines(s: &str) -> u64 {
    s.lines().count() as u64
}

fn str_of<'a>(m: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| m.get(*k).and_then(Value::as_str))
}

/// The file operations of a tool input (see the [module
/// documentation](self)).
///
/// ```
/// use ahp_oracles::policy::change_logger::operations;
/// let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-old\n+new\n+more\n*** Add File: src/b.rs\n+x\n*** End Patch\n";
/// let ops = operations(&serde_json::json!({"input": patch}));
/// assert_eq!(ops.len(), 2);
/// assert_eq!((ops[0].path.as_str(), ops[0].lines_added, ops[0].lines_removed), ("src/a.rs", 2, 1));
/// assert_eq!((ops[1].op.as_str(), ops[1].lines_added), ("add", 1));
/// ```
pub fn operations(input: &Value) -> Vec<Operation> {
    let Some(m) = input.as_object() else {
        return Vec::new();
    };
    let path = str_of(m, &PATH_KEYS);
    if let Some(path) = path {
        if let Some(content) = str_of(m, &["content", "contents", "file_text"]) {
            return vec![Operation {
                path: path.to_string(),
                op: "write".into(),
                lines_added: count_lines(content),
                bytes_added: content.len() as u64,
                ..Operation::default()
            }];
        }
        let old = str_of(m, &["old_string", "old_str", "oldText", "old_text"]);
        let new = str_of(
            m,
            &["new_string", "new_str", "newText", "new_text", "new_source"],
        );
        if old.is_some() || new.is_some() {
            let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
            return vec![edit(path, old, new)];
        }
        if let Some(Value::Array(edits)) = m.get("edits") {
            let mut total = Operation {
                path: path.to_string(),
                op: "edit".into(),
                ..Operation::default()
            };
            for e in edits.iter().filter_map(Value::as_object) {
                let o = edit(
                    path,
                    str_of(e, &["old_string", "old_str", "oldText"]).unwrap_or_default(),
                    str_of(e, &["new_string", "new_str", "newText"]).unwrap_or_default(),
                );
                total.lines_added += o.lines_added;
                total.lines_removed += o.lines_removed;
                total.bytes_added += o.bytes_added;
                total.bytes_removed += o.bytes_removed;
            }
            return vec![total];
        }
    }
    // A patch in any string of the input.
    for v in m.values() {
        if let Some(s) = v.as_str() {
            let ops = patch_operations(s);
            if !ops.is_empty() {
                return ops;
            }
        }
    }
    Vec::new()
}

/// An edit replacing `old` by `new`, counted as a diff would: lines (and
/// bytes) the two share at the start and the end are not part of the
/// change.
fn edit(path: &str, old: &str, new: &str) -> Operation {
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let tail = o[head..]
        .iter()
        .rev()
        .zip(n[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let bhead = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    let btail = ob[bhead..]
        .iter()
        .rev()
        .zip(nb[bhead..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    Operation {
        path: path.to_string(),
        op: "edit".into(),
        lines_added: (n.len() - head - tail) as u64,
        lines_removed: (o.len() - head - tail) as u64,
        bytes_added: (nb.len() - bhead - btail) as u64,
        bytes_removed: (ob.len() - bhead - btail) as u64,
    }
}

/// The files of a unified diff or an `*** Begin Patch` block with their
/// line counts (a move's new name is a file of its own). PathGuard judges
/// the same files.
pub(crate) fn patch_operations(s: &str) -> Vec<Operation> {
    let mut ops: Vec<Operation> = Vec::new();
    let is_patch = s.starts_with("*** Begin Patch")
        || s.starts_with("diff --git")
        || s.starts_with("--- ")
        || s.contains("\n+++ ");
    if !is_patch {
        return ops;
    }
    for line in s.lines() {
        let header = [
            ("*** Update File: ", "update"),
            ("*** Add File: ", "add"),
            ("*** Delete File: ", "delete"),
            ("*** Move to: ", "move"),
            ("+++ ", "patch"),
        ]
        .iter()
        .find_map(|(p, op)| line.strip_prefix(p).map(|rest| (rest, *op)));
        if let Some((rest, op)) = header {
            let path = rest.trim();
            let path = path
                .strip_prefix("b/")
                .unwrap_or(path)
                .split('\t')
                .next()
                .unwrap_or(path);
            if path != "/dev/null" {
                ops.push(Operation {
                    path: path.to_string(),
                    op: op.into(),
                    ..Operation::default()
                });
            }
            continue;
        }
        if line.starts_with("--- ") || line.starts_with("*** ") {
            continue;
        }
        let Some(cur) = ops.last_mut() else { continue };
        if let Some(rest) = line.strip_prefix('+') {
            cur.lines_added += 1;
            cur.bytes_added += rest.len() as u64 + 1;
        } else if let Some(rest) = line.strip_prefix('-') {
            cur.lines_removed += 1;
            cur.bytes_removed += rest.len() as u64 + 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logger(v: Value) -> ChangeLogger {
        ChangeLogger::from_config(OracleConfig::new(&v, None)).unwrap()
    }

    fn data(s: &Signal) -> Value {
        match &s.payload {
            ahp_engine::Payload::Aid(a) => a.data.clone().unwrap(),
            _ => panic!("not aid"),
        }
    }

    #[test]
    fn a_write_counts_lines_and_bytes() {
        let s = logger(json!({}))
            .record(
                "Write",
                &json!({"file_path": "a.txt", "content": "one\ntwo\n"}),
                None,
            )
            .unwrap();
        assert_eq!(
            s.payload.summary(),
            "Write a.txt: 2 lines (8 bytes) written"
        );
        assert_eq!(
            data(&s),
            json!({"tool": "Write", "files": ["a.txt"], "lines_added": 2, "lines_removed": 0,
                   "bytes_added": 8, "bytes_removed": 0})
        );
    }

    #[test]
    fn a_unified_diff_and_multi_edit() {
        let diff = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- a/y\n+++ b/y\n@@\n+z\n";
        let s = logger(json!({"log_level": "debug"}))
            .record("apply_patch", &json!({"patch": diff}), None)
            .unwrap();
        assert_eq!(
            s.payload.summary(),
            "apply_patch 2 files: +2 -1 lines (+2 bytes)"
        );
        let d = data(&s);
        assert_eq!(d["operations"][0]["path"], "src/x.rs");
        assert_eq!(d["operations"][1]["lines_added"], 1);
        let s = logger(json!({"fields": ["lines"]}))
            .record(
                "MultiEdit",
                &json!({"file_path": "f", "edits": [{"old_string": "a", "new_string": "b\nc"}, {"old_string": "d\ne\nf", "new_string": ""}]}),
                None,
            )
            .unwrap();
        assert_eq!(data(&s), json!({"lines_added": 2, "lines_removed": 4}));
    }

    #[test]
    fn commands_record_their_exit_code() {
        let l = logger(json!({"log_level": "debug"}));
        let s = l
            .record(
                "Bash",
                &json!({"command": "cargo test"}),
                Some(&json!({"exit_code": 101})),
            )
            .unwrap();
        assert_eq!(s.payload.summary(), "Bash: `cargo test` (exit 101)");
        assert_eq!(data(&s)["command"], "cargo test");
        assert_eq!(data(&s)["exit_code"], 101);
        assert!(l.record("Grep", &json!({"pattern": "x"}), None).is_none());
    }
}
