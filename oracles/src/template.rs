//! `{{ dotted.path }}` placeholders: the one template syntax of every
//! setting that takes one (Rules messages, RetrospectiveGenerator's
//! `output`).

use ahp_engine::HookContext;
use ahp_engine::condition::expr::check_path;
use serde_json::Value;

/// The most characters one placeholder expands to; longer values are cut
/// with `…` so a `{{ tool.input }}` cannot put megabytes into a signal.
pub(crate) const MAX_EXPANSION: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Path(String),
}

/// A message with placeholders, parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

impl Template {
    /// Parses `src`; the error names the 1-based character column.
    pub(crate) fn parse(src: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = src;
        let mut offset = 0; // characters consumed before `rest`
        while let Some(start) = rest.find("{{") {
            let column = offset + rest[..start].chars().count() + 1;
            if start > 0 {
                parts.push(Part::Text(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                return Err(format!(
                    "unclosed `{{{{` at column {column}: write `{{{{ path }}}}`, e.g. `{{{{ issue.id }}}}`"
                ));
            };
            let path = after[..end].trim();
            if path.is_empty() {
                return Err(format!(
                    "empty `{{{{ }}}}` at column {column}: put a path inside, e.g. `{{{{ issue.id }}}}`"
                ));
            }
            check_path(path).map_err(|m| format!("placeholder at column {column}: {m}"))?;
            parts.push(Part::Path(path.to_string()));
            let consumed = &rest[..start + 2 + end + 2];
            offset += consumed.chars().count();
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// The paths of the placeholders, in order.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Path(p) => Some(p.as_str()),
            Part::Text(_) => None,
        })
    }

    /// The text with every placeholder filled from `ctx`: strings as they
    /// are, other values as compact JSON, missing paths as nothing.
    pub(crate) fn render(&self, ctx: &HookContext) -> String {
        self.render_escaped(ctx, |v| v.to_string())
    }

    /// [`Template::render`], each filled-in value passed through `escape`
    /// (e.g. to keep it one path segment).
    pub(crate) fn render_escaped(
        &self,
        ctx: &HookContext,
        escape: impl Fn(&str) -> String,
    ) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Path(p) => {
                    if let Some(v) = ctx.lookup(p) {
                        let text = match &*v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        out.push_str(&escape(&truncate(&text, MAX_EXPANSION)));
                    }
                }
            }
        }
        out
    }
}

/// The first `max` characters of `s`, with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(src: &str, ctx: serde_json::Value) -> String {
        let t = Template::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let ctx: HookContext = serde_json::from_value(ctx).unwrap_or_default();
        t.render(&ctx)
    }

    #[test]
    fn fills_placeholders() {
        let c = json!({"issue": {"id": "FEAT-1", "tags": ["a", "b"]}, "checklist": {"n": 3}});
        assert_eq!(
            render("{{ issue.id }}: {{checklist.n}} open", c.clone()),
            "FEAT-1: 3 open"
        );
        assert_eq!(
            render("tags {{ issue.tags }}", c.clone()),
            r#"tags ["a","b"]"#
        );
        assert_eq!(render("[{{ issue.nothing }}]", c.clone()), "[]");
        assert_eq!(render("no placeholders", c.clone()), "no placeholders");
        assert_eq!(render("é{{ issue.id }}é", c), "éFEAT-1é");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(MAX_EXPANSION + 10);
        let out = render("{{ big }}", json!({ "big": long }));
        assert_eq!(out.chars().count(), MAX_EXPANSION + 1);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn bad_placeholders_are_errors_with_columns() {
        let e = Template::parse("é {{ issue.id").unwrap_err();
        assert!(e.contains("unclosed `{{` at column 3"), "{e}");
        let e = Template::parse("x {{ }} y").unwrap_err();
        assert!(e.contains("empty `{{ }}` at column 3"), "{e}");
        let e = Template::parse("{{ a }} {{ a b }}").unwrap_err();
        assert!(e.contains("column 9"), "{e}");
        assert!(e.contains("contains ` `"), "{e}");
    }
}
