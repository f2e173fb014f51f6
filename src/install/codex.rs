//! Codex's own gates in front of ahp's hooks, read from its user config
//! (`$CODEX_HOME/config.toml`, default `~/.codex/config.toml`).
//!
//! Codex skips, without a word, a hook it has not trusted: it keeps one
//! `[hooks.state."<hooks file>:<event>:<group>:<handler>"]` table per hook
//! definition, whose `trusted_hash` is written when the user trusts it in
//! `/hooks` (and `enabled = false` when they switch it off there). A
//! project's `.codex/hooks.json` is not even read until the project is
//! trusted: `[projects."<dir>"] trust_level = "trusted"`. `ahp doctor` and
//! `ahp install codex` read both, so neither says "all good" while Codex
//! would never run ahp.
//!
//! The hash itself is not recomputed: it is Codex's digest of its own
//! normalized form of the definition, which changes between Codex releases,
//! and a wrong guess would report trusted hooks as changed.

use super::json;
use anyhow::Result;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What was found: problems to fix (each with its step) and what is fine.
#[derive(Debug, Default)]
pub(crate) struct CodexTrust {
    /// Each one keeps ahp's hooks from running; the text says the fix.
    pub problems: Vec<String>,
    /// Checks that passed.
    pub ok: Vec<String>,
}

/// The largest Codex config read: far beyond any real one.
const MAX_CONFIG: u64 = 16 << 20;

/// The text of a small regular file. Anything else is refused before it is
/// opened: opening a FIFO waits for a writer, and doctor must never hang.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_CONFIG {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_CONFIG} bytes"),
        ));
    }
    std::fs::read_to_string(path)
}

/// Codex's home: `CODEX_HOME` when set, else `~/.codex`.
pub(crate) fn codex_home(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME") {
        Some(h) if !h.is_empty() => PathBuf::from(h),
        _ => home.join(".codex"),
    }
}

/// Codex's key for an event in `hooks.state`: its snake_case name
/// (`PreToolUse` → `pre_tool_use`).
fn event_label(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// True for a command that runs `… hook codex`, whatever the executable.
fn runs_ahp(command: &str) -> bool {
    let w: Vec<&str> = command.split_whitespace().collect();
    w.len() >= 3 && w[1] == "hook" && w[2] == "codex"
}

/// `path` as given, then canonical when that differs: Codex names a file
/// by the path it found it at, which may be either.
fn path_forms(path: &Path) -> Vec<String> {
    let mut out = vec![path.display().to_string()];
    if let Ok(c) = std::fs::canonicalize(path) {
        let c = c.display().to_string();
        if !out.contains(&c) {
            out.insert(0, c);
        }
    }
    out
}

/// The main checkout of a linked git worktree (whose `.git` is a file
/// naming `<main>/.git/worktrees/<name>`): Codex also looks its trust up
/// there.
fn main_checkout(dir: &Path) -> Option<PathBuf> {
    let text = read_regular(&dir.join(".git")).ok()?;
    let gitdir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    let gitdir = if gitdir.is_absolute() {
        gitdir
    } else {
        dir.join(gitdir)
    };
    let common = read_regular(&gitdir.join("commondir")).ok()?;
    let common = gitdir.join(common.trim());
    std::fs::canonicalize(common)
        .ok()?
        .parent()
        .map(Path::to_path_buf)
}

/// The lines to add to Codex's config to trust `dir`, quoted as TOML needs.
pub(crate) fn trust_lines(dir: &str) -> String {
    let mut project = toml_edit::Table::new();
    project.insert("trust_level", toml_edit::value("trusted"));
    let mut projects = toml_edit::Table::new();
    projects.set_implicit(true);
    projects.insert(dir, toml_edit::Item::Table(project));
    let mut doc = toml_edit::DocumentMut::new();
    doc.insert("projects", toml_edit::Item::Table(projects));
    doc.to_string().trim_end().to_string()
}

/// Checks Codex's trust of the ahp hooks in `hooks_file` (whose text is
/// `hooks_text`). `project`: the project root when the file is the
/// project's `.codex/hooks.json`.
pub(crate) fn check(
    codex_home: &Path,
    hooks_file: &Path,
    hooks_text: &str,
    project: Option<&Path>,
) -> CodexTrust {
    let mut r = CodexTrust::default();
    let config_path = codex_home.join("config.toml");
    let config = match read_regular(&config_path) {
        Ok(t) => match t.parse::<toml_edit::DocumentMut>() {
            Ok(d) => d,
            Err(e) => {
                let (l, c) = e.span().map_or((1, 1), |s| json::line_col(&t, s.start));
                r.problems.push(format!(
                    "{}:{l}:{c}: invalid TOML: {}; Codex cannot load its config, and ahp cannot read which hooks Codex trusts",
                    ahp_config::path_line(&config_path),
                    e.message().trim()
                ));
                return r;
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml_edit::DocumentMut::new(),
        Err(e) => {
            r.problems.push(format!(
                "cannot read {}: {e}; ahp cannot tell whether Codex trusts its hooks",
                ahp_config::path_line(&config_path)
            ));
            return r;
        }
    };
    let shown = ahp_config::path_line(&config_path);
    for flag in ["hooks", "codex_hooks"] {
        let off = config
            .get("features")
            .and_then(|f| f.get(flag))
            .and_then(|v| v.as_bool())
            == Some(false);
        if off {
            r.problems.push(format!(
                "{shown} switches Codex's hooks off (`[features] {flag} = false`), so no hook runs: set `{flag} = true` or remove the line"
            ));
        }
    }
    if let Some(root) = project {
        check_project(&mut r, &config, &config_path, root, hooks_file);
    }
    check_hooks(
        &mut r,
        &config,
        &config_path,
        hooks_file,
        hooks_text,
        project,
    );
    r
}

/// `[projects."<dir>"] trust_level`, looked up as Codex does: the directory
/// holding `.codex/` (canonical, then as given), then the main checkout of
/// a linked worktree. The first entry found decides.
fn check_project(
    r: &mut CodexTrust,
    config: &toml_edit::DocumentMut,
    config_path: &Path,
    root: &Path,
    hooks_file: &Path,
) {
    let projects = config.get("projects").and_then(|p| p.as_table_like());
    let mut keys = path_forms(root);
    if let Some(main) = main_checkout(root) {
        keys.push(main.display().to_string());
    }
    let found = keys.iter().find_map(|k| {
        let level = projects?
            .get(k)?
            .as_table_like()?
            .get("trust_level")?
            .as_str()?
            .to_string();
        Some((k.clone(), level))
    });
    let shown = ahp_config::path_line(config_path);
    match found {
        Some((key, level)) if level == "trusted" => r.ok.push(format!(
            "Codex trusts the project {key}, so it reads {}",
            ahp_config::path_line(hooks_file)
        )),
        Some((key, level)) => r.problems.push(format!(
            "Codex reads {} only in a trusted project, and {shown} marks {key} as `trust_level = \"{level}\"`: set it to \"trusted\":\n{}",
            ahp_config::path_line(hooks_file),
            trust_lines(&key)
        )),
        None => r.problems.push(format!(
            "Codex reads {} only in a trusted project, and {} is not trusted in {shown}: trust it when Codex asks at startup, or add to {shown}:\n{}",
            ahp_config::path_line(hooks_file),
            keys[0],
            trust_lines(&keys[0])
        )),
    }
}

/// Each ahp handler's `hooks.state` entry: trusted, missing, or switched off.
fn check_hooks(
    r: &mut CodexTrust,
    config: &toml_edit::DocumentMut,
    config_path: &Path,
    hooks_file: &Path,
    hooks_text: &str,
    project: Option<&Path>,
) {
    // Codex reads hooks.json as strict JSON: a comment or a trailing comma
    // that ahp's own reader accepts makes it skip the whole file.
    let root: Value = match serde_json::from_str(hooks_text) {
        Ok(v) => v,
        Err(e) => {
            r.problems.push(format!(
                "{}:{}:{}: Codex reads this file as strict JSON and skips all of it: {e}",
                ahp_config::path_line(hooks_file),
                e.line(),
                e.column()
            ));
            return;
        }
    };
    let states = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like());
    let files = path_forms(hooks_file);
    let (mut untrusted, mut disabled, mut trusted) = (Vec::new(), Vec::new(), 0usize);
    let events = root.get("hooks").and_then(Value::as_object);
    for (event, groups) in events.into_iter().flatten() {
        let Some(groups) = groups.as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let command = handler.get("command").and_then(Value::as_str);
                if !command.is_some_and(runs_ahp) {
                    continue;
                }
                let label = event_label(event);
                let state = files.iter().find_map(|f| {
                    states?
                        .get(&format!("{f}:{label}:{g}:{h}"))?
                        .as_table_like()
                });
                let enabled = state.and_then(|s| s.get("enabled")?.as_bool());
                let hash = state.and_then(|s| s.get("trusted_hash")?.as_str());
                if enabled == Some(false) {
                    disabled.push(event.clone());
                } else if hash.is_some_and(|h| !h.is_empty()) {
                    trusted += 1;
                } else {
                    untrusted.push(event.clone());
                }
            }
        }
    }
    let shown = ahp_config::path_line(config_path);
    let file = ahp_config::path_line(hooks_file);
    if !disabled.is_empty() {
        r.problems.push(format!(
            "Codex has switched off ahp's hooks on {} in {file} (`enabled = false` under [hooks.state] in {shown}): switch them on again in Codex's /hooks",
            disabled.join(", ")
        ));
    }
    if !untrusted.is_empty() {
        let place = match project {
            Some(p) => format!(" in {}", ahp_config::path_line(p)),
            None => String::new(),
        };
        r.problems.push(format!(
            "Codex has not trusted ahp's hooks on {} in {file}, and skips an untrusted hook without a word: start `codex`{place}, open /hooks, review the hooks that run `ahp hook codex` and trust them",
            untrusted.join(", ")
        ));
    }
    if trusted > 0 && disabled.is_empty() && untrusted.is_empty() {
        r.ok.push(format!(
            "Codex trusts ahp's {trusted} hooks in {file} (a changed definition needs trusting again in /hooks)"
        ));
    }
}

/// Runs [`check`] for an installed file, or says why it cannot.
pub(crate) fn check_file(
    home: &Path,
    hooks_file: &Path,
    project: Option<&Path>,
) -> Result<CodexTrust> {
    let text = read_regular(hooks_file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", ahp_config::path_line(hooks_file)))?;
    Ok(check(&codex_home(home), hooks_file, &text, project))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_labels_are_codex_state_keys() {
        assert_eq!(event_label("PreToolUse"), "pre_tool_use");
        assert_eq!(event_label("PermissionRequest"), "permission_request");
        assert_eq!(event_label("Stop"), "stop");
    }

    #[test]
    fn trust_lines_quote_the_path_as_toml_needs() {
        assert_eq!(
            trust_lines("/home/dev/app"),
            "[projects.\"/home/dev/app\"]\ntrust_level = \"trusted\""
        );
        for dir in [
            "/a/b.c",
            "/home/dev/my \"app\"",
            "/x/it's",
            "/y/back\\slash",
        ] {
            let parsed: toml_edit::DocumentMut = trust_lines(dir).parse().unwrap();
            assert_eq!(
                parsed["projects"][dir]["trust_level"].as_str(),
                Some("trusted"),
                "{dir}"
            );
        }
    }

    #[test]
    fn quoted_state_keys_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        let text = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify"},{"type":"command","command":"ahp hook codex"}]}]}}"#;
        std::fs::write(&file, text).unwrap();
        let key = format!("{}:stop:0:1", file.display());
        let config = format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:00\"\n");
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let r = check(dir.path(), &file, text, None);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.ok.len(), 1);
        // The user's own hook at index 0 is not ahp's: its state is not read.
        let config = format!(
            "[hooks.state.\"{}:stop:0:0\"]\ntrusted_hash = \"x\"\n",
            ahp_config::path_line(&file)
        );
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let r = check(dir.path(), &file, text, None);
        assert_eq!(r.problems.len(), 1, "{:?}", r.ok);
    }
}
