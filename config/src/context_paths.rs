//! Checks the context paths of `when:` keys against the shape of the hook
//! context ([`ahp_engine::context_shape`]): a path no event provides, or a
//! comparison that can never hold, would leave its entry silently off.
//!
//! Certain mistakes are errors of the entry (so `ahp validate` fails and,
//! like any broken entry, it does not run); a path only an agent or the
//! caller's own context could send is a warning.

use crate::layers::SharedToolName;
use crate::source::{ConfigError, ConfigWarning};
use crate::yaml::{Node, NodeValue};
use ahp_engine::Event;
use ahp_engine::condition::{CmpOp, Matcher};
use ahp_engine::context_shape::{
    Level, PathFinding, TOOL_NAME_KEY, check_clause, check_event, resolve,
};
use serde_json::Value;

/// Checks every clause of the `when:` map `node` of an entry of `event`;
/// `path` is the entry's `…when` key path for messages. Clauses that do not
/// compile are left to [`crate::compile_when`], which reports them.
/// `shared` knows the agents' tool names (see [`SharedToolName`]).
pub(crate) fn check_when(
    node: &Node,
    event: Event,
    path: &str,
    shared: Option<SharedToolName>,
    errors: &mut Vec<ConfigError>,
    warnings: &mut Vec<ConfigWarning>,
) {
    let NodeValue::Map(map) = &node.value else {
        return;
    };
    for (k, v) in map {
        let Ok(matcher) = Matcher::parse(&v.to_json()) else {
            continue;
        };
        let key = format!("{path}.{}", k.name);
        if k.name == TOOL_NAME_PATH
            && let Some(shared) = shared
        {
            agent_tool_names(v, shared, &key, errors);
        }
        // A comparison that never holds is the value's fault; a path no
        // event provides the key's.
        let path_known = k.name == TOOL_NAME_KEY || resolve(&k.name).is_ok();
        let finding = match check_clause(&k.name, &matcher) {
            Some(f) if path_known => Some((f, &v.origin)),
            Some(f) => Some((f, &k.origin)),
            None => check_event(&k.name, event).map(|f| (f, &k.origin)),
        };
        let Some((f, at)) = finding else {
            continue;
        };
        match f.level {
            Level::Error => {
                errors.push(with_help(ConfigError::at(at, Some(key), f.message), f.help))
            }
            Level::Warning => warnings.push(ConfigWarning {
                location: at.location(),
                message: format!("{key}: {}", sentence(f)),
            }),
        }
    }
}

/// The path of ahp's shared tool name, which no agent's own name equals.
const TOOL_NAME_PATH: &str = "tool.name";

/// `tool.name: Bash` never holds, and `tool.name: "!= Bash"` always does:
/// `tool.name` is ahp's shared name (`shell`), and Claude Code's `Bash` is
/// `tool.raw_name`. Each such value (alone or in a list) is an error of the
/// entry, as a path that does not exist is.
fn agent_tool_names(
    value: &Node,
    shared: SharedToolName,
    key: &str,
    errors: &mut Vec<ConfigError>,
) {
    let items = match &value.value {
        NodeValue::Seq(items) => items.iter().collect(),
        _ => vec![value],
    };
    for item in items {
        let (name, never) = match Matcher::parse(&item.to_json()) {
            Ok(Matcher::Equals(Value::String(s))) => (s, true),
            Ok(Matcher::Compare(CmpOp::Ne, Value::String(s))) => (s, false),
            _ => continue,
        };
        let Some(ours) = shared(&name).filter(|ours| *ours != name) else {
            continue;
        };
        let outcome = if never {
            "never holds"
        } else {
            "holds for every tool"
        };
        errors.push(
            ConfigError::at(
                &item.origin,
                Some(key.to_string()),
                format!(
                    "`{TOOL_NAME_PATH}` is ahp's shared name of the tool, and an agent's `{name}` is `{ours}` there: this {outcome}"
                ),
            )
            .help(format!(
                "write `tool: {name}` (the agent's name or ahp's, any case), `{TOOL_NAME_PATH}: {ours}`, or `tool.raw_name: {name}` (only the agent's name)"
            )),
        );
    }
}

fn with_help(e: ConfigError, help: Option<String>) -> ConfigError {
    match help {
        Some(h) => e.help(h),
        None => e,
    }
}

fn sentence(f: PathFinding) -> String {
    match f.help {
        Some(h) => format!("{} ({h})", f.message),
        None => f.message,
    }
}
