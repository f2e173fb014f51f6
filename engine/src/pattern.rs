//! [`Pattern`]: a policy regex that is checked when the policy loads and
//! compiled only when a value could match it.
//!
//! Every hook call is a fresh process that loads the whole policy, and most
//! of a policy's regexes never match the call at hand (`git push .*main`
//! against `ls -la`), and compiling a regex costs far more than parsing it.
//! So a pattern is parsed at load, which reports every syntax error
//! with the policy's file and line as before, and compiled at its first
//! use; before that, a value that holds none of the literals every match
//! must start with is answered "no match" without compiling anything.
//!
//! A pattern that only spells out literals (`^Bash$`, `^(Edit|Write)$`,
//! `npm publish`) is never compiled: it is answered by comparing strings,
//! as most HOOK.md and `when` matchers are.
//!
//! A pattern whose compiled size could come near the regex size limit is
//! compiled at load instead, so "regex too big" stays a load-time error and
//! a lazily compiled pattern cannot fail (docs/decisions.md, "Performance").
//!
//! Each pattern's size is bounded, and inside [`budgeted`] so is what all
//! the patterns built cost together: a repository's policy applies
//! without `ahp trust`, and six hundred `\w{1,20}` conditions made every
//! hook call take seconds.

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::Regex;
use regex_syntax::hir::{Class, Hir, HirKind, Look, literal};
use std::cell::Cell;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A bad matcher (an invalid regex, a map where a value was expected, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MatcherError(pub String);

/// The compiled-size limit of a policy regex, so a hostile pattern cannot
/// eat memory (the regex crate is linear-time already).
const SIZE_LIMIT: usize = 1 << 20;

/// Patterns whose estimated size (see [`estimate`]) is at most this are
/// compiled lazily: small enough that, in the regex crate's own accounting,
/// even the costliest shapes (alternations, captures and nested
/// repetitions repeated many times) stay well under [`SIZE_LIMIT`], so a
/// lazy pattern never fails to compile later. The tests below hold shapes
/// at the bound to a third of the limit.
const LAZY_MAX_COST: u64 = 8192;

/// What the patterns a repository's policy builds inside one [`budgeted`]
/// call may cost together, in [`estimate`]'s units: some hundreds of
/// milliseconds of compiling at worst, hundreds of `\w+` or thousands of
/// ASCII patterns.
const REPOSITORY_MAX_COST: u64 = 1 << 25;

/// The same for the policy the user and the organisation wrote: theirs to
/// make as large as they like, bounded only against a runaway.
const TRUSTED_MAX_COST: u64 = 1 << 28;

/// Whose policy a pattern belongs to, for [`budgeted`]: each has its own
/// budget, so a repository's patterns cannot use up what the user's need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payer {
    /// The builtin, managed and user layers.
    Trusted,
    /// A repository's policy, which applies without `ahp trust` (the
    /// default: what no one vouched for).
    Repository,
}

impl Payer {
    fn index(self) -> usize {
        match self {
            Payer::Trusted => 0,
            Payer::Repository => 1,
        }
    }

    fn limit(self) -> u64 {
        match self {
            Payer::Trusted => TRUSTED_MAX_COST,
            Payer::Repository => REPOSITORY_MAX_COST,
        }
    }
}

/// The budget of the current [`budgeted`] call.
#[derive(Clone, Copy)]
struct Budget {
    payer: Payer,
    spent: [u64; 2],
}

thread_local! {
    /// What the patterns built so far in the current [`budgeted`] call
    /// cost; `None` outside one.
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// Runs `f`, charging every [`Pattern`] it builds (on this thread) to a
/// budget: once the patterns together would cost more to compile than a
/// hook call can spend, each further pattern is an error. Patterns are
/// charged to the repository's budget unless [`paid_by`] says whose they
/// are. A call nested in another shares the outer budget.
///
/// ```
/// use ahp_engine::pattern::{budgeted, Pattern};
/// let built = budgeted(|| (0..1000).map(|i| Pattern::new(&format!(r"\w+q{i}"))).collect::<Vec<_>>());
/// assert!(built[0].is_ok());
/// let err = built[999].as_ref().err().unwrap();
/// assert!(err.0.contains("too costly to compile on every hook call"), "{err}");
/// // Outside a budget, each pattern is judged alone.
/// assert!(Pattern::new(r"\w+q999").is_ok());
/// ```
pub fn budgeted<T>(f: impl FnOnce() -> T) -> T {
    /// Ends the budget however `f` returns.
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            BUDGET.with(|s| s.set(None));
        }
    }
    if BUDGET.with(Cell::get).is_some() {
        return f();
    }
    BUDGET.with(|s| {
        s.set(Some(Budget {
            payer: Payer::Repository,
            spent: [0; 2],
        }))
    });
    let _scope = Scope;
    f()
}

/// Runs `f` with the patterns it builds charged to `payer`'s budget
/// (inside a [`budgeted`] call; outside one, patterns are not charged).
///
/// ```
/// use ahp_engine::pattern::{budgeted, paid_by, Pattern, Payer};
/// budgeted(|| {
///     let theirs: Vec<_> = (0..1000).map(|i| Pattern::new(&format!(r"\w+q{i}"))).collect();
///     assert!(theirs[999].is_err());
///     // The repository's patterns did not use up the user's budget.
///     assert!(paid_by(Payer::Trusted, || Pattern::new(r"deploy\s+\w+")).is_ok());
/// });
/// ```
pub fn paid_by<T>(payer: Payer, f: impl FnOnce() -> T) -> T {
    /// Gives the budget back to whoever paid before, however `f` returns.
    struct Restore(Payer);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|s| {
                if let Some(mut b) = s.get() {
                    b.payer = self.0;
                    s.set(Some(b));
                }
            });
        }
    }
    let Some(before) = BUDGET.with(Cell::get) else {
        return f();
    };
    BUDGET.with(|s| s.set(Some(Budget { payer, ..before })));
    let _restore = Restore(before.payer);
    f()
}

/// Charges `cost` to the current payer's budget, if any: false when it
/// would go over, and then nothing is charged.
fn charge(cost: u64) -> bool {
    BUDGET.with(|s| match s.get() {
        None => true,
        Some(mut b) => {
            let spent = &mut b.spent[b.payer.index()];
            let total = spent.saturating_add(cost);
            let fits = total <= b.payer.limit();
            if fits {
                *spent = total;
                s.set(Some(b));
            }
            fits
        }
    })
}

/// The error of a pattern past its payer's budget.
fn over_budget(source: &str) -> MatcherError {
    MatcherError(format!(
        "regex `{source}`: the policy's regexes together are too costly to compile on \
         every hook call, and this one goes past the limit; write fewer, or narrower \
         ones (an ASCII class such as `(?-u:\\w)` or `[a-z0-9_]` in place of `\\w`, \
         a repetition bound such as `{{1,20}}` only where it is needed)"
    ))
}

/// Charges a policy regex that an oracle compiles itself (not through
/// [`Pattern`]) to the current budget, as [`Pattern::new`] would: the same
/// error past it. A source that does not parse costs nothing here; its
/// compile reports it.
///
/// ```
/// use ahp_engine::pattern::{budgeted, charge_regex};
/// budgeted(|| {
///     let last = (0..1000).map(|i| charge_regex(&format!(r"\w+q{i}"), false)).last().unwrap();
///     assert!(last.unwrap_err().0.contains("too costly"));
/// });
/// ```
pub fn charge_regex(source: &str, case_insensitive: bool) -> Result<(), MatcherError> {
    if BUDGET.with(Cell::get).is_none() {
        return Ok(());
    }
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .build()
        .parse(source)
    else {
        return Ok(());
    };
    if charge(estimate(&hir)) {
        Ok(())
    } else {
        Err(over_budget(source))
    }
}

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

impl Pattern {
    /// Checks `source` and prepares it; the error reads like the regex
    /// crate's, on one line, prefixed with "invalid regex `source`".
    pub fn new(source: &str) -> Result<Pattern, MatcherError> {
        let invalid = |detail: &str| MatcherError(format!("invalid regex `{source}`: {detail}"));
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(source)
            .map_err(|e| invalid(&one_line(&e.to_string())))?;
        let regex = OnceLock::new();
        let cost = estimate(&hir);
        let seq = literal::Extractor::new().extract(&hir);
        let literals = Literals::of(&hir, &seq);
        // A pattern answered by its literals alone is never compiled.
        let over = (literals.is_none() || cost > LAZY_MAX_COST) && !charge(cost);
        // One that could never fit is too big on its own: the regex
        // crate's error says so (and stops at its size limit).
        let limit = BUDGET.with(Cell::get).map_or(u64::MAX, |b| b.payer.limit());
        if cost > LAZY_MAX_COST && (!over || cost > limit) {
            // Large enough that the size limit might bite: find out now.
            let re = compile(source).map_err(|e| invalid(&one_line(&e.to_string())))?;
            let _ = regex.set(Some(re));
        }
        if over {
            return Err(over_budget(source));
        }
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
        if let Some(prefixes) = &self.0.prefixes
            && !prefixes.any_in(haystack.as_bytes())
        {
            return false;
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

    /// The strings this pattern matches, when they are a finite set of
    /// literals, with whether a match must start the text and whether it
    /// must end it: `^(Edit|Write)$` is `(["Edit", "Write"], true, true)`,
    /// `^mcp__github` is `(["mcp__github"], true, false)`. `None` for any
    /// other pattern (`\w+`, `a.*b`, one that matches the empty string).
    ///
    /// ```
    /// use ahp_engine::pattern::Pattern;
    /// let p = Pattern::new("^(Edit|Write)$").unwrap();
    /// let (mut words, start, end) = p.exact_literals().unwrap();
    /// words.sort();
    /// assert_eq!((words, start, end), (vec![&b"Edit"[..], b"Write"], true, true));
    /// assert!(Pattern::new(r"^Bash\b").unwrap().exact_literals().is_none());
    /// ```
    pub fn exact_literals(&self) -> Option<(Vec<&[u8]>, bool, bool)> {
        match self.0.literals.as_ref()? {
            Literals::Anywhere(words) => words
                .empty
                .is_empty()
                .then(|| (words.sorted.iter().map(|w| &w[..]).collect(), false, false)),
            Literals::Anchored { words, start, end } => {
                Some((words.iter().map(|w| &w[..]).collect(), *start, *end))
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

    #[cfg(test)]
    fn is_compiled(&self) -> bool {
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

/// A set of words looked for in a text in one pass: the literal prefilter
/// of a [`Pattern`] and the word lists of a [`KeywordGate`].
///
/// Built for texts of a few KiB, such as a tool call: it costs next to
/// nothing to build (the words sorted by their first byte), where an
/// automaton or a vectorized searcher costs more to set up than such a
/// text takes to scan. Matching is exact: fold case before, if needed.
#[derive(Debug, Clone)]
struct Words {
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
/// per list the positions of its words among them.
fn keyword_ids<'a, I>(lists: I) -> (Vec<&'a str>, Vec<Vec<usize>>)
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

/// Which of several keyword lists a text holds a word of, ignoring ASCII
/// case: the gate in front of detectors that are compiled and run only when
/// one of their keywords is present (the log's credential masking,
/// SecurityScanner). A list with no words always passes.
///
/// ```
/// use ahp_engine::pattern::KeywordGate;
/// let gate = KeywordGate::new([&["curl", "wget"][..], &["eval"][..], &[][..]]);
/// assert_eq!(gate.select(b"WGET x | sh"), [true, false, true]);
/// assert!(gate.any(b"eval $x"));
/// ```
#[derive(Debug, Clone)]
pub struct KeywordGate {
    /// Every keyword once, lower case.
    keywords: Vec<String>,
    /// The same, scanned word by word: a tool call's few hundred bytes
    /// are scanned sooner than an automaton is built.
    words: Words,
    /// Built at the first text longer than [`KeywordGate::WORD_BY_WORD`];
    /// `None` when it fails to build, so that every list passes: slower,
    /// never blind.
    automaton: OnceLock<Option<AhoCorasick>>,
    /// Per list, the positions of its words in `keywords`.
    ids: Vec<Vec<usize>>,
}

impl KeywordGate {
    /// The gate of `lists`; [`KeywordGate::select`] answers in this order.
    pub fn new<'a, I>(lists: I) -> KeywordGate
    where
        I: IntoIterator<Item = &'a [&'a str]>,
    {
        let (words, ids) = keyword_ids(lists);
        let keywords: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        KeywordGate {
            words: Words::new(&keywords),
            keywords,
            automaton: OnceLock::new(),
            ids,
        }
    }

    /// Up to this many bytes a text is scanned word by word; above, with
    /// an Aho-Corasick automaton built once.
    const WORD_BY_WORD: usize = 4 * 1024;

    /// Whether `text` holds any word of any list (or a list is empty).
    pub fn any(&self, text: &[u8]) -> bool {
        if self.ids.iter().any(Vec::is_empty) {
            return true;
        }
        if text.len() <= Self::WORD_BY_WORD {
            return self.words.any_in(&text.to_ascii_lowercase());
        }
        self.found(text).iter().any(|&f| f)
    }

    /// For each list, whether `text` holds one of its words.
    pub fn select(&self, text: &[u8]) -> Vec<bool> {
        let found = self.found(text);
        self.ids
            .iter()
            .map(|ids| ids.is_empty() || ids.iter().any(|&i| found[i]))
            .collect()
    }

    /// For each keyword, whether `text` holds it.
    fn found(&self, text: &[u8]) -> Vec<bool> {
        if text.len() <= Self::WORD_BY_WORD {
            return self.words.found_in(&text.to_ascii_lowercase());
        }
        let Some(ac) = self.automaton() else {
            return vec![true; self.keywords.len()];
        };
        let mut found = vec![false; self.keywords.len()];
        let mut left = found.len();
        for m in ac.find_overlapping_iter(text) {
            let i = m.pattern().as_usize();
            if !found[i] {
                found[i] = true;
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
        found
    }

    fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton
            .get_or_init(|| {
                if self.keywords.is_empty() {
                    return None;
                }
                // A contiguous NFA builds quickly (a DFA would cost more
                // than a hook's whole scan) and still searches fast.
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(&self.keywords)
                    .ok()
            })
            .as_ref()
    }
}

impl Words {
    /// The set of `words`; [`Words::found_in`] reports them in this order.
    fn new<I, W>(words: I) -> Words
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
    fn len(&self) -> usize {
        self.sorted.len() + self.empty.len()
    }

    fn starting_with(&self, b: u8) -> std::ops::Range<usize> {
        let b = usize::from(b);
        self.start[b] as usize..self.start[b + 1] as usize
    }

    /// Whether `text` holds any of the words.
    fn any_in(&self, text: &[u8]) -> bool {
        !self.empty.is_empty()
            || (0..text.len()).any(|i| {
                self.sorted[self.starting_with(text[i])]
                    .iter()
                    .any(|w| text[i..].starts_with(w))
            })
    }

    /// For each word, in the order given to [`Words::new`], whether
    /// `text` holds it.
    fn found_in(&self, text: &[u8]) -> Vec<bool> {
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
    fn the_keyword_gate_answers_alike_for_short_and_long_texts() {
        let gate = KeywordGate::new([&["curl", "Wget"][..], &["eval"][..], &["nope"][..]]);
        let short = b"x; WGET y | EVAL z".to_vec();
        let mut long = b"filler ".repeat(2000);
        long.extend_from_slice(&short);
        assert!(long.len() > KeywordGate::WORD_BY_WORD);
        assert_eq!(gate.select(&short), [true, true, false]);
        assert_eq!(gate.select(&long), [true, true, false]);
        assert!(gate.any(&short) && gate.any(&long));
        assert!(!gate.any(&b"filler ".repeat(2000)));
    }

    #[test]
    fn escaped_and_grouped_literals_are_answered_without_compiling() {
        let p = Pattern::new(r"^\(x\|y\)$").unwrap();
        assert!(p.is_match("(x|y)") && !p.is_match("x"));
        assert!(!p.is_compiled());
        assert!(p.regex().is_some_and(|re| re.is_match("(x|y)")));
        let p = Pattern::new("(npm|yarn) publish").unwrap();
        assert!(!p.is_match("npm install") && p.is_match("yarn publish --tag x"));
        assert!(!p.is_compiled());
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
        assert_eq!(Words::new([""; 0]).len(), 0);
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
