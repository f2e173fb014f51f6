//! `ahp init`: a commented starter `.ahp/hooks.yaml`, its schema and a
//! starter test file, and the local files gitignored.

use crate::cli::args::ProjectArg;
use crate::ops::output::EXIT_PROCEED;
use anyhow::{Context, Result, anyhow};
use std::path::Path;

/// Arguments of `ahp init`.
#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    #[command(flatten)]
    project: ProjectArg,
    /// Overwrite an existing .ahp/hooks.yaml.
    #[arg(long)]
    force: bool,
}

pub(crate) fn run(args: InitArgs, registry: &ahp_engine::Registry) -> Result<u8> {
    let root = match args.project.project {
        Some(p) => p,
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    init(&root, args.force, registry)?;
    Ok(EXIT_PROCEED)
}

fn init(root: &Path, force: bool, registry: &ahp_engine::Registry) -> Result<()> {
    let dir = root.join(".ahp");
    let hooks = dir.join("hooks.yaml");
    if hooks.exists() && !force {
        return Err(anyhow!(
            "{} already exists; use --force to overwrite it, or edit it (run `ahp validate` after)",
            ahp_config::path_line(&hooks)
        ));
    }
    // The project may be a cloned repository: its `.ahp/` and `.gitignore`
    // are written without following a symlink it committed.
    let write = |rel: &str, text: &str| {
        ahp_oracles::safe_write::write_in_project(root, Path::new(rel), text.as_bytes())
            .map_err(|e| anyhow!("ahp init: {e}"))
    };
    // Every file checked before any is written: a committed `.gitignore`
    // link refused after the policy was written left a half-made set-up
    // that a second run called "already exists".
    for rel in [
        ".ahp",
        ".ahp/hooks.yaml",
        ".ahp/tests",
        ".ahp/tests/policy.yaml",
        ".ahp/hooks.schema.json",
        ".gitignore",
    ] {
        let path = root.join(rel);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = std::fs::read_link(&path).unwrap_or_default();
            return Err(anyhow!(
                "ahp init: refusing to write through a symlink: {} -> {}; nothing was written \
                 (replace the link with a file or folder, then run `ahp init` again)",
                ahp_config::path_line(&path),
                ahp_config::path_line(&target)
            ));
        }
    }
    write(".ahp/hooks.yaml", ahp_config::STARTER_POLICY)?;
    // Tests of the policy: kept when they exist (they are the user's).
    let tests = dir.join("tests").join("policy.yaml");
    let wrote_tests = !tests.exists();
    if wrote_tests {
        write(
            ".ahp/tests/policy.yaml",
            crate::ops::policy_test::STARTER_TESTS,
        )?;
    }
    let schema = dir.join("hooks.schema.json");
    write(
        ".ahp/hooks.schema.json",
        &(serde_json::to_string_pretty(&ahp_config::hooks_schema(registry))? + "\n"),
    )?;
    let gitignore = root.join(".gitignore");
    let existing = match std::fs::read_to_string(&gitignore) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(anyhow!(
                "cannot read {}: {e}",
                ahp_config::path_line(&gitignore)
            ));
        }
    };
    let wanted = [".ahp/hooks.local.yaml", ".ahp/signals.jsonl*"];
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| !existing.lines().any(|l| l.trim() == *w))
        .collect();
    if !missing.is_empty() {
        let mut text = existing.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# ahp: personal overrides and the signal log\n");
        for m in &missing {
            text.push_str(m);
            text.push('\n');
        }
        write(".gitignore", &text)?;
    }
    crate::ops::output::outln!("wrote {}", ahp_config::path_line(&hooks))?;
    crate::ops::output::outln!("wrote {}", ahp_config::path_line(&schema))?;
    if wrote_tests {
        crate::ops::output::outln!("wrote {}", ahp_config::path_line(&tests))?;
    }
    if !missing.is_empty() {
        crate::ops::output::outln!(
            "added {} to {}",
            missing.join(", "),
            ahp_config::path_line(&gitignore)
        )?;
    }
    crate::ops::output::outln!(
        "next: edit the policy, then `ahp validate`, `ahp test` and `ahp explain pre-tool-use`"
    )?;
    Ok(())
}
