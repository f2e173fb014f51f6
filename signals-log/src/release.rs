//! The `release` record: a stop loop let go.

use ahp_engine::Event;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A stop-loop release (`kind: "release"`): an agent adapter blocked the
/// same stop `consecutive_blocks` times, reached its `cap`, and let the
/// agent stop anyway. Logged so that the analyst sees which gate keeps an
/// agent looping.
///
/// ```
/// use ahp_engine::Event;
/// use ahp_signals_log::{Record, Release};
/// let release = Release {
///     id: ahp_engine::Uuid::new_v4(),
///     timestamp: chrono::Utc::now(),
///     session_id: "s-1".into(),
///     event: Event::PreAgentTurnStop,
///     consecutive_blocks: 3,
///     cap: 3,
///     correlation_id: None,
///     reason: "TestGate kept failing".into(),
/// };
/// let line = serde_json::to_string(&Record::Release(release)).unwrap();
/// assert!(line.starts_with(r#"{"kind":"release","#), "{line}");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Release {
    /// This record's own id, unique and stable: a sink deduplicates by it.
    /// Written by every ahp since records had ids; a line from an older log
    /// has none, and the reader derives one from the line's bytes (so it is
    /// the same at every read).
    #[serde(default, skip_serializing_if = "ahp_engine::Uuid::is_nil")]
    pub id: ahp_engine::Uuid,
    /// When the loop was released.
    pub timestamp: DateTime<Utc>,
    /// The agent session whose stop was released.
    pub session_id: String,
    /// The event that kept being blocked (usually `stop`).
    pub event: Event,
    /// How many blocks in a row came before the release.
    pub consecutive_blocks: u32,
    /// The configured cap that was reached.
    pub cap: u32,
    /// The dispatch that released it, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// Why the stop kept being blocked (the last block's reason).
    pub reason: String,
}
