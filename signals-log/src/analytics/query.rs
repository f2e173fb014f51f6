//! Filtering records: `ahp signals query`.

use super::AnalyticsError;
use chrono::{DateTime, Duration, Utc};

/// The one record filter of the crate (see [`crate::Filter`]), re-exported
/// here for `ahp signals query`.
pub use crate::Filter;

/// Parses a time bound: RFC 3339, or a duration before `now` such as
/// `90s`, `30m`, `24h`, `7d`, `2w`.
///
/// ```
/// use ahp_signals_log::analytics::query::parse_time;
/// let now = chrono::Utc::now();
/// assert_eq!(parse_time("24h", now).unwrap(), now - chrono::Duration::hours(24));
/// assert!(parse_time("2026-01-31T12:00:00Z", now).is_ok());
/// assert!(parse_time("yesterday", now).is_err());
/// ```
pub fn parse_time(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, AnalyticsError> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let bad = || AnalyticsError::InvalidTime(text.to_string());
    let text = text.trim();
    let split = text.len().checked_sub(1).ok_or_else(bad)?;
    if !text.is_char_boundary(split) {
        return Err(bad());
    }
    let (num, unit) = text.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let d = match unit {
        "s" => Duration::try_seconds(n),
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    now.checked_sub_signed(d).ok_or_else(bad)
}
