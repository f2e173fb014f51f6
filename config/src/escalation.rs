//! The top-level `escalation:` rules and the entry key
//! `intensity_by_environment`, compiled from the position-aware YAML tree
//! so every error has a file:line:column.

use crate::source::ConfigError;
use crate::yaml::{Node, NodeValue};
use ahp_engine::{EscalationRule, ScopeKind};
use std::time::Duration;

/// Keys of one `escalation:` rule.
pub const RULE_KEYS: &[&str] = &[
    "id",
    "source",
    "scope",
    "window",
    "after_firings",
    "after_dismissed",
    "reset_on_clean_run",
];

/// The window of a rule without one.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(24 * 3600);

fn err(n: &Node, path: &str, msg: impl Into<String>) -> ConfigError {
    ConfigError::at(&n.origin, Some(path.to_string()), msg)
}

/// Parses a window such as `30m`, `24h`, `7d` (also `s`).
///
/// ```
/// use ahp_config::escalation::parse_window;
/// assert_eq!(parse_window("30m"), Some(std::time::Duration::from_secs(1800)));
/// assert_eq!(parse_window("7d"), Some(std::time::Duration::from_secs(7 * 86400)));
/// assert_eq!(parse_window("7 weeks"), None);
/// ```
pub fn parse_window(text: &str) -> Option<Duration> {
    let t = text.trim();
    let unit = t.chars().last()?;
    let n: u64 = t[..t.len() - unit.len_utf8()].trim().parse().ok()?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86400,
        _ => return None,
    };
    (n > 0).then(|| Duration::from_secs(n.saturating_mul(secs)))
}

fn threshold(n: &Node, path: &str, errors: &mut Vec<ConfigError>) -> Option<u32> {
    match n.value {
        NodeValue::Int(i) if (1..=i128::from(u32::MAX)).contains(&i) => u32::try_from(i).ok(),
        _ => {
            errors.push(err(n, path, "expected a whole number of at least 1"));
            None
        }
    }
}

/// Compiles the `escalation:` lists of all layers (appended in layer order).
/// Every problem is reported.
pub fn compile_rules(lists: &[Node]) -> Result<Vec<EscalationRule>, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut rules = Vec::new();
    let mut index = 0;
    for list in lists {
        let items = match &list.value {
            NodeValue::Null => continue,
            NodeValue::Seq(items) => items,
            _ => {
                errors.push(
                    err(list, "escalation", "expected a list of rules").help(
                        "example:\nescalation:\n  - source: FileChangeLimiter\n    scope: issue\n    after_firings: 1",
                    ),
                );
                continue;
            }
        };
        for item in items {
            let path = format!("escalation[{index}]");
            index += 1;
            let Some(map) = item.as_map() else {
                errors.push(err(
                    item,
                    &path,
                    "expected a map with `source:` and `after_firings:` or `after_dismissed:`",
                ));
                continue;
            };
            let before = errors.len();
            for (k, _) in map {
                if !RULE_KEYS.contains(&k.name.as_str()) {
                    errors.push(
                        ConfigError::at(
                            &k.origin,
                            Some(format!("{path}.{}", k.name)),
                            format!("unknown key `{}`", k.name),
                        )
                        .help(format!("known keys: {}", RULE_KEYS.join(", "))),
                    );
                }
            }
            let source = match item.get("source") {
                Some(n) => match n.as_str() {
                    Some(s) if !s.trim().is_empty() => Some(s.to_string()),
                    _ => {
                        errors.push(err(n, &format!("{path}.source"), "expected an entry id"));
                        None
                    }
                },
                None => {
                    errors.push(err(
                        item,
                        &path,
                        "rule has no `source` (the entry id to escalate)",
                    ));
                    None
                }
            };
            let scope = match item.get("scope") {
                None => ScopeKind::Issue,
                Some(n) => match n.as_str() {
                    Some("issue") => ScopeKind::Issue,
                    Some("session") => ScopeKind::Session,
                    _ => {
                        errors.push(err(
                            n,
                            &format!("{path}.scope"),
                            "expected `issue` or `session`",
                        ));
                        ScopeKind::Issue
                    }
                },
            };
            let window = match item.get("window") {
                None => DEFAULT_WINDOW,
                Some(n) => match n.as_str().and_then(parse_window) {
                    Some(d) => d,
                    None => {
                        errors.push(err(
                            n,
                            &format!("{path}.window"),
                            "expected a duration such as 30m, 24h or 7d",
                        ));
                        DEFAULT_WINDOW
                    }
                },
            };
            let after_firings = item
                .get("after_firings")
                .and_then(|n| threshold(n, &format!("{path}.after_firings"), &mut errors));
            let after_dismissed = item
                .get("after_dismissed")
                .and_then(|n| threshold(n, &format!("{path}.after_dismissed"), &mut errors));
            if item.get("after_firings").is_none() && item.get("after_dismissed").is_none() {
                errors.push(err(
                    item,
                    &path,
                    "rule needs `after_firings` or `after_dismissed`",
                ));
            }
            let reset_on_clean_run = match item.get("reset_on_clean_run") {
                None => true,
                Some(Node {
                    value: NodeValue::Bool(b),
                    ..
                }) => *b,
                Some(n) => {
                    errors.push(err(
                        n,
                        &format!("{path}.reset_on_clean_run"),
                        "expected true or false",
                    ));
                    true
                }
            };
            let id = match item.get("id") {
                None => None,
                Some(n) => match n.as_str() {
                    Some(s) => Some(s.to_string()),
                    None => {
                        errors.push(err(n, &format!("{path}.id"), "expected a string"));
                        None
                    }
                },
            };
            if errors.len() > before {
                continue;
            }
            let Some(source) = source else { continue };
            rules.push(EscalationRule {
                id: id.unwrap_or_else(|| format!("{source}/{}", scope.as_str())),
                source,
                scope,
                window,
                after_firings,
                after_dismissed,
                reset_on_clean_run,
            });
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}
