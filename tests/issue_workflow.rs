//! SPEC's story end to end: a Monoco issue walks submit and close in a real
//! git repository, gated by `ahp gate` with the example policy.

use crate::common::*;
use std::path::Path;
use std::process::Command as Std;

fn example(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/monoco")
            .join(rel),
    )
    .unwrap()
}

fn gate(sb: &Sandbox, event: &str) -> (i32, serde_json::Value, String) {
    let out = sb
        .ahp()
        .args([
            "gate",
            event,
            "--issue",
            "Issues/Features/open/FEAT-0123-rotate-log.md",
        ])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        json_out(&out),
        stderr(&out),
    )
}

#[test]
fn the_issue_story_from_submit_to_close() {
    let sb = Sandbox::new();
    let root = sb.root();
    sb.git_init();
    sb.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    sb.write("README.md", "# demo\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "chore: start"]);
    git(root, &["checkout", "-q", "-b", "feat/rotate-log"]);
    sb.write(".ahp/hooks.yaml", &example(".ahp/hooks.yaml"));
    sb.write(
        "Issues/Features/open/FEAT-0123-rotate-log.md",
        &example("Issues/Features/open/FEAT-0123-rotate-log.md"),
    );

    // 1. Submit with an open checklist item: blocked, naming chk-003.
    let (code, v, err) = gate(&sb, "pre-issue-submit");
    assert_eq!(code, 2, "{err}");
    let block = &v["signals"][0];
    assert_eq!(block["header"]["source"], "ChecklistValidator");
    assert_eq!(block["context"]["issue_id"], "FEAT-0123");
    let fix = block["payload"]["resolution_path"].to_string();
    assert!(fix.contains("chk-003"), "{fix}");
    assert!(!fix.contains("chk-001"), "{fix}");

    // 2. Tick it; a 25-file change with max_files 20 gets a batch plan.
    let issue =
        std::fs::read_to_string(root.join("Issues/Features/open/FEAT-0123-rotate-log.md")).unwrap();
    sb.write(
        "Issues/Features/open/FEAT-0123-rotate-log.md",
        &issue.replace("- [ ] chk-003", "- [x] chk-003"),
    );
    for i in 0..12 {
        sb.write(&format!("src/log/part_{i}.rs"), "// rotation\n");
    }
    for i in 0..13 {
        sb.write(&format!("src/reader/part_{i}.rs"), "// reader\n");
    }
    let (code, v, err) = gate(&sb, "pre-issue-submit");
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["outcome"], "control", "{v}");
    let control = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["header"]["source"] == "FileChangeLimiter")
        .unwrap();
    assert_eq!(control["header"]["intensity"], "control");
    let change = v["context_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"] == "files.batches")
        .unwrap();
    let batches = change["value"].as_array().unwrap();
    assert!(batches.len() >= 2, "{batches:?}");
    let planned: usize = batches.iter().map(|b| b.as_array().unwrap().len()).sum();
    assert!(planned >= 25, "{batches:?}");
    assert!(
        batches.iter().all(|b| b.as_array().unwrap().len() <= 20),
        "{batches:?}"
    );

    // 3. After submit: aid for the reviewers.
    let (code, v, err) = gate(&sb, "post-issue-submit");
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["outcome"], "aid", "{v}");
    assert!(
        v["signals"][0]["payload"]["context_info"]
            .as_str()
            .unwrap()
            .contains("@team-lead")
    );

    // 4. Close without tests for the source change: blocked; with them: passes.
    let (code, v, err) = gate(&sb, "pre-issue-close");
    assert_eq!(code, 2, "{err}");
    assert_eq!(v["signals"][0]["header"]["source"], "CompletionVerifier");
    sb.write("tests/rotation.rs", "#[test]\nfn rotates() {}\n");
    let (code, v, err) = gate(&sb, "pre-issue-close");
    assert_eq!(code, 0, "{err}: {v}");

    // Every signal of the story is in the log, in order.
    let logged: Vec<String> = sb
        .log_lines()
        .iter()
        .filter(|l| l["kind"] == "signal")
        .map(|l| l["header"]["source"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        logged,
        [
            "ChecklistValidator",
            "FileChangeLimiter",
            "ReviewTrigger",
            "CompletionVerifier"
        ],
        "{logged:?}"
    );
}

#[test]
fn the_monoco_script_refuses_a_blocked_submit() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", &example(".ahp/hooks.yaml"));
    sb.write(
        "Issues/Features/open/FEAT-0123-rotate-log.md",
        &example("Issues/Features/open/FEAT-0123-rotate-log.md"),
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/monoco/issue");
    let out = Std::new("bash")
        .arg(&script)
        .args(["submit", "Issues/Features/open/FEAT-0123-rotate-log.md"])
        .env("AHP", env!("CARGO_BIN_EXE_ahp"))
        .env("HOME", sb.home.path())
        .env("XDG_CONFIG_HOME", sb.home.path().join(".config"))
        .env("XDG_DATA_HOME", sb.home.path().join(".local/share"))
        .current_dir(sb.root())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("chk-003"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("blocked by policy"));
}

/// ChecklistValidator's `allow_partial` and `min_completion_rate` each do
/// what `ahp schema` says on its own, and together: the rate alone is a
/// threshold (below blocks, at or above passes), allow_partial alone turns
/// the block into a prompt, both block below the rate and prompt above it.
#[test]
fn checklist_partial_keys_work_alone_and_together() {
    let sb = Sandbox::new();
    let submit = |config: &str, done: usize| {
        sb.write(
            ".ahp/hooks.yaml",
            &format!(
                "settings: {{builtin: false}}\nhooks:\n  pre-issue-submit:\n    - oracle: ChecklistValidator\n      config: {config}\n"
            ),
        );
        let items: Vec<serde_json::Value> = (1..=4)
            .map(|i| {
                let state = if i <= done { "done" } else { "todo" };
                serde_json::json!({"id": format!("chk-00{i}"), "text": "t", "state": state})
            })
            .collect();
        let ctx = serde_json::json!({"issue": {"id": "F-1"}, "checklist": {"items": items}});
        let out = sb.run("pre-issue-submit", ctx.to_string());
        let v = json_out(&out);
        (
            out.status.code(),
            v["outcome"].as_str().unwrap().to_string(),
            v,
        )
    };

    // min_completion_rate alone.
    let (code, outcome, v) = submit("{min_completion_rate: 0.5}", 1);
    assert_eq!((code, outcome.as_str()), (Some(2), "block"), "{v}");
    let reason = v["signals"][0]["payload"]["reason"].as_str().unwrap();
    assert!(reason.contains("25% complete, 50% required"), "{reason}");
    let (code, outcome, v) = submit("{min_completion_rate: 0.5}", 2);
    assert_eq!((code, outcome.as_str()), (Some(0), "accept"), "{v}");

    // allow_partial alone.
    let (code, outcome, v) = submit("{allow_partial: true}", 0);
    assert_eq!((code, outcome.as_str()), (Some(3), "prompt"), "{v}");
    assert!(!v.to_string().contains("100% required"), "{v}");

    // Both: below the rate blocks, at or above it prompts.
    let both = "{allow_partial: true, min_completion_rate: 0.5}";
    let (code, outcome, v) = submit(both, 1);
    assert_eq!((code, outcome.as_str()), (Some(2), "block"), "{v}");
    let (code, outcome, v) = submit(both, 2);
    assert_eq!((code, outcome.as_str()), (Some(3), "prompt"), "{v}");

    // Neither: any open item blocks.
    let (code, outcome, v) = submit("{}", 3);
    assert_eq!((code, outcome.as_str()), (Some(2), "block"), "{v}");
}

/// TestGate's `timeout_ms` is how long the suite may run: the entry's
/// default time limit (`settings.timeout`, 30 s unless set) cut it, and a
/// failing suite longer than that failed open.
#[test]
fn a_test_suite_runs_for_its_own_time_limit_not_the_entry_default() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  timeout: 500\nhooks:\n  pre-issue-submit:\n    - oracle: TestGate\n      config:\n        command: \"sleep 2; exit 1\"\n        timeout_ms: 20000\n    - oracle: LintChecker\n      config:\n        linters: [\"sleep 2; echo lint broke; exit 1\"]\n        timeout_ms: 20000\n",
    );
    sb.trust();
    let out = sb
        .ahp()
        .args(["run", "pre-issue-submit", "--format", "json"])
        .write_stdin(r#"{"issue":{"id":"F-1"}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    let sources: Vec<&str> = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["header"]["source"].as_str())
        .collect();
    assert!(sources.contains(&"TestGate"), "{v}");
    assert!(sources.contains(&"LintChecker"), "{v}");
    assert!(!stderr(&out).contains("timed out"), "{}", stderr(&out));
}

/// A repository's short `settings.timeout` does not cut the user's own
/// test suite either: the guarded default still gives the suite its
/// `timeout_ms`.
#[test]
fn a_repositorys_short_timeout_does_not_cut_the_users_test_suite() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-issue-submit:\n    - oracle: TestGate\n      config:\n        command: \"sleep 1; exit 1\"\n        timeout_ms: 20000\n",
    );
    sb.write(".ahp/hooks.yaml", "settings:\n  timeout: 100\n");
    let out = sb
        .ahp()
        .args(["run", "pre-issue-submit", "--format", "json"])
        .write_stdin(r#"{"issue":{"id":"F-1"}}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("timed out"), "{}", stderr(&out));
}
