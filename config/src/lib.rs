//! Configuration of ahp: the layered hooks.yaml files, merged per
//! (event, id) with provenance, `when` conditions, and the JSON Schema.
//!
//! Layers, later ones winning: `builtin` (ahp's default policy, always the
//! bottom layer unless `settings.builtin: false`) → `~/.ahp/hooks.yaml`
//! (user) → `<project>/.ahp/hooks.yaml` (project) →
//! `<project>/.ahp/hooks.local.yaml` (local). Every value keeps the file,
//! line and column it came from, so errors and `ahp config` point at the
//! right place. [`LoadedConfig::load_with_errors`] and
//! [`LoadedConfig::compile_with_errors`] leave a broken part out and list
//! why, so one mistake does not switch the rest of the policy off.
//!
//! HOOK.md script hooks (`hookmd`) are discovered here too and compiled
//! into entries of the `Script` oracle, ordered with the hooks.yaml entries.
//!
//! What does not live here: the oracles (`ahp-oracles`) and dispatch
//! (`ahp-engine`).
//!
//! ```
//! use ahp_config::{LoadedConfig, Layer, SourceFile};
//! use std::sync::Arc;
//! let file = Arc::new(SourceFile {
//!     layer: Layer::Project,
//!     path: ".ahp/hooks.yaml".into(),
//!     text: "hooks:\n  PreToolUse:\n    - oracle: Rules\n      priority: 2\n".into(),
//! });
//! let cfg = LoadedConfig::from_files(".".into(), vec![file]).unwrap();
//! assert_eq!(cfg.entries[0].event.as_str(), "pre-tool-use");
//! assert_eq!(cfg.entries[0].id, "Rules");
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]
// ConfigError carries file, position, key, help and the source line: it is
// only built on the cold path of a broken config, where size does not matter.
#![allow(clippy::result_large_err)]

mod context_paths;
pub mod escalation;
pub mod fail_closed;
pub mod hookmd;
pub mod issue_commands;
pub mod layers;
pub mod load;
pub mod managed;
pub mod schema;
pub mod source;
pub mod trust;
pub mod untrusted;
pub mod view;
pub mod yaml;

pub use fail_closed::{FAIL_CLOSED_ENV, FailClosed, fail_closed_env, fail_closed_from_layers};
pub use layers::{LoadOptions, find_project_root};
pub use load::{
    Compiled, HookSettings, LoadedConfig, LogSettings, MergedEntry, Only, SCRIPT_BACKSTOP,
    compile_when,
};
pub use schema::hooks_schema;
pub use source::{
    ConfigError, ConfigErrors, ConfigWarning, DEFAULT_POLICY, DEFAULT_POLICY_NAME, Layer, Origin,
    SourceFile, path_line,
};

/// How long an agent waits for `ahp hook` when `settings.agent_timeout`
/// does not say: what `ahp install` writes into the agent's config (the
/// Claude Code and Codex default, Kimi's maximum).
pub const AGENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The commented starter `.ahp/hooks.yaml` written by `ahp init`.
pub const STARTER_POLICY: &str = include_str!("starter-hooks.yaml");
