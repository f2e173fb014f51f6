//! The oracles on an agent's tool-call path: they judge one tool call (or
//! its result) from the hook context alone, in the time of a hook call.
//!
//! * [`Rules`](rules::Rules): declarative conditions written in hooks.yaml,
//!   in the condition language of [`ahp_engine::condition::expr`];
//! * [`PermissionChecker`](permission::PermissionChecker): dangerous shell
//!   and SQL commands blocked, risky ones asked about, judged on the
//!   shell-command model ([`commands`]) and on text patterns;
//! * [`PathGuard`](path_guard::PathGuard): credential stores, start-up
//!   files and system paths kept out of reach of file tools and shell
//!   commands ([`sensitive`]);
//! * [`SecurityScanner`](security::SecurityScanner): secrets, private
//!   keys, injection and `curl | sh` in a tool input or changed files;
//! * [`ChangeLogger`](change_logger::ChangeLogger): what a tool call
//!   changed, as an aid with structured data.

pub mod change_logger;
pub mod commands;
mod glob;
pub mod path_guard;
pub mod permission;
pub mod rules;
pub mod security;
pub mod sensitive;
