//! A custom Rust oracle, registered next to the built-ins and used from
//! hooks.yaml like any other.
//!
//! `CommandLength` prompts when a shell command is longer than
//! `config.max_chars` (a long one-liner is hard to review). Build your own
//! `ahp` with it:
//!
//! ```text
//! cargo run --example custom_oracle -- run pre-tool-use --context examples/events/rm-rf.json
//! ```
//!
//! and reference it from `.ahp/hooks.yaml`:
//!
//! ```yaml
//! hooks:
//!   pre-tool-use:
//!     - oracle: CommandLength      # or command-length
//!       config: { max_chars: 200 }
//! ```

use ahp::{
    HookContext, Oracle, OracleConfig, OracleConfigError, OracleError, Registry, Signal,
    async_trait,
};
use std::sync::Arc;

/// Prompts on shell commands longer than `max_chars`.
pub struct CommandLength {
    max_chars: usize,
}

#[async_trait]
impl Oracle for CommandLength {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let Some(cmd) = ctx.lookup("tool.input.command") else {
            return Ok(vec![]);
        };
        let Some(cmd) = cmd.as_str() else {
            return Ok(vec![]);
        };
        let len = cmd.chars().count();
        if len <= self.max_chars {
            return Ok(vec![]);
        }
        Ok(vec![
            Signal::prompt(format!(
                "shell command is {len} characters long (limit {})",
                self.max_chars
            ))
            .with_type("long-command")
            .with_resolution_path([
                "split it into steps, or put it in a script under version control",
            ]),
        ])
    }
}

/// `CommandLength`'s `config:`; `ahp schema` describes it, and a key it
/// does not have is an error with a "did you mean".
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandLengthConfig {
    /// Longer commands prompt (default 200).
    #[schemars(range(min = 1))]
    pub max_chars: Option<usize>,
}

/// Adds `CommandLength` to a registry.
pub fn register(registry: &mut Registry) {
    registry.register(
        "CommandLength",
        "prompts on shell commands longer than max_chars",
        |cfg: OracleConfig<'_>| {
            let settings: CommandLengthConfig = cfg.parse()?;
            let max_chars = settings.max_chars.unwrap_or(200);
            if max_chars == 0 {
                return Err(OracleConfigError::at("max_chars", "must be at least 1"));
            }
            Ok(Arc::new(CommandLength { max_chars }) as Arc<dyn Oracle>)
        },
    );
    registry.set_config::<CommandLengthConfig>("CommandLength");
}

#[allow(dead_code)]
fn main() -> std::process::ExitCode {
    let mut registry = ahp::default_registry();
    register(&mut registry);
    ahp::run_cli(registry)
}
