//! The operations ahp's commands share, below them: reading input
//! ([`input`]), loading the policy with trust applied ([`policy`]), one
//! dispatch end to end ([`dispatch`]), answers to signals ([`respond`]),
//! and output for people and pipes ([`output`]).
//!
//! Nothing here imports a command (`crate::cli`): a command is a thin
//! function over these, as cargo's commands are over `cargo::ops`.

pub(crate) mod dispatch;
pub(crate) mod input;
pub(crate) mod logs;
pub(crate) mod output;
pub(crate) mod policy;
pub(crate) mod policy_test;
pub(crate) mod respond;
