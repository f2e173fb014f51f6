//! Signal intensities and the outcome of a dispatch.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

crate::name_enum! {
    /// How strongly a signal intervenes. Ordered weakest to strongest, so
    /// `Intensity::Block > Intensity::Aid` and `max()` gives the verdict.
    ///
    /// ```
    /// use ahp_engine::Intensity;
    /// assert!(Intensity::Block > Intensity::Control);
    /// assert_eq!("prompt".parse::<Intensity>().unwrap(), Intensity::Prompt);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[derive(Serialize, Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Intensity {
        /// Context or suggestions; the flow is not affected.
        Aid => "aid",
        /// A warning the agent acknowledges, applies or dismisses.
        Prompt => "prompt",
        /// The engine's modification is applied; work continues.
        Control => "control",
        /// Mandatory stop; fix along the resolution path and retry.
        Block => "block",
    }
}

/// The error for a string that names no intensity.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown intensity `{0}`: expected one of block, control, prompt, aid")]
pub struct UnknownIntensity(pub String);

impl FromStr for Intensity {
    type Err = UnknownIntensity;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "aid" => Ok(Intensity::Aid),
            "prompt" => Ok(Intensity::Prompt),
            "control" => Ok(Intensity::Control),
            "block" => Ok(Intensity::Block),
            _ => Err(UnknownIntensity(s.to_string())),
        }
    }
}

crate::name_enum! {
    /// The verdict of a dispatch: the strongest intensity among the signals, or
    /// `Accept` when no oracle said anything.
    ///
    /// ```
    /// use ahp_engine::{Intensity, Outcome};
    /// assert_eq!(Outcome::from_strongest(None), Outcome::Accept);
    /// assert_eq!(Outcome::from_strongest(Some(Intensity::Block)), Outcome::Block);
    /// assert_eq!(Outcome::Block.exit_code(), 2);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Outcome {
        /// No signal: proceed.
        Accept => "accept",
        /// Only aid signals: proceed with context.
        Aid => "aid",
        /// At least one prompt: the agent should acknowledge or apply.
        Prompt => "prompt",
        /// A modification was applied: proceed with the changed input.
        Control => "control",
        /// Stop.
        Block => "block",
    }
}

impl Outcome {
    /// The outcome for the strongest intensity seen.
    pub fn from_strongest(strongest: Option<Intensity>) -> Outcome {
        match strongest {
            None => Outcome::Accept,
            Some(Intensity::Aid) => Outcome::Aid,
            Some(Intensity::Prompt) => Outcome::Prompt,
            Some(Intensity::Control) => Outcome::Control,
            Some(Intensity::Block) => Outcome::Block,
        }
    }

    /// The process exit code of `ahp run` for this outcome when nobody is
    /// there to answer a prompt: 0 proceed, 2 block, 3 prompt awaiting an
    /// answer.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Block => 2,
            Outcome::Prompt => 3,
            _ => 0,
        }
    }
}
