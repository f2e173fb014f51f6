//! The tree built straight from the YAML parser's events, for the documents
//! policy files are made of: one document of maps, lists and scalars, with
//! no anchors, aliases, tags or merge keys.
//!
//! Why it exists: serde-saphyr hands every value over as a `Spanned<T>`,
//! itself deserialized through a small map of locations, which costs about
//! three times the parse (a 1 000-entry hooks.yaml: ~15 ms against ~4.5 ms
//! of events). This builder reads the same parser (`granit-parser`, which
//! serde-saphyr re-exports) with the settings serde-saphyr gives it, spelled
//! out in [`parser_options`], and keeps each event's position.
//!
//! It never decides anything serde-saphyr would decide differently: it
//! answers `None` at the first thing outside that subset — a syntax error,
//! an anchor, an alias, a tag, a `<<` key, a second document, a duplicate
//! or non-text key, a number in any spelling but plain decimal, or a
//! document near serde-saphyr's budget — and the caller parses the file
//! again with serde-saphyr, whose tree or error is then the answer. The
//! property tests below, `yaml::direct_agrees` and the `yaml_direct` fuzz
//! target hold the two to the same trees and positions.

use super::{Key, Node, NodeValue};
use crate::source::{Origin, SourceFile};
use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, Span};
use std::borrow::Cow;
use std::sync::Arc;

/// Deeper than this, serde-saphyr's own depth budget (64) decides.
const MAX_DEPTH: usize = 60;
/// More nodes than this, serde-saphyr's node budget (250 000) decides.
const MAX_NODES: usize = 200_000;
/// Maps up to this size look for duplicate keys pairwise; larger ones sort.
const PAIRWISE_KEYS: usize = 32;

enum Frame {
    Seq(Origin, Vec<Node>),
    Map(Origin, Vec<(Key, Node)>, Option<Key>),
}

/// The parser settings serde-saphyr uses with its default options and
/// budget (`Options::parser_options` there), spelled out rather than
/// taken from the parser's defaults, which a new granit-parser could
/// change: both must accept exactly the same texts. A test pins the
/// limits.
fn parser_options() -> Options {
    let mut options = Options::default();
    options.simple_key_max_lookahead = 1024;
    options.flow_nesting_limit = 255;
    // serde-saphyr lets the parser nest one level past its depth budget
    // (64), so that its own budget reports the error.
    options.block_nesting_limit = Options::default().block_nesting_limit.max(64 + 1);
    options.strict_indentation = false;
    // Comment events would only make this builder give up; another crate
    // enabling granit's `comments` feature must not turn them on.
    options.set_emit_comments(false);
    options
}

/// The tree of `file`, or `None` when serde-saphyr must parse it.
pub(super) fn parse(file: &Arc<SourceFile>) -> Option<Node> {
    let mut parser = Parser::new_from_str_with_options(&file.text, parser_options());
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    let mut nodes = 0usize;
    loop {
        let (event, span) = parser.next_event()?.ok()?;
        let origin = || origin(file, &span);
        match event {
            Event::StreamStart | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            // A `%YAML` directive or a second document: rare, and
            // serde-saphyr has rules for both.
            Event::DocumentStart(_, None) if documents == 0 => documents = 1,
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                nodes += 1;
                if let Some(Frame::Map(_, _, pending @ None)) = stack.last_mut() {
                    if !usable_key(&text) {
                        return None;
                    }
                    *pending = Some(Key {
                        name: text.into_owned(),
                        origin: origin(),
                    });
                    continue;
                }
                let value = scalar(text, style)?;
                let node = Node {
                    value,
                    origin: origin(),
                };
                attach(&mut stack, &mut root, node)?;
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                if anchor != 0 || tag.is_some() || stack.len() >= MAX_DEPTH {
                    return None;
                }
                // A list or map as a key: serde-saphyr's error.
                if let Some(Frame::Map(_, _, None)) = stack.last() {
                    return None;
                }
                nodes += 1;
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq(origin(), Vec::new())
                } else {
                    Frame::Map(origin(), Vec::new(), None)
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match stack.pop()? {
                    Frame::Seq(origin, items) => Node {
                        value: NodeValue::Seq(items),
                        origin,
                    },
                    Frame::Map(origin, entries, None) => {
                        if has_duplicate(&entries) {
                            return None;
                        }
                        Node {
                            value: NodeValue::Map(entries),
                            origin,
                        }
                    }
                    Frame::Map(_, _, Some(_)) => return None,
                };
                attach(&mut stack, &mut root, node)?;
            }
            _ => return None,
        }
        if nodes > MAX_NODES {
            return None;
        }
    }
    // No document at all (an empty or comment-only file): serde-saphyr's
    // answer, whatever position it gives it.
    if !stack.is_empty() {
        return None;
    }
    root
}

fn origin(file: &Arc<SourceFile>, span: &Span) -> Origin {
    // serde-saphyr's columns are 1-based; the parser's are 0-based.
    Origin {
        file: Arc::clone(file),
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// Puts a finished node where it belongs: the pending key's value, the next
/// list item, or the document.
fn attach(stack: &mut [Frame], root: &mut Option<Node>, node: Node) -> Option<()> {
    match stack.last_mut() {
        Some(Frame::Seq(_, items)) => items.push(node),
        Some(Frame::Map(_, entries, pending)) => {
            let key = pending.take()?;
            entries.push((key, node));
        }
        None if root.is_none() => *root = Some(node),
        None => return None,
    }
    Some(())
}

/// A key serde-saphyr reads as the same text in every case: not a number,
/// a boolean or null in any spelling (it compares integer keys by value),
/// and not the merge key.
fn usable_key(text: &str) -> bool {
    !(maybe_number(text) || null_or_bool(text).is_some() || text == "<<")
}

/// YAML 1.2 core schema resolution of a scalar, as serde-saphyr does it
/// with strict booleans; `None` for the number spellings left to it.
fn scalar(text: Cow<'_, str>, style: ScalarStyle) -> Option<NodeValue> {
    if style != ScalarStyle::Plain {
        return Some(NodeValue::Str(text.into_owned()));
    }
    if let Some(value) = null_or_bool(&text) {
        return Some(value);
    }
    if maybe_number(&text) {
        return decimal(&text).map(NodeValue::Int);
    }
    Some(NodeValue::Str(text.into_owned()))
}

fn null_or_bool(text: &str) -> Option<NodeValue> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Some(NodeValue::Null),
        "true" | "True" | "TRUE" => Some(NodeValue::Bool(true)),
        "false" | "False" | "FALSE" => Some(NodeValue::Bool(false)),
        _ => None,
    }
}

/// Whether a plain scalar might be read as a number: a digit, after an
/// optional sign, or a dot followed by a digit or a YAML infinity / NaN.
/// Everything else (`-rf`, `.env`, `nan`) is a string to serde-saphyr too.
fn maybe_number(text: &str) -> bool {
    let t = text.trim_matches([' ', '\t', '\r', '\n']);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    match unsigned.as_bytes() {
        [b'0'..=b'9', ..] => true,
        [b'.', b'0'..=b'9', ..] => true,
        [b'.', ..] => matches!(
            &unsigned[1..],
            "inf" | "Inf" | "INF" | "nan" | "NaN" | "NAN"
        ),
        _ => false,
    }
}

/// `0` or a decimal integer without sign `+`, leading zero or `_`, small
/// enough for an `i64`: the one spelling whose value needs no rules.
fn decimal(text: &str) -> Option<i128> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = text == "0"
        || (matches!(digits.as_bytes(), [b'1'..=b'9', ..])
            && digits.len() <= 18
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if canonical {
        text.parse().ok()
    } else {
        None
    }
}

fn has_duplicate(entries: &[(Key, Node)]) -> bool {
    if entries.len() <= PAIRWISE_KEYS {
        return entries
            .iter()
            .enumerate()
            .any(|(i, (k, _))| entries[..i].iter().any(|(prev, _)| prev.name == k.name));
    }
    let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::in_memory as file;
    use proptest::prelude::*;

    /// True if the direct builder answered; a failure if its answer is
    /// not serde-saphyr's.
    fn agrees(text: &str) -> Result<bool, TestCaseError> {
        super::super::direct_agrees(text).map_err(TestCaseError::fail)
    }

    #[derive(Debug, Clone)]
    enum Tree {
        Scalar(&'static str),
        Seq(Vec<Tree>, bool),
        Map(Vec<(&'static str, Tree)>, bool),
    }

    /// Scalars as written: every style, and the spellings whose meaning
    /// depends on the schema.
    const SCALARS: &[&str] = &[
        "plain",
        "two words",
        "Bash",
        "^(Write|Edit)$",
        "-rf",
        ".env",
        ".git/x",
        "a#b",
        "\"quoted: yes\"",
        "'single ''q'''",
        "\"esc\\t\\u00e9\"",
        "\"\"",
        "''",
        "0",
        "42",
        "-7",
        "007",
        "1_000",
        "0x1F",
        "0o17",
        "1.5",
        "1e3",
        ".5",
        ".inf",
        "-.Inf",
        ".nan",
        "+5",
        "-0",
        "123456789012345678",
        "1234567890123456789",
        "99999999999999999999",
        "true",
        "False",
        "TRUE",
        "yes",
        "no",
        "on",
        "~",
        "null",
        "NULL",
        "",
        "nan",
        "inf",
        "2026-11-25",
        "&a anchored",
        "*a",
        "!!str 12",
        "!custom x",
        "<<",
        "12abc",
        "\"12\"",
        "'true'",
        "x:y",
        "%pct",
        "|\n  literal\n",
    ];
    const KEYS: &[&str] = &[
        "a",
        "b",
        "hooks",
        "pre-tool-use",
        "oracle",
        "\"quoted key\"",
        "'a'",
        "1",
        "01",
        "true",
        "~",
        "<<",
        "key with spaces",
        "&k anchored",
        "!!str k",
        "0x1",
        "-x",
        "\"1\"",
    ];
    const PLAIN_SCALARS: &[&str] = &[
        "plain",
        "two words",
        "-rf",
        ".env",
        "\"q: x\"",
        "'s'",
        "0",
        "42",
        "-7",
        "true",
        "FALSE",
        "no",
        "~",
        "",
        "nan",
        "Bash",
    ];
    const PLAIN_KEYS: &[&str] = &[
        "a",
        "b",
        "c",
        "d",
        "hooks",
        "\"quoted key\"",
        "key with spaces",
        "x-y",
    ];

    fn tree(
        scalars: &'static [&'static str],
        keys: &'static [&'static str],
    ) -> impl Strategy<Value = Tree> {
        // Mostly the plain subset, so that a document has a fair chance
        // of being answered directly, with the rest sprinkled in.
        let leaf = prop_oneof![
            6 => proptest::sample::select(PLAIN_SCALARS),
            1 => proptest::sample::select(scalars),
        ]
        .prop_map(Tree::Scalar);
        let key = prop_oneof![
            6 => proptest::sample::select(PLAIN_KEYS),
            1 => proptest::sample::select(keys),
        ];
        leaf.prop_recursive(5, 48, 6, move |inner| {
            prop_oneof![
                (
                    proptest::collection::vec(inner.clone(), 0..5),
                    any::<bool>()
                )
                    .prop_map(|(v, flow)| Tree::Seq(v, flow)),
                (
                    proptest::collection::vec((key.clone(), inner), 0..5),
                    any::<bool>()
                )
                    .prop_map(|(v, flow)| Tree::Map(v, flow)),
            ]
        })
    }

    fn unique_keys(t: &Tree) -> Tree {
        match t {
            Tree::Scalar(s) => Tree::Scalar(s),
            Tree::Seq(v, f) => Tree::Seq(v.iter().map(unique_keys).collect(), *f),
            Tree::Map(v, f) => {
                let mut out: Vec<(&'static str, Tree)> = Vec::new();
                for (k, v) in v {
                    if !out.iter().any(|(seen, _)| seen == k) {
                        out.push((*k, unique_keys(v)));
                    }
                }
                Tree::Map(out, *f)
            }
        }
    }

    fn flow(t: &Tree) -> String {
        match t {
            Tree::Scalar(s) if s.is_empty() || s.contains('\n') => "~".into(),
            Tree::Scalar(s) => (*s).into(),
            Tree::Seq(v, _) => format!("[{}]", v.iter().map(flow).collect::<Vec<_>>().join(", ")),
            Tree::Map(v, _) => {
                let entries: Vec<String> =
                    v.iter().map(|(k, v)| format!("{k}: {}", flow(v))).collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }

    /// Block style, with flow collections where the tree asks for them;
    /// `noise` adds comments and blank lines.
    fn block(t: &Tree, indent: usize, noise: bool, out: &mut String) {
        let pad = " ".repeat(indent);
        match t {
            Tree::Seq(v, false) if !v.is_empty() => {
                for item in v {
                    if noise {
                        out.push_str(&format!("{pad}# item\n\n"));
                    }
                    entry(item, &pad, "-", indent, noise, out);
                }
            }
            Tree::Map(v, false) if !v.is_empty() => {
                for (k, val) in v {
                    entry(val, &pad, &format!("{k}:"), indent, noise, out);
                }
            }
            other => out.push_str(&format!("{pad}{}\n", flow(other))),
        }
    }

    fn entry(val: &Tree, pad: &str, head: &str, indent: usize, noise: bool, out: &mut String) {
        match val {
            Tree::Scalar("") => out.push_str(&format!("{pad}{head}\n")),
            Tree::Scalar(s) if s.contains('\n') => out.push_str(&format!(
                "{pad}{head} {}",
                s.replace("\n  ", &format!("\n{pad}  "))
            )),
            Tree::Seq(v, false) if !v.is_empty() => {
                out.push_str(&format!("{pad}{head}\n"));
                block(val, indent + 2, noise, out);
            }
            Tree::Map(v, false) if !v.is_empty() => {
                out.push_str(&format!("{pad}{head}\n"));
                block(val, indent + 2, noise, out);
            }
            other => out.push_str(&format!("{pad}{head} {}\n", flow(other))),
        }
    }

    fn render(t: &Tree, noise: bool, markers: bool) -> String {
        let mut out = String::new();
        if markers {
            out.push_str("---\n");
        }
        if noise {
            out.push_str("# a policy\n\n");
        }
        block(t, 0, noise, &mut out);
        if markers {
            out.push_str("...\n");
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any document, including anchors, tags, merge keys, duplicate
        /// and numeric keys and every number spelling: whenever the direct
        /// builder answers, serde-saphyr agrees.
        #[test]
        fn direct_tree_is_serde_saphyrs_tree(
            t in tree(SCALARS, KEYS),
            noise in any::<bool>(),
            markers in any::<bool>(),
        ) {
            agrees(&render(&t, noise, markers))?;
        }

        /// Documents of the plain subset are answered directly, and the
        /// same as serde-saphyr.
        #[test]
        fn plain_documents_are_answered_directly(
            t in tree(PLAIN_SCALARS, PLAIN_KEYS),
            noise in any::<bool>(),
            markers in any::<bool>(),
        ) {
            let text = render(&unique_keys(&t), noise, markers);
            prop_assert!(agrees(&text)?, "not answered directly:\n{}", text);
        }
    }

    #[test]
    fn what_is_left_to_serde_saphyr() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "base: {x: 1}\nderived:\n  <<: {x: 2}\n",
            "a: 1\na: 2\n",
            "a: 1\n---\nb: 2\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: [1\n",
            "",
            "# only a comment\n",
            "a: 0x10\n",
            "1: a\n",
            "? [a]\n: b\n",
        ] {
            assert!(parse(&file(text)).is_none(), "{text:?}");
        }
        let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
        assert!(parse(&file(&deep)).is_none());
    }

    /// The parser's limits, on both sides of each: whatever the direct
    /// builder accepts, serde-saphyr accepts the same way (a granit-parser
    /// whose defaults moved would fail here).
    #[test]
    fn parser_limits_are_serde_saphyrs() {
        let long_key = |n: usize| format!("{}: 1\n", "k".repeat(n));
        let flow = |n: usize| format!("a: {}1{}\n", "[".repeat(n), "]".repeat(n));
        let block = |n: usize| {
            (0..n)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect::<String>()
        };
        let texts = [
            long_key(1000),
            long_key(1024),
            long_key(1025),
            long_key(1030),
            flow(50),
            flow(254),
            flow(255),
            flow(256),
            block(58),
            block(64),
            block(65),
            block(66),
        ];
        // serde-saphyr's recursive descent through ~60 levels needs more
        // than a test thread's 2 MiB in a debug build (a release ahp on
        // its main thread handles it).
        let checked = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                texts
                    .iter()
                    .map(|t| crate::yaml::direct_agrees(t))
                    .collect::<Result<Vec<bool>, String>>()
            })
            .unwrap()
            .join()
            .unwrap();
        match checked {
            // Answered directly: keys up to the look-ahead limit, and
            // nesting up to the direct builder's own depth limit.
            Ok(direct) => assert_eq!(
                direct,
                [true, true, false, false, true, false, false, false, true, false, false, false]
            ),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn numbers_other_than_plain_decimal_are_left_to_serde_saphyr() {
        for s in ["0", "7", "-12", "123456789012345678"] {
            assert!(maybe_number(s), "{s}");
            assert!(decimal(s).is_some(), "{s}");
        }
        for s in [
            "+1",
            "-0",
            "007",
            "1_000",
            "0x1F",
            "0o17",
            "1e3",
            "1.5",
            ".5",
            "-.inf",
            ".NaN",
            "1234567890123456789",
            "12abc",
        ] {
            assert!(maybe_number(s), "{s}");
            assert!(decimal(s).is_none(), "{s}");
        }
        for s in ["-rf", ".env", ".git/hooks", "nan", "inf", "-", "+x", ""] {
            assert!(!maybe_number(s), "{s}");
        }
    }
}
