//! Analytics over the signal log (SPEC §8): filtering records
//! ([`query::Filter`]), streaming statistics per source and event
//! ([`stats::StatsBuilder`]), tuning suggestions ([`tune::suggest`]) and a
//! self-contained HTML report ([`report::render`]).
//!
//! The commands read the logs through [`crate::scan`]: in parallel, each
//! line parsed only for what analytics uses, the records folded in order
//! one at a time; [`stats::StatsBuilder::add`] takes full records from
//! anywhere else (the figures are the same). The aggregation keeps bounded
//! state (counters per source and event, the open blocks per issue or
//! session, a capped window of recent signal ids to attribute responses).

pub mod breakdown;
pub mod query;
pub mod report;
pub mod stats;
pub mod tune;

/// A failure in the analytics layer.
#[derive(Debug, thiserror::Error)]
pub enum AnalyticsError {
    /// A time bound that is neither RFC 3339 nor a relative duration.
    #[error(
        "invalid time `{0}`: expected RFC 3339 (2026-01-31T12:00:00Z) or a duration such as 30m, 24h, 7d"
    )]
    InvalidTime(String),
}
