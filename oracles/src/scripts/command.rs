//! Shared pieces of the oracles that run project commands (`TestGate`,
//! `LintChecker`) or ask git about the project (`DependencyChecker`): the
//! longest `timeout_ms`, the project directory, running a command with
//! clear errors, and cutting output down to what a signal can show.

use crate::scripts::process::{self, ProcessError, Run};
use crate::template::truncate;
use ahp_engine::{HookContext, OracleError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest `timeout_ms` accepted: one day.
pub(crate) const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// How many characters of one output line a signal shows.
pub(crate) const MAX_LINE: usize = 300;

/// The directory commands run in: the project root the oracle was built
/// with, else the context's `work_dir` when it exists, else the current
/// directory.
pub(crate) fn project_dir(configured: Option<&Path>, ctx: &HookContext) -> PathBuf {
    if let Some(p) = configured {
        return p.to_path_buf();
    }
    if let Some(w) = ctx.work_dir.as_deref().filter(|w| !w.is_empty()) {
        let w = Path::new(w);
        if w.is_dir() {
            return w.to_path_buf();
        }
    }
    PathBuf::from(".")
}

/// `files.changed` of the context, when the context has a `files` section.
pub(crate) fn changed_files(ctx: &HookContext) -> Option<Vec<String>> {
    let files = ctx.files.as_ref()?;
    Some(files.changed.clone())
}

/// Runs `line` with `sh -c` in `cwd`. `what` names the command in errors
/// (e.g. "test command", "linter `clippy`"). A timeout, a failure to start
/// and a shell that could not find or execute the program (exit 127 / 126)
/// are errors; any other exit is the caller's to judge.
pub(crate) async fn run_command(
    what: &str,
    line: &str,
    cwd: &Path,
    timeout: Duration,
) -> Result<Run, OracleError> {
    if !cwd.is_dir() {
        return Err(OracleError::new(format!(
            "{what} `{line}`: the project directory {} does not exist",
            cwd.display()
        )));
    }
    match process::run_shell(line, cwd, timeout).await {
        Ok(run) => match run.status.code() {
            Some(code @ (126 | 127)) => {
                let output = combined_output(&run);
                let (head, _) = head_lines(&output, 3);
                let why = if code == 127 {
                    "the command was not found"
                } else {
                    "the command could not be executed"
                };
                Err(OracleError::new(format!(
                    "{what} `{line}` could not start: {why} (exit {code}){}; check that it is installed and on PATH",
                    if head.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", head.join(" / "))
                    }
                )))
            }
            _ => Ok(run),
        },
        Err(ProcessError::Spawn(e)) => Err(OracleError::new(format!(
            "{what} `{line}` could not start: {e}"
        ))),
        Err(ProcessError::Lost(e)) => Err(OracleError::new(format!(
            "{what} `{line}`: lost track of its process: {e}"
        ))),
        Err(ProcessError::TimedOut(t)) => Err(OracleError::new(format!(
            "{what} `{line}` timed out after {} ms; its process group was killed (raise `timeout_ms` if it needs longer)",
            t.as_millis()
        ))),
    }
}

/// How a run ended, for messages: `exit 1`, `killed by signal 9`.
pub(crate) fn exit_text(run: &Run) -> String {
    if let Some(code) = run.status.code() {
        return format!("exit {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = run.status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    "no exit code".to_string()
}

/// stdout followed by stderr (each only when not blank).
pub(crate) fn combined_output(run: &Run) -> String {
    let out = run.stdout.text();
    let err = run.stderr.text();
    match (out.trim().is_empty(), err.trim().is_empty()) {
        (false, false) => format!("{}\n{}", out.trim_end(), err.trim_end()),
        (false, true) => out,
        (true, false) => err,
        (true, true) => String::new(),
    }
}

/// The first `n` non-blank lines (each cut to [`MAX_LINE`] characters) and
/// how many non-blank lines were left out.
pub(crate) fn head_lines(text: &str, n: usize) -> (Vec<String>, usize) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let shown = lines
        .iter()
        .take(n)
        .map(|l| truncate(l.trim_end(), MAX_LINE))
        .collect();
    (shown, lines.len().saturating_sub(n))
}

/// The last `n` non-blank lines (each cut to [`MAX_LINE`] characters) and
/// how many non-blank lines were left out before them.
pub(crate) fn tail_lines(text: &str, n: usize) -> (Vec<String>, usize) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let skip = lines.len().saturating_sub(n);
    let shown = lines[skip..]
        .iter()
        .map(|l| truncate(l.trim_end(), MAX_LINE))
        .collect();
    (shown, skip)
}

/// `path` relative to `root` when it lies inside it (as given otherwise),
/// with `/` separators.
/// The first `max` names joined by commas, then `and N more`.
pub(crate) fn name_some(names: &[String], max: usize) -> String {
    let mut s = names
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}

pub(crate) fn relative_to(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        let canon_root = root.canonicalize().ok();
        for base in std::iter::once(root.to_path_buf()).chain(canon_root) {
            if let Ok(rest) = p.strip_prefix(&base) {
                return rest.to_string_lossy().replace('\\', "/");
            }
        }
    }
    path.strip_prefix("./").unwrap_or(path).to_string()
}

/// One word of a shell command line, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text as the shell would pass it, as far as it is known.
    pub text: String,
    /// False when the shell would change it first (`$VAR`, `$(…)`,
    /// backquotes, `$'…'`): then `text` is not what the program gets.
    pub literal: bool,
}

/// One simple command of a command line: its words (redirections left
/// out) and the here-document or here-string it reads as stdin, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    pub stdin: Option<Word>,
    /// The insides of its command substitutions (`$(…)`, backquotes),
    /// which the shell runs too.
    pub substitutions: Vec<String>,
}

/// The simple commands of a shell command line, in order, as far as a
/// reading without running anything can tell: quotes (`'…'`, `"…"`,
/// backslashes), the separators `;` `&` `|` `&&` `||` `(` `)` and line
/// breaks, comments, redirections (dropped), here-documents (`<<EOF`,
/// `<<-EOF`, `<<'EOF'`) and here-strings as stdin, and `$(cat <<EOF … EOF)`
/// inside a word, the form agents write commit messages in. Anything else
/// the shell would expand makes its word non-literal; the insides of its
/// command substitutions are kept for the caller to split in turn. Control flow
/// (`if`, `for`, functions) is not understood: its keywords are words.
///
/// ```ignore
/// let cmds = simple_commands("git add . && git commit -m 'feat: x'");
/// assert_eq!(cmds[1].words[3].text, "feat: x");
/// ```
pub(crate) fn simple_commands(script: &str) -> Vec<SimpleCommand> {
    let chars: Vec<char> = script.chars().collect();
    let mut sh = Splitter {
        chars: &chars,
        i: 0,
        done: Vec::new(),
        cur: SimpleCommand::default(),
        pending: Vec::new(),
        // Enough to read every here-document once; hostile input that
        // would rescan the rest of the line for each `$(cat <<X` runs out
        // of it instead of taking quadratic time.
        budget: chars.len().saturating_mul(2).saturating_add(4096),
    };
    sh.run();
    sh.done
}

/// A here-document whose body starts after the current line.
struct PendingHeredoc {
    command: usize,
    delimiter: String,
    quoted: bool,
}

struct Splitter<'a> {
    chars: &'a [char],
    i: usize,
    done: Vec<SimpleCommand>,
    cur: SimpleCommand,
    pending: Vec<PendingHeredoc>,
    /// Characters `$(cat <<X … X)` bodies may still scan.
    budget: usize,
}

impl Splitter<'_> {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.i + off).copied()
    }

    fn end_command(&mut self) {
        let cmd = std::mem::take(&mut self.cur);
        if !cmd.words.is_empty() || cmd.stdin.is_some() {
            self.done.push(cmd);
        }
    }

    /// The index the current command will have once ended.
    fn current_index(&self) -> usize {
        self.done.len()
    }

    fn run(&mut self) {
        while self.i < self.chars.len() {
            let c = self.chars[self.i];
            match c {
                ' ' | '\t' | '\r' => self.i += 1,
                '\n' => {
                    self.i += 1;
                    self.end_command();
                    self.read_heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' => {
                    self.i += 1;
                    self.end_command();
                }
                '#' => {
                    while self.i < self.chars.len() && self.chars[self.i] != '\n' {
                        self.i += 1;
                    }
                }
                '<' | '>' => self.redirection(),
                _ => {
                    let w = self.word();
                    // `2>file`: a file descriptor number glued to a
                    // redirection is no argument.
                    if matches!(self.peek(0), Some('<' | '>'))
                        && !w.text.is_empty()
                        && w.text.chars().all(|c| c.is_ascii_digit())
                    {
                        continue;
                    }
                    self.cur.words.push(w);
                }
            }
        }
        self.end_command();
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn redirection(&mut self) {
        let heredoc = self.peek(0) == Some('<') && self.peek(1) == Some('<');
        if heredoc && self.peek(2) == Some('<') {
            self.i += 3;
            self.skip_blanks();
            let mut w = self.word();
            w.text.push('\n');
            self.cur.stdin = Some(w);
            return;
        }
        if heredoc {
            self.i += 2;
            if self.peek(0) == Some('-') {
                self.i += 1;
            }
            self.skip_blanks();
            let start = self.i;
            let w = self.word();
            let quoted = self.chars[start..self.i]
                .iter()
                .any(|c| matches!(c, '\'' | '"' | '\\'));
            self.pending.push(PendingHeredoc {
                command: self.current_index(),
                delimiter: w.text,
                quoted,
            });
            return;
        }
        // `>`, `>>`, `<`, `>&`, `&>`, `<>`, `>|`: the target is no argument.
        while matches!(self.peek(0), Some('<' | '>' | '&' | '|')) {
            self.i += 1;
        }
        self.skip_blanks();
        if !matches!(self.peek(0), None | Some('\n' | ';' | ')')) {
            let _ = self.word();
        }
    }

    /// Reads the bodies of the here-documents opened on the line just
    /// ended.
    fn read_heredoc_bodies(&mut self) {
        for h in std::mem::take(&mut self.pending) {
            let (body, end) = heredoc_body(self.chars, self.i, &h.delimiter);
            self.i = end;
            let literal = h.quoted || !body.contains(['$', '`']);
            let w = Word {
                text: body,
                literal,
            };
            if let Some(cmd) = self.done.get_mut(h.command) {
                cmd.stdin = Some(w);
            } else if h.command == self.done.len() {
                self.cur.stdin = Some(w);
            }
        }
    }

    /// One word, from the current position to the next unquoted blank or
    /// operator.
    fn word(&mut self) -> Word {
        let mut text = String::new();
        let mut literal = true;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\'' => {
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '\'' {
                            break;
                        }
                        text.push(c);
                    }
                }
                '"' => {
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        match c {
                            '"' => {
                                self.i += 1;
                                break;
                            }
                            '\\' => {
                                match self.peek(1) {
                                    Some(n @ ('"' | '\\' | '$' | '`')) => text.push(n),
                                    Some('\n') => {}
                                    Some(n) => {
                                        text.push('\\');
                                        text.push(n);
                                    }
                                    None => text.push('\\'),
                                }
                                self.i += 2;
                            }
                            '$' | '`' => {
                                if !self.expansion(&mut text) {
                                    literal = false;
                                }
                            }
                            _ => {
                                text.push(c);
                                self.i += 1;
                            }
                        }
                    }
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') | None => {}
                        Some(n) => text.push(n),
                    }
                    self.i += 2;
                }
                '$' | '`' => {
                    if !self.expansion(&mut text) {
                        literal = false;
                    }
                }
                _ => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
        Word { text, literal }
    }

    /// Reads an expansion at `$` or a backquote. `$(cat <<EOF … EOF)` with a
    /// literal body appends the body (as the shell would, without its
    /// trailing line breaks) and is literal; anything else is copied as
    /// written and is not. A lone `$` is a dollar sign.
    fn expansion(&mut self, text: &mut String) -> bool {
        let start = self.i;
        if self.chars[start] == '`' {
            self.i += 1;
            while let Some(c) = self.peek(0) {
                self.i += 1;
                if c == '\\' {
                    self.i += 1;
                } else if c == '`' {
                    break;
                }
            }
            let inner = (start + 1).min(self.chars.len())..self.i.saturating_sub(1).max(start + 1);
            if let Some(inner) = self.chars.get(inner) {
                self.cur.substitutions.push(inner.iter().collect());
            }
        } else {
            match self.peek(1) {
                Some('(') => {
                    if let Some((body, end)) = cat_heredoc(self.chars, start + 2, &mut self.budget)
                    {
                        self.i = end;
                        let literal = body.1;
                        text.push_str(body.0.trim_end_matches('\n'));
                        return literal;
                    }
                    self.i = matching_paren(self.chars, start + 2);
                    let inner = start + 2..self.i.saturating_sub(1).max(start + 2);
                    if let Some(inner) = self.chars.get(inner) {
                        self.cur.substitutions.push(inner.iter().collect());
                    }
                }
                Some('{') => {
                    self.i = start + 2;
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '}' {
                            break;
                        }
                    }
                }
                Some('\'') => {
                    self.i = start + 2;
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '\\' {
                            self.i += 1;
                        } else if c == '\'' {
                            break;
                        }
                    }
                }
                Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                    self.i = start + 2;
                    if c.is_ascii_alphabetic() || c == '_' {
                        while matches!(self.peek(0), Some(c) if c.is_ascii_alphanumeric() || c == '_')
                        {
                            self.i += 1;
                        }
                    }
                }
                _ => {
                    text.push('$');
                    self.i += 1;
                    return true;
                }
            }
        }
        self.i = self.i.min(self.chars.len());
        text.extend(&self.chars[start..self.i]);
        false
    }
}

/// The body of a here-document starting at `from` (the line after its
/// operator) up to the line that is `delimiter` (blanks around it
/// allowed), and the index after that line. An unterminated one runs to
/// the end, as in the shell.
fn heredoc_body(chars: &[char], from: usize, delimiter: &str) -> (String, usize) {
    let mut body = String::new();
    let mut i = from;
    while i < chars.len() {
        let end = chars[i..]
            .iter()
            .position(|c| *c == '\n')
            .map_or(chars.len(), |p| i + p);
        let line: String = chars[i..end].iter().collect();
        i = (end + 1).min(chars.len());
        if line.trim() == delimiter {
            return (body, i);
        }
        body.push_str(&line);
        body.push('\n');
    }
    (body, chars.len())
}

/// `cat <<EOF\n…\nEOF\n)` from `from` (just after `$(`): the body, whether
/// it is literal, and the index after the `)`.
fn cat_heredoc(chars: &[char], from: usize, budget: &mut usize) -> Option<((String, bool), usize)> {
    let mut i = from;
    let blank = |c: &char| *c == ' ' || *c == '\t';
    while chars.get(i).is_some_and(blank) {
        i += 1;
    }
    let rest: String = chars.get(i..i + 3)?.iter().collect();
    if rest != "cat" || !chars.get(i + 3).is_some_and(blank) {
        return None;
    }
    i += 3;
    while chars.get(i).is_some_and(blank) {
        i += 1;
    }
    if chars.get(i) != Some(&'<') || chars.get(i + 1) != Some(&'<') {
        return None;
    }
    i += 2;
    if chars.get(i) == Some(&'-') {
        i += 1;
    }
    while chars.get(i).is_some_and(blank) {
        i += 1;
    }
    let mut delimiter = String::new();
    let mut quoted = false;
    while let Some(&c) = chars.get(i) {
        if c == '\n' || blank(&c) {
            break;
        }
        if c == '\'' || c == '"' || c == '\\' {
            quoted = true;
        } else {
            delimiter.push(c);
        }
        i += 1;
    }
    while chars.get(i).is_some_and(blank) {
        i += 1;
    }
    if delimiter.is_empty() || chars.get(i) != Some(&'\n') || *budget == 0 {
        return None;
    }
    let (body, end) = heredoc_body(chars, i + 1, &delimiter);
    *budget = budget.saturating_sub(end.saturating_sub(i + 1));
    let mut i = end;
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    if chars.get(i) != Some(&')') {
        return None;
    }
    let literal = quoted || !body.contains(['$', '`']);
    Some(((body, literal), i + 1))
}

/// The index after the `)` that closes the `$(` whose inside starts at
/// `from` (quotes respected), or the end.
fn matching_paren(chars: &[char], from: usize) -> usize {
    let mut depth = 1usize;
    let mut i = from;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => i += 1,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => i += 1,
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return i.min(chars.len());
                }
            }
            _ => {}
        }
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Vec<Vec<String>> {
        simple_commands(script)
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn command_lines_split_into_simple_commands() {
        assert_eq!(
            words("git add -A && git commit -m 'feat: x' ; echo \"a b\"|wc"),
            vec![
                vec!["git", "add", "-A"],
                vec!["git", "commit", "-m", "feat: x"],
                vec!["echo", "a b"],
                vec!["wc"],
            ]
        );
        assert_eq!(
            words("cd sub && git commit -m\"fix: \\\"q\\\"\" 2>/dev/null # note"),
            vec![vec!["cd", "sub"], vec!["git", "commit", "-mfix: \"q\""]]
        );
        assert_eq!(words("a\\ b 'it''s'"), vec![vec!["a b", "its"]]);
    }

    #[test]
    fn expansions_are_not_literal_but_cat_heredocs_are() {
        let c = simple_commands("git commit -m \"$MSG\"");
        assert!(!c[0].words[3].literal);
        let c = simple_commands("git commit -m \"costs $ 5\"");
        assert!(c[0].words[3].literal);
        let script = "git commit -m \"$(cat <<'EOF'\nfeat: add x\n\nBody (with parens).\nEOF\n)\" && git push";
        let c = simple_commands(script);
        assert_eq!(c[0].words[3].text, "feat: add x\n\nBody (with parens).");
        assert!(c[0].words[3].literal);
        assert_eq!(words(script)[1], vec!["git", "push"]);
        let c = simple_commands("git commit -m \"$(cat <<EOF\nfix: $X\nEOF\n)\"");
        assert!(!c[0].words[3].literal);
        let c = simple_commands("git commit -m \"$(date)\" -q");
        assert!(!c[0].words[3].literal);
        assert_eq!(c[0].words[4].text, "-q");
    }

    #[test]
    fn heredocs_are_stdin() {
        let c = simple_commands("git commit -F - <<'EOF'\nfeat: x\nEOF\necho done");
        assert_eq!(c[0].stdin.as_ref().unwrap().text, "feat: x\n");
        assert_eq!(c[1].words[0].text, "echo");
        let c = simple_commands("git commit -F - <<< 'fix: y'");
        assert_eq!(c[0].stdin.as_ref().unwrap().text, "fix: y\n");
        // Unterminated constructs end with the text, without a panic.
        for s in [
            "git commit -m \"$(cat <<EOF\nx",
            "'open",
            "\"open",
            "$(",
            "a <<",
            "`x",
            "\\",
        ] {
            let _ = simple_commands(s);
        }
    }

    #[test]
    fn lines_are_cut() {
        let text = "a\n\nb\nc\n  \nd\n";
        assert_eq!(head_lines(text, 2), (vec!["a".into(), "b".into()], 2));
        assert_eq!(tail_lines(text, 2), (vec!["c".into(), "d".into()], 2));
        assert_eq!(tail_lines(text, 10).1, 0);
        let long = "x".repeat(MAX_LINE + 5);
        assert!(head_lines(&long, 1).0[0].ends_with('…'));
    }

    #[test]
    fn relative_paths() {
        let root = Path::new("/home/me/proj");
        assert_eq!(relative_to(root, "/home/me/proj/src/a.rs"), "src/a.rs");
        assert_eq!(relative_to(root, "./src/a.rs"), "src/a.rs");
        assert_eq!(relative_to(root, "/elsewhere/a.rs"), "/elsewhere/a.rs");
    }
}
