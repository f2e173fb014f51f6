//! Arguments more than one command takes.

use clap::ValueEnum;
use std::path::PathBuf;

/// `--project DIR`.
#[derive(Debug, clap::Args)]
pub(crate) struct ProjectArg {
    /// Project root (default: nearest ancestor with .ahp/ or .git/, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// `--format` of `run`, `gate` and `config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Json,
    Text,
}
