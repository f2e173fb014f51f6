//! A span-aware JSON (with comments) reader and text edits that keep
//! everything they do not touch byte for byte.
//!
//! serde_json would reformat a user's settings file and drop its comments;
//! the agents' files are small, so `ahp install` parses them into a tree of
//! byte spans, splices new text in, and parses again after each edit.
//! Insertion and removal are mirror images: removing what was inserted
//! gives back the original bytes, which is what makes `ahp uninstall` exact.

use serde_json::Value;

/// A JSON value with its byte span.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// What a [`Node`] holds.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, number, boolean or null, decoded.
    Scalar(Value),
}

/// One `"key": value` of an object; its span starts at the key.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

/// A syntax error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Node {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(m) => m.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    pub fn members(&self) -> &[Member] {
        match &self.kind {
            Kind::Object(m) => m,
            _ => &[],
        }
    }

    pub fn items(&self) -> &[Node] {
        match &self.kind {
            Kind::Array(i) => i,
            _ => &[],
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self.kind, Kind::Array(_))
    }

    /// "an object", "an array", … for error messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Object(_) => "an object",
            Kind::Array(_) => "an array",
            Kind::Scalar(Value::String(_)) => "a string",
            Kind::Scalar(Value::Number(_)) => "a number",
            Kind::Scalar(Value::Bool(_)) => "a boolean",
            Kind::Scalar(_) => "null",
        }
    }

    /// The spans of the container's children (members or items).
    fn child_spans(&self) -> Vec<(usize, usize)> {
        match &self.kind {
            Kind::Object(m) => m.iter().map(|m| (m.key_start, m.value.end)).collect(),
            Kind::Array(i) => i.iter().map(|n| (n.start, n.end)).collect(),
            Kind::Scalar(_) => Vec::new(),
        }
    }
}

/// 1-based line and column of byte `pos` (columns count characters).
pub(crate) fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(text.len());
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Parses one JSON value; `//` and `/* */` comments and trailing commas are
/// accepted (several agents read JSONC).
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    p.skip_trivia()?;
    if p.pos >= p.bytes.len() {
        return Err(p.error("the file is empty; expected a JSON object"));
    }
    let node = p.value()?;
    p.skip_trivia()?;
    if p.pos < p.bytes.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Deeper nesting is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

impl Parser<'_> {
    fn error(&self, message: &str) -> SyntaxError {
        let (line, column) = line_col(self.text, self.pos);
        SyntaxError {
            line,
            column,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                b'/' if self.bytes.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.pos;
                    match self.text[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            self.pos = start;
                            return Err(self.error("unterminated /* comment"));
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => {
                let s = self.string()?;
                Ok(Node {
                    start,
                    end: self.pos,
                    kind: Kind::Scalar(Value::String(s)),
                })
            }
            Some(_) => {
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                {
                    self.pos += 1;
                }
                let word = &self.text[start..self.pos];
                let value = match word {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => match serde_json::from_str::<serde_json::Number>(word) {
                        Ok(n) if !word.is_empty() => Value::Number(n),
                        _ => {
                            self.pos = start;
                            return Err(self.error("expected a JSON value"));
                        }
                    },
                };
                Ok(Node {
                    start,
                    end: self.pos,
                    kind: Kind::Scalar(value),
                })
            }
            None => Err(self.error("unexpected end of file; expected a JSON value")),
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None | Some(b'\n') => {
                    self.pos = start;
                    return Err(self.error("unterminated string"));
                }
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        let raw = &self.text[start..self.pos.min(self.text.len())];
        serde_json::from_str::<String>(raw).map_err(|e| {
            let mut at = Parser {
                text: self.text,
                bytes: self.bytes,
                pos: start,
                depth: 0,
            };
            at.pos = start;
            at.error(&format!("invalid string: {e}"))
        })
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested more than 128 levels deep"));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Node, SyntaxError> {
        self.enter()?;
        let start = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a \"key\" or `}`")),
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip_trivia()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after the key"));
            }
            self.pos += 1;
            self.skip_trivia()?;
            let value = self.value()?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
        self.depth -= 1;
        Ok(Node {
            start,
            end: self.pos,
            kind: Kind::Object(members),
        })
    }

    fn array(&mut self) -> Result<Node, SyntaxError> {
        self.enter()?;
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                break;
            }
            items.push(self.value()?);
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
        self.depth -= 1;
        Ok(Node {
            start,
            end: self.pos,
            kind: Kind::Array(items),
        })
    }
}

/// The file's indentation unit: the leading whitespace of its first
/// indented line ("  " when there is none).
pub(crate) fn indent_unit(text: &str) -> String {
    for line in text.lines().skip(1) {
        let ws: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        if !ws.is_empty() && ws.len() < line.len() {
            return ws;
        }
    }
    "  ".to_string()
}

/// The leading whitespace of the line that holds byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let n = rest
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    &rest[..n]
}

/// `value` as JSON text for a position whose line is indented by `base`:
/// pretty with `unit` per level when `multiline`, else compact.
pub(crate) fn render(value: &Value, base: &str, unit: &str, multiline: bool) -> String {
    if !multiline {
        return value.to_string();
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return value.to_string();
    }
    let pretty = String::from_utf8_lossy(&buf).into_owned();
    pretty.replace('\n', &format!("\n{base}"))
}

/// Where the text of a line ends after byte `pos`: past spaces and
/// comments that stay on that line, before its newline.
fn end_of_line_trivia(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\r') => pos += 1,
            Some(b'/') if bytes.get(pos + 1) == Some(&b'/') => {
                while bytes.get(pos).is_some_and(|b| *b != b'\n') {
                    pos += 1;
                }
                return pos;
            }
            Some(b'/') if bytes.get(pos + 1) == Some(&b'*') => match text[pos + 2..].find("*/") {
                Some(i) if !text[pos..pos + 2 + i].contains('\n') => pos += 2 + i + 2,
                _ => return pos,
            },
            _ => return pos,
        }
    }
}

/// The first `,` at or after `from`, outside comments, before `to`.
fn comma_between(text: &str, from: usize, to: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = from;
    while pos < to {
        match bytes[pos] {
            b',' => return Some(pos),
            b'/' if bytes.get(pos + 1) == Some(&b'/') => {
                while pos < to && bytes[pos] != b'\n' {
                    pos += 1;
                }
            }
            b'/' if bytes.get(pos + 1) == Some(&b'*') => {
                pos = text[pos + 2..].find("*/").map_or(to, |i| pos + 2 + i + 2);
            }
            _ => pos += 1,
        }
    }
    None
}

/// Appends `item` (member text `"key": value`, or an array item) as the
/// last child of `container`. `value` is rendered to match the file's
/// layout. Returns the new text.
pub(crate) fn append(text: &str, container: &Node, key: Option<&str>, value: &Value) -> String {
    let unit = indent_unit(text);
    let children = container.child_spans();
    let open = container.start;
    let close = container.end - 1;
    let multiline = text[open..container.end].contains('\n')
        || (children.is_empty() && text.trim_end().contains('\n'));
    let item_indent = match children.last() {
        Some((s, _)) if multiline && text[..*s].rfind('\n') > Some(open) => {
            line_indent(text, *s).to_string()
        }
        _ => format!("{}{unit}", line_indent(text, open)),
    };
    let body = render(value, &item_indent, &unit, multiline);
    let item = match key {
        Some(k) => format!("{}: {body}", Value::String(k.to_string())),
        None => body,
    };
    let mut out = text.to_string();
    match children.last() {
        None if multiline => {
            let close_indent = line_indent(text, open);
            // Keep what was between the brackets (a comment, say) after
            // the new child.
            let inside = text[open + 1..close].trim_end_matches([' ', '\t']);
            let tail = if inside.contains('\n') {
                String::new()
            } else {
                format!("\n{close_indent}")
            };
            out.insert_str(open + 1, &format!("\n{item_indent}{item}{tail}"));
        }
        None => out.insert_str(open + 1, &item),
        Some(&(_, last_end)) => {
            let trailing_comma = comma_between(text, last_end, close);
            if !multiline {
                out.insert_str(last_end, &format!(", {item}"));
            } else {
                let after = match trailing_comma {
                    Some(c) => c + 1,
                    None => last_end,
                };
                let eol = end_of_line_trivia(text, after);
                match trailing_comma {
                    Some(_) => out.insert_str(eol, &format!("\n{item_indent}{item},")),
                    None => {
                        out.insert_str(eol, &format!("\n{item_indent}{item}"));
                        out.insert(last_end, ',');
                    }
                }
            }
        }
    }
    out
}

/// Removes child `index` of `container` (the mirror image of [`append`]
/// for the last child). Returns the new text.
pub(crate) fn remove(text: &str, container: &Node, index: usize) -> String {
    let children = container.child_spans();
    let Some(&(start, end)) = children.get(index) else {
        return text.to_string();
    };
    let close = container.end - 1;
    let mut out = text.to_string();
    let comma_after = comma_between(text, end, children.get(index + 1).map_or(close, |c| c.0));
    if children.len() == 1 {
        // The only child: the brackets close up again, keeping any
        // comment that was inside them.
        let inside_end = comma_after.map_or(end, |c| c + 1);
        let rest_trivial = text[inside_end..close].trim().is_empty();
        let before_trivial = text[container.start + 1..start].trim().is_empty();
        let from = if before_trivial {
            container.start + 1
        } else {
            start
        };
        let to = if rest_trivial && before_trivial {
            close
        } else {
            inside_end
        };
        out.replace_range(from..to, "");
        return out;
    }
    if index + 1 == children.len() {
        let prev_end = children[index - 1].1;
        let gap = &text[prev_end..start];
        let newline = gap.rfind('\n').map(|i| prev_end + i);
        let from = match newline {
            Some(nl) if text[nl + 1..start].trim().is_empty() => nl,
            _ => prev_end,
        };
        if from == prev_end {
            // Same line as the previous child: take `, item` whole.
            out.replace_range(prev_end..end, "");
            return out;
        }
        match comma_after {
            Some(c) => out.replace_range(from..c + 1, ""),
            None => {
                out.replace_range(from..end, "");
                if let Some(c) = comma_between(text, prev_end, start) {
                    out.remove(c);
                }
            }
        }
        return out;
    }
    // A child in the middle: take its line(s) up to the next child.
    let next_start = children[index + 1].0;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let from = if text[line_start..start].trim().is_empty() && line_start > container.start {
        line_start
    } else {
        start
    };
    let next_line = text[..next_start].rfind('\n').map_or(0, |i| i + 1);
    let to =
        if from == line_start && next_line > end && text[next_line..next_start].trim().is_empty() {
            next_line
        } else {
            next_start
        };
    out.replace_range(from..to, "");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(text: &str, path: &[&str], value: Value) {
        let root = parse(text).unwrap();
        let mut node = &root;
        for p in path {
            node = &node.get(p).unwrap().value;
        }
        let added = if node.is_object() {
            append(text, node, Some("new"), &value)
        } else {
            append(text, node, None, &value)
        };
        let root2 = parse(&added).unwrap_or_else(|e| panic!("{e}\n{added}"));
        let mut node2 = &root2;
        for p in path {
            node2 = &node2.get(p).unwrap().value;
        }
        let n = node2.child_spans().len();
        let removed = remove(&added, node2, n - 1);
        assert_eq!(removed, text, "after adding:\n{added}");
    }

    #[test]
    fn append_then_remove_gives_back_the_bytes() {
        let v = json!({"hooks": [{"type": "command", "command": "ahp hook x"}]});
        round_trip("{\n  \"a\": 1\n}\n", &[], v.clone());
        round_trip(
            "{\n  \"a\": 1, // note\n  \"b\": [1, 2]\n}\n",
            &[],
            v.clone(),
        );
        round_trip("{\n  \"a\": 1 // note\n}\n", &[], v.clone());
        round_trip("{\n  \"a\": 1,\n}\n", &[], v.clone());
        round_trip("{\"a\":1}", &[], v.clone());
        round_trip("{\"a\":{\"b\":[1]}}", &["a", "b"], json!(2));
        round_trip("{\n\t\"a\": [\n\t\t1\n\t]\n}", &["a"], v.clone());
        round_trip("{\n  \"a\": [], \"b\": 2\n}", &["a"], json!(3));
        round_trip(
            "{\n  \"a\": {\n    // only a comment\n  }\n}",
            &["a"],
            json!(3),
        );
        round_trip("{\n  \"a\": {}\n}", &["a"], json!(3));
    }

    #[test]
    fn appended_text_matches_the_file_indentation() {
        let text = "{\n    \"a\": 1\n}\n";
        let root = parse(text).unwrap();
        let out = append(text, &root, Some("b"), &json!({"c": 2}));
        assert_eq!(
            out,
            "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    }\n}\n"
        );
    }

    #[test]
    fn removing_a_middle_child_keeps_its_neighbours() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}";
        let root = parse(text).unwrap();
        assert_eq!(remove(text, &root, 1), "{\n  \"a\": 1,\n  \"c\": 3\n}");
        assert_eq!(remove(text, &root, 0), "{\n  \"b\": 2,\n  \"c\": 3\n}");
        let inline = "[1, 2, 3]";
        let arr = parse(inline).unwrap();
        assert_eq!(remove(inline, &arr, 1), "[1, 3]");
    }

    #[test]
    fn errors_carry_line_and_column() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.contains("`,`"));
        assert!(parse("").is_err());
        assert!(parse("{\"a\": tru}").is_err());
        assert!(parse("{} x").is_err());
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).unwrap_err().message.contains("128"));
    }

    #[test]
    fn comments_and_escapes_are_read() {
        let root = parse("// head\n{ /* x */ \"k\\\"ey\": \"v\\u0041\" }").unwrap();
        assert_eq!(root.get("k\"ey").unwrap().value.as_str(), Some("vA"));
    }
}
