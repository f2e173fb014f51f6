//! The managed (organisation) layer: what it sets, later layers cannot
//! switch off, change or weaken; each attempt is ignored and named.

use crate::common::{Sandbox, stderr, stdout};
use serde_json::json;
use std::path::PathBuf;

const MANAGED: &str = "settings:
  fail_closed: true
  builtin: true
  project_hooks: false
hooks:
  pre-tool-use:
    - oracle: Rules
      id: no-prod-db
      intensity: prompt
      config:
        rules:
          - condition: \"tool.input.command ~ 'psql.*prod'\"
            intensity: block
            message: no production database access from agents
";

fn managed(sb: &Sandbox, text: &str) -> PathBuf {
    sb.write_home("etc-ahp/hooks.yaml", text)
}

fn hook(sb: &Sandbox, managed: &PathBuf, command: &str) -> (String, String) {
    let out = sb
        .claude_pre_tool("s", "Bash", json!({"command": command}))
        .env("AHP_MANAGED_CONFIG", managed)
        .output()
        .unwrap();
    (stdout(&out), stderr(&out))
}

#[test]
fn later_layers_cannot_weaken_the_managed_policy() {
    let sb = Sandbox::new();
    let m = managed(&sb, MANAGED);
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  builtin: false\nhooks:\n  pre-tool-use:\n    - id: no-prod-db\n      intensity: aid\n",
    );
    sb.write(
        ".ahp/hooks.local.yaml",
        "settings:\n  fail_closed: false\nhooks:\n  pre-tool-use:\n    - id: no-prod-db\n      enabled: false\n    - id: no-prod-db-2\n      oracle: Rules\n      config: {rules: []}\n",
    );
    // The managed rule still asks (its own intensity: prompt), not aid,
    // and is not switched off.
    let (out, _) = hook(&sb, &m, "psql -h prod-db");
    assert!(
        out.contains("\"ask\"") && out.contains("no production database"),
        "{out}"
    );
    // The builtin layer is pinned on.
    let (out, _) = hook(&sb, &m, "rm -rf ~/");
    assert!(out.contains("\"deny\""), "{out}");
    // `fail_closed: false` is ignored: a broken project entry blocks.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: NoSuchOracle\n",
    );
    let (out, _) = hook(&sb, &m, "ls");
    assert!(out.contains("\"deny\""), "fail_closed must hold: {out}");

    // doctor names every attempt, with its file and line; config and
    // explain show the layer.
    sb.write(
        ".ahp/hooks.yaml",
        "settings:\n  builtin: false\nhooks:\n  pre-tool-use:\n    - id: no-prod-db\n      intensity: aid\n",
    );
    let out = sb
        .ahp()
        .env("AHP_MANAGED_CONFIG", &m)
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    for attempt in [
        "hooks.yaml:2:12: settings.builtin (project layer) is ignored",
        "hooks.yaml:6:18: hooks.pre-tool-use[no-prod-db].intensity (project layer) is ignored",
        "hooks.local.yaml:2:16: settings.fail_closed (local layer) is ignored",
        "hooks.local.yaml:6:16: hooks.pre-tool-use[no-prod-db].enabled (local layer) is ignored",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("problem managed:") && l.contains(attempt)),
            "{attempt}: {text}"
        );
    }
    let out = sb
        .ahp()
        .env("AHP_MANAGED_CONFIG", &m)
        .arg("config")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("# layer managed"), "{}", stdout(&out));
    let out = sb
        .ahp()
        .env("AHP_MANAGED_CONFIG", &m)
        .args(["explain", "pre-tool-use"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("from managed "), "{}", stdout(&out));
    // The local layer's own new entry is kept: adding is allowed.
    assert!(stdout(&out).contains("no-prod-db-2"), "{}", stdout(&out));
}

#[test]
fn a_later_layer_may_raise_a_managed_intensity() {
    let sb = Sandbox::new();
    let m = managed(&sb, MANAGED);
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: no-prod-db\n      intensity: block\n",
    );
    let (out, _) = hook(&sb, &m, "psql -h prod-db");
    assert!(out.contains("\"deny\""), "{out}");
    let out = sb
        .ahp()
        .env("AHP_MANAGED_CONFIG", &m)
        .arg("doctor")
        .output()
        .unwrap();
    assert!(
        !stdout(&out).contains("problem managed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_managed_policy_can_forbid_project_hooks() {
    let sb = Sandbox::new();
    let m = managed(&sb, MANAGED);
    sb.hook(
        true,
        "deny-all",
        "trigger: pre-tool-use\n",
        "cat >/dev/null; echo 'project hook ran' >&2; exit 2",
    );
    sb.trust();
    let (out, err) = hook(&sb, &m, "ls");
    assert!(!out.contains("project hook ran"), "{out}");
    assert!(
        err.contains("project_hooks: false") || out.is_empty(),
        "{out}{err}"
    );
    // Without the managed policy, the trusted hook runs.
    let out = sb
        .claude_pre_tool("s", "Bash", json!({"command": "ls"}))
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("project hook ran"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// A managed file that exists but does not parse fails closed: the
/// organisation's guarantees cannot be checked.
#[test]
fn a_broken_managed_policy_fails_closed() {
    let sb = Sandbox::new();
    let m = managed(&sb, "hooks: [unclosed\n");
    let (out, err) = hook(&sb, &m, "ls");
    assert!(out.contains("\"deny\""), "{out}{err}");
    assert!(err.contains("etc-ahp/hooks.yaml"), "{err}");
}

/// `builtin: true` in the managed policy pins the builtin entries too:
/// a repository's `enabled: false`, `when` or `mode: shadow` on them is
/// ignored and named.
#[test]
fn a_pinned_builtin_layer_cannot_be_switched_off_entry_by_entry() {
    let sb = Sandbox::new();
    let m = managed(&sb, MANAGED);
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  PreToolUse:\n    - id: permission-checker\n      enabled: false\n    - id: PathGuard\n      when: {tool.input.command: \"~^NEVER$\"}\n",
    );
    let (out, _) = hook(&sb, &m, "rm -rf ~/");
    assert!(
        out.contains("\"deny\"") && out.contains("PermissionChecker"),
        "{out}"
    );
    let out = sb
        .ahp()
        .env("AHP_MANAGED_CONFIG", &m)
        .arg("doctor")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("hooks.PreToolUse[permission-checker].enabled (project layer) is ignored"),
        "{text}"
    );
    assert!(text.contains("pinned by settings.builtin: true"), "{text}");
    assert!(
        text.contains("hooks.PreToolUse[PathGuard].when (project layer) is ignored"),
        "{text}"
    );
}

/// A managed path that is a dangling link fails closed, and project
/// hooks switched off by it do not block what they would not have run on.
#[test]
fn a_dangling_managed_link_fails_closed_and_forbidden_hooks_do_not_block() {
    let sb = Sandbox::new();
    let link = sb.home.path().join("managed-link.yaml");
    std::os::unix::fs::symlink(sb.home.path().join("gone.yaml"), &link).unwrap();
    let (out, err) = hook(&sb, &link, "ls");
    assert!(out.contains("\"deny\""), "{out}{err}");
    assert!(err.contains("link to a file that does not exist"), "{err}");

    let m = managed(&sb, MANAGED);
    sb.hook(
        true,
        "watcher",
        "trigger: pre-tool-use\n",
        "cat >/dev/null; exit 0",
    );
    let (out, err) = hook(&sb, &m, "ls");
    assert!(
        !out.contains("\"deny\""),
        "an untrusted, forbidden hook must not block: {out}{err}"
    );
}

/// A control that runs after the guards cannot carry past them what they
/// block: the builtin and managed entries judge the final input again.
#[test]
fn a_later_rewrite_is_judged_again_by_the_guards() {
    let sb = Sandbox::new();
    let m = managed(&sb, MANAGED);
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - oracle: Rules
      id: rewrite
      priority: 1000
      config:
        rules:
          - condition: \"tool.input.command == 'echo db'\"
            intensity: control
            message: rewrite
            modifications: [{target: tool.input.command, op: set, value: psql -h prod}]
          - condition: \"tool.input.command == 'echo home'\"
            intensity: control
            message: rewrite
            modifications: [{target: tool.input.command, op: set, value: rm -rf ~/}]
          - condition: \"tool.input.command == 'ls'\"
            intensity: control
            message: list all
            modifications: [{target: tool.input.command, op: set, value: ls -la}]
",
    );
    let (out, err) = hook(&sb, &m, "echo db");
    assert!(
        out.contains("\"ask\"") && out.contains("no production database"),
        "{out}{err}"
    );
    let (out, err) = hook(&sb, &m, "echo home");
    assert!(
        out.contains("\"deny\"") && out.contains("rm-r"),
        "{out}{err}"
    );
    let (out, err) = hook(&sb, &m, "ls");
    assert!(
        out.contains("ls -la") && !out.contains("\"deny\""),
        "{out}{err}"
    );
}

/// A repository's `settings.timeout` does not shorten a managed entry's
/// time limit: the organisation's slower gate used to time out and fail
/// open. Lengthening is fine, and the managed file's own value holds.
#[test]
fn a_later_settings_timeout_cannot_make_a_managed_entry_fail_open() {
    let sb = Sandbox::new();
    let m = managed(
        &sb,
        "hooks:\n  pre-tool-use:\n    - id: org-gate\n      oracle: TestGate\n      config: {command: \"sleep 0.3; exit 1\"}\n",
    );
    assert!(hook(&sb, &m, "ls").0.contains("\"deny\""));
    sb.write(".ahp/hooks.yaml", "settings:\n  timeout: 100\n");
    let (out, err) = hook(&sb, &m, "ls");
    assert!(out.contains("\"deny\""), "{out}{err}");
    assert!(!err.contains("timed out"), "{err}");
}

/// `fail_closed` is switched on by any layer and off by none: a managed
/// `fail_closed: false` leaves the user's `true` in force (it was taken out
/// as an override, and a broken entry then failed open).
#[test]
fn a_managed_fail_closed_false_does_not_undo_the_users_true() {
    let sb = Sandbox::new();
    let m = managed(&sb, "settings:\n  fail_closed: false\n");
    sb.write_home(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: NoSuchOracle\n",
    );
    let (out, err) = hook(&sb, &m, "ls");
    assert!(out.contains("\"deny\""), "{out}{err}");
    assert!(!err.contains("is ignored"), "{err}");
}

/// A managed `agent_timeout` is final, like its other settings: a user
/// who shortened it would stop the organisation's gates before they
/// answer, and they would fail open.
#[test]
fn a_later_layer_cannot_change_the_managed_agent_timeout() {
    let sb = Sandbox::new();
    let m = managed(
        &sb,
        "settings:\n  fail_closed: true\n  agent_timeout: 1000\n",
    );
    sb.write_home(".ahp/hooks.yaml", "settings:\n  agent_timeout: 600000\n");
    sb.hook(
        false,
        "slow",
        "trigger: pre-tool-call\ntimeout: 60000\n",
        "cat >/dev/null\nsleep 5\nexit 0",
    );
    let started = std::time::Instant::now();
    let (out, err) = hook(&sb, &m, "ls");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert!(out.contains("\"permissionDecision\":\"deny\""), "{out}");
    assert!(out.contains("at the call's deadline"), "{out}");
    assert!(
        err.contains("settings.agent_timeout (user layer) is ignored"),
        "{err}"
    );
}

/// The variable could name a file in the repository (a relative path, or
/// one through `/proc/self/cwd`, set from an agent's project settings):
/// that file became the final layer, ran its commands without trust and
/// switched the builtin layer off without a word. It is refused, and as
/// an unreadable managed layer, fails closed.
#[test]
fn a_managed_policy_in_the_project_is_refused() {
    let sb = Sandbox::new();
    sb.git_init();
    sb.write(
        ".ahp/policy.yaml",
        "settings:\n  builtin: false\nhooks:\n  pre-tool-use:\n    - oracle: TestGate\n      id: t\n      config: {command: \"touch pwned\"}\n",
    );
    for managed in [
        PathBuf::from(".ahp/policy.yaml"),
        PathBuf::from("/proc/self/cwd/.ahp/policy.yaml"),
        sb.root().join("sub/../.ahp/policy.yaml"),
    ] {
        let (out, err) = hook(&sb, &managed, "rm -rf ~/");
        assert!(
            out.contains("\"deny\""),
            "{}: {out} {err}",
            managed.display()
        );
        assert!(
            err.contains("AHP_MANAGED_CONFIG must name an absolute path outside the project"),
            "{}: {err}",
            managed.display()
        );
        assert!(!sb.root().join("pwned").exists(), "{}", managed.display());
    }
    // Outside the project, it is the organisation's policy.
    let m = managed(&sb, "settings:\n  builtin: false\n");
    let (out, err) = hook(&sb, &m, "rm -rf ~/");
    assert!(!out.contains("\"deny\""), "{out} {err}");
    // A package of a monorepo is a project of its own, and the repository
    // around it is still the repository's.
    sb.write("pkg/.ahp/hooks.yaml", "hooks: {}\n");
    sb.write("evil.yaml", "settings:\n  builtin: false\n");
    let out = sb
        .ahp()
        .args(["validate", "--project"])
        .arg(sb.root().join("pkg"))
        .env("AHP_MANAGED_CONFIG", sb.root().join("pkg/../evil.yaml"))
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("this file is inside the project"),
        "{}",
        stderr(&out)
    );
    // The home folder holds everything: a project there does not make the
    // organisation's file under it the project's.
    let out = sb
        .ahp()
        .args(["validate", "--project"])
        .arg(sb.home.path())
        .env("AHP_MANAGED_CONFIG", &m)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}
