//! Which logs `--log` names: paths and simple globs (`*`, `?`), so that a
//! folder of collected logs is read as one.

use anyhow::{Result, anyhow};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Whether `path` has a wildcard (`*` or `?`) to expand.
fn is_glob(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?'])
}

/// The logs `--log` values name, in order: a plain path as given (it must
/// exist when read), a glob as its matches in name order (it must match
/// something). A log named twice is kept once, at its first place, and a
/// match that is a rotated segment of another match (`signals.jsonl.3.gz`
/// beside `signals.jsonl`) is read with that log, not as a log itself.
pub(crate) fn expand(values: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = HashSet::new();
    for value in values {
        let paths = if is_glob(value) {
            let found = without_segments(glob(value)?);
            if found.is_empty() {
                return Err(anyhow!(
                    "--log {}: no log matches this pattern",
                    crate::ops::output::terminal_safe(&value.to_string_lossy())
                ));
            }
            found
        } else {
            vec![value.clone()]
        };
        for path in paths {
            // A rotated segment is compressed: read as a log it would be
            // all unreadable lines, and "0 records" would be a lie.
            if let Some(log) = segment_of(&path) {
                return Err(anyhow!(
                    "--log {}: this is a rotated segment of the log {}; pass --log {} (its segments are read with it)",
                    crate::ops::output::terminal_safe(&path.to_string_lossy()),
                    crate::ops::output::terminal_safe(&log.to_string_lossy()),
                    crate::ops::output::terminal_safe(&log.to_string_lossy()),
                ));
            }
            // The same file by two names is still one log.
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.insert(key) {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The log whose rotated segment `path` is (`signals.jsonl.3.gz` of
/// `signals.jsonl`), by its name.
fn segment_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let (log, number) = name.strip_suffix(".gz")?.rsplit_once('.')?;
    (!log.is_empty() && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
        .then(|| path.with_file_name(log))
}

/// Leaves out the rotated segments of logs that are matched too.
fn without_segments(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let segments: HashSet<PathBuf> = paths
        .iter()
        .flat_map(|p| ahp_signals_log::segments::rotated(p).unwrap_or_default())
        .map(|s| s.path)
        .collect();
    paths
        .into_iter()
        .filter(|p| !segments.contains(p))
        .collect()
}

/// The existing paths that `pattern` matches, sorted: `*` stands for any
/// run of characters within one name, `?` for one character; neither
/// matches a name's leading `.`, as in a shell.
fn glob(pattern: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = vec![PathBuf::new()];
    for part in pattern.components() {
        let name = match part {
            Component::Normal(name) => name,
            other => {
                for p in &mut found {
                    p.push(other.as_os_str());
                }
                continue;
            }
        };
        let text = name.to_string_lossy();
        if !text.contains(['*', '?']) {
            for p in &mut found {
                p.push(name);
            }
            continue;
        }
        let mut next = Vec::new();
        for dir in &found {
            let listed = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir.as_path()
            };
            let Ok(entries) = std::fs::read_dir(listed) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| wildcard(&text, n))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| dir.join(n)));
        }
        found = next;
    }
    Ok(found.into_iter().filter(|p| p.exists()).collect())
}

/// Whether `name` matches `pattern` (`*`, `?`; a leading `.` only by a
/// leading `.`).
fn wildcard(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Greedy with one backtrack point: the last `*` seen.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Says on stderr which rotated segments a reader of the log (escalation,
/// the stop-loop guard) counted without, and why: a damaged segment leaves
/// its records out, not the reader.
pub(crate) fn warn_counted_without(reader: &str, unreadable: &[ahp_signals_log::Unreadable]) {
    for (path, why) in unreadable {
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&format!(
                "{reader} counts without the log segment {}, which cannot be read: {why}",
                ahp_config::path_line(path)
            ))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_within_a_name() {
        assert!(wildcard("*.jsonl", "signals.jsonl"));
        assert!(wildcard("s?gnals*", "signals.jsonl"));
        assert!(wildcard("*", "a"));
        assert!(wildcard("a*b*c", "aXXbYYc"));
        assert!(!wildcard("a*b*c", "aXXbYY"));
        assert!(!wildcard("*", ".hidden"));
        assert!(wildcard(".*", ".hidden"));
        assert!(!wildcard("?", ""));
        assert!(wildcard("", ""));
    }

    #[test]
    fn a_glob_expands_to_logs_without_their_segments() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["b", "a", "c"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
            std::fs::write(dir.path().join(d).join("signals.jsonl"), "").unwrap();
        }
        std::fs::write(dir.path().join("a/signals.jsonl.1.gz"), "").unwrap();
        std::fs::write(dir.path().join("a/notes.txt"), "").unwrap();
        let got = expand(&[dir.path().join("*/signals.jsonl")]).unwrap();
        let names: Vec<_> = got
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                Path::new("a/signals.jsonl"),
                Path::new("b/signals.jsonl"),
                Path::new("c/signals.jsonl")
            ]
        );
        let got = expand(&[dir.path().join("a/signals*")]).unwrap();
        assert_eq!(got, [dir.path().join("a/signals.jsonl")]);
        // Named twice, read once; a glob that matches nothing is an error.
        let twice = expand(&[
            dir.path().join("b/signals.jsonl"),
            dir.path().join("*/signals.jsonl"),
        ])
        .unwrap();
        assert_eq!(twice.len(), 3);
        assert_eq!(twice[0], dir.path().join("b/signals.jsonl"));
        let err = expand(&[dir.path().join("*/nothing.jsonl")]).unwrap_err();
        assert!(err.to_string().contains("nothing.jsonl"), "{err}");
    }
}
