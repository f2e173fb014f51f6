//! Figures per developer and project: who and where the signals come
//! from, for the team report (`ahp signals report --db`), when the records
//! say where they were produced (shipped records do).

use crate::Record;
use ahp_engine::{Action, Intensity, Outcome};
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a record was produced.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// The developer (login name).
    pub user: String,
    /// The project: its repository remote when known, else its root.
    pub project: String,
}

/// One developer in one project.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OriginRow {
    /// The developer.
    pub user: String,
    /// The project.
    pub project: String,
    /// Dispatches.
    pub runs: u64,
    /// Of those, blocked.
    pub blocked_runs: u64,
    /// Signals raised (shadow entries' left out).
    pub signals: u64,
    /// Block signals.
    pub blocks: u64,
    /// Prompt signals.
    pub prompts: u64,
    /// Answers that dismissed a prompt.
    pub dismissals: u64,
    /// Answers that went on despite a block.
    pub proceed_with_risk: u64,
}

impl OriginRow {
    /// `blocked_runs / runs`, when there were runs.
    pub fn block_rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.blocked_runs as f64 / self.runs as f64)
    }
}

/// Folds records with their origin into [`OriginRow`]s.
///
/// ```
/// use ahp_engine::Signal;
/// use ahp_signals_log::analytics::breakdown::{Breakdown, Origin};
/// use ahp_signals_log::Record;
/// let mut b = Breakdown::default();
/// let alice = Origin { user: "alice".into(), project: "api".into() };
/// b.add(&alice, &Record::from(Signal::block("no")));
/// let rows = b.finish();
/// assert_eq!((rows[0].user.as_str(), rows[0].blocks), ("alice", 1));
/// ```
#[derive(Debug, Default)]
pub struct Breakdown {
    rows: BTreeMap<Origin, OriginRow>,
}

impl Breakdown {
    /// Adds one record produced at `origin`.
    pub fn add(&mut self, origin: &Origin, record: &Record) {
        let row = self
            .rows
            .entry(origin.clone())
            .or_insert_with(|| OriginRow {
                user: origin.user.clone(),
                project: origin.project.clone(),
                ..OriginRow::default()
            });
        match record {
            Record::Run(r) => {
                row.runs += 1;
                if r.outcome == Outcome::Block {
                    row.blocked_runs += 1;
                }
            }
            Record::Signal(s) if !s.header.shadow => {
                row.signals += 1;
                match s.intensity() {
                    Intensity::Block => row.blocks += 1,
                    Intensity::Prompt => row.prompts += 1,
                    _ => {}
                }
            }
            Record::Response(r) => match r.action {
                Action::Dismiss => row.dismissals += 1,
                Action::ProceedWithRisk => row.proceed_with_risk += 1,
                _ => {}
            },
            _ => {}
        }
    }

    /// The rows, by developer then project.
    pub fn finish(self) -> Vec<OriginRow> {
        self.rows.into_values().collect()
    }
}
