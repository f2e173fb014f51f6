//! The built-in oracles of ahp (SPEC §5), ready to register with an
//! [`ahp_engine::Registry`] through [`register_builtins`]:
//!
//! * [`Rules`] — declarative conditions written in hooks.yaml (SPEC §4.1
//!   "rule form"), in the small condition language of [`expr`];
//! * [`PermissionChecker`] — blocks dangerous shell and SQL commands in a
//!   tool call and asks for confirmation of risky ones;
//! * [`ScriptHook`] (`Script`) — a HOOK.md script hook of the Agent Hooks
//!   standard (SPEC §4.3) run as an oracle: event JSON on stdin, exit code
//!   and stdout mapped to signals, its process group killed on timeout.
//! * [`TestGate`] — runs the tests and/or reads JUnit and coverage reports
//!   (lcov, Cobertura, llvm-cov JSON); blocks on failing tests and on
//!   coverage below the threshold;
//! * [`LintChecker`] — runs linters and reports their findings; with
//!   `auto_fix`, applies their fixers and reports the files they changed;
//! * [`DependencyChecker`] — dependency manifests parse, lockfiles move
//!   with them, new dependencies are listed.
//!
//! What does **not** live here: the engine itself (events, context, signals,
//! the [`Oracle`] trait, dispatch — `ahp-engine`) and loading hooks.yaml
//! (`ahp-config`). Each oracle is built from its entry's `config:` map by
//! `from_config`, which fails with an
//! [`OracleConfigError`](ahp_engine::OracleConfigError) naming the offending
//! key (e.g. `rules.0.condition`, `dangerous_commands.1`).
//!
//! ```
//! use ahp_engine::{Intensity, OracleConfig, Registry};
//! use serde_json::json;
//!
//! let mut registry = Registry::new();
//! ahp_oracles::register_builtins(&mut registry);
//! assert_eq!(registry.resolve("permission-checker"), Some("PermissionChecker"));
//!
//! let config = json!({"rules": [{"condition": "tool.name == shell", "intensity": "aid", "message": "shell in use"}]});
//! let oracle = registry.build("rules", OracleConfig::new(&config, None)).unwrap();
//! assert_eq!(oracle.default_intensity(), Some(Intensity::Aid));
//! ```

#![warn(missing_docs)]

mod cfg;
mod command;
pub mod deps;
pub mod expr;
pub mod lint;
pub mod permission;
pub mod process;
pub mod rules;
pub mod script;
mod template;
pub mod test_gate;

pub use deps::DependencyChecker;
pub use lint::LintChecker;
pub use permission::PermissionChecker;
pub use rules::Rules;
pub use script::ScriptHook;
pub use test_gate::TestGate;

use ahp_engine::{Oracle, Registry};
use std::sync::Arc;

/// Registers every built-in oracle: `Rules`, `PermissionChecker`,
/// `Script`, `TestGate`, `LintChecker`, `DependencyChecker`, … (the registry
/// also accepts the kebab-case names: `rules`, `permission-checker`, …).
///
/// ```
/// let mut registry = ahp_engine::Registry::new();
/// ahp_oracles::register_builtins(&mut registry);
/// for name in ["PermissionChecker", "Rules", "Script", "TestGate", "LintChecker", "DependencyChecker"] {
///     assert!(registry.names().iter().any(|n| n == name), "{name}");
/// }
/// assert_eq!(registry.resolve("rules"), Some("Rules"));
/// ```
pub fn register_builtins(registry: &mut Registry) {
    registry.register(
        "Rules",
        "declarative rules: conditions over the context, each raising a signal",
        |cfg| Ok(Arc::new(Rules::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "PermissionChecker",
        "blocks dangerous shell/SQL commands; asks for confirmation of risky ones",
        |cfg| Ok(Arc::new(PermissionChecker::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "Script",
        "a HOOK.md script hook (Agent Hooks standard): runs the hook's script and maps its answer",
        |cfg| Ok(Arc::new(ScriptHook::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "TestGate",
        "runs the tests and/or reads JUnit and coverage reports; blocks on failing tests and low coverage",
        |cfg| Ok(Arc::new(TestGate::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "LintChecker",
        "runs linters and reports their findings; with auto_fix, applies their fixers",
        |cfg| Ok(Arc::new(LintChecker::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "DependencyChecker",
        "dependency manifests parse, lockfiles move with them, new dependencies are listed",
        |cfg| Ok(Arc::new(DependencyChecker::from_config(cfg)?) as Arc<dyn Oracle>),
    );
}
