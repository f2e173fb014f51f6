//! Source files and positions: where every value of the merged config came
//! from, and the error type that points there.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The policy compiled into ahp: the `builtin` layer, below every file.
pub const DEFAULT_POLICY: &str = include_str!("default-hooks.yaml");
/// Shown as the path of the builtin layer.
pub const DEFAULT_POLICY_NAME: &str = "<builtin>/default-hooks.yaml";

ahp_engine::name_enum! {
    /// A configuration layer, in the order they apply.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Layer {
        /// The policy compiled into ahp: always the bottom layer, unless a
        /// layer says `settings.builtin: false`.
        Builtin => "builtin",
        /// The organisation's policy (`/etc/ahp/hooks.yaml`, or
        /// `AHP_MANAGED_CONFIG`): later layers may add to it and raise its
        /// intensities, never switch off, change or weaken what it sets.
        Managed => "managed",
        /// `~/.ahp/hooks.yaml`.
        User => "user",
        /// `<project>/.ahp/hooks.yaml` (committed).
        Project => "project",
        /// `<project>/.ahp/hooks.local.yaml` (gitignored).
        Local => "local",
    }
}

/// One loaded file.
#[derive(Debug)]
pub struct SourceFile {
    /// Its layer.
    pub layer: Layer,
    /// Its path (`<builtin>/default-hooks.yaml` for the builtin layer).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

impl SourceFile {
    /// The builtin layer: ahp's default policy, compiled in.
    pub fn builtin() -> Arc<SourceFile> {
        Arc::new(SourceFile {
            layer: Layer::Builtin,
            path: PathBuf::from(DEFAULT_POLICY_NAME),
            text: DEFAULT_POLICY.to_string(),
        })
    }

    /// The text of 1-based line `line`, if any.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        self.text.lines().nth(line.checked_sub(1)?)
    }
}

/// A position in a source file (1-based line and column).
#[derive(Debug, Clone)]
pub struct Origin {
    /// The file.
    pub file: Arc<SourceFile>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Origin {
    /// The layer the value came from.
    pub fn layer(&self) -> Layer {
        self.file.layer
    }

    /// `path:line:column`.
    pub fn location(&self) -> String {
        format!(
            "{}:{}:{}",
            path_line(&self.file.path),
            self.line,
            self.column
        )
    }
}

/// A path as one line of a report: a repository's folder named with a
/// newline must not start a line of its own in an error or in `ahp explain`.
///
/// ```
/// use std::path::Path;
/// assert_eq!(ahp_config::path_line(Path::new("app\nok: forged")), "app\\nok: forged");
/// ```
pub fn path_line(path: &Path) -> String {
    let mut out = String::new();
    for c in path.display().to_string().chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.location(), self.file.layer)
    }
}

/// A configuration error: what is wrong, where, and how to fix it.
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    /// The file (none when the error is not about a file, e.g. no HOME).
    pub file: Option<PathBuf>,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// The offending key, as a path (`hooks.pre-tool-use[0].oracle`).
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// The source line, for the snippet.
    pub snippet: Option<String>,
}

impl ConfigError {
    /// An error at `origin`.
    pub fn at(origin: &Origin, key: Option<String>, message: impl Into<String>) -> Self {
        ConfigError {
            file: Some(origin.file.path.clone()),
            line: origin.line,
            column: origin.column,
            key,
            message: message.into(),
            help: None,
            snippet: origin.file.line_text(origin.line).map(str::to_string),
        }
    }

    /// An error about a file as a whole.
    pub fn in_file(path: &Path, message: impl Into<String>) -> Self {
        ConfigError {
            file: Some(path.to_path_buf()),
            line: 0,
            column: 0,
            key: None,
            message: message.into(),
            help: None,
            snippet: None,
        }
    }

    /// Adds a hint on how to fix it.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// `file:line:column`, as far as known.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), 0) => path_line(f),
            (Some(f), l) => format!("{}:{}:{}", path_line(f), l, self.column),
            (None, _) => String::from("<no file>"),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => writeln!(f, "{}: {k}: {}", self.location(), self.message)?,
            None => writeln!(f, "{}: {}", self.location(), self.message)?,
        }
        if let Some(src) = &self.snippet {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            // Control characters would garble the terminal; show them
            // escaped, and everything else (quotes, backslashes) as written.
            let shown: String = src.chars().map(shown_char).collect();
            writeln!(f, "{pad} |")?;
            writeln!(f, "{num} | {shown}")?;
            let caret_at = src
                .chars()
                .take(self.column.saturating_sub(1))
                .map(|c| shown_char(c).chars().count())
                .sum::<usize>();
            writeln!(f, "{pad} | {}^", " ".repeat(caret_at))?;
        }
        if let Some(h) = &self.help {
            writeln!(f, "  help: {h}")?;
        }
        Ok(())
    }
}

/// A source character as a snippet shows it: control characters escaped
/// (`\u{1b}`), a tab as one space so the caret lines up, the rest as written
/// (quotes and backslashes are the user's own text, not to be escaped).
fn shown_char(c: char) -> String {
    match c {
        '\t' => " ".to_string(),
        c if c.is_control() => c.escape_debug().collect(),
        c => c.to_string(),
    }
}

/// Several errors at once (a config is checked whole, so one run shows
/// every problem).
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        if self.0.len() > 1 {
            writeln!(f, "\n{} errors", self.0.len())?;
        }
        Ok(())
    }
}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_on(line: &str, column: usize) -> String {
        ConfigError {
            file: Some(PathBuf::from("hooks.yaml")),
            line: 7,
            column,
            key: Some("hooks.x".into()),
            message: "bad".into(),
            help: None,
            snippet: Some(line.into()),
        }
        .to_string()
    }

    #[test]
    fn snippets_show_quotes_as_written_and_escape_control_characters() {
        let shown = error_on(r#"  - condition: "a ~ 'b\d'""#, 17);
        assert!(
            shown.contains(r#"7 |   - condition: "a ~ 'b\d'""#),
            "{shown}"
        );
        assert!(
            shown.contains(&format!(" |{}^\n", " ".repeat(17))),
            "{shown}"
        );

        let shown = error_on("\tkey: \u{1b}[31m", 7);
        assert!(shown.contains(r"7 |  key: \u{1b}[31m"), "{shown}");
        // The caret lands under the escape: the tab counts as one column.
        assert!(
            shown.contains(&format!(" |{}^\n", " ".repeat(7))),
            "{shown}"
        );
    }
}

/// A load-time warning (the config is usable, but something is off).
#[derive(Debug, Clone)]
pub struct ConfigWarning {
    /// Where (`file:line:column`).
    pub location: String,
    /// What.
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}
