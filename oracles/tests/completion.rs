//! CompletionVerifier as a user sees it: what blocks closing an issue
//! (source without tests or docs), what passes, globs, and config errors.

use crate::gitrepo::Repo;
use ahp_engine::{
    Event, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, Payload, Registry,
    Signal,
};
use ahp_oracles::workflow::completion::{
    CompletionVerifier, MISSING_DOCS, MISSING_TESTS, MISSING_TESTS_AND_DOCS,
};
use serde_json::{Value, json};
use std::path::Path;

fn verifier(config: Value) -> CompletionVerifier {
    verifier_in(config, None)
}

fn verifier_in(config: Value, dir: Option<&Path>) -> CompletionVerifier {
    match CompletionVerifier::from_config(OracleConfig::new(&config, dir)) {
        Ok(v) => v,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match CompletionVerifier::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn ctx(changed: &[&str]) -> HookContext {
    serde_json::from_value(json!({
        "event": "pre-issue-close",
        "files": {"changed": changed, "changed_count": changed.len()}
    }))
    .unwrap()
}

async fn eval(v: &CompletionVerifier, changed: &[&str]) -> Vec<Signal> {
    v.evaluate(&ctx(changed)).await.unwrap()
}

fn block(signals: &[Signal]) -> (&str, &[String]) {
    assert_eq!(signals.len(), 1, "{signals:?}");
    match &signals[0].payload {
        Payload::Block(b) => (b.reason.as_str(), b.resolution_path.as_slice()),
        other => panic!("expected a block, got {other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn source_without_tests_blocks_with_a_concrete_resolution() {
    let v = verifier(json!({}));
    let signals = eval(&v, &["src/parser.rs", "Cargo.toml"]).await;
    let (reason, path) = block(&signals);
    assert_eq!(reason, "src/parser.rs changed without tests");
    assert_eq!(
        path[0],
        "add or update tests under tests/ for src/parser.rs"
    );
    assert!(path[1].starts_with("files that count as tests match: tests/**"));
    assert_eq!(signals[0].header.signal_type, MISSING_TESTS);
    assert_eq!(signals[0].context.files, ["src/parser.rs"]);
    assert!(matches!(&signals[0].payload, Payload::Block(b) if b.resolvable));
}

#[tokio::test(flavor = "current_thread")]
async fn tests_anywhere_the_globs_say_make_it_pass() {
    let v = verifier(json!({}));
    for test in [
        "tests/parser.rs",
        "crates/core/tests/it.rs",
        "pkg/lexer_test.go",
        "app/test_views.py",
        "web/button.test.tsx",
        "spec/models/user_spec.rb",
        "web/__tests__/a.js",
    ] {
        assert!(
            eval(&v, &["src/parser.rs", test]).await.is_empty(),
            "{test} should count as a test"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn changes_without_source_files_are_accepted() {
    let v = verifier(json!({"require_docs": true}));
    assert!(eval(&v, &[]).await.is_empty());
    assert!(eval(&v, &["README.md", "docs/guide.md"]).await.is_empty());
    assert!(
        eval(
            &v,
            &["Cargo.toml", ".github/workflows/ci.yml", "data/x.csv"]
        )
        .await
        .is_empty()
    );
    assert!(eval(&v, &["tests/only_a_test.rs"]).await.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn docs_are_required_only_when_asked() {
    let v = verifier(json!({"require_docs": true}));
    let signals = eval(&v, &["src/a.rs", "tests/a.rs"]).await;
    let (reason, path) = block(&signals);
    assert_eq!(reason, "src/a.rs changed without docs");
    assert_eq!(path[0], "add or update docs under docs/ for src/a.rs");
    assert_eq!(signals[0].header.signal_type, MISSING_DOCS);
    assert!(
        eval(&v, &["src/a.rs", "tests/a.rs", "docs/a.md"])
            .await
            .is_empty()
    );
    assert!(
        eval(&v, &["src/a.rs", "tests/a.rs", "README.md"])
            .await
            .is_empty()
    );

    let signals = eval(&v, &["src/a.rs", "lib/b.py"]).await;
    let (reason, path) = block(&signals);
    assert_eq!(
        reason,
        "2 source files changed (lib/b.py, src/a.rs) without tests or docs"
    );
    assert_eq!(path.len(), 4);
    assert_eq!(signals[0].header.signal_type, MISSING_TESTS_AND_DOCS);

    // Docs only, no tests required.
    let v = verifier(json!({"require_tests": false, "require_docs": true}));
    assert!(eval(&v, &["src/a.rs", "docs/a.md"]).await.is_empty());
    assert_eq!(
        block(&eval(&v, &["src/a.rs", "tests/a.rs"]).await).0,
        "src/a.rs changed without docs"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn deleted_files_count_neither_as_source_nor_as_tests() {
    let v = verifier(json!({}));
    let with_details = |details: Value| -> HookContext {
        serde_json::from_value(json!({"files": {"details": details}})).unwrap()
    };
    // Removing code needs no new test.
    let c = with_details(json!([{"path": "src/old.rs", "status": "deleted"}]));
    assert!(v.evaluate(&c).await.unwrap().is_empty());
    // Deleting a test is not testing.
    let c = with_details(json!([
        {"path": "src/a.rs", "status": "modified"},
        {"path": "tests/a.rs", "status": "deleted"}
    ]));
    assert_eq!(
        block(&v.evaluate(&c).await.unwrap()).0,
        "src/a.rs changed without tests"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_issue_file_is_not_a_doc() {
    let v = verifier(json!({"require_tests": false, "require_docs": true}));
    let c: HookContext = serde_json::from_value(json!({
        "issue": {"id": "FEAT-0001", "path": "Issues/FEAT-0001.md"},
        "files": {"changed": ["src/a.rs", "Issues/FEAT-0001.md"]}
    }))
    .unwrap();
    assert_eq!(
        block(&v.evaluate(&c).await.unwrap()).0,
        "src/a.rs changed without docs"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn globs_replace_the_defaults() {
    let v = verifier(json!({
        "source": ["app/**"],
        "tests": ["qa/**"],
    }));
    // Not source by these rules.
    assert!(eval(&v, &["src/a.rs"]).await.is_empty());
    let signals = eval(&v, &["app/main.rs", "tests/x.rs"]).await;
    let (reason, path) = block(&signals);
    assert_eq!(reason, "app/main.rs changed without tests");
    assert_eq!(path[0], "add or update tests under qa/ for app/main.rs");
    assert!(eval(&v, &["app/main.rs", "qa/main.rs"]).await.is_empty());

    let v = verifier(json!({"tests": ["*.check"]}));
    let signals = eval(&v, &["src/a.rs"]).await;
    let (_, path) = block(&signals);
    assert_eq!(
        path[0],
        "add or update tests matching `*.check` for src/a.rs"
    );
    assert!(eval(&v, &["src/a.rs", "deep/x.check"]).await.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn long_lists_are_cut() {
    let v = verifier(json!({}));
    let files: Vec<String> = (0..8).map(|i| format!("src/m{i}.rs")).collect();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let signals = eval(&v, &refs).await;
    let (reason, _) = block(&signals);
    assert_eq!(
        reason,
        "8 source files changed (src/m0.rs, src/m1.rs, src/m2.rs, src/m3.rs, src/m4.rs and 3 more) without tests"
    );
    assert_eq!(signals[0].context.files.len(), 8);
}

#[tokio::test(flavor = "current_thread")]
async fn from_git_blocks_then_passes_once_tests_are_added() {
    let r = Repo::init();
    r.commit_files(&[("src/lib.rs", "pub fn a() {}\n")], "init");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.commit_files(
        &[("src/lib.rs", "pub fn a() {}\npub fn b() {}\n")],
        "feat: b",
    );
    let v = verifier_in(json!({}), Some(r.path()));
    let close = HookContext::for_event(Event::PreIssueClose);
    assert_eq!(
        block(&v.evaluate(&close).await.unwrap()).0,
        "src/lib.rs changed without tests"
    );
    r.write("tests/b.rs", "#[test] fn b() {}\n"); // untracked counts
    assert!(v.evaluate(&close).await.unwrap().is_empty());

    let plain = tempfile::tempdir().unwrap();
    let v = verifier_in(json!({}), Some(plain.path()));
    let err = v.evaluate(&close).await.unwrap_err();
    assert!(
        err.message.contains("is not inside a git repository"),
        "{err}"
    );
}

#[test]
fn config_errors_name_the_key() {
    let cases: Vec<(Value, Option<&str>, &str)> = vec![
        (json!({"require_tests": false}), None, "would never fire"),
        (
            json!({"require_tests": "yes"}),
            Some("require_tests"),
            "expected true or false",
        ),
        (
            json!({"require_docs": 1}),
            Some("require_docs"),
            "expected true or false",
        ),
        (
            json!({"source": ["[x"]}),
            Some("source.0"),
            "invalid glob `[x`",
        ),
        (json!({"tests": "   "}), Some("tests.0"), "empty glob"),
        (
            json!({"docs": {"a": 1}}),
            Some("docs"),
            "expected a string or a list of strings, found a map",
        ),
        (
            json!({"require_test": true}),
            Some("require_test"),
            "did you mean `require_tests`",
        ),
    ];
    for (config, key, text) in cases {
        let err = config_error(config.clone());
        assert_eq!(err.key.as_deref(), key, "{config}: {err}");
        assert!(err.message.contains(text), "{config}: {err}");
    }
}

#[test]
fn registered_with_block_as_default() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(
        registry.resolve("completion-verifier"),
        Some("CompletionVerifier")
    );
    let oracle = registry
        .build("CompletionVerifier", OracleConfig::empty())
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Block));
}
