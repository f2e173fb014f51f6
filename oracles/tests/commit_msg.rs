//! CommitMessageValidator as a user sees it: Conventional Commits pass and
//! fail cases, patterns, the required issue id, subject length, the
//! prompt's content, commits read from git, and config errors.

use crate::gitrepo::Repo;
use ahp_engine::{
    Event, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, Payload, Registry,
    Severity, Signal,
};
use ahp_oracles::workflow::commit_msg::{CommitMessageValidator, SIGNAL_TYPE};
use serde_json::{Value, json};
use std::path::Path;

fn validator(config: Value) -> CommitMessageValidator {
    validator_in(config, None)
}

fn validator_in(config: Value, dir: Option<&Path>) -> CommitMessageValidator {
    match CommitMessageValidator::from_config(OracleConfig::new(&config, dir)) {
        Ok(v) => v,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match CommitMessageValidator::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn conventional() -> CommitMessageValidator {
    validator(json!({"preset": "conventional"}))
}

/// A context with these commits (sha, subject, body) and an issue id.
fn ctx(commits: &[(&str, &str, &str)], issue_id: Option<&str>) -> HookContext {
    let commits: Vec<Value> = commits
        .iter()
        .map(|(sha, subject, body)| json!({"sha": sha, "subject": subject, "body": body}))
        .collect();
    let mut v = json!({
        "event": "pre-issue-submit",
        "git": {"trunk": "main", "merge_base": "0123456789abcdef0123", "commits": commits}
    });
    if let Some(id) = issue_id {
        v["issue"] = json!({"id": id});
    }
    serde_json::from_value(v).unwrap()
}

fn prompt(signals: &[Signal]) -> (&str, &[String], Severity) {
    assert_eq!(signals.len(), 1, "{signals:?}");
    match &signals[0].payload {
        Payload::Prompt(p) => (p.message.as_str(), p.suggestions.as_slice(), p.severity),
        other => panic!("expected a prompt, got {other:?}"),
    }
}

#[test]
fn conventional_commits_that_pass() {
    let v = conventional();
    for subject in [
        "feat: add nested lists",
        "fix(parser): handle empty input",
        "feat!: drop the old syntax",
        "feat(api)!: remove v1 endpoints",
        "refactor(core/io): split reader",
        "FIX: case does not matter for types",
        "revert: feat: add nested lists",
        "docs: it's fine: colons later are fine",
        "ci: ü and ünïcode are fine",
    ] {
        assert_eq!(
            v.problems(subject, "", None),
            Vec::<String>::new(),
            "{subject}"
        );
    }
}

#[test]
fn conventional_commits_that_fail_say_why() {
    let v = conventional();
    let form = "not in Conventional Commits form `type(scope)!: description`";
    let cases = [
        ("Added stuff", form.to_string()),
        ("feat add stuff", form.to_string()),
        ("(parser): no type", form.to_string()),
        ("feat (parser): space before scope", form.to_string()),
        ("feat!(parser): bang before scope", form.to_string()),
        (
            "feature: add stuff",
            "unknown type `feature`; expected one of feat, fix, docs, style, refactor, perf, test, build, ci, chore, revert".to_string(),
        ),
        (
            "fxi: typo",
            "unknown type `fxi` (did you mean `fix`?); expected one of feat, fix, docs, style, refactor, perf, test, build, ci, chore, revert".to_string(),
        ),
        ("feat:no space", "the colon must be followed by exactly one space".to_string()),
        ("feat:  two spaces", "the colon must be followed by exactly one space".to_string()),
        ("feat: ", "no description after the colon".to_string()),
        ("feat(): empty scope", "empty scope `()`: name a scope or leave the parentheses out".to_string()),
    ];
    for (subject, why) in cases {
        assert_eq!(v.problems(subject, "", None), vec![why], "{subject}");
    }
}

#[test]
fn custom_types_replace_the_default_list() {
    let v = validator(json!({"preset": "conventional", "types": ["Feature", "bugfix"]}));
    assert!(v.problems("feature: x", "", None).is_empty());
    assert!(v.problems("bugfix(ui): x", "", None).is_empty());
    assert_eq!(
        v.problems("feat: x", "", None),
        vec!["unknown type `feat`; expected one of feature, bugfix"]
    );
}

#[test]
fn a_pattern_alone_or_with_the_preset() {
    let v = validator(json!({"pattern": "^[A-Z]+-[0-9]+: "}));
    assert!(v.problems("FEAT-12: add x", "", None).is_empty());
    assert_eq!(
        v.problems("feat: add x", "", None),
        vec!["does not match the pattern `^[A-Z]+-[0-9]+: `"]
    );
    let both = validator(json!({"preset": "conventional", "pattern": "^[^A-Z]*$"}));
    assert_eq!(
        both.problems("Added X", "", None),
        vec![
            "not in Conventional Commits form `type(scope)!: description`".to_string(),
            "does not match the pattern `^[^A-Z]*$`".to_string()
        ]
    );
}

#[test]
fn subject_length_is_limited() {
    let v = validator(json!({}));
    let at_limit = format!("fix: {}", "x".repeat(67));
    assert_eq!(at_limit.chars().count(), 72);
    assert!(v.problems(&at_limit, "", None).is_empty());
    let over = format!("{at_limit}y");
    assert_eq!(
        v.problems(&over, "", None),
        vec!["subject is 73 characters (max 72)"]
    );
    // Characters, not bytes.
    assert!(v.problems(&"ü".repeat(72), "", None).is_empty());
    let v = validator(json!({"max_subject_length": 10}));
    assert_eq!(v.problems("fix: 123456", "", None).len(), 1);
    let v = validator(json!({"max_subject_length": 0}));
    assert!(v.problems(&"x".repeat(500), "", None).is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn offending_commits_are_listed_in_one_prompt() {
    let v = conventional();
    let c = ctx(
        &[
            ("abc1234ffff0000", "Added stuff", ""),
            ("bbb2222ffff0000", "feat(parser): nested lists", ""),
            ("ccc3333ffff0000", "feature: more", "body"),
        ],
        None,
    );
    let signals = v.evaluate(&c).await.unwrap();
    let (message, suggestions, severity) = prompt(&signals);
    assert_eq!(severity, Severity::Medium);
    assert_eq!(signals[0].header.signal_type, SIGNAL_TYPE);
    assert_eq!(
        message,
        "2 of 3 commits do not follow the commit message rules:\n\
         abc1234 \"Added stuff\" — not in Conventional Commits form `type(scope)!: description`\n\
         ccc3333 \"feature: more\" — unknown type `feature`; expected one of feat, fix, docs, style, refactor, perf, test, build, ci, chore, revert"
    );
    assert!(
        suggestions[0].starts_with("write the subject as `type(scope): description` (Conventional Commits 1.0), with type one of feat, fix"),
        "{suggestions:?}"
    );
    assert!(suggestions[0].contains("e.g. `feat(parser): support nested lists`"));
    assert_eq!(
        suggestions.last().unwrap(),
        "reword them with `git rebase -i 0123456789ab` (mark each as `reword`), or `git commit --amend` for the last one"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_issue_id_is_required_in_subject_or_body() {
    let v = validator(json!({"preset": "conventional", "required_fields": ["issue_id"]}));
    let c = ctx(
        &[
            ("a000000", "feat: x (FEAT-0123)", ""),
            ("b000000", "fix: y", "Refs: feat-0123"),
            ("c000000", "fix: z", "Refs: FEAT-01234"),
        ],
        Some("FEAT-0123"),
    );
    let signals = v.evaluate(&c).await.unwrap();
    let (message, suggestions, _) = prompt(&signals);
    assert_eq!(
        message,
        "1 of 3 commits does not follow the commit message rules:\nc000000 \"fix: z\" — does not mention the issue id FEAT-0123"
    );
    assert!(suggestions[0].starts_with("mention FEAT-0123 in the subject or body"));

    // Without an issue id in the context the rule cannot be checked.
    let err = v
        .evaluate(&ctx(&[("a", "feat: x", "")], None))
        .await
        .unwrap_err();
    assert!(err.message.contains("no issue.id"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn no_commits_or_only_ignored_ones_are_accepted() {
    let v = validator(json!({"preset": "conventional", "required_fields": ["issue_id"]}));
    assert!(v.evaluate(&ctx(&[], None)).await.unwrap().is_empty());
    let merges = ctx(
        &[
            ("a", "Merge branch 'main' into feature", ""),
            ("b", "Revert \"feat: x\"", ""),
            ("c", "fixup! feat: x", ""),
        ],
        None,
    );
    assert!(v.evaluate(&merges).await.unwrap().is_empty());
    // With `ignore: []` nothing is skipped.
    let strict = validator(json!({"preset": "conventional", "ignore": []}));
    let signals = strict.evaluate(&merges).await.unwrap();
    let (message, _, _) = prompt(&signals);
    assert!(
        message.starts_with("3 of 3 commits do not follow"),
        "{message}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn commits_are_read_from_git_when_the_context_has_none() {
    let r = Repo::init();
    r.commit_files(&[("a.txt", "a\n")], "initial import");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.commit_files(&[("b.txt", "b\n")], "feat(b): add b");
    r.commit_files(&[("c.txt", "c\n")], "WIP");
    let v = validator_in(json!({"preset": "conventional"}), Some(r.path()));
    let signals = v
        .evaluate(&HookContext::for_event(Event::PreIssueSubmit))
        .await
        .unwrap();
    let (message, _, _) = prompt(&signals);
    assert!(
        message.starts_with("1 of 2 commits does not follow"),
        "{message}"
    );
    assert!(
        message.contains("\"WIP\" — not in Conventional Commits form"),
        "{message}"
    );
    assert!(
        !message.contains("initial import"),
        "main's commits are not checked"
    );

    // On the trunk there are no commits of a branch.
    r.git(&["checkout", "-q", "main"]);
    assert!(
        v.evaluate(&HookContext::for_event(Event::PreIssueSubmit))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn unreadable_commits_are_an_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let v = validator_in(json!({"preset": "conventional"}), Some(dir.path()));
    let err = v
        .evaluate(&HookContext::for_event(Event::PreIssueSubmit))
        .await
        .unwrap_err();
    assert!(
        err.message.starts_with("cannot read the commits: "),
        "{err}"
    );
    assert!(
        err.message.contains("is not inside a git repository"),
        "{err}"
    );

    let bad: HookContext =
        serde_json::from_value(json!({"git": {"commits": {"sha": "a"}}})).unwrap();
    let err = v.evaluate(&bad).await.unwrap_err();
    assert!(err.message.contains("git.commits must be a list"), "{err}");
}

#[test]
fn config_errors_name_the_key() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"preset": "angular"}),
            "preset",
            "unknown value `angular`; expected one of conventional",
        ),
        (
            json!({"preset": "convential"}),
            "preset",
            "did you mean `conventional`",
        ),
        (json!({"preset": true}), "preset", "found a boolean"),
        (
            json!({"types": ["feat"]}),
            "types",
            "add `preset: conventional`",
        ),
        (
            json!({"preset": "conventional", "types": []}),
            "types",
            "allows no commit",
        ),
        (
            json!({"preset": "conventional", "types": ["new feature"]}),
            "types.0",
            "cannot be a commit type",
        ),
        (
            json!({"preset": "conventional", "types": [1]}),
            "types.0",
            "expected a string",
        ),
        (
            json!({"preset": "conventional", "types": "feat"}),
            "types",
            "expected a list",
        ),
        (
            json!({"pattern": "(unclosed"}),
            "pattern",
            "invalid regex `(unclosed`",
        ),
        (json!({"pattern": " "}), "pattern", "empty pattern"),
        (json!({"pattern": 3}), "pattern", "expected a string"),
        (
            json!({"required_fields": ["ticket"]}),
            "required_fields.0",
            "expected one of issue_id",
        ),
        (
            json!({"required_fields": ["issue_di"]}),
            "required_fields.0",
            "did you mean `issue_id`",
        ),
        (
            json!({"required_fields": "issue_id"}),
            "required_fields",
            "expected a list",
        ),
        (
            json!({"max_subject_length": -1}),
            "max_subject_length",
            "found a number (-1)",
        ),
        (
            json!({"max_subject_length": "72"}),
            "max_subject_length",
            "found a string",
        ),
        (json!({"ignore": ["("]}), "ignore.0", "invalid regex"),
        (
            json!({"presets": "conventional"}),
            "presets",
            "did you mean `preset`",
        ),
    ];
    for (config, key, text) in cases {
        let err = config_error(config.clone());
        assert_eq!(err.key.as_deref(), Some(key), "{config}: {err}");
        assert!(err.message.contains(text), "{config}: {err}");
    }
}

#[test]
fn registered_with_prompt_as_default() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(
        registry.resolve("commit-message-validator"),
        Some("CommitMessageValidator")
    );
    let oracle = registry
        .build("CommitMessageValidator", OracleConfig::empty())
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Prompt));
}
