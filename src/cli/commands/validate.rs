//! `ahp validate`: check the merged policy, every entry trusted or not,
//! and exit 1 with every error found.

use crate::cli::args::ProjectArg;
use crate::ops::output::{EXIT_ERROR, EXIT_PROCEED, print, terminal_safe};
use ahp_engine::Registry;
use anyhow::Result;

/// Arguments of `ahp validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    #[command(flatten)]
    project: ProjectArg,
}

pub(crate) fn run(args: ValidateArgs, registry: &Registry) -> Result<u8> {
    let v = crate::ops::policy::validate(args.project.project, registry)?;
    for w in &v.warnings {
        eprintln!("warning: {}", terminal_safe(w));
    }
    match v.result {
        Ok(summary) => {
            print(&format!("{summary}\n"))?;
            Ok(EXIT_PROCEED)
        }
        Err(errors) => {
            eprint!("{}", terminal_safe(&errors.to_string()));
            Ok(EXIT_ERROR)
        }
    }
}
