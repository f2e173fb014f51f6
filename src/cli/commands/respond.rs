//! `ahp respond SIGNAL_ID ACTION`: record what was done about a signal.

use crate::cli::args::ProjectArg;
use crate::ops::output::{EXIT_PROCEED, print};
use crate::ops::policy::{load, log_options, log_path};
use crate::ops::respond::LogAt;
use ahp_engine::Registry;
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `ahp respond`.
#[derive(Debug, clap::Args)]
pub(crate) struct RespondArgs {
    /// The signal's `header.id`.
    signal_id: String,
    /// What was done.
    action: String,
    /// Free-form details (JSON).
    #[arg(long, value_name = "JSON")]
    details: Option<String>,
    /// Replace the signal's current answer (the log keeps both; the latest counts).
    #[arg(long)]
    amend: bool,
    /// The log (default <project>/.ahp/signals.jsonl).
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArg,
}

pub(crate) fn run(args: RespondArgs, registry: &Registry) -> Result<u8> {
    let log = log_path(args.log, args.project.project.clone())?;
    // The project's log settings (its extra masked keys, its rotation),
    // as for the hook call that recorded the signal; a policy that does
    // not load does not stop the answer from being recorded.
    let options = load(args.project.project, registry)
        .map(|cfg| log_options(&cfg))
        .unwrap_or_default();
    let response = crate::ops::respond::respond(
        LogAt {
            path: &log,
            options: &options,
        },
        &args.signal_id,
        &args.action,
        args.details.as_deref(),
        args.amend,
    )?;
    // Echoed as recorded: `--details` may quote a credential.
    let mut shown = serde_json::to_value(&response)?;
    options.mask.mask_value(&mut shown);
    print(&format!("{shown}\n"))?;
    Ok(EXIT_PROCEED)
}
