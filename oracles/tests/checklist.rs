//! ChecklistValidator as a user sees it: complete and incomplete
//! checklists, partial completion, sections, dependencies, the issue-file
//! fallback, and config errors.

use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, Payload, Registry, Severity,
    Signal,
};
use ahp_oracles::workflow::checklist::ChecklistValidator;
use ahp_oracles::workflow::issue::parse_issue;
use serde_json::{Value, json};
use std::path::Path;

fn validator(config: Value) -> ChecklistValidator {
    ChecklistValidator::from_config(OracleConfig::new(&config, None))
        .unwrap_or_else(|e| panic!("config {config} rejected: {e}"))
}

fn config_error(config: Value) -> OracleConfigError {
    match ChecklistValidator::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn ctx(value: Value) -> HookContext {
    serde_json::from_value(value).unwrap()
}

/// A context built the way the CLI builds it: from an issue file's text.
fn issue_ctx(body: &str) -> HookContext {
    let text = format!("---\nid: FEAT-0123\ntype: feature\n---\n{body}");
    let issue = parse_issue(&text, Path::new("Issues/FEAT-0123.md")).unwrap();
    ctx(json!({"issue": issue.context_issue(), "checklist": issue.context_checklist()}))
}

fn run(v: &ChecklistValidator, c: &HookContext) -> Vec<Signal> {
    v.signals(c).unwrap_or_else(|e| panic!("error: {e}"))
}

fn block(signals: &[Signal]) -> (&str, &[String]) {
    assert_eq!(signals.len(), 1, "{signals:?}");
    match &signals[0].payload {
        Payload::Block(b) => (&b.reason, &b.resolution_path),
        other => panic!("expected a block, got {other:?}"),
    }
}

fn prompt(signals: &[Signal]) -> (&str, &[String], Severity) {
    assert_eq!(signals.len(), 1, "{signals:?}");
    match &signals[0].payload {
        Payload::Prompt(p) => (&p.message, &p.suggestions, p.severity),
        other => panic!("expected a prompt, got {other:?}"),
    }
}

const STORY: &str = "## Technical Tasks
- [x] chk-001: schema
- [x] chk-002: API
- [ ] chk-003: write API docs
- [ ] chk-004: deploy (depends: chk-003)

## Acceptance Criteria
- [x] exports a 10 000-row report

## Review Comments
- [ ] rename `to_csv`
";

#[test]
fn complete_checklist_is_accepted() {
    let c = issue_ctx("## Tasks\n- [x] chk-001: a\n- [X] b\n- [~] dropped\n");
    assert!(run(&validator(Value::Null), &c).is_empty());
}

#[test]
fn incomplete_checklist_blocks_naming_the_items() {
    let signals = run(&validator(json!({})), &issue_ctx(STORY));
    let (reason, path) = block(&signals);
    assert_eq!(
        reason,
        "3 of 6 checklist items incomplete (chk-003, chk-004, \"rename `to_csv`\")"
    );
    assert_eq!(
        path,
        [
            "chk-003: write API docs",
            "chk-004: deploy (blocked by chk-003)",
            "rename `to_csv`",
        ]
    );
    assert_eq!(signals[0].header.signal_type, "checklist-incomplete");
    assert_eq!(signals[0].context.files, ["Issues/FEAT-0123.md"]);
}

#[tokio::test(flavor = "current_thread")]
async fn through_the_registry_and_the_oracle_trait() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(
        registry.resolve("checklist-validator"),
        Some("ChecklistValidator")
    );
    let config = json!({"allow_partial": false});
    let oracle = registry
        .build("checklist-validator", OracleConfig::new(&config, None))
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Block));
    let signals = oracle.evaluate(&issue_ctx(STORY)).await.unwrap();
    assert!(block(&signals).1.iter().any(|s| s.starts_with("chk-003")));
}

#[test]
fn ticked_item_blocked_by_an_unchecked_dependency_is_incomplete() {
    let c = issue_ctx("- [ ] chk-003: write API docs\n- [x] chk-004: deploy (depends: chk-003)\n");
    let signals = run(&validator(json!({})), &c);
    let (reason, path) = block(&signals);
    assert!(
        reason.starts_with("2 of 2 checklist items incomplete"),
        "{reason}"
    );
    assert_eq!(
        path,
        [
            "chk-003: write API docs",
            "chk-004: deploy (blocked by chk-003)"
        ]
    );
}

#[test]
fn doing_items_say_so() {
    let c = issue_ctx("- [-] chk-002: migrate\n- [/] half done\n");
    let signals = run(&validator(json!({})), &c);
    assert_eq!(
        block(&signals).1,
        ["chk-002: migrate (in progress)", "half done (in progress)"]
    );
}

#[test]
fn allow_partial_prompts_when_the_rate_is_met() {
    // 3 of 6 done = 50%.
    let v = validator(json!({"allow_partial": true, "min_completion_rate": 0.5}));
    assert_eq!(v.default_intensity(), None);
    let signals = run(&v, &issue_ctx(STORY));
    let (message, suggestions, severity) = prompt(&signals);
    assert!(
        message.starts_with("3 of 6 checklist items still open (chk-003, chk-004"),
        "{message}"
    );
    assert!(message.contains("50% complete, 50% required"), "{message}");
    assert_eq!(suggestions.len(), 3);
    assert_eq!(suggestions[0], "chk-003: write API docs");
    assert_eq!(severity, Severity::Low);
    assert_eq!(signals[0].header.signal_type, "checklist-partial");
}

#[test]
fn allow_partial_blocks_below_the_rate() {
    let v = validator(json!({"allow_partial": true, "min_completion_rate": 0.9}));
    let signals = run(&v, &issue_ctx(STORY));
    let (reason, path) = block(&signals);
    assert_eq!(
        reason,
        "3 of 6 checklist items incomplete (chk-003, chk-004, \"rename `to_csv`\"): 50% complete, 90% required"
    );
    assert_eq!(path.len(), 3);
}

#[test]
fn min_completion_rate_alone_is_a_threshold() {
    // STORY: 3 of 6 counted items done, 50%.
    let below = validator(json!({"min_completion_rate": 0.6}));
    let signals = run(&below, &issue_ctx(STORY));
    assert!(
        block(&signals).0.contains("50% complete, 60% required"),
        "{signals:?}"
    );
    // At or above it the gate passes: the open items are not asked about.
    for rate in [0.5, 0.1] {
        let v = validator(json!({"min_completion_rate": rate}));
        assert!(run(&v, &issue_ctx(STORY)).is_empty(), "{rate}");
    }
    let v = validator(json!({"allow_partial": false, "min_completion_rate": 0.5}));
    assert!(run(&v, &issue_ctx(STORY)).is_empty());
}

#[test]
fn allow_partial_alone_prompts_whatever_the_share() {
    let v = validator(json!({"allow_partial": true}));
    let signals = run(&v, &issue_ctx("- [ ] nothing done\n- [ ] yet\n"));
    let (message, _, severity) = prompt(&signals);
    assert_eq!(severity, Severity::Low);
    assert!(
        message.starts_with("2 of 2 checklist items still open") && !message.contains("required"),
        "{message}"
    );
}

#[test]
fn min_completion_rate_boundaries() {
    // 2 of 3 done: 66.6…% — a required 2/3 is met exactly.
    let c = issue_ctx("- [x] a\n- [x] b\n- [ ] c\n");
    let exact = validator(json!({"allow_partial": true, "min_completion_rate": 2.0 / 3.0}));
    prompt(&run(&exact, &c));
    let above = validator(json!({"allow_partial": true, "min_completion_rate": 0.67}));
    let signals = run(&above, &c);
    assert!(block(&signals).0.contains("66.6% complete, 67% required"));
    let zero = validator(json!({"allow_partial": true, "min_completion_rate": 0}));
    prompt(&run(&zero, &issue_ctx("- [ ] nothing done\n")));
}

#[test]
fn sections_filter() {
    let only_tasks = validator(json!({"sections": ["technical tasks"]}));
    let signals = run(&only_tasks, &issue_ctx(STORY));
    let (reason, _) = block(&signals);
    assert!(
        reason.starts_with("2 of 4 checklist items incomplete"),
        "{reason}"
    );

    let acceptance = validator(json!({"sections": ["Acceptance Criteria"]}));
    assert!(run(&acceptance, &issue_ctx(STORY)).is_empty());

    // A section the issue does not have: nothing counted, nothing to
    // block, but an aid says the section is not there.
    let none = validator(json!({"sections": ["Rollout"]}));
    let signals = run(&none, &issue_ctx(STORY));
    assert_eq!(signals.len(), 1, "{signals:?}");
    assert_eq!(signals[0].intensity(), Intensity::Aid);
    assert_eq!(signals[0].header.signal_type, "checklist-section-missing");
    assert!(
        signals[0].payload.summary().contains("`Rollout` not found"),
        "{signals:?}"
    );

    // Chinese headings match the English names of the same section.
    let zh = issue_ctx("## 任务\n- [ ] chk-1: 写文档\n\n## 验收标准\n- [x] 通过\n");
    let signals = run(&validator(json!({"sections": ["Technical Tasks"]})), &zh);
    assert_eq!(block(&signals).1, ["chk-1: 写文档"]);
    assert!(
        run(
            &validator(json!({"sections": ["Acceptance Criteria"]})),
            &zh
        )
        .is_empty()
    );
}

#[test]
fn a_dependency_outside_the_selected_sections_still_blocks() {
    let c = issue_ctx(
        "## Tasks\n- [ ] chk-1: build\n\n## Acceptance Criteria\n- [x] chk-2: works (depends: chk-1)\n",
    );
    let v = validator(json!({"sections": ["Acceptance Criteria"]}));
    let signals = run(&v, &c);
    assert_eq!(block(&signals).1, ["chk-2: works (blocked by chk-1)"]);
}

#[test]
fn empty_and_all_cancelled_checklists_are_accepted() {
    let v = validator(json!({}));
    assert!(run(&v, &issue_ctx("No boxes at all.\n")).is_empty());
    assert!(run(&v, &issue_ctx("- [~] dropped\n- [+] also dropped\n")).is_empty());
    assert!(run(&v, &ctx(json!({"checklist": {"items": []}}))).is_empty());
}

#[test]
fn no_checklist_and_no_issue_is_nothing_to_check() {
    let v = validator(json!({}));
    assert!(run(&v, &HookContext::default()).is_empty());
    assert!(run(&v, &ctx(json!({"issue": {"id": "FEAT-1"}}))).is_empty());
}

#[test]
fn hand_built_context_items_get_their_dependencies_resolved() {
    let c = ctx(json!({"checklist": {"items": [
        {"id": "chk-1", "text": "build", "state": "todo", "section": "Tasks"},
        {"id": "chk-2", "text": "ship", "state": "done", "section": "Tasks", "depends_on": ["chk-1"]},
        {"text": "cancelled", "state": "cancelled"},
    ]}}));
    let signals = run(&validator(json!({})), &c);
    let (reason, path) = block(&signals);
    assert!(reason.starts_with("2 of 2"), "{reason}");
    assert_eq!(path, ["chk-1: build", "chk-2: ship (blocked by chk-1)"]);
}

#[test]
fn malformed_context_checklist_is_an_error_not_a_pass() {
    let v = validator(json!({}));
    let bad_state = ctx(json!({"checklist": {"items": [{"text": "x", "state": "finished"}]}}));
    let e = v.signals(&bad_state).unwrap_err();
    assert!(e.message.contains("checklist.items.0"), "{e}");
    let not_list = ctx(json!({"checklist": {"items": "chk-1"}}));
    assert!(
        v.signals(&not_list)
            .unwrap_err()
            .message
            .contains("must be a list")
    );
    let cycle = ctx(json!({"checklist": {"items": [
        {"id": "a-1", "text": "a", "state": "todo", "depends_on": ["a-2"]},
        {"id": "a-2", "text": "b", "state": "todo", "depends_on": ["a-1"]},
    ]}}));
    let e = v.signals(&cycle).unwrap_err();
    assert!(e.message.contains("a-1 → a-2 → a-1"), "{e}");
}

#[test]
fn counts_only_context() {
    let v = validator(json!({}));
    let c = ctx(json!({"checklist": {"total": 4, "done": 3}}));
    let signals = run(&v, &c);
    let (reason, path) = block(&signals);
    assert_eq!(reason, "1 of 4 checklist items incomplete");
    assert_eq!(path.len(), 1);
    let c = ctx(json!({"checklist": {"total": 4, "incomplete_count": 0}}));
    assert!(run(&v, &c).is_empty());
    let with_sections = validator(json!({"sections": ["Tasks"]}));
    let c = ctx(json!({"checklist": {"total": 4, "done": 3}}));
    assert!(with_sections.signals(&c).is_err());
}

#[test]
fn falls_back_to_the_issue_file() {
    let dir = tempfile::tempdir().unwrap();
    let issues = dir.path().join("Issues");
    std::fs::create_dir(&issues).unwrap();
    std::fs::write(
        issues.join("FEAT-0123.md"),
        format!("---\nid: FEAT-0123\n---\n{STORY}"),
    )
    .unwrap();
    let config = json!({});
    let v = ChecklistValidator::from_config(OracleConfig::new(&config, Some(dir.path()))).unwrap();
    let c = ctx(json!({"issue": {"id": "FEAT-0123", "path": "Issues/FEAT-0123.md"}}));
    let signals = run(&v, &c);
    assert_eq!(block(&signals).1[0], "chk-003: write API docs");
    assert_eq!(signals[0].context.files, ["Issues/FEAT-0123.md"]);

    // An absolute path works without a project dir.
    let abs = issues.join("FEAT-0123.md");
    let c = ctx(json!({"issue": {"path": abs.to_string_lossy()}}));
    block(&run(&validator(json!({})), &c));

    // Relative to work_dir when there is no project dir.
    let c = ctx(
        json!({"work_dir": dir.path().to_string_lossy(), "issue": {"path": "Issues/FEAT-0123.md"}}),
    );
    block(&run(&validator(json!({})), &c));

    // A missing or broken file is an error, never a pass.
    let c = ctx(json!({"issue": {"path": "Issues/NOPE.md"}}));
    let e = v.signals(&c).unwrap_err();
    assert!(e.message.contains("NOPE.md: cannot read the issue"), "{e}");
    std::fs::write(issues.join("BAD.md"), "---\nid: B-1\nstage: doign\n---\n").unwrap();
    let c = ctx(json!({"issue": {"path": "Issues/BAD.md"}}));
    let e = v.signals(&c).unwrap_err();
    assert!(e.message.contains("BAD.md:3: stage:"), "{e}");
}

#[test]
fn many_open_items_are_summarised_in_the_reason() {
    let body: String = (1..=8)
        .map(|i| format!("- [ ] t-{i}: task {i}\n"))
        .collect();
    let signals = run(&validator(json!({})), &issue_ctx(&body));
    let (reason, path) = block(&signals);
    assert_eq!(
        reason,
        "8 of 8 checklist items incomplete (t-1, t-2, t-3, t-4, t-5, … and 3 more)"
    );
    assert_eq!(path.len(), 8);
}

#[test]
fn config_errors() {
    let e = config_error(json!({"allow_partal": true}));
    assert_eq!(e.key.as_deref(), Some("allow_partal"));
    assert!(e.message.contains("did you mean `allow_partial`"), "{e}");

    let e = config_error(json!({"allow_partial": "yes"}));
    assert_eq!(e.key.as_deref(), Some("allow_partial"));
    assert!(e.message.contains("true or false"), "{e}");

    let e = config_error(json!({"min_completion_rate": 1.5}));
    assert_eq!(e.key.as_deref(), Some("min_completion_rate"));
    assert!(e.message.contains("out of range"), "{e}");
    let e = config_error(json!({"min_completion_rate": -0.1}));
    assert!(e.message.contains("out of range"), "{e}");
    let e = config_error(json!({"min_completion_rate": "90%"}));
    assert!(e.message.contains("found a string"), "{e}");

    let e = config_error(json!({"sections": "Technical Tasks"}));
    assert_eq!(e.key.as_deref(), Some("sections"));
    assert!(e.message.contains("expected a list"), "{e}");
    let e = config_error(json!({"sections": []}));
    assert!(e.message.contains("empty list"), "{e}");
    let e = config_error(json!({"sections": ["Tasks", 3]}));
    assert_eq!(e.key.as_deref(), Some("sections.1"));
    let e = config_error(json!({"sections": ["  "]}));
    assert_eq!(e.key.as_deref(), Some("sections.0"));

    let e = config_error(json!(["allow_partial"]));
    assert!(e.message.contains("must be a map"), "{e}");
}
