//! ContextLoader as a user sees it: the aid at issue start with the
//! issue's files and their history, missing files, no git, caps, globs,
//! and config errors.

use crate::gitrepo::Repo;
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, Payload, Registry, Signal,
};
use ahp_oracles::workflow::context_loader::{ContextLoader, SIGNAL_TYPE};
use serde_json::{Value, json};
use std::path::Path;

fn loader(config: Value, dir: &Path) -> ContextLoader {
    match ContextLoader::from_config(OracleConfig::new(&config, Some(dir))) {
        Ok(l) => l,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match ContextLoader::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn issue_ctx(files: Value) -> HookContext {
    serde_json::from_value(json!({
        "event": "post-issue-start",
        "issue": {"id": "FEAT-0007", "title": "Nested lists", "files": files}
    }))
    .unwrap()
}

fn aid(signals: &[Signal]) -> (&str, &[String]) {
    assert_eq!(signals.len(), 1, "{signals:?}");
    match &signals[0].payload {
        Payload::Aid(a) => (a.context_info.as_str(), a.follow_ups.as_slice()),
        other => panic!("expected aid, got {other:?}"),
    }
}

/// A repository with history on src/parser.rs and docs/guide.md.
fn repo() -> Repo {
    let r = Repo::init();
    r.commit_files(
        &[
            (
                "src/parser.rs",
                "//! The parser.\nuse std::io;\n\npub fn parse() {}\n",
            ),
            ("docs/guide.md", "# Guide\n"),
            ("other.txt", "x\n"),
        ],
        "feat: first parser",
    );
    r.commit_files(&[("other.txt", "y\n")], "chore: other");
    r.commit_files(
        &[(
            "src/parser.rs",
            "//! The parser.\nuse std::io;\n\npub fn parse() {}\npub fn more() {}\n",
        )],
        "feat(parser): more",
    );
    r.commit_files(&[("docs/guide.md", "# Guide\n\nText.\n")], "docs: guide");
    r
}

#[tokio::test(flavor = "current_thread")]
async fn lists_the_issue_files_and_their_recent_commits() {
    let r = repo();
    let l = loader(json!({}), r.path());
    let c = issue_ctx(json!(["src/parser.rs", "docs/guide.md", "docs/missing.md"]));
    let signals = l.evaluate(&c).await.unwrap();
    let (text, follow_ups) = aid(&signals);
    let expected_start = "Files of FEAT-0007 \"Nested lists\" (3):\n\
        - src/parser.rs (5 lines, 65 bytes)\n    \
        | //! The parser.\n    \
        | use std::io;\n    \
        |\n    \
        | pub fn parse() {}\n    \
        | pub fn more() {}\n\
        - docs/guide.md (3 lines, 15 bytes)\n    \
        | # Guide\n    \
        |\n    \
        | Text.\n\
        - docs/missing.md: not found\n\
        Recent commits touching them (3):\n";
    assert!(text.starts_with(expected_start), "{text}");
    let tail: Vec<&str> = text.lines().rev().take(3).collect();
    assert!(tail[0].ends_with(" feat: first parser"), "{text}");
    assert!(tail[1].ends_with(" feat(parser): more"), "{text}");
    assert!(tail[2].ends_with(" docs: guide"), "newest first: {text}");
    assert!(!text.contains("chore: other"), "{text}");

    assert_eq!(signals[0].header.signal_type, SIGNAL_TYPE);
    assert_eq!(
        signals[0].context.files,
        ["src/parser.rs", "docs/guide.md", "docs/missing.md"]
    );
    assert_eq!(follow_ups.len(), 1);
    assert!(follow_ups[0].starts_with("the issue lists files that do not exist: docs/missing.md"));
}

#[tokio::test(flavor = "current_thread")]
async fn history_limit_caps_the_commits() {
    let r = repo();
    let l = loader(json!({"history_limit": 1, "preview_lines": 0}), r.path());
    let signals = l
        .evaluate(&issue_ctx(json!(["src/parser.rs", "docs/guide.md"])))
        .await
        .unwrap();
    let (text, _) = aid(&signals);
    assert_eq!(
        text,
        "Files of FEAT-0007 \"Nested lists\" (2):\n\
         - src/parser.rs (5 lines, 65 bytes)\n\
         - docs/guide.md (3 lines, 15 bytes)\n\
         Recent commits touching them (1):\n\
         - "
        .to_string()
            + &r.head()[..7]
            + " docs: guide"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_git_the_history_is_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "one\ntwo").unwrap();
    let l = loader(json!({}), dir.path());
    let signals = l
        .evaluate(&issue_ctx(json!(["notes.md", "gone.rs"])))
        .await
        .unwrap();
    let (text, follow_ups) = aid(&signals);
    assert!(
        text.contains("- notes.md (2 lines, 7 bytes)\n    | one\n    | two\n"),
        "{text}"
    );
    assert!(text.contains("- gone.rs: not found"), "{text}");
    let note = format!(
        "Git history skipped: {} is not inside a git repository.",
        dir.path().display()
    );
    assert!(text.ends_with(&note), "{text}");
    assert!(follow_ups[0].contains("gone.rs"));
}

#[tokio::test(flavor = "current_thread")]
async fn nothing_to_say_without_files() {
    let dir = tempfile::tempdir().unwrap();
    let l = loader(json!({}), dir.path());
    assert!(l.evaluate(&issue_ctx(json!([]))).await.unwrap().is_empty());
    assert!(
        l.evaluate(&issue_ctx(Value::Null))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        l.evaluate(&HookContext::default())
            .await
            .unwrap()
            .is_empty()
    );
    let err = l.evaluate(&issue_ctx(json!({"a": 1}))).await.unwrap_err();
    assert!(err.message.contains("issue.files must be a list"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn binary_files_directories_and_outside_paths() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("logo.png"), b"\x89PNG\0\0\0data").unwrap();
    std::fs::create_dir_all(dir.path().join("src/sub")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "x").unwrap();
    let l = loader(json!({"include_git_history": false}), dir.path());
    let signals = l
        .evaluate(&issue_ctx(json!([
            "logo.png",
            "src",
            "../secret.txt",
            "/etc/passwd"
        ])))
        .await
        .unwrap();
    let (text, follow_ups) = aid(&signals);
    assert_eq!(
        text,
        "Files of FEAT-0007 \"Nested lists\" (4):\n\
         - logo.png (binary, 11 bytes)\n\
         - src/ (directory, 2 entries)\n\
         - ../secret.txt: outside the project, not read\n\
         - /etc/passwd: outside the project, not read"
    );
    assert!(follow_ups[0].contains("outside the project (../secret.txt, /etc/passwd)"));
    assert_eq!(signals[0].context.files, ["logo.png", "src"]);
}

#[tokio::test(flavor = "current_thread")]
async fn reading_is_capped_per_file_and_in_total() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    std::fs::write(dir.path().join("small.txt"), "a\nb\n").unwrap();
    let l = loader(
        json!({"max_file_bytes": 70, "preview_lines": 2, "include_git_history": false}),
        dir.path(),
    );
    let signals = l
        .evaluate(&issue_ctx(json!(["big.txt", "small.txt"])))
        .await
        .unwrap();
    let (text, _) = aid(&signals);
    assert!(
        text.contains("- big.txt (at least 10 lines, 8.7 KB; first 70 bytes read)\n    | line 0\n    | line 1\n"),
        "{text}"
    );
    assert!(text.contains("- small.txt (2 lines, 4 bytes)"), "{text}");

    let l = loader(
        json!({"max_total_bytes": 100, "preview_lines": 0, "include_git_history": false}),
        dir.path(),
    );
    let signals = l
        .evaluate(&issue_ctx(json!(["big.txt", "small.txt"])))
        .await
        .unwrap();
    let (text, _) = aid(&signals);
    assert!(
        text.contains("- big.txt (at least 13 lines, 8.7 KB; first 100 bytes read)"),
        "{text}"
    );
    assert!(
        text.contains("- small.txt (4 bytes; not read: max_total_bytes reached)"),
        "{text}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn history_only_and_globs() {
    let r = repo();
    let l = loader(json!({"include_files": false}), r.path());
    let signals = l
        .evaluate(&issue_ctx(json!(["docs/guide.md"])))
        .await
        .unwrap();
    let (text, _) = aid(&signals);
    assert!(
        text.starts_with("Recent commits touching them (2):\n"),
        "{text}"
    );
    assert!(!text.contains("Files of"), "{text}");

    // Globs add project files to the issue's.
    r.write("docs/untracked.md", "new\n");
    let l = loader(
        json!({"include_files": ["docs/**"], "include_git_history": false, "preview_lines": 0}),
        r.path(),
    );
    let signals = l
        .evaluate(&issue_ctx(json!(["src/parser.rs"])))
        .await
        .unwrap();
    let (text, _) = aid(&signals);
    assert_eq!(
        text,
        "Files of FEAT-0007 \"Nested lists\" (3):\n\
         - src/parser.rs (5 lines, 65 bytes)\n\
         - docs/guide.md (3 lines, 15 bytes)\n\
         - docs/untracked.md (1 line, 4 bytes)"
    );

    // Without git, globs walk the directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/a.md"), "a\n").unwrap();
    let l = loader(
        json!({"include_files": ["**/*.md"], "include_git_history": false}),
        dir.path(),
    );
    let signals = l.evaluate(&issue_ctx(Value::Null)).await.unwrap();
    assert_eq!(signals[0].context.files, ["docs/a.md"]);
}

#[test]
fn config_errors_name_the_key() {
    let cases: Vec<(Value, Option<&str>, &str)> = vec![
        (
            json!({"include_files": "yes"}),
            Some("include_files"),
            "expected true, false or a list, found a string",
        ),
        (
            json!({"include_files": ["[x"]}),
            Some("include_files.0"),
            "invalid glob",
        ),
        (
            json!({"include_git_history": "no"}),
            Some("include_git_history"),
            "expected true or false",
        ),
        (
            json!({"include_files": false, "include_git_history": false}),
            None,
            "nothing to give",
        ),
        (
            json!({"history_limit": 0}),
            Some("history_limit"),
            "at least 1",
        ),
        (
            json!({"max_file_bytes": "big"}),
            Some("max_file_bytes"),
            "found a string",
        ),
        (
            json!({"max_total_bytes": 0}),
            Some("max_total_bytes"),
            "at least 1",
        ),
        (
            json!({"preview_lines": -1}),
            Some("preview_lines"),
            "found a number (-1)",
        ),
        (
            json!({"include_file": true}),
            Some("include_file"),
            "did you mean `include_files`",
        ),
    ];
    for (config, key, text) in cases {
        let err = config_error(config.clone());
        assert_eq!(err.key.as_deref(), key, "{config}: {err}");
        assert!(err.message.contains(text), "{config}: {err}");
    }
}

#[test]
fn registered_with_aid_as_default() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(registry.resolve("context-loader"), Some("ContextLoader"));
    let oracle = registry
        .build("ContextLoader", OracleConfig::empty())
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Aid));
}
