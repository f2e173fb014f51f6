//! `ahp run EVENT` and `ahp gate EVENT`: evaluate an event against a
//! context, print the verdict, and exit with its code.

use crate::cli::args::{Format, ProjectArg};
use crate::ops::dispatch::{DispatchRequest, dispatch};
use crate::ops::input::{parse_event, read_context};
use crate::ops::output::{EXIT_BLOCK, EXIT_PROCEED, EXIT_PROMPT, terminal_safe};
use crate::ops::respond::LogAt;
use ahp_engine::{Outcome, Payload, Registry, Verdict};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `run` and `gate`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The event: canonical name (pre-tool-use) or any alias (PreToolUse, before_tool).
    event: String,
    /// Read the context from FILE ("-" for stdin).
    #[arg(long, value_name = "FILE")]
    context: Option<String>,
    /// Load a Monoco issue file (Markdown with YAML frontmatter) into `issue` and `checklist`.
    #[arg(long, value_name = "PATH")]
    issue: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArg,
    /// Append records to PATH instead of <project>/.ahp/signals.jsonl.
    #[arg(long, value_name = "PATH", conflicts_with = "no_log")]
    log: Option<PathBuf>,
    /// Do not write the signal log.
    #[arg(long)]
    no_log: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Run only the `async: true` entries and record their results, printing nothing.
    /// `ahp run` starts itself this way in the background so async hooks never delay the verdict.
    #[arg(long)]
    async_only: bool,
    /// Answer every prompt signal with ACTION (acknowledge, apply_suggestion, dismiss) and record
    /// the responses; the prompt is then answered, so the exit code is 0 instead of 3.
    #[arg(long, value_name = "ACTION")]
    respond: Option<String>,
}

pub(crate) fn run(args: RunArgs, registry: &Registry) -> Result<u8> {
    let RunArgs {
        event,
        context,
        issue,
        project,
        log,
        no_log,
        format,
        async_only,
        respond,
    } = args;
    let event = parse_event(&event)?;
    let respond = respond
        .as_deref()
        .map(crate::ops::respond::prompt_action)
        .transpose()?;
    let ctx = read_context(context.as_deref())?;
    let Some(done) = dispatch(DispatchRequest {
        event,
        ctx,
        issue: issue.as_deref(),
        project: project.project,
        log,
        no_log,
        async_only,
        registry,
        agent_waits_since: None,
    })?
    else {
        return Ok(EXIT_PROCEED);
    };
    let verdict = &done.verdict;
    crate::ops::output::keep_going(print_verdict(verdict, format))?;
    for d in &verdict.diagnostics {
        let line = format!("{}: [{}] {}", d.level.as_str(), d.source, d.message);
        eprintln!("{}", terminal_safe(&line));
    }
    // A control beside a prompt does not answer the prompt: it
    // still waits, whatever the control changed.
    let awaits_answer = verdict.outcome == Outcome::Prompt
        || (verdict.outcome == Outcome::Control
            && verdict
                .signals
                .iter()
                .any(|s| s.intensity() == ahp_engine::Intensity::Prompt));
    if awaits_answer {
        // A prompt answered (by --respond or on the terminal) lets
        // the work proceed; unanswered, it waits (exit 3).
        let log = done.log_path.as_deref().map(|path| LogAt {
            path,
            options: &done.log_options,
        });
        if let Some(action) = respond {
            crate::ops::respond::respond_all(verdict, action, log)?;
            return Ok(EXIT_PROCEED);
        }
        if crate::ops::respond::interactive() {
            crate::ops::respond::ask(verdict, log)?;
            return Ok(EXIT_PROCEED);
        }
    }
    Ok(match verdict.outcome {
        Outcome::Block => EXIT_BLOCK,
        _ if awaits_answer => EXIT_PROMPT,
        _ => EXIT_PROCEED,
    })
}

fn print_verdict(v: &Verdict, format: Format) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            // The verdict quotes the tool input: masked like the log.
            let mut value = serde_json::to_value(v)?;
            ahp_engine::secrets::mask_value(&mut value);
            serde_json::to_writer(&mut out, &value)?;
            writeln!(out)?;
        }
        Format::Text => {
            writeln!(
                out,
                "{} {} ({} signal(s), correlation {})",
                v.outcome.as_str().to_uppercase(),
                v.event,
                v.signals.len(),
                v.correlation_id
            )?;
            for s in &v.signals {
                let clamped = s
                    .header
                    .clamped_from
                    .map(|c| format!(" (clamped from {c})"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  {:<7} {}{clamped}: {}",
                    s.intensity().as_str(),
                    terminal_safe(&s.header.source),
                    terminal_safe(&s.payload.summary())
                )?;
                let (label, steps) = match &s.payload {
                    Payload::Block(b) => ("fix", &b.resolution_path),
                    Payload::Prompt(p) => ("suggestion", &p.suggestions),
                    Payload::Aid(a) => ("follow-up", &a.follow_ups),
                    Payload::Control(_) => ("", &Vec::new()),
                };
                for step in steps {
                    writeln!(out, "          {label}: {}", terminal_safe(step))?;
                }
            }
            for c in &v.context_changes {
                writeln!(
                    out,
                    "  change  {}: {:?} {}",
                    c.source, c.modification.op, c.modification.target
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
