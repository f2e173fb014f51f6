//! YAML parsing into a tree that remembers where every key and value came
//! from. The only place that knows the YAML parser (granit-parser, whose
//! events this module turns into the tree), so it can be swapped by
//! changing this module alone.

use crate::source::{ConfigError, Origin, SourceFile};
use granit_parser::{Event, Marker, Options, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
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
            // Each key's place, by name: merging maps of many keys (a
            // hostile layer's) takes linear time.
            let mut at: HashMap<String, usize> = b
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.name.clone(), i))
                .collect();
            for (k, v) in o {
                match at.get(&k.name).and_then(|&i| b.get_mut(i)) {
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
                    None => {
                        at.insert(k.name.clone(), b.len());
                        b.push((k, v));
                    }
                }
            }
        }
        (_, value) => {
            base.value = value;
            base.origin = overlay.origin;
        }
    }
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
    parse_events(&file)
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

// The tree is built straight from the parser's events. The builder owns
// the YAML 1.2 core schema (which plain scalars are null, booleans and
// numbers), anchors and aliases, merge keys, duplicate keys and the
// budgets against hostile files: each a few lines here, where a
// general-purpose deserializer would bring its own tree, options and
// build time for the same answer.

/// Deeper nesting than this is an error: a policy is a few levels deep,
/// and the limit bounds the recursion a hostile file can ask for.
const MAX_DEPTH: usize = 64;
/// Nodes in one document, every alias counted at the size of what it
/// repeats, so a "billion laughs" file stops here rather than filling
/// memory.
const MAX_NODES: usize = 250_000;

const SYNTAX_HELP: &str = "check the indentation and quoting around this line";

/// How much a node holds: its values (aliases counted at their size) and
/// its levels of nesting, which an alias brings along wherever it is used.
#[derive(Clone, Copy)]
struct Extent {
    size: usize,
    height: usize,
}

impl Extent {
    const LEAF: Extent = Extent { size: 1, height: 1 };

    /// This node's extent once `child` is inside it.
    fn with(self, child: Extent) -> Extent {
        Extent {
            size: self.size + child.size,
            height: self.height.max(child.height + 1),
        }
    }
}

/// The entries `<<` keys bring into a map, each name once.
#[derive(Default)]
struct Merged {
    entries: Vec<(Key, Node)>,
    names: HashSet<String>,
}

type Events<'t> = Parser<'t, granit_parser::StrInput<'t>>;

struct Builder<'t> {
    file: &'t Arc<SourceFile>,
    parser: Events<'t>,
    /// Finished anchored nodes by the parser's anchor id.
    anchors: HashMap<usize, (Node, Extent)>,
    nodes: usize,
}

impl<'t> Builder<'t> {
    fn origin(&self, span: &Span) -> Origin {
        self.at(&span.start)
    }

    fn at(&self, marker: &Marker) -> Origin {
        // The parser's columns are 0-based; ours, like an editor's, 1-based.
        Origin {
            file: Arc::clone(self.file),
            line: marker.line(),
            column: marker.col() + 1,
        }
    }

    fn error(&self, origin: &Origin, message: String, help: &str) -> ConfigError {
        ConfigError {
            file: Some(self.file.path.clone()),
            line: origin.line,
            column: origin.column,
            key: None,
            message,
            help: Some(help.to_string()),
            snippet: self.file.line_text(origin.line).map(str::to_string),
        }
    }

    fn next(&mut self) -> Result<(Event<'t>, Span), ConfigError> {
        match self.parser.next_event() {
            Some(Ok(event)) => Ok(event),
            Some(Err(e)) => Err(self.syntax_error(&e)),
            // The parser ends every stream with StreamEnd; running past it
            // is a bug here, reported as an error rather than a panic.
            None => Err(ConfigError::in_file(
                &self.file.path,
                "invalid YAML: the document ended early",
            )),
        }
    }

    fn syntax_error(&self, e: &ScanError) -> ConfigError {
        let origin = self.at(e.marker());
        let info = e.info();
        let help = if info.contains("unknown escape") {
            "in a double-quoted string a backslash starts an escape (\\n, \\\"); write regexes \
             in single quotes, e.g. pattern: 'rm\\s+-rf', or double each backslash"
        } else {
            SYNTAX_HELP
        };
        self.error(&origin, format!("invalid YAML: {info}"), help)
    }

    /// The one document of the stream (null when there is none).
    fn document(mut self) -> Result<Node, ConfigError> {
        let mut root = None;
        let end = loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::StreamEnd => break span,
                Event::DocumentStart(..) if root.is_some() => {
                    let at = self.origin(&span);
                    return Err(self.error(
                        &at,
                        "a second YAML document starts here: this file holds one".into(),
                        "remove the `---` line and merge the two parts, or move the second into its own file",
                    ));
                }
                Event::DocumentStart(..) => {
                    let (event, span) = self.next()?;
                    root = Some(self.node(event, span, 0)?.0);
                }
                _ => {
                    let at = self.origin(&span);
                    return Err(self.error(
                        &at,
                        "invalid YAML: unexpected event".into(),
                        SYNTAX_HELP,
                    ));
                }
            }
        };
        // A file of comments only: nothing, where the text ends.
        Ok(root.unwrap_or_else(|| Node {
            value: NodeValue::Null,
            origin: self.origin(&end),
        }))
    }

    /// The node that `event` starts, at `depth` levels below the root.
    fn node(
        &mut self,
        event: Event<'t>,
        span: Span,
        depth: usize,
    ) -> Result<(Node, Extent), ConfigError> {
        let origin = self.origin(&span);
        self.within_depth(depth, Extent::LEAF, &origin)?;
        self.count(1, &origin)?;
        let (value, extent, anchor) = match event {
            Event::Scalar(text, style, anchor, tag) => (
                self.scalar(text, style, tag.as_deref(), &origin)?,
                Extent::LEAF,
                anchor,
            ),
            Event::SequenceStart(_, anchor, tag) => {
                self.collection_tag(tag.as_deref(), "seq", &origin)?;
                let (mut items, mut extent) = (Vec::new(), Extent::LEAF);
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    let (item, e) = self.node(event, span, depth + 1)?;
                    items.push(item);
                    extent = extent.with(e);
                }
                (NodeValue::Seq(items), extent, anchor)
            }
            Event::MappingStart(_, anchor, tag) => {
                self.collection_tag(tag.as_deref(), "map", &origin)?;
                let (entries, extent) = self.map(depth)?;
                (NodeValue::Map(entries), extent, anchor)
            }
            Event::Alias(id) => {
                let Some((node, extent)) = self.anchors.get(&id) else {
                    return Err(self.error(
                        &origin,
                        "this alias refers to the node it is part of".into(),
                        "an alias can repeat a finished node only; a node cannot contain itself",
                    ));
                };
                let (mut node, extent) = (node.clone(), *extent);
                // What the alias repeats counts where it is used: its
                // values towards the budget, its levels below this one.
                self.within_depth(depth, extent, &origin)?;
                self.count(extent.size, &origin)?;
                // An alias's value is reported where the alias is written,
                // which is where a reader looks.
                node.origin = origin;
                return Ok((node, extent));
            }
            _ => {
                return Err(self.error(
                    &origin,
                    "invalid YAML: a value was expected here".into(),
                    SYNTAX_HELP,
                ));
            }
        };
        let node = Node { value, origin };
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), extent));
        }
        Ok((node, extent))
    }

    /// A node of `extent` at `depth` must end within [`MAX_DEPTH`] levels.
    fn within_depth(
        &self,
        depth: usize,
        extent: Extent,
        origin: &Origin,
    ) -> Result<(), ConfigError> {
        if depth + extent.height > MAX_DEPTH {
            return Err(self.error(
                origin,
                format!("nesting deeper than {MAX_DEPTH} levels (aliases counted at their depth)"),
                "a policy is a few levels deep; flatten this value",
            ));
        }
        Ok(())
    }

    /// A `!!map` or `!!seq` tag must name the collection it is on; other
    /// YAML types are errors, a tag of one's own (`!custom`) changes nothing.
    fn collection_tag(
        &self,
        tag: Option<&Tag>,
        kind: &str,
        origin: &Origin,
    ) -> Result<(), ConfigError> {
        match tag.map(yaml_type) {
            Some(Some(t)) if t != kind => Err(self.error(
                origin,
                format!(
                    "a {} cannot be tagged `!!{t}`",
                    if kind == "map" { "map" } else { "list" }
                ),
                "remove the tag",
            )),
            _ => Ok(()),
        }
    }

    fn count(&mut self, n: usize, origin: &Origin) -> Result<(), ConfigError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(self.error(
                origin,
                format!("the document has more than {MAX_NODES} values (aliases counted at their size)"),
                "a policy has hundreds of values; a file this large is a mistake or an attack (a YAML bomb)",
            ));
        }
        Ok(())
    }

    /// A map's entries, up to its end: keys are text, once each; `<<`
    /// merges the keys of a map (or of a list of maps) that the map does
    /// not set itself.
    fn map(&mut self, depth: usize) -> Result<(Vec<(Key, Node)>, Extent), ConfigError> {
        let mut entries: Vec<(Key, Node)> = Vec::new();
        // The line of each key, by name: a map of many keys (a hostile
        // file's) is checked in linear time.
        let mut lines: HashMap<String, usize> = HashMap::new();
        let mut merged = Merged::default();
        let mut extent = Extent::LEAF;
        loop {
            let (event, span) = self.next()?;
            let origin = self.origin(&span);
            let (name, merge) = match event {
                Event::MappingEnd => break,
                Event::Scalar(text, style, anchor, tag) => {
                    let value = self.scalar(text.clone(), style, tag.as_deref(), &origin)?;
                    if matches!(value, NodeValue::Null) {
                        return Err(self.not_a_key(&origin));
                    }
                    // `<<`, plain or tagged `!!merge`.
                    let merge = text == "<<"
                        && match tag.as_deref() {
                            None => style == ScalarStyle::Plain,
                            Some(t) => yaml_type(t) == Some("merge"),
                        };
                    if anchor != 0 {
                        let key = Node {
                            value,
                            origin: origin.clone(),
                        };
                        self.anchors.insert(anchor, (key, Extent::LEAF));
                    }
                    (text.into_owned(), merge)
                }
                Event::Alias(id) => match self.anchors.get(&id).map(|(n, _)| &n.value) {
                    Some(NodeValue::Str(s)) => (s.clone(), false),
                    Some(NodeValue::Bool(b)) => (b.to_string(), false),
                    Some(NodeValue::Int(i)) => (i.to_string(), false),
                    Some(NodeValue::Float(f)) => (f.to_string(), false),
                    _ => return Err(self.not_a_key(&origin)),
                },
                _ => return Err(self.not_a_key(&origin)),
            };
            let key = Key { name, origin };
            if !merge {
                if let Some(first) = lines.get(&key.name) {
                    return Err(self.error(
                        &key.origin,
                        format!(
                            "duplicate key `{}`: line {} repeats a key of the same map (first at line {first})",
                            key.name, key.origin.line
                        ),
                        "a key appears once per map; remove one of them, or merge their values",
                    ));
                }
                lines.insert(key.name.clone(), key.origin.line);
            }
            let (event, span) = self.next()?;
            let (value, e) = self.node(event, span, depth + 1)?;
            extent = extent.with(e);
            if merge {
                self.merge_key(value, &key.origin, &mut merged)?;
                continue;
            }
            entries.push((key, value));
        }
        // A key the map sets itself wins over a merged one.
        entries.extend(
            merged
                .entries
                .into_iter()
                .filter(|(k, _)| !lines.contains_key(&k.name)),
        );
        Ok((entries, extent))
    }

    /// Collects the entries a `<<` value brings, the first source of a key
    /// winning.
    fn merge_key(&self, value: Node, at: &Origin, merged: &mut Merged) -> Result<(), ConfigError> {
        let sources = match value.value {
            NodeValue::Map(m) => vec![m],
            NodeValue::Seq(items) => items
                .into_iter()
                .map(|i| match i.value {
                    NodeValue::Map(m) => Ok(m),
                    _ => Err(()),
                })
                .collect::<Result<_, _>>()
                .map_err(|()| self.bad_merge(at))?,
            _ => return Err(self.bad_merge(at)),
        };
        for (key, value) in sources.into_iter().flatten() {
            if merged.names.insert(key.name.clone()) {
                merged.entries.push((key, value));
            }
        }
        Ok(())
    }

    fn bad_merge(&self, at: &Origin) -> ConfigError {
        self.error(
            at,
            "`<<` merges a map or a list of maps".into(),
            "write `<<: *name` where `&name` anchors a map",
        )
    }

    fn not_a_key(&self, at: &Origin) -> ConfigError {
        self.error(
            at,
            "a map key must be text, not empty, null, a list or a map".into(),
            "write the key as plain text, e.g. `name: value`",
        )
    }

    /// A scalar's value: quoted and block scalars are text; a plain one is
    /// resolved by the YAML 1.2 core schema, and a core tag (`!!str`,
    /// `!!int`, …) says which type it must be.
    fn scalar(
        &self,
        text: Cow<'t, str>,
        style: ScalarStyle,
        tag: Option<&Tag>,
        origin: &Origin,
    ) -> Result<NodeValue, ConfigError> {
        let kind = match tag {
            // `! text`, the non-specific tag, makes a string.
            Some(t) if t.parts() == ("", "!") || t.parts() == ("!", "") => Some("str"),
            // A tag of one's own (`!custom`) changes nothing; a YAML type
            // other than the core schema's (`!!binary`, `!!timestamp`)
            // is not read as text silently.
            Some(t) => match yaml_type(t) {
                Some(k @ ("str" | "null" | "bool" | "int" | "float" | "merge")) => Some(k),
                Some(other) => {
                    return Err(self.error(
                        origin,
                        format!("unsupported tag `!!{other}` on `{text}`"),
                        "ahp reads YAML 1.2's core types only: remove the tag, or write the value as text",
                    ));
                }
                None => None,
            },
            None => None,
        };
        let value = match kind {
            Some("null") => Some(NodeValue::Null),
            Some(kind @ ("bool" | "int" | "float")) => match (kind, core_value(&text)) {
                ("bool", Some(v @ NodeValue::Bool(_)))
                | ("int", Some(v @ NodeValue::Int(_)))
                | ("float", Some(v @ NodeValue::Float(_))) => Some(v),
                ("float", Some(NodeValue::Int(i))) => Some(NodeValue::Float(i as f64)),
                _ => {
                    return Err(self.error(
                        origin,
                        format!("`{text}` is not a valid `!!{kind}`"),
                        "remove the tag, or write a value of that type",
                    ));
                }
            },
            // `!!str` (and `!!merge`, on `<<`): the text as written.
            Some(_) => None,
            None if style == ScalarStyle::Plain => match core_value(&text) {
                // An id that happens to spell a float too large for one
                // (`uid: 6e0379`, a hex id an issue tracker writes
                // unquoted) is the text it is; `.inf` is still refused.
                Some(NodeValue::Float(f))
                    if !f.is_finite() && !text.trim_start_matches(['-', '+']).starts_with('.') =>
                {
                    None
                }
                v => v,
            },
            None => None,
        };
        match value {
            None => Ok(NodeValue::Str(text.into_owned())),
            // No setting takes an infinite number, and JSON (what oracles
            // read) has none: `.inf` would arrive as null.
            Some(NodeValue::Float(f)) if !f.is_finite() => Err(self.error(
                origin,
                format!("`{text}` is not a finite number"),
                "write a finite number, or quote the value to keep it as text",
            )),
            // An integer spelling beyond 64 bits would be rounded on its
            // way to JSON.
            Some(NodeValue::Int(i)) if i64::try_from(i).is_err() && u64::try_from(i).is_err() => {
                Err(self.error(
                    origin,
                    format!("`{text}` is too large a number (64 bits at most)"),
                    "write a smaller number, or quote the value to keep it as text",
                ))
            }
            Some(v) => Ok(v),
        }
    }
}

/// The type a tag names in YAML's own namespace (`!!int` → `int`,
/// `!<tag:yaml.org,2002:binary>` → `binary`); `None` for a tag of one's own.
fn yaml_type(tag: &Tag) -> Option<&str> {
    tag.core_suffix().or_else(|| {
        let (handle, suffix) = tag.parts();
        if handle == "tag:yaml.org,2002:" {
            Some(suffix)
        } else {
            "tag:yaml.org,2002:"
                .strip_prefix(handle)
                .and_then(|rest| suffix.strip_prefix(rest))
        }
    })
}

/// The value of a plain scalar under the YAML 1.2 core schema, with only
/// `true`/`false` as booleans (`yes`, `no`, `on` stay text, so
/// `{country: no}` does not turn into false); `None` for text.
fn core_value(text: &str) -> Option<NodeValue> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(NodeValue::Null),
        "true" | "True" | "TRUE" => return Some(NodeValue::Bool(true)),
        "false" | "False" | "FALSE" => return Some(NodeValue::Bool(false)),
        _ => {}
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    let radix = |prefix: &str, radix: u32| {
        let digits = text.strip_prefix(prefix)?;
        let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
        valid.then(|| NodeValue::Int(i128::from_str_radix(digits, radix).unwrap_or(i128::MAX)))
    };
    if let Some(v) = radix("0x", 16).or_else(|| radix("0o", 8)) {
        return Some(v);
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        // Beyond i128 is beyond 64 bits too, which `scalar` refuses.
        return Some(NodeValue::Int(text.parse::<i128>().unwrap_or(i128::MAX)));
    }
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            return Some(NodeValue::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == text.len() => {
            return Some(NodeValue::Float(f64::NAN));
        }
        _ => {}
    }
    // `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int)
        && digits(frac)
        && (!int.is_empty() || !frac.is_empty())
        && (mantissa.contains('.') || !int.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if mantissa_ok && exponent_ok {
        return text.parse().ok().map(NodeValue::Float);
    }
    None
}

fn parse_events(file: &Arc<SourceFile>) -> Result<Node, ConfigError> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    Builder {
        file,
        parser: Parser::new_from_str_with_options(&file.text, options),
        anchors: HashMap::new(),
        nodes: 0,
    }
    .document()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Layer;

    #[test]
    fn a_float_spelling_too_large_for_a_float_is_text_and_inf_is_refused() {
        let doc = parse_document("uid: 6e0379\nbig: -1E999\nsmall: 1e3\n").unwrap();
        assert_eq!(doc.get("uid").and_then(Node::as_str), Some("6e0379"));
        assert_eq!(doc.get("big").and_then(Node::as_str), Some("-1E999"));
        assert!(
            matches!(doc.get("small").map(|n| &n.value), Some(NodeValue::Float(f)) if *f == 1000.0)
        );
        let err = parse_document("x: .inf\n").unwrap_err();
        assert!(err.to_string().contains("not a finite number"), "{err}");
    }

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
    fn anchors_aliases_and_merge_keys() {
        let n = parse(file(
            "base: &b {x: 1, y: [a, b]}\ncopy: *b\nm:\n  <<: *b\n  x: 2\nl:\n  <<: [{z: 1}, {z: 2, w: 3}]\n",
        ))
        .unwrap();
        let j = n.to_json();
        assert_eq!(j["copy"], serde_json::json!({"x": 1, "y": ["a", "b"]}));
        assert_eq!(j["m"], serde_json::json!({"x": 2, "y": ["a", "b"]}));
        assert_eq!(j["l"], serde_json::json!({"z": 1, "w": 3}));
        // An alias is reported where it is written.
        assert_eq!(n.find("copy").unwrap().origin.line, 2);
        let e = parse(file("m:\n  <<: 5\n")).unwrap_err();
        assert!(e.message.contains("`<<` merges a map"), "{}", e.message);
        let e = parse(file("a: &a [*a]\n")).unwrap_err();
        assert!(e.message.contains("alias"), "{}", e.message);
        assert!(parse(file("a: *nowhere\n")).is_err());
    }

    #[test]
    fn hostile_shapes_are_errors_not_crashes() {
        // A "billion laughs": ten aliases of ten aliases of ….
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ["a", "b", "c", "d", "e", "f"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g"])
        {
            text += &format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 10].join(", ")
            );
        }
        let e = parse(file(&text)).unwrap_err();
        assert!(
            e.message.contains("more than 250000 values"),
            "{}",
            e.message
        );
        assert_eq!(e.line, 6);
        let deep = |n: usize| format!("a: {}{}\n", "[".repeat(n), "]".repeat(n));
        assert!(parse(file(&deep(63))).is_ok());
        let e = parse(file(&deep(200))).unwrap_err();
        assert!(
            e.message.contains("nesting deeper than 64"),
            "{}",
            e.message
        );
        // A map of many keys, and a merge of two (layers): every key kept
        // once, a repeat found at its line.
        let mut text = String::from("m:\n");
        for i in 0..20_000 {
            text += &format!("  k{i}: {i}\n");
        }
        let mut a = parse(file(&text)).unwrap();
        let b = parse(file(&text.replace(": ", ": x"))).unwrap();
        merge(&mut a, b);
        let m = a.find("m").and_then(Node::as_map).unwrap();
        assert_eq!(m.len(), 20_000);
        assert_eq!(a.find("m.k19999").and_then(Node::as_str), Some("x19999"));
        let e = parse(file(&(text + "  k0: again\n"))).unwrap_err();
        assert_eq!(e.line, 20_002);
        assert!(e.message.contains("first at line 2"), "{}", e.message);
        // Nesting brought in by aliases counts where they are used: each
        // anchor is 50 levels around the previous one.
        let mut text = String::from("a0: &d0 x\n");
        for i in 1..90 {
            text += &format!(
                "a{i}: &d{i} {}*d{}{}\n",
                "{k: ".repeat(50),
                i - 1,
                "}".repeat(50)
            );
        }
        let e = parse(file(&text)).unwrap_err();
        assert!(
            e.message.contains("nesting deeper than 64"),
            "{}",
            e.message
        );
        assert_eq!(e.line, 3);
        let e = parse(file("a: &a [[x]]\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n")).unwrap_err();
        assert!(
            e.message.contains("nesting deeper than 64"),
            "{}",
            e.message
        );
        let e = parse(file("a: 1\n---\nb: 2\n")).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("second YAML document"), "{}", e.message);
        for text in ["? [a]\n: 1\n", "{a: 1}: 1\n", ": 1\n", "~: 1\n"] {
            let e = parse(file(text)).unwrap_err();
            assert!(
                e.message.contains("key must be text"),
                "{text}: {}",
                e.message
            );
        }
    }

    #[test]
    fn core_schema_scalars_and_tags() {
        let n = parse(file(
            "n: [0, -7, +5, 0x1F, 0o17, 1.5, -.5, 1e3, 1_000, 0b11, 12abc, '1', \"true\", ~]\n\
             t: [!!str 12, !!int '12', !!float 1, ! 7, !custom 7, !!null x]\n",
        ))
        .unwrap();
        assert_eq!(
            n.to_json()["n"],
            serde_json::json!([
                0, -7, 5, 31, 15, 1.5, -0.5, 1000.0, "1_000", "0b11", "12abc", "1", "true", null
            ])
        );
        assert_eq!(
            n.to_json()["t"],
            serde_json::json!(["12", 12, 1.0, "7", 7, null])
        );
        // An anchored key repeats as a key; `!!merge <<` merges.
        let n = parse(file(
            "m: {&k id: a}\nn: {*k : b}\no: {!!merge <<: {x: 1}}\n",
        ))
        .unwrap();
        assert_eq!(n.to_json()["n"], serde_json::json!({"id": "b"}));
        assert_eq!(n.to_json()["o"], serde_json::json!({"x": 1}));
        for (text, want) in [
            ("a: !!binary aGVsbG8=\n", "unsupported tag `!!binary`"),
            (
                "a: !!timestamp 2001-12-14\n",
                "unsupported tag `!!timestamp`",
            ),
            ("a: !!str {b: 1}\n", "cannot be tagged `!!str`"),
            ("a: !!seq {b: 1}\n", "cannot be tagged `!!seq`"),
            ("a: !!map x\n", "unsupported tag `!!map`"),
            ("a: 0x10000000000000000\n", "too large a number"),
            (
                "a: 99999999999999999999999999999999999999999\n",
                "too large a number",
            ),
        ] {
            let e = parse(file(text)).unwrap_err();
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
        assert_eq!(
            parse(file("a: 18446744073709551615\n")).unwrap().to_json()["a"],
            u64::MAX
        );
        let e = parse(file("a: !!int abc\n")).unwrap_err();
        assert!(e.message.contains("not a valid `!!int`"), "{}", e.message);
        let e = parse(file("a: [1, .inf]\n")).unwrap_err();
        assert!(e.message.contains("not a finite number"), "{}", e.message);
        assert_eq!((e.line, e.column), (1, 8));
        let n = parse(file("# nothing\n")).unwrap();
        assert!(matches!(n.value, NodeValue::Null));
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
