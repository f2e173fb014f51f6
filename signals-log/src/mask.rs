//! Masking of secrets before a record is written.

use ahp_engine::secrets;
use regex::bytes::Regex as BytesRegex;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What replaces a masked value.
pub const MASK: &str = "***";

/// Key names (case-insensitive, `-` read as `_`) whose values are always
/// masked; a key also matches when it ends in `_` + one of them
/// (`db_password`, `x-api-key`, `set-cookie`).
pub const SENSITIVE_KEYS: [&str; 12] = [
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "authorization",
    "cookie",
    "credential",
    "credentials",
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
///    replaced, whole, by `"***"`;
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
}

impl Default for Masking {
    /// The built-in key names and string patterns, no extra keys or paths.
    fn default() -> Masking {
        Masking {
            enabled: true,
            keys: Vec::new(),
            paths: Vec::new(),
            trigger: None,
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
    pub(crate) fn might_match(&self, line: &[u8]) -> bool {
        self.enabled
            && (secrets::might_hold(line)
                || self.trigger.as_ref().is_some_and(|t| t.is_match(line)))
    }

    /// Masks `value` in place by both rules.
    pub fn mask_value(&self, value: &mut Value) {
        if self.enabled {
            let mut path = Vec::new();
            self.walk(value, &mut path);
        }
    }

    fn walk(&self, value: &mut Value, path: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.walk_map(map, path),
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v, path)),
            Value::String(s) => {
                if let Cow::Owned(masked) = mask_string(s) {
                    *s = masked;
                }
            }
            _ => {}
        }
    }

    fn walk_map(&self, map: &mut Map<String, Value>, path: &mut Vec<String>) {
        for (key, value) in map.iter_mut() {
            path.push(normalize(key));
            if self.key_is_sensitive(path) {
                *value = Value::String(MASK.into());
            } else {
                self.walk(value, path);
            }
            path.pop();
        }
    }

    fn key_is_sensitive(&self, path: &[String]) -> bool {
        let Some(key) = path.last() else {
            return false;
        };
        SENSITIVE_KEYS
            .iter()
            .any(|n| key == n || key.strip_suffix(n).is_some_and(|p| p.ends_with('_')))
            || self.keys.iter().any(|k| k == key)
            || self.paths.iter().any(|p| path.ends_with(p))
    }
}

fn normalize(key: &str) -> String {
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
