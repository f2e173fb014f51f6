//! `ahp install AGENT` and `ahp uninstall AGENT`: the command over
//! [`crate::install`], which plans and applies the change to an agent's
//! hook config.

use crate::adapters::Agent;
use crate::install::{
    AGENTHOOKS_REFUSAL, Scope, apply, apply_in_project, codex, config_path, default_scope, home,
    home_or_empty, hook_command, next_steps, plan_install, plan_uninstall, resolve_command,
};
use crate::ops::output::{EXIT_PROCEED, terminal_safe};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `ahp install` and `ahp uninstall`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent whose hook config to change.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Which config: user (home directory, every project), project (committed with the
    /// repository) or local (Claude Code's settings.local.json). Default: project, or user
    /// for agents that only have a user config (kimi).
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Project root for the project and local scopes (default: the repository
    /// root, or a folder in it with a hooks file in .ahp/; outside a repository, the nearest
    /// ancestor with .ahp/; else the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The ahp executable the agent runs: hooks call `CMD hook AGENT`, and uninstall
    /// removes the entries whose command starts with it. Give an absolute path when ahp
    /// is not on the agent's PATH.
    #[arg(long, value_name = "CMD", default_value = "ahp")]
    pub command: String,
}

fn project_root(project: Option<PathBuf>) -> Result<PathBuf> {
    match project {
        Some(p) => Ok(p),
        None => {
            let cwd = std::env::current_dir().context("cannot determine the current directory")?;
            Ok(ahp_config::find_project_root(&cwd).unwrap_or(cwd))
        }
    }
}

/// Runs `ahp install` (`remove == false`) or `ahp uninstall`.
pub(crate) fn run(args: InstallArgs, remove: bool) -> Result<u8> {
    if args.agent == Agent::AgentHooks {
        bail!("{AGENTHOOKS_REFUSAL}");
    }
    if args.command.trim().is_empty() {
        bail!("--command must not be empty");
    }
    let scope = args.scope.unwrap_or_else(|| default_scope(args.agent));
    let root = project_root(args.project)?;
    let home = match scope {
        Scope::User => home()?,
        _ => PathBuf::new(),
    };
    let mut path = config_path(args.agent, scope, &home, &root)?;
    let base = args.command.trim();
    let mut change = if remove {
        plan_uninstall(args.agent, &path, base)?
    } else {
        plan_install(args.agent, &path, base)?
    };
    // Hooks an earlier install wrote where the agent read them then.
    if remove && change.is_noop() {
        for earlier in crate::install::earlier_config_paths(args.agent, scope, &home) {
            let there = plan_uninstall(args.agent, &earlier, base)?;
            if !there.is_noop() {
                (path, change) = (earlier, there);
                break;
            }
        }
    }
    let agent = args.agent;
    let mut out = std::io::stdout().lock();
    if args.dry_run {
        if change.is_noop() {
            writeln!(out, "{}: nothing to change", ahp_config::path_line(&path))?;
        } else {
            write!(out, "{}", change.diff())?;
        }
        return Ok(EXIT_PROCEED);
    }
    if change.is_noop() {
        if remove {
            writeln!(
                out,
                "no ahp hooks for {agent} (`{base} hook {agent}`) in {}; nothing changed",
                ahp_config::path_line(&path)
            )?;
        } else {
            writeln!(
                out,
                "ahp is already installed for {agent} in {}; nothing changed",
                ahp_config::path_line(&path)
            )?;
            if agent == Agent::Codex {
                codex_steps(&mut out, scope, &root, &path)?;
            }
        }
        return Ok(EXIT_PROCEED);
    }
    match scope {
        Scope::User => apply(&change)?,
        // The project's config files are the repository's: never written
        // through a symlink it committed, nor outside it.
        Scope::Project | Scope::Local => apply_in_project(&root, &change)?,
    }
    if remove {
        let what = if change.after.is_none() {
            "; the file held nothing else and was removed"
        } else {
            ""
        };
        writeln!(
            out,
            "removed ahp's {agent} hooks ({}) from {}{what}",
            change.events.join(", "),
            ahp_config::path_line(&path)
        )?;
        return Ok(EXIT_PROCEED);
    }
    writeln!(
        out,
        "installed `{}` for {agent} ({} scope) in {}: {}",
        hook_command(agent, base, "EVENT").replace(" --event EVENT", " --event <event>"),
        scope.as_str(),
        ahp_config::path_line(&path),
        change.events.join(", ")
    )?;
    for n in &change.notes {
        writeln!(out, "note: {n}")?;
    }
    if resolve_command(base, &root).is_none() {
        writeln!(
            out,
            "warning: `{}` is not found on PATH; the agent will fail to start the hook. Put ahp on PATH or reinstall with --command /absolute/path/to/ahp",
            base.split_whitespace().next().unwrap_or(base)
        )?;
    }
    for step in next_steps(agent) {
        writeln!(out, "next: {step}")?;
    }
    if agent == Agent::Codex {
        codex_steps(&mut out, scope, &root, &path)?;
    }
    writeln!(out, "next: run `ahp doctor` to check the setup")?;
    Ok(EXIT_PROCEED)
}

/// What Codex's own trust still needs, read as `ahp doctor` reads it.
fn codex_steps(out: &mut impl Write, scope: Scope, root: &Path, path: &Path) -> Result<()> {
    let project = (scope != Scope::User).then_some(root);
    match codex::check_file(&home_or_empty(), path, project) {
        Ok(trust) => {
            // Values from Codex's config reach the terminal.
            for p in trust.problems {
                writeln!(out, "next: {}", terminal_safe(&p))?;
            }
        }
        Err(e) => writeln!(out, "warning: {}", terminal_safe(&format!("{e:#}")))?,
    }
    Ok(())
}
