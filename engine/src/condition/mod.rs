//! Conditions over the hook context, in the policy's two spellings: a
//! `when:` map of path → matcher (SPEC §4.2, [`Condition`]), and the Rules
//! oracle's one-line expressions ([`expr`]), which compare with the same
//! [`Matcher`]s, so `x == 10` in a rule means what `x: 10` means in `when`.
//!
//! A matcher is written as a YAML/JSON value: a scalar means equality, a list
//! means any-of, a string starting with a comparison operator (`> 10`,
//! `<= 3`, `!= x`) compares, and `~regex` matches. A missing value never
//! matches (and never fails).

pub mod expr;

use crate::HookContext;
use crate::pattern::Pattern;
use serde_json::Value;
use std::cmp::Ordering;
use std::fmt;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

impl CmpOp {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
        }
    }

    /// Parses a leading operator, longest first; returns it and the rest.
    pub fn strip(s: &str) -> Option<(CmpOp, &str)> {
        const OPS: [(&str, CmpOp); 6] = [
            (">=", CmpOp::Ge),
            ("<=", CmpOp::Le),
            ("!=", CmpOp::Ne),
            ("==", CmpOp::Eq),
            (">", CmpOp::Gt),
            ("<", CmpOp::Lt),
        ];
        OPS.iter()
            .find_map(|(sym, op)| s.strip_prefix(sym).map(|rest| (*op, rest)))
    }

    fn holds(self, ord: Ordering) -> bool {
        match self {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::Ne => ord != Ordering::Equal,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::Ge => ord != Ordering::Less,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::Le => ord != Ordering::Greater,
        }
    }
}

pub use crate::pattern::MatcherError;

/// One compiled matcher.
///
/// ```
/// use ahp_engine::condition::Matcher;
/// use serde_json::json;
/// let m = Matcher::parse(&json!("> 10")).unwrap();
/// assert!(m.matches(Some(&json!(11))));
/// assert!(!m.matches(Some(&json!(10))));
/// assert!(!m.matches(None)); // unknown paths are false
/// let r = Matcher::parse(&json!("~^rm\\s+-rf")).unwrap();
/// assert!(r.matches(Some(&json!("rm -rf /"))));
/// let any = Matcher::parse(&json!(["feature", "fix"])).unwrap();
/// assert!(any.matches(Some(&json!("fix"))));
/// ```
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Equal to this value (numbers compare numerically).
    Equals(Value),
    /// Compares with `op` against this operand.
    Compare(CmpOp, Value),
    /// The value, as text, matches this regex.
    Regex(Pattern),
    /// The value, as text, does not match this regex (`!~`).
    NotRegex(Pattern),
    /// Any of these matches.
    AnyOf(Vec<Matcher>),
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Equals(v) => write!(f, "== {v}"),
            Matcher::Compare(op, v) => write!(f, "{} {v}", op.symbol()),
            Matcher::Regex(r) => write!(f, "~ /{}/", r.as_str()),
            Matcher::NotRegex(r) => write!(f, "!~ /{}/", r.as_str()),
            Matcher::AnyOf(ms) => {
                f.write_str("any of [")?;
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Parses a scalar operand: a number or boolean when it reads as one, else
/// the text with surrounding quotes removed.
pub fn parse_operand(s: &str) -> Value {
    let s = s.trim();
    for q in ['\'', '"'] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return Value::String(s[1..s.len() - 1].to_string());
        }
    }
    match s {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "null" | "~" => return Value::Null,
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(f) = s.parse::<f64>()
        && f.is_finite()
    {
        return Value::from(f);
    }
    Value::String(s.to_string())
}

impl Matcher {
    /// Compiles a matcher from its YAML/JSON form.
    pub fn parse(spec: &Value) -> Result<Matcher, MatcherError> {
        match spec {
            Value::String(s) => Self::parse_str(s),
            Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    Value::Array(_) | Value::Object(_) => Err(MatcherError(
                        "a list of matchers may hold only scalars, comparisons and ~regexes"
                            .into(),
                    )),
                    other => Matcher::parse(other),
                })
                .collect::<Result<_, _>>()
                .map(Matcher::AnyOf),
            Value::Object(_) => Err(MatcherError(
                "expected a value, a list (any of), a comparison like \"> 10\" or a \"~regex\", found a map"
                    .into(),
            )),
            other => Ok(Matcher::Equals(other.clone())),
        }
    }

    fn parse_str(s: &str) -> Result<Matcher, MatcherError> {
        let t = s.trim_start();
        if let Some(rest) = t.strip_prefix("!~") {
            return Ok(Matcher::NotRegex(Pattern::new(rest.trim_start())?));
        }
        if let Some(rest) = t.strip_prefix('~') {
            return Ok(Matcher::Regex(Pattern::new(rest)?));
        }
        if let Some((op, rest)) = CmpOp::strip(t) {
            if rest.trim().is_empty() {
                return Err(MatcherError(format!(
                    "comparison `{s}` has no operand: write e.g. \"{} 10\"",
                    op.symbol()
                )));
            }
            return Ok(Matcher::Compare(op, parse_operand(rest)));
        }
        Ok(Matcher::Equals(Value::String(s.to_string())))
    }

    /// Whether the (possibly missing) value matches. A list value matches
    /// an equality or regex matcher when any element does.
    pub fn matches(&self, value: Option<&Value>) -> bool {
        let Some(v) = value else { return false };
        match self {
            Matcher::AnyOf(ms) => ms.iter().any(|m| m.matches(Some(v))),
            Matcher::Equals(want) => match v {
                Value::Array(items) if !want.is_array() => {
                    items.iter().any(|i| values_equal(i, want))
                }
                _ => values_equal(v, want),
            },
            Matcher::Regex(re) => match v {
                Value::Array(items) => items.iter().any(|i| re.is_match(&as_text(i))),
                _ => re.is_match(&as_text(v)),
            },
            Matcher::NotRegex(re) => match v {
                Value::Array(items) => !items.iter().any(|i| re.is_match(&as_text(i))),
                _ => !re.is_match(&as_text(v)),
            },
            Matcher::Compare(op, operand) => match compare(v, operand) {
                Some(ord) => op.holds(ord),
                // Incomparable values are simply unequal.
                None => *op == CmpOp::Ne,
            },
        }
    }
}

/// Text form of a value for regex matching: strings as they are, anything
/// else as compact JSON.
pub fn as_text(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::String(s) => std::borrow::Cow::Borrowed(s),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), _) | (_, Value::Number(_)) => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (as_number(a), as_number(b)) {
        return x.partial_cmp(&y);
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Null, Value::Null) => Some(Ordering::Equal),
        _ if a == b => Some(Ordering::Equal),
        _ => None,
    }
}

/// The `when` key (and Rules path) that means the tool's name: the
/// agent's own (`Bash`) or ahp's normalized one (`shell`), compared without
/// regard to case. `tool.name` and `tool.raw_name` test one of them.
pub const TOOL_NAME_KEY: &str = "tool";

/// Whether one clause holds: the value at `path` matches. The bare key
/// `tool` names the tool (see [`tool_name_matches`]), since the tool itself
/// is an object no value could equal.
///
/// ```
/// use ahp_engine::{condition::{clause_holds, Matcher}, HookContext};
/// use serde_json::json;
/// let ctx: HookContext = serde_json::from_value(json!(
///     {"tool": {"name": "shell", "raw_name": "Bash", "input": {}}}
/// )).unwrap();
/// let m = Matcher::parse(&json!(["bash", "Database"])).unwrap();
/// assert!(clause_holds("tool", &m, &ctx));
/// assert!(!clause_holds("tool", &m, &HookContext::default()));
/// ```
pub fn clause_holds(path: &str, m: &Matcher, ctx: &HookContext) -> bool {
    if path == TOOL_NAME_KEY {
        return ctx.tool.as_ref().is_some_and(|t| tool_name_matches(m, t));
    }
    m.matches(ctx.lookup(path).as_deref())
}

/// Whether `m` matches the tool's name: ahp's normalized one (`shell`) or
/// the agent's own (`Bash`). Equality ignores case, so `bash` and `BASH`
/// match too; a `~regex` is matched as written against each name (start it
/// with `(?i)` to ignore case). A negation (`!= x`, `!~ re`) holds when it
/// holds for both names.
pub fn tool_name_matches(m: &Matcher, tool: &crate::ToolCall) -> bool {
    let names: Vec<&str> = [Some(tool.name.as_str()), tool.raw_name.as_deref()]
        .into_iter()
        .flatten()
        .filter(|n| !n.is_empty())
        .collect();
    let same = |a: &str, b: &str| a.to_lowercase() == b.to_lowercase();
    match m {
        Matcher::AnyOf(ms) => ms.iter().any(|m| tool_name_matches(m, tool)),
        Matcher::Equals(Value::String(want)) => names.iter().any(|n| same(n, want)),
        Matcher::Compare(CmpOp::Ne, Value::String(want)) => {
            !names.is_empty() && names.iter().all(|n| !same(n, want))
        }
        Matcher::NotRegex(_) => {
            !names.is_empty()
                && names
                    .iter()
                    .all(|n| m.matches(Some(&Value::String((*n).to_string()))))
        }
        other => names
            .iter()
            .any(|n| other.matches(Some(&Value::String((*n).to_string())))),
    }
}

/// A `when` condition: every (dotted path, matcher) pair must hold. Empty
/// means always.
///
/// ```
/// use ahp_engine::{condition::{Condition, Matcher}, HookContext};
/// use serde_json::json;
/// let when = Condition::new(vec![
///     ("files.changed_count".into(), Matcher::parse(&json!("> 10")).unwrap()),
/// ]);
/// let ctx: HookContext = serde_json::from_value(json!({"files": {"changed_count": 12}})).unwrap();
/// assert!(when.holds(&ctx));
/// assert!(Condition::default().holds(&HookContext::default()));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Condition {
    /// The clauses, all of which must hold.
    pub clauses: Vec<(String, Matcher)>,
}

impl Condition {
    /// A condition from its clauses.
    pub fn new(clauses: Vec<(String, Matcher)>) -> Self {
        Condition { clauses }
    }

    /// Whether every clause holds for `ctx`.
    pub fn holds(&self, ctx: &HookContext) -> bool {
        self.first_failing(ctx).is_none()
    }

    /// The first clause that does not hold, for `ahp explain`.
    pub fn first_failing(&self, ctx: &HookContext) -> Option<&(String, Matcher)> {
        self.clauses
            .iter()
            .find(|(path, m)| !clause_holds(path, m, ctx))
    }

    /// True when there are no clauses.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Matcher {
        Matcher::parse(&v).unwrap()
    }

    #[test]
    fn equality_is_numeric_for_numbers() {
        assert!(m(json!(10)).matches(Some(&json!(10.0))));
        assert!(m(json!("feature")).matches(Some(&json!("feature"))));
        assert!(!m(json!("feature")).matches(Some(&json!("fix"))));
        assert!(m(json!(true)).matches(Some(&json!(true))));
        assert!(m(json!("security")).matches(Some(&json!(["ui", "security"]))));
    }

    #[test]
    fn comparisons() {
        assert!(m(json!(">= 3")).matches(Some(&json!(3))));
        assert!(m(json!("<3")).matches(Some(&json!(2.5))));
        assert!(!m(json!("<= 3")).matches(Some(&json!(4))));
        assert!(m(json!("!= production")).matches(Some(&json!("development"))));
        assert!(!m(json!("!= production")).matches(Some(&json!("production"))));
        assert!(m(json!("> 0.5")).matches(Some(&json!("0.75"))));
        // Incomparable: only != holds.
        assert!(!m(json!("> 3")).matches(Some(&json!({"a": 1}))));
        assert!(m(json!("!= 3")).matches(Some(&json!([1]))));
    }

    #[test]
    fn regexes_and_lists() {
        assert!(m(json!("~rm\\s+-rf")).matches(Some(&json!("sudo rm  -rf /"))));
        assert!(m(json!("!~^git")).matches(Some(&json!("rm x"))));
        assert!(!m(json!("!~^git")).matches(Some(&json!("git status"))));
        assert!(m(json!([1, "> 100"])).matches(Some(&json!(500))));
        assert!(!m(json!([1, "> 100"])).matches(Some(&json!(5))));
    }

    #[test]
    fn bad_matchers_are_errors() {
        assert!(
            Matcher::parse(&json!("~(unclosed"))
                .unwrap_err()
                .0
                .contains("invalid regex")
        );
        assert!(Matcher::parse(&json!({"a": 1})).is_err());
        assert!(Matcher::parse(&json!([[1]])).is_err());
        assert!(
            Matcher::parse(&json!(">"))
                .unwrap_err()
                .0
                .contains("no operand")
        );
    }

    #[test]
    fn the_tool_key_matches_either_name_ignoring_case() {
        let ctx: HookContext = serde_json::from_value(json!(
            {"tool": {"name": "shell", "raw_name": "Bash", "input": {}}}
        ))
        .unwrap();
        let holds = |v: Value| clause_holds("tool", &m(v), &ctx);
        assert!(holds(json!("Bash")));
        assert!(holds(json!("SHELL")));
        assert!(holds(json!(["Write", "bash"])));
        assert!(holds(json!("~^Ba")));
        assert!(!holds(json!("~^ba")));
        assert!(!holds(json!("!= bash")));
        assert!(holds(json!("!= Write")));
        assert!(!holds(json!("!~sh")));
        assert!(holds(json!("!~^Write$")));
        assert!(!holds(json!(["Write", "Edit"])));
        assert!(!clause_holds(
            "tool",
            &m(json!("Bash")),
            &HookContext::default()
        ));
        // `tool.name` stays exact: only the normalized name.
        assert!(!clause_holds("tool.name", &m(json!("Bash")), &ctx));
    }

    #[test]
    fn operands_parse_like_yaml_scalars() {
        assert_eq!(parse_operand(" 10 "), json!(10));
        assert_eq!(parse_operand("'rm -rf'"), json!("rm -rf"));
        assert_eq!(parse_operand("true"), json!(true));
        assert_eq!(parse_operand("x y"), json!("x y"));
    }
}
