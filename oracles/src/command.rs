//! Shared pieces of the oracles that run project commands (`TestGate`,
//! `LintChecker`) or ask git about the project (`DependencyChecker`): the
//! `timeout_ms` setting, the project directory, running a command with
//! clear errors, and cutting output down to what a signal can show.

use crate::cfg::join;
use crate::process::{self, ProcessError, Run};
use crate::template::truncate;
use ahp_engine::oracle::kind_of;
use ahp_engine::{HookContext, OracleConfigError, OracleError};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest `timeout_ms` accepted: one day.
pub(crate) const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// How many characters of one output line a signal shows.
pub(crate) const MAX_LINE: usize = 300;

/// Reads a timeout in milliseconds (a positive integer up to a day).
pub(crate) fn opt_timeout(
    map: &Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<Option<Duration>, OracleConfigError> {
    opt_timeout_up_to(map, prefix, key, MAX_TIMEOUT_MS)
}

/// Reads a timeout in milliseconds, from 1 to `max_ms`.
pub(crate) fn opt_timeout_up_to(
    map: &Map<String, Value>,
    prefix: &str,
    key: &str,
    max_ms: u64,
) -> Result<Option<Duration>, OracleConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(ms) if (1..=max_ms).contains(&ms) => Ok(Some(Duration::from_millis(ms))),
            _ => Err(OracleConfigError::at(
                join(prefix, key),
                format!(
                    "{n} is out of range: `{key}` must be a whole number of milliseconds between 1 and {max_ms}"
                ),
            )),
        },
        Some(other) => Err(OracleConfigError::at(
            join(prefix, key),
            format!(
                "expected a whole number of milliseconds (e.g. 60000), found {}",
                kind_of(other)
            ),
        )),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn timeouts_are_checked() {
        let map = serde_json::json!({"a": 5, "b": 0, "c": "5", "d": 1.5});
        let map = map.as_object().unwrap();
        assert_eq!(
            opt_timeout(map, "", "a").unwrap(),
            Some(Duration::from_millis(5))
        );
        assert_eq!(opt_timeout(map, "", "z").unwrap(), None);
        for k in ["b", "c", "d"] {
            let e = opt_timeout(map, "x", k).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(format!("x.{k}").as_str()));
        }
    }
}
