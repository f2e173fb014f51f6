//! Glob lists over project paths (`src/**`, `**/*_test.*`), read from an
//! oracle's config with errors naming the bad item.
//!
//! Semantics (gitignore-like): `*` and `?` do not cross `/`; `**` spans
//! directories (`src/**` matches everything under `src/`, `**/x` matches
//! `x` at any depth); `{a,b}` alternates; `[..]` is a class. A pattern
//! without `/` matches a file name at any depth (`*.md` ≡ `**/*.md`). A
//! leading `./` or `/` is ignored.

use ahp_engine::OracleConfigError;
use ahp_engine::oracle::kind_of;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

/// A compiled list of globs, keeping the patterns for messages.
#[derive(Debug, Clone)]
pub(crate) struct Globs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl Globs {
    /// Compiles `patterns`; `key` names the config key in errors
    /// (`exclude.1`).
    pub(crate) fn new<S: AsRef<str>>(
        patterns: &[S],
        key: &str,
    ) -> Result<Globs, OracleConfigError> {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            let p = p.as_ref().trim();
            let item_key = format!("{key}.{i}");
            if p.is_empty() {
                return Err(OracleConfigError::at(
                    item_key,
                    "an empty glob matches nothing; remove it or write e.g. `src/**`",
                ));
            }
            let norm = normalize(p);
            let glob = GlobBuilder::new(&norm)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    OracleConfigError::at(&item_key, format!("invalid glob `{p}`: {}", e.kind()))
                })?;
            builder.add(glob);
            kept.push(p.to_string());
        }
        let set = builder
            .build()
            .map_err(|e| OracleConfigError::at(key, format!("invalid globs: {e}")))?;
        Ok(Globs {
            patterns: kept,
            set,
        })
    }

    /// Reads a list of globs (or one glob as a string) at `key`; `None`
    /// when absent or null.
    pub(crate) fn from_value(
        value: Option<&Value>,
        key: &str,
    ) -> Result<Option<Globs>, OracleConfigError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Globs::new(&[s.as_str()], key).map(Some),
            Some(Value::Array(items)) => {
                let mut patterns = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => patterns.push(s.clone()),
                        other => {
                            return Err(OracleConfigError::at(
                                format!("{key}.{i}"),
                                format!(
                                    "expected a glob string like `src/**`, found {}",
                                    kind_of(other)
                                ),
                            ));
                        }
                    }
                }
                Globs::new(&patterns, key).map(Some)
            }
            Some(other) => Err(OracleConfigError::at(
                key,
                format!(
                    "expected a list of globs like [\"src/**\"], found {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// Whether `path` (relative, `/`-separated) matches any glob.
    pub(crate) fn is_match(&self, path: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(path.trim_start_matches("./"))
    }

    /// The patterns, as written.
    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// `./x` → `x`, `/x` → `x`, `*.md` → `**/*.md`.
fn normalize(p: &str) -> String {
    let p = p.trim_start_matches("./").trim_start_matches('/');
    if p.contains('/') {
        p.to_string()
    } else {
        format!("**/{p}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_like_matching() {
        let g = Globs::new(&["src/**", "*.md", "**/*_test.*", "docs/*.txt"], "x").unwrap();
        assert!(g.is_match("src/a/b.rs"));
        assert!(g.is_match("README.md"));
        assert!(g.is_match("a/b/c.md"));
        assert!(g.is_match("pkg/foo_test.go"));
        assert!(g.is_match("docs/a.txt"));
        assert!(!g.is_match("docs/sub/a.txt"));
        assert!(!g.is_match("lib/a.rs"));
    }

    #[test]
    fn bad_globs_name_the_item() {
        let err = Globs::new(&["ok/**", "[unclosed"], "exclude").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("exclude.1"));
        assert!(err.message.contains("invalid glob `[unclosed`"), "{err}");
        let err = Globs::from_value(Some(&serde_json::json!([1])), "tests").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("tests.0"));
        let err = Globs::from_value(Some(&serde_json::json!({})), "tests").unwrap_err();
        assert!(err.message.contains("expected a list of globs"), "{err}");
    }

    #[test]
    fn empty_list_matches_nothing() {
        let g = Globs::new::<&str>(&[], "x").unwrap();
        assert!(!g.is_match("a"));
    }
}
