//! One module per command, each with its arguments and one entry
//! function, `run`. A command is thin: the work is in [`crate::ops`] and
//! the library crates.

pub(crate) mod config;
pub(crate) mod doctor;
pub(crate) mod explain;
pub(crate) mod hook;
pub(crate) mod init;
pub(crate) mod install;
pub(crate) mod respond;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod ship;
pub(crate) mod signals;
pub(crate) mod test;
pub(crate) mod trust;
pub(crate) mod validate;
