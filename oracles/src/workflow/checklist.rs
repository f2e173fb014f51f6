//! The `ChecklistValidator` oracle: an issue is not submitted (or closed)
//! while its checklist has open items (SPEC §5).
//!
//! ```yaml
//! hooks:
//!   pre-issue-submit:
//!     - oracle: ChecklistValidator
//!       config:
//!         allow_partial: false        # default false: open items block; true: they prompt
//!         min_completion_rate: 0.9    # 0.0–1.0: below it blocks (default: every item)
//!         sections: [Technical Tasks, Acceptance Criteria]   # default: every section
//! ```
//!
//! **What it reads.** `checklist.items` of the context (see
//! [`crate::workflow::issue`] for the item shape), recounting them for the selected
//! `sections`. Without a `checklist` in the context it loads the issue file
//! at `issue.path` (relative paths are taken from the project root), and
//! with neither there is nothing to check: it accepts. A `checklist` with
//! counts (`total`, `done`) but no `items` is judged by the counts.
//!
//! **What it says.**
//! * every counted item complete (or nothing counted: an empty checklist,
//!   or every item cancelled `[~]`) → accept;
//! * open items and the completion rate below `min_completion_rate` (when
//!   it is set), or open items with neither key set → **block** (type
//!   `checklist-incomplete`), reason `N of M checklist items incomplete
//!   (chk-003, chk-004)`, and one `resolution_path` step per open item:
//!   `chk-003: write API docs`, `chk-004: deploy (blocked by chk-003)`,
//!   `chk-002: migrate (in progress)`;
//! * open items, `allow_partial: true`, and the rate at least
//!   `min_completion_rate` (or no rate set) → **prompt** (type
//!   `checklist-partial`, severity low) listing the open items as
//!   suggestions;
//! * open items, `allow_partial` not set (or false), and the rate at least
//!   `min_completion_rate` → accept: the share required is done.
//!
//! Each key works on its own: `allow_partial: true` alone lets any share
//! through with a prompt, `min_completion_rate` alone is a threshold below
//! which the gate blocks; together, below the rate blocks and above it
//! prompts.
//!
//! An item counts as complete when it is ticked `[x]` and none of the items
//! it depends on is still unchecked; cancelled items are not counted.
//! `sections` names headings, compared ignoring case; Monoco's English and
//! Chinese names of one section match each other (`Technical Tasks` /
//! `任务`, `Acceptance Criteria` / `验收标准`, `Review Comments` / `评审`), and
//! items under other headings are not counted. A named section the
//! checklist has no item under is not a silent pass: an **aid** (type
//! `checklist-section-missing`) names it and the sections the issue has,
//! next to whatever the other sections decide.
//!
//! ```
//! use ahp_oracles::workflow::checklist::ChecklistValidator;
//! use ahp_engine::{HookContext, Intensity, OracleConfig, Payload};
//! use serde_json::json;
//!
//! let v = ChecklistValidator::from_config(OracleConfig::empty()).unwrap();
//! let ctx: HookContext = serde_json::from_value(json!({"checklist": {"items": [
//!     {"id": "chk-001", "text": "schema", "state": "done"},
//!     {"id": "chk-003", "text": "write API docs", "state": "todo"},
//! ]}})).unwrap();
//! let signals = v.signals(&ctx).unwrap();
//! assert_eq!(signals[0].intensity(), Intensity::Block);
//! let Payload::Block(b) = &signals[0].payload else { unreachable!() };
//! assert_eq!(b.reason, "1 of 2 checklist items incomplete (chk-003)");
//! assert_eq!(b.resolution_path, ["chk-003: write API docs"]);
//! ```

use crate::workflow::issue::{Checklist, ChecklistItem, ItemState, load_issue, section_matches};
use ahp_engine::oracle::kind_of;
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Severity, Signal,
    async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// ChecklistValidator's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistValidatorConfig {
    /// Open items prompt instead of blocking (default false); with
    /// min_completion_rate, only once that share is done.
    pub allow_partial: Option<bool>,
    /// The share of items that must be done, 0.0 to 1.0: below it the gate
    /// blocks, at or above it passes (prompts, with allow_partial). Default:
    /// every item, or none with allow_partial.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_completion_rate: Option<f64>,
    /// Only the items under these headings count (default: every section).
    #[schemars(length(min = 1))]
    pub sections: Option<Vec<String>>,
}

/// The signal type of the block.
pub const INCOMPLETE_TYPE: &str = "checklist-incomplete";

/// The signal type of the prompt (partial completion allowed).
pub const PARTIAL_TYPE: &str = "checklist-partial";

/// The signal type of the aid about configured sections the issue lacks.
pub const MISSING_SECTION_TYPE: &str = "checklist-section-missing";

/// How many open items the reason names before "… and N more".
const NAMED_IN_REASON: usize = 5;

/// Checks an issue's checklist. Build with [`ChecklistValidator::from_config`];
/// see the [module docs](self).
#[derive(Debug, Clone)]
pub struct ChecklistValidator {
    allow_partial: bool,
    /// The share required: as configured, else every item (1.0), or none
    /// (0.0) with `allow_partial`, whose open items then always prompt.
    min_completion_rate: f64,
    sections: Option<Vec<String>>,
    project_dir: Option<PathBuf>,
}

/// The checklist an evaluation judges.
enum Source {
    /// Items (from the context or the issue file).
    Items(Checklist),
    /// Only counts, from a context without items.
    Counts { total: u64, done: u64 },
}

impl ChecklistValidator {
    /// Reads `allow_partial` (bool, default false), `min_completion_rate`
    /// (0.0–1.0, default 1.0, or 0.0 with `allow_partial`) and `sections`
    /// (a non-empty list of heading names; default: all).
    ///
    /// ```
    /// use ahp_oracles::workflow::checklist::ChecklistValidator;
    /// use ahp_engine::OracleConfig;
    /// let bad = serde_json::json!({"min_completion_rate": 90});
    /// let err = ChecklistValidator::from_config(OracleConfig::new(&bad, None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("min_completion_rate"));
    /// assert!(err.message.contains("0.9 for 90%"), "{err}");
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: ChecklistValidatorConfig = cfg.parse()?;
        let allow_partial = c.allow_partial.unwrap_or(false);
        let min_completion_rate = match c.min_completion_rate {
            // `allow_partial` alone is about how open items are told, not
            // about how many: any share prompts.
            None if allow_partial => 0.0,
            None => 1.0,
            Some(r) if (0.0..=1.0).contains(&r) => r,
            Some(r) => {
                return Err(OracleConfigError::at(
                    "min_completion_rate",
                    format!(
                        "{r} is out of range: give a fraction from 0.0 to 1.0 (e.g. 0.9 for 90%)"
                    ),
                ));
            }
        };
        let sections = match c.sections {
            None => None,
            Some(list) if list.is_empty() => {
                return Err(OracleConfigError::at(
                    "sections",
                    "an empty list counts no item; remove `sections` to check every section",
                ));
            }
            Some(list) => {
                let mut names = Vec::with_capacity(list.len());
                for (i, s) in list.iter().enumerate() {
                    if s.trim().is_empty() {
                        return Err(OracleConfigError::at(
                            format!("sections.{i}"),
                            "a section name must not be empty, e.g. `Technical Tasks`",
                        ));
                    }
                    names.push(s.trim().to_string());
                }
                Some(names)
            }
        };
        Ok(ChecklistValidator {
            allow_partial,
            min_completion_rate,
            sections,
            project_dir: cfg.project_dir(),
        })
    }

    /// The signals for `ctx` (what [`Oracle::evaluate`] returns).
    pub fn signals(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let Some((source, file)) = self.source(ctx)? else {
            return Ok(Vec::new());
        };
        let files: Vec<String> = file.into_iter().collect();
        let mut out = Vec::new();
        let signal = match source {
            Source::Items(all) => {
                if let Some(aid) = self.missing_sections(&all, files.first()) {
                    out.push(aid.with_files(files.clone()));
                }
                let list = match &self.sections {
                    Some(names) => all.select_sections(names),
                    None => all,
                };
                let total = list.total();
                let done = list.done();
                if done >= total {
                    return Ok(out);
                }
                let open: Vec<&ChecklistItem> = list.incomplete().collect();
                let names = short_names(&open);
                let steps: Vec<String> = open.iter().map(|i| step(i)).collect();
                self.judge(total as u64, done as u64, &names, steps)
            }
            Source::Counts { total, done } => {
                if done >= total {
                    return Ok(Vec::new());
                }
                let open = total - done;
                let steps = vec![format!(
                    "finish the {open} open checklist item(s) and tick them with [x]"
                )];
                self.judge(total, done, "", steps)
            }
        };
        if let Some(signal) = signal {
            out.insert(0, signal.with_files(files));
        }
        Ok(out)
    }

    /// An aid naming the configured `sections` that no item of `all` is
    /// under: a misspelt or renamed section would otherwise check nothing
    /// and pass in silence. `None` when every section is there.
    fn missing_sections(&self, all: &Checklist, file: Option<&String>) -> Option<Signal> {
        let names = self.sections.as_ref()?;
        let missing: Vec<&str> = names
            .iter()
            .filter(|n| !all.items.iter().any(|i| section_matches(&i.section, n)))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            return None;
        }
        let mut present: Vec<&str> = Vec::new();
        for i in &all.items {
            let s = i.section.trim();
            if !s.is_empty() && !present.contains(&s) {
                present.push(s);
            }
        }
        let quoted = |list: &[&str]| {
            list.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (noun, verb) = if missing.len() == 1 {
            ("section", "is")
        } else {
            ("sections", "are")
        };
        let place = match file {
            Some(f) => f.clone(),
            None => "the issue's checklist".to_string(),
        };
        let has = if present.is_empty() {
            "it has no checklist items under any section".to_string()
        } else {
            format!("its sections with items: {}", quoted(&present))
        };
        Some(
            Signal::aid(format!(
                "Checklist {noun} {} not found in {place}, so nothing {verb} checked there ({has})",
                quoted(&missing)
            ))
            .with_resolution_path([format!(
                "fix ChecklistValidator's `sections` in the policy to name sections the issue has, or add the {noun} to the issue"
            )])
            .with_type(MISSING_SECTION_TYPE),
        )
    }

    /// Block or prompt for `done` of `total` (done < total); `None` when the
    /// share required is done and open items do not prompt.
    fn judge(&self, total: u64, done: u64, names: &str, steps: Vec<String>) -> Option<Signal> {
        let open = total - done;
        let rate = done as f64 / total as f64;
        let rate_met = done as f64 >= self.min_completion_rate * total as f64 - 1e-9;
        let names = if names.is_empty() {
            String::new()
        } else {
            format!(" ({names})")
        };
        let noun = if total == 1 { "item" } else { "items" };
        // The share required is done, and open items are not asked about.
        if rate_met && !self.allow_partial {
            return None;
        }
        Some(if rate_met {
            // `allow_partial` alone requires no share: nothing to quote.
            let required = if self.min_completion_rate > 0.0 {
                format!(", {} required", percent(self.min_completion_rate))
            } else {
                String::new()
            };
            Signal::prompt(format!(
                "{open} of {total} checklist {noun} still open{names}: {} complete{required}; finish them or confirm they can wait",
                percent(rate),
            ))
            .with_severity(Severity::Low)
            .with_resolution_path(steps)
            .with_type(PARTIAL_TYPE)
        } else {
            let mut reason = format!("{open} of {total} checklist {noun} incomplete{names}");
            // Only all-or-nothing goes without the share done and required.
            if self.allow_partial || self.min_completion_rate < 1.0 {
                reason.push_str(&format!(
                    ": {} complete, {} required",
                    percent(rate),
                    percent(self.min_completion_rate)
                ));
            }
            Signal::block(reason)
                .with_resolution_path(steps)
                .with_type(INCOMPLETE_TYPE)
        })
    }

    /// The checklist to judge and the issue file it belongs to; `None` when
    /// the context has neither a checklist nor an issue path.
    fn source(&self, ctx: &HookContext) -> Result<Option<(Source, Option<String>)>, OracleError> {
        let issue_path = ctx
            .lookup("issue.path")
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|p| !p.trim().is_empty());
        if let Some(checklist) = ctx.lookup("checklist") {
            match checklist.get("items") {
                Some(Value::Null) | None => {}
                Some(items) => {
                    return Ok(Some((
                        Source::Items(items_from_context(items)?),
                        issue_path,
                    )));
                }
            }
            if let Some(counts) = counts_from_context(&checklist)? {
                if self.sections.is_some() {
                    return Err(OracleError::new(
                        "the context's `checklist` has counts but no `items`, so `sections` cannot be applied; give `checklist.items` or `issue.path`",
                    ));
                }
                return Ok(Some((counts, issue_path)));
            }
        }
        let Some(path) = issue_path else {
            return Ok(None);
        };
        let file = self.resolve(&path, ctx);
        let issue = load_issue(&file).map_err(|e| OracleError::new(e.to_string()))?;
        Ok(Some((Source::Items(issue.checklist), Some(path))))
    }

    /// `path` as given when absolute, else under the project root (or the
    /// context's `work_dir`).
    fn resolve(&self, path: &str, ctx: &HookContext) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        if let Some(root) = &self.project_dir {
            return root.join(p);
        }
        match ctx.work_dir.as_deref().filter(|w| !w.is_empty()) {
            Some(w) => Path::new(w).join(p),
            None => p.to_path_buf(),
        }
    }
}

/// Reads `checklist.items` of a context and rebuilds the dependency graph.
fn items_from_context(items: &Value) -> Result<Checklist, OracleError> {
    let Value::Array(list) = items else {
        return Err(OracleError::new(format!(
            "checklist.items in the context must be a list of items, found {}",
            kind_of(items)
        )));
    };
    let mut parsed = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let item: ChecklistItem = serde_json::from_value(v.clone()).map_err(|e| {
            OracleError::new(format!(
                "checklist.items.{i} in the context is not a checklist item ({{id?, text, state: todo|done|doing|cancelled, section, depends_on}}): {e}"
            ))
        })?;
        parsed.push(item);
    }
    Checklist::new(parsed).map_err(|e| OracleError::new(format!("checklist in the context: {e}")))
}

/// `{total, done}`, `{total, incomplete_count}` or `{incomplete_count}`
/// (with `done` if known) of a context checklist without items; `None`
/// when it has no counts either.
fn counts_from_context(checklist: &Value) -> Result<Option<Source>, OracleError> {
    let count = |key: &str| -> Result<Option<u64>, OracleError> {
        match checklist.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                OracleError::new(format!(
                    "checklist.{key} in the context must be a whole number, found {v}"
                ))
            }),
        }
    };
    let Some(total) = count("total")? else {
        // Open items counted, the total not: the open ones are enough to judge.
        return Ok(count("incomplete_count")?.map(|open| {
            let done = count("done").ok().flatten().unwrap_or(0);
            Source::Counts {
                total: open + done,
                done,
            }
        }));
    };
    let done = match (count("done")?, count("incomplete_count")?) {
        (Some(done), _) => done,
        (None, Some(open)) => total.saturating_sub(open),
        (None, None) => {
            return Err(OracleError::new(
                "checklist.total in the context comes without `done`, `incomplete_count` or `items`",
            ));
        }
    };
    Ok(Some(Source::Counts { total, done }))
}

/// One resolution step: `chk-003: write API docs`, with why it is open when
/// it is not plainly unchecked.
fn step(item: &ChecklistItem) -> String {
    let label = item.label();
    if !item.blocked_by.is_empty() {
        format!("{label} (blocked by {})", item.blocked_by.join(", "))
    } else if item.state == ItemState::Doing {
        format!("{label} (in progress)")
    } else {
        label
    }
}

/// `chk-003, chk-004, "write docs", … and 3 more`.
fn short_names(open: &[&ChecklistItem]) -> String {
    let mut names: Vec<String> = open
        .iter()
        .take(NAMED_IN_REASON)
        .map(|i| match &i.id {
            Some(id) => id.clone(),
            None => format!("\"{}\"", crate::template::truncate(&i.text, 40)),
        })
        .collect();
    if open.len() > NAMED_IN_REASON {
        names.push(format!("… and {} more", open.len() - NAMED_IN_REASON));
    }
    names.join(", ")
}

/// `0.9` → `90%`, `0.875` → `87.5%`; a rate is rounded down so that it is
/// never shown as reaching a requirement it misses.
fn percent(rate: f64) -> String {
    let tenths = (rate * 1000.0 + 1e-6).floor() / 10.0;
    if tenths.fract() == 0.0 {
        format!("{tenths:.0}%")
    } else {
        format!("{tenths:.1}%")
    }
}

#[async_trait]
impl Oracle for ChecklistValidator {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        self.signals(ctx)
    }

    fn default_intensity(&self) -> Option<Intensity> {
        if self.allow_partial {
            None
        } else {
            Some(Intensity::Block)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages() {
        assert_eq!(percent(0.9), "90%");
        assert_eq!(percent(0.875), "87.5%");
        assert_eq!(percent(0.8999), "89.9%");
        assert_eq!(percent(2.0 / 3.0), "66.6%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0%");
    }

    #[test]
    fn open_items_counted_without_a_total_still_block() {
        let v = ChecklistValidator::from_config(OracleConfig::empty()).unwrap();
        let judge = |checklist: serde_json::Value| {
            let ctx: HookContext =
                serde_json::from_value(serde_json::json!({ "checklist": checklist })).unwrap();
            v.signals(&ctx).unwrap()
        };
        let s = judge(serde_json::json!({"incomplete_count": 2, "done": 1}));
        assert_eq!(s[0].intensity(), Intensity::Block);
        assert!(
            s[0].payload.summary().contains("2 of 3"),
            "{}",
            s[0].payload.summary()
        );
        assert!(judge(serde_json::json!({"incomplete_count": 0})).is_empty());
    }
}
