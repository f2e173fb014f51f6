//! `ahp respond SIGNAL_ID ACTION`: record what was done about a signal.

use crate::cli::args::ProjectArg;
use crate::ops::output::{EXIT_PROCEED, print};
use crate::ops::policy::log_path;
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

pub(crate) fn run(args: RespondArgs) -> Result<u8> {
    let log = log_path(args.log, args.project.project)?;
    let response = crate::ops::respond::respond(
        &log,
        &args.signal_id,
        &args.action,
        args.details.as_deref(),
        args.amend,
    )?;
    print(&format!("{}\n", serde_json::to_string(&response)?))?;
    Ok(EXIT_PROCEED)
}
