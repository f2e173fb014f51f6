//! ahp: a policy engine for AI coding agents.
//!
//! This crate is the `ahp` command line and the facade over the workspace:
//! [`engine`] (events, context, signals, the [`Oracle`] trait, dispatch),
//! [`config`] (layered hooks.yaml), [`oracles`] (the built-ins) and
//! [`signals_log`] (the JSONL log). Most users need only what is re-exported
//! here.
//!
//! ```
//! use ahp::{default_registry, Engine, Event, HookContext, LoadedConfig, Outcome};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // The builtin layer alone: the bottom layer of every policy `ahp run` loads.
//! let config = LoadedConfig::from_files(".".into(), vec![ahp::config::SourceFile::builtin()]).unwrap();
//! let engine = Engine::builder().registry(default_registry()).config(config).build().unwrap();
//! let ctx: HookContext = serde_json::from_str(
//!     r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#).unwrap();
//! let verdict = engine.dispatch(Event::PreToolUse, ctx).await;
//! assert_eq!(verdict.outcome, Outcome::Block);
//! # });
//! ```
#![forbid(unsafe_code)]

pub mod adapters;
mod cli;
pub mod install;
mod ops;
mod ship;

pub use ahp_config as config;
pub use ahp_engine as engine;
pub use ahp_oracles as oracles;
pub use ahp_signals_log as signals_log;

pub use ahp_config::{LoadOptions, LoadedConfig};
pub use ahp_engine::{
    Action, Engine, Event, HookContext, Intensity, Modification, Oracle, OracleConfig,
    OracleConfigError, OracleError, Outcome, Registry, Signal, SignalResponse, Verdict,
    async_trait,
};
pub use ahp_signals_log::SignalLog;

/// Runs the `ahp` command line with `registry` and returns the exit code:
/// a team's own `ahp` with custom oracles is a `main` that registers them
/// and calls this (`examples/custom_oracle.rs`).
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let mut registry = ahp::default_registry();
///     // registry.register(…) your own oracles here
///     ahp::run_cli(registry)
/// }
/// ```
pub fn run_cli(registry: Registry) -> std::process::ExitCode {
    cli::main_with(registry)
}

/// A registry with every built-in oracle.
///
/// ```
/// let reg = ahp::default_registry();
/// assert_eq!(reg.resolve("permission-checker"), Some("PermissionChecker"));
/// assert_eq!(reg.resolve("Rules"), Some("Rules"));
/// ```
pub fn default_registry() -> Registry {
    let mut r = Registry::new();
    ahp_oracles::register_builtins(&mut r);
    r
}
