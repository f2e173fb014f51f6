//! Reading Monoco issue files as a user writes them: frontmatter fields and
//! their errors, checklist boxes, sections, ids, dependencies, and the
//! context shapes the oracles see.

use ahp_oracles::workflow::issue::{
    Checklist, ChecklistError, ChecklistItem, Issue, IssueError, IssueStage, IssueStatus,
    IssueType, ItemState, load_issue, parse_issue, section_matches,
};
use serde_json::json;
use std::path::Path;

fn parse(text: &str) -> Issue {
    parse_issue(text, Path::new("Issues/Features/open/FEAT-0123.md"))
        .unwrap_or_else(|e| panic!("rejected: {e}"))
}

fn error(text: &str) -> IssueError {
    match parse_issue(text, Path::new("FEAT-0123.md")) {
        Ok(i) => panic!("accepted but should not be: {i:?}"),
        Err(e) => e,
    }
}

fn with_body(body: &str) -> Issue {
    parse(&format!("---\nid: FEAT-0123\n---\n{body}"))
}

fn texts(issue: &Issue) -> Vec<String> {
    issue
        .checklist
        .items
        .iter()
        .map(|i| i.text.clone())
        .collect()
}

const MONOCO: &str = "---
id: FEAT-0123
uid: a1b2c3
type: feature
status: open
stage: doing
title: Export reports as CSV
parent: EPIC-0007
dependencies: [FEAT-0100]
related: [FIX-0042]
tags: [reports, export]
files:
  - src/export.rs
  - docs/export.md
solution: null
created_at: 2026-01-05 10:00:00
updated_at: '2026-01-06T09:30:00'
sprint: S-12
domains: [reporting]
---

## FEAT-0123: Export reports as CSV

Some prose with a [ ] that is not a box.

## Technical Tasks
- [x] chk-001: CSV writer
- [-] chk-002: wire the export button (depends: chk-001)
- [ ] write API docs <!-- id: chk-003 -->
- [~] Excel export (dropped)

## Acceptance Criteria
- [ ] chk-004: a 10 000-row report exports in under a second (depends: chk-002)

## Review Comments
- [x] rename `to_csv` to `export_csv`
";

#[test]
fn reads_a_monoco_issue() {
    let issue = parse(MONOCO);
    assert_eq!(issue.id, "FEAT-0123");
    assert_eq!(issue.uid.as_deref(), Some("a1b2c3"));
    assert_eq!(issue.issue_type, Some(IssueType::Feature));
    assert_eq!(issue.status, Some(IssueStatus::Open));
    assert_eq!(issue.stage, Some(IssueStage::Doing));
    assert_eq!(issue.title.as_deref(), Some("Export reports as CSV"));
    assert_eq!(issue.parent.as_deref(), Some("EPIC-0007"));
    assert_eq!(issue.dependencies, ["FEAT-0100"]);
    assert_eq!(issue.related, ["FIX-0042"]);
    assert_eq!(issue.tags, ["reports", "export"]);
    assert_eq!(issue.files, ["src/export.rs", "docs/export.md"]);
    assert_eq!(issue.solution, None);
    assert_eq!(issue.created_at.as_deref(), Some("2026-01-05 10:00:00"));
    assert_eq!(issue.updated_at.as_deref(), Some("2026-01-06T09:30:00"));
    assert_eq!(issue.closed_at, None);
    // Unknown fields are kept, and so is everything else as written.
    assert_eq!(issue.frontmatter["sprint"], "S-12");
    assert_eq!(issue.frontmatter["domains"], json!(["reporting"]));
    assert_eq!(issue.frontmatter["type"], "feature");
    assert_eq!(issue.body_line, 21);

    let items = &issue.checklist.items;
    let summary: Vec<(Option<&str>, &str, ItemState, &str)> = items
        .iter()
        .map(|i| {
            (
                i.id.as_deref(),
                i.text.as_str(),
                i.state,
                i.section.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                Some("chk-001"),
                "CSV writer",
                ItemState::Done,
                "Technical Tasks"
            ),
            (
                Some("chk-002"),
                "wire the export button",
                ItemState::Doing,
                "Technical Tasks"
            ),
            (
                Some("chk-003"),
                "write API docs",
                ItemState::Todo,
                "Technical Tasks"
            ),
            (
                None,
                "Excel export (dropped)",
                ItemState::Cancelled,
                "Technical Tasks"
            ),
            (
                Some("chk-004"),
                "a 10 000-row report exports in under a second",
                ItemState::Todo,
                "Acceptance Criteria"
            ),
            (
                None,
                "rename `to_csv` to `export_csv`",
                ItemState::Done,
                "Review Comments"
            ),
        ]
    );
    assert_eq!(items[0].line, 27);
    assert_eq!(items[4].blocked_by, ["chk-002"]);
    assert_eq!(issue.checklist.total(), 5);
    assert_eq!(issue.checklist.done(), 2);
}

#[test]
fn context_shapes() {
    let issue = parse(MONOCO);
    let ctx = issue.context_issue();
    assert_eq!(ctx["id"], "FEAT-0123");
    assert_eq!(ctx["type"], "feature");
    assert_eq!(ctx["stage"], "doing");
    assert_eq!(ctx["status"], "open");
    assert_eq!(ctx["path"], "Issues/Features/open/FEAT-0123.md");
    assert_eq!(ctx["files"], json!(["src/export.rs", "docs/export.md"]));
    assert_eq!(ctx["closed_at"], json!(null));
    assert_eq!(ctx["frontmatter"]["sprint"], "S-12");
    let keys: Vec<&str> = ctx
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "id",
        "uid",
        "type",
        "status",
        "stage",
        "title",
        "path",
        "parent",
        "dependencies",
        "related",
        "tags",
        "files",
        "solution",
        "created_at",
        "updated_at",
        "closed_at",
        "frontmatter",
    ];
    let mut keys = keys;
    keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys, expected);

    let cl = issue.context_checklist();
    assert_eq!(cl["total"], 5);
    assert_eq!(cl["done"], 2);
    assert_eq!(cl["incomplete_count"], 3);
    assert_eq!(cl["completion_rate"], 0.4);
    assert_eq!(
        cl["items"][1],
        json!({"id": "chk-002", "text": "wire the export button", "state": "doing",
               "section": "Technical Tasks", "depends_on": ["chk-001"], "blocked_by": [], "line": 28})
    );
    assert_eq!(cl["items"][4]["blocked_by"], json!(["chk-002"]));
    // No id: no `id` key.
    assert!(cl["items"][3].get("id").is_none());
    assert_eq!(cl["items"][3]["state"], "cancelled");
    // The context form reads back.
    let back: Checklist = serde_json::from_value(json!({"items": cl["items"]})).unwrap();
    assert_eq!(back, issue.checklist);
}

#[test]
fn chinese_sections() {
    let issue = with_body(
        "## 任务\n- [x] 设计接口\n- [ ] 编写文档\n\n## 验收标准\n- [ ] 导出正确\n\n## 评审\n- [+] 已取消的意见\n",
    );
    let sections: Vec<&str> = issue
        .checklist
        .items
        .iter()
        .map(|i| i.section.as_str())
        .collect();
    assert_eq!(sections, ["任务", "任务", "验收标准", "评审"]);
    assert_eq!(
        texts(&issue),
        ["设计接口", "编写文档", "导出正确", "已取消的意见"]
    );
    assert!(section_matches("任务", "Technical Tasks"));
    assert!(section_matches("验收标准", "acceptance criteria"));
    assert!(section_matches("评审", "Review Comments"));
    assert!(!section_matches("评审", "Acceptance Criteria"));
    let tasks = issue.checklist.select_sections(&["technical tasks"]);
    assert_eq!(tasks.items.len(), 2);
}

#[test]
fn any_heading_is_a_section_and_items_before_headings_have_none() {
    let issue = with_body(
        "- [ ] before any heading\n\n### Rollout **plan**\n- [ ] canary\n\nSetext heading\n--------------\n- [x] done\n",
    );
    let sections: Vec<&str> = issue
        .checklist
        .items
        .iter()
        .map(|i| i.section.as_str())
        .collect();
    assert_eq!(sections, ["", "Rollout plan", "Setext heading"]);
}

#[test]
fn boxes_in_code_blocks_and_html_comments_are_not_items() {
    let issue = with_body(
        "## Tasks\n\n```markdown\n- [ ] fenced example\n```\n\n    - [ ] indented code\n\n<!--\n- [ ] commented out\n-->\n\n~~~\n- [x] tilde fence\n~~~\n\n- [ ] real one <!-- - [ ] not another -->\n- [ ] `- [ ] code span` is text\n",
    );
    assert_eq!(texts(&issue), ["real one", "`- [ ] code span` is text"]);
}

#[test]
fn boxes_elsewhere_in_the_text_are_not_items() {
    let issue = with_body(
        "Paragraph with [x] inside.\n\n- list item mentioning [ ] later\n- **[ ]** bold box\n- [x]no space\n- [ ]\n\n> - [ ] in a quote\n",
    );
    assert_eq!(texts(&issue), ["in a quote"]);
}

#[test]
fn loose_lists_and_nested_items() {
    let issue = with_body(
        "- [ ] chk-1: first\n\n  More about the first item.\n\n  - [x] chk-2: nested child\n\n- [-] chk-3: second\n",
    );
    let got: Vec<(String, ItemState)> = issue
        .checklist
        .items
        .iter()
        .map(|i| (i.label(), i.state))
        .collect();
    assert_eq!(
        got,
        [
            ("chk-1: first".to_string(), ItemState::Todo),
            ("chk-2: nested child".to_string(), ItemState::Done),
            ("chk-3: second".to_string(), ItemState::Doing),
        ]
    );
}

#[test]
fn id_in_a_comment_on_the_next_line() {
    let issue = with_body("- [ ] deploy\n  <!-- id: chk-007 -->\n");
    assert_eq!(issue.checklist.items[0].id.as_deref(), Some("chk-007"));
    assert_eq!(issue.checklist.items[0].text, "deploy");
}

#[test]
fn dependency_forms() {
    let issue = with_body(
        "- [x] a-1: one\n- [x] a-2: two\n- [ ] a-3: three (depends: a-1, a-2)\n- [ ] a-4: four (Depends_On: a-3)\n- [ ] a-5: five <!-- depends: a-1 a-4 -->\n- [ ] a-6: six (depends on: a-1)\n",
    );
    let deps: Vec<Vec<String>> = issue
        .checklist
        .items
        .iter()
        .map(|i| i.depends_on.clone())
        .collect();
    assert_eq!(
        deps,
        [
            vec![],
            vec![],
            vec!["a-1".to_string(), "a-2".to_string()],
            vec!["a-3".to_string()],
            vec!["a-1".to_string(), "a-4".to_string()],
            vec!["a-1".to_string()],
        ]
    );
    assert_eq!(
        texts(&issue),
        ["one", "two", "three", "four", "five", "six"]
    );
}

#[test]
fn unchecked_items_block_their_dependents_transitively() {
    let issue = with_body(
        "- [ ] c-1: migrate\n- [x] c-2: backfill (depends: c-1)\n- [x] c-3: switch reads (depends: c-2)\n- [x] c-4: unrelated\n- [~] c-5: dropped\n- [x] c-6: after the dropped one (depends: c-5)\n- [-] c-7: doing\n- [x] c-8: waits on doing (depends: c-7)\n",
    );
    let blocked: Vec<(String, Vec<String>, bool)> = issue
        .checklist
        .items
        .iter()
        .map(|i| (i.id.clone().unwrap(), i.blocked_by.clone(), i.is_complete()))
        .collect();
    assert_eq!(
        blocked,
        [
            ("c-1".into(), vec![], false),
            ("c-2".into(), vec!["c-1".to_string()], false),
            ("c-3".into(), vec!["c-1".to_string()], false),
            ("c-4".into(), vec![], true),
            ("c-5".into(), vec![], false),
            ("c-6".into(), vec![], true),
            ("c-7".into(), vec![], false),
            ("c-8".into(), vec!["c-7".to_string()], false),
        ]
    );
    // c-5 is cancelled: not counted.
    assert_eq!(issue.checklist.total(), 7);
    assert_eq!(issue.checklist.done(), 2);
    assert_eq!(issue.checklist.incomplete_count(), 5);
}

#[test]
fn cycles_are_errors_naming_the_members() {
    let e = error(
        "---\nid: FEAT-0123\n---\n## Tasks\n- [ ] chk-001: a (depends: chk-003)\n- [ ] chk-002: b (depends: chk-001)\n- [ ] chk-003: c (depends: chk-002)\n",
    );
    assert_eq!(e.line, Some(5));
    let s = e.to_string();
    assert!(
        s.contains("cycle: chk-001 → chk-003 → chk-002 → chk-001"),
        "{s}"
    );
    let self_dep = error("---\nid: X-1\n---\n- [ ] s-1: self (depends: s-1)\n");
    assert!(self_dep.message.contains("s-1 → s-1"), "{self_dep}");
}

#[test]
fn unknown_dependency_is_an_error_with_did_you_mean() {
    let e =
        error("---\nid: FEAT-0123\n---\n- [ ] chk-001: a\n- [ ] chk-002: b (depends: chk-01)\n");
    assert_eq!(e.line, Some(5));
    assert!(e.message.contains("unknown item `chk-01`"), "{e}");
    assert!(e.message.contains("did you mean `chk-001`"), "{e}");
    let far = error("---\nid: FEAT-0123\n---\n- [ ] b (depends: zzz-999)\n");
    assert!(far.message.contains("no item has that id"), "{far}");
}

#[test]
fn duplicate_ids_are_errors() {
    let e =
        error("---\nid: FEAT-0123\n---\n- [ ] chk-001: a\n- [ ] b\n- [ ] c <!-- id: chk-001 -->\n");
    assert_eq!(e.line, Some(6));
    assert!(
        e.message
            .contains("duplicate checklist item id `chk-001` (first used on line 4)"),
        "{e}"
    );
    let two = error("---\nid: FEAT-0123\n---\n- [ ] chk-001: a <!-- id: chk-002 -->\n");
    assert!(two.message.contains("two ids"), "{two}");
}

#[test]
fn frontmatter_errors_name_file_line_and_field() {
    let e = error("---\nid: FEAT-0123\ntitle: x\ntype: feat\n---\n");
    assert_eq!(e.line, Some(4));
    assert_eq!(e.field.as_deref(), Some("type"));
    let s = e.to_string();
    assert!(s.starts_with("FEAT-0123.md:4: type: "), "{s}");
    assert!(
        s.contains("expected one of epic, feature, chore, fix, arch"),
        "{s}"
    );
    assert!(s.contains("did you mean `feature`"), "{s}");

    let e = error("---\nid: FEAT-0123\nstatus: done\n---\n");
    assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("status")));
    assert!(
        e.message
            .contains("expected one of open, closed, backlog, archived"),
        "{e}"
    );

    let e = error("---\nid: FEAT-0123\nstage: frozen\n---\n");
    assert!(
        e.message
            .contains("expected one of draft, doing, review, done, freezed"),
        "{e}"
    );

    let e = error("---\nid: FEAT-0123\n\ntags: backend\n---\n");
    assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("tags")));
    assert!(e.message.contains("expected a list"), "{e}");

    let e = error("---\nid: FEAT-0123\nfiles:\n  - a.rs\n  - {x: 1}\n---\n");
    assert_eq!((e.line, e.field.as_deref()), (Some(5), Some("files.1")));

    let e = error("---\nid: FEAT-0123\ntitle: [a, b]\n---\n");
    assert_eq!(e.field.as_deref(), Some("title"));
    assert!(e.message.contains("expected text, found a list"), "{e}");
}

#[test]
fn enum_values_ignore_case() {
    let issue = parse("---\nid: FIX-1\ntype: Fix\nstatus: BACKLOG\nstage: Freezed\n---\n");
    assert_eq!(issue.issue_type, Some(IssueType::Fix));
    assert_eq!(issue.status, Some(IssueStatus::Backlog));
    assert_eq!(issue.stage, Some(IssueStage::Freezed));
    let arch = parse("---\nid: ARCH-1\ntype: arch\nstatus: archived\n---\n");
    assert_eq!(arch.issue_type, Some(IssueType::Arch));
    assert_eq!(arch.status, Some(IssueStatus::Archived));
}

#[test]
fn frontmatter_structure_errors() {
    let e = error("# just markdown\n- [ ] x\n");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("no YAML frontmatter"), "{e}");

    let e = error("");
    assert!(e.message.contains("empty"), "{e}");

    let e = error("---\nid: FEAT-1\n- [ ] never closed\n");
    assert!(e.message.contains("no closing `---`"), "{e}");

    let e = error("---\ntitle: no id\n---\n");
    assert_eq!(e.field.as_deref(), Some("id"));
    assert!(e.message.contains("missing `id`"), "{e}");

    let e = error("---\nid: ''\n---\n");
    assert_eq!((e.line, e.field.as_deref()), (Some(2), Some("id")));

    let e = error("---\n---\nbody\n");
    assert!(e.message.contains("frontmatter is empty"), "{e}");

    let e = error("---\n- a\n- b\n---\n");
    assert!(e.message.contains("must be a map"), "{e}");

    let e = error("---\nid: FEAT-1\ntitle: [unclosed\n---\n");
    assert!(e.message.starts_with("invalid YAML"), "{e}");
    assert!(e.line.is_some_and(|l| l >= 3), "{e}");

    let e = error("---\nid: FEAT-1\nid: FEAT-2\n---\n");
    assert!(e.message.contains("duplicate"), "{e}");
    assert_eq!(e.line, Some(3));
}

#[test]
fn yaml_1_2_booleans_and_bom() {
    let issue = parse("\u{feff}---\nid: FEAT-1\ntitle: no\nflag: yes\n---\n");
    assert_eq!(issue.title.as_deref(), Some("no"));
    assert_eq!(issue.frontmatter["flag"], "yes");
    let issue = parse("---\r\nid: FEAT-1\r\n---\r\n- [x] crlf item\r\n");
    assert_eq!(issue.checklist.items[0].text, "crlf item");
    assert_eq!(issue.checklist.items[0].line, 4);
}

#[test]
fn empty_checklist() {
    let issue = parse("---\nid: FEAT-1\n---\nNo boxes here.\n");
    assert!(issue.checklist.items.is_empty());
    let cl = issue.context_checklist();
    assert_eq!(cl["total"], 0);
    assert_eq!(cl["completion_rate"], 1.0);
    assert_eq!(cl["items"], json!([]));
}

#[test]
fn load_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("FEAT-0123.md");
    std::fs::write(&path, MONOCO).unwrap();
    let issue = load_issue(&path).unwrap();
    assert_eq!(issue.path, path);
    assert_eq!(issue.checklist.items.len(), 6);

    let bad = dir.path().join("bad.md");
    std::fs::write(&bad, b"---\nid: \xff\n---\n").unwrap();
    let e = load_issue(&bad).unwrap_err();
    assert!(e.message.contains("not UTF-8"), "{e}");

    let e = load_issue(&dir.path().join("missing.md")).unwrap_err();
    assert!(
        e.to_string().contains("missing.md: cannot read the issue"),
        "{e}"
    );
}

#[test]
fn checklist_new_from_context_items() {
    let mut a = ChecklistItem::new(ItemState::Todo, "a");
    a.id = Some("k-1".into());
    let mut b = ChecklistItem::new(ItemState::Done, "b");
    b.id = Some("k-2".into());
    b.depends_on = vec!["k-9".into()];
    match Checklist::new(vec![a.clone(), b]).unwrap_err() {
        ChecklistError::UnknownDependency { dependency, .. } => assert_eq!(dependency, "k-9"),
        other => panic!("{other:?}"),
    }
    // Given blocked_by ids are kept.
    let mut c = ChecklistItem::new(ItemState::Done, "c");
    c.blocked_by = vec!["external-1".into()];
    let list = Checklist::new(vec![a, c]).unwrap();
    assert_eq!(list.items[1].blocked_by, ["external-1"]);
    assert!(!list.items[1].is_complete());
}
