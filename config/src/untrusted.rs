//! What runs in place of an entry or hook that `ahp trust` has not cleared
//! when `settings.fail_closed` is on.
//!
//! Without `fail_closed`, an untrusted project hook or command-running
//! entry is left out with a warning: the rest of the policy still runs.
//! With it, leaving a required check out would pass whatever it guards
//! (a CI runner that never ran `ahp trust` would pass every gate), so the
//! entry keeps its place, its `when` and its priority, and blocks instead
//! of running.

use ahp_engine::async_trait;
use ahp_engine::{HookContext, Oracle, OracleError, Signal};

/// The signal type of the block, for log queries.
pub const SIGNAL_TYPE: &str = "untrusted";

/// Blocks with why `what` was not run.
pub(crate) struct Untrusted {
    /// The entry or hook (`entry \`tests\``, `hook \`lint\``).
    pub(crate) what: String,
    /// Why it was not run (not trusted, changed since trusted, trust
    /// could not be checked).
    pub(crate) reason: String,
}

#[async_trait]
impl Oracle for Untrusted {
    async fn evaluate(&self, _ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(vec![
            Signal::block(format!(
                "untrusted: {} was not run and settings.fail_closed is on: {}",
                self.what, self.reason
            ))
            .with_type(SIGNAL_TYPE)
            .with_resolution_path([
                "review the project's hooks and policy: `ahp trust --show`",
                "run `ahp trust` to let them run",
            ]),
        ])
    }

    fn default_intensity(&self) -> Option<ahp_engine::Intensity> {
        Some(ahp_engine::Intensity::Block)
    }
}
