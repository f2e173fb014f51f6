//! `ahp schema`: the JSON Schema of hooks.yaml, of HOOK.md frontmatter, or
//! of policy test files.

use crate::ops::output::{EXIT_PROCEED, print};
use anyhow::Result;

/// Arguments of `ahp schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The schema of HOOK.md frontmatter instead.
    #[arg(long, conflicts_with = "tests")]
    hook_md: bool,
    /// The schema of policy test files (`ahp test`) instead.
    #[arg(long)]
    tests: bool,
}

pub(crate) fn run(args: SchemaArgs, registry: &ahp_engine::Registry) -> Result<u8> {
    let schema = if args.hook_md {
        ahp_config::schema::hook_md_schema()
    } else if args.tests {
        crate::ops::policy_test::schema()
    } else {
        ahp_config::hooks_schema(registry)
    };
    print(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(EXIT_PROCEED)
}
