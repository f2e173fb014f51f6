//! `ahp config`: the merged policy with the layer and file:line of every
//! value, masked like everything ahp prints.

use crate::cli::args::{Format, ProjectArg};
use crate::ops::output::{EXIT_ERROR, EXIT_PROCEED, print, print_warnings, terminal_safe};
use crate::ops::policy::{load, report_errors};
use ahp_engine::Registry;
use anyhow::Result;

/// Arguments of `ahp config`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    #[command(flatten)]
    project: ProjectArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub(crate) fn run(args: ConfigArgs, registry: &Registry) -> Result<u8> {
    let cfg = load(args.project.project, registry)?;
    // What did not load is not in the view: said, and exit 1.
    report_errors(&cfg.errors);
    print_warnings(&cfg.when_path_warnings());
    match args.format {
        // A policy can hold a secret (a token in a command): shown
        // masked, like everything else ahp prints.
        Format::Text => print(&terminal_safe(&cfg.render_text()))?,
        Format::Json => {
            let mut value = cfg.render_json();
            ahp_engine::secrets::mask_value(&mut value);
            print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?
        }
    }
    Ok(if cfg.errors.is_empty() {
        EXIT_PROCEED
    } else {
        EXIT_ERROR
    })
}
