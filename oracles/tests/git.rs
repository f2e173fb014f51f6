//! The git module against real temporary repositories: what counts as the
//! change of a branch, commits since the merge base, history of paths, and
//! the errors outside a repository.

use crate::gitrepo::Repo;
use ahp_engine::HookContext;
use ahp_oracles::workflow::git::{
    ChangeSet, ChangedFile, ChangedFiles, Commit, FileStatus, Git, GitError, resolve_changes,
};
use serde_json::json;

fn find<'a>(c: &'a ChangeSet, path: &str) -> &'a ChangedFile {
    c.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not in {:?}", c.paths()))
}

fn subjects(commits: &[Commit]) -> Vec<&str> {
    commits.iter().map(|c| c.subject.as_str()).collect()
}

const OLD_NAME: &str = "line one of a file to be renamed\nline two\nline three\nline four\n";

/// main: .gitignore, src/lib.rs, src/old name.rs, docs/guide.md,
/// remove_me.txt. feature (from there): two commits; then main moves on;
/// then, on feature, staged, unstaged, untracked, deleted, renamed and
/// binary changes, plus an ignored file.
fn feature_repo() -> (Repo, String) {
    let r = Repo::init();
    r.commit_files(
        &[
            (".gitignore", "target/\n"),
            ("src/lib.rs", "pub fn a() {}\npub fn b() {}\n"),
            ("src/old name.rs", OLD_NAME),
            ("docs/guide.md", "# Guide\n"),
            ("remove_me.txt", "bye\n"),
        ],
        "chore: initial layout",
    );
    let base = r.head();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.commit_files(
        &[("src/new.rs", "pub fn new() {}\n")],
        "feat(core): add new",
    );
    r.write(
        "src/lib.rs",
        "pub fn a() {}\npub fn c() {}\npub fn d() {}\n",
    );
    r.write(
        "assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".as_slice(),
    );
    r.git(&["add", "-A"]);
    r.git(&[
        "commit",
        "-q",
        "-m",
        "fix: rework lib",
        "-m",
        "Longer explanation.\n\nRefs: FEAT-0001",
    ]);
    // main moves on: none of this is part of the feature's change.
    r.git(&["checkout", "-q", "main"]);
    r.commit_files(&[("main_only.txt", "later on main\n")], "docs: main only");
    r.git(&["checkout", "-q", "feature"]);

    r.write("staged.txt", "staged\n");
    r.git(&["add", "staged.txt"]);
    r.write("docs/guide.md", "# Guide\n\nMore.\n");
    r.write("notes/todo list.md", "- one\n- two\n");
    r.write("ünïcode/файл.txt", "привет\n");
    r.write("weird\nname.txt", "x");
    r.write("data.bin", b"\0\x01\x02".as_slice());
    r.write("target/debug/out.o", "ignored");
    r.git(&["rm", "-q", "remove_me.txt"]);
    r.git(&["mv", "src/old name.rs", "src/new name.rs"]);
    (r, base)
}

#[tokio::test(flavor = "current_thread")]
async fn feature_branch_change_has_every_kind_of_file() {
    let (r, base) = feature_repo();
    let c = Git::new(r.path()).changes(None).await.unwrap();
    assert_eq!(c.trunk.as_deref(), Some("main"));
    assert_eq!(c.merge_base.as_deref(), Some(base.as_str()));

    let mut expected = vec![
        "assets/logo.png",
        "data.bin",
        "docs/guide.md",
        "notes/todo list.md",
        "remove_me.txt",
        "src/lib.rs",
        "src/new name.rs",
        "src/new.rs",
        "staged.txt",
        "weird\nname.txt",
        "ünïcode/файл.txt",
    ];
    expected.sort();
    assert_eq!(
        c.paths(),
        expected,
        "sorted, deduplicated, nothing from main or target/"
    );

    let lib = find(&c, "src/lib.rs");
    assert_eq!(lib.status, FileStatus::Modified);
    assert_eq!((lib.added, lib.removed), (2, 1));
    assert!(!lib.binary);

    assert_eq!(find(&c, "src/new.rs").status, FileStatus::Added);
    assert_eq!(find(&c, "staged.txt").status, FileStatus::Added);
    let guide = find(&c, "docs/guide.md");
    assert_eq!(guide.status, FileStatus::Modified);
    assert_eq!((guide.added, guide.removed), (2, 0));
    assert_eq!(find(&c, "remove_me.txt").status, FileStatus::Deleted);
    assert_eq!(find(&c, "remove_me.txt").removed, 1);

    let renamed = find(&c, "src/new name.rs");
    assert_eq!(renamed.status, FileStatus::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("src/old name.rs"));
    assert_eq!((renamed.added, renamed.removed), (0, 0));

    let logo = find(&c, "assets/logo.png");
    assert_eq!(logo.status, FileStatus::Added);
    assert!(logo.binary);
    assert_eq!((logo.added, logo.removed), (0, 0));

    let notes = find(&c, "notes/todo list.md");
    assert_eq!(notes.status, FileStatus::Untracked);
    assert_eq!(notes.added, 2);
    assert_eq!(find(&c, "ünïcode/файл.txt").status, FileStatus::Untracked);
    assert_eq!(find(&c, "weird\nname.txt").added, 1);
    let data = find(&c, "data.bin");
    assert_eq!(data.status, FileStatus::Untracked);
    assert!(data.binary);
    assert_eq!(data.added, 0);

    let added: u64 = c.files.iter().map(|f| f.added).sum();
    let removed: u64 = c.files.iter().map(|f| f.removed).sum();
    assert_eq!((c.lines_added, c.lines_removed), (added, removed));
}

#[tokio::test(flavor = "current_thread")]
async fn context_shapes() {
    let (r, base) = feature_repo();
    let git = Git::new(r.path());
    let c = git.changes(None).await.unwrap();
    let commits = git.commits_since_base(None).await.unwrap();

    let files = c.to_context();
    assert_eq!(files["changed_count"], 11);
    assert_eq!(files["changed"].as_array().unwrap().len(), 11);
    assert_eq!(files["lines_added"], c.lines_added);
    assert_eq!(files["lines_removed"], c.lines_removed);
    let details = files["details"].as_array().unwrap();
    let logo = details
        .iter()
        .find(|d| d["path"] == "assets/logo.png")
        .unwrap();
    assert_eq!(
        logo,
        &json!({"path": "assets/logo.png", "status": "added", "added": 0, "removed": 0, "binary": true})
    );
    let renamed = details.iter().find(|d| d["status"] == "renamed").unwrap();
    assert_eq!(renamed["old_path"], "src/old name.rs");

    let g = c.git_context(&commits);
    assert_eq!(g["trunk"], "main");
    assert_eq!(g["merge_base"], base);
    assert_eq!(g["commits"][0]["subject"], "feat(core): add new");
    assert_eq!(
        g["commits"][1]["body"],
        "Longer explanation.\n\nRefs: FEAT-0001"
    );
    assert_eq!(g["commits"][1]["sha"].as_str().unwrap().len(), 40);

    // The shapes read back into a context.
    let ctx: HookContext = serde_json::from_value(json!({"files": files, "git": g})).unwrap();
    let back = ChangeSet::from_context(&ctx).unwrap();
    assert_eq!(back, c);
    assert_eq!(Commit::from_context(&ctx).unwrap().unwrap(), commits);
}

#[tokio::test(flavor = "current_thread")]
async fn commits_since_base_are_the_branch_commits_oldest_first() {
    let (r, _) = feature_repo();
    let git = Git::new(r.path());
    let commits = git.commits_since_base(None).await.unwrap();
    assert_eq!(
        subjects(&commits),
        ["feat(core): add new", "fix: rework lib"]
    );
    assert_eq!(commits[0].body, "");

    // A merge commit is left out; the merged commit is in.
    r.commit_all("wip: save");
    r.git(&["checkout", "-q", "-b", "side"]);
    r.commit_files(&[("side.txt", "s\n")], "feat: side work");
    r.git(&["checkout", "-q", "feature"]);
    r.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'side'",
        "side",
    ]);
    let commits = git.commits_since_base(None).await.unwrap();
    assert_eq!(
        subjects(&commits),
        [
            "feat(core): add new",
            "fix: rework lib",
            "wip: save",
            "feat: side work"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn on_the_trunk_only_uncommitted_work_counts() {
    let r = Repo::init();
    r.commit_files(&[("a.txt", "a\n"), ("b.txt", "b\n")], "one");
    r.commit_files(&[("a.txt", "a\na2\n")], "two");
    r.write("b.txt", "b\nb2\n");
    r.write("new.txt", "n\n");
    let git = Git::new(r.path());
    let c = git.changes(None).await.unwrap();
    assert_eq!(c.trunk.as_deref(), Some("main"));
    assert_eq!(c.merge_base, Some(r.head()));
    assert_eq!(c.paths(), ["b.txt", "new.txt"]);
    assert_eq!(find(&c, "b.txt").status, FileStatus::Modified);
    assert!(git.commits_since_base(None).await.unwrap().is_empty());

    // Nothing changed at all.
    r.commit_all("three");
    let c = git.changes(None).await.unwrap();
    assert!(c.files.is_empty());
    assert_eq!((c.lines_added, c.lines_removed), (0, 0));
}

#[tokio::test(flavor = "current_thread")]
async fn master_is_the_trunk_when_there_is_no_main() {
    let r = Repo::init_with("master");
    r.commit_files(&[("a.txt", "a\n")], "one");
    r.git(&["checkout", "-q", "-b", "topic"]);
    r.commit_files(&[("b.txt", "b\n")], "feat: b");
    let git = Git::new(r.path());
    let c = git.changes(None).await.unwrap();
    assert_eq!(c.trunk.as_deref(), Some("master"));
    assert_eq!(c.paths(), ["b.txt"]);
    assert_eq!(
        subjects(&git.commits_since_base(None).await.unwrap()),
        ["feat: b"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_named_trunk_is_used_and_must_exist() {
    let r = Repo::init();
    r.commit_files(&[("a.txt", "a\n")], "one");
    r.git(&["checkout", "-q", "-b", "develop"]);
    r.commit_files(&[("d.txt", "d\n")], "on develop");
    r.git(&["checkout", "-q", "-b", "topic"]);
    r.commit_files(&[("t.txt", "t\n")], "on topic");
    let git = Git::new(r.path());

    let c = git.changes(Some("develop")).await.unwrap();
    assert_eq!(c.trunk.as_deref(), Some("develop"));
    assert_eq!(c.paths(), ["t.txt"]);
    // Against main, develop's commit is part of the change too.
    assert_eq!(git.changes(None).await.unwrap().paths(), ["d.txt", "t.txt"]);
    // An empty name means "detect".
    assert_eq!(
        git.changes(Some(" ")).await.unwrap().trunk.as_deref(),
        Some("main")
    );

    let err = git.changes(Some("release")).await.unwrap_err();
    assert!(matches!(err, GitError::TrunkNotFound { ref name, .. } if name == "release"));
    assert!(
        err.to_string()
            .starts_with("trunk branch `release` does not exist"),
        "{err}"
    );
    let err = git.changes(Some("--all")).await.unwrap_err();
    assert!(matches!(err, GitError::TrunkNotFound { .. }), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_trunk_branch_only_uncommitted_work_counts() {
    let r = Repo::init_with("dev");
    r.commit_files(&[("a.txt", "a\n"), ("b.txt", "b\n")], "one");
    r.commit_files(&[("c.txt", "c\n")], "two");
    r.write("a.txt", "changed\n");
    r.write("u.txt", "u\n");
    let git = Git::new(r.path());
    let c = git.changes(None).await.unwrap();
    assert_eq!(c.trunk, None);
    assert_eq!(c.merge_base, None);
    assert_eq!(c.paths(), ["a.txt", "u.txt"]);
    assert!(git.commits_since_base(None).await.unwrap().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn detached_head_is_compared_with_the_trunk() {
    let (r, base) = feature_repo();
    r.commit_all("wip: everything");
    r.git(&["checkout", "-q", "--detach", "feature"]);
    let c = Git::new(r.path()).changes(None).await.unwrap();
    assert_eq!(c.merge_base.as_deref(), Some(base.as_str()));
    assert_eq!(c.files.len(), 11, "{:?}", c.paths());
    // Everything is committed now: nothing is untracked any more.
    assert!(c.files.iter().all(|f| f.status != FileStatus::Untracked));
}

#[tokio::test(flavor = "current_thread")]
async fn a_repository_without_commits_lists_staged_and_untracked_files() {
    let r = Repo::init();
    r.write("staged.rs", "fn main() {}\n");
    r.git(&["add", "staged.rs"]);
    r.write("loose.txt", "a\nb\n");
    let git = Git::new(r.path());
    let c = git.changes(None).await.unwrap();
    assert_eq!(c.trunk, None);
    assert_eq!(c.paths(), ["loose.txt", "staged.rs"]);
    assert_eq!(find(&c, "staged.rs").status, FileStatus::Added);
    assert_eq!(find(&c, "staged.rs").added, 1);
    assert_eq!(find(&c, "loose.txt").added, 2);
    assert!(git.commits_since_base(None).await.unwrap().is_empty());
    assert!(
        git.log_for_paths(&["staged.rs".into()], 5)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_subdirectory_reports_paths_from_the_repository_root() {
    let (r, _) = feature_repo();
    let c = Git::new(r.path().join("src")).changes(None).await.unwrap();
    assert_eq!(c.files.len(), 11);
    assert!(c.paths().contains(&"notes/todo list.md".to_string()));
}

#[tokio::test(flavor = "current_thread")]
async fn outside_a_repository_the_error_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let git = Git::new(dir.path());
    let err = git.changes(None).await.unwrap_err();
    assert_eq!(
        err,
        GitError::NotARepository {
            dir: dir.path().to_path_buf()
        }
    );
    let msg = err.to_string();
    assert!(
        msg.ends_with("is not inside a git repository; pass the changed files in the context (files.changed) or run inside a repository"),
        "{msg}"
    );
    assert!(msg.starts_with(&dir.path().display().to_string()), "{msg}");
    assert!(matches!(
        git.commits_since_base(None).await,
        Err(GitError::NotARepository { .. })
    ));
    assert!(matches!(
        git.log_for_paths(&["a".into()], 3).await,
        Err(GitError::NotARepository { .. })
    ));
    // Through the trait too.
    let source: &dyn ChangedFiles = &git;
    assert!(source.changes(None).await.is_err());
}

#[tokio::test(flavor = "current_thread")]
async fn a_missing_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = Git::new(&gone).changes(None).await.unwrap_err();
    assert!(matches!(err, GitError::NoSuchDirectory { .. }), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn log_for_paths_lists_recent_commits_touching_them() {
    let r = Repo::init();
    r.commit_files(&[("src/a b.rs", "1\n"), ("other.txt", "o\n")], "one");
    r.commit_files(&[("other.txt", "o2\n")], "two: other only");
    r.commit_files(&[("src/a b.rs", "2\n")], "three");
    r.commit_files(&[("src/[x].rs", "x\n")], "four: brackets");
    r.commit_files(&[("src/a b.rs", "3\n")], "five");
    let git = Git::new(r.path());

    let all = git.log_for_paths(&["src/a b.rs".into()], 10).await.unwrap();
    assert_eq!(subjects(&all), ["five", "three", "one"], "newest first");
    let two = git.log_for_paths(&["src/a b.rs".into()], 2).await.unwrap();
    assert_eq!(subjects(&two), ["five", "three"]);
    // Paths are literal, not globs.
    let lit = git.log_for_paths(&["src/[x].rs".into()], 10).await.unwrap();
    assert_eq!(subjects(&lit), ["four: brackets"]);
    // Several paths; a path git never saw is no error.
    let both = git
        .log_for_paths(&["other.txt".into(), "missing.rs".into()], 10)
        .await
        .unwrap();
    assert_eq!(subjects(&both), ["two: other only", "one"]);
    assert!(
        git.log_for_paths(&["missing.rs".into()], 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(git.log_for_paths(&[], 10).await.unwrap().is_empty());
    assert!(
        git.log_for_paths(&["other.txt".into()], 0)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn resolve_prefers_the_context_and_falls_back_to_git() {
    let (r, _) = feature_repo();
    let given: HookContext =
        serde_json::from_value(json!({"files": {"changed": ["x.rs"]}})).unwrap();
    let c = resolve_changes(&given, r.path()).await.unwrap();
    assert_eq!(c.paths(), ["x.rs"]);

    // No files in the context, or a count without the list: computed.
    for ctx in [
        HookContext::default(),
        serde_json::from_value(json!({"files": {"changed_count": 3}})).unwrap(),
    ] {
        let c = resolve_changes(&ctx, r.path()).await.unwrap();
        assert_eq!(c.files.len(), 11);
    }

    // The context's git.trunk is honoured.
    let ctx: HookContext = serde_json::from_value(json!({"git": {"trunk": "nope"}})).unwrap();
    assert!(matches!(
        resolve_changes(&ctx, r.path()).await,
        Err(GitError::TrunkNotFound { .. })
    ));
}

#[test]
fn commits_in_the_context_are_checked() {
    let ctx: HookContext = serde_json::from_value(json!({"git": {"commits": "feat: x"}})).unwrap();
    let err = Commit::from_context(&ctx).unwrap_err();
    assert!(err.contains("must be a list"), "{err}");
    let ctx: HookContext =
        serde_json::from_value(json!({"git": {"commits": [{"sha": "a"}]}})).unwrap();
    assert!(
        Commit::from_context(&ctx)
            .unwrap_err()
            .contains("git.commits.0 has no `subject`")
    );
    let ctx: HookContext = serde_json::from_value(
        json!({"git": {"commits": [{"sha": "a", "message": "fix: y\n\nbody here\n"}]}}),
    )
    .unwrap();
    let c = Commit::from_context(&ctx).unwrap().unwrap();
    assert_eq!(
        (c[0].subject.as_str(), c[0].body.as_str()),
        ("fix: y", "body here")
    );
    assert_eq!(Commit::from_context(&HookContext::default()).unwrap(), None);
}
