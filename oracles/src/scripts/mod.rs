//! Running other programs: HOOK.md script hooks as an oracle
//! ([`script::ScriptHook`]), the commands the workflow oracles run from
//! their config (`command`), and the process control under both
//! ([`process`]: a process group, a time limit, bounded output, killed
//! whole on timeout).

pub(crate) mod command;
pub mod process;
pub mod script;
