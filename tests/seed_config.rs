//! The AHP seed's canonical configuration (§5.2, verbatim in
//! tests/fixtures/seed/hooks.yaml) loads, and its keys mean what the seed
//! says: `require_confirmation: true` asks, `coverage_threshold` alone
//! checks a coverage report, `create_pr` is accepted with a warning saying
//! why ahp does not open the pull request itself.

use crate::common::*;
use serde_json::json;

fn seed() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed/hooks.yaml"),
    )
    .unwrap()
}

/// The seed project: a real git repository with the seed policy committed.
fn seed_project() -> Sandbox {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(".ahp/hooks.yaml", &seed());
    sb.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    git(sb.root(), &["add", "-A"]);
    git(sb.root(), &["commit", "-q", "-m", "chore: start"]);
    sb
}

fn claude(sb: &Sandbox, payload: serde_json::Value) -> (i32, String, String) {
    let out = sb
        .ahp()
        .args(["hook", "claude-code"])
        .env_remove("CLAUDE_PROJECT_DIR")
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), stdout(&out), stderr(&out))
}

fn bash(sb: &Sandbox, command: &str) -> serde_json::Value {
    json!({
        "session_id": "seed-session",
        "transcript_path": "/tmp/seed-session.jsonl",
        "cwd": sb.root(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_use_id": "toolu_01SeedSeedSeedSeed",
    })
}

#[test]
fn the_seed_configuration_validates_with_a_warning_for_what_ahp_cannot_honour() {
    let sb = seed_project();
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}{}", stdout(&out));
    assert!(!err.contains("error"), "{err}");
    // create_pr: accepted, with why ahp does not open the pull request.
    let create_pr = err
        .lines()
        .find(|l| l.contains("config.create_pr"))
        .unwrap_or_else(|| panic!("no create_pr warning: {err}"));
    assert!(create_pr.starts_with("warning: "), "{create_pr}");
    assert!(create_pr.contains(".ahp/hooks.yaml:70:9"), "{create_pr}");
    assert!(
        create_pr.contains("ahp does not open pull requests itself"),
        "{create_pr}"
    );
    // require_all_pass with no test command: nothing to require, said so.
    let all_pass = err
        .lines()
        .find(|l| l.contains("config.require_all_pass"))
        .unwrap_or_else(|| panic!("no require_all_pass warning: {err}"));
    assert!(all_pass.contains(".ahp/hooks.yaml:56:9"), "{all_pass}");
    assert!(all_pass.contains("set `command:"), "{all_pass}");
    // `when: {tool: ["Bash", "Database"]}` on the builtin PermissionChecker
    // names Claude Code's shell tool only: another agent's shell calls are
    // no longer judged, which is said.
    let when = err
        .lines()
        .find(|l| l.contains("[PermissionChecker].when"))
        .unwrap_or_else(|| panic!("no when warning: {err}"));
    assert!(
        when.contains("does not for `rm -rf /` through gemini's run_shell_command"),
        "{when}"
    );
    // Nothing else is doubtful: require_confirmation and coverage_threshold
    // are honoured as written. (The seed's RetrospectiveGenerator waits
    // for `ahp trust`, which validate says too.)
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("warning") && !l.contains("not trusted yet"))
            .count(),
        3,
        "{err}"
    );
}

#[test]
fn require_confirmation_true_asks_before_a_listed_dangerous_command() {
    // The seed as written, `when: {tool: ["Bash", "Database"]}` included.
    let sb = seed_project();
    for command in ["rm -rf build", "rm -rf node_modules"] {
        let (code, out, err) = claude(&sb, bash(&sb, command));
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let hso = &v["hookSpecificOutput"];
        assert_eq!(hso["permissionDecision"], "ask", "{command}: {v}");
        let reason = hso["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("Confirmation required"), "{reason}");
        assert!(reason.contains(command), "{reason}");
    }
    // The seed's list adds to the built-in one: what a confirmation cannot
    // undo stays a block, though the seed's `rm -rf` also matches it.
    for command in [
        "rm -rf /",
        "mkfs.ext4 /dev/sda1",
        "psql -c 'DROP TABLE users'",
    ] {
        let (code, out, err) = claude(&sb, bash(&sb, command));
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("\"permissionDecision\":\"deny\""),
            "{command}: {out}"
        );
    }
    // A structural rule's block too: the seed's `rm -rf` asks, and must
    // not turn deleting a system folder into a question.
    let (code, out, err) = claude(&sb, bash(&sb, "sudo rm -rf /var/lib"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("[PermissionChecker] Dangerous command: ")
            && out.contains("matches rm-recursive-system"),
        "{out}"
    );
    // What the list does not name runs.
    let (code, out, err) = claude(&sb, bash(&sb, "ls -la"));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("\"ask\"") && !out.contains("deny"), "{out}");
}

#[test]
fn require_confirmation_true_keeps_the_built_in_dangerous_commands_blocking() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        require_confirmation: true\n",
    );
    let run = |command: &str| {
        sb.ahp()
            .args(["run", "pre-tool-use"])
            .write_stdin(
                json!({"tool": {"name": "Bash", "input": {"command": command}}}).to_string(),
            )
            .output()
            .unwrap()
    };
    // A confirmation cannot undo `rm -rf /`: it still blocks.
    let out = run("rm -rf /");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // The built-in confirmation list still asks.
    let out = run("git push --force origin main");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        json_out(&out)["signals"][0]["header"]["type"],
        "confirmation-required"
    );

    // `false`: nothing asks; dangerous commands still block.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        require_confirmation: false\n",
    );
    let out = run("git push --force origin main");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_out(&out)["outcome"], "accept");
    assert_eq!(run("rm -rf /").status.code(), Some(2));

    // Anything else is an error naming both forms.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        require_confirmation: yes please\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("hooks.yaml:5:9"), "{err}");
    assert!(err.contains("or true / false"), "{err}");
}

const ISSUE: &str = "---\nid: FEAT-0001\ntype: feature\nstatus: open\nstage: doing\ntitle: Answer\n---\n# Answer\n\n## Technical Tasks\n- [x] chk-001: answer\n";

fn lcov(covered: u32, total: u32) -> String {
    let mut s = String::from("SF:src/lib.rs\n");
    for line in 1..=total {
        s.push_str(&format!("DA:{line},{}\n", u32::from(line <= covered)));
    }
    s.push_str("end_of_record\n");
    s
}

fn submit(sb: &Sandbox) -> (i32, serde_json::Value, String) {
    let out = sb
        .ahp()
        .args(["gate", "pre-issue-submit", "--issue", "Issues/FEAT-0001.md"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        json_out(&out),
        stderr(&out),
    )
}

#[test]
fn coverage_threshold_alone_checks_the_coverage_report_found_in_the_project() {
    let sb = seed_project();
    sb.write("Issues/FEAT-0001.md", ISSUE);

    // No report anywhere: an error naming where ahp looked, never a pass
    // that says nothing.
    let (code, v, err) = submit(&sb);
    let errors = v["diagnostics"].to_string();
    assert!(
        errors.contains("coverage_threshold 80% needs a coverage report")
            && errors.contains("lcov.info, coverage/lcov.info"),
        "{code} {v} {err}"
    );

    // 50% in coverage/lcov.info (c8, nyc, jest): blocks at 80.
    sb.write("coverage/lcov.info", &lcov(5, 10));
    let (code, v, err) = submit(&sb);
    assert_eq!(code, 2, "{v} {err}");
    let block = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["header"]["source"] == "TestGate")
        .unwrap_or_else(|| panic!("no TestGate signal: {v}"));
    assert_eq!(block["header"]["type"], "coverage-below-threshold");
    let reason = block["payload"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("line coverage 50.0% < 80%"), "{reason}");
    assert!(
        block["payload"]["resolution_path"]
            .to_string()
            .contains("regenerate coverage/lcov.info and check that it reaches 80%"),
        "{block}"
    );

    // 90%: the gate passes.
    sb.write("coverage/lcov.info", &lcov(9, 10));
    let (code, v, err) = submit(&sb);
    assert!(
        !v["signals"].to_string().contains("TestGate"),
        "{code} {v} {err}"
    );
    assert_eq!(code, 0, "{v} {err}");
}

#[test]
fn create_pr_asks_the_agent_to_open_the_pull_request_with_the_reviewers() {
    let sb = seed_project();
    sb.write("Issues/FEAT-0001.md", ISSUE);
    // A hostile owner token must not reach the suggested shell command.
    sb.write("CODEOWNERS", "src/ @alice @org/core @x$(curl.evil)\n");
    let out = sb
        .ahp()
        .args(["run", "post-issue-submit"])
        .write_stdin(
            json!({"issue": {"id": "FEAT-0001"}, "files": {"changed": ["src/lib.rs"], "changed_count": 1}})
                .to_string(),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    let aid = &v["signals"][0];
    assert_eq!(aid["header"]["source"], "ReviewTrigger", "{v}");
    let follow_ups: Vec<String> = aid["payload"]["follow_ups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let pr = follow_ups
        .iter()
        .find(|f| f.starts_with("open a pull request for FEAT-0001"))
        .unwrap_or_else(|| panic!("no pull request step: {follow_ups:?}"));
    assert!(
        pr.contains("`gh pr create --fill --reviewer alice,org/core`"),
        "{pr}"
    );
    assert!(!pr.contains("curl"), "{pr}");
}
