//! The integration tests of this crate, one binary with a module per
//! area (fewer links than a binary per file).

mod layers;
mod properties;
mod trust;
