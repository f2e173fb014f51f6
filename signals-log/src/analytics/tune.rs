//! Tuning suggestions from [`Stats`]: `ahp signals tune`.
//!
//! The rules and their thresholds (each needs a minimum sample so that a
//! handful of events does not produce advice):
//!
//! | finding              | fires when                                                   |
//! |----------------------|--------------------------------------------------------------|
//! | `prompt_dismissed`   | ≥ [`MIN_PROMPTS`] prompts and dismissal rate ≥ [`DISMISS_RATE`] |
//! | `block_overridden`   | ≥ [`MIN_BLOCKS`] blocks and proceed-with-risk rate ≥ [`OVERRIDE_RATE`] |
//! | `never_fired`        | selected in ≥ [`MIN_RUNS_SILENT`] runs and raised no signal   |
//! | `blocks_too_often`   | ≥ [`MIN_RUNS_SILENT`] runs and block rate ≥ [`BLOCK_RATE`]    |

use super::stats::Stats;
use ahp_engine::Registry;
use serde::Serialize;
use serde_json::json;

/// Prompts needed before a dismissal rate is judged.
pub const MIN_PROMPTS: u64 = 20;
/// A prompt dismissed this often is noise.
pub const DISMISS_RATE: f64 = 0.5;
/// Blocks needed before an override rate is judged.
pub const MIN_BLOCKS: u64 = 10;
/// A block overridden (`proceed_with_risk`) this often is too strict.
pub const OVERRIDE_RATE: f64 = 0.3;
/// Runs needed before "never fired" or a block rate is judged.
pub const MIN_RUNS_SILENT: u64 = 50;
/// An entry that blocks this share of its runs probably blocks too much.
pub const BLOCK_RATE: f64 = 0.5;
/// Runs a shadow entry needs before it is judged ready to enforce.
pub const MIN_RUNS_SHADOW: u64 = 50;
/// Selected runs needed before "always pre-empted" is judged.
pub const MIN_RUNS_PREEMPTED: u64 = 20;
/// Sessions a shadow entry needs to have seen before it is judged.
pub const MIN_SESSIONS_SHADOW: u64 = 3;
/// A shadow entry that would stop more than this share of its runs is not
/// ready: enforcing it would stop the work it watches.
pub const SHADOW_STOP_RATE: f64 = 0.1;

/// One suggestion with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The entry id.
    pub source: String,
    /// The event.
    pub event: String,
    /// What was found: `prompt_dismissed`, `block_overridden`, `never_fired`,
    /// `blocks_too_often`; for shadow entries `shadow_gathering`,
    /// `shadow_too_strict`, `shadow_ready`; `always_preempted`.
    pub finding: &'static str,
    /// The numbers behind it.
    pub evidence: serde_json::Value,
    /// What to do, one line, with the evidence.
    pub suggestion: String,
}

fn pct(r: f64) -> u64 {
    (r * 100.0).round() as u64
}

/// Whether a shadow entry looks ready to enforce: it has seen enough runs
/// and sessions, and would have stopped (blocked or asked) few of them.
fn shadow_finding(row: &super::stats::SourceStats) -> Option<Finding> {
    if row.runs_selected == 0 {
        return None;
    }
    let stops = row.blocks + row.prompts;
    let rate = stops as f64 / row.runs_selected as f64;
    let evidence = json!({"runs_selected": row.runs_selected, "would_block": row.blocks,
                          "would_prompt": row.prompts, "sessions": row.sessions, "would_stop_rate": rate});
    let said = format!(
        "{} (shadow) would have blocked {} and asked {} of {} runs ({}%), in {} session{}",
        row.source,
        row.blocks,
        row.prompts,
        row.runs_selected,
        pct(rate),
        row.sessions,
        if row.sessions == 1 { "" } else { "s" }
    );
    let (finding, advice) = if row.runs_selected < MIN_RUNS_SHADOW
        || row.sessions < MIN_SESSIONS_SHADOW && stops > 0
    {
        (
            "shadow_gathering",
            format!(
                "keep it in shadow: judged after {MIN_RUNS_SHADOW} runs and {MIN_SESSIONS_SHADOW} sessions"
            ),
        )
    } else if rate > SHADOW_STOP_RATE {
        (
            "shadow_too_strict",
            "read its would-be signals (`ahp signals query --source …`) and narrow it before enforcing"
                .to_string(),
        )
    } else {
        (
            "shadow_ready",
            "looks ready to enforce: remove `mode: shadow`".to_string(),
        )
    };
    Some(Finding {
        source: row.source.clone(),
        event: row.event.clone(),
        finding,
        evidence,
        suggestion: format!("{said} → {advice}"),
    })
}

/// The suggestions for `stats`, in the order of its rows. An oracle's
/// own advice (which config key to raise or review) comes from its
/// registration ([`Tuning`](ahp_engine::registry::Tuning)).
///
/// ```
/// use ahp_signals_log::analytics::{stats::{SourceStats, Stats}, tune::suggest};
/// let row = SourceStats { source: "X".into(), event: "pre-tool-use".into(),
///     runs_selected: 120, ..Default::default() };
/// let found = suggest(&Stats { rows: vec![row], ..Default::default() }, &ahp_engine::Registry::new());
/// assert_eq!(found[0].suggestion, "X never fired in 120 runs → consider removing");
/// ```
pub fn suggest(stats: &Stats, registry: &Registry) -> Vec<Finding> {
    let mut out = Vec::new();
    for row in &stats.rows {
        // Selected, but an earlier wave's block always came first: it
        // never decides (or, in shadow, never even says what it would).
        if row.runs_selected >= MIN_RUNS_PREEMPTED && row.skipped_after_block == row.runs_selected {
            out.push(Finding {
                source: row.source.clone(),
                event: row.event.clone(),
                finding: "always_preempted",
                evidence: json!({"runs_selected": row.runs_selected,
                                 "skipped_after_block": row.skipped_after_block}),
                suggestion: format!(
                    "{}{} never ran in {} selected runs: an earlier block always pre-empts it (on_block: stop) → give it a lower priority number so it runs first, or set on_block: collect",
                    row.source,
                    if row.shadow { " (shadow)" } else { "" },
                    row.runs_selected
                ),
            });
            continue;
        }
        if row.shadow {
            out.extend(shadow_finding(row));
            continue;
        }
        let tuning = registry.tuning(row.oracle.as_deref().unwrap_or(&row.source));
        let finding = |finding, evidence, suggestion| Finding {
            source: row.source.clone(),
            event: row.event.clone(),
            finding,
            evidence,
            suggestion,
        };
        if let Some(r) = row
            .dismissal_rate
            .filter(|&r| row.prompts >= MIN_PROMPTS && r >= DISMISS_RATE)
        {
            let mut advice = "lower to aid".to_string();
            if let (Some(key), Some(p90)) = (&tuning.files_limit_key, row.changed_files_p90) {
                advice.push_str(&format!(" or raise {key} to {p90} (p90 of changed files)"));
            }
            out.push(finding(
                "prompt_dismissed",
                json!({"prompts": row.prompts, "dismissals": row.dismissals, "dismissal_rate": r,
                       "changed_files_p90": row.changed_files_p90}),
                format!(
                    "{} prompt dismissed {}% of {} → {advice}",
                    row.source,
                    pct(r),
                    row.prompts
                ),
            ));
        }
        if let Some(r) = row
            .proceed_with_risk_rate
            .filter(|&r| row.blocks >= MIN_BLOCKS && r >= OVERRIDE_RATE)
        {
            let what = match &tuning.block_list_key {
                Some(key) => format!("review {key}"),
                None => "review its rules or lower to prompt".to_string(),
            };
            out.push(finding(
                "block_overridden",
                json!({"blocks": row.blocks, "proceed_with_risk": row.proceed_with_risk,
                       "proceed_with_risk_rate": r}),
                format!(
                    "{} block overridden (proceed_with_risk) {}% of {} → too strict: {what}",
                    row.source,
                    pct(r),
                    row.blocks
                ),
            ));
        }
        if row.firings == 0 && row.runs_selected >= MIN_RUNS_SILENT {
            out.push(finding(
                "never_fired",
                json!({"runs_selected": row.runs_selected}),
                format!(
                    "{} never fired in {} runs → consider removing",
                    row.source, row.runs_selected
                ),
            ));
        }
        if let Some(r) = row
            .block_rate
            .filter(|&r| row.runs_selected >= MIN_RUNS_SILENT && r >= BLOCK_RATE)
        {
            out.push(finding(
                "blocks_too_often",
                json!({"blocks": row.blocks, "runs_selected": row.runs_selected, "block_rate": r,
                       "mttr_secs": row.mttr_secs}),
                format!(
                    "{} blocks {}% of {} runs → check that it blocks only what must stop",
                    row.source,
                    pct(r),
                    row.runs_selected
                ),
            ));
        }
    }
    out
}
