//! FileChangeLimiter as a user sees it: the limit, the batch plan, prompt
//! and block, exclusions, changed files from git, and config errors.

use crate::gitrepo::Repo;
use ahp_engine::{
    Event, HookContext, Intensity, ModOp, Oracle, OracleConfig, OracleConfigError, Payload,
    Registry, Severity, Signal,
};
use ahp_oracles::workflow::file_limit::{BATCHES_TARGET, FileChangeLimiter, SIGNAL_TYPE};
use serde_json::{Value, json};
use std::path::Path;

fn limiter(config: Value) -> FileChangeLimiter {
    limiter_in(config, None)
}

fn limiter_in(config: Value, dir: Option<&Path>) -> FileChangeLimiter {
    match FileChangeLimiter::from_config(OracleConfig::new(&config, dir)) {
        Ok(l) => l,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match FileChangeLimiter::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

/// `n` files in each directory: `dir/fNN.rs`.
fn files(spec: &[(&str, usize)]) -> Vec<String> {
    spec.iter()
        .flat_map(|(dir, n)| (0..*n).map(move |i| format!("{dir}/f{i:02}.rs")))
        .collect()
}

fn ctx_with(paths: &[String]) -> HookContext {
    serde_json::from_value(json!({
        "event": "pre-issue-submit",
        "files": {"changed": paths, "changed_count": paths.len()}
    }))
    .unwrap()
}

async fn eval(l: &FileChangeLimiter, paths: &[String]) -> Vec<Signal> {
    l.evaluate(&ctx_with(paths)).await.unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn exactly_at_the_limit_is_accepted() {
    let l = limiter(json!({"max_files": 20}));
    assert!(eval(&l, &files(&[("src", 20)])).await.is_empty());
    assert!(eval(&l, &[]).await.is_empty());
    assert_eq!(eval(&l, &files(&[("src", 21)])).await.len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn twenty_five_files_over_twenty_give_a_two_batch_plan() {
    let l = limiter(json!({"max_files": 20, "action": "control", "control_action": "split_batch"}));
    let changed = files(&[("src", 12), ("tests", 8), ("docs", 5)]);
    let signals = eval(&l, &changed).await;
    assert_eq!(signals.len(), 1);
    let s = &signals[0];
    assert_eq!(s.intensity(), Intensity::Control);
    assert_eq!(s.header.signal_type, SIGNAL_TYPE);
    assert_eq!(s.context.files.len(), 25);
    let Payload::Control(c) = &s.payload else {
        panic!("{s:?}")
    };
    assert_eq!(
        c.message.as_deref(),
        Some("25 files changed (limit 20): split into 2 batches")
    );
    assert!(c.reversible);
    assert_eq!(c.modifications.len(), 1);
    let m = &c.modifications[0];
    assert_eq!(m.target, BATCHES_TARGET);
    assert_eq!(m.op, ModOp::Set);
    let mut first: Vec<String> = files(&[("src", 12), ("tests", 8)]);
    first.sort();
    let second = files(&[("docs", 5)]);
    assert_eq!(m.value, Some(json!([first, second])));
    let d = m.description.as_deref().unwrap();
    assert!(
        d.contains("batch 1: src/ (12), tests/ (8); batch 2: docs/ (5)"),
        "{d}"
    );

    // The plan lands in the context for later oracles.
    let mut ctx = ctx_with(&changed);
    ctx.apply(m).unwrap();
    let batches = ctx.lookup("files.batches").unwrap();
    assert_eq!(batches.as_array().unwrap().len(), 2);
    assert_eq!(*ctx.lookup("files.changed_count").unwrap(), json!(25));
}

#[tokio::test(flavor = "current_thread")]
async fn a_directory_larger_than_a_batch_is_split_and_others_fill_the_gaps() {
    let l = limiter(json!({"max_files": 20, "batch_size": 10}));
    let changed = files(&[("src", 23), ("docs", 4), ("tests", 3)]);
    let s = &eval(&l, &changed).await[0];
    let Payload::Control(c) = &s.payload else {
        panic!()
    };
    let plan: Vec<Vec<String>> =
        serde_json::from_value(c.modifications[0].value.clone().unwrap()).unwrap();
    let sizes: Vec<usize> = plan.iter().map(Vec::len).collect();
    assert_eq!(sizes, [10, 10, 10], "{plan:?}");
    // src is cut into 10 + 10 + 3; the 3 shares a batch with docs and tests.
    assert!(plan[0].iter().all(|f| f.starts_with("src/")));
    assert!(plan[1].iter().all(|f| f.starts_with("src/")));
    let last = &plan[2];
    assert_eq!(last.iter().filter(|f| f.starts_with("src/")).count(), 3);
    assert_eq!(last.iter().filter(|f| f.starts_with("docs/")).count(), 4);
    assert_eq!(last.iter().filter(|f| f.starts_with("tests/")).count(), 3);
    let mut all: Vec<String> = plan.concat();
    all.sort();
    let mut expected = changed.clone();
    expected.sort();
    assert_eq!(all, expected, "every file in exactly one batch");
    assert_eq!(
        c.message.as_deref(),
        Some("30 files changed (limit 20): split into 3 batches")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn root_files_and_unicode_paths_are_batched_too() {
    let l = limiter(json!({"max_files": 2}));
    let changed: Vec<String> = vec!["README.md".into(), "Cargo.toml".into(), "ünï/a b.rs".into()];
    let s = &eval(&l, &changed).await[0];
    let Payload::Control(c) = &s.payload else {
        panic!()
    };
    assert_eq!(
        c.modifications[0].value,
        Some(json!([["Cargo.toml", "README.md"], ["ünï/a b.rs"]]))
    );
    assert!(
        c.modifications[0]
            .description
            .as_deref()
            .unwrap()
            .contains("batch 1: (root) (2); batch 2: ünï/ (1)")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn prompt_lists_counts_per_directory() {
    let l = limiter(json!({"max_files": 20, "action": "prompt"}));
    let s = &eval(&l, &files(&[("src", 12), ("tests", 8), ("docs", 5)])).await[0];
    let Payload::Prompt(p) = &s.payload else {
        panic!("{s:?}")
    };
    assert_eq!(p.severity, Severity::Medium);
    assert_eq!(
        p.message,
        "25 files changed (limit 20): src/ 12, tests/ 8, docs/ 5"
    );
    assert!(p.continue_allowed);
    assert!(p.suggestions[0].starts_with(
        "split the change into 2 batches of at most 20 files: batch 1: src/ (12), tests/ (8); batch 2: docs/ (5)"
    ));
    assert_eq!(s.header.signal_type, SIGNAL_TYPE);
}

#[tokio::test(flavor = "current_thread")]
async fn block_lists_counts_and_a_resolution_path() {
    let l = limiter(json!({"max_files": 3, "action": "BLOCK", "batch_size": 2}));
    let s = &eval(&l, &files(&[("a", 2), ("b", 2)])).await[0];
    let Payload::Block(b) = &s.payload else {
        panic!("{s:?}")
    };
    assert_eq!(b.reason, "4 files changed (limit 3): a/ 2, b/ 2");
    assert!(b.resolvable);
    assert_eq!(
        b.resolution_path[0],
        "split the change into 2 batches of at most 2 files: batch 1: a/ (2); batch 2: b/ (2)"
    );
    assert!(b.resolution_path[1].contains("no submission has more than 3 files"));
}

#[tokio::test(flavor = "current_thread")]
async fn excluded_files_are_not_counted_nor_batched() {
    let l = limiter(json!({"max_files": 20, "exclude": ["*.lock", "docs/generated/**"]}));
    let mut changed = files(&[("src", 20)]);
    changed.push("Cargo.lock".into());
    changed.push("web/yarn.lock".into());
    changed.push("docs/generated/api.html".into());
    assert!(
        eval(&l, &changed).await.is_empty(),
        "23 changed, 20 counted"
    );

    changed.push("src/extra.rs".into());
    let s = &eval(&l, &changed).await[0];
    assert_eq!(s.context.files.len(), 21);
    let Payload::Control(c) = &s.payload else {
        panic!()
    };
    let value = c.modifications[0].value.clone().unwrap();
    let batched: Vec<String> = serde_json::from_value::<Vec<Vec<String>>>(value)
        .unwrap()
        .concat();
    assert_eq!(batched.len(), 21);
    assert!(!batched.contains(&"Cargo.lock".to_string()));
    assert!(c.modifications[0].description.as_deref().unwrap().contains(
        "3 excluded files not counted: Cargo.lock, docs/generated/api.html, web/yarn.lock"
    ));
}

#[tokio::test(flavor = "current_thread")]
async fn changed_files_come_from_git_when_the_context_has_none() {
    let r = Repo::init();
    r.commit_files(&[("README.md", "x\n")], "init");
    r.git(&["checkout", "-q", "-b", "feature"]);
    for i in 0..15 {
        r.write(&format!("src/m{i}.rs"), "fn x() {}\n");
    }
    r.commit_all("feat: modules");
    for i in 0..10 {
        r.write(&format!("tests/t {i}.rs"), "#[test] fn t() {}\n");
    }
    let l = limiter_in(json!({"max_files": 20}), Some(r.path()));
    let ctx = HookContext::for_event(Event::PreIssueSubmit);
    let s = &l.evaluate(&ctx).await.unwrap()[0];
    assert_eq!(
        s.payload.summary(),
        "25 files changed (limit 20): split into 2 batches"
    );
    assert!(s.context.files.contains(&"tests/t 9.rs".to_string()));

    // The context's list wins over git.
    assert!(
        l.evaluate(&ctx_with(&files(&[("src", 3)])))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn outside_a_repository_without_files_it_cannot_decide() {
    let dir = tempfile::tempdir().unwrap();
    let l = limiter_in(json!({"max_files": 5}), Some(dir.path()));
    let err = l
        .evaluate(&HookContext::for_event(Event::PreIssueSubmit))
        .await
        .unwrap_err();
    assert!(
        err.message.starts_with("cannot count the changed files: "),
        "{err}"
    );
    assert!(
        err.message.contains(
            "is not inside a git repository; pass the changed files in the context (files.changed)"
        ),
        "{err}"
    );
    // With the files in the context, no git is needed.
    assert_eq!(
        l.evaluate(&ctx_with(&files(&[("a", 6)])))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn default_intensity_follows_the_action() {
    for (action, intensity) in [
        ("control", Intensity::Control),
        ("prompt", Intensity::Prompt),
        ("block", Intensity::Block),
    ] {
        let l = limiter(json!({"max_files": 1, "action": action}));
        assert_eq!(l.default_intensity(), Some(intensity));
    }
    assert_eq!(
        limiter(json!({"max_files": 1})).default_intensity(),
        Some(Intensity::Control)
    );
}

#[test]
fn config_errors_name_the_key() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({}), "max_files", "missing `max_files`"),
        (json!(null), "max_files", "missing `max_files`"),
        (json!({"max_files": 0}), "max_files", "at least 1"),
        (json!({"max_files": -3}), "max_files", "found a number (-3)"),
        (
            json!({"max_files": 2.5}),
            "max_files",
            "found a number (2.5)",
        ),
        (json!({"max_files": "20"}), "max_files", "found a string"),
        (
            json!({"max_files": 20, "action": "warn"}),
            "action",
            "expected one of control, prompt, block",
        ),
        (
            json!({"max_files": 20, "action": "promt"}),
            "action",
            "did you mean `prompt`",
        ),
        (
            json!({"max_files": 20, "action": 1}),
            "action",
            "found a number",
        ),
        (
            json!({"max_files": 20, "control_action": "split"}),
            "control_action",
            "unknown value `split` (did you mean `split_batch`?)",
        ),
        (
            json!({"max_files": 20, "batch_size": 0}),
            "batch_size",
            "at least 1",
        ),
        (
            json!({"max_files": 20, "exclude": ["ok/**", "[bad"]}),
            "exclude.1",
            "invalid glob `[bad`",
        ),
        (
            json!({"max_files": 20, "exclude": [3]}),
            "exclude.0",
            "found a number",
        ),
        (
            json!({"max_file": 20}),
            "max_file",
            "did you mean `max_files`",
        ),
    ];
    for (config, key, text) in cases {
        let err = config_error(config.clone());
        assert_eq!(err.key.as_deref(), Some(key), "{config}: {err}");
        assert!(err.message.contains(text), "{config}: {err}");
    }
    let err = config_error(json!([1]));
    assert!(err.message.contains("must be a map"), "{err}");
    // A single glob string is accepted for exclude.
    limiter(json!({"max_files": 1, "exclude": "*.lock"}));
    limiter(json!({"max_files": 1, "control_action": "split-batch"}));
}

#[test]
fn registered_under_both_names() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(
        registry.resolve("file-change-limiter"),
        Some("FileChangeLimiter")
    );
    let config = json!({"max_files": 20, "action": "prompt"});
    let oracle = registry
        .build("FileChangeLimiter", OracleConfig::new(&config, None))
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Prompt));
    let Err(err) = registry.build("FileChangeLimiter", OracleConfig::new(&json!({}), None)) else {
        panic!("an empty config was accepted")
    };
    assert!(
        err.to_string().contains("config.max_files: missing"),
        "{err}"
    );
}
