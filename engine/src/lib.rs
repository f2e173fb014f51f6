//! The core of ahp: events, the hook context, signals, the [`Oracle`] trait,
//! the oracle [`Registry`], compiled [`Policy`]s and [`Engine::dispatch`].
//!
//! What lives here is everything a policy decision needs and nothing about
//! where policies come from (hooks.yaml: `ahp-config`), which oracles exist
//! (`ahp-oracles`), or where records go (`ahp-signals-log`, through the
//! [`SignalSink`] trait). This crate depends on no other ahp crate.
//!
//! ```
//! use ahp_engine::*;
//! use std::sync::Arc;
//!
//! struct DenyRmRf;
//! #[async_trait]
//! impl Oracle for DenyRmRf {
//!     async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
//!         let cmd = ctx.lookup("tool.input.command");
//!         let bad = cmd.as_deref().and_then(|v| v.as_str()).is_some_and(|c| c.contains("rm -rf"));
//!         Ok(if bad { vec![Signal::block("rm -rf is not allowed")] } else { vec![] })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let policy = Policy::new(
//!     Settings::default(),
//!     [(Event::PreToolUse, vec![Entry::new("DenyRmRf", Arc::new(DenyRmRf))])],
//! ).unwrap();
//! let engine = Engine::builder().policy(policy).build().unwrap();
//! let ctx: HookContext = serde_json::from_str(r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#).unwrap();
//! let verdict = engine.dispatch(Event::PreToolUse, ctx).await;
//! assert_eq!(verdict.outcome, Outcome::Block);
//! assert_eq!(verdict.signals[0].header.source, "DenyRmRf");
//! # });
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

/// Declares a fieldless `Copy` enum with a name per variant, and with it
/// `ALL` (every variant, in declaration order), `as_str` (the variant's
/// name) and a `Display` that writes `as_str`. Attributes (derives, serde,
/// docs) pass through unchanged. Reading a name back stays with each enum:
/// they differ in case, blanks and hints.
///
/// ```
/// ahp_engine::name_enum! {
///     /// A colour.
///     #[derive(Debug, Clone, Copy, PartialEq)]
///     pub enum Colour {
///         /// Red.
///         Red => "red",
///         /// Dark blue.
///         DarkBlue => "dark-blue",
///     }
/// }
/// assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
/// assert_eq!(Colour::DarkBlue.as_str(), "dark-blue");
/// assert_eq!(Colour::Red.to_string(), "red");
/// ```
#[macro_export]
macro_rules! name_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($(#[$vm:meta])* $var:ident => $s:literal),+ $(,)?
    }) => {
        $(#[$m])*
        $vis enum $name {
            $($(#[$vm])* $var),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($s),+].len()] = [$($name::$var),+];

            /// The variant's name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $s),+
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod condition;
pub mod context;
pub mod context_shape;
pub mod dispatch;
pub mod escalation;
pub mod event;
pub mod intensity;
pub mod oracle;
pub mod paths;
pub mod pattern;
pub mod policy;
pub mod registry;
pub mod secrets;
pub mod shell;
pub mod signal;
pub mod suggest;
pub mod unseen;

pub use async_trait::async_trait;
/// The id type of every record (signals, responses, runs, diagnostics).
pub use uuid::Uuid;

/// The options every `git` that ahp runs in a project gets before its
/// subcommand. A cloned repository can commit a directory that is a bare
/// repository (`sub/` with `HEAD`, `objects/`, `refs/` and a `config`);
/// `git` started inside it would read that config, whose `core.fsmonitor`
/// runs a program and whose `info/exclude` decides what is ignored. Git
/// honours `safe.bareRepository` only from protected configuration, which
/// includes the command line. A `.git` that came in an archive brings its
/// own config: `core.fsmonitor` and the hooks (`post-index-change` runs
/// when `git status` refreshes the index) are switched off here, and a
/// signature check, which runs `gpg.program`, too; no transport may run
/// (`protocol.allow=never`: a partial clone would fetch a missing object
/// through the repository's `core.sshCommand`). The content filters it
/// names are switched off by name where ahp reads changes (the oracles'
/// `workflow::git`).
///
/// ```
/// let mut cmd = std::process::Command::new("git");
/// cmd.args(ahp_engine::GIT_SAFE_CONFIG).args(["status", "--short"]);
/// assert_eq!(ahp_engine::GIT_SAFE_CONFIG[1], "safe.bareRepository=explicit");
/// ```
pub const GIT_SAFE_CONFIG: [&str; 10] = [
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.allow=never",
];
pub use context::{Files, HookContext, ToolCall, Turn, deep_merge};
pub use dispatch::{
    AppliedChange, Diagnostic, Engine, EngineBuilder, EngineError, EntryRun, EntryStatus, Level,
    PolicySource, RunRecord, SignalSink, SinkError, Verdict, clamp,
};
pub use escalation::{EscalationRule, History, Scope, ScopeKind};
pub use event::{Event, UnknownEvent};
pub use intensity::{Intensity, Outcome};
pub use oracle::{
    Evaluation, Oracle, OracleConfig, OracleConfigError, OracleConfigWarning, OracleError,
};
pub use policy::{Entry, Mode, OnBlock, OnError, Plan, Policy, PolicyError, Settings};
pub use registry::{BuildError, Registry};
pub use signal::{
    Action, ActionMismatch, AidPayload, BlockPayload, ControlPayload, ModOp, Modification, Payload,
    PromptPayload, Severity, Signal, SignalContext, SignalHeader, SignalResponse,
};
