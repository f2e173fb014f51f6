//! The integration tests of this crate, one binary with a module per
//! area (fewer links than a binary per file).

mod analytics;
mod fast_stats;
mod features;
mod log;
mod processes;
mod ship;
