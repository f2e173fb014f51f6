//! The `ahp` command line. [`crate::run_cli`] runs it with any registry,
//! so a team can ship its own `ahp` with custom oracles (see
//! `examples/custom_oracle.rs`).

mod args;
mod commands;

use crate::ops::output::{EXIT_ERROR, EXIT_PROCEED, init_tracing, is_closed_pipe, terminal_safe};
use crate::ops::policy::BrokenPolicy;
use ahp_config::ConfigErrors;
use ahp_engine::Registry;
use anyhow::Result;
use args::Deferred;
use clap::{Parser, Subcommand};
use commands::*;
use std::io::Write;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Exit codes:
  0  proceed (accept, aid or control)
  1  usage or configuration error
  2  block
  3  prompt awaiting an answer (non-interactive)

Config layers (later wins): builtin → managed (/etc/ahp/hooks.yaml, AHP_MANAGED_CONFIG) → ~/.ahp/hooks.yaml →
<project>/.ahp/hooks.yaml → <project>/.ahp/hooks.local.yaml. What the managed layer sets, later layers cannot
switch off, change or weaken.
The builtin layer (ahp's default policy) is always the bottom one: a policy file adds to it, and only
`enabled: false` on one of its entries or `settings.builtin: false` switches it off.";

/// ahp: a policy engine for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "ahp", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// Print `[HOOK DEBUG]` trace lines on stderr (also: AHP_DEBUG=1).
    #[arg(long, global = true)]
    debug: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate EVENT against a context and print the verdict.
    ///
    /// The context is a JSON object (`tool`, `files`, `issue`, …) from --context FILE, or from stdin when
    /// stdin is not a terminal. Every signal is appended to the signal log.
    Run(Deferred<run::RunArgs>),
    /// The same as `run`, named for workflow scripts: `ahp gate pre-issue-submit --issue FILE`.
    ///
    /// Exit 2 means the step must not proceed.
    Gate(Deferred<run::RunArgs>),
    /// Show which entries EVENT runs, in which order, from which layer, and why others do not.
    Explain(Deferred<explain::ExplainArgs>),
    /// Check the merged configuration; exit 1 with every error found.
    Validate(Deferred<validate::ValidateArgs>),
    /// Run policy tests: cases of events and the decisions the policy must make.
    ///
    /// Reads YAML test files (default: <project>/.ahp/tests), runs each case
    /// against the project's merged policy (or --config FILE) without writing
    /// the signal log, prints the results like `cargo test` and the entries no
    /// case ran, and exits 1 when a case fails. `--from-log ID` prints a test
    /// file made from a logged run. The format: `ahp schema --tests`.
    Test(Deferred<test::TestArgs>),
    /// Print the merged configuration with the layer and file:line of every value.
    Config(Deferred<config::ConfigArgs>),
    /// Write a commented starter .ahp/hooks.yaml (and its schema) and gitignore the local files.
    Init(Deferred<init::InitArgs>),
    /// Trust this project's HOOK.md hooks (.agents/hooks), like `direnv allow`.
    ///
    /// Project hooks are code from the repository: they run only after you
    /// have read them and trusted the exact set of files. Any change to
    /// them needs trusting again.
    Trust(Deferred<trust::TrustArgs>),
    /// Query the signal log: records, statistics, tuning suggestions, an HTML report, replay.
    #[command(subcommand)]
    Signals(Deferred<signals::SignalsCommand>),
    /// Record what was done about a signal of the log.
    ///
    /// The action must answer the signal's intensity: block → retry_after_fix,
    /// proceed_with_risk, abort; control → accept_modification, reject_modification;
    /// prompt → acknowledge, apply_suggestion, dismiss; aid → suggestion_applied,
    /// suggestion_deferred.
    ///
    /// A signal has one answer: answering it again needs --amend, and the
    /// new answer replaces the old one in every statistic.
    Respond(Deferred<respond::RespondArgs>),
    /// The hook command of an agent: read its JSON on stdin, answer in its protocol.
    ///
    /// Installed by `ahp install AGENT` as the agent's hook command. The
    /// agent's event maps to an ahp event, its tool names to the shared
    /// vocabulary (shell, write, edit, read, fetch, mcp), and the verdict to
    /// the agent's output: block → deny, control → the rewritten input,
    /// prompt → ask (or context), aid → additional context. Errors inside ahp
    /// fail open with a message on stderr (settings.fail_closed: true blocks).
    Hook(Deferred<hook::HookArgs>),
    /// Add `ahp hook AGENT` to an agent's hook config, for every event ahp decides on.
    ///
    /// Edits the agent's own file (named under AGENT below; the user scope
    /// is the same under the home directory), keeping the user's other
    /// settings, comments and layout; for OpenCode, which runs plugins
    /// rather than commands, it writes a plugin file of ahp's own. Running
    /// it twice changes nothing the second time. A malformed file is
    /// refused with its line and column, and nothing is written.
    Install(Deferred<install::InstallArgs>),
    /// Remove what `ahp install AGENT` added: the hooks whose command starts with
    /// `CMD hook AGENT`, and the event lists that only held them. The user's own hooks
    /// stay; a file left with no settings at all is deleted.
    Uninstall(Deferred<install::InstallArgs>),
    /// Check that ahp's hooks would fire: agent configs parse, ahp's entries are there,
    /// the command resolves, hooks.yaml validates and project hooks are trusted.
    ///
    /// Exit 0 when all is well, 1 when any problem is found.
    Doctor(Deferred<doctor::DoctorArgs>),
    /// Print the JSON Schema (draft-07) of hooks.yaml (or of HOOK.md frontmatter, or of policy tests).
    Schema(Deferred<schema::SchemaArgs>),
}

/// Runs the CLI with `registry` and returns the process exit code.
pub(crate) fn main_with(registry: Registry) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_PROCEED
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let debug =
        cli.debug || std::env::var_os("AHP_DEBUG").is_some_and(|v| v != "0" && !v.is_empty());
    if debug {
        init_tracing();
    }
    match run_command(cli.command, registry) {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_closed_pipe(&e) => ExitCode::from(EXIT_PROCEED),
        Err(e) => {
            let mut stderr = std::io::stderr().lock();
            // Config errors are already fully formatted.
            let text = match (
                e.downcast_ref::<ConfigErrors>(),
                e.downcast_ref::<BrokenPolicy>(),
            ) {
                (Some(ce), _) => ce.to_string(),
                (_, Some(b)) => format!(
                    "{}ahp: {}, so a policy with errors does not run\n",
                    b.errors, b.fail_closed
                ),
                _ => format!("error: {e:#}\n"),
            };
            let _ = write!(stderr, "{}", terminal_safe(&text));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run_command(cmd: Command, registry: Registry) -> Result<u8> {
    match cmd {
        Command::Signals(Deferred(cmd)) => signals::run(cmd, registry),
        Command::Run(Deferred(args)) | Command::Gate(Deferred(args)) => run::run(args, &registry),
        Command::Explain(Deferred(args)) => explain::run(args, &registry),
        Command::Validate(Deferred(args)) => validate::run(args, &registry),
        Command::Test(Deferred(args)) => test::run(args, &registry),
        Command::Config(Deferred(args)) => config::run(args, &registry),
        Command::Init(Deferred(args)) => init::run(args, &registry),
        Command::Trust(Deferred(args)) => trust::run(args, &registry),
        Command::Respond(Deferred(args)) => respond::run(args, &registry),
        Command::Hook(Deferred(args)) => hook::run(args, &registry),
        Command::Install(Deferred(args)) => install::run(args, false),
        Command::Uninstall(Deferred(args)) => install::run(args, true),
        Command::Doctor(Deferred(args)) => doctor::run(args, &registry),
        Command::Schema(Deferred(args)) => schema::run(args, &registry),
    }
}
