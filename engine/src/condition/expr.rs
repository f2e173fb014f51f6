//! The condition language of the Rules oracle: one line of text, where a
//! `when` key holds one clause.
//!
//! A condition is one line of text over the hook context:
//!
//! | form | meaning |
//! |---|---|
//! | `path == value`, `path != value` | equality (numbers numerically; a list value equals when any element does) |
//! | `path > n`, `>=`, `<`, `<=` | comparison (numbers numerically, strings by text) |
//! | `path ~ 'regex'`, `path !~ 'regex'` | regex match / non-match on the value as text (`=~` is accepted for `~`) |
//! | `path` | truthy: the path exists and is not `null`, `false`, `0`, `""`, `[]` or `{}` |
//! | `true`, `false` | constants (any case; `condition: "true"` always fires) |
//! | `a && b`, `a \|\| b`, `!a`, `( … )` | combination; `and`, `or`, `not` are accepted too |
//!
//! `!` binds tightest, then `&&`, then `||`: `!a && b || c` is
//! `((!a) && b) || c`.
//!
//! Paths are dotted names of letters, digits, `_` and `-`
//! (`tool.input.command`, `files.changed.0`), looked up with
//! [`HookContext::lookup`]. A path that does not exist makes its comparison
//! false (for `!=` and `!~` too) — never an error when evaluated; the Rules
//! oracle rejects at load a path no event provides and a comparison that
//! can never hold ([`crate::context_shape`]). The bare path `tool`
//! compares the tool's name, as the `when` key does
//! ([`super::tool_name_matches`]).
//!
//! Values are either quoted — `'…'` or `"…"`, always a string, where `\\`,
//! `\'` and `\"` are escapes and any other backslash is kept as written (so
//! `'\s+'` is the regex `\s+`) — or bare: a number, `true`, `false`, `null`, or
//! a word running to the next space, parenthesis, `&`, `|` or quote.
//!
//! Comparisons use exactly the matchers of `when` conditions
//! ([`super::Matcher`]), so `x == 10` in a rule means what
//! `x: 10` means in `when`, and `x > 10` what `x: "> 10"` means. `!=` is the
//! negation of `==` for a value that exists (a list differs when no element
//! equals). Regexes are case-sensitive unless they start with `(?i)`.
//!
//! Keywords (`and`, `or`, `not`, `true`, `false`) ignore case. A condition
//! may be at most [`MAX_LEN`] characters long and nest at most
//! [`MAX_DEPTH`] levels of `(` and `!`; beyond that it is rejected with an
//! error, never a stack overflow.
//!
//! ```
//! use ahp_engine::condition::expr::Expr;
//! use ahp_engine::HookContext;
//!
//! let ctx: HookContext = serde_json::from_str(
//!     r#"{"issue": {"type": "feature"}, "files": {"changed_count": 12}}"#,
//! ).unwrap();
//! let e = Expr::parse("issue.type == feature && files.changed_count >= 10").unwrap();
//! assert!(e.eval(&ctx));
//! assert!(!Expr::parse("issue.missing > 0").unwrap().eval(&ctx));
//!
//! let err = Expr::parse("checklist.incomplete_count 0").unwrap_err();
//! assert_eq!(err.column, 28);
//! assert_eq!(
//!     err.to_string(),
//!     "column 28: expected an operator after `checklist.incomplete_count`, found `0`",
//! );
//! ```

use super::{CmpOp, Matcher, TOOL_NAME_KEY, clause_holds, parse_operand};
use crate::HookContext;
use crate::pattern::Pattern;
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// The longest condition accepted, in characters.
pub const MAX_LEN: usize = 4096;

/// The deepest nesting of parentheses and `!` accepted.
pub const MAX_DEPTH: usize = 64;

/// A condition that does not parse.
///
/// ```
/// use ahp_engine::condition::expr::Expr;
/// let err = Expr::parse("tool.name = Bash").unwrap_err();
/// assert_eq!(err.column, 11);
/// assert!(err.message.contains("use `==`"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ExprError {
    /// 1-based character column inside the condition where the problem is.
    pub column: usize,
    /// What is wrong and, where possible, how to write it instead.
    pub message: String,
}

/// A parsed condition. Parse once (at config load), evaluate many times.
///
/// ```
/// use ahp_engine::condition::expr::Expr;
/// use ahp_engine::HookContext;
/// let ctx: HookContext = serde_json::from_str(
///     r#"{"environment": "staging", "tool": {"name": "read", "input": {}}}"#,
/// ).unwrap();
/// let e: Expr = r#"!(environment == production) || tool.name == "read""#.parse().unwrap();
/// assert!(e.eval(&ctx));
/// assert_eq!(e.source(), r#"!(environment == production) || tool.name == "read""#);
/// ```
#[derive(Debug, Clone)]
pub struct Expr {
    source: String,
    root: Node,
}

#[derive(Debug, Clone)]
enum Node {
    Const(bool),
    /// A bare path, with its 1-based column.
    Truthy(String, usize),
    /// A comparison of the path at the column.
    Test(String, usize, Test),
    Not(Box<Node>),
    All(Vec<Node>),
    Any(Vec<Node>),
}

#[derive(Debug, Clone)]
enum Test {
    /// The value exists and the matcher matches.
    Holds(Matcher),
    /// The value exists and the matcher does not match (`!=`).
    Differs(Matcher),
}

impl Expr {
    /// Parses a condition.
    ///
    /// ```
    /// use ahp_engine::condition::expr::Expr;
    /// assert!(Expr::parse("tool.input.command ~ 'rm -rf'").is_ok());
    /// let err = Expr::parse("a && (b || c").unwrap_err();
    /// assert_eq!(err.to_string(), "column 13: expected `)` to close the `(` at column 6");
    /// ```
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        let chars: Vec<char> = src.chars().collect();
        if chars.len() > MAX_LEN {
            return Err(ExprError {
                column: MAX_LEN + 1,
                message: format!(
                    "the condition is {} characters long; the limit is {MAX_LEN}: split it into several rules",
                    chars.len()
                ),
            });
        }
        let mut p = Parser {
            chars,
            pos: 0,
            depth: 0,
        };
        p.skip_ws();
        if p.at_end() {
            return Err(ExprError {
                column: 1,
                message: "empty condition: write e.g. `checklist.incomplete_count > 0` (or `true` for always)".into(),
            });
        }
        let root = p.parse_or()?;
        p.skip_ws();
        if let Some(c) = p.peek() {
            let hint = match c {
                ')' => "unexpected `)`: it closes no `(`".to_string(),
                '&' => "unexpected `&`: use `&&` to combine conditions".to_string(),
                '|' => "unexpected `|`: use `||` for either-or (quote a regex that contains `|`)"
                    .to_string(),
                '=' => "unexpected `=`: use `==` to compare".to_string(),
                _ => format!(
                    "unexpected `{}` after a complete condition: join conditions with `&&` or `||`",
                    p.token_text()
                ),
            };
            return Err(p.error_here(hint));
        }
        Ok(Expr {
            source: src.to_string(),
            root,
        })
    }

    /// Whether the condition holds for `ctx`. Never fails: a missing path
    /// makes its comparison false.
    ///
    /// ```
    /// use ahp_engine::condition::expr::Expr;
    /// use ahp_engine::HookContext;
    /// let ctx = HookContext::default();
    /// assert!(!Expr::parse("issue.id == FEAT-1").unwrap().eval(&ctx));
    /// assert!(!Expr::parse("issue.id != FEAT-1").unwrap().eval(&ctx));
    /// assert!(Expr::parse("!issue.id").unwrap().eval(&ctx));
    /// ```
    pub fn eval(&self, ctx: &HookContext) -> bool {
        self.root.eval(ctx)
    }

    /// The text the condition was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every path the condition reads, in order, with its 1-based column
    /// and the matcher it must match (`None` for a bare path or `!=`), so
    /// the loader can check them against the context's shape.
    ///
    /// ```
    /// use ahp_engine::condition::expr::Expr;
    /// let e = Expr::parse("tool.name == shell && !issue.id").unwrap();
    /// let paths: Vec<(&str, usize, bool)> =
    ///     e.paths().into_iter().map(|(p, c, m)| (p, c, m.is_some())).collect();
    /// assert_eq!(paths, [("tool.name", 1, true), ("issue.id", 24, false)]);
    /// ```
    pub fn paths(&self) -> Vec<(&str, usize, Option<&Matcher>)> {
        self.reads()
            .into_iter()
            .map(|(p, c, test)| match test {
                Some(Test::Holds(m)) => (p, c, Some(m)),
                // `!=` holds for any value that exists, whatever its kind.
                Some(Test::Differs(_)) | None => (p, c, None),
            })
            .collect()
    }

    /// Every comparison of the condition, in order: its path, 1-based
    /// column, matcher, and whether it is a `!=` (holds when the value
    /// exists and the matcher does not match).
    ///
    /// ```
    /// use ahp_engine::condition::expr::Expr;
    /// let e = Expr::parse("tool.name != 'Bash' && !issue.id").unwrap();
    /// let tests: Vec<(&str, usize, bool)> =
    ///     e.tests().into_iter().map(|(p, c, _, differs)| (p, c, differs)).collect();
    /// assert_eq!(tests, [("tool.name", 1, true)]);
    /// ```
    pub fn tests(&self) -> Vec<(&str, usize, &Matcher, bool)> {
        self.reads()
            .into_iter()
            .filter_map(|(p, c, test)| match test? {
                Test::Holds(m) => Some((p, c, m, false)),
                Test::Differs(m) => Some((p, c, m, true)),
            })
            .collect()
    }

    /// Every path the condition reads, in order, with its column and the
    /// test on it (`None` for a bare path): what [`Expr::paths`] and
    /// [`Expr::tests`] each report a view of.
    fn reads(&self) -> Vec<(&str, usize, Option<&Test>)> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<(&'a str, usize, Option<&'a Test>)>) {
            match n {
                Node::Const(_) => {}
                Node::Truthy(p, c) => out.push((p, *c, None)),
                Node::Test(p, c, test) => out.push((p, *c, Some(test))),
                Node::Not(inner) => walk(inner, out),
                Node::All(items) | Node::Any(items) => items.iter().for_each(|i| walk(i, out)),
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }
}

impl FromStr for Expr {
    type Err = ExprError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expr::parse(s)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Node {
    fn eval(&self, ctx: &HookContext) -> bool {
        match self {
            Node::Const(b) => *b,
            Node::Truthy(path, _) => ctx.lookup(path).as_deref().is_some_and(truthy),
            Node::Test(path, _, test) => match test {
                Test::Holds(m) => clause_holds(path, m, ctx),
                // `tool` names the tool here as in `when`: it differs when
                // there is a tool and neither of its names equals.
                Test::Differs(m) if path == TOOL_NAME_KEY => {
                    ctx.tool.is_some() && !clause_holds(path, m, ctx)
                }
                Test::Differs(m) => {
                    let v = ctx.lookup(path);
                    v.is_some() && !m.matches(v.as_deref())
                }
            },
            Node::Not(inner) => !inner.eval(ctx),
            Node::All(items) => items.iter().all(|n| n.eval(ctx)),
            Node::Any(items) => items.iter().any(|n| n.eval(ctx)),
        }
    }
}

/// Truthiness of a context value: not `null`, `false`, `0`, `""`, `[]`, `{}`.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Whether `c` may appear in a path (after its first character).
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '*'
}

/// Checks a dotted path: starts with a letter or `_`, only path characters,
/// no empty segment, `*` (every item of a list) only as a segment of its
/// own. Returns a message on failure. The one check of a context path, for
/// Rules conditions and `when:` keys alike.
///
/// ```
/// use ahp_engine::condition::expr::check_path;
/// assert!(check_path("tool.input.command").is_ok());
/// assert!(check_path("tool.shell.commands.*.name").is_ok());
/// assert!(check_path("tool..input").is_err());
/// assert!(check_path("tool.shell.commands*").is_err());
/// ```
pub fn check_path(path: &str) -> Result<(), String> {
    let Some(first) = path.chars().next() else {
        return Err("empty path".into());
    };
    if !(first.is_alphabetic() || first == '_') {
        return Err(format!("path `{path}` must start with a letter or `_`"));
    }
    if let Some(bad) = path.chars().find(|c| !is_path_char(*c)) {
        return Err(format!(
            "path `{path}` contains `{bad}`; paths are letters, digits, `_`, `-` and `.`, and `*` for every item of a list"
        ));
    }
    if path.split('.').any(str::is_empty) {
        return Err(format!(
            "path `{path}` has an empty segment (`..` or a trailing `.`)"
        ));
    }
    if let Some(seg) = path.split('.').find(|s| s.contains('*') && *s != "*") {
        return Err(format!(
            "path `{path}`: `*` takes every item of a list and is a segment of its own (`commands.*.name`), not part of `{seg}`"
        ));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Op {
    Cmp(CmpOp),
    Match,
    NotMatch,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Cmp(c) => c.symbol(),
            Op::Match => "~",
            Op::NotMatch => "!~",
        }
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn column(&self) -> usize {
        self.pos + 1
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn error_here(&self, message: impl Into<String>) -> ExprError {
        ExprError {
            column: self.column(),
            message: message.into(),
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// The word (path characters) starting at the current position.
    fn word_here(&self) -> String {
        self.chars[self.pos..]
            .iter()
            .take_while(|c| is_path_char(**c))
            .collect()
    }

    /// A short rendering of what is at the current position, for errors.
    fn token_text(&self) -> String {
        let w = self.word_here();
        if !w.is_empty() {
            return w;
        }
        self.peek().map(String::from).unwrap_or_default()
    }

    fn found(&self) -> String {
        if self.at_end() {
            "the end of the condition".to_string()
        } else {
            format!("`{}`", self.token_text())
        }
    }

    /// Consumes `kw` (case-insensitive) when it is the whole word here.
    fn eat_keyword(&mut self, kw: &str) -> bool {
        let w = self.word_here();
        if w.eq_ignore_ascii_case(kw) {
            self.pos += w.chars().count();
            true
        } else {
            false
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.starts_with(s) {
            self.pos += s.chars().count();
            true
        } else {
            false
        }
    }

    fn enter(&mut self, column: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError {
                column,
                message: format!(
                    "conditions nest deeper than {MAX_DEPTH} levels of `(` and `!`; simplify it"
                ),
            });
        }
        Ok(())
    }

    fn parse_or(&mut self) -> Result<Node, ExprError> {
        let mut items = vec![self.parse_and()?];
        loop {
            self.skip_ws();
            let op = if self.eat("||") {
                "||"
            } else if self.eat_keyword("or") {
                "or"
            } else {
                break;
            };
            items.push(self.parse_and_after(op)?);
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Node::Const(false))
        } else {
            Node::Any(items)
        })
    }

    fn parse_and_after(&mut self, op: &str) -> Result<Node, ExprError> {
        self.skip_ws();
        if self.at_end() || self.peek() == Some(')') {
            return Err(self.error_here(format!(
                "expected a condition after `{op}`, found {}",
                self.found()
            )));
        }
        self.parse_and()
    }

    fn parse_and(&mut self) -> Result<Node, ExprError> {
        let mut items = vec![self.parse_unary()?];
        loop {
            self.skip_ws();
            let op = if self.eat("&&") {
                "&&"
            } else if self.eat_keyword("and") {
                "and"
            } else {
                break;
            };
            self.skip_ws();
            if self.at_end() || self.peek() == Some(')') {
                return Err(self.error_here(format!(
                    "expected a condition after `{op}`, found {}",
                    self.found()
                )));
            }
            items.push(self.parse_unary()?);
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Node::Const(false))
        } else {
            Node::All(items)
        })
    }

    fn parse_unary(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        let column = self.column();
        let negated = if self.peek() == Some('!') && !matches!(self.peek_at(1), Some('=' | '~')) {
            self.pos += 1;
            Some("!")
        } else if self.eat_keyword("not") {
            Some("not")
        } else {
            None
        };
        let Some(op) = negated else {
            return self.parse_primary();
        };
        self.enter(column)?;
        self.skip_ws();
        if self.at_end() || self.peek() == Some(')') {
            return Err(self.error_here(format!(
                "expected a condition after `{op}`, found {}",
                self.found()
            )));
        }
        let inner = self.parse_unary()?;
        self.depth -= 1;
        Ok(Node::Not(Box::new(inner)))
    }

    fn parse_primary(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        let column = self.column();
        let Some(c) = self.peek() else {
            return Err(self.error_here("expected a condition, found the end of the condition"));
        };
        if c == '(' {
            self.enter(column)?;
            self.pos += 1;
            self.skip_ws();
            if self.peek() == Some(')') {
                return Err(self.error_here("empty parentheses: put a condition inside"));
            }
            let inner = self.parse_or()?;
            self.skip_ws();
            if !self.eat(")") {
                return Err(
                    self.error_here(format!("expected `)` to close the `(` at column {column}"))
                );
            }
            self.depth -= 1;
            return Ok(inner);
        }
        if c.is_alphabetic() || c == '_' {
            return self.parse_path_test();
        }
        let message = match c {
            ')' => "unexpected `)`: expected a condition".to_string(),
            '\'' | '"' | '-' | '+' => format!(
                "a condition starts with a path like `tool.name`, found {}; write `path == value`",
                self.found()
            ),
            d if d.is_ascii_digit() => format!(
                "a condition starts with a path like `tool.name`, found {}; write `path == value`",
                self.found()
            ),
            _ => format!("expected a condition (a path like `tool.name`, `(` or `!`), found `{c}`"),
        };
        Err(self.error_here(message))
    }

    fn parse_path_test(&mut self) -> Result<Node, ExprError> {
        let column = self.column();
        let word = self.word_here();
        for kw in ["and", "or"] {
            if word.eq_ignore_ascii_case(kw) {
                return Err(
                    self.error_here(format!("expected a condition, found the keyword `{word}`"))
                );
            }
        }
        self.pos += word.chars().count();
        if let Err(message) = check_path(&word) {
            return Err(ExprError { column, message });
        }
        self.skip_ws();
        let Some(op) = self.parse_op()? else {
            // A bare path (or constant): nothing but a connector may follow.
            let next_is_connector = self.at_end()
                || matches!(self.peek(), Some(')' | '&' | '|'))
                || self.word_here().eq_ignore_ascii_case("and")
                || self.word_here().eq_ignore_ascii_case("or");
            if !next_is_connector {
                return Err(self.error_here(format!(
                    "expected an operator after `{word}`, found {}",
                    self.found()
                )));
            }
            return Ok(match word.to_ascii_lowercase().as_str() {
                "true" => Node::Const(true),
                "false" => Node::Const(false),
                _ => Node::Truthy(word, column),
            });
        };
        self.skip_ws();
        let operand_column = self.column();
        let (text, quoted) = self.parse_operand(op)?;
        let test = match op {
            Op::Cmp(cmp) => {
                let value = if quoted {
                    Value::String(text)
                } else {
                    parse_operand(&text)
                };
                match cmp {
                    CmpOp::Eq => Test::Holds(Matcher::Equals(value)),
                    CmpOp::Ne => Test::Differs(Matcher::Equals(value)),
                    other => Test::Holds(Matcher::Compare(other, value)),
                }
            }
            Op::Match | Op::NotMatch => {
                let re = Pattern::new(&text).map_err(|e| ExprError {
                    column: operand_column,
                    message: e.0,
                })?;
                Test::Holds(if matches!(op, Op::Match) {
                    Matcher::Regex(re)
                } else {
                    Matcher::NotRegex(re)
                })
            }
        };
        Ok(Node::Test(word, column, test))
    }

    /// An operator at the current position, if any.
    fn parse_op(&mut self) -> Result<Option<Op>, ExprError> {
        const OPS: [(&str, Op); 9] = [
            ("==", Op::Cmp(CmpOp::Eq)),
            ("=~", Op::Match),
            ("!=", Op::Cmp(CmpOp::Ne)),
            ("!~", Op::NotMatch),
            (">=", Op::Cmp(CmpOp::Ge)),
            ("<=", Op::Cmp(CmpOp::Le)),
            (">", Op::Cmp(CmpOp::Gt)),
            ("<", Op::Cmp(CmpOp::Lt)),
            ("~", Op::Match),
        ];
        if self.starts_with("=<") {
            return Err(self.error_here("`=<` is not an operator: use `<=`"));
        }
        if self.starts_with("=>") {
            return Err(self.error_here("`=>` is not an operator: use `>=`"));
        }
        for (sym, op) in OPS {
            if self.eat(sym) {
                return Ok(Some(op));
            }
        }
        if self.peek() == Some('=') {
            return Err(self.error_here("`=` is not an operator: use `==` to compare"));
        }
        Ok(None)
    }

    /// The operand after `op`: its text and whether it was quoted.
    fn parse_operand(&mut self, op: Op) -> Result<(String, bool), ExprError> {
        match self.peek() {
            None | Some(')' | '&' | '|') => Err(self.error_here(format!(
                "expected a value after `{}`, found {}",
                op.symbol(),
                self.found()
            ))),
            Some(q @ ('\'' | '"')) => {
                let start = self.column();
                self.pos += 1;
                let mut out = String::new();
                loop {
                    match self.peek() {
                        None => {
                            return Err(ExprError {
                                column: start,
                                message: format!(
                                    "unterminated string: the {q} at column {start} is never closed"
                                ),
                            });
                        }
                        Some('\\') if matches!(self.peek_at(1), Some('\\' | '\'' | '"')) => {
                            if let Some(c) = self.peek_at(1) {
                                out.push(c);
                            }
                            self.pos += 2;
                        }
                        Some(c) if c == q => {
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            out.push(c);
                            self.pos += 1;
                        }
                    }
                }
                Ok((out, true))
            }
            Some(_) => {
                let mut out = String::new();
                while let Some(c) = self.peek() {
                    if c.is_whitespace() || matches!(c, '(' | ')' | '&' | '|' | '\'' | '"') {
                        break;
                    }
                    out.push(c);
                    self.pos += 1;
                }
                Ok((out, false))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx(v: Value) -> HookContext {
        serde_json::from_value(v).expect("test context")
    }

    fn holds(src: &str, c: &HookContext) -> bool {
        match Expr::parse(src) {
            Ok(e) => e.eval(c),
            Err(e) => panic!("`{src}` did not parse: {e}"),
        }
    }

    fn err(src: &str) -> ExprError {
        match Expr::parse(src) {
            Ok(_) => panic!("`{src}` parsed but should not"),
            Err(e) => e,
        }
    }

    fn sample() -> HookContext {
        ctx(json!({
            "environment": "production",
            "issue": {"id": "FEAT-0123", "type": "feature", "title": "Add a login page", "tags": ["ui", "auth"], "frontmatter": {}},
            "files": {"changed": ["src/a.rs", "src/b.rs"], "changed_count": 12},
            "checklist": {"incomplete_count": 2, "total": 0, "ratio": 0.75, "done": false, "empty": ""},
            "tool": {"name": "shell", "input": {"command": "rm -rf build", "args": []}},
        }))
    }

    #[test]
    fn the_bare_tool_path_is_the_tool_name() {
        let c = ctx(json!({"tool": {"name": "shell", "raw_name": "Bash", "input": {}}}));
        assert!(holds("tool == bash", &c));
        assert!(holds("tool == SHELL && tool.name == shell", &c));
        assert!(!holds("tool != Bash", &c));
        assert!(holds("tool != Write", &c));
        assert!(holds("tool", &c));
        let none = ctx(json!({}));
        assert!(!holds("tool == Bash", &none));
        assert!(!holds("tool != Bash", &none));
    }

    #[test]
    fn every_comparison_operator() {
        let c = sample();
        assert!(holds("files.changed_count == 12", &c));
        assert!(holds("files.changed_count == 12.0", &c));
        assert!(!holds("files.changed_count == 13", &c));
        assert!(holds("files.changed_count != 13", &c));
        assert!(!holds("files.changed_count != 12", &c));
        assert!(holds("files.changed_count > 11", &c));
        assert!(!holds("files.changed_count > 12", &c));
        assert!(holds("files.changed_count >= 12", &c));
        assert!(!holds("files.changed_count >= 13", &c));
        assert!(holds("files.changed_count < 13", &c));
        assert!(!holds("files.changed_count < 12", &c));
        assert!(holds("files.changed_count <= 12", &c));
        assert!(!holds("files.changed_count <= 11", &c));
        assert!(holds("checklist.ratio > 0.5", &c));
        assert!(holds("checklist.ratio<1", &c));
        assert!(holds("tool.input.command ~ 'rm -rf'", &c));
        assert!(holds("tool.input.command =~ '^rm'", &c));
        assert!(!holds("tool.input.command ~ '^git'", &c));
        assert!(holds("tool.input.command !~ '^git'", &c));
        assert!(!holds("tool.input.command !~ 'rm'", &c));
    }

    #[test]
    fn strings_bare_and_quoted() {
        let c = sample();
        assert!(holds("issue.type == feature", &c));
        assert!(holds("issue.type == 'feature'", &c));
        assert!(holds("issue.type == \"feature\"", &c));
        assert!(holds("issue.id == FEAT-0123", &c));
        assert!(holds("issue.title == 'Add a login page'", &c));
        assert!(holds("issue.title == \"Add a login page\"", &c));
        assert!(!holds("issue.title == Add", &c));
        assert!(holds("environment != development", &c));
        // Strings compare by text.
        assert!(holds("issue.type > fea", &c));
        assert!(holds("issue.type < fz", &c));
    }

    #[test]
    fn escapes_in_quoted_strings() {
        let c = ctx(json!({"msg": "it's \"quoted\" \\ here", "cmd": "a  b"}));
        assert!(holds(r#"msg == 'it\'s "quoted" \\ here'"#, &c));
        assert!(holds(r#"msg == "it's \"quoted\" \\ here""#, &c));
        // Other backslashes stay: regexes need no doubling.
        assert!(holds(r"cmd ~ 'a\s+b'", &c));
        assert!(holds(r#"cmd ~ "^a\s{2}b$""#, &c));
    }

    #[test]
    fn bare_scalars_are_typed_quoted_ones_are_strings() {
        let c = ctx(json!({"n": 10, "s": "10", "b": true, "z": null}));
        assert!(holds("n == 10", &c));
        assert!(holds("n == '10'", &c)); // numeric equality reads "10" as a number
        assert!(holds("s == 10", &c));
        assert!(holds("b == true", &c));
        assert!(!holds("b == false", &c));
        assert!(holds("z == null", &c));
        assert!(!holds("b == 'yes'", &c));
    }

    #[test]
    fn lists_match_any_element() {
        let c = sample();
        assert!(holds("issue.tags == ui", &c));
        assert!(!holds("issue.tags == backend", &c));
        assert!(holds("issue.tags != backend", &c));
        assert!(!holds("issue.tags != ui", &c));
        assert!(holds("files.changed ~ '^src/'", &c));
        assert!(holds("files.changed.1 == src/b.rs", &c));
    }

    #[test]
    fn truthiness_of_bare_paths() {
        let c = sample();
        assert!(holds("issue", &c));
        assert!(holds("issue.tags", &c));
        assert!(holds("checklist.incomplete_count", &c));
        assert!(!holds("checklist.total", &c));
        assert!(!holds("checklist.done", &c));
        assert!(!holds("checklist.empty", &c));
        assert!(!holds("tool.input.args", &c));
        assert!(!holds("issue.frontmatter", &c));
        assert!(!holds("issue.nothing", &c));
        assert!(holds("!issue.nothing", &c));
        assert!(holds("true", &c));
        assert!(!holds("false", &c));
    }

    #[test]
    fn unknown_paths_are_false_for_every_operator() {
        let c = sample();
        for op in ["==", "!=", ">", ">=", "<", "<=", "~", "!~"] {
            assert!(!holds(&format!("nope.nothing {op} 1"), &c), "{op}");
        }
        assert!(!holds("tool.input.command.deeper == x", &c));
        assert!(!holds("files.changed.99 == x", &c));
        assert!(!holds("anything", &HookContext::default()));
    }

    #[test]
    fn precedence_and_grouping() {
        let c = sample();
        // && binds tighter than ||.
        assert!(holds("false && false || true", &c));
        assert!(holds("true || false && false", &c));
        assert!(!holds("(true || false) && false", &c));
        // ! binds tighter than &&.
        assert!(!holds("!true && false", &c));
        assert!(holds("!(true && false)", &c));
        assert!(holds("!false && true", &c));
        assert!(holds("!!true", &c));
        assert!(holds("not false and true", &c));
        assert!(holds("false or not false", &c));
        assert!(holds("FALSE OR TRUE", &c));
        assert!(holds("(((issue.type == feature)))", &c));
        assert!(holds(
            "!(environment == production) || tool.name == \"shell\"",
            &c
        ));
        assert!(!holds(
            "!(environment == production) || tool.name == \"read\"",
            &c
        ));
        assert!(holds(
            "issue.type == feature && files.changed_count >= 10",
            &c
        ));
        assert!(holds("issue.type==feature&&files.changed_count>=10", &c));
        assert!(holds(
            "issue.type == fix || (issue.type == feature && checklist.incomplete_count > 0)",
            &c
        ));
    }

    #[test]
    fn keywords_ignore_case_but_paths_do_not_clash() {
        let c = ctx(json!({"android": 1, "order": 2, "notes": "x"}));
        assert!(holds("android AND order", &c));
        assert!(holds("android && order == 2 Or notes", &c));
        assert!(holds("NOT missing", &c));
        assert!(holds("notes", &c));
    }

    #[test]
    fn spec_examples() {
        let c = ctx(json!({"checklist": {"incomplete_count": 1}}));
        assert!(holds("checklist.incomplete_count > 0", &c));
        let c = ctx(json!({"tool": {"name": "Bash", "input": {"command": "sudo rm -rf /"}}}));
        assert!(holds("tool.input.command ~ 'rm -rf'", &c));
        let c = ctx(json!({"environment": "production", "tool": {"name": "read", "input": {}}}));
        assert!(holds(
            "!(environment == production) || tool.name == \"read\"",
            &c
        ));
    }

    #[test]
    fn errors_have_columns() {
        let e = err("checklist.incomplete_count 0");
        assert_eq!(e.column, 28);
        assert_eq!(
            e.to_string(),
            "column 28: expected an operator after `checklist.incomplete_count`, found `0`"
        );
        let e = err("checklist.incomplete_count >");
        assert_eq!(
            (e.column, e.message.as_str()),
            (
                29,
                "expected a value after `>`, found the end of the condition"
            )
        );
        let e = err("a == 'open");
        assert_eq!(e.column, 6);
        assert!(e.message.contains("unterminated string"), "{e}");
        let e = err("(a == 1");
        assert_eq!(
            e.to_string(),
            "column 8: expected `)` to close the `(` at column 1"
        );
        let e = err("a == 1)");
        assert_eq!(e.column, 7);
        assert!(e.message.contains("closes no `(`"), "{e}");
        let e = err("a = 1");
        assert_eq!(e.column, 3);
        assert!(e.message.contains("use `==`"), "{e}");
        let e = err("a & b");
        assert_eq!(e.column, 3);
        assert!(e.message.contains("`&&`"), "{e}");
        let e = err("a && ");
        assert_eq!(e.column, 6);
        assert!(e.message.contains("after `&&`"), "{e}");
        let e = err("a || && b");
        assert_eq!(e.column, 6);
        let e = err("   ");
        assert_eq!(e.column, 1);
        assert!(e.message.contains("empty condition"), "{e}");
        let e = err("x ~ '(unclosed'");
        assert_eq!(e.column, 5);
        assert!(e.message.starts_with("invalid regex `(unclosed`:"), "{e}");
        assert!(!e.message.contains('\n'), "{e}");
        let e = err("10 < x");
        assert_eq!(e.column, 1);
        assert!(e.message.contains("starts with a path"), "{e}");
        let e = err("a..b == 1");
        assert!(e.message.contains("empty segment"), "{e}");
        let e = err("a == 1 b == 2");
        assert_eq!(e.column, 8);
        assert!(e.message.contains("`&&` or `||`"), "{e}");
        let e = err("a => 1");
        assert_eq!(e.column, 3);
        assert!(e.message.contains("use `>=`"), "{e}");
        let e = err("x ~ a|b");
        assert_eq!(e.column, 6);
        assert!(e.message.contains("quote a regex"), "{e}");
        let e = err("and == 1");
        assert!(e.message.contains("keyword"), "{e}");
        let e = err("()");
        assert_eq!(e.column, 2);
        let e = err("!");
        assert_eq!(e.column, 2);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let e = err("issue.title == 'héllo' extra");
        assert_eq!(e.column, 24);
    }

    #[test]
    fn hostile_input_is_a_clear_error() {
        let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        let e = err(&deep);
        assert!(e.message.contains("limit is 4096"), "{e}");
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        let e = err(&deep);
        assert_eq!(e.column, MAX_DEPTH + 1);
        assert!(e.message.contains("nest deeper than 64"), "{e}");
        let nots = format!("{}a", "!".repeat(65));
        assert!(err(&nots).message.contains("nest deeper"));
        // At the limit it parses and evaluates.
        let ok = format!("{}a{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(!Expr::parse(&ok).map(|e| e.eval(&sample())).unwrap_or(true));
        // Long flat chains are fine (no recursion per operand).
        let chain = vec!["a == 1"; 400].join(" || ");
        assert!(chain.len() < MAX_LEN);
        assert!(!holds(&chain, &sample()));
    }
}
