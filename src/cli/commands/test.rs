//! `ahp test [PATH…]`: run policy tests against the project's merged
//! policy (or one file with `--config`), print the results as `cargo test`
//! does, and exit 1 when a case fails. `--from-log ID` prints a test file
//! made from a logged run.

use crate::cli::args::ProjectArg;
use crate::ops::output::{EXIT_ERROR, EXIT_PROCEED, answerln, print, terminal_safe};
use crate::ops::policy::{load, load_options};
use crate::ops::policy_test::{self, LoadedCase, Runner};
use ahp_config::{LoadedConfig, SourceFile};
use ahp_engine::Registry;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

/// Arguments of `ahp test`.
#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Test files, or folders of them (default: <project>/.ahp/tests).
    paths: Vec<PathBuf>,
    /// Test this policy file (on top of the builtin layer) instead of the
    /// project's merged policy.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// With --config: run the file's commands and rewrites too (a file
    /// under review runs none: `ahp trust` has not seen it).
    #[arg(long, requires = "config")]
    allow_scripts: bool,
    /// Print a test file made from the logged run ID (a run's correlation id,
    /// or its start), with the decision it got as the expectation.
    #[arg(long, value_name = "ID", conflicts_with_all = ["paths", "config"])]
    from_log: Option<String>,
    /// The signal log --from-log reads (default: <project>/.ahp/signals.jsonl).
    #[arg(long, value_name = "PATH", requires = "from_log")]
    log: Option<PathBuf>,
    /// Print only failures and the summary.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    project: ProjectArg,
}

pub(crate) fn run(args: TestArgs, registry: &Registry) -> Result<u8> {
    if let Some(id) = &args.from_log {
        let log = crate::ops::policy::log_path(args.log.clone(), args.project.project.clone())?;
        print(&policy_test::case_from_log(&log, id)?)?;
        return Ok(EXIT_PROCEED);
    }
    let mut cfg = match &args.config {
        Some(file) => single_file(file, args.project.project.clone())?,
        None => load(args.project.project.clone(), registry)?,
    };
    if args.config.is_some() && !args.allow_scripts {
        let commands = cfg.project_command_entries(registry);
        cfg.skip_entries(
            commands,
            "a file under review (--config) runs no command and no rewrite; pass --allow-scripts once you have read it",
        );
    }
    // What trust (or --config) leaves out is said, as a hook call says it:
    // a case that expects it would otherwise fail, or pass, for a reason
    // nobody sees.
    crate::ops::policy::report_left_out(&cfg);
    let paths = if args.paths.is_empty() {
        let dir = policy_test::default_dir(&cfg.project_root);
        if !dir.is_dir() {
            return Err(anyhow!(
                "no test files given and no {} folder; write cases there (`ahp init` writes a starter file), or name the files",
                ahp_config::path_line(&dir)
            ));
        }
        vec![dir]
    } else {
        args.paths.clone()
    };
    let cases = policy_test::load_cases(&paths)?;
    let mut runner = Runner::new(&cfg, registry)?;
    run_cases(&mut runner, &cases, args.quiet)
}

/// The builtin layer and `file` as the project layer.
fn single_file(file: &Path, project: Option<PathBuf>) -> Result<LoadedConfig> {
    let source = ahp_config::layers::read_policy_file(ahp_config::Layer::Project, file)
        .map_err(|e| anyhow!("{e}"))?
        .ok_or_else(|| anyhow!("{}: no such file", ahp_config::path_line(file)))?;
    let opts = load_options(project)?;
    let root = opts.project_root;
    let mut cfg = LoadedConfig::from_files(root, vec![SourceFile::builtin(), source])?;
    cfg.shared_tool_name = opts.shared_tool_name;
    Ok(cfg)
}

fn run_cases(runner: &mut Runner<'_>, cases: &[LoadedCase], quiet: bool) -> Result<u8> {
    let files: std::collections::BTreeSet<&Path> = cases.iter().map(|c| c.file.as_path()).collect();
    if !quiet {
        answerln!(
            "\nrunning {} case{} from {} file{}",
            cases.len(),
            plural(cases.len()),
            files.len(),
            plural(files.len())
        )?;
    }
    let (mut passed, mut failed, mut missed) = (0usize, 0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    let mut now_pass: Vec<String> = Vec::new();
    // Paths as the user would type them: relative to where ahp runs.
    let here = std::env::current_dir().unwrap_or_default();
    for lc in cases {
        let shown = lc.file.strip_prefix(&here).unwrap_or(&lc.file);
        // One line, whatever the name holds: a name with a line break
        // could print a line that looks like ahp's own (`5 passed`).
        let name = lc.case.name.replace('\n', "\\n").replace('\r', "\\r");
        let title = format!("{}:{}: {name}", ahp_config::path_line(shown), lc.line);
        let (ok, detail) = match runner.run(lc) {
            Ok(r) if r.mismatches.is_empty() => (true, String::new()),
            Ok(r) => {
                let mut d: Vec<String> = r.mismatches.iter().map(|m| format!("  {m}")).collect();
                d.push(if r.signals.is_empty() {
                    "  signals: none".to_string()
                } else {
                    format!(
                        "  signals:\n{}",
                        r.signals
                            .iter()
                            .map(|s| format!("    {s}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    )
                });
                if let Some(why) = &lc.case.why {
                    d.push(format!("  why: {why}"));
                }
                (false, d.join("\n"))
            }
            Err(e) => (false, format!("  error: {e:#}")),
        };
        let status = match (ok, &lc.case.known_miss) {
            (true, None) => {
                passed += 1;
                "ok"
            }
            (false, None) => {
                failed += 1;
                failures.push(format!("---- {title} ----\n{detail}"));
                "FAILED"
            }
            (false, Some(_)) => {
                missed += 1;
                "known miss"
            }
            (true, Some(_)) => {
                passed += 1;
                now_pass.push(title.clone());
                "ok (known miss now passes)"
            }
        };
        if !quiet || status == "FAILED" {
            answerln!("test {} ... {status}", terminal_safe(&title))?;
        }
    }
    if !failures.is_empty() {
        answerln!("\nfailures:\n")?;
        for f in &failures {
            answerln!("{}\n", terminal_safe(f))?;
        }
    }
    if !now_pass.is_empty() {
        answerln!("\nknown misses that now pass (remove `known_miss`):")?;
        for t in &now_pass {
            answerln!("  {}", terminal_safe(t))?;
        }
    }
    let idle = policy_test::unexercised(runner);
    if !idle.is_empty() && !quiet {
        answerln!("\nentries no case ran ({}):", idle.len())?;
        for e in &idle {
            answerln!("  {}", terminal_safe(e))?;
        }
    }
    let extra = if missed > 0 {
        format!(
            ", {missed} known miss{}",
            if missed == 1 { "" } else { "es" }
        )
    } else {
        String::new()
    };
    let gap = if quiet && failures.is_empty() {
        ""
    } else {
        "\n"
    };
    answerln!("{gap}{passed} passed, {failed} failed{extra}")?;
    Ok(if failed == 0 {
        EXIT_PROCEED
    } else {
        EXIT_ERROR
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
