//! Glob lists over project paths (`src/**`, `**/*_test.*`), read from an
//! oracle's config with errors naming the bad item.
//!
//! Semantics (gitignore-like): `*` and `?` do not cross `/`; `**` spans
//! directories (`src/**` matches everything under `src/`, `**/x` matches
//! `x` at any depth); `{a,b}` alternates; `[..]` is a class. A pattern
//! without `/` matches a file name at any depth (`*.md` ≡ `**/*.md`). A
//! leading `./` or `/` is ignored.

use ahp_engine::OracleConfigError;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

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
    }

    #[test]
    fn empty_list_matches_nothing() {
        let g = Globs::new::<&str>(&[], "x").unwrap();
        assert!(!g.is_match("a"));
    }
}
