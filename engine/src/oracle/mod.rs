//! The Oracle trait, oracle errors, and the helpers constructors use to read
//! their `config:` map with clear errors.

mod de;

use crate::{HookContext, Intensity, Signal};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An oracle: looks at a context and says zero or more signals.
///
/// Returning no signal means "accept". Errors are handled by the entry's
/// `on_error` (fail open by default), so an oracle should return `Err` for
/// "I could not decide", never a made-up verdict.
///
/// ```
/// use ahp_engine::{async_trait, HookContext, Oracle, OracleError, Signal};
///
/// struct NoFridayDeploys;
///
/// #[async_trait]
/// impl Oracle for NoFridayDeploys {
///     async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
///         let cmd = ctx.lookup("tool.input.command");
///         let deploying = cmd.as_deref().and_then(|v| v.as_str()).is_some_and(|c| c.contains("deploy"));
///         Ok(if deploying { vec![Signal::prompt("deploying: is it Friday?")] } else { vec![] })
///     }
/// }
/// ```
#[async_trait]
pub trait Oracle: Send + Sync {
    /// Evaluates the oracle against the event's context.
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError>;

    /// Evaluates and also returns notes for the log (e.g. a script hook's
    /// `log` output). The engine calls this one; the default wraps
    /// [`Oracle::evaluate`] with no notes, so most oracles implement only
    /// `evaluate`.
    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        Ok(Evaluation {
            signals: self.evaluate(ctx).await?,
            ..Evaluation::default()
        })
    }

    /// The intensity this oracle raises when nothing overrides it, for
    /// `ahp explain` and load-time checks. `None` when it depends on config.
    fn default_intensity(&self) -> Option<Intensity> {
        None
    }

    /// How long one evaluation may take by the oracle's own settings (a
    /// command's `timeout_ms`), when that is known. An entry without its
    /// own `timeout` gets at least this, and a moment more, as its time
    /// limit: a longer default (`settings.timeout`) cut a ten-minute test
    /// run at 30 s, and the gate failed open.
    ///
    /// ```
    /// use ahp_engine::{async_trait, HookContext, Oracle, OracleError, Signal};
    /// use std::time::Duration;
    ///
    /// struct Suite;
    /// #[async_trait]
    /// impl Oracle for Suite {
    ///     async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
    ///         Ok(vec![])
    ///     }
    ///     fn time_needed(&self) -> Option<Duration> {
    ///         Some(Duration::from_secs(600))
    ///     }
    /// }
    /// assert_eq!(Suite.time_needed(), Some(Duration::from_secs(600)));
    /// ```
    fn time_needed(&self) -> Option<Duration> {
        None
    }

    /// Settings the oracle accepted but cannot fully honour here, each
    /// with why: `ahp validate` (and every load) shows them as warnings at
    /// the key's line, so a setting never silently does less than it says.
    fn config_warnings(&self) -> Vec<OracleConfigWarning> {
        Vec::new()
    }
}

/// A setting an oracle accepted but cannot fully honour (see
/// [`Oracle::config_warnings`]); `key` is the dotted path inside `config`,
/// as for [`OracleConfigError`].
pub type OracleConfigWarning = OracleConfigError;

/// What one evaluation produced: signals for the verdict, notes that are
/// only recorded (as `info` records), and secrets the oracle saw that must
/// not leave the process.
///
/// ```
/// use ahp_engine::{Evaluation, Signal};
/// let ev = Evaluation::from(vec![Signal::block("a secret in the input")])
///     .with_redactions(["AKIAEXAMPLEEXAMPLE12"]);
/// assert_eq!(ev.redactions, ["AKIAEXAMPLEEXAMPLE12"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    /// The signals (none = accept).
    pub signals: Vec<Signal>,
    /// Lines for the log, not for the agent.
    pub notes: Vec<String>,
    /// Secret values found in the context (e.g. by a scanner). The engine
    /// replaces every occurrence of each (at least
    /// [`MIN_REDACTION_LEN`](crate::dispatch::MIN_REDACTION_LEN) characters
    /// long) with `***` in everything of the dispatch that leaves the
    /// process: every signal, diagnostic and applied change of the verdict,
    /// and the run record's input context.
    pub redactions: Vec<String>,
}

impl From<Vec<Signal>> for Evaluation {
    fn from(signals: Vec<Signal>) -> Self {
        Evaluation {
            signals,
            ..Evaluation::default()
        }
    }
}

impl Evaluation {
    /// Adds secret values to redact (see [`Evaluation::redactions`]).
    pub fn with_redactions<I, S>(mut self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redactions.extend(secrets.into_iter().map(Into::into));
        self
    }
}

/// An oracle could not reach a decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OracleError {
    /// What went wrong, for the log and stderr.
    pub message: String,
}

impl OracleError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        OracleError {
            message: message.into(),
        }
    }
}

/// A bad `config:` value for an oracle. `key` is the dotted path inside
/// `config` (e.g. `rules.0.condition`), so the loader can point at the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", key.as_ref().map(|k| format!("config.{k}: ")).unwrap_or_default())]
pub struct OracleConfigError {
    /// Dotted path inside `config`, when one key is at fault.
    pub key: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl OracleConfigError {
    /// An error about one key.
    pub fn at(key: impl Into<String>, message: impl Into<String>) -> Self {
        OracleConfigError {
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// An error about the config as a whole.
    pub fn whole(message: impl Into<String>) -> Self {
        OracleConfigError {
            key: None,
            message: message.into(),
        }
    }
}

/// What an oracle constructor receives: its `config:` map and where the
/// project is.
///
/// Read it into a settings type with [`OracleConfig::parse`].
#[derive(Debug, Clone, Copy)]
pub struct OracleConfig<'a> {
    value: &'a Value,
    project_dir: Option<&'a Path>,
    shared_tool_name: Option<crate::context_shape::SharedToolName>,
}

static EMPTY: Value = Value::Null;

impl<'a> OracleConfig<'a> {
    /// Wraps a config value (`null` or a map).
    pub fn new(value: &'a Value, project_dir: Option<&'a Path>) -> Self {
        OracleConfig {
            value,
            project_dir,
            shared_tool_name: None,
        }
    }

    /// With the agents' tool names (see
    /// [`crate::context_shape::check_tool_name`]), so that an oracle can
    /// tell that a condition on `tool.name == 'Bash'` never holds.
    ///
    /// ```
    /// use ahp_engine::OracleConfig;
    /// let shared = |n: &str| (n == "Bash").then_some("shell");
    /// let cfg = OracleConfig::empty().with_shared_tool_name(shared);
    /// assert_eq!(cfg.shared_tool_name().and_then(|f| f("Bash")), Some("shell"));
    /// ```
    pub fn with_shared_tool_name(self, f: crate::context_shape::SharedToolName) -> Self {
        OracleConfig {
            shared_tool_name: Some(f),
            ..self
        }
    }

    /// The agents' tool names, when the caller gave them.
    pub fn shared_tool_name(&self) -> Option<crate::context_shape::SharedToolName> {
        self.shared_tool_name
    }

    /// An empty config.
    pub fn empty() -> OracleConfig<'static> {
        OracleConfig {
            value: &EMPTY,
            project_dir: None,
            shared_tool_name: None,
        }
    }

    /// The raw value.
    pub fn value(&self) -> &'a Value {
        self.value
    }

    /// The project root, when known.
    pub fn project_dir(&self) -> Option<PathBuf> {
        self.project_dir.map(Path::to_path_buf)
    }

    /// Reads the whole config into the oracle's settings type: absent is
    /// an empty map, unknown keys are refused with a "did you mean" when
    /// `T` denies them, and an error names the dotted key at fault.
    ///
    /// ```
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// #[derive(serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Limits { max_files: u32 }
    /// let ok: Limits = OracleConfig::new(&json!({"max_files": 20}), None).parse().unwrap();
    /// assert_eq!(ok.max_files, 20);
    /// let err = OracleConfig::new(&json!({"max_file": 20}), None).parse::<Limits>().err().unwrap();
    /// assert_eq!(err.to_string(), "config.max_file: unknown key `max_file`; did you mean `max_files`?");
    /// ```
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, OracleConfigError> {
        match self.value {
            Value::Null => de::from_value(&Value::Object(Map::new()), ""),
            Value::Object(_) => de::from_value(self.value, ""),
            other => Err(OracleConfigError::whole(format!(
                "`config` must be a map of settings, found {}",
                kind_of(other)
            ))),
        }
    }
}

/// Reads a settings value (an oracle's config, or a part of a policy
/// file) into `T`, as [`OracleConfig::parse`] does, with no special
/// meaning for `null`.
///
/// ```
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Entry { priority: Option<i64> }
/// let err = ahp_engine::oracle::from_value::<Entry>(&serde_json::json!({"priorty": 1})).err().unwrap();
/// assert_eq!(err.key.as_deref(), Some("priorty"));
/// ```
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, OracleConfigError> {
    de::from_value(value, "")
}

/// Every error of reading `value`, not only `first`: the key at fault of
/// each error is taken out of `value` and `read` tried again, until it
/// reads, an error names no key of a map, or a required key taken out
/// would only be reported missing. So one `ahp validate` lists a misspelt
/// key, a wrong value and an unknown setting of the same entry together;
/// what is left of `value` may read, for the checks that come after.
///
/// ```
/// use ahp_engine::oracle::{every_error, from_value};
/// use serde_json::json;
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Entry { priority: Option<i64>, name: Option<String> }
/// let mut value = json!({"priorty": 1, "name": 2, "oops": true});
/// let first = from_value::<Entry>(&value).err().unwrap();
/// let all = every_error(&mut value, first, |v| from_value::<Entry>(v).map(drop));
/// let keys: Vec<_> = all.iter().filter_map(|e| e.key.as_deref()).collect();
/// assert_eq!(keys, ["name", "oops", "priorty"]);
/// assert!(from_value::<Entry>(&value).is_ok());
/// ```
pub fn every_error(
    value: &mut Value,
    first: OracleConfigError,
    mut read: impl FnMut(&Value) -> Result<(), OracleConfigError>,
) -> Vec<OracleConfigError> {
    const MAX_ERRORS: usize = 16;
    let mut errors = vec![first];
    while errors.len() < MAX_ERRORS {
        let Some(key) = errors.last().and_then(|e| e.key.clone()) else {
            break;
        };
        if !take_out(value, &key) {
            break;
        }
        let Err(e) = read(value) else {
            break;
        };
        // The key taken out, now missing, is no second error.
        let (parent, name) = key.rsplit_once('.').unwrap_or(("", &key));
        if e.key.as_deref() == Some(key.as_str())
            || e.key.as_deref().unwrap_or("") == parent
                && e.message.starts_with(&format!("missing `{name}`"))
        {
            break;
        }
        errors.push(e);
    }
    errors
}

/// Removes the map entry at dotted `path` (`rules.0.intensity`) from
/// `value`; whether there was one.
fn take_out(value: &mut Value, path: &str) -> bool {
    let (parent, name) = path.rsplit_once('.').unwrap_or(("", path));
    let mut at = value;
    for step in parent.split('.').filter(|s| !s.is_empty()) {
        let next = match at {
            Value::Object(m) => m.get_mut(step),
            Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else {
            return false;
        };
        at = next;
    }
    match at {
        Value::Object(m) => m.remove(name).is_some(),
        _ => false,
    }
}

/// A short name for a JSON value's type, for error messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// A settings value written as one string or a list of them (`exclude:
/// "*.lock"` or `exclude: ["*.lock", "dist/**"]`).
///
/// ```
/// use ahp_engine::{OracleConfig, oracle::Strings};
/// #[derive(serde::Deserialize)]
/// struct S { exclude: Strings }
/// let one: S = OracleConfig::new(&serde_json::json!({"exclude": "*.lock"}), None).parse().unwrap();
/// assert_eq!(one.exclude.0, ["*.lock"]);
/// let many: S = OracleConfig::new(&serde_json::json!({"exclude": ["a", "b"]}), None).parse().unwrap();
/// assert_eq!(many.exclude.0, ["a", "b"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings(pub Vec<String>);

impl<'de> serde::Deserialize<'de> for Strings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Strings;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E>(self, s: &str) -> Result<Strings, E> {
                Ok(Strings(vec![s.to_string()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Strings, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = a.next_element::<String>()? {
                    out.push(s);
                }
                Ok(Strings(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl schemars::JsonSchema for Strings {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Strings".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}}
            ]
        })
    }
}
