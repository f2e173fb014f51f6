//! Masking of secrets before a record is written.

use ahp_engine::secrets;
use regex::bytes::Regex as BytesRegex;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What replaces a masked value.
pub const MASK: &str = "***";

/// Key names (case-insensitive, `-` and a camelCase hump read as `_`)
/// whose values are always masked; a key also matches when it ends in `_`
/// and one of them (`db_password`, `dbPassword`, `x-api-key`,
/// `set-cookie`), or in `_pwd` (`mysql_pwd`; `pwd` alone is a working
/// directory). `pass` is a name the text rule masks in `DB_PASS=…` too,
/// so that a JSON key is judged as its assignment is.
pub const SENSITIVE_KEYS: [&str; 22] = [
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pass",
    "secret",
    "secrets",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "secret_key",
    "private_key",
    "auth_key",
    "master_key",
    "encryption_key",
    "signing_key",
    "authorization",
    "cookie",
    "credential",
    "credentials",
    // A session's key (`sessionKey`). Not `auth` nor `pat`: as often a
    // kind (`basic`) or a pattern (`TODO`), which masking would then hide
    // wherever the record quotes it.
    "session_key",
];

/// The masking applied to every record before it is written, as OPA masks
/// its decision logs.
///
/// Two rules, applied anywhere in the record (signal payloads, run
/// contexts, response details, diagnostics):
///
/// 1. the value of an object key that names a secret — one of
///    [`SENSITIVE_KEYS`], one of [`Masking::keys`], or at the end of one
///    of the dotted [`Masking::paths`] (`tool.input.command` matches that
///    key path wherever it occurs, e.g. in a run's `context`) — is
///    replaced, whole, by `"***"`, and so is the `value` of an object
///    whose `name` is such a key (`{name: DB_PASSWORD, value: …}`);
/// 2. inside every string, every credential shape of
///    [`ahp_engine::secrets`] — the one list the SecurityScanner oracle
///    reports from — is masked whether or not any oracle ran: provider
///    tokens keep their prefix (`AKIA***`), private key blocks their
///    header, `API_TOKEN=abc`, `DB_PASS=abc`, `password: abc`,
///    `--password abc`, `mysql -pabc`, `sshpass -p abc`,
///    `curl -u user:abc`, `postgres://user:abc@host`,
///    `Authorization: Basic abc` and `Bearer abc` their name.
///
/// This is a **safety net, not a scanner**: it catches the shapes in
/// which secrets usually reach the log, not a secret under an innocent
/// name or a bare high-entropy string. It errs towards masking:
/// `token: expired` loses `expired`.
///
/// Records with nothing that could match (checked with one scan of the
/// serialized line) are written unchanged; the others are re-serialized,
/// with `kind` still first but the other keys in alphabetical order.
///
/// ```
/// use ahp_signals_log::Masking;
/// use serde_json::json;
/// let masking = Masking::default().with_keys(["ssn"]).with_paths(["tool.input.command"]);
/// let mut v = json!({
///     "tool": {"input": {"command": "deploy", "PASSWORD": "hunter2", "SSN": "078-05-1120"}},
///     "note": "ran with --token abc and DB_PASSWORD=hunter2",
/// });
/// masking.mask_value(&mut v);
/// assert_eq!(v, json!({
///     "tool": {"input": {"command": "***", "PASSWORD": "***", "SSN": "***"}},
///     "note": "ran with --token *** and DB_PASSWORD=***",
/// }));
/// ```
#[derive(Debug, Clone)]
pub struct Masking {
    enabled: bool,
    keys: Vec<String>,
    paths: Vec<Vec<String>>,
    trigger: Option<BytesRegex>,
    /// Values masked wherever they are quoted (longest first), with their
    /// JSON-escaped form for the pre-check.
    quoted: Vec<(String, String)>,
}

impl Default for Masking {
    /// The built-in key names and string patterns, no extra keys or paths.
    fn default() -> Masking {
        Masking {
            enabled: true,
            keys: Vec::new(),
            paths: Vec::new(),
            trigger: None,
            quoted: Vec::new(),
        }
    }
}

impl Masking {
    /// No masking at all: records are written exactly as serialized.
    pub fn none() -> Masking {
        Masking {
            enabled: false,
            ..Masking::default()
        }
    }

    /// Also masks the values of these keys (case-insensitive, exact).
    pub fn with_keys<I, S>(mut self, keys: I) -> Masking
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.keys
            .extend(keys.into_iter().map(|k| normalize(&k.into())));
        self.rebuild_trigger();
        self
    }

    /// Also masks the values at these dotted key paths (case-insensitive),
    /// matched against the end of a value's key path: `tool.input.command`
    /// masks `context.tool.input.command` of a run record.
    pub fn with_paths<I, S>(mut self, paths: I) -> Masking
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.paths.extend(
            paths
                .into_iter()
                .map(|p| p.into().split('.').map(normalize).collect::<Vec<_>>())
                .filter(|p| p.iter().all(|s| !s.is_empty())),
        );
        self.rebuild_trigger();
        self
    }

    /// Also masks, in every record, the values that masking hides in
    /// `context` (a dispatch's context: its `tool.input.password`), wherever
    /// a record's free text quotes them (its messages, reasons, tool
    /// input; never ahp's own fields): strings and numbers of 4 characters
    /// or more, and the long words of a many-word value (the token of
    /// `Basic TOKEN`). A signal's message that copied one
    /// (`{{ tool.input.password }}`) is a record of its own, without the
    /// key that would say what the text is.
    ///
    /// ```
    /// use ahp_signals_log::Masking;
    /// use serde_json::json;
    /// let m = Masking::default().quoting(&json!({"tool": {"input": {"password": "Pw-0fb2c9d1"}}}));
    /// let mut v = json!({"message": "logged in with Pw-0fb2c9d1"});
    /// m.mask_value(&mut v);
    /// assert_eq!(v, json!({"message": "logged in with ***"}));
    /// ```
    pub fn quoting(mut self, context: &Value) -> Masking {
        if !self.enabled {
            return self;
        }
        // What a key hides, and what a credential's shape hides in the
        // context's text: the shape is masked wherever it is whole, but a
        // message can quote the value apart from what made it a shape
        // (the shell's words of `mysql -pSECRET`: `-pSECRET`), or cut it
        // at a placeholder's length limit.
        let mut hidden = Vec::new();
        self.hidden_by_key(context, &mut Vec::new(), &mut hidden);
        shape_hidden(context, &mut hidden);
        if hidden.is_empty() {
            return self;
        }
        hidden.extend(self.quoted.drain(..).map(|(v, _)| v));
        self.quoted = longest_first(hidden)
            .into_iter()
            .map(|v| {
                let escaped = serde_json::to_string(&v).unwrap_or_default();
                let inner = escaped
                    .strip_prefix('"')
                    .and_then(|e| e.strip_suffix('"'))
                    .unwrap_or(&escaped)
                    .to_string();
                (v, inner)
            })
            .collect();
        self
    }

    /// The extra key names (normalized: lower case, `-` as `_`).
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The extra dotted paths (normalized).
    pub fn paths(&self) -> Vec<String> {
        self.paths.iter().map(|p| p.join(".")).collect()
    }

    fn rebuild_trigger(&mut self) {
        let extra: Vec<String> = self
            .keys
            .iter()
            .chain(self.paths.iter().filter_map(|p| p.last()))
            .map(|k| regex::escape(k).replace('_', "[_-]"))
            .collect();
        self.trigger = if extra.is_empty() {
            None
        } else {
            BytesRegex::new(&format!("(?i){}", extra.join("|"))).ok()
        };
    }

    /// Whether a serialized line might hold something to mask (a cheap
    /// pre-check; false positives only cost the slow path).
    ///
    /// Each string of the line is looked at on its own, as masking looks
    /// at it: a key for rule 1, a value for rule 2. Looked at whole, the
    /// line paired words from different strings (`curl` in an entry id,
    /// `-u` in `pre-tool-use`) and sent most records down the slow path.
    pub(crate) fn might_match(&self, line: &[u8]) -> bool {
        self.enabled
            && (self.trigger.as_ref().is_some_and(|t| t.is_match(line))
                || self.quoted.iter().any(|(_, escaped)| {
                    line.windows(escaped.len()).any(|w| w == escaped.as_bytes())
                })
                || json_strings(line).any(|(text, is_key)| {
                    if is_key {
                        key_might_be_sensitive(text)
                            || (!plain_key(text) && secrets::might_hold(text))
                    } else {
                        secrets::might_hold(text)
                    }
                }))
    }

    /// Masks `value` in place by both rules. A string masked under its key
    /// is also masked where the record's free text (its messages,
    /// reasons and tool input, never ahp's own fields)
    /// quotes it: a Rules message `{{ tool.input.password }}` copies the
    /// value there.
    pub fn mask_value(&self, value: &mut Value) {
        if self.enabled {
            let mut path = Vec::new();
            let mut hidden = Vec::new();
            self.walk(value, &mut path, &mut hidden);
            hidden.extend(self.quoted.iter().map(|(v, _)| v.clone()));
            let hidden = longest_first(hidden);
            if let Some(hidden) = Hidden::new(hidden) {
                mask_quoted(value, &hidden, false);
            }
        }
    }

    fn walk(&self, value: &mut Value, path: &mut Vec<String>, hidden: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.walk_map(map, path, hidden),
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v, path, hidden)),
            Value::String(s) => {
                if let Cow::Owned(masked) = mask_string(s) {
                    *s = masked;
                }
            }
            _ => {}
        }
    }

    fn walk_map(
        &self,
        map: &mut Map<String, Value>,
        path: &mut Vec<String>,
        hidden: &mut Vec<String>,
    ) {
        let named_secret = self.names_a_secret_pair(map);
        for (key, value) in map.iter_mut() {
            path.push(normalize(key));
            // `pwd` is a working directory, or ODBC's password: a value
            // that is no path is masked.
            let password = path.last().is_some_and(|k| k == "pwd")
                && value.as_str().is_some_and(|v| {
                    !v.is_empty() && !v.contains(['/', '\\']) && !v.starts_with(['~', '.'])
                });
            if password || self.hides(key, path, named_secret) {
                let was = std::mem::replace(value, Value::String(MASK.into()));
                strings_of(was, hidden);
            } else {
                self.walk(value, path, hidden);
            }
            path.pop();
        }
        // A key can be a credential too (`{"AKIA…": 1}`, an MCP tool's
        // map of URLs): masked like a value, its entry kept.
        rename_keys(map, |k| {
            if plain_key(k.as_bytes()) {
                return None;
            }
            match mask_string(k) {
                Cow::Owned(masked) => Some(masked),
                Cow::Borrowed(_) => None,
            }
        });
    }

    /// `{name: DB_PASSWORD, value: …}` (Kubernetes' `env` items): the
    /// value is a secret's though its own key is innocent.
    fn names_a_secret_pair(&self, map: &Map<String, Value>) -> bool {
        map.iter().any(|(k, v)| {
            normalize(k) == "name"
                && v.as_str()
                    .is_some_and(|n| self.is_secret_name(&normalize(n)))
        })
    }

    /// Whether the value of `key` (the last of `path`, normalized) is
    /// masked whole by rule 1.
    fn hides(&self, key: &str, path: &[String], named_secret: bool) -> bool {
        (named_secret && path.last().is_some_and(|k| k == "value"))
            || self.key_is_sensitive(path)
            // `tIcKeT` is `ticket` too, though its humps read as `t_ic_ke_t`.
            || self.is_secret_name(&lowered(key))
    }

    /// The strings that rule 1 hides in `value`.
    fn hidden_by_key(&self, value: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let named_secret = self.names_a_secret_pair(map);
                for (key, v) in map {
                    path.push(normalize(key));
                    if self.hides(key, path, named_secret) {
                        strings_of(v.clone(), out);
                    } else {
                        self.hidden_by_key(v, path, out);
                    }
                    path.pop();
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.hidden_by_key(v, path, out)),
            _ => {}
        }
    }

    fn key_is_sensitive(&self, path: &[String]) -> bool {
        let Some(key) = path.last() else {
            return false;
        };
        self.is_secret_name(key) || self.paths.iter().any(|p| path.ends_with(p))
    }

    /// Whether a normalized name is a secret's: one of [`SENSITIVE_KEYS`]
    /// (or ends in `_` and one) or of [`Masking::keys`].
    fn is_secret_name(&self, name: &str) -> bool {
        names_a_secret(name) || self.keys.iter().any(|k| k == name)
    }
}

/// The values the credential shapes mask in the strings of `value`.
fn shape_hidden(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if ahp_engine::secrets::might_hold(s.as_bytes()) => {
            if let std::borrow::Cow::Owned(masked) = ahp_engine::secrets::mask(s) {
                // A word of prose a shape took for a value (`Authorization:
                // check build`) would be masked everywhere: only what
                // looks made, not written.
                out.extend(
                    masked_spans(s, &masked)
                        .into_iter()
                        .filter(|v| looks_made(v)),
                );
            }
        }
        Value::Array(items) => items.iter().for_each(|v| shape_hidden(v, out)),
        Value::Object(map) => map.values().for_each(|v| shape_hidden(v, out)),
        _ => {}
    }
}

/// Whether `v` looks like a generated secret rather than a word: six
/// characters or more, with a digit, a symbol or both cases.
fn looks_made(v: &str) -> bool {
    v.chars().count() >= 6
        && (v.chars().any(|c| c.is_ascii_digit())
            || v.chars().any(|c| !c.is_alphanumeric())
            || (v.chars().any(char::is_uppercase) && v.chars().any(char::is_lowercase)))
}

/// What `masked` (`original` with credentials replaced by [`MASK`])
/// replaced: the text around each mask is found in order in the original,
/// and what lies between is the value.
fn masked_spans(original: &str, masked: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pieces = masked.split(MASK);
    let Some(first) = pieces.next() else {
        return out;
    };
    if !original.starts_with(first) {
        return out;
    }
    let mut at = first.len();
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        let rest = &original[at..];
        let len = if piece.is_empty() {
            if i + 1 == pieces.len() {
                rest.len()
            } else {
                continue;
            }
        } else {
            match rest.find(piece) {
                Some(n) => n,
                None => break,
            }
        };
        if len > 0 {
            out.push(rest[..len].to_string());
        }
        at += len + piece.len();
    }
    out
}

/// The values worth masking wherever quoted, longest first (a value that
/// holds another is masked whole); short ones (`on`, `1`) would mask
/// common text everywhere. A long word of a many-word value may be quoted
/// alone (the token of `Basic TOKEN`), so it is added; a word of letters
/// alone is too common to mask.
fn longest_first(mut values: Vec<String>) -> Vec<String> {
    let words: Vec<String> = values
        .iter()
        .filter(|v| v.contains(char::is_whitespace))
        .flat_map(|v| v.split_whitespace())
        .filter(|w| w.chars().count() >= 8 && !w.chars().all(char::is_alphabetic))
        .map(str::to_string)
        .collect();
    values.extend(words);
    values.retain(|v| v.chars().count() >= 4);
    values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    values
}

/// Every string in `value` (a masked key's value may be a list or a map).
fn strings_of(value: Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s != MASK => out.push(s),
        // Quoted in free text as its digits.
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.into_iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.into_iter().for_each(|(_, v)| strings_of(v, out)),
        _ => {}
    }
}

/// The keys whose values are free text or a tool's free-form data: a
/// value hidden elsewhere is masked where one of these quotes it, and
/// nowhere else. ahp's own fields (ids, `event`, `status`, `timestamp`,
/// `source`, `intensity`) are left as they are: an agent's `token: "tool"`
/// or a ticket `2026` made `pre-***-use` and `***-11-29`, and the reader
/// then skipped the record, blocked calls and all.
const FREE_TEXT: &[&str] = &[
    "reason",
    "resolution_path",
    "message",
    "suggestions",
    "context_info",
    "best_practices",
    "follow_ups",
    "description",
    "data",
    "details",
    "input",
    "response",
    "prompt",
    "value",
];

/// The values hidden under their keys, found in a string in one pass
/// whatever their number: a record of thousands of them must not cost
/// a pass per value over every string.
struct Hidden {
    values: Vec<String>,
    finder: aho_corasick::AhoCorasick,
}

impl Hidden {
    /// `None` when there is nothing to find.
    fn new(values: Vec<String>) -> Option<Hidden> {
        if values.is_empty() {
            return None;
        }
        let finder = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&values)
            .ok()?;
        Some(Hidden { values, finder })
    }

    /// `text` with every hidden value in it masked; `None` when it holds
    /// none.
    fn mask(&self, text: &str) -> Option<String> {
        self.finder.is_match(text).then(|| {
            let mut out = String::with_capacity(text.len());
            self.finder.replace_all_with(text, &mut out, |_, _, out| {
                out.push_str(MASK);
                true
            });
            out
        })
    }
}

/// Masks each hidden value wherever a string of `value` under a
/// [`FREE_TEXT`] key holds it.
fn mask_quoted(value: &mut Value, hidden: &Hidden, free: bool) {
    match value {
        Value::String(s) if free => {
            if let Some(masked) = hidden.mask(s) {
                *s = masked;
            }
            // A message cut at its placeholder's length limit (`…`) may
            // end inside a value: its start is masked too.
            if s.contains('…')
                && let Some(masked) = mask_cut_starts(s, &hidden.values)
            {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_quoted(v, hidden, free)),
        Value::Object(map) => {
            map.iter_mut()
                .for_each(|(k, v)| mask_quoted(v, hidden, free || FREE_TEXT.contains(&k.as_str())));
            // A key of free text can quote a hidden value too
            // (`{"map": {"<the password>": 1}}` in a tool's input).
            if free {
                rename_keys(map, |k| hidden.mask(k));
            }
        }
        _ => {}
    }
}

/// `s` with each start of a hidden value (4 characters or more, not all
/// of it) that runs into a `…` masked; `None` when there is none. The
/// work is bounded whatever the record holds: values longer than a
/// credential are left to the shapes, and only the first `…`s are looked
/// at (a cut placeholder leaves one).
fn mask_cut_starts(s: &str, hidden: &[String]) -> Option<String> {
    const LONGEST: usize = 512;
    const ELLIPSES: usize = 16;
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut changed = false;
    for _ in 0..ELLIPSES {
        let Some(at) = rest.find('…') else {
            break;
        };
        let before = &rest[..at];
        // The longest start of a value that the text before `…` ends with.
        let cut = hidden
            .iter()
            .filter(|h| h.len() <= LONGEST)
            .map(|h| start_at_end(before, h))
            .max()
            .unwrap_or(0);
        if cut > 0 {
            out.push_str(&before[..before.len() - cut]);
            out.push_str(MASK);
            changed = true;
        } else {
            out.push_str(before);
        }
        out.push('…');
        rest = &rest[at + '…'.len_utf8()..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// The length in bytes of the longest proper start of `value` (at least 4
/// characters) that `text` ends with; 0 when none. Linear: the prefix
/// function of `value`, then `text`'s last bytes run through it.
fn start_at_end(text: &str, value: &str) -> usize {
    let v = value.as_bytes();
    let mut fail = vec![0usize; v.len()];
    let mut k = 0;
    for i in 1..v.len() {
        while k > 0 && v[i] != v[k] {
            k = fail[k - 1];
        }
        if v[i] == v[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let tail = &text.as_bytes()[text.len().saturating_sub(v.len())..];
    let mut k = 0;
    for &b in tail {
        // A whole value was masked already: a match that long goes on as
        // its longest proper start.
        if k == v.len() {
            k = fail[k - 1];
        }
        while k > 0 && b != v[k] {
            k = fail[k - 1];
        }
        if b == v[k] {
            k += 1;
        }
    }
    if k == v.len() {
        k = fail[k - 1];
    }
    // At least 4 characters, and a whole character.
    let k = (0..=k)
        .rev()
        .find(|&i| value.is_char_boundary(i))
        .unwrap_or(0);
    let start = &value[..k];
    if start.chars().count() >= 4 && text.ends_with(start) {
        start.len()
    } else {
        0
    }
}

/// Renames the keys of `map` that `new_name` gives a new name, keeping
/// their values; a name taken already gets a number (`AKIA*** #2`).
fn rename_keys(map: &mut Map<String, Value>, new_name: impl Fn(&str) -> Option<String>) {
    let renamed: Vec<(String, String)> = map
        .keys()
        .filter_map(|k| new_name(k).map(|n| (k.clone(), n)))
        .collect();
    for (key, masked) in renamed {
        let Some(value) = map.remove(&key) else {
            continue;
        };
        let mut name = masked.clone();
        let mut n = 1;
        while map.contains_key(&name) {
            n += 1;
            name = format!("{masked} #{n}");
        }
        map.insert(name, value);
    }
}

/// Whether a normalized key is one of [`SENSITIVE_KEYS`] or ends in `_`
/// and one of them.
fn names_a_secret(key: &str) -> bool {
    // `pwd` alone is the working directory (the shell's `$PWD`); masked, it
    // would hide that folder in every path of the record. `MYSQL_PWD` is
    // a password.
    key.ends_with("_pwd")
        || SENSITIVE_KEYS
            .iter()
            .any(|n| key == *n || key.strip_suffix(n).is_some_and(|p| p.ends_with('_')))
}

/// Whether a key as serialized (escapes and all) might name a secret: an
/// escape or a non-UTF-8 byte is not worth decoding here, so it says yes.
fn key_might_be_sensitive(raw: &[u8]) -> bool {
    match std::str::from_utf8(raw) {
        Ok(key) if !key.contains('\\') => {
            let normal = normalize(key);
            // `pwd`: see `walk_map`.
            normal == "pwd" || names_a_secret(&normal) || names_a_secret(&lowered(key))
        }
        _ => true,
    }
}

/// The strings of a serialized JSON line, as written (escapes kept), each
/// with whether it is an object key. A keyword of the secret shapes holds
/// no quote, backslash or control character, so it is found in a string's
/// escaped form wherever it is in the string.
fn json_strings(line: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let open = at + line.get(at..)?.iter().position(|&b| b == b'"')?;
        let mut i = open + 1;
        while let Some(&b) = line.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        let text = line.get(open + 1..i.min(line.len()))?;
        at = i + 1;
        let is_key = line
            .get(at..)
            .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()))
            == Some(&b':');
        Some((text, is_key))
    })
}

/// A key of lower-case letters, digits and `_`, at most 40 long: a field
/// name (`correlation_id`), which no credential shape is (they hold upper
/// case, `-`, `:`, `/`, `=` or more characters), so the shapes are not
/// looked for in it.
fn plain_key(key: &[u8]) -> bool {
    key.len() <= 40
        && key
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

/// A key as masking compares it: lower case, with `-` and a camelCase
/// hump read as `_` (`dbPassword`, `DB-PASSWORD` and `db_password` are
/// one key).
fn normalize(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out.replace('-', "_")
}

/// A key lower-cased, `-` as `_`, with no camelCase humps read.
fn lowered(key: &str) -> String {
    key.to_lowercase().replace('-', "_")
}

/// Masks the credential shapes of rule 2 in one string.
fn mask_string(s: &str) -> Cow<'_, str> {
    secrets::mask(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_of_a_hidden_value_cut_by_a_limit_is_masked() {
        let h = ["Zx9Kq2Lm7Rt4".to_string()];
        let cut = |s: &str, h: &[String]| mask_cut_starts(s, h).unwrap_or_else(|| s.to_string());
        assert_eq!(cut("a=Zx9Kq2…", &h), "a=***…");
        assert_eq!(cut("a=Zx9…", &h), "a=Zx9…");
        assert_eq!(cut("x… a=Zx9Kq2Lm7Rt…", &h), "x… a=***…");
        assert_eq!(cut("no cut here", &h), "no cut here");
        assert_eq!(cut("xxxx…", &["x".repeat(600)]), "xxxx…");
    }

    #[test]
    fn every_sensitive_key_passes_the_trigger() {
        for key in SENSITIVE_KEYS {
            let line = format!(r#"{{"kind":"run","{key}":"x"}}"#);
            assert!(Masking::default().might_match(line.as_bytes()), "{key}");
            let upper = line.to_uppercase().replace('_', "-");
            assert!(Masking::default().might_match(upper.as_bytes()), "{key}");
        }
        assert!(!Masking::default().might_match(br#"{"kind":"run","command":"ls -la"}"#));
    }

    #[test]
    fn words_from_different_strings_do_not_pair_up() {
        // `curl` and `-u` in one string are the shape of `curl -u
        // user:password`; in two strings they are not.
        let apart = br#"{"kind":"run","event":"pre-tool-use","entries":[{"id":"curl-pipe-sh"}]}"#;
        assert!(!Masking::default().might_match(apart));
        let together = br#"{"kind":"run","command":"curl -u me:hunter2 https://x"}"#;
        assert!(Masking::default().might_match(together));
        // A keyword after an escaped quote is still inside its string.
        let escaped = br#"{"kind":"run","command":"echo "x" && curl -u me:hunter2 x"}"#;
        assert!(Masking::default().might_match(escaped));
        // A sensitive key written with an escape is taken as one.
        assert!(Masking::default().might_match(br#"{"kind":"run","pass\u0077ord":"x"}"#));
    }

    #[test]
    fn whatever_masking_changes_the_pre_check_lets_through() {
        let texts = [
            "curl -u me:hunter2 https://x",
            "mysql -u root -phunter22 shop",
            "psql postgres://app:hunter22@db/x",
            "DB_PASS=hunter22 ./run",
            "echo \"password: abc\"",
            "Authorization: Bearer abc123",
            "sshpass -p abc ssh host",
            "tool --api-key=k1",
            "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
            "tab\there token=abc",
        ];
        let masking = Masking::default();
        for text in texts {
            for value in [
                serde_json::json!({"kind": "run", "context": {"tool": {"input": {"command": text}}}}),
                serde_json::json!({"kind": "run", "entries": [{"id": "x", "message": text}]}),
                serde_json::json!({"kind": "run", "context": {text: "key, not value"}}),
            ] {
                let line = serde_json::to_vec(&value).unwrap_or_default();
                let mut masked = value.clone();
                masking.mask_value(&mut masked);
                if masked != value {
                    assert!(
                        masking.might_match(&line),
                        "{}",
                        String::from_utf8_lossy(&line)
                    );
                }
            }
        }
        for key in [
            "Password",
            "X-API-KEY",
            "db-password",
            "Set-Cookie",
            "dbPassword",
            "clientSecret",
            "SecretAccessKey",
            "secret_key",
        ] {
            let line = serde_json::to_vec(&serde_json::json!({"kind": "run", "env": {key: "v"}}))
                .unwrap_or_default();
            assert!(masking.might_match(&line), "{key}");
        }
        // A name/value pair is masked by its name, a value string: every
        // secret name must pass the pre-check there too.
        for name in SENSITIVE_KEYS
            .iter()
            .copied()
            .chain(["DB_PASSWORD", "stripeApiKey"])
        {
            let value = serde_json::json!({"kind": "run", "env": [{"name": name, "value": "v"}]});
            let mut masked = value.clone();
            masking.mask_value(&mut masked);
            assert_ne!(masked, value, "{name}");
            let line = serde_json::to_vec(&value).unwrap_or_default();
            assert!(masking.might_match(&line), "{name}");
        }
    }

    #[test]
    fn string_patterns_keep_the_name_and_lose_the_value() {
        let cases = [
            ("Authorization: Bearer abc123", "Authorization: Bearer ***"),
            (
                "curl -H 'authorization: token ghp_x'",
                "curl -H 'authorization: token ***'",
            ),
            ("use bearer eyJhbGc.x.y now", "use bearer *** now"),
            ("psql --password hunter2 -U me", "psql --password *** -U me"),
            (
                "tool --api-key=k1 --other x",
                "tool --api-key=*** --other x",
            ),
            ("GITHUB_TOKEN=ghp_abc make", "GITHUB_TOKEN=*** make"),
            (r#"{"password": "hunter2"}"#, r#"{"password": ***}"#),
            ("db_password: 's3cr et'", "db_password: ***"),
            ("nothing to see here", "nothing to see here"),
            ("tokens used: 3", "tokens used: 3"),
        ];
        for (input, want) in cases {
            assert_eq!(mask_string(input), want, "{input}");
        }
    }
}
