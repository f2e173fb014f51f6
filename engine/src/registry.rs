//! The oracle registry: names (PascalCase and kebab-case) to constructors.

use crate::suggest::did_you_mean;
use crate::{Oracle, OracleConfig, OracleConfigError};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Builds an oracle from its entry's config.
pub type Constructor =
    Arc<dyn Fn(OracleConfig<'_>) -> Result<Arc<dyn Oracle>, OracleConfigError> + Send + Sync>;

/// One registered oracle.
#[derive(Clone)]
pub struct OracleInfo {
    /// The PascalCase name (`PermissionChecker`).
    pub name: String,
    /// The kebab-case name (`permission-checker`).
    pub kebab: String,
    /// One line on what it does.
    pub description: String,
    /// The `config` keys that hold commands it runs (test runners, linters,
    /// …). Set from a project's committed policy, they are code from the
    /// repository and need the user's trust. Entries with command keys are
    /// also left out of `ahp signals replay` unless asked for.
    pub command_keys: Vec<String>,
    /// Other `config` keys whose values, set by a project's committed
    /// policy, act on the user's machine though they run no command: a
    /// Rules control that rewrites a tool input before the agent runs it, a
    /// path a file is written to. They need trust like command keys. A key
    /// is a dotted path; `*` stands for every item of a list
    /// (`rules.*.modifications`).
    pub trust_keys: Vec<String>,
    /// Whether an entry of this oracle that a repository's policy defines
    /// needs trust whatever its config: it writes files (a retrospective,
    /// an archived issue), and an untrusted checkout writes nothing.
    pub writes_files: bool,
    /// What `ahp signals tune` may suggest for this oracle beyond its
    /// generic advice.
    pub tuning: Tuning,
    config_schema: Option<SchemaFn>,
    ctor: Constructor,
}

/// Writes the JSON Schema of an oracle's settings type into a generator.
type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// The config keys `ahp signals tune` names in its advice about an
/// oracle, so that the analytics need not know any oracle by name.
///
/// ```
/// use ahp_engine::registry::{Registry, Tuning};
/// let mut r = Registry::new();
/// # r.register("FileChangeLimiter", "limits changes", |_| unreachable!());
/// r.set_tuning("FileChangeLimiter", Tuning { files_limit_key: Some("max_files".into()), ..Tuning::default() });
/// assert_eq!(r.tuning("file-change-limiter").files_limit_key.as_deref(), Some("max_files"));
/// assert_eq!(r.tuning("Unknown"), Tuning::default());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuning {
    /// The key that caps how many files a change may touch: when the
    /// oracle's prompts are mostly dismissed, tune suggests raising it to
    /// the 90th percentile of changed files.
    pub files_limit_key: Option<String>,
    /// The key listing what the oracle blocks: when its blocks are mostly
    /// overridden, tune suggests reviewing that list.
    pub block_list_key: Option<String>,
}

impl std::fmt::Debug for OracleInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OracleInfo")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish()
    }
}

/// Why an oracle could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// No oracle has that name.
    #[error("unknown oracle `{name}`{}; known oracles: {}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default(), known.join(", "))]
    Unknown {
        /// The name given.
        name: String,
        /// The closest known name.
        suggestion: Option<String>,
        /// Every registered name.
        known: Vec<String>,
    },
    /// The constructor rejected the config.
    #[error("{0}")]
    Config(#[from] OracleConfigError),
}

/// `PermissionChecker` → `permission-checker`.
pub fn to_kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c == '_' {
            out.push('-');
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// Maps oracle names to constructors.
///
/// ```
/// use ahp_engine::{async_trait, HookContext, Oracle, OracleConfig, OracleError, Registry, Signal};
/// use std::sync::Arc;
///
/// struct Quiet;
/// #[async_trait]
/// impl Oracle for Quiet {
///     async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> { Ok(vec![]) }
/// }
///
/// let mut reg = Registry::new();
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct NoSettings {}
/// reg.register("QuietOracle", "says nothing", |cfg: OracleConfig<'_>| {
///     cfg.parse::<NoSettings>()?;
///     Ok(Arc::new(Quiet) as Arc<dyn Oracle>)
/// });
/// assert_eq!(reg.resolve("quiet-oracle"), Some("QuietOracle"));
/// assert!(reg.build("QuietOracle", OracleConfig::empty()).is_ok());
/// let err = reg.build("QuietOracel", OracleConfig::empty()).err().unwrap();
/// assert!(err.to_string().contains("did you mean `QuietOracle`"));
/// ```
#[derive(Clone, Default, Debug)]
pub struct Registry {
    oracles: BTreeMap<String, OracleInfo>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers (or replaces) an oracle under its PascalCase name; the
    /// kebab-case form is accepted too.
    pub fn register<F>(&mut self, name: &str, description: &str, ctor: F) -> &mut Self
    where
        F: Fn(OracleConfig<'_>) -> Result<Arc<dyn Oracle>, OracleConfigError>
            + Send
            + Sync
            + 'static,
    {
        self.oracles.insert(
            name.to_string(),
            OracleInfo {
                name: name.to_string(),
                kebab: to_kebab(name),
                description: description.to_string(),
                command_keys: Vec::new(),
                trust_keys: Vec::new(),
                writes_files: false,
                tuning: Tuning::default(),
                config_schema: None,
                ctor: Arc::new(ctor),
            },
        );
        self
    }

    /// Declares which `config` keys of `name` hold commands it runs (see
    /// [`OracleInfo::command_keys`]). Returns false when `name` is unknown.
    pub fn set_command_keys(&mut self, name: &str, keys: &[&str]) -> bool {
        self.info_mut(name)
            .map(|info| info.command_keys = keys.iter().map(|k| k.to_string()).collect())
            .is_some()
    }

    /// The `config` keys of `name` that hold commands (empty for most).
    pub fn command_keys(&self, name: &str) -> &[String] {
        self.info(name).map_or(&[], |i| i.command_keys.as_slice())
    }

    /// Declares which other `config` keys of `name` need trust when a
    /// project sets them (see [`OracleInfo::trust_keys`]). Returns false
    /// when `name` is unknown.
    ///
    /// ```
    /// use ahp_engine::Registry;
    /// let mut r = Registry::new();
    /// # r.register("Rules", "rules", |_| unreachable!());
    /// assert!(r.set_trust_keys("Rules", &["rules.*.modifications"]));
    /// assert_eq!(r.trust_keys("rules"), ["rules.*.modifications"]);
    /// assert!(r.command_keys("Rules").is_empty());
    /// ```
    pub fn set_trust_keys(&mut self, name: &str, keys: &[&str]) -> bool {
        self.info_mut(name)
            .map(|info| info.trust_keys = keys.iter().map(|k| k.to_string()).collect())
            .is_some()
    }

    /// Declares that `name` writes files (see [`OracleInfo::writes_files`]).
    /// Returns false when `name` is unknown.
    ///
    /// ```
    /// use ahp_engine::Registry;
    /// let mut r = Registry::new();
    /// # r.register("Notes", "writes notes", |_| unreachable!());
    /// assert!(!r.writes_files("Notes"));
    /// assert!(r.set_writes_files("Notes"));
    /// assert!(r.writes_files("notes"));
    /// ```
    pub fn set_writes_files(&mut self, name: &str) -> bool {
        self.info_mut(name)
            .map(|info| info.writes_files = true)
            .is_some()
    }

    /// Declares what `ahp signals tune` may suggest for `name` (see
    /// [`Tuning`]). Returns false when `name` is unknown.
    pub fn set_tuning(&mut self, name: &str, tuning: Tuning) -> bool {
        self.info_mut(name)
            .map(|info| info.tuning = tuning)
            .is_some()
    }

    /// What `ahp signals tune` may suggest for `name` (nothing beyond the
    /// generic advice for an unknown name).
    pub fn tuning(&self, name: &str) -> Tuning {
        self.info(name)
            .map(|i| i.tuning.clone())
            .unwrap_or_default()
    }

    /// Declares `C` as the type `name` reads its `config:` into (with
    /// [`OracleConfig::parse`]), so that `ahp schema` can describe its keys
    /// and an editor flag a wrong one. Returns false when `name` is unknown.
    ///
    /// ```
    /// use ahp_engine::Registry;
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Limits { max_files: u32 }
    /// let mut r = Registry::new();
    /// # r.register("Limiter", "limits", |_| unreachable!());
    /// assert!(r.set_config::<Limits>("Limiter"));
    /// let mut generator = schemars::SchemaGenerator::default();
    /// assert!(r.config_schema("limiter", &mut generator).is_some());
    /// ```
    pub fn set_config<C: JsonSchema>(&mut self, name: &str) -> bool {
        fn schema_of<C: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
            generator.subschema_for::<C>()
        }
        self.info_mut(name)
            .map(|info| info.config_schema = Some(schema_of::<C>))
            .is_some()
    }

    /// The schema of `name`'s settings (usually a reference into
    /// `generator`'s definitions), when it declared them with
    /// [`Registry::set_config`].
    pub fn config_schema(&self, name: &str, generator: &mut SchemaGenerator) -> Option<Schema> {
        self.info(name)?.config_schema.map(|f| f(generator))
    }

    /// Whether `name` writes files (false for an unknown name).
    pub fn writes_files(&self, name: &str) -> bool {
        self.info(name).is_some_and(|i| i.writes_files)
    }

    fn info_mut(&mut self, name: &str) -> Option<&mut OracleInfo> {
        let canonical = self.resolve(name)?.to_string();
        self.oracles.get_mut(&canonical)
    }

    /// The `config` keys of `name` that need trust without holding a
    /// command (empty for most).
    pub fn trust_keys(&self, name: &str) -> &[String] {
        self.info(name).map_or(&[], |i| i.trust_keys.as_slice())
    }

    /// The PascalCase name for `name` in either form.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        self.info(name).map(|i| i.name.as_str())
    }

    /// The registration for `name` in either form.
    pub fn info(&self, name: &str) -> Option<&OracleInfo> {
        self.oracles.get(name).or_else(|| {
            let kebab = to_kebab(name);
            self.oracles.values().find(|i| i.kebab == kebab)
        })
    }

    /// Every registration, by name.
    pub fn iter(&self) -> impl Iterator<Item = &OracleInfo> {
        self.oracles.values()
    }

    /// Every PascalCase name.
    pub fn names(&self) -> Vec<String> {
        self.oracles.keys().cloned().collect()
    }

    /// Builds the oracle `name` from `config`.
    pub fn build(
        &self,
        name: &str,
        config: OracleConfig<'_>,
    ) -> Result<Arc<dyn Oracle>, BuildError> {
        let Some(info) = self.info(name) else {
            let candidates: Vec<&str> = self
                .oracles
                .values()
                .flat_map(|i| [i.name.as_str(), i.kebab.as_str()])
                .collect();
            let suggestion =
                did_you_mean(name, candidates).map(|s| self.resolve(s).unwrap_or(s).to_string());
            return Err(BuildError::Unknown {
                name: name.to_string(),
                suggestion,
                known: self.names(),
            });
        };
        Ok((info.ctor)(config)?)
    }
}

#[cfg(test)]
mod tests {
    use super::to_kebab;

    #[test]
    fn kebab_forms() {
        assert_eq!(to_kebab("ChecklistValidator"), "checklist-validator");
        assert_eq!(to_kebab("Rules"), "rules");
        assert_eq!(to_kebab("checklist-validator"), "checklist-validator");
        assert_eq!(to_kebab("checklist_validator"), "checklist-validator");
    }
}
