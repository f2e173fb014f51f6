//! DependencyChecker on real project directories and git repositories:
//! manifests that parse or not, lockfiles that move with them or not, and
//! new dependencies since the merge base.

use ahp_engine::{
    Evaluation, Files, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, Payload,
    Registry, Signal,
};
use ahp_oracles::workflow::deps::{
    DependencyChecker, LOCKFILE_TYPE, ManifestKind, NEW_DEPENDENCIES_TYPE, PARSE_ERROR_TYPE,
    parse_manifest,
};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

// ---------------------------------------------------------------- helpers

fn write(dir: &Path, path: &str, body: &str) {
    let p = dir.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, body) in files {
        write(dir.path(), path, body);
    }
    dir
}

fn checker(dir: &Path, config: Value) -> DependencyChecker {
    match DependencyChecker::from_config(OracleConfig::new(&config, Some(dir))) {
        Ok(c) => c,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match DependencyChecker::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn ctx(changed: Option<&[&str]>, merge_base: Option<&str>) -> HookContext {
    let mut ctx = HookContext {
        files: changed.map(|c| Files {
            changed: c.iter().map(|s| s.to_string()).collect(),
            changed_count: c.len(),
            ..Files::default()
        }),
        ..HookContext::default()
    };
    if let Some(mb) = merge_base {
        ctx.extra
            .insert("git".into(), json!({"trunk": "main", "merge_base": mb}));
    }
    ctx
}

async fn run(dir: &Path, config: Value, ctx: &HookContext) -> Evaluation {
    match checker(dir, config.clone()).evaluate_full(ctx).await {
        Ok(e) => e,
        Err(e) => panic!("{config}: {e}"),
    }
}

fn of_type<'a>(eval: &'a Evaluation, t: &str) -> Vec<&'a Signal> {
    eval.signals
        .iter()
        .filter(|s| s.header.signal_type == t)
        .collect()
}

fn block(s: &Signal) -> (&str, &[String]) {
    match &s.payload {
        Payload::Block(b) => (b.reason.as_str(), b.resolution_path.as_slice()),
        other => panic!("expected a block, got {other:?}"),
    }
}

fn aid(s: &Signal) -> (&str, &[String]) {
    match &s.payload {
        Payload::Aid(a) => (a.context_info.as_str(), a.follow_ups.as_slice()),
        other => panic!("expected an aid, got {other:?}"),
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with `files` committed on main; returns its directory and
/// the commit (the merge base for work done after it).
fn repo(files: &[(&str, &str)]) -> (TempDir, String) {
    let dir = project(files);
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    let sha = git(dir.path(), &["rev-parse", "HEAD"]);
    git(dir.path(), &["checkout", "-qb", "work"]);
    (dir, sha)
}

const CARGO: &str =
    "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n";

// ----------------------------------------------------------- config errors

#[test]
fn bad_settings_name_their_key() {
    for (config, key, expected) in [
        (
            json!({"manifest_files": "Cargo.toml"}),
            "manifest_files",
            "expected a list",
        ),
        (
            json!({"manifest_files": []}),
            "manifest_files",
            "the list is empty",
        ),
        (
            json!({"manifest_files": ["pom.xml"]}),
            "manifest_files.0",
            "unknown manifest `pom.xml`",
        ),
        (
            json!({"manifest_files": ["Cargo.tml"]}),
            "manifest_files.0",
            "did you mean `Cargo.toml`",
        ),
        (
            json!({"manifest_files": [3]}),
            "manifest_files.0",
            "expected a string, found a number",
        ),
        (
            json!({"manifest_files": ["go.mod", "go.mod"]}),
            "manifest_files.1",
            "listed twice",
        ),
        (
            json!({"manifest_files": ["../Cargo.toml"]}),
            "manifest_files.0",
            "inside the project",
        ),
        (
            json!({"manifest_files": ["/abs/Cargo.toml"]}),
            "manifest_files.0",
            "inside the project",
        ),
        (
            json!({"lockfiles": {"pakage.json": "yarn.lock"}}),
            "lockfiles.pakage.json",
            "did you mean `package.json`",
        ),
        (
            json!({"lockfiles": {"package.json": 1}}),
            "lockfiles.package.json",
            "expected a string or a list of strings, found a number",
        ),
        (
            json!({"lockfiles": {"package.json": ""}}),
            "lockfiles.package.json.0",
            "an empty string",
        ),
        (
            json!({"lockfiles": {"package.json": ["yarn.lock", 2]}}),
            "lockfiles.package.json.1",
            "expected a string, found a number",
        ),
        (
            json!({"lockfiles": {"package.json": "web/yarn.lock"}}),
            "lockfiles.package.json",
            "file name only",
        ),
        (
            json!({"lockfiles": ["Cargo.lock"]}),
            "lockfiles",
            "expected a map",
        ),
        (
            json!({"manifest_file": ["Cargo.toml"]}),
            "manifest_file",
            "did you mean `manifest_files`",
        ),
        (
            json!({"manifests": ["Cargo.toml"]}),
            "manifests",
            "known keys: manifest_files, lockfiles",
        ),
    ] {
        let e = config_error(config.clone());
        assert_eq!(e.key.as_deref(), Some(key), "{config}: {e}");
        assert!(e.message.contains(expected), "{config}: {e}");
    }
}

#[test]
fn defaults_and_overrides() {
    let c = checker(Path::new("."), json!(null));
    assert_eq!(
        c.manifest_files(),
        vec![
            "Cargo.toml",
            "package.json",
            "requirements.txt",
            "pyproject.toml",
            "go.mod"
        ]
    );
    assert_eq!(
        c.lockfiles_for("package.json"),
        vec!["package-lock.json", "yarn.lock", "pnpm-lock.yaml"]
    );
    assert_eq!(
        c.lockfiles_for("pyproject.toml"),
        vec!["poetry.lock", "uv.lock", "pdm.lock"]
    );
    assert_eq!(c.lockfiles_for("go.mod"), vec!["go.sum"]);
    assert!(c.lockfiles_for("requirements.txt").is_empty());
    let c = checker(
        Path::new("."),
        json!({"manifest_files": ["requirements-dev.txt", "package.json"], "lockfiles": {"requirements-dev.txt": "requirements-dev.lock", "package.json": []}}),
    );
    assert_eq!(
        c.lockfiles_for("requirements-dev.txt"),
        vec!["requirements-dev.lock"]
    );
    assert!(c.lockfiles_for("package.json").is_empty());
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(
        registry.resolve("dependency-checker"),
        Some("DependencyChecker")
    );
    assert_eq!(c.default_intensity(), Some(Intensity::Block));
}

// ------------------------------------------------------------ parse errors

#[tokio::test(flavor = "current_thread")]
async fn valid_manifests_of_every_kind_pass() {
    let dir = project(&[
        ("Cargo.toml", CARGO),
        (
            "package.json",
            "{\"name\": \"web\", \"dependencies\": {\"react\": \"^18\"}}",
        ),
        ("requirements.txt", "# pinned\nrequests==2.31.0\n"),
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\ndependencies = [\"httpx>=0.27\"]\n",
        ),
        (
            "go.mod",
            "module example.com/x\n\ngo 1.22\n\nrequire github.com/a/b v1.0.0\n",
        ),
    ]);
    let eval = run(dir.path(), json!({}), &ctx(None, None)).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes.iter().any(|n| n.contains("no files.changed")),
        "{:?}",
        eval.notes
    );
}

#[tokio::test(flavor = "current_thread")]
async fn invalid_manifests_block_with_file_and_line() {
    for (path, body, expected) in [
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\n[dependencies\nserde = \"1\"\n",
            "Cargo.toml:3:",
        ),
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\n\n[dependencies]\nserde = 1\n",
            "Cargo.toml:5: dependency `serde` in `dependencies` must be a version string or a table",
        ),
        (
            "package.json",
            "{\n  \"name\": \"web\",\n  \"dependencies\": {\n    \"react\": \"^18\",\n  }\n}\n",
            "package.json:5: trailing comma",
        ),
        (
            "package.json",
            "{\n  \"devDependencies\": {\n    \"vitest\": 1\n  }\n}\n",
            "package.json:3: the version of `vitest` in `devDependencies` must be a string",
        ),
        (
            "requirements.txt",
            "requests==2.31\n# ok\nflask==\n",
            "requirements.txt:3: `flask==`: no version after `==`",
        ),
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\ndependencies = [\n  \"ok\",\n  \"bad name!\",\n]\n",
            "pyproject.toml:5:",
        ),
        (
            "go.mod",
            "module example.com/x\n\nrequire (\n  github.com/a/b 1.0\n)\n",
            "go.mod:4: `1.0` is not a module version",
        ),
    ] {
        let dir = project(&[(path, body)]);
        let eval = run(dir.path(), json!({}), &ctx(None, None)).await;
        let blocks = of_type(&eval, PARSE_ERROR_TYPE);
        assert_eq!(blocks.len(), 1, "{path}: {eval:?}");
        let (reason, steps) = block(blocks[0]);
        assert!(reason.starts_with(expected), "{path}: {reason}");
        assert!(
            steps[0].starts_with(&format!("fix {path} at line")),
            "{steps:?}"
        );
        assert_eq!(blocks[0].context.files, vec![path.to_string()]);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn changed_manifests_in_subdirectories_are_checked() {
    let dir = project(&[("crates/core/Cargo.toml", "[dependencies]\nx = [\n")]);
    // Not changed: not looked at (only the root one would be).
    let eval = run(dir.path(), json!({}), &ctx(Some(&[]), None)).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["crates/core/Cargo.toml"]), None),
    )
    .await;
    let (reason, _) = block(of_type(&eval, PARSE_ERROR_TYPE)[0]);
    assert!(reason.starts_with("crates/core/Cargo.toml:2:"), "{reason}");
}

// ---------------------------------------------------------------- lockfiles

#[tokio::test(flavor = "current_thread")]
async fn a_manifest_changed_without_its_lockfile_blocks() {
    for (manifest, body, lock, expected) in [
        (
            "Cargo.toml",
            CARGO,
            "Cargo.lock",
            "Cargo.toml changed but Cargo.lock did not: run `cargo update -w` / `cargo generate-lockfile`",
        ),
        (
            "package.json",
            "{\"dependencies\": {}}",
            "yarn.lock",
            "package.json changed but yarn.lock did not: run `yarn install`",
        ),
        (
            "package.json",
            "{}",
            "package-lock.json",
            "package.json changed but package-lock.json did not: run `npm install`",
        ),
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\n",
            "uv.lock",
            "pyproject.toml changed but uv.lock did not: run `uv lock`",
        ),
        (
            "go.mod",
            "module a\n",
            "go.sum",
            "go.mod changed but go.sum did not: run `go mod tidy`",
        ),
    ] {
        let dir = project(&[(manifest, body), (lock, "")]);
        let eval = run(
            dir.path(),
            json!({}),
            &ctx(Some(&[manifest, "src/x"]), None),
        )
        .await;
        let blocks = of_type(&eval, LOCKFILE_TYPE);
        assert_eq!(blocks.len(), 1, "{manifest}: {eval:?}");
        let (reason, steps) = block(blocks[0]);
        assert_eq!(reason, expected);
        assert!(
            steps[1].contains(&format!("include the updated {lock}")),
            "{steps:?}"
        );
        assert_eq!(
            blocks[0].context.files,
            vec![manifest.to_string(), lock.to_string()]
        );
        // With the lockfile changed too: accepted.
        let eval = run(dir.path(), json!({}), &ctx(Some(&[manifest, lock]), None)).await;
        assert!(eval.signals.is_empty(), "{manifest}: {eval:?}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn no_lockfile_no_lockfile_check() {
    // No Cargo.lock (a library that does not commit it): nothing expected.
    let dir = project(&[("Cargo.toml", CARGO)]);
    let eval = run(dir.path(), json!({}), &ctx(Some(&["Cargo.toml"]), None)).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    // requirements.txt has no lockfile by default, one when configured.
    let dir = project(&[("requirements.txt", "flask\n"), ("requirements.lock", "")]);
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["requirements.txt"]), None),
    )
    .await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    let config = json!({"lockfiles": {"requirements.txt": "requirements.lock"}});
    let eval = run(dir.path(), config, &ctx(Some(&["requirements.txt"]), None)).await;
    let (reason, _) = block(of_type(&eval, LOCKFILE_TYPE)[0]);
    assert_eq!(
        reason,
        "requirements.txt changed but requirements.lock did not: regenerate requirements.lock"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_workspace_lockfile_is_found_in_a_parent_directory() {
    let dir = project(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
        ("Cargo.lock", ""),
        ("crates/core/Cargo.toml", CARGO),
    ]);
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["crates/core/Cargo.toml"]), None),
    )
    .await;
    let blocks = of_type(&eval, LOCKFILE_TYPE);
    assert_eq!(blocks.len(), 1, "{eval:?}");
    assert_eq!(
        blocks[0].context.files,
        vec!["crates/core/Cargo.toml", "Cargo.lock"]
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["crates/core/Cargo.toml", "Cargo.lock"]), None),
    )
    .await;
    assert!(eval.signals.is_empty(), "{eval:?}");
}

// --------------------------------------------------------- new dependencies

#[tokio::test(flavor = "current_thread")]
async fn new_dependencies_since_the_merge_base_are_listed() {
    let (dir, base) = repo(&[("Cargo.toml", CARGO), ("Cargo.lock", "# v1\n")]);
    write(
        dir.path(),
        "Cargo.toml",
        &format!(
            "{CARGO}tokio = {{ version = \"1.40\", features = [\"rt\"] }}\n\n[dev-dependencies]\ntempfile = \"3\"\n"
        ),
    );
    write(dir.path(), "Cargo.lock", "# v2\n");
    git(dir.path(), &["commit", "-qam", "add tokio"]);
    let ctx = ctx(Some(&["Cargo.toml", "Cargo.lock"]), Some(&base));
    let eval = run(dir.path(), json!({}), &ctx).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let s = &eval.signals[0];
    assert_eq!(s.header.signal_type, NEW_DEPENDENCIES_TYPE);
    let (info, follow_ups) = aid(s);
    assert_eq!(
        info,
        "2 new dependencies since the merge base:\nCargo.toml:\n  tokio 1.40 (line 7)\n  tempfile 3 (dev-dependencies) (line 10)"
    );
    assert!(
        follow_ups.iter().any(|f| f.contains("`cargo audit`")),
        "{follow_ups:?}"
    );
    assert_eq!(s.context.files, vec!["Cargo.toml"]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_new_dependency_without_the_lockfile_blocks_and_is_listed() {
    let (dir, base) = repo(&[("Cargo.toml", CARGO), ("Cargo.lock", "")]);
    write(dir.path(), "Cargo.toml", &format!("{CARGO}regex = \"1\"\n"));
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["Cargo.toml"]), Some(&base)),
    )
    .await;
    let types: Vec<&str> = eval
        .signals
        .iter()
        .map(|s| s.header.signal_type.as_str())
        .collect();
    assert_eq!(types, vec![LOCKFILE_TYPE, NEW_DEPENDENCIES_TYPE]);
}

#[tokio::test(flavor = "current_thread")]
async fn an_edit_the_lockfile_does_not_record_does_not_block() {
    let (dir, base) = repo(&[("Cargo.toml", CARGO), ("Cargo.lock", "")]);
    write(
        dir.path(),
        "Cargo.toml",
        &CARGO.replace(
            "version = \"0.1.0\"\n",
            "version = \"0.1.0\"\ndescription = \"an app\"\n",
        ),
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["Cargo.toml"]), Some(&base)),
    )
    .await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes
            .iter()
            .any(|n| n.contains("nothing its lockfile Cargo.lock records did")),
        "{:?}",
        eval.notes
    );
    // A version bump of the package is recorded in Cargo.lock: block.
    write(dir.path(), "Cargo.toml", &CARGO.replace("0.1.0", "0.2.0"));
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["Cargo.toml"]), Some(&base)),
    )
    .await;
    assert_eq!(of_type(&eval, LOCKFILE_TYPE).len(), 1, "{eval:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_manifest_new_since_the_merge_base_lists_everything() {
    let (dir, base) = repo(&[("README.md", "hi\n")]);
    write(
        dir.path(),
        "web/package.json",
        "{\"dependencies\": {\"react\": \"^18.2.0\"}, \"devDependencies\": {\"vitest\": \"^1\"}}",
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["web/package.json"]), Some(&base)),
    )
    .await;
    let (info, follow_ups) = aid(of_type(&eval, NEW_DEPENDENCIES_TYPE)[0]);
    assert!(
        info.contains(
            "web/package.json:\n  react ^18.2.0 (line 1)\n  vitest ^1 (devDependencies) (line 1)"
        ),
        "{info}"
    );
    assert!(
        follow_ups.iter().any(|f| f.contains("`npm audit`")),
        "{follow_ups:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn requirements_comments_markers_and_extras() {
    let (dir, base) = repo(&[(
        "requirements.txt",
        "# web\nDjango>=4.2  # LTS\nrequests==2.31.0\n",
    )]);
    write(
        dir.path(),
        "requirements.txt",
        "# web\n\
         django>=5.0  # renamed case and bumped: not new\n\
         requests[socks]==2.31.0\n\
         uvloop>=0.19 ; sys_platform != \"win32\"  # not on windows\n\
         -r dev.txt\n\
         pydantic[email,timezone] >= 2.5, < 3 \\\n    --hash=sha256:0123\n",
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["requirements.txt"]), Some(&base)),
    )
    .await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let (info, _) = aid(&eval.signals[0]);
    assert_eq!(
        info,
        "2 new dependencies since the merge base:\nrequirements.txt:\n  uvloop >=0.19 ; sys_platform != \"win32\" (line 4)\n  pydantic [email,timezone] >=2.5,<3 (line 6)"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn go_and_pyproject_new_dependencies() {
    let (dir, base) = repo(&[
        (
            "go.mod",
            "module example.com/x\n\ngo 1.22\n\nrequire github.com/a/b v1.0.0\n",
        ),
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\ndependencies = [\"httpx\"]\n",
        ),
    ]);
    write(
        dir.path(),
        "go.mod",
        "module example.com/x\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.1.0\n\tgithub.com/c/d v0.3.0\n\tgolang.org/x/sys v0.20.0 // indirect\n)\n",
    );
    write(
        dir.path(),
        "pyproject.toml",
        "[project]\nname = \"x\"\ndependencies = [\"HTTPX>=0.27\"]\n\n[project.optional-dependencies]\ntest = [\"pytest>=8\"]\n",
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["go.mod", "pyproject.toml"]), Some(&base)),
    )
    .await;
    let (info, _) = aid(of_type(&eval, NEW_DEPENDENCIES_TYPE)[0]);
    assert!(info.starts_with("3 new dependencies"), "{info}");
    assert!(info.contains("go.mod:\n  github.com/c/d v0.3.0 (line 7)\n  golang.org/x/sys v0.20.0 (indirect) (line 8)"), "{info}");
    assert!(
        info.contains(
            "pyproject.toml:\n  pytest >=8 (project.optional-dependencies.test) (line 6)"
        ),
        "{info}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_usable_merge_base_the_comparison_is_skipped() {
    let (dir, _) = repo(&[("Cargo.toml", CARGO)]);
    write(dir.path(), "Cargo.toml", &format!("{CARGO}regex = \"1\"\n"));
    let eval = run(dir.path(), json!({}), &ctx(Some(&["Cargo.toml"]), None)).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes.iter().any(|n| n.contains("no git.merge_base")),
        "{:?}",
        eval.notes
    );
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["Cargo.toml"]), Some("0123456789abcdef")),
    )
    .await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes
            .iter()
            .any(|n| n.contains("git.merge_base `0123456789abcdef` is not a commit")),
        "{:?}",
        eval.notes
    );
    // Outside git altogether.
    let dir = project(&[("Cargo.toml", CARGO)]);
    let eval = run(
        dir.path(),
        json!({}),
        &ctx(Some(&["Cargo.toml"]), Some("HEAD")),
    )
    .await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes.iter().any(|n| n.contains("is not a commit")),
        "{:?}",
        eval.notes
    );
}

#[test]
fn public_parser_gives_lines() {
    let m = parse_manifest(
        ManifestKind::Requirements,
        "a\n\nb>=1 \\\n  ; python_version<'3'\n",
    )
    .unwrap();
    let lines: Vec<usize> = m.dependencies.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![1, 3]);
}
