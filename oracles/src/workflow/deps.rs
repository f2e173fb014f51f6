//! The `DependencyChecker` oracle: dependency manifests must parse, their
//! lockfiles must move with them, and new dependencies are listed for the
//! reviewer (SPEC §5).
//!
//! ```yaml
//! - oracle: DependencyChecker
//!   config:
//!     manifest_files: [Cargo.toml, package.json, requirements.txt, pyproject.toml, go.mod]  # the default
//!     lockfiles:                      # optional; overrides the defaults below, per manifest
//!       package.json: pnpm-lock.yaml  # a name, a list of alternatives, or [] for none
//!       requirements.txt: requirements.lock
//! ```
//!
//! **Which manifests.** Each `manifest_files` entry is a file name (every
//! file of that name counts: the one in the project root, and any changed
//! one in a subdirectory) or a relative path with a `/` (only that file).
//! The kind comes from the file name: `Cargo.toml`, `package.json`,
//! `pyproject.toml`, `go.mod`, `requirements*.txt` / `requirements*.in`.
//!
//! **Checks**, for each manifest that exists:
//!
//! 1. It must parse — Cargo.toml and pyproject.toml as TOML (with the
//!    dependency tables of the right shape), package.json as a JSON object,
//!    requirements files line by line (PEP 508 requirements and pip
//!    options), go.mod directive by directive. Otherwise: a **block** of type
//!    `manifest-parse-error` naming `file:line` and the error.
//! 2. When `files.changed` contains the manifest but not its lockfile, and
//!    the lockfile exists (in the manifest's directory or the nearest parent
//!    directory up to the project root — where workspaces keep it): a
//!    **block** of type `lockfile-out-of-step`, e.g. "Cargo.toml changed but
//!    Cargo.lock did not: run `cargo update -w` / `cargo generate-lockfile`".
//!    When the manifest's version at the merge base is known and everything
//!    the lockfile records (dependencies, package name and version,
//!    patches, overrides, workspace members, …) is the same, an edit such
//!    as a new description does not block.
//! 3. New dependencies: the manifest is compared with its version at
//!    `git.merge_base` (from the context) and an **aid** of type
//!    `new-dependencies` lists each added dependency with its version spec
//!    and section. Without `git.merge_base` the comparison is skipped, with a
//!    note in the log.
//!
//! Without `files.changed` in the context, every root manifest is parsed
//! and compared, and the lockfile check is skipped (with a note).
//!
//! ```
//! use ahp_oracles::workflow::deps::DependencyChecker;
//! use ahp_engine::OracleConfig;
//! use serde_json::json;
//! let checker = DependencyChecker::from_config(OracleConfig::empty()).unwrap();
//! assert_eq!(checker.lockfiles_for("Cargo.toml"), ["Cargo.lock"]);
//! let bad = json!({"manifest_files": ["pom.xml"]});
//! let err = DependencyChecker::from_config(OracleConfig::new(&bad, None)).unwrap_err();
//! assert_eq!(err.key.as_deref(), Some("manifest_files.0"));
//! ```

mod parse;

pub use parse::{
    Dependency, Manifest, ManifestError, ManifestKind, lock_advice, normalize_python,
    parse_manifest, parse_requirement,
};

use crate::scripts::command::{changed_files, project_dir};
use crate::scripts::process;
use ahp_engine::oracle::Strings;
use ahp_engine::suggest::did_you_mean;
use ahp_engine::{
    Evaluation, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError,
    Signal, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// DependencyChecker's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DependencyCheckerConfig {
    /// The manifests checked, by file name (default: every kind known).
    #[schemars(length(min = 1))]
    pub manifest_files: Option<Vec<String>>,
    /// Manifest → its lockfile's name, a list of alternatives, or `[]`
    /// for none.
    pub lockfiles: Option<BTreeMap<String, Option<Strings>>>,
}

/// The default `manifest_files`.
pub const DEFAULT_MANIFESTS: [&str; 5] = [
    "Cargo.toml",
    "package.json",
    "requirements.txt",
    "pyproject.toml",
    "go.mod",
];

/// The signal type of a manifest that does not parse.
pub const PARSE_ERROR_TYPE: &str = "manifest-parse-error";

/// The signal type of a manifest changed without its lockfile.
pub const LOCKFILE_TYPE: &str = "lockfile-out-of-step";

/// The signal type of the new-dependencies aid.
pub const NEW_DEPENDENCIES_TYPE: &str = "new-dependencies";

/// The largest manifest read (bigger ones are an error).
const MAX_MANIFEST: u64 = 16 << 20;

/// How long each git query may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// One `manifest_files` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// As written in config.
    name: String,
    kind: ManifestKind,
    /// Lockfile names, in order of preference (empty: none).
    lockfiles: Vec<String>,
}

impl Entry {
    /// A file name (matches that name anywhere) rather than a path.
    fn is_file_name(&self) -> bool {
        !self.name.contains('/')
    }

    fn matches(&self, path: &str) -> bool {
        if self.is_file_name() {
            path.rsplit('/').next() == Some(self.name.as_str())
        } else {
            path == self.name
        }
    }
}

/// Checks dependency manifests and their lockfiles; lists new
/// dependencies. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct DependencyChecker {
    entries: Vec<Entry>,
    project_dir: Option<PathBuf>,
}

/// A manifest found in the project and the `manifest_files` entry it
/// matched.
struct Found<'a> {
    path: String,
    entry: &'a Entry,
}

impl DependencyChecker {
    /// Builds the oracle from its `config:` map; every setting is checked
    /// here.
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: DependencyCheckerConfig = cfg.parse()?;
        let names: Vec<String> = match c.manifest_files {
            None => DEFAULT_MANIFESTS.iter().map(|s| s.to_string()).collect(),
            Some(items) if items.is_empty() => {
                return Err(OracleConfigError::at(
                    "manifest_files",
                    "the list is empty: name at least one manifest (e.g. `[Cargo.toml]`), or leave it out for the defaults",
                ));
            }
            Some(items) => {
                let mut names = Vec::new();
                for (i, s) in items.iter().enumerate() {
                    let key = format!("manifest_files.{i}");
                    let s = s.trim().trim_start_matches("./").to_string();
                    check_manifest_name(&s, &key)?;
                    if names.contains(&s) {
                        return Err(OracleConfigError::at(key, format!("`{s}` is listed twice")));
                    }
                    names.push(s);
                }
                names
            }
        };
        let mut overrides: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (manifest, lock) in c.lockfiles.unwrap_or_default() {
            let key = format!("lockfiles.{manifest}");
            if !names.contains(&manifest) {
                let hint = match did_you_mean(&manifest, names.iter().map(String::as_str)) {
                    Some(s) => format!(" (did you mean `{s}`?)"),
                    None => String::new(),
                };
                return Err(OracleConfigError::at(
                    key,
                    format!(
                        "`{manifest}` is not one of manifest_files{hint}; known: {}",
                        names.join(", ")
                    ),
                ));
            }
            let locks: Vec<String> = lock
                .map(|l| l.0)
                .unwrap_or_default()
                .iter()
                .map(|l| l.trim().to_string())
                .collect();
            for (i, l) in locks.iter().enumerate() {
                if l.is_empty() {
                    return Err(OracleConfigError::at(
                        format!("{key}.{i}"),
                        "expected a lockfile name, found an empty string",
                    ));
                }
                if l.contains('/') || l == ".." {
                    return Err(OracleConfigError::at(
                        key.clone(),
                        format!(
                            "`{l}`: give the lockfile's file name only; it is looked for next to the manifest and in its parent directories"
                        ),
                    ));
                }
            }
            overrides.insert(manifest, locks);
        }
        let entries = names
            .into_iter()
            .map(|name| {
                // Checked by check_manifest_name.
                let kind = ManifestKind::detect(&name).unwrap_or(ManifestKind::Requirements);
                let lockfiles = overrides.remove(&name).unwrap_or_else(|| {
                    kind.default_lockfiles()
                        .iter()
                        .map(|s| s.to_string())
                        .collect()
                });
                Entry {
                    name,
                    kind,
                    lockfiles,
                }
            })
            .collect();
        Ok(DependencyChecker {
            entries,
            project_dir: cfg.project_dir(),
        })
    }

    /// The lockfile names of a `manifest_files` entry (empty when it has
    /// none or is not configured).
    pub fn lockfiles_for(&self, manifest: &str) -> Vec<&str> {
        self.entries
            .iter()
            .find(|e| e.name == manifest)
            .map(|e| e.lockfiles.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The configured manifest entries.
    pub fn manifest_files(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// The manifests to check: root ones that exist, and changed ones.
    fn manifests(&self, root: &Path, changed: Option<&[String]>) -> Vec<Found<'_>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for entry in &self.entries {
            if root.join(&entry.name).is_file() && seen.insert(entry.name.clone()) {
                out.push(Found {
                    path: entry.name.clone(),
                    entry,
                });
            }
        }
        for path in changed.unwrap_or_default() {
            let path = path.trim_start_matches("./");
            let Some(entry) = self.entries.iter().find(|e| e.matches(path)) else {
                continue;
            };
            if root.join(path).is_file() && seen.insert(path.to_string()) {
                out.push(Found {
                    path: path.to_string(),
                    entry,
                });
            }
        }
        out
    }

    /// The lockfile of `manifest` (relative path): the first of the entry's
    /// names found in the manifest's directory or the nearest parent up to
    /// the root.
    fn lockfile(&self, root: &Path, found: &Found<'_>) -> Option<String> {
        if found.entry.lockfiles.is_empty() {
            return None;
        }
        let mut dir: Option<&str> = found.path.rsplit_once('/').map(|(d, _)| d);
        loop {
            for name in &found.entry.lockfiles {
                let rel = match dir {
                    Some(d) => format!("{d}/{name}"),
                    None => name.clone(),
                };
                if root.join(&rel).is_file() {
                    return Some(rel);
                }
            }
            match dir {
                Some(d) => dir = d.rsplit_once('/').map(|(p, _)| p),
                None => return None,
            }
        }
    }
}

fn check_manifest_name(s: &str, key: &str) -> Result<(), OracleConfigError> {
    if s.is_empty() {
        return Err(OracleConfigError::at(
            key,
            "a manifest name must not be empty",
        ));
    }
    if s.starts_with('/') || s.split('/').any(|c| c == "..") {
        return Err(OracleConfigError::at(
            key,
            format!(
                "`{s}`: give a file name or a path inside the project (no `/` at the start, no `..`)"
            ),
        ));
    }
    if ManifestKind::detect(s).is_none() {
        let file = s.rsplit('/').next().unwrap_or(s);
        let hint = match did_you_mean(file, DEFAULT_MANIFESTS.iter().copied()) {
            Some(h) => format!(" (did you mean `{h}`?)"),
            None => String::new(),
        };
        return Err(OracleConfigError::at(
            key,
            format!(
                "unknown manifest `{file}`{hint}; known: Cargo.toml, package.json, pyproject.toml, go.mod, requirements*.txt"
            ),
        ));
    }
    Ok(())
}

/// Reads a manifest; an error when it cannot be read or is too big.
fn read_manifest(root: &Path, path: &str) -> Result<String, OracleError> {
    use crate::project_file::{ReadError, read_in_project};
    match read_in_project(root, Path::new(path), MAX_MANIFEST) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(ReadError::TooLarge { .. }) => Err(OracleError::new(format!(
            "{path} is more than {MAX_MANIFEST} bytes, more than a manifest can reasonably be; is it the right file?"
        ))),
        Err(e) => Err(OracleError::new(e.to_string())),
    }
}

/// What the merge base says about a manifest.
enum Base {
    /// The file did not exist at the merge base.
    Absent,
    /// Its text there.
    Text(String),
}

/// Runs git in `root`: stdout on success, else the first line of stderr.
async fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = super::git::command("git".as_ref(), root, GIT_TIMEOUT).await;
    cmd.args(args);
    match process::run(cmd, Vec::new(), GIT_TIMEOUT).await {
        Ok(run) if run.status.success() => Ok(run.stdout.text()),
        Ok(run) => {
            let err = run.stderr.text();
            Err(err
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("git failed")
                .trim()
                .to_string())
        }
        Err(e) => Err(format!("git: {e}")),
    }
}

/// The manifest at `rev` (`git show rev:./path`).
async fn base_version(root: &Path, rev: &str, path: &str) -> Result<Base, String> {
    let listed = git(root, &["ls-tree", "--name-only", rev, "--", path]).await?;
    if listed.trim().is_empty() {
        return Ok(Base::Absent);
    }
    let text = git(root, &["show", &format!("{rev}:./{path}")]).await?;
    Ok(Base::Text(text))
}

/// `name spec (section)`, the section left out for the main one.
fn describe(d: &Dependency) -> String {
    let main = matches!(
        d.section.as_str(),
        "dependencies" | "requirements" | "require" | "project.dependencies"
    );
    if main {
        format!("{} {}", d.name, d.spec)
    } else {
        format!("{} {} ({})", d.name, d.spec, d.section)
    }
}

#[async_trait]
impl Oracle for DependencyChecker {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.evaluate_full(ctx).await?.signals)
    }

    async fn evaluate_full(&self, ctx: &HookContext) -> Result<Evaluation, OracleError> {
        let root = project_dir(self.project_dir.as_deref(), ctx);
        let changed = changed_files(ctx);
        let changed_set: Option<BTreeSet<String>> = changed.as_ref().map(|c| {
            c.iter()
                .map(|p| p.trim_start_matches("./").to_string())
                .collect()
        });
        let merge_base = ctx
            .lookup("git.merge_base")
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.trim().is_empty());
        let mut eval = Evaluation::default();
        if changed_set.is_none() {
            eval.notes.push(
                "no files.changed in the context: lockfiles were not compared with their manifests"
                    .to_string(),
            );
        }
        let mut base_ok = merge_base.is_some();
        if let Some(rev) = &merge_base {
            // A revision never starts with `-`: git would read it as an
            // option (`git show --output=FILE` writes FILE).
            let checked = if rev.starts_with('-') {
                Err("it reads as an option".to_string())
            } else {
                git(
                    &root,
                    &[
                        "rev-parse",
                        "--verify",
                        "--quiet",
                        &format!("{rev}^{{commit}}"),
                    ],
                )
                .await
            };
            if let Err(e) = checked {
                eval.notes.push(format!(
                    "git.merge_base `{rev}` is not a commit of the repository in {} ({e}): new dependencies not listed",
                    root.display()
                ));
                base_ok = false;
            }
        } else {
            eval.notes
                .push("no git.merge_base in the context: new dependencies not listed".to_string());
        }

        let mut added: Vec<(String, ManifestKind, Vec<Dependency>)> = Vec::new();
        for found in self.manifests(&root, changed.as_deref()) {
            let path = &found.path;
            let kind = found.entry.kind;
            let text = read_manifest(&root, path)?;
            let manifest = match parse_manifest(kind, &text) {
                Ok(m) => m,
                Err(e) => {
                    eval.signals.push(
                        Signal::block(format!("{path}:{}: {}", e.line, e.message))
                            .with_type(PARSE_ERROR_TYPE)
                            .with_resolution_path([
                                format!(
                                    "fix {path} at line {}{}: {}",
                                    e.line,
                                    e.column
                                        .map(|c| format!(", column {c}"))
                                        .unwrap_or_default(),
                                    e.message
                                ),
                                format!(
                                    "check that the {} tooling reads {path} again",
                                    tool_name(kind)
                                ),
                            ])
                            .with_files([path.clone()]),
                    );
                    continue;
                }
            };
            let is_changed = changed_set.as_ref().is_none_or(|c| c.contains(path));

            // The version at the merge base, for changed manifests.
            let mut base: Option<Manifest> = None;
            if base_ok
                && is_changed
                && let Some(rev) = &merge_base
            {
                match base_version(&root, rev, path).await {
                        Ok(Base::Absent) => base = Some(Manifest::default()),
                        Ok(Base::Text(t)) => match parse_manifest(kind, &t) {
                            Ok(m) => base = Some(m),
                            Err(e) => eval.notes.push(format!(
                                "{path} at the merge base does not parse ({e}): new dependencies not listed for it"
                            )),
                        },
                        Err(e) => eval
                            .notes
                            .push(format!("cannot read {path} at the merge base: {e}")),
                    }
            }

            // The lockfile.
            if let (Some(changed), Some(lock)) = (&changed_set, self.lockfile(&root, &found))
                && changed.contains(path)
                && !changed.contains(&lock)
            {
                let same_inputs = base.as_ref().is_some_and(|b| {
                    !b.lock_inputs.is_empty() && b.lock_inputs == manifest.lock_inputs
                });
                if same_inputs {
                    eval.notes.push(format!(
                        "{path} changed but nothing its lockfile {lock} records did"
                    ));
                } else {
                    let lock_name = lock.rsplit('/').next().unwrap_or(&lock);
                    let manifest_name = path.rsplit('/').next().unwrap_or(path);
                    let advice = lock_advice(&lock);
                    let dir_hint = match lock.rsplit_once('/') {
                        Some((d, _)) => format!(" in {d}"),
                        None => String::new(),
                    };
                    eval.signals.push(
                        Signal::block(format!(
                            "{manifest_name} changed but {lock_name} did not: {advice}"
                        ))
                        .with_type(LOCKFILE_TYPE)
                        .with_resolution_path([
                            format!("{advice}{dir_hint} to bring {lock} in step with {path}"),
                            format!("include the updated {lock} in the change"),
                        ])
                        .with_files([path.clone(), lock.clone()]),
                    );
                }
            }

            // New dependencies.
            if let Some(base) = &base {
                let before: BTreeSet<(String, String)> =
                    base.dependencies.iter().map(|d| d.key(kind)).collect();
                let new: Vec<Dependency> = manifest
                    .dependencies
                    .iter()
                    .filter(|d| !before.contains(&d.key(kind)))
                    .cloned()
                    .collect();
                if !new.is_empty() {
                    added.push((path.clone(), kind, new));
                }
            }
        }

        if !added.is_empty() {
            let count: usize = added.iter().map(|(_, _, d)| d.len()).sum();
            let mut info = format!(
                "{count} new dependenc{} since the merge base:",
                if count == 1 { "y" } else { "ies" }
            );
            let mut kinds = BTreeSet::new();
            for (path, kind, deps) in &added {
                kinds.insert(*kind);
                info.push_str(&format!("\n{path}:"));
                for d in deps {
                    info.push_str(&format!("\n  {} (line {})", describe(d), d.line));
                }
            }
            let mut follow_ups = vec![
                "for each new dependency: is it needed, maintained, and under a compatible license?"
                    .to_string(),
            ];
            let audits: Vec<String> = kinds
                .iter()
                .map(|k| format!("`{}`", k.audit_command()))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            follow_ups.push(format!(
                "check for known vulnerabilities: {}",
                audits.join(", ")
            ));
            eval.signals.push(
                Signal::aid(info)
                    .with_type(NEW_DEPENDENCIES_TYPE)
                    .with_resolution_path(follow_ups)
                    .with_files(added.iter().map(|(p, _, _)| p.clone())),
            );
        }
        Ok(eval)
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Block)
    }
}

fn tool_name(kind: ManifestKind) -> &'static str {
    match kind {
        ManifestKind::Cargo => "cargo",
        ManifestKind::Npm => "npm",
        ManifestKind::Pyproject | ManifestKind::Requirements => "pip",
        ManifestKind::GoMod => "go",
    }
}
