//! ReviewTrigger as a user sees it: reviewers from CODEOWNERS and config,
//! the notification command's success and failure, no CODEOWNERS at all,
//! and config errors.

use ahp_engine::{
    AidPayload, Evaluation, HookContext, Intensity, OracleConfig, OracleConfigError, Payload,
    Registry,
};
use ahp_oracles::workflow::review::{CodeOwners, ReviewTrigger};
use serde_json::{Value, json};
use std::path::Path;

fn trigger(config: Value, dir: &Path) -> ReviewTrigger {
    ReviewTrigger::from_config(OracleConfig::new(&config, Some(dir)))
        .unwrap_or_else(|e| panic!("config {config} rejected: {e}"))
}

fn config_error(config: Value, dir: Option<&Path>) -> OracleConfigError {
    match ReviewTrigger::from_config(OracleConfig::new(&config, dir)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn ctx(issue_id: Option<&str>, files: &[&str]) -> HookContext {
    let mut v = json!({"files": {"changed": files, "changed_count": files.len()}});
    if let Some(id) = issue_id {
        v["issue"] = json!({"id": id});
    }
    serde_json::from_value(v).unwrap()
}

async fn review(t: &ReviewTrigger, c: &HookContext) -> (AidPayload, String, Vec<String>) {
    let Evaluation { signals, notes, .. } = t.review(c).await.unwrap();
    assert_eq!(signals.len(), 1, "{signals:?}");
    let s = &signals[0];
    assert_eq!(s.intensity(), Intensity::Aid);
    match &s.payload {
        Payload::Aid(a) => (a.clone(), s.header.signal_type.clone(), notes),
        other => panic!("expected aid, got {other:?}"),
    }
}

const OWNERS: &str = "\
# Default owners
*                 @org/core
*.md              @writers
/src/api/         @alice @bob
/src/api/legacy   # nobody owns legacy code
/infra/**/*.tf    @ops
docs/*            @docs-team
";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CODEOWNERS"), OWNERS).unwrap();
    dir
}

#[tokio::test(flavor = "current_thread")]
async fn reviewers_from_codeowners() {
    let dir = project();
    let t = trigger(json!({}), dir.path());
    let c = ctx(
        Some("FEAT-0123"),
        &[
            "src/api/handlers.rs",
            "src/api/routes.rs",
            "src/api/legacy/old.rs",
            "README.md",
            "docs/guide.md",
            "docs/deep/page.md",
            "infra/prod/main.tf",
            "src/main.rs",
        ],
    );
    let (aid, kind, notes) = review(&t, &c).await;
    assert_eq!(kind, "review-requested");
    assert_eq!(
        aid.context_info,
        "Review requested from @alice, @bob, @docs-team, @ops, @org/core, @writers for FEAT-0123 (8 files)"
    );
    assert_eq!(
        aid.follow_ups,
        [
            "@alice: src/api/handlers.rs, src/api/routes.rs",
            "@bob: src/api/handlers.rs, src/api/routes.rs",
            "@docs-team: docs/guide.md",
            "@ops: infra/prod/main.tf",
            "@org/core: src/main.rs",
            "@writers: README.md, docs/deep/page.md",
            "no code owner: src/api/legacy/old.rs",
        ]
    );
    assert!(notes.is_empty(), "{notes:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn codeowners_last_match_wins() {
    let owners = CodeOwners::parse(OWNERS);
    let of = |p: &str| owners.owners_of(p).map(|o| o.join(" "));
    assert_eq!(of("anything.txt").as_deref(), Some("@org/core"));
    assert_eq!(of("src/api/x.md").as_deref(), Some("@alice @bob")); // later than *.md
    assert_eq!(of("src/api/legacy/a.rs").as_deref(), Some("")); // emptied
    assert_eq!(of("infra/a/b/c.tf").as_deref(), Some("@ops"));
    assert_eq!(of("infra/x.tf").as_deref(), Some("@ops"));
    assert_eq!(of("docs/a.md").as_deref(), Some("@docs-team"));
    assert_eq!(of("docs/a/b.md").as_deref(), Some("@writers"));
    assert_eq!(owners.rule_for("docs/a.md").map(|r| r.line), Some(7));
    // Nothing matches without a catch-all.
    let narrow = CodeOwners::parse("/src/ @dev\n");
    assert_eq!(narrow.owners_of("README"), None);
}

#[tokio::test(flavor = "current_thread")]
async fn unusable_lines_become_notes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("CODEOWNERS"),
        "[Backend]\n!secret.txt @x\n*.rs @rust notanowner\n",
    )
    .unwrap();
    let t = trigger(json!({}), dir.path());
    let (aid, _, notes) = review(&t, &ctx(None, &["src/lib.rs"])).await;
    assert_eq!(
        aid.context_info,
        "Review requested from @rust for this change (1 file)"
    );
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains("line 1: GitLab section"), "{notes:?}");
    assert!(notes[1].contains("line 2: `!` negation"), "{notes:?}");
    assert!(
        notes[2].contains("line 3: `notanowner` is not an owner"),
        "{notes:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn codeowners_locations_in_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/CODEOWNERS"), "* @from-docs\n").unwrap();
    let t = trigger(json!({}), dir.path());
    let (aid, _, _) = review(&t, &ctx(None, &["a.rs"])).await;
    assert!(
        aid.context_info.contains("@from-docs"),
        "{}",
        aid.context_info
    );
    std::fs::write(dir.path().join(".github/CODEOWNERS"), "* @from-github\n").unwrap();
    let (aid, _, _) = review(&t, &ctx(None, &["a.rs"])).await;
    assert!(
        aid.context_info.contains("@from-github"),
        "{}",
        aid.context_info
    );
    std::fs::write(dir.path().join("CODEOWNERS"), "* @from-root\n").unwrap();
    let (aid, _, _) = review(&t, &ctx(None, &["a.rs"])).await;
    assert!(
        aid.context_info.contains("@from-root"),
        "{}",
        aid.context_info
    );

    // An explicit path wins.
    std::fs::write(dir.path().join("OWNERS.txt"), "* @explicit\n").unwrap();
    let t = trigger(json!({"codeowners": "OWNERS.txt"}), dir.path());
    let (aid, _, _) = review(&t, &ctx(None, &["a.rs"])).await;
    assert!(
        aid.context_info.contains("@explicit"),
        "{}",
        aid.context_info
    );
}

#[tokio::test(flavor = "current_thread")]
async fn static_reviewers_are_merged_deduplicated_and_sorted() {
    let dir = project();
    let t = trigger(
        json!({"reviewers": ["zed", "@Alice", "lead@example.com"]}),
        dir.path(),
    );
    let (aid, _, _) = review(&t, &ctx(Some("FIX-0042"), &["src/api/a.rs", "b.txt"])).await;
    assert_eq!(
        aid.context_info,
        "Review requested from @alice, @bob, @org/core, @zed, lead@example.com for FIX-0042 (2 files)"
    );
    assert_eq!(
        aid.follow_ups,
        [
            "@bob: src/api/a.rs",
            "@org/core: b.txt",
            "@zed: the whole change (2 files)",
            "@alice: the whole change (2 files)",
            "lead@example.com: the whole change (2 files)",
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn no_codeowners_and_no_reviewers() {
    let dir = tempfile::tempdir().unwrap();
    let t = trigger(json!({}), dir.path());
    let (aid, kind, _) = review(&t, &ctx(Some("FEAT-0123"), &["a.rs", "b.rs"])).await;
    assert_eq!(kind, "review-unassigned");
    assert_eq!(
        aid.context_info,
        "No reviewer found for FEAT-0123 (2 files): no CODEOWNERS file (looked for CODEOWNERS, .github/CODEOWNERS, docs/CODEOWNERS) and no `reviewers` configured"
    );
    assert_eq!(aid.best_practices.len(), 1);

    // Static reviewers alone are enough.
    let t = trigger(json!({"reviewers": ["@lead"]}), dir.path());
    let (aid, kind, _) = review(&t, &ctx(Some("FEAT-0123"), &["a.rs"])).await;
    assert_eq!(kind, "review-requested");
    assert_eq!(
        aid.context_info,
        "Review requested from @lead for FEAT-0123 (1 file)"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn codeowners_that_owns_none_of_the_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CODEOWNERS"), "/src/ @dev\n").unwrap();
    let t = trigger(json!({}), dir.path());
    let (aid, kind, _) = review(&t, &ctx(None, &["README.md"])).await;
    assert_eq!(kind, "review-unassigned");
    assert!(
        aid.context_info.contains("names an owner"),
        "{}",
        aid.context_info
    );
    assert_eq!(aid.follow_ups, ["no code owner: README.md"]);
    let (aid, _, _) = review(&t, &ctx(None, &[])).await;
    assert!(
        aid.context_info.contains("no changed files"),
        "{}",
        aid.context_info
    );
}

#[tokio::test(flavor = "current_thread")]
async fn falls_back_to_the_issue_files() {
    let dir = project();
    let t = trigger(json!({}), dir.path());
    let c: HookContext = serde_json::from_value(
        json!({"issue": {"id": "FEAT-7", "files": ["./src/api/x.rs", "src/api/x.rs"]}}),
    )
    .unwrap();
    let (aid, _, _) = review(&t, &c).await;
    assert_eq!(
        aid.context_info,
        "Review requested from @alice, @bob for FEAT-7 (1 file)"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn command_gets_reviewers_and_issue_id() {
    let dir = project();
    let t = trigger(
        json!({"command": "echo \"asked $AHP_REVIEWERS for $AHP_ISSUE_ID in $(basename \"$PWD\")\" | tee notified.txt"}),
        dir.path(),
    );
    let (aid, _, _) = review(&t, &ctx(Some("FEAT-0123"), &["src/api/a.rs"])).await;
    let base = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert_eq!(
        aid.context_info,
        format!(
            "Review requested from @alice, @bob for FEAT-0123 (1 file). Reviewers notified: asked @alice,@bob for FEAT-0123 in {base}"
        )
    );
    let written = std::fs::read_to_string(dir.path().join("notified.txt")).unwrap();
    assert!(
        written.starts_with("asked @alice,@bob for FEAT-0123"),
        "{written}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn command_failure_is_reported_in_the_aid() {
    let dir = project();
    let t = trigger(
        json!({"command": "echo 'gh: not logged in' >&2; exit 4"}),
        dir.path(),
    );
    let (aid, kind, _) = review(&t, &ctx(Some("FEAT-0123"), &["x.rs"])).await;
    assert_eq!(kind, "review-requested");
    assert_eq!(
        aid.context_info,
        "Review requested from @org/core for FEAT-0123 (1 file). The notification command failed (exit 4): gh: not logged in; notify the reviewers by hand"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn command_timeout_is_reported_in_the_aid() {
    let dir = project();
    let t = trigger(
        json!({"command": "sleep 30", "timeout_ms": 200}),
        dir.path(),
    );
    let (aid, _, _) = review(&t, &ctx(None, &["x.rs"])).await;
    assert!(
        aid.context_info
            .ends_with("The notification command timed out after 200 ms (its process group was killed); notify the reviewers by hand"),
        "{}",
        aid.context_info
    );
}

#[tokio::test(flavor = "current_thread")]
async fn command_is_not_run_without_reviewers_or_when_notifying_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let t = trigger(json!({"command": "touch ran.txt"}), dir.path());
    let (_, kind, _) = review(&t, &ctx(None, &["x.rs"])).await;
    assert_eq!(kind, "review-unassigned");
    assert!(!dir.path().join("ran.txt").exists());

    let t = trigger(
        json!({"command": "touch ran.txt", "notify_reviewers": false, "reviewers": ["@a"]}),
        dir.path(),
    );
    let (aid, _, _) = review(&t, &ctx(None, &["x.rs"])).await;
    assert_eq!(
        aid.context_info,
        "Review requested from @a for this change (1 file)"
    );
    assert!(!dir.path().join("ran.txt").exists());
}

#[tokio::test(flavor = "current_thread")]
async fn through_the_registry() {
    let dir = project();
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(registry.resolve("review-trigger"), Some("ReviewTrigger"));
    let config = json!({});
    let oracle = registry
        .build(
            "review-trigger",
            OracleConfig::new(&config, Some(dir.path())),
        )
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Aid));
    let signals = oracle.evaluate(&ctx(Some("F-1"), &["a.md"])).await.unwrap();
    assert_eq!(signals[0].context.files, ["a.md"]);
    assert_eq!(
        signals[0].payload.summary(),
        "Review requested from @writers for F-1 (1 file)"
    );
}

#[test]
fn config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = Some(dir.path());

    let e = config_error(json!({"notify": true}), d);
    assert!(e.to_string().contains("unknown key `notify`"), "{e}");

    let e = config_error(json!({"notify_reviewers": "yes"}), d);
    assert_eq!(e.key.as_deref(), Some("notify_reviewers"));

    let e = config_error(json!({"codeowners": "missing/CODEOWNERS"}), d);
    assert_eq!(e.key.as_deref(), Some("codeowners"));
    assert!(e.message.contains("does not exist"), "{e}");
    let e = config_error(json!({"codeowners": ""}), d);
    assert!(e.message.contains("must not be empty"), "{e}");
    let e = config_error(json!({"codeowners": 3}), d);
    assert!(e.message.contains("expected a string"), "{e}");

    let e = config_error(json!({"reviewers": "@alice"}), d);
    assert_eq!(e.key.as_deref(), Some("reviewers"));
    assert!(e.message.contains("expected a list"), "{e}");
    let e = config_error(json!({"reviewers": ["@a", 7]}), d);
    assert_eq!(e.key.as_deref(), Some("reviewers.1"));
    let e = config_error(json!({"reviewers": ["@a b"]}), d);
    assert_eq!(e.key.as_deref(), Some("reviewers.0"));

    let e = config_error(json!({"command": "  "}), d);
    assert_eq!(e.key.as_deref(), Some("command"));

    let e = config_error(json!({"timeout_ms": 0}), d);
    assert!(e.message.contains("out of range"), "{e}");
    let e = config_error(json!({"timeout_ms": 700000}), d);
    assert!(e.message.contains("out of range"), "{e}");
    let e = config_error(json!({"timeout_ms": "30s"}), d);
    assert!(e.message.contains("whole number of milliseconds"), "{e}");
}
