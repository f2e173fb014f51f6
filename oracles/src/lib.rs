//! The built-in oracles of ahp (SPEC §5), ready to register with an
//! [`ahp_engine::Registry`] through [`register_builtins`]:
//!
//! * [`Rules`] — declarative conditions written in hooks.yaml (SPEC §4.1
//!   "rule form"), in the condition language of
//!   [`ahp_engine::condition::expr`];
//! * [`PermissionChecker`] — blocks dangerous shell and SQL commands in a
//!   tool call and asks for confirmation of risky ones;
//! * [`ScriptHook`] (`Script`) — a HOOK.md script hook of the Agent Hooks
//!   standard (SPEC §4.3) run as an oracle: event JSON on stdin, exit code
//!   and stdout mapped to signals, its process group killed on timeout;
//! * [`ChecklistValidator`] — an issue's checklist (read by
//!   [`workflow::issue`] from a
//!   Monoco issue file) must be complete, or complete enough, to go on;
//! * [`ReviewTrigger`] — after submit, names the reviewers from CODEOWNERS
//!   and config, and can run a command to notify them;
//! * [`FileChangeLimiter`] — too many changed files: a batch plan (control),
//!   or a prompt/block with the counts per directory;
//! * [`CompletionVerifier`] — before close: source changed without tests
//!   (or docs) blocks;
//! * [`CommitMessageValidator`] — the branch's commit messages
//!   (Conventional Commits, a pattern, the issue id);
//! * [`ContextLoader`] — at issue start: the issue's files and their recent
//!   commits;
//! * [`workflow::git`] — changed files and commits from git, for the oracles above
//!   and the CLI;
//! * [`TestGate`] — runs the tests and/or reads JUnit and coverage reports
//!   (lcov, Cobertura, llvm-cov JSON); blocks on failing tests and on
//!   coverage below the threshold;
//! * [`LintChecker`] — runs linters and reports their findings; with
//!   `auto_fix`, applies their fixers and reports the files they changed;
//! * [`DependencyChecker`] — dependency manifests parse, lockfiles move
//!   with them, new dependencies are listed;
//! * [`SecurityScanner`] — secrets, private keys, SQL and shell injection,
//!   `curl | sh` and world-writable modes in tool input or changed files;
//!   secrets are masked and handed to the engine for redaction;
//! * [`ChangeLogger`] — after a tool call, what changed (tool, files, lines,
//!   bytes) as an aid with structured `data`;
//! * [`RetrospectiveGenerator`] — after close, the issue's metrics from the
//!   signal log in a Markdown retrospective.
//!
//! Files written on a repository's behalf (a retrospective, an archived
//! issue, `ahp init`'s files) go through [`safe_write`]: never through a
//! symlink, never out of the project, atomically.
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
#![forbid(unsafe_code)]

mod pathglob;
pub mod policy;
pub mod project_file;
pub mod safe_write;
pub mod scripts;
pub mod settings;
mod template;
pub mod workflow;

pub use policy::{
    change_logger::ChangeLogger, permission::PermissionChecker, rules::Rules,
    security::SecurityScanner,
};
pub use scripts::script::ScriptHook;
pub use workflow::{
    checklist::ChecklistValidator, commit_msg::CommitMessageValidator,
    completion::CompletionVerifier, context_loader::ContextLoader, deps::DependencyChecker,
    file_limit::FileChangeLimiter, lint::LintChecker, retrospective::RetrospectiveGenerator,
    review::ReviewTrigger, test_gate::TestGate,
};

use ahp_engine::registry::Tuning;
use ahp_engine::{Oracle, Registry};
use std::sync::Arc;

/// Registers every built-in oracle (the registry also accepts the
/// kebab-case names, e.g. `permission-checker`), and declares which config
/// keys hold commands, so that a project's policy naming commands needs the
/// user's trust.
///
/// ```
/// let mut registry = ahp_engine::Registry::new();
/// ahp_oracles::register_builtins(&mut registry);
/// for name in [
///     "PermissionChecker", "PathGuard", "Rules", "Script", "ChecklistValidator", "ReviewTrigger",
///     "FileChangeLimiter", "CompletionVerifier", "CommitMessageValidator", "ContextLoader",
///     "TestGate", "LintChecker", "DependencyChecker", "SecurityScanner", "ChangeLogger",
///     "RetrospectiveGenerator",
/// ] {
///     assert!(registry.names().iter().any(|n| n == name), "{name}");
/// }
/// assert_eq!(registry.resolve("rules"), Some("Rules"));
/// assert_eq!(registry.command_keys("ReviewTrigger"), ["command"]);
/// assert_eq!(registry.command_keys("TestGate"), ["command"]);
/// assert_eq!(registry.resolve("security-scanner"), Some("SecurityScanner"));
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
        "PathGuard",
        "keeps file tools and shell commands away from credential stores, start-up files and system paths",
        |cfg| Ok(Arc::new(policy::path_guard::PathGuard::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "FileChangeLimiter",
        "too many changed files: a control splitting the change into batches by directory, or a prompt/block",
        |cfg| Ok(Arc::new(FileChangeLimiter::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "CompletionVerifier",
        "blocks closing an issue whose change touches source files without tests (or docs)",
        |cfg| Ok(Arc::new(CompletionVerifier::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "CommitMessageValidator",
        "commit messages: Conventional Commits, a pattern, the issue id, subject length",
        |cfg| Ok(Arc::new(CommitMessageValidator::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "ContextLoader",
        "at issue start: the issue's files (sizes, first lines) and the recent commits touching them",
        |cfg| Ok(Arc::new(ContextLoader::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "Script",
        "a HOOK.md script hook (Agent Hooks standard): runs the hook's script and maps its answer",
        |cfg| Ok(Arc::new(ScriptHook::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "ChecklistValidator",
        "issue checklist completion: open items (and items whose dependencies are open) block or prompt",
        |cfg| Ok(Arc::new(ChecklistValidator::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "ReviewTrigger",
        "after submit: names the reviewers (CODEOWNERS of the changed files, fixed reviewers), optionally runs a notify command",
        |cfg| Ok(Arc::new(ReviewTrigger::from_config(cfg)?) as Arc<dyn Oracle>),
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
    registry.register(
        "SecurityScanner",
        "secrets, private keys, SQL/shell injection, curl|sh and world-writable modes in tool input or changed files",
        |cfg| Ok(Arc::new(SecurityScanner::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "ChangeLogger",
        "after a tool call: records what changed (tool, files, lines and bytes) as a structured aid",
        |cfg| Ok(Arc::new(ChangeLogger::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    registry.register(
        "RetrospectiveGenerator",
        "after close: the issue's metrics from the signal log (signals, blocks and time to resolution, prompts dismissed, escalations) in a Markdown retrospective",
        |cfg| Ok(Arc::new(RetrospectiveGenerator::from_config(cfg)?) as Arc<dyn Oracle>),
    );
    // The type each oracle reads its `config:` into, for `ahp schema`.
    registry.set_config::<workflow::file_limit::FileChangeLimiterConfig>("FileChangeLimiter");
    registry.set_config::<policy::permission::PermissionCheckerConfig>("PermissionChecker");
    registry.set_config::<policy::path_guard::PathGuardConfig>("PathGuard");
    registry.set_config::<policy::change_logger::ChangeLoggerConfig>("ChangeLogger");
    registry.set_config::<workflow::deps::DependencyCheckerConfig>("DependencyChecker");
    registry.set_config::<workflow::context_loader::ContextLoaderConfig>("ContextLoader");
    registry.set_config::<workflow::checklist::ChecklistValidatorConfig>("ChecklistValidator");
    registry.set_config::<workflow::completion::CompletionVerifierConfig>("CompletionVerifier");
    registry
        .set_config::<workflow::commit_msg::CommitMessageValidatorConfig>("CommitMessageValidator");
    registry.set_config::<workflow::retrospective::RetrospectiveGeneratorConfig>(
        "RetrospectiveGenerator",
    );
    registry.set_config::<workflow::review::ReviewTriggerConfig>("ReviewTrigger");
    registry.set_config::<workflow::test_gate::TestGateConfig>("TestGate");
    registry.set_config::<workflow::lint::LintCheckerConfig>("LintChecker");
    registry.set_config::<policy::rules::RulesConfig>("Rules");
    registry.set_config::<policy::security::SecurityScannerConfig>("SecurityScanner");
    // Config keys holding commands: set by a project's committed policy,
    // they run only once the user trusted the project (`ahp trust`).
    registry.set_command_keys("ReviewTrigger", &["command"]);
    registry.set_command_keys("TestGate", &["command"]);
    registry.set_command_keys("LintChecker", &["linters"]);
    // Keys that act on the machine without a command: a control that
    // rewrites the tool input the agent then runs, a path written to.
    registry.set_trust_keys("Rules", &["rules.*.modifications"]);
    // `log` names a file read on the repository's behalf.
    registry.set_trust_keys("RetrospectiveGenerator", &["output", "log"]);
    registry.set_writes_files("RetrospectiveGenerator");
    registry.set_tuning(
        "FileChangeLimiter",
        Tuning {
            files_limit_key: Some("max_files".into()),
            ..Tuning::default()
        },
    );
    registry.set_tuning(
        "PermissionChecker",
        Tuning {
            block_list_key: Some("dangerous_commands".into()),
            ..Tuning::default()
        },
    );
}
