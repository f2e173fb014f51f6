//! YAML parsing into a tree that remembers where every key and value came
//! from. The only place that knows the YAML crate (serde-saphyr), so it can
//! be swapped by changing this module alone.

use crate::source::{ConfigError, Origin, SourceFile};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;
use std::fmt;
use std::sync::Arc;

/// Largest hooks.yaml accepted; a policy file is a few KiB, so anything
/// this big is a mistake, not a policy.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// A YAML value with its origin.
#[derive(Debug, Clone)]
pub struct Node {
    /// The value.
    pub value: NodeValue,
    /// Where it was written.
    pub origin: Origin,
}

/// A map key with its origin.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key text.
    pub name: String,
    /// Where it was written.
    pub origin: Origin,
}

/// The shapes of a YAML value.
#[derive(Debug, Clone)]
pub enum NodeValue {
    /// `~`, `null` or nothing.
    Null,
    /// true / false.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A map, in file order.
    Map(Vec<(Key, Node)>),
}

impl Node {
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match &self.value {
            NodeValue::Null => "null",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Int(_) | NodeValue::Float(_) => "a number",
            NodeValue::Str(_) => "a string",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a map",
        }
    }

    /// The map entries, if a map.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            NodeValue::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The value at `key`, if a map with that key.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
    }

    /// The string, if a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The node as JSON (for oracle configs and `when` matchers).
    pub fn to_json(&self) -> Value {
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .or_else(|_| u64::try_from(*i).map(Value::from))
                .unwrap_or_else(|_| Value::from(*i as f64)),
            NodeValue::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            NodeValue::Str(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// The node at a dotted path of map keys / list indices below this one.
    pub fn find(&self, path: &str) -> Option<&Node> {
        let mut cur = self;
        for seg in path.split('.').filter(|s| !s.is_empty()) {
            cur = match &cur.value {
                NodeValue::Map(m) => m.iter().find(|(k, _)| k.name == seg).map(|(_, v)| v)?,
                NodeValue::Seq(items) => items.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The key node at a dotted path (pointing at the key rather than the
    /// value reads better for "unknown key" errors).
    pub fn find_key(&self, path: &str) -> Option<&Key> {
        let (parent, last) = match path.rsplit_once('.') {
            Some((p, l)) => (self.find(p)?, l),
            None => (self, path),
        };
        parent
            .as_map()?
            .iter()
            .find(|(k, _)| k.name == last)
            .map(|(k, _)| k)
    }
}

/// Deep merge with provenance: maps merge key by key (each value keeps the
/// origin of the layer that set it), scalars and lists replace.
pub fn merge(base: &mut Node, overlay: Node) {
    match (&mut base.value, overlay.value) {
        (NodeValue::Map(b), NodeValue::Map(o)) => {
            for (k, v) in o {
                match b.iter_mut().find(|(bk, _)| bk.name == k.name) {
                    Some((bk, slot)) => {
                        // A replaced value's key points at the layer that
                        // replaced it: errors about the value cite that
                        // line, not the first layer's.
                        let both_maps = matches!(
                            (&slot.value, &v.value),
                            (NodeValue::Map(_), NodeValue::Map(_))
                        );
                        if !both_maps {
                            bk.origin = k.origin;
                        }
                        merge(slot, v)
                    }
                    None => b.push((k, v)),
                }
            }
        }
        (_, value) => {
            base.value = value;
            base.origin = overlay.origin;
        }
    }
}

// What serde-saphyr hands us: a tree of spanned values.
enum Raw {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a YAML value")
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Int(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
                Ok(Raw::Int(v.into()))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
                Ok(Raw::Int(v))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Raw, E> {
                i128::try_from(v)
                    .map(Raw::Int)
                    .map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                Ok(Raw::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Raw, E> {
                Ok(Raw::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Raw::Seq(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = a.next_key::<Spanned<String>>()? {
                    let val = a.next_value()?;
                    v.push((k, val));
                }
                Ok(Raw::Map(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn origin(file: &Arc<SourceFile>, loc: &serde_saphyr::Location) -> Origin {
    Origin {
        file: Arc::clone(file),
        line: usize::try_from(loc.line()).unwrap_or(0),
        column: usize::try_from(loc.column()).unwrap_or(0),
    }
}

fn convert(file: &Arc<SourceFile>, raw: Spanned<Raw>) -> Node {
    // `referenced` is where the value appears (an alias use points at the
    // alias, which is where a user looks).
    let origin = origin(file, &raw.referenced);
    let value = match raw.value {
        Raw::Null => NodeValue::Null,
        Raw::Bool(b) => NodeValue::Bool(b),
        Raw::Int(i) => NodeValue::Int(i),
        Raw::Float(f) => NodeValue::Float(f),
        Raw::Str(s) => NodeValue::Str(s),
        Raw::Seq(items) => NodeValue::Seq(items.into_iter().map(|i| convert(file, i)).collect()),
        Raw::Map(entries) => NodeValue::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key = Key {
                        name: k.value,
                        origin: crate::yaml::origin(file, &k.referenced),
                    };
                    (key, convert(file, v))
                })
                .collect(),
        ),
    };
    Node { value, origin }
}

/// Parses one file's text. Syntax errors, duplicate keys and YAML bombs are
/// errors naming the file, line and column.
pub fn parse(file: Arc<SourceFile>) -> Result<Node, ConfigError> {
    if file.text.len() > MAX_FILE_BYTES {
        return Err(ConfigError::in_file(
            &file.path,
            format!(
                "file is {} bytes; the limit for a hooks file is {MAX_FILE_BYTES}",
                file.text.len()
            ),
        ));
    }
    parse_with_serde_saphyr(file)
}

/// Parses a YAML document that is not a policy file (an issue's
/// frontmatter) the way policy files are parsed; positions are relative to
/// `text`.
///
/// ```
/// let n = ahp_config::yaml::parse_document("id: FEAT-1\ntags: [a]\n").unwrap();
/// assert_eq!(n.find("tags.0").unwrap().origin.line, 2);
/// assert!(ahp_config::yaml::parse_document("a: 1\na: 2\n").is_err());
/// ```
pub fn parse_document(text: &str) -> Result<Node, ConfigError> {
    parse(Arc::new(SourceFile {
        layer: crate::source::Layer::Project,
        path: "<document>".into(),
        text: text.into(),
    }))
}

/// The full parse: serde-saphyr's tree, or its error with file, line and
/// column.
fn parse_with_serde_saphyr(file: Arc<SourceFile>) -> Result<Node, ConfigError> {
    // YAML 1.2 core booleans only: `y`, `on`, `no` stay strings (the
    // "Norway problem" would turn a `when: {country: no}` into false).
    let options = serde_saphyr::options! { strict_booleans: true };
    let parsed: Result<Spanned<Raw>, _> = serde_saphyr::from_str_with_options(&file.text, options);
    match parsed {
        Ok(raw) => Ok(convert(&file, raw)),
        Err(e) => {
            let (line, column) = e
                .location()
                .map(|l| {
                    (
                        usize::try_from(l.line()).unwrap_or(0),
                        usize::try_from(l.column()).unwrap_or(0),
                    )
                })
                .unwrap_or((0, 0));
            let full = e.without_snippet().to_string();
            // serde-saphyr prefixes "error: line L column C: "; we print our
            // own location, so keep only the message.
            let message = full
                .lines()
                .next()
                .unwrap_or("invalid YAML")
                .trim_start_matches("error: ")
                .split_once(": ")
                .filter(|(head, _)| head.starts_with("line "))
                .map(|(_, msg)| msg.to_string())
                .unwrap_or_else(|| full.lines().next().unwrap_or("invalid YAML").to_string());
            // …and drop a trailing " at line L, column C" repeat.
            let message = match message.rfind(" at line ") {
                Some(i) if message[i..].contains("column") => message[..i].to_string(),
                _ => message,
            };
            let (message, help) = in_our_words(&file, line, column, &message);
            let err = ConfigError {
                file: Some(file.path.clone()),
                line,
                column,
                key: None,
                message,
                help: Some(help),
                snippet: file.line_text(line).map(str::to_string),
            };
            Err(err)
        }
    }
}

/// The parser's message and a hint, in ahp's words where the parser's
/// would send the reader astray: a duplicate key names both lines (not a
/// parser option to allow it), an unknown escape in a double-quoted string
/// (a regex such as `"\d+"`) points at single quotes.
fn in_our_words(file: &SourceFile, line: usize, column: usize, message: &str) -> (String, String) {
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set ").next().unwrap_or(rest).trim();
        let first = first_key_line(file, line, column, key)
            .map(|l| format!(" (first at line {l})"))
            .unwrap_or_default();
        return (
            format!("duplicate key `{key}`: line {line} repeats a key of the same map{first}"),
            "a key appears once per map; remove one of them, or merge their values".into(),
        );
    }
    if message.contains("unknown escape character") {
        return (
            format!("invalid YAML: {message}"),
            "in a double-quoted string a backslash starts an escape (\\n, \\\"); write regexes \
             in single quotes, e.g. pattern: 'rm\\s+-rf', or double each backslash"
                .into(),
        );
    }
    (
        format!("invalid YAML: {message}"),
        "check the indentation and quoting around this line".into(),
    )
}

/// The line of the earlier `key:` of the map whose repeat is at
/// `line`:`column`: the nearest line above (or earlier on the same line,
/// for a flow map) with `key` at the same column, before the map ends.
fn first_key_line(file: &SourceFile, line: usize, column: usize, key: &str) -> Option<usize> {
    let starts_key = |text: &str| {
        let text = text.strip_prefix(['"', '\'']).unwrap_or(text);
        text.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start_matches(['"', '\'', ' ']).starts_with(':'))
    };
    let col = column.checked_sub(1)?;
    // A flow map: an earlier `key:` on the same line.
    let same = file.line_text(line)?;
    let before: String = same.chars().take(col).collect();
    if before.match_indices(key).any(|(i, _)| {
        starts_key(&before[i..]) && (i == 0 || before[..i].ends_with([' ', '{', ',']))
    }) {
        return Some(line);
    }
    for l in (1..line).rev() {
        let text = file.line_text(l)?;
        let indent = text.chars().take_while(|c| *c == ' ').count();
        let body = text.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let at: String = text.chars().skip(col).collect();
        if text.chars().count() > col && starts_key(&at) {
            return Some(l);
        }
        // A line that starts left of the key's column (other than the
        // `- ` of the list item the map is in) ends the map.
        if indent < col && !(body.starts_with("- ") && indent + 2 <= col) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Layer;

    fn file(text: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            layer: Layer::Project,
            path: "hooks.yaml".into(),
            text: text.into(),
        })
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let n = parse(file(
            "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      priority: 3\n",
        ))
        .unwrap();
        let p = n.find("hooks.pre-tool-use.0.priority").unwrap();
        assert_eq!((p.origin.line, p.origin.column), (4, 17));
        let k = n.find_key("hooks.pre-tool-use.0.priority").unwrap();
        assert_eq!((k.origin.line, k.origin.column), (4, 7));
        assert_eq!(n.to_json()["hooks"]["pre-tool-use"][0]["oracle"], "Rules");
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let e = parse(file(
            "hooks:\n  pre-tool-use:\n    - oracle: Rules\n     priority: [\n",
        ))
        .unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.column > 0);
        assert!(e.message.starts_with("invalid YAML"), "{}", e.message);
        let e = parse(file("a: 1\na: 2\n")).unwrap_err();
        assert!(e.message.contains("duplicate key `a`"), "{}", e.message);
        assert!(e.message.contains("first at line 1"), "{}", e.message);
        assert!(!e.message.contains("DuplicateKeyPolicy"), "{}", e.message);
        assert_eq!(e.line, 2);
        let e = parse(file("h:\n  - oracle: A\n    x: 1\n    oracle: B\n")).unwrap_err();
        assert!(e.message.contains("first at line 2"), "{}", e.message);
        let e = parse(file("m: {a: 1, b: 2, a: 3}\n")).unwrap_err();
        assert!(e.message.contains("first at line 1"), "{}", e.message);
        let e = parse(file("p: \"\\d+\"\n")).unwrap_err();
        assert!(e.help.unwrap().contains("single quotes"));
    }

    #[test]
    fn only_yaml_1_2_booleans() {
        let n = parse(file("a: [y, no, on, off, yes, true, False]\n")).unwrap();
        assert_eq!(
            n.to_json()["a"],
            serde_json::json!(["y", "no", "on", "off", "yes", true, false])
        );
    }

    #[test]
    fn merge_keeps_origin_of_each_value() {
        let mut a = parse(file("x: 1\ny: {a: 1, b: 2}\nl: [1, 2]\n")).unwrap();
        let b = parse(Arc::new(SourceFile {
            layer: Layer::Local,
            path: "local.yaml".into(),
            text: "y: {b: 3}\nl: [9]\n".into(),
        }))
        .unwrap();
        merge(&mut a, b);
        assert_eq!(
            a.to_json(),
            serde_json::json!({"x": 1, "y": {"a": 1, "b": 3}, "l": [9]})
        );
        assert_eq!(a.find("y.b").unwrap().origin.layer(), Layer::Local);
        assert_eq!(a.find("y.a").unwrap().origin.layer(), Layer::Project);
        assert_eq!(a.find("l").unwrap().origin.layer(), Layer::Local);
    }
}
