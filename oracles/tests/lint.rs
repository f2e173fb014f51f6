//! LintChecker with real commands: clean linters, findings, fixers that
//! fix, fixers that do not, and linters that cannot run.

use ahp_engine::{
    Evaluation, Files, HookContext, ModOp, Oracle, OracleConfig, OracleConfigError, OracleError,
    Payload, Registry, Signal,
};
use ahp_oracles::workflow::lint::{AUTOFIX_TYPE, FINDINGS_TYPE, FIXED_TARGET, LintChecker};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

// ---------------------------------------------------------------- helpers

fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, body) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    dir
}

fn checker(dir: &Path, config: Value) -> LintChecker {
    match LintChecker::from_config(OracleConfig::new(&config, Some(dir))) {
        Ok(c) => c,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match LintChecker::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn ctx_with_changed(changed: &[&str]) -> HookContext {
    HookContext {
        files: Some(Files {
            changed: changed.iter().map(|s| s.to_string()).collect(),
            changed_count: changed.len(),
            ..Files::default()
        }),
        ..HookContext::default()
    }
}

async fn run(dir: &Path, config: Value, ctx: &HookContext) -> Evaluation {
    match checker(dir, config.clone()).evaluate_full(ctx).await {
        Ok(e) => e,
        Err(e) => panic!("{config}: {e}"),
    }
}

async fn run_err(dir: &Path, config: Value) -> OracleError {
    match checker(dir, config.clone())
        .evaluate_full(&HookContext::default())
        .await
    {
        Ok(e) => panic!("{config}: expected an error, got {e:?}"),
        Err(e) => e,
    }
}

fn prompt(s: &Signal) -> (&str, &[String]) {
    assert_eq!(s.header.signal_type, FINDINGS_TYPE);
    match &s.payload {
        Payload::Prompt(p) => (p.message.as_str(), p.suggestions.as_slice()),
        other => panic!("expected a prompt, got {other:?}"),
    }
}

/// A linter that fails while `src/a.rs` contains BAD.
const NO_BAD: &str = "if grep -q BAD src/a.rs; then echo 'src/a.rs:1: contains BAD'; exit 1; fi";

// ----------------------------------------------------------- config errors

#[test]
fn bad_settings_name_their_key() {
    for (config, key, expected) in [
        (
            json!({"linters": "cargo clippy"}),
            Some("linters"),
            "expected a list",
        ),
        (json!({"linters": []}), Some("linters"), "the list is empty"),
        (
            json!({"linters": [{"name": "x"}]}),
            Some("linters.0"),
            "missing `command`",
        ),
        (
            json!({"linters": [{"command": ""}]}),
            Some("linters.0.command"),
            "must not be empty",
        ),
        (
            json!({"linters": [{"command": "x", "fixx": "y"}]}),
            Some("linters.0.fixx"),
            "did you mean `fix`",
        ),
        (
            json!({"linters": [{"command": "x", "fix": ""}]}),
            Some("linters.0.fix"),
            "must not be empty",
        ),
        (
            json!({"linters": [{"command": "x", "name": " "}]}),
            Some("linters.0.name"),
            "must not be empty",
        ),
        (
            json!({"linters": [{"command": "x", "timeout_ms": -1}]}),
            Some("linters.0.timeout_ms"),
            "whole number of milliseconds",
        ),
        (
            json!({"linters": ["x", {"command": "y", "name": "x"}]}),
            Some("linters.1"),
            "two linters are named `x`",
        ),
        (
            json!({"linters": [3]}),
            Some("linters.0"),
            "expected a linter command or a map",
        ),
        (
            json!({"linters": [""]}),
            Some("linters.0"),
            "must not be empty",
        ),
        (
            json!({"linters": ["x"], "auto_fix": "yes"}),
            Some("auto_fix"),
            "true or false",
        ),
        (
            json!({"linters": ["x"], "autofix": true}),
            Some("autofix"),
            "did you mean `auto_fix`",
        ),
        (
            json!({"linters": ["x"], "timeout_ms": 0}),
            Some("timeout_ms"),
            "between 1 and",
        ),
        (json!({}), None, "needs `linters`"),
        (json!(null), None, "needs `linters`"),
    ] {
        let e = config_error(config.clone());
        assert_eq!(e.key.as_deref(), key, "{config}: {e}");
        assert!(e.message.contains(expected), "{config}: {e}");
    }
}

#[test]
fn shorthand_and_defaults() {
    let c = checker(
        Path::new("."),
        json!({"linters": ["npx eslint .", {"name": "fmt", "command": "cargo fmt --check", "timeout_ms": 5000}], "timeout_ms": 1000}),
    );
    assert!(!c.auto_fix());
    let l = c.linters();
    assert_eq!(l[0].name, "npx eslint .");
    assert_eq!(l[0].timeout.as_millis(), 1000);
    assert_eq!(l[1].timeout.as_millis(), 5000);
    assert_eq!(l[1].fix, None);
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(registry.resolve("lint-checker"), Some("LintChecker"));
}

// ------------------------------------------------------------- behaviour

#[tokio::test(flavor = "current_thread")]
async fn clean_linters_give_no_signal() {
    let dir = project(&[("src/a.rs", "fine\n")]);
    let config = json!({"linters": [{"name": "bad-words", "command": NO_BAD}, "true"]});
    let eval = run(dir.path(), config, &HookContext::default()).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert_eq!(
        eval.notes,
        vec!["linter `bad-words` passed", "linter `true` passed"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn findings_are_listed_per_linter() {
    let dir = project(&[("src/a.rs", "BAD\n")]);
    let many = "for i in $(seq 1 25); do echo \"warning $i\"; done; exit 2";
    let config = json!({"linters": [
        {"name": "bad-words", "command": NO_BAD, "fix": "sed -i s/BAD/good/ src/a.rs"},
        {"name": "noisy", "command": many},
        {"name": "clean", "command": "true"},
    ]});
    let eval = run(dir.path(), config, &HookContext::default()).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let (message, suggestions) = prompt(&eval.signals[0]);
    assert!(
        message.starts_with("2 linters report findings"),
        "{message}"
    );
    assert!(message.contains("`bad-words` (`if grep"), "{message}");
    assert!(
        message.contains("exit 1):\n  src/a.rs:1: contains BAD"),
        "{message}"
    );
    assert!(message.contains("`noisy` (`for i in"), "{message}");
    assert!(
        message.contains("  warning 20\n  … 5 more lines"),
        "{message}"
    );
    assert!(!message.contains("warning 21"), "{message}");
    assert!(!message.contains("`clean`"), "{message}");
    assert!(
        suggestions.iter().any(|s| s
            == "run `sed -i s/BAD/good/ src/a.rs` to fix what `bad-words` can fix automatically"),
        "{suggestions:?}"
    );
    assert_eq!(eval.signals[0].context.files, vec!["src/a.rs"]);
    // Without auto_fix nothing was touched.
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).unwrap(),
        "BAD\n"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn auto_fix_reports_the_fixed_files_as_a_control() {
    let dir = project(&[("src/a.rs", "BAD\n"), ("src/b.rs", "BAD too\n")]);
    let config = json!({"auto_fix": true, "linters": [
        {"name": "bad-words", "command": NO_BAD, "fix": "sed -i s/BAD/good/ src/a.rs"},
    ]});
    let ctx = ctx_with_changed(&["src/a.rs", "src/b.rs"]);
    let eval = run(dir.path(), config, &ctx).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let s = &eval.signals[0];
    assert_eq!(s.header.signal_type, AUTOFIX_TYPE);
    let Payload::Control(c) = &s.payload else {
        panic!("{s:?}")
    };
    assert!(!c.reversible);
    assert_eq!(c.modifications.len(), 1);
    let m = &c.modifications[0];
    assert_eq!(m.target, FIXED_TARGET);
    assert_eq!(m.op, ModOp::Set);
    assert_eq!(m.value, Some(json!(["src/a.rs"])));
    assert_eq!(
        m.description.as_deref(),
        Some("src/a.rs: rewritten by the fixer of `bad-words`")
    );
    assert!(c.message.as_deref().unwrap().contains("git diff"), "{c:?}");
    assert_eq!(s.context.files, vec!["src/a.rs"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).unwrap(),
        "good\n"
    );
    assert!(
        eval.notes.iter().any(|n| n.contains("passes after")),
        "{:?}",
        eval.notes
    );
    // The control applies to the context.
    let mut ctx = ctx;
    ctx.apply(m).unwrap();
    assert_eq!(
        ctx.lookup("files.fixed").unwrap().into_owned(),
        json!(["src/a.rs"])
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_fixer_that_does_not_fix_gives_a_control_and_a_prompt() {
    let dir = project(&[("src/a.rs", "BAD\n")]);
    // The "fixer" rewrites the file but leaves BAD in it.
    let config = json!({"auto_fix": true, "linters": [
        {"name": "bad-words", "command": NO_BAD, "fix": "echo '// touched' >> src/a.rs"},
    ]});
    let eval = run(dir.path(), config, &HookContext::default()).await;
    assert_eq!(eval.signals.len(), 2, "{eval:?}");
    assert_eq!(eval.signals[0].header.signal_type, AUTOFIX_TYPE);
    let Payload::Control(c) = &eval.signals[0].payload else {
        panic!()
    };
    assert_eq!(c.modifications[0].value, Some(json!(["src/a.rs"])));
    let (message, suggestions) = prompt(&eval.signals[1]);
    assert!(
        message.contains("still failing after `echo '// touched' >> src/a.rs` changed 1 file:"),
        "{message}"
    );
    assert!(message.contains("src/a.rs:1: contains BAD"), "{message}");
    assert!(
        suggestions[0].starts_with("fix by hand what the fixer left"),
        "{suggestions:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_fixer_that_changes_nothing_gives_only_the_prompt() {
    let dir = project(&[("src/a.rs", "BAD\n")]);
    let config = json!({"auto_fix": true, "linters": [
        {"name": "bad-words", "command": NO_BAD, "fix": "echo 'cannot fix this'; exit 3"},
    ]});
    let eval = run(dir.path(), config, &HookContext::default()).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let (message, _) = prompt(&eval.signals[0]);
    assert!(message.contains("changed 0 files"), "{message}");
    assert!(
        eval.notes.iter().any(|n| n.contains("ended with exit 3")),
        "{:?}",
        eval.notes
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn in_git_a_fixed_file_the_linter_did_not_name_is_seen() {
    let dir = project(&[("src/a.rs", "BAD\n"), ("src/other.rs", "x\n")]);
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "init"]);
    // The linter names no file; the fixer also reformats other.rs.
    let config = json!({"auto_fix": true, "linters": [{
        "name": "quiet",
        "command": "! grep -q BAD src/a.rs",
        "fix": "sed -i s/BAD/good/ src/a.rs && echo y >> src/other.rs"
    }]});
    let eval = run(dir.path(), config, &HookContext::default()).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let Payload::Control(c) = &eval.signals[0].payload else {
        panic!("{eval:?}")
    };
    assert_eq!(
        c.modifications[0].value,
        Some(json!(["src/a.rs", "src/other.rs"]))
    );
}

#[tokio::test(flavor = "current_thread")]
async fn linters_that_cannot_run_are_errors() {
    let dir = project(&[("src/a.rs", "BAD\n")]);
    let e = run_err(
        dir.path(),
        json!({"linters": ["no-such-linter-xyz --check"]}),
    )
    .await;
    assert!(
        e.message.contains("linter `no-such-linter-xyz --check`"),
        "{e}"
    );
    assert!(
        e.message
            .contains("could not start: the command was not found (exit 127)"),
        "{e}"
    );
    let e = run_err(
        dir.path(),
        json!({"auto_fix": true, "linters": [{"name": "w", "command": NO_BAD, "fix": "no-such-fixer-xyz"}]}),
    )
    .await;
    assert!(e.message.contains("fixer of linter `w`"), "{e}");
    let e = run_err(
        dir.path(),
        json!({"linters": [{"name": "slow", "command": "sleep 30", "timeout_ms": 200}]}),
    )
    .await;
    assert!(
        e.message
            .contains("linter `slow` `sleep 30` timed out after 200 ms"),
        "{e}"
    );
}
