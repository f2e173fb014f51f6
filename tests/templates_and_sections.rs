//! One template syntax everywhere (`{{ path }}`, the Rules one) and no
//! silent pass for a ChecklistValidator section the issue lacks, end to end
//! through `ahp validate` and `ahp gate … --issue FILE`.

use crate::common::*;

const ISSUE: &str = "---\nid: FEAT-0042\ntype: fix\nstatus: open\nstage: doing\ntitle: Typo\n---\n# Typo\n\n## Technical Tasks\n- [x] chk-001: fix it\n- [ ] chk-002: test it\n\n## Acceptance Criteria\n- [x] it reads right\n";

fn gate(sb: &Sandbox, event: &str) -> (i32, serde_json::Value, String) {
    let out = sb
        .ahp()
        .args(["gate", event, "--issue", "Issues/FEAT-0042.md"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        json_out(&out),
        stderr(&out),
    )
}

fn checklist_policy(sections: &str) -> String {
    format!(
        // The builtin layer's own open-items prompt is switched off: these
        // tests are about what ChecklistValidator alone says.
        "hooks:\n  pre-issue-submit:\n    - id: checklist-open-at-submit\n      enabled: false\n    - oracle: ChecklistValidator\n      config:\n        sections: {sections}\n"
    )
}

#[test]
fn a_section_the_issue_lacks_is_an_aid_not_a_silent_pass() {
    let sb = Sandbox::new();
    sb.write("Issues/FEAT-0042.md", ISSUE);
    sb.write(".ahp/hooks.yaml", &checklist_policy("[Nope]"));
    let (code, v, err) = gate(&sb, "pre-issue-submit");
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(v["outcome"], "aid", "{v}");
    let aid = &v["signals"][0];
    assert_eq!(aid["header"]["source"], "ChecklistValidator");
    assert_eq!(aid["header"]["type"], "checklist-section-missing");
    let info = aid["payload"]["context_info"].as_str().unwrap();
    assert!(
        info.starts_with("Checklist section `Nope` not found in Issues/FEAT-0042.md")
            && info.contains("`Technical Tasks`, `Acceptance Criteria`"),
        "{info}"
    );
    assert_eq!(aid["context"]["files"][0], "Issues/FEAT-0042.md");

    // Next to a real section, the open item still blocks and the missing
    // one is still named.
    sb.write(
        ".ahp/hooks.yaml",
        &checklist_policy("[Technical Tasks, Acceptance Critera]"),
    );
    let (code, v, err) = gate(&sb, "pre-issue-submit");
    assert_eq!(code, 2, "{v} {err}");
    let signals = v["signals"].as_array().unwrap();
    assert_eq!(signals[0]["header"]["type"], "checklist-incomplete", "{v}");
    assert!(
        signals[0]["payload"]["reason"]
            .as_str()
            .unwrap()
            .contains("chk-002")
    );
    assert!(
        signals.iter().any(|s| s["payload"]["context_info"]
            .as_str()
            .is_some_and(|i| i.contains("`Acceptance Critera` not found"))),
        "{v}"
    );

    // Every section there (Chinese alias included): nothing extra.
    sb.write(
        ".ahp/hooks.yaml",
        &checklist_policy("[Technical Tasks, 验收标准]"),
    );
    let (code, v, _) = gate(&sb, "pre-issue-submit");
    assert_eq!(code, 2);
    assert_eq!(v["signals"].as_array().unwrap().len(), 1, "{v}");
}

fn retrospective_policy(output: &str) -> String {
    format!(
        "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n      config:\n        output: '{output}'\n"
    )
}

#[test]
fn retrospective_output_takes_the_rules_placeholders() {
    let sb = Sandbox::new();
    sb.write("Issues/FEAT-0042.md", ISSUE);
    sb.write(
        ".ahp/hooks.yaml",
        &retrospective_policy("docs/retros/{{ issue.type }}/{{ issue.id }}.md"),
    );
    sb.trust();
    let (code, v, err) = gate(&sb, "post-issue-close");
    assert_eq!(code, 0, "{v} {err}");
    let aid = &v["signals"][0];
    assert_eq!(aid["header"]["type"], "retrospective", "{v}");
    let written = sb.root().join("docs/retros/fix/FEAT-0042.md");
    let text = std::fs::read_to_string(&written)
        .unwrap_or_else(|e| panic!("{}: {e}; {v}", written.display()));
    assert!(
        text.starts_with("# Retrospective: FEAT-0042 — Typo"),
        "{text}"
    );
}

#[test]
fn the_old_single_brace_placeholder_is_an_error_with_the_new_form() {
    let sb = Sandbox::new();
    let want = |err: &str| {
        assert!(err.contains(".ahp/hooks.yaml:5:9"), "{err}");
        assert!(
            err.contains("`{id}` is the old placeholder form")
                && err.contains("output: \"docs/retros/{{ issue.id }}.md\""),
            "{err}"
        );
    };
    // In the user's own layer: `ahp validate` says so.
    sb.write_home(
        ".ahp/hooks.yaml",
        &retrospective_policy("docs/retros/{id}.md"),
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    want(&stderr(&out));
    // Nothing is written to a file literally named `{id}.md`.
    sb.write("Issues/FEAT-0042.md", ISSUE);
    let out = sb
        .ahp()
        .args(["gate", "post-issue-close", "--issue", "Issues/FEAT-0042.md"])
        .output()
        .unwrap();
    want(&stderr(&out));
    assert!(!sb.root().join("docs/retros/{id}.md").exists());
    assert!(!sb.root().join("docs/retros/FEAT-0042.md").exists());

    // In a project's policy: `ahp trust` refuses it with the same words.
    std::fs::remove_file(sb.home.path().join(".ahp/hooks.yaml")).unwrap();
    sb.write(
        ".ahp/hooks.yaml",
        &retrospective_policy("docs/retros/{id}.md"),
    );
    let out = sb.ahp().arg("trust").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    want(&stderr(&out));
}

#[test]
fn a_typo_in_an_output_placeholder_fails_validate_before_trust() {
    let sb = Sandbox::new();
    // A project policy, not trusted yet: `ahp validate` checks it anyway.
    sb.write(
        ".ahp/hooks.yaml",
        &retrospective_policy("docs/retros/{{ issue.idd }}.md"),
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml") && err.contains("issue.idd"),
        "{err}"
    );
    assert!(err.contains("did you mean `issue.id`"), "{err}");
    // The old single-brace form is reported before trust too.
    sb.write(
        ".ahp/hooks.yaml",
        &retrospective_policy("docs/retros/{id}.md"),
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("`{id}` is the old placeholder form"),
        "{}",
        stderr(&out)
    );
}
