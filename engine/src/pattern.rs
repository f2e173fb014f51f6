//! [`Pattern`]: a policy regex that is checked when the policy loads and
//! compiled only when a value could match it.
//!
//! Every hook call is a fresh process that loads the whole policy, and most
//! of a policy's regexes never match the call at hand (`git push .*main`
//! against `ls -la`). Compiling them all at load was the largest single cost
//! of a hook call (a Unicode `.` alone makes the regex crate zero a 400 KB
//! table). So a pattern is parsed at load, which reports every syntax error
//! with the policy's file and line as before, and compiled at its first
//! use; before that, a value that holds none of the literals every match
//! must start with is answered "no match" without compiling anything.
//!
//! A pattern that only spells out literals (`^Bash$`, `^(Edit|Write)$`,
//! `npm publish`) is never compiled: it is answered by comparing strings,
//! as most HOOK.md and `when` matchers are. Such patterns, and sequences of
//! text and gaps (`git push .*main`, `rm\s+-rf`), are read by hand rather
//! than by the regex parser, whose first use costs a cold process more than
//! the rest of a Rules entry's set-up.
//!
//! A pattern whose compiled size could come near the regex size limit is
//! compiled at load instead, so "regex too big" stays a load-time error and
//! a lazily compiled pattern cannot fail (docs/decisions.md, "Performance").

use crate::condition::MatcherError;
use regex::Regex;
use regex_syntax::hir::{literal, Class, Hir, HirKind, Look};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The compiled-size limit of a policy regex, so a hostile pattern cannot
/// eat memory (the regex crate is linear-time already).
const SIZE_LIMIT: usize = 1 << 20;

/// Patterns whose estimated size (see [`estimate`]) is at most this are
/// compiled lazily. Measured against the regex crate's own accounting, one
/// unit of the estimate costs at most ~25 bytes in the costliest shapes
/// (alternations, captures and nested repetitions repeated many times; a
/// Unicode class costs ~1–8 bytes a unit), so a lazy pattern stays under a
/// fifth of [`SIZE_LIMIT`]; the tests below check shapes at the bound
/// against a third.
const LAZY_MAX_COST: u64 = 8192;

/// A regex from a policy: syntax-checked when built, compiled on first use.
///
/// Cloning is cheap and clones share the compiled regex.
///
/// ```
/// use ahp_engine::pattern::Pattern;
/// let p = Pattern::new(r"git push .*\bmain\b").unwrap();
/// assert!(!p.is_match("ls -la src")); // answered without compiling
/// assert!(p.is_match("git push origin main"));
/// assert_eq!(p.as_str(), r"git push .*\bmain\b");
/// assert!(Pattern::new("(unclosed").unwrap_err().0.starts_with("invalid regex `(unclosed`"));
/// ```
#[derive(Clone)]
pub struct Pattern(Arc<Inner>);

struct Inner {
    source: String,
    /// Literals one of which starts every match; `None` when the pattern
    /// has no such finite set (`.*x`, `\w+`, …).
    prefixes: Option<Words>,
    /// Set when the pattern's matches are a finite set of literals: then
    /// no regex is ever compiled.
    literals: Option<Literals>,
    regex: OnceLock<Option<Regex>>,
}

/// A pattern that matches exactly these strings, anchored or not.
enum Literals {
    /// No anchor: one of the words anywhere in the haystack.
    Anywhere(Words),
    /// `^…` (`start`), `…$` (`end`) or both: the haystack starts with,
    /// ends with, or is one of the words.
    Anchored {
        words: Vec<Box<[u8]>>,
        start: bool,
        end: bool,
    },
}

impl Literals {
    /// `^lit$`, `^(a|b)`, `lit$`, `lit`: a top-level concatenation with at
    /// most the text anchors at its ends, around a sub-pattern without any
    /// other look-around whose literal extraction is finite and exact.
    /// `seq` is the extraction of the whole `hir`: the anchors extract as
    /// the exact empty string, so it is the inner part's too.
    fn of(hir: &Hir, seq: &literal::Seq) -> Option<Literals> {
        let parts: &[Hir] = match hir.kind() {
            HirKind::Concat(hs) => hs,
            _ => std::slice::from_ref(hir),
        };
        let start = matches!(
            parts.first().map(Hir::kind),
            Some(HirKind::Look(Look::Start))
        );
        let end = parts.len() > usize::from(start)
            && matches!(parts.last().map(Hir::kind), Some(HirKind::Look(Look::End)));
        let inner = &parts[usize::from(start)..parts.len() - usize::from(end)];
        if inner.iter().any(|h| !h.properties().look_set().is_empty()) {
            return None;
        }
        if !seq.is_exact() {
            return None;
        }
        let words = seq.literals()?.iter().map(|l| l.as_bytes());
        Some(Literals::new(words, start, end))
    }

    /// `words`, found anywhere, or as the start, end or whole of the
    /// haystack when anchored there.
    fn new<W: AsRef<[u8]>>(words: impl IntoIterator<Item = W>, start: bool, end: bool) -> Literals {
        if start || end {
            Literals::Anchored {
                words: words.into_iter().map(|w| Box::from(w.as_ref())).collect(),
                start,
                end,
            }
        } else {
            Literals::Anywhere(Words::new(words))
        }
    }

    fn is_match(&self, haystack: &[u8]) -> bool {
        match self {
            Literals::Anywhere(words) => words.any_in(haystack),
            Literals::Anchored { words, start, end } => words.iter().any(|w| match (start, end) {
                (true, true) => haystack == &w[..],
                (true, false) => haystack.starts_with(w),
                (false, _) => haystack.ends_with(w),
            }),
        }
    }
}

/// Patterns longer than this always go through the regex parser (which
/// also applies the size limit).
const PLAIN_MAX_LEN: usize = 256;

/// The literals of a pattern written as plain text, read without the regex
/// parser: `lit`, `^lit`, `lit$` or `^lit$`, where `lit` is text or a group
/// of alternatives `(a|b|c)`, and text is any characters but the regex
/// metacharacters `\ . + * ? ( ) | [ ] { } ^ $`, or one of those escaped
/// (`\.`). Most HOOK.md and `when` matchers look like this (`^Bash$`,
/// `^(Write|Edit)$`), and the regex parser's first use costs a cold hook
/// process tens of microseconds. `None` for anything else, which the regex
/// parser then reads; a property test holds both readings to the regex
/// crate's answers.
fn plain_literals(source: &str) -> Option<Literals> {
    let (start, body, end) = plain_anchors(source)?;
    let words = match body.strip_prefix('(').and_then(|b| b.strip_suffix(')')) {
        Some(group) => plain_text(group, true)?,
        None => plain_text(body, false)?,
    };
    if words.iter().any(Vec::is_empty) {
        return None;
    }
    Some(Literals::new(words, start, end))
}

/// A pattern short enough to read by hand, split into its leading `^`, the
/// body and its trailing `$` (whether each is there).
fn plain_anchors(source: &str) -> Option<(bool, &str, bool)> {
    if source.len() > PLAIN_MAX_LEN {
        return None;
    }
    let (start, rest) = match source.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, source),
    };
    // `…\$` ends with a literal dollar, `…\\$` with a backslash and an anchor.
    Some(match rest.strip_suffix('$') {
        Some(body) if body.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 0 => {
            (start, body, true)
        }
        _ => (start, rest, false),
    })
}

/// The literal text(s) of `text` with escapes removed, split at `|` when
/// `alternatives`; `None` at any other metacharacter or escape.
fn plain_text(text: &str, alternatives: bool) -> Option<Vec<Vec<u8>>> {
    const META: &str = "\\.+*?()|[]{}^$";
    let mut words = vec![Vec::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            // Escaping a metacharacter (or `#&-~`, meta in verbose mode
            // and classes) always means the character itself.
            '\\' => chars
                .next()
                .filter(|e| META.contains(*e) || "#&-~".contains(*e))?,
            '|' if alternatives => {
                words.push(Vec::new());
                continue;
            }
            c if META.contains(c) => return None,
            c => c,
        };
        let last = words.last_mut()?;
        let mut buf = [0; 4];
        last.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    Some(words)
}

/// The regex pieces [`plain_sequence`] reads besides text and groups:
/// each is valid wherever it stands, and each compiles small (no Unicode
/// class larger than `\s`), so a pattern made of them cannot come near the
/// size limit. Longest first: `.*` before `.`.
const SEQUENCE_GAPS: [&str; 7] = [".*", ".+", ".", r"\s*", r"\s+", r"\s", r"\b"];

/// Reads, without the regex parser, a pattern made of plain text, groups
/// of plain alternatives and at least one of the gaps of
/// [`SEQUENCE_GAPS`], with `^` and `$` at its ends only: `git push .*main`,
/// `(&&|;).*(&&|;)`, `rm\s+-rf\s+/`. Such a pattern is valid by
/// construction, so it needs no parse to be checked; its regex is compiled
/// at first use, as any other. (Without a gap it is a finite set of
/// literals, which the parser's extraction answers exactly.)
///
/// Returns the words one of which every match starts with: the text and
/// groups before the first gap, spelled out (`git (push|pull) .*` → `git
/// push `, `git pull `), or `None` when a gap comes first. `None` overall
/// for any other pattern, which the regex parser then reads; a property
/// test holds this reading to the regex crate's answers.
fn plain_sequence(source: &str) -> Option<Option<Words>> {
    /// More prefixes than this (groups before the first gap multiply them)
    /// are left to the parser.
    const MAX_PREFIXES: usize = 32;
    let (_, mut rest, _) = plain_anchors(source)?;
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    let mut gaps = 0;
    while !rest.is_empty() {
        let words = if let Some(gap) = SEQUENCE_GAPS.iter().find(|g| rest.starts_with(**g)) {
            rest = &rest[gap.len()..];
            gaps += 1;
            continue;
        } else if let Some(group) = rest.strip_prefix('(') {
            // Closed by the first `)` not escaped: plain alternatives hold
            // no other.
            let close = unescaped(group, ')')?;
            let words = plain_text(&group[..close], true)?;
            if words.iter().any(Vec::is_empty) {
                return None;
            }
            rest = &group[close + 1..];
            words
        } else {
            // Text up to the next group or gap. A metacharacter in it that
            // starts neither (a quantifier, a class) fails `plain_text`.
            let end = [unescaped(rest, '('), unescaped(rest, '.'), gap_escape(rest)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(rest.len());
            let text = plain_text(&rest[..end], false)?.pop()?;
            if text.is_empty() {
                return None;
            }
            rest = &rest[end..];
            vec![text]
        };
        if gaps == 0 {
            if prefixes.len() * words.len() > MAX_PREFIXES {
                return None;
            }
            prefixes = prefixes
                .iter()
                .flat_map(|p| words.iter().map(move |w| [p.as_slice(), w].concat()))
                .collect();
        }
    }
    if gaps == 0 {
        return None;
    }
    // A gap first leaves the one empty prefix: no word is required.
    Some((prefixes != [Vec::<u8>::new()]).then(|| Words::new(prefixes)))
}

/// The byte offset of the first `c` in `text` that no backslash escapes.
fn unescaped(text: &str, c: char) -> Option<usize> {
    let mut chars = text.char_indices();
    while let Some((i, x)) = chars.next() {
        if x == '\\' {
            chars.next();
        } else if x == c {
            return Some(i);
        }
    }
    None
}

/// The byte offset of the first `\s` or `\b` in `text` (gaps of
/// [`SEQUENCE_GAPS`]), skipping other escapes.
fn gap_escape(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    while let Some((i, x)) = chars.next() {
        if x == '\\' {
            if let Some((_, 's' | 'b')) = chars.next() {
                return Some(i);
            }
        }
    }
    None
}

impl Pattern {
    /// Checks `source` and prepares it; the error reads like the regex
    /// crate's, on one line, prefixed with "invalid regex `source`".
    pub fn new(source: &str) -> Result<Pattern, MatcherError> {
        if let Some(literals) = plain_literals(source) {
            return Ok(Pattern(Arc::new(Inner {
                source: source.to_string(),
                prefixes: None,
                literals: Some(literals),
                regex: OnceLock::new(),
            })));
        }
        if let Some(prefixes) = plain_sequence(source) {
            return Ok(Pattern(Arc::new(Inner {
                source: source.to_string(),
                prefixes,
                literals: None,
                regex: OnceLock::new(),
            })));
        }
        let invalid = |detail: &str| MatcherError(format!("invalid regex `{source}`: {detail}"));
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(source)
            .map_err(|e| invalid(&one_line(&e.to_string())))?;
        let regex = OnceLock::new();
        if estimate(&hir) > LAZY_MAX_COST {
            // Large enough that the size limit might bite: find out now.
            let re = compile(source).map_err(|e| invalid(&one_line(&e.to_string())))?;
            let _ = regex.set(Some(re));
        }
        let seq = literal::Extractor::new().extract(&hir);
        let literals = Literals::of(&hir, &seq);
        Ok(Pattern(Arc::new(Inner {
            source: source.to_string(),
            // A literal pattern is answered by its literals alone.
            prefixes: literals
                .is_none()
                .then(|| required_prefixes(&seq))
                .flatten(),
            literals,
            regex,
        })))
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0.source
    }

    /// Whether `haystack` holds a match (unanchored, like
    /// [`Regex::is_match`]).
    pub fn is_match(&self, haystack: &str) -> bool {
        if let Some(prefixes) = &self.0.prefixes {
            if !prefixes.any_in(haystack.as_bytes()) {
                return false;
            }
        }
        if let Some(literals) = &self.0.literals {
            return literals.is_match(haystack.as_bytes());
        }
        match self.regex() {
            Some(re) => re.is_match(haystack),
            // Unreachable by construction (see LAZY_MAX_COST); should it
            // happen, say so rather than let a rule silently never match.
            None => {
                tracing::error!(pattern = %self.0.source, "regex failed to compile at first use");
                eprintln!(
                    "ahp: error: regex `{}` failed to compile at first use; treating it as matching",
                    self.0.source
                );
                true
            }
        }
    }

    /// The compiled regex (compiling it now if it was not yet).
    pub fn regex(&self) -> Option<&Regex> {
        self.0
            .regex
            .get_or_init(|| compile(&self.0.source).ok())
            .as_ref()
    }

    /// Whether the regex has been compiled (for tests and benchmarks).
    pub fn is_compiled(&self) -> bool {
        self.0.regex.get().is_some()
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.0.source).finish()
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.source)
    }
}

fn compile(source: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(source)
        .size_limit(SIZE_LIMIT)
        .build()
}

/// The regex crates render a multi-line diagram; one line reads better
/// inside a config error.
fn one_line(full: &str) -> String {
    full.rsplit_once("error: ")
        .map_or(full, |(_, d)| d)
        .trim()
        .to_string()
}

/// The literals one of which every match starts with, when there is such a
/// finite set of non-empty literals.
fn required_prefixes(seq: &literal::Seq) -> Option<Words> {
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(Words::new(lits.iter().map(|l| l.as_bytes())))
}

/// A set of words looked for in a text in one pass: the keyword gates in
/// front of lazily compiled regexes (here, in SecurityScanner and in the
/// log's masking trigger).
///
/// Built for texts of a few KiB, such as a tool call: it costs next to
/// nothing to build (the words sorted by their first byte), where an
/// automaton or a vectorized searcher costs more to set up than such a
/// text takes to scan. Matching is exact: fold case before, if needed.
///
/// ```
/// use ahp_engine::pattern::Words;
/// let w = Words::new(["curl", "wget", "eval"]);
/// assert!(w.any_in(b"curl -fsSL x | sh"));
/// assert!(!w.any_in(b"ls -la src"));
/// assert_eq!(w.found_in(b"wget x; eval y"), [false, true, true]);
/// ```
#[derive(Debug, Clone)]
pub struct Words {
    /// The words, sorted by first byte.
    sorted: Vec<Box<[u8]>>,
    /// The index given to `new` of each word of `sorted`.
    ids: Vec<usize>,
    /// The words starting with byte `b` are `sorted[start[b]..start[b + 1]]`.
    start: Box<[u32; 257]>,
    /// Ids of empty words, which every text holds.
    empty: Vec<usize>,
}

/// The distinct words of several keyword lists, in first-seen order, and
/// per list the positions of its words among them: the input of one
/// [`Words`] gate for many detectors, each of which runs only when one of
/// its words is found.
///
/// ```
/// use ahp_engine::pattern::keyword_ids;
/// let (words, ids) = keyword_ids([&["curl", "wget"][..], &["wget", "eval"][..], &[][..]]);
/// assert_eq!(words, ["curl", "wget", "eval"]);
/// assert_eq!(ids, [vec![0, 1], vec![1, 2], vec![]]);
/// ```
pub fn keyword_ids<'a, I>(lists: I) -> (Vec<&'a str>, Vec<Vec<usize>>)
where
    I: IntoIterator<Item = &'a [&'a str]>,
{
    let mut words: Vec<&'a str> = Vec::new();
    let ids = lists
        .into_iter()
        .map(|list| {
            list.iter()
                .map(|k| match words.iter().position(|w| w == k) {
                    Some(i) => i,
                    None => {
                        words.push(k);
                        words.len() - 1
                    }
                })
                .collect()
        })
        .collect();
    (words, ids)
}

impl Words {
    /// The set of `words`; [`Words::found_in`] reports them in this order.
    pub fn new<I, W>(words: I) -> Words
    where
        I: IntoIterator<Item = W>,
        W: AsRef<[u8]>,
    {
        let mut all: Vec<(usize, Box<[u8]>)> = Vec::new();
        let mut empty = Vec::new();
        for (id, w) in words.into_iter().enumerate() {
            match w.as_ref() {
                [] => empty.push(id),
                w => all.push((id, w.into())),
            }
        }
        all.sort_by_key(|(_, w)| w[0]);
        let mut start = Box::new([0u32; 257]);
        for (_, w) in &all {
            start[usize::from(w[0]) + 1] += 1;
        }
        for b in 1..257 {
            start[b] += start[b - 1];
        }
        let (ids, sorted) = all.into_iter().unzip();
        Words {
            sorted,
            ids,
            start,
            empty,
        }
    }

    /// How many words the set holds.
    pub fn len(&self) -> usize {
        self.sorted.len() + self.empty.len()
    }

    /// Whether the set holds no word.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words, in the order given to [`Words::new`].
    #[cfg(test)]
    fn words(&self) -> Vec<Vec<u8>> {
        let mut all: Vec<(usize, Vec<u8>)> =
            self.empty.iter().map(|&id| (id, Vec::new())).collect();
        all.extend(
            self.ids
                .iter()
                .zip(&self.sorted)
                .map(|(&id, w)| (id, w.to_vec())),
        );
        all.sort();
        all.into_iter().map(|(_, w)| w).collect()
    }

    fn starting_with(&self, b: u8) -> std::ops::Range<usize> {
        let b = usize::from(b);
        self.start[b] as usize..self.start[b + 1] as usize
    }

    /// Whether `text` holds any of the words.
    pub fn any_in(&self, text: &[u8]) -> bool {
        !self.empty.is_empty()
            || (0..text.len()).any(|i| {
                self.sorted[self.starting_with(text[i])]
                    .iter()
                    .any(|w| text[i..].starts_with(w))
            })
    }

    /// For each word, in the order given to [`Words::new`], whether
    /// `text` holds it.
    pub fn found_in(&self, text: &[u8]) -> Vec<bool> {
        let mut found = vec![false; self.len()];
        for &id in &self.empty {
            found[id] = true;
        }
        let mut left = self.sorted.len();
        for i in 0..text.len() {
            if left == 0 {
                break;
            }
            for k in self.starting_with(text[i]) {
                let id = self.ids[k];
                if !found[id] && text[i..].starts_with(&self.sorted[k]) {
                    found[id] = true;
                    left -= 1;
                }
            }
        }
        found
    }
}

/// A generous bound on the NFA states the pattern compiles to.
fn estimate(hir: &Hir) -> u64 {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len() as u64,
        HirKind::Class(Class::Unicode(c)) if c.is_ascii() => 1 + c.ranges().len() as u64,
        HirKind::Class(Class::Unicode(c)) => 64 * c.ranges().len() as u64,
        HirKind::Class(Class::Bytes(c)) => 1 + c.ranges().len() as u64,
        // Every copy and every level of repetition adds states of its own
        // (the split and the loop), however small the repeated part is.
        HirKind::Repetition(r) => {
            let copies = u64::from(r.max.unwrap_or(r.min).max(r.min)) + 1;
            estimate(&r.sub).saturating_add(4).saturating_mul(copies)
        }
        HirKind::Capture(c) => estimate(&c.sub).saturating_add(2),
        HirKind::Concat(hs) => hs.iter().fold(0u64, |n, h| n.saturating_add(estimate(h))),
        HirKind::Alternation(hs) => hs
            .iter()
            .fold(hs.len() as u64, |n, h| n.saturating_add(estimate(h))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_patterns_skip_the_regex_parser() {
        for src in [
            "^Bash$",
            "^(Write|Edit)$",
            "npm publish",
            r"\.env$",
            "^sudo ",
            r"a\$",
            r"^\(x\|y\)$",
            "mcp__github__",
        ] {
            assert!(plain_literals(src).is_some(), "{src}");
        }
        for src in [
            "", "^", "$", "^$", "()", "(a|)", r"\d", r"a\", "(a)b", "a.b", "a|b", "(?i)a", r"\<",
            "[ab]", "a+",
        ] {
            assert!(plain_literals(src).is_none(), "{src}");
        }
        let long = "x".repeat(PLAIN_MAX_LEN + 1);
        assert!(plain_literals(&long).is_none());
        // Read either way, the answers are the regex crate's.
        let p = Pattern::new(r"^\(x\|y\)$").unwrap();
        assert!(p.is_match("(x|y)") && !p.is_match("x"));
        assert!(!p.is_compiled());
        assert!(p.regex().is_some_and(|re| re.is_match("(x|y)")));
    }

    #[test]
    fn sequences_of_text_and_gaps_skip_the_regex_parser() {
        let words = |src: &str| {
            let prefixes = plain_sequence(src).unwrap_or_else(|| panic!("{src} not read"));
            prefixes.map(|w| w.words())
        };
        let one = |w: &str| Some(vec![w.as_bytes().to_vec()]);
        assert_eq!(words("git push .*main"), one("git push "));
        assert_eq!(words(r"curl .*prod\."), one("curl "));
        assert_eq!(words("docker run .*--privileged"), one("docker run "));
        assert_eq!(words(r"^rm\s+-rf\s+/$"), one("rm"));
        assert_eq!(words(r"\(x\).y"), one("(x)"));
        assert_eq!(
            words(r"git (push|pull)\s+(-f|--force)"),
            Some(vec![b"git push".to_vec(), b"git pull".to_vec()])
        );
        assert_eq!(
            words("(a|b)(c|d).*"),
            Some(vec![
                b"ac".to_vec(),
                b"ad".to_vec(),
                b"bc".to_vec(),
                b"bd".to_vec()
            ])
        );
        assert_eq!(
            words("(&&|;).*(&&|;).*(&&|;).*(&&|;)"),
            Some(vec![b"&&".to_vec(), b";".to_vec()])
        );
        for src in [".*x", r"\bword\b", r"^\s*#", "."] {
            assert_eq!(words(src), None, "{src}");
        }
        for src in [
            "",
            "^",
            "$",
            "a*",
            "a.*?b",
            "a.**",
            r"a\s+?",
            "(a|)b",
            "(a(b))",
            "((a)",
            "a|b.*c",
            "(?i)a.*b",
            "[ab].*c",
            "a{2}.*",
            r"a\d.*",
            r"a\w",
            r"a\S",
            r"a\B",
            "a.*b)",
            r"a\",
            r"a.\",
            "a^.*",
            "a$.*b",
            "(a|b)+",
            // Without a gap, a finite set of literals: the parser's.
            "(a)b",
            "git (push|pull)",
            "^(a|b)c$",
            // Too many prefixes before the gap.
            "(a|b)(c|d)(e|f)(g|h)(i|j)(k|l).*",
        ] {
            assert!(plain_sequence(src).is_none(), "{src}");
        }
        assert!(plain_sequence(&format!("a.*{}", "x".repeat(PLAIN_MAX_LEN))).is_none());
        // Without a gap, the exact literals answer even a value that
        // starts like them, and no regex is compiled.
        let p = Pattern::new("(npm|yarn) publish").unwrap();
        assert!(!p.is_match("npm install") && p.is_match("yarn publish --tag x"));
        assert!(!p.is_compiled());
    }

    #[test]
    fn the_largest_sequences_compile_far_under_the_size_limit() {
        // Read by hand, a sequence is compiled only at first use, so it must
        // never be big enough to fail there (see LAZY_MAX_COST).
        for gap in SEQUENCE_GAPS {
            let src = gap.repeat(PLAIN_MAX_LEN / gap.len());
            assert!(plain_sequence(&src).is_some(), "{src}");
            let re = regex::RegexBuilder::new(&src)
                .size_limit(SIZE_LIMIT / 4)
                .build();
            assert!(
                re.is_ok(),
                "{gap} x {}: {:?}",
                PLAIN_MAX_LEN / gap.len(),
                re.err()
            );
        }
    }

    #[test]
    fn a_value_without_the_prefixes_is_answered_without_compiling() {
        for (src, miss, hit) in [
            ("^sudo +", "ls -la", "sudo  rm x"),
            (r"\.env\s*$", "src/main.rs", "app/.env"),
            ("git push .*main", "git status", "git push origin main"),
            ("(&&|;).*(&&|;)", "ls -la src", "a && b; c"),
            ("(?i)npm +publish", "pip install", "NPM  Publish --tag x"),
        ] {
            let p = Pattern::new(src).unwrap();
            assert!(!p.is_match(miss), "{src} on {miss}");
            assert!(!p.is_compiled(), "{src} compiled for {miss}");
            assert!(p.is_match(hit), "{src} on {hit}");
            assert!(p.is_compiled());
        }
    }

    #[test]
    fn literal_patterns_are_answered_without_a_regex() {
        let haystacks = [
            "",
            "Bash",
            "bash",
            "BASH",
            "Bash ",
            " Bash",
            "xBashx",
            "Edit",
            "MultiEdit",
            "Edit\n",
            "\nEdit",
            "sudo rm",
            "  sudo",
            "npm publish",
            "NPM Publish",
            "k",
            "\u{212A}",
            "ſ",
            "S",
            "a",
            "aa",
            "ab",
        ];
        for src in [
            "^Bash$",
            "Bash",
            "^Bash",
            "Bash$",
            "^(Bash|Edit|MultiEdit)$",
            "^(?:Edit|Write)",
            "(Edit|Write)$",
            "^sudo ",
            // The same shapes past the plain-text reader, through the
            // regex parser's literal extraction.
            "^(?:Bash)$",
            "(?:Bash)$",
            "^(?:Bash|Edit|MultiEdit)$",
            "(?:Edit|Write)$",
            "^(?:sudo )",
            "(?i)npm",
            "(?i)k",
            "(?i)s",
            "^$",
            "",
            "a|",
            "^(a|)$",
            "a{2}",
            "^a{2}$",
            "(?-u:a)b?",
            "^b?$",
            "^Edit\n?$",
            "é|e\u{301}",
        ] {
            let p = Pattern::new(src).unwrap();
            let re = Regex::new(src).unwrap();
            for h in haystacks {
                assert_eq!(p.is_match(h), re.is_match(h), "{src:?} on {h:?}");
            }
            assert!(!p.is_compiled(), "{src:?} was compiled");
            assert!(
                p.0.literals.is_some(),
                "{src:?} is not answered by its literals"
            );
        }
        // Anything beyond plain text and the text anchors takes the regex.
        for src in ["(?m)^Bash$", r"\bBash\b", "^Ba.h$", "^Bash(?m:$)", "Bash+"] {
            let p = Pattern::new(src).unwrap();
            assert!(p.0.literals.is_none(), "{src:?}");
        }
    }

    #[test]
    fn patterns_without_a_required_literal_still_match() {
        for (src, hit, miss) in [
            (r"\w+", "x", " "),
            ("a|", "", "never: matches everything"),
            (r"(?i)k", "\u{212A}", "q"),
            (r"\bdrop\s+table\b", "DROP table; drop   table", "droptable"),
        ] {
            let p = Pattern::new(src).unwrap();
            let re = Regex::new(src).unwrap();
            assert_eq!(p.is_match(hit), re.is_match(hit), "{src} on {hit:?}");
            assert_eq!(p.is_match(miss), re.is_match(miss), "{src} on {miss:?}");
        }
    }

    #[test]
    fn words_are_found_wherever_they_are() {
        let words = ["ab", "abc", "b", "", "zz", "\u{e9}t\u{e9}"];
        let w = Words::new(words);
        assert_eq!(w.len(), 6);
        for text in ["", "a", "ab", "xabcx", "bzz", "zz", "été", "ét", "zabzzb"] {
            let want: Vec<bool> = words.iter().map(|x| text.contains(x)).collect();
            assert_eq!(w.found_in(text.as_bytes()), want, "{text:?}");
        }
        let none = Words::new(["ab", "cd"]);
        assert!(!none.any_in(b"acbd"));
        assert!(none.any_in(b"xxcd"));
        assert!(Words::new([""; 0]).is_empty());
        assert!(!Words::new([""; 0]).any_in(b"abc"));
    }

    #[test]
    fn errors_are_reported_at_load_on_one_line() {
        let e = Pattern::new("(unclosed").unwrap_err().0;
        assert!(e.starts_with("invalid regex `(unclosed`: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // Too big for the size limit: still a load-time error.
        let e = Pattern::new(r"\w{1000}").unwrap_err().0;
        assert!(e.contains("exceeds size limit"), "{e}");
        let e = Pattern::new(r"(?:.{100}){100}").unwrap_err().0;
        assert!(e.contains("exceeds size limit"), "{e}");
        // Nested repetitions: each level costs states of its own.
        for src in [r"x(?:(?:a*)*){0,8000}", r"(?:(?:(?:(?:a*)*)*)*){0,8000}"] {
            let e = Pattern::new(src).unwrap_err().0;
            assert!(e.contains("exceeds size limit"), "{src}: {e}");
        }
    }

    #[test]
    fn every_lazily_compiled_pattern_compiles() {
        // Just under the bound, in the shapes that cost the most per unit
        // of the estimate: each compiles within a third of the size limit.
        for src in [
            "a{1637}",
            "(a){1169}",
            "((((a)))){629}",
            "(?:a|){1023}",
            "(?:^a$){1169}",
            "(?:ab|cd|ef){629}",
            "(?:a*){0,909}",
            "(?:(?:a*)*){0,629}",
            "(?:(?:(?:(?:(?:(?:(?:(?:a*)*)*)*)*)*)*)*){0,200}",
            "(?:a*b*c*d*){340}",
            ".{61}",
            r"\d",
            r"\s{11}",
            r"(?i)[a-zé]{20}",
            r"[\x{80}-\x{10FFFF}]{119}",
        ] {
            let cost = estimate_of(src);
            assert!(
                cost <= LAZY_MAX_COST && cost > LAZY_MAX_COST / 2,
                "{src}: {cost}"
            );
            let p = Pattern::new(src).unwrap();
            assert!(!p.is_compiled(), "{src}");
            assert!(
                regex::RegexBuilder::new(src)
                    .size_limit(SIZE_LIMIT / 3)
                    .build()
                    .is_ok(),
                "{src} needs more than a third of the size limit"
            );
            assert!(p.regex().is_some(), "{src} did not compile");
        }
    }

    fn estimate_of(src: &str) -> u64 {
        estimate(&regex_syntax::Parser::new().parse(src).unwrap())
    }

    #[test]
    fn large_patterns_compile_at_load() {
        assert!(estimate_of(r"\w+") > LAZY_MAX_COST);
        assert!(Pattern::new(r"\w+").unwrap().is_compiled());
        assert!(!Pattern::new(".*").unwrap().is_compiled());
    }
}
