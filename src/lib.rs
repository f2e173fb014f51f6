//! ahp
