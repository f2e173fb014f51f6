//! Shipping the signal log to other systems.

pub(crate) mod otlp;
