//! The `CompletionVerifier` oracle: before an issue is closed, a change
//! that touches source files must also touch tests (and, when asked,
//! docs) — SPEC §5. It **blocks** naming what is missing, with a
//! resolution path that says where to add it and for which files.
//!
//! Each changed file is classified by globs, first match wins: a **test**
//! (`tests`), else a **doc** (`docs`), else **source** (`source`), else
//! nothing (config files, data, …). Deleted files do not count (removing
//! code needs no new test; deleting a test is no test), and neither does
//! the issue file itself (`issue.path`). A change without source files is
//! accepted.
//!
//! The changed files come from the context's `files` (with
//! `files.details` for statuses); when the context has none, they are
//! computed with [`crate::workflow::git`] in the project.
//!
//! ```yaml
//! hooks:
//!   pre-issue-close:
//!     - oracle: CompletionVerifier
//!       config:
//!         require_tests: true     # default true
//!         require_docs: false     # default false
//!         source: ["src/**", "lib/**", "**/*.rs"]   # replaces the default list
//!         tests: ["tests/**", "**/*_test.*"]
//!         docs: ["docs/**", "**/*.md"]
//! ```
//!
//! Globs follow gitignore-like rules: `*` stays within
//! a directory, `**` spans directories, and a glob without `/` matches a
//! file name at any depth. The defaults are [`DEFAULT_SOURCE`],
//! [`DEFAULT_TESTS`] and [`DEFAULT_DOCS`].
//!
//! ```
//! use ahp_oracles::workflow::completion::{CompletionVerifier, Kind};
//! use ahp_engine::OracleConfig;
//! let v = CompletionVerifier::from_config(OracleConfig::empty()).unwrap();
//! assert_eq!(v.classify("src/parser.rs"), Some(Kind::Source));
//! assert_eq!(v.classify("tests/parser.rs"), Some(Kind::Test));
//! assert_eq!(v.classify("pkg/lexer_test.go"), Some(Kind::Test));
//! assert_eq!(v.classify("docs/guide.md"), Some(Kind::Doc));
//! assert_eq!(v.classify("Cargo.toml"), None);
//! ```

use crate::pathglob::Globs;
use crate::workflow::git::{ChangedFile, FileStatus, project_dir_for, resolve_changes};
use ahp_engine::oracle::Strings;
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Signal,
    async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// CompletionVerifier's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompletionVerifierConfig {
    /// A change to source files needs a change to tests (default true).
    pub require_tests: Option<bool>,
    /// …and to docs (default false).
    pub require_docs: Option<bool>,
    /// Globs of source files.
    pub source: Option<Strings>,
    /// Globs of test files.
    pub tests: Option<Strings>,
    /// Globs of documentation.
    pub docs: Option<Strings>,
}

/// How many file names a message lists at most.
const MAX_NAMED: usize = 5;

/// The default `source` globs.
pub const DEFAULT_SOURCE: &[&str] = &[
    "src/**",
    "lib/**",
    "**/*.rs",
    "**/*.py",
    "**/*.ts",
    "**/*.tsx",
    "**/*.js",
    "**/*.jsx",
    "**/*.mjs",
    "**/*.cjs",
    "**/*.go",
    "**/*.java",
    "**/*.kt",
    "**/*.scala",
    "**/*.rb",
    "**/*.php",
    "**/*.cs",
    "**/*.swift",
    "**/*.c",
    "**/*.h",
    "**/*.cc",
    "**/*.cpp",
    "**/*.hpp",
];

/// The default `tests` globs (checked before `source`).
pub const DEFAULT_TESTS: &[&str] = &[
    "tests/**",
    "test/**",
    "spec/**",
    "**/tests/**",
    "**/__tests__/**",
    "**/*_test.*",
    "**/test_*.*",
    "**/*.test.*",
    "**/*_spec.*",
    "**/*.spec.*",
];

/// The default `docs` globs (checked before `source`).
pub const DEFAULT_DOCS: &[&str] = &["docs/**", "doc/**", "**/*.md", "**/*.rst", "**/*.adoc"];

/// The signal type when tests are missing.
pub const MISSING_TESTS: &str = "missing-tests";
/// The signal type when docs are missing.
pub const MISSING_DOCS: &str = "missing-docs";
/// The signal type when both are missing.
pub const MISSING_TESTS_AND_DOCS: &str = "missing-tests-and-docs";

/// What a changed file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Matches `tests`.
    Test,
    /// Matches `docs` (and not `tests`).
    Doc,
    /// Matches `source` (and neither of the others).
    Source,
}

/// Blocks closing an issue whose change lacks tests or docs. See the
/// [module documentation](self).
#[derive(Debug, Clone)]
pub struct CompletionVerifier {
    require_tests: bool,
    require_docs: bool,
    source: Globs,
    tests: Globs,
    docs: Globs,
    project_dir: Option<PathBuf>,
}

impl CompletionVerifier {
    /// Builds the verifier from its `config:` map.
    ///
    /// ```
    /// use ahp_oracles::workflow::completion::CompletionVerifier;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let err = CompletionVerifier::from_config(OracleConfig::new(&json!({"tests": ["ok/**", "[bad"]}), None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("tests.1"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: CompletionVerifierConfig = cfg.parse()?;
        let require_tests = c.require_tests.unwrap_or(true);
        let require_docs = c.require_docs.unwrap_or(false);
        if !require_tests && !require_docs {
            return Err(OracleConfigError::whole(
                "require_tests and require_docs are both false, so CompletionVerifier would never fire; set one of them to true or remove the entry",
            ));
        }
        let globs = |given: Option<Strings>, key: &str, default: &[&str]| match given {
            Some(g) => Globs::new(&g.0, key),
            None => Globs::new(default, key),
        };
        let (source, tests, docs) = (c.source, c.tests, c.docs);
        Ok(CompletionVerifier {
            require_tests,
            require_docs,
            source: globs(source, "source", DEFAULT_SOURCE)?,
            tests: globs(tests, "tests", DEFAULT_TESTS)?,
            docs: globs(docs, "docs", DEFAULT_DOCS)?,
            project_dir: cfg.project_dir(),
        })
    }

    /// What a path is: test, doc, source, or nothing.
    pub fn classify(&self, path: &str) -> Option<Kind> {
        if self.tests.is_match(path) {
            Some(Kind::Test)
        } else if self.docs.is_match(path) {
            Some(Kind::Doc)
        } else if self.source.is_match(path) {
            Some(Kind::Source)
        } else {
            None
        }
    }

    /// The signal for these changed files (none when complete).
    /// `issue_path` (relative to the project) is left out.
    ///
    /// ```
    /// use ahp_oracles::workflow::completion::CompletionVerifier;
    /// use ahp_oracles::workflow::git::{ChangedFile, FileStatus};
    /// use ahp_engine::OracleConfig;
    /// let v = CompletionVerifier::from_config(OracleConfig::empty()).unwrap();
    /// let src = ChangedFile::new("src/parser.rs", FileStatus::Modified);
    /// let s = v.check(&[src.clone()], None).unwrap();
    /// assert_eq!(s.payload.summary(), "src/parser.rs changed without tests");
    /// assert_eq!(s.payload.steps()[0], "add or update tests under tests/ for src/parser.rs");
    /// let test = ChangedFile::new("tests/parser.rs", FileStatus::Added);
    /// assert!(v.check(&[src, test], None).is_none());
    /// ```
    pub fn check(&self, files: &[ChangedFile], issue_path: Option<&str>) -> Option<Signal> {
        let mut source = Vec::new();
        let (mut has_tests, mut has_docs) = (false, false);
        for f in files {
            if f.status == FileStatus::Deleted || Some(f.path.as_str()) == issue_path {
                continue;
            }
            match self.classify(&f.path) {
                Some(Kind::Test) => has_tests = true,
                Some(Kind::Doc) => has_docs = true,
                Some(Kind::Source) => source.push(f.path.clone()),
                None => {}
            }
        }
        if source.is_empty() {
            return None;
        }
        let missing_tests = self.require_tests && !has_tests;
        let missing_docs = self.require_docs && !has_docs;
        let (what, signal_type) = match (missing_tests, missing_docs) {
            (true, true) => ("tests or docs", MISSING_TESTS_AND_DOCS),
            (true, false) => ("tests", MISSING_TESTS),
            (false, true) => ("docs", MISSING_DOCS),
            (false, false) => return None,
        };
        let named = crate::scripts::command::name_some(&source, MAX_NAMED);
        let subject = if source.len() == 1 {
            format!("{named} changed")
        } else {
            format!("{} source files changed ({named})", source.len())
        };
        let mut steps = Vec::new();
        if missing_tests {
            steps.push(format!(
                "add or update tests {} for {named}",
                place(&self.tests)
            ));
        }
        if missing_docs {
            steps.push(format!(
                "add or update docs {} for {named}",
                place(&self.docs)
            ));
        }
        if missing_tests {
            steps.push(format!(
                "files that count as tests match: {}",
                self.tests.patterns().join(", ")
            ));
        }
        if missing_docs {
            steps.push(format!(
                "files that count as docs match: {}",
                self.docs.patterns().join(", ")
            ));
        }
        Some(
            Signal::block(format!("{subject} without {what}"))
                .with_type(signal_type)
                .with_resolution_path(steps)
                .with_files(source),
        )
    }
}

#[async_trait]
impl Oracle for CompletionVerifier {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        let dir = project_dir_for(self.project_dir.as_deref(), ctx);
        let change = resolve_changes(ctx, &dir)
            .await
            .map_err(|e| OracleError::new(format!("cannot list the changed files: {e}")))?;
        let issue_path = ctx
            .lookup("issue.path")
            .and_then(|v| v.as_str().map(|p| relative_to(p, &dir)));
        Ok(self
            .check(&change.files, issue_path.as_deref())
            .into_iter()
            .collect())
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Block)
    }
}

/// `path` relative to `dir` when it is inside it, `/`-separated.
fn relative_to(path: &str, dir: &Path) -> String {
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        let canonical = || {
            let base = dir.canonicalize().ok()?;
            let full = p.canonicalize().ok()?;
            full.strip_prefix(base).ok().map(Path::to_path_buf)
        };
        match p.strip_prefix(dir) {
            Ok(r) => r.to_path_buf(),
            Err(_) => canonical().unwrap_or_else(|| p.to_path_buf()),
        }
    } else {
        p.to_path_buf()
    };
    rel.to_string_lossy()
        .replace('\\', "/")
        .trim_start_matches("./")
        .to_string()
}

/// Where files of a glob list go: `under tests/` for a first glob like
/// `tests/**` or `**/tests/**`, else `matching `<first glob>``.
fn place(globs: &Globs) -> String {
    let Some(first) = globs.patterns().first() else {
        return String::new();
    };
    let trimmed = first.trim_start_matches("./").trim_start_matches("**/");
    match trimmed.strip_suffix("/**") {
        Some(dir) if !dir.contains(['*', '?', '[', '{']) => format!("under {dir}/"),
        _ => format!("matching `{first}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_read_naturally() {
        let g = Globs::new(&["**/tests/**"], "t").unwrap();
        assert_eq!(place(&g), "under tests/");
        let g = Globs::new(&["**/*_test.*"], "t").unwrap();
        assert_eq!(place(&g), "matching `**/*_test.*`");
    }

    #[test]
    fn issue_paths_become_relative() {
        let dir = tempfile::tempdir().unwrap();
        let abs = dir.path().join("Issues/FEAT-1.md");
        assert_eq!(
            relative_to(abs.to_str().unwrap(), dir.path()),
            "Issues/FEAT-1.md"
        );
        assert_eq!(relative_to("./Issues/x.md", dir.path()), "Issues/x.md");
    }
}
