//! Checks the context paths of `when:` keys against the shape of the hook
//! context ([`ahp_engine::context_shape`]): a path no event provides, or a
//! comparison that can never hold, would leave its entry silently off.
//!
//! Certain mistakes are errors of the entry (so `ahp validate` fails and,
//! like any broken entry, it does not run); a path only an agent or the
//! caller's own context could send is a warning.

use crate::source::{ConfigError, ConfigWarning};
use crate::yaml::{Node, NodeValue};
use ahp_engine::Event;
use ahp_engine::condition::Matcher;
use ahp_engine::context_shape::{
    Level, PathFinding, SharedToolName, TOOL_NAME_KEY, TOOL_NAME_PATH, check_clause, check_event,
    check_event_value, check_tool_name, resolve,
};

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
        if ahp_engine::condition::expr::check_path(&k.name).is_err() {
            continue;
        }
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
            None if k.name == "event" => check_event_value(&matcher, event).map(|f| (f, &v.origin)),
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

/// Each value of a `tool.name` clause (alone or in a list), at its own
/// position: see [`check_tool_name`].
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
        let Ok(matcher) = Matcher::parse(&item.to_json()) else {
            continue;
        };
        if let Some(f) = check_tool_name(&matcher, shared) {
            errors.push(with_help(
                ConfigError::at(&item.origin, Some(key.to_string()), f.message),
                f.help,
            ));
        }
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
