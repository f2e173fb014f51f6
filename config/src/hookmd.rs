//! HOOK.md script hooks (the Agent Hooks standard): discovery and
//! frontmatter validation.
//!
//! Hooks live in `$XDG_CONFIG_HOME/agents/hooks/<name>/HOOK.md` (user,
//! default `~/.config/agents/hooks`) and `<project>/.agents/hooks/<name>/HOOK.md`
//! (project); a project hook replaces a user hook of the same name when it
//! runs (trusted, and not switched off); otherwise the user's runs. Only the
//! frontmatter is read here — the body and the script are read when the hook
//! fires — so a large HOOK.md costs nothing at start-up. A project hook's
//! HOOK.md and entry point must resolve inside the project hooks directory,
//! where `ahp trust` hashes them (see `confine_to_hooks_dir`).

use crate::source::{ConfigError, Layer, Origin, SourceFile};
use crate::yaml::{Node, NodeValue};
use ahp_engine::Event;
use ahp_engine::pattern::Pattern;
use ahp_engine::suggest::did_you_mean;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Frontmatter keys of the standard.
pub const FRONTMATTER_KEYS: &[&str] = &[
    "name",
    "description",
    "trigger",
    "matcher",
    "timeout",
    "async",
    "priority",
    "metadata",
];
/// Keys of `matcher:`.
pub const MATCHER_KEYS: &[&str] = &["tool", "pattern"];
/// Entry points, in order of precedence.
pub const ENTRY_POINTS: &[&str] = &["scripts/run", "scripts/run.sh", "scripts/run.py"];
/// Default `timeout` in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The longest `timeout` a HOOK.md hook can have, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default `priority` (higher runs first).
pub const DEFAULT_PRIORITY: i64 = 100;
/// Frontmatter larger than this is refused (the standard suggests well
/// under 1000 tokens for the whole file).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// One validated script hook.
#[derive(Debug, Clone)]
pub struct ScriptHookSpec {
    /// Its name (= folder name).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The event it fires on.
    pub trigger: Event,
    /// Regex on the tool name.
    pub matcher_tool: Option<String>,
    /// Regex on the tool input serialized as JSON.
    pub matcher_pattern: Option<String>,
    /// Time limit in milliseconds, when the frontmatter sets one; else a
    /// hooks.yaml reference's `timeout`, else `settings.timeout`.
    pub timeout_ms: Option<u64>,
    /// Fire-and-forget.
    pub is_async: bool,
    /// 0–1000, higher runs first.
    pub priority: i64,
    /// Free-form metadata.
    pub metadata: Value,
    /// The hook folder.
    pub dir: PathBuf,
    /// The entry point found at load time.
    pub entry: PathBuf,
    /// User or project.
    pub layer: Layer,
    /// Where the frontmatter starts (the HOOK.md file, line 1).
    pub origin: Origin,
    /// The user hook this project hook replaces.
    pub replaces: Option<PathBuf>,
}

impl ScriptHookSpec {
    /// The HOOK.md path.
    pub fn hook_md(&self) -> PathBuf {
        self.dir.join("HOOK.md")
    }

    /// The hooks.yaml priority this hook sorts as: `1000 - priority`, so
    /// 999 runs right after priority-0/1 oracles and the default 100 late.
    pub fn effective_priority(&self) -> i64 {
        1000 - self.priority
    }

    /// The config the `Script` oracle is built from, killing the script
    /// after `timeout`.
    pub fn oracle_config(&self, project_dir: &Path, timeout: std::time::Duration) -> Value {
        let mut matcher = serde_json::Map::new();
        if let Some(t) = &self.matcher_tool {
            matcher.insert("tool".into(), Value::String(t.clone()));
        }
        if let Some(p) = &self.matcher_pattern {
            matcher.insert("pattern".into(), Value::String(p.clone()));
        }
        let mut cfg = serde_json::json!({
            "name": self.name,
            "hook_dir": self.dir,
            "entry": self.entry,
            "timeout_ms": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            "project_dir": project_dir,
        });
        if !matcher.is_empty() {
            cfg["matcher"] = Value::Object(matcher);
        }
        cfg
    }
}

/// What discovery found: the hooks, per-hook errors (those hooks are left
/// out, the rest still load) and warnings.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Valid hooks, user hooks replaced by project ones, sorted by name.
    pub hooks: Vec<ScriptHookSpec>,
    /// One error per hook that could not load.
    pub errors: Vec<ConfigError>,
    /// Non-fatal findings (unknown frontmatter keys, …).
    pub warnings: Vec<(Origin, String)>,
    /// The user hooks a project hook of the same name replaced: they run
    /// again when that project hook does not (untrusted, switched off).
    pub replaced: Vec<ScriptHookSpec>,
}

/// The user hooks directory: `$XDG_CONFIG_HOME/agents/hooks`, else
/// `$HOME/.config/agents/hooks`.
pub fn user_hooks_dir(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    match (xdg_config_home, home) {
        (Some(x), _) => Some(x.join("agents").join("hooks")),
        (None, Some(h)) => Some(h.join(".config").join("agents").join("hooks")),
        (None, None) => None,
    }
}

/// The project hooks directory.
pub fn project_hooks_dir(project_root: &Path) -> PathBuf {
    project_root.join(".agents").join("hooks")
}

/// Discovers and validates the hooks of both directories.
pub fn discover(user_dir: Option<&Path>, project_dir: &Path) -> Discovery {
    let mut d = Discovery::default();
    let mut user = Vec::new();
    if let Some(dir) = user_dir {
        scan(dir, Layer::User, &mut user, &mut d);
    }
    let mut project = Vec::new();
    scan(project_dir, Layer::Project, &mut project, &mut d);
    for mut p in project {
        if let Some(pos) = user.iter().position(|u: &ScriptHookSpec| u.name == p.name) {
            let replaced = user.remove(pos);
            p.replaces = Some(replaced.hook_md());
            d.replaced.push(replaced);
        }
        d.hooks.push(p);
    }
    d.hooks.extend(user);
    d.hooks.sort_by(|a, b| a.name.cmp(&b.name));
    d
}

fn scan(dir: &Path, layer: Layer, out: &mut Vec<ScriptHookSpec>, d: &mut Discovery) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            d.errors.push(ConfigError::in_file(
                dir,
                format!("cannot read the hooks directory: {e}"),
            ));
            return;
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("HOOK.md").is_file())
        .collect();
    dirs.sort();
    // Project hooks must resolve inside this directory (see
    // `confine_to_hooks_dir`): resolved once here, not per file.
    let confine = match layer {
        Layer::Project => match std::fs::canonicalize(dir) {
            Ok(c) => Some(c),
            Err(e) => {
                d.errors.push(ConfigError::in_file(
                    dir,
                    format!("cannot resolve the hooks directory: {e}"),
                ));
                return;
            }
        },
        _ => None,
    };
    for hook_dir in dirs {
        match load_hook(&hook_dir, layer, confine.as_deref(), &mut d.warnings) {
            Ok(h) => out.push(h),
            Err(e) => d.errors.push(e),
        }
    }
}

/// Reads the frontmatter block (between the first two `---` lines) and
/// nothing more.
fn read_frontmatter(path: &Path) -> Result<String, ConfigError> {
    let file = std::fs::File::open(path)
        .map_err(|e| ConfigError::in_file(path, format!("cannot read: {e}")))?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut text = String::from("\n");
    let mut first = true;
    loop {
        line.clear();
        let n = reader
            .by_ref()
            .take((MAX_FRONTMATTER_BYTES + 1) as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| ConfigError::in_file(path, format!("cannot read: {e}")))?;
        if n == 0 {
            return Err(ConfigError::in_file(
                path,
                if first {
                    "empty HOOK.md: it must start with a `---` YAML frontmatter block".to_string()
                } else {
                    "the frontmatter has no closing `---` line".to_string()
                },
            ));
        }
        let s = String::from_utf8_lossy(&line);
        let trimmed = s.trim_end_matches(['\n', '\r']);
        if first {
            if trimmed.trim_start_matches('\u{feff}') != "---" {
                return Err(ConfigError::in_file(
                    path,
                    "HOOK.md must start with a `---` line opening the YAML frontmatter",
                )
                .help(
                    "---\nname: my-hook\ndescription: what it does\ntrigger: pre-tool-call\n---",
                ));
            }
            first = false;
            continue;
        }
        if trimmed == "---" {
            return Ok(text);
        }
        text.push_str(trimmed);
        text.push('\n');
        if text.len() > MAX_FRONTMATTER_BYTES {
            return Err(ConfigError::in_file(
                path,
                format!(
                    "frontmatter longer than {MAX_FRONTMATTER_BYTES} bytes (is the closing `---` missing?)"
                ),
            ));
        }
    }
}

fn is_hook_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

fn int_in(node: &Node, key: &str, lo: i64, hi: i64, unit: &str) -> Result<i64, ConfigError> {
    match node.value {
        NodeValue::Int(i) if i128::from(lo) <= i && i <= i128::from(hi) => {
            Ok(i64::try_from(i).unwrap_or(lo))
        }
        _ => Err(ConfigError::at(
            &node.origin,
            Some(key.into()),
            format!(
                "`{key}` must be an integer from {lo} to {hi}{unit}, found {}",
                match &node.value {
                    NodeValue::Int(i) => i.to_string(),
                    _ => node.kind().to_string(),
                }
            ),
        )),
    }
}

/// Loads one hook; with `confine` (the resolved project hooks directory),
/// its HOOK.md and entry point must resolve inside it.
fn load_hook(
    dir: &Path,
    layer: Layer,
    confine: Option<&Path>,
    warnings: &mut Vec<(Origin, String)>,
) -> Result<ScriptHookSpec, ConfigError> {
    let path = dir.join("HOOK.md");
    let text = read_frontmatter(&path)?;
    let file = Arc::new(SourceFile {
        layer,
        path: path.clone(),
        text,
    });
    let root = crate::yaml::parse(Arc::clone(&file))?;
    // What concerns the hook as a whole points at its first field: line 1
    // is the `---` fence, which the frontmatter's text leaves blank.
    let origin = match root.as_map() {
        Some(_) => root.origin.clone(),
        None => Origin {
            file,
            line: 1,
            column: 1,
        },
    };
    let Some(map) = root.as_map() else {
        return Err(ConfigError::at(
            &root.origin,
            None,
            format!(
                "the frontmatter must be a map of fields, found {}",
                root.kind()
            ),
        ));
    };
    for (k, _) in map {
        if !FRONTMATTER_KEYS.contains(&k.name.as_str()) {
            let hint = did_you_mean(&k.name, FRONTMATTER_KEYS.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            warnings.push((
                k.origin.clone(),
                format!("unknown frontmatter key `{}` ignored{hint}", k.name),
            ));
        }
    }
    let req_str = |key: &str, max: usize| -> Result<(String, &Node), ConfigError> {
        let node = root.get(key).ok_or_else(|| {
            ConfigError::at(
                &origin,
                Some(key.into()),
                format!("missing `{key}` in the frontmatter"),
            )
        })?;
        match node.as_str() {
            Some(s) if !s.trim().is_empty() && s.chars().count() <= max => {
                Ok((s.to_string(), node))
            }
            Some(s) if s.trim().is_empty() => Err(ConfigError::at(
                &node.origin,
                Some(key.into()),
                format!("`{key}` must not be empty"),
            )),
            Some(_) => Err(ConfigError::at(
                &node.origin,
                Some(key.into()),
                format!("`{key}` is longer than {max} characters"),
            )),
            None => Err(ConfigError::at(
                &node.origin,
                Some(key.into()),
                format!("`{key}` must be a string, found {}", node.kind()),
            )),
        }
    };
    let (name, name_node) = req_str("name", 64)?;
    if !is_hook_name(&name) {
        return Err(ConfigError::at(
            &name_node.origin,
            Some("name".into()),
            format!("`{}` is not a hook name", name.escape_debug()),
        )
        .help(
            "use 1–64 lowercase letters, digits and single hyphens, e.g. block-dangerous-commands",
        ));
    }
    let folder = dir
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name != folder {
        return Err(ConfigError::at(
            &name_node.origin,
            Some("name".into()),
            format!("name `{name}` differs from its folder `{folder}`"),
        )
        .help(format!(
            "rename the folder to `{name}` or set `name: {folder}`"
        )));
    }
    let (description, _) = req_str("description", 1024)?;
    let (trigger_text, trigger_node) = req_str("trigger", 200)?;
    let trigger = Event::parse(&trigger_text).map_err(|e| {
        let err = ConfigError::at(
            &trigger_node.origin,
            Some("trigger".into()),
            format!("unknown event `{}`", trigger_text.escape_debug()),
        );
        match e.suggestion {
            Some(s) => err.help(format!(
                "did you mean `{s}`? (`ahp explain --list` shows every event and alias)"
            )),
            None => err.help("`ahp explain --list` shows every event and alias"),
        }
    })?;
    let (mut matcher_tool, mut matcher_pattern) = (None, None);
    if let Some(m) = root.get("matcher") {
        match &m.value {
            NodeValue::Null => {}
            NodeValue::Map(entries) => {
                for (k, v) in entries {
                    let key = format!("matcher.{}", k.name);
                    let slot = match k.name.as_str() {
                        "tool" => &mut matcher_tool,
                        "pattern" => &mut matcher_pattern,
                        other => {
                            let hint = did_you_mean(other, MATCHER_KEYS.iter().copied())
                                .map(|s| format!("did you mean `{s}`?"))
                                .unwrap_or_else(|| "a matcher has `tool` and `pattern`".into());
                            return Err(ConfigError::at(
                                &k.origin,
                                Some(key),
                                format!("unknown matcher key `{other}`"),
                            )
                            .help(hint));
                        }
                    };
                    let Some(re) = v.as_str() else {
                        return Err(ConfigError::at(
                            &v.origin,
                            Some(key),
                            format!("expected a regex string, found {}", v.kind()),
                        ));
                    };
                    Pattern::new(re)
                        .map_err(|e| ConfigError::at(&v.origin, Some(key.clone()), e.0))?;
                    *slot = Some(re.to_string());
                }
            }
            _ => {
                return Err(ConfigError::at(
                    &m.origin,
                    Some("matcher".into()),
                    format!(
                        "`matcher` must be a map with `tool` and/or `pattern`, found {}",
                        m.kind()
                    ),
                ));
            }
        }
    }
    let timeout_ms = match root.get("timeout") {
        None => None,
        Some(n) => Some(
            u64::try_from(int_in(
                n,
                "timeout",
                100,
                MAX_TIMEOUT_MS as i64,
                " milliseconds",
            )?)
            .unwrap_or(DEFAULT_TIMEOUT_MS),
        ),
    };
    let priority = match root.get("priority") {
        None => DEFAULT_PRIORITY,
        Some(n) => int_in(n, "priority", 0, 1000, "")?,
    };
    let is_async = match root.get("async") {
        None => false,
        Some(Node {
            value: NodeValue::Bool(b),
            ..
        }) => *b,
        Some(n) => {
            return Err(ConfigError::at(
                &n.origin,
                Some("async".into()),
                format!("`async` must be true or false, found {}", n.kind()),
            ));
        }
    };
    let metadata = root
        .get("metadata")
        .map(Node::to_json)
        .unwrap_or(Value::Null);
    let entry = ENTRY_POINTS
        .iter()
        .map(|e| dir.join(e))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            // One beside HOOK.md is in the wrong folder, not missing.
            let beside = ENTRY_POINTS
                .iter()
                .filter_map(|e| e.strip_prefix("scripts/"))
                .find(|e| dir.join(e).is_file())
                .map(|e| format!("; {e} beside HOOK.md is not read: move it to scripts/{e}"))
                .unwrap_or_default();
            ConfigError::at(&origin, None, format!("hook `{name}` has no entry point")).help(
                format!(
                    "add one of {} (executable for scripts/run){beside}",
                    ENTRY_POINTS.join(", ")
                ),
            )
        })?;
    if let Some(hooks_dir) = confine {
        for file in [&path, &entry] {
            confine_to_hooks_dir(hooks_dir, dir, file, &name, &origin)?;
        }
    }
    Ok(ScriptHookSpec {
        name,
        description,
        trigger,
        matcher_tool,
        matcher_pattern,
        timeout_ms,
        is_async,
        priority,
        metadata,
        dir: dir.to_path_buf(),
        entry,
        layer,
        origin,
        replaces: None,
    })
}

/// `file` resolved, where `file` lies under `dir` and `dir` resolves to
/// `resolved_dir`: when no component below `dir` is a symlink, that is
/// `resolved_dir` joined with the rest, found with one `lstat` per
/// component instead of a `readlink` per component of the whole path (as
/// `canonicalize` does, on every hook call); otherwise `canonicalize`.
fn resolve_under(dir: &Path, resolved_dir: &Path, file: &Path) -> std::io::Result<PathBuf> {
    let Ok(rest) = file.strip_prefix(dir) else {
        return std::fs::canonicalize(file);
    };
    let mut probe = dir.to_path_buf();
    for part in rest.components() {
        let std::path::Component::Normal(name) = part else {
            return std::fs::canonicalize(file);
        };
        probe.push(name);
        if std::fs::symlink_metadata(&probe)?.file_type().is_symlink() {
            return std::fs::canonicalize(file);
        }
    }
    Ok(resolved_dir.join(rest))
}

/// A project hook's HOOK.md and entry point must resolve (symlinks
/// followed) inside the project hooks directory: `ahp trust` hashes what is
/// in there, but of a symlink only its target *name*, so a script linked
/// from elsewhere could change without the hook set changing. User hooks
/// are the user's own files and may link anywhere.
fn confine_to_hooks_dir(
    hooks_dir: &Path,
    dir: &Path,
    file: &Path,
    name: &str,
    origin: &Origin,
) -> Result<(), ConfigError> {
    let shown = file.strip_prefix(dir).unwrap_or(file).display().to_string();
    // `dir` is a folder of the hooks directory as scanned; `hooks_dir` is
    // that directory resolved.
    let resolved = match dir.parent() {
        Some(scanned) => resolve_under(scanned, hooks_dir, file),
        None => std::fs::canonicalize(file),
    };
    match resolved {
        Ok(r) if r.starts_with(hooks_dir) => Ok(()),
        Ok(r) => Err(ConfigError::at(
            origin,
            None,
            format!(
                "project hook `{name}`: {shown} resolves to {}, outside the project hooks directory {}; \
                 `ahp trust` covers only what is inside it, so the hook is not loaded",
                r.display(),
                dir.parent().unwrap_or(dir).display()
            ),
        )
        .help("copy the file into the hook folder instead of linking to it")),
        Err(e) => Err(ConfigError::at(
            origin,
            None,
            format!("project hook `{name}`: cannot resolve {shown}: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `resolve_under` gives what `canonicalize` gives, through symlinks
    /// at every level (the hook folder, a folder in it, the file) and none.
    #[cfg(unix)]
    #[test]
    fn resolving_under_a_resolved_directory_agrees_with_canonicalize() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(real.join("hooks/plain/scripts")).unwrap();
        std::fs::create_dir_all(outside.join("scripts")).unwrap();
        std::fs::write(real.join("hooks/plain/scripts/run"), "x").unwrap();
        std::fs::write(outside.join("scripts/run"), "x").unwrap();
        std::fs::write(outside.join("HOOK.md"), "x").unwrap();
        // The scanned directory is reached through a symlink itself.
        symlink(&real, tmp.path().join("link")).unwrap();
        let scanned = tmp.path().join("link/hooks");
        let resolved = std::fs::canonicalize(&scanned).unwrap();
        symlink(&outside, real.join("hooks/folder-link")).unwrap();
        std::fs::create_dir_all(real.join("hooks/inner")).unwrap();
        symlink(outside.join("scripts"), real.join("hooks/inner/scripts")).unwrap();
        symlink("../plain/scripts/run", real.join("hooks/inner/run")).unwrap();
        for rest in [
            "plain/scripts/run",
            "folder-link/HOOK.md",
            "folder-link/scripts/run",
            "inner/scripts/run",
            "inner/run",
        ] {
            let file = scanned.join(rest);
            assert_eq!(
                resolve_under(&scanned, &resolved, &file).unwrap(),
                std::fs::canonicalize(&file).unwrap(),
                "{rest}"
            );
        }
        let missing = scanned.join("plain/scripts/missing");
        assert_eq!(
            resolve_under(&scanned, &resolved, &missing)
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::NotFound
        );
    }

    fn hook(root: &Path, name: &str, frontmatter: &str, entry: Option<&str>) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("HOOK.md"),
            format!("---\n{frontmatter}---\n# {name}\n\nBody text.\n"),
        )
        .unwrap();
        if let Some(e) = entry {
            std::fs::write(dir.join("scripts").join(e), "#!/bin/sh\nexit 0\n").unwrap();
        }
        dir
    }

    const GOOD: &str = "name: block-rm\ndescription: Blocks rm -rf\ntrigger: pre-tool-call\nmatcher:\n  tool: Shell|Bash\n  pattern: rm\\s+-rf\npriority: 999\ntimeout: 5000\n";

    #[test]
    fn valid_hook_loads_with_defaults_and_entry_precedence() {
        let t = tempfile::tempdir().unwrap();
        let dir = hook(t.path(), "block-rm", GOOD, Some("run.py"));
        std::fs::write(dir.join("scripts/run.sh"), "exit 0").unwrap();
        let d = discover(None, t.path());
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        let h = &d.hooks[0];
        assert_eq!(h.trigger, Event::PreToolUse);
        assert_eq!(h.priority, 999);
        assert_eq!(h.effective_priority(), 1);
        assert_eq!(h.timeout_ms, Some(5000));
        assert!(h.entry.ends_with("scripts/run.sh"));
        assert_eq!(h.matcher_tool.as_deref(), Some("Shell|Bash"));
    }

    #[test]
    fn errors_name_file_line_and_the_rest_still_load() {
        let t = tempfile::tempdir().unwrap();
        hook(
            t.path(),
            "good-one",
            &GOOD.replace("block-rm", "good-one"),
            Some("run"),
        );
        hook(
            t.path(),
            "bad-regex",
            "name: bad-regex\ndescription: x\ntrigger: pre-tool-call\nmatcher:\n  pattern: \"(unclosed\"\n",
            Some("run"),
        );
        hook(
            t.path(),
            "no-entry",
            "name: no-entry\ndescription: x\ntrigger: pre-tool-call\n",
            None,
        );
        hook(
            t.path(),
            "wrong-name",
            "name: other-name\ndescription: x\ntrigger: pre-tool-call\n",
            Some("run"),
        );
        hook(
            t.path(),
            "bad-prio",
            "name: bad-prio\ndescription: x\ntrigger: stop\npriority: 5000\n",
            Some("run"),
        );
        hook(
            t.path(),
            "bad-event",
            "name: bad-event\ndescription: x\ntrigger: pre-tool-cal\n",
            Some("run"),
        );
        let d = discover(None, t.path());
        assert_eq!(
            d.hooks.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            vec!["good-one"]
        );
        let msgs: Vec<String> = d.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 5, "{msgs:#?}");
        let find = |needle: &str| {
            msgs.iter()
                .find(|m| m.contains(needle))
                .unwrap_or_else(|| panic!("{needle} in {msgs:#?}"))
                .clone()
        };
        assert!(find("bad-regex/HOOK.md:6:12").contains("invalid regex"));
        assert!(find("no-entry/HOOK.md").contains("no entry point"));
        assert!(find("wrong-name/HOOK.md:2:7").contains("differs from its folder"));
        assert!(find("bad-prio/HOOK.md:5:11").contains("from 0 to 1000"));
        assert!(find("bad-event/HOOK.md:4:10").contains("did you mean `pre-tool-use`"));
    }

    #[test]
    fn project_replaces_user_hook_of_the_same_name() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        hook(user.path(), "block-rm", GOOD, Some("run"));
        hook(
            user.path(),
            "user-only",
            &GOOD.replace("block-rm", "user-only"),
            Some("run"),
        );
        hook(project.path(), "block-rm", GOOD, Some("run"));
        let d = discover(Some(user.path()), project.path());
        assert_eq!(d.hooks.len(), 2);
        let b = d.hooks.iter().find(|h| h.name == "block-rm").unwrap();
        assert_eq!(b.layer, Layer::Project);
        assert_eq!(
            b.replaces.as_deref(),
            Some(user.path().join("block-rm/HOOK.md").as_path())
        );
    }

    #[test]
    fn only_the_frontmatter_is_read() {
        let t = tempfile::tempdir().unwrap();
        let dir = hook(t.path(), "block-rm", GOOD, Some("run"));
        // A body that is not UTF-8 and huge does not matter.
        let mut body = format!("---\n{GOOD}---\n").into_bytes();
        body.extend(std::iter::repeat_n(0xffu8, 2_000_000));
        std::fs::write(dir.join("HOOK.md"), body).unwrap();
        let d = discover(None, t.path());
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        std::fs::write(dir.join("HOOK.md"), "# no frontmatter\n").unwrap();
        let d = discover(None, t.path());
        assert!(d.errors[0].to_string().contains("must start with a `---`"));
    }

    #[test]
    fn project_hook_files_must_resolve_inside_the_hooks_dir() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("evil.sh");
        std::fs::write(&target, "#!/bin/sh\nexit 0\n").unwrap();
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let name = "linked";
        let fm = "name: linked\ndescription: x\ntrigger: pre-tool-call\n";
        for root in [user.path(), project.path()] {
            let dir = hook(root, name, fm, None);
            std::os::unix::fs::symlink(&target, dir.join("scripts/run")).unwrap();
        }
        // A link to a file inside the hooks directory is hashed by trust: fine.
        let inner = hook(
            project.path(),
            "inner",
            &fm.replace("linked", "inner"),
            None,
        );
        std::fs::write(project.path().join("shared.sh"), "exit 0\n").unwrap();
        std::os::unix::fs::symlink("../../shared.sh", inner.join("scripts/run.sh")).unwrap();

        let d = discover(None, project.path());
        assert_eq!(d.hooks.len(), 1, "{:?}", d.errors);
        assert_eq!(d.hooks[0].name, "inner");
        let msg = d.errors[0].to_string();
        assert!(msg.contains("scripts/run resolves to"), "{msg}");
        assert!(msg.contains("outside the project hooks directory"), "{msg}");
        // The same link in a user hook is the user's own business.
        let d = discover(Some(user.path()), tempfile::tempdir().unwrap().path());
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(d.hooks[0].name, "linked");
    }

    #[test]
    fn names_are_lowercase_hyphenated() {
        assert!(is_hook_name("block-dangerous-commands"));
        assert!(is_hook_name("a1"));
        assert!(!is_hook_name("Block"));
        assert!(!is_hook_name("a--b"));
        assert!(!is_hook_name("-a"));
        assert!(!is_hook_name("../x"));
        assert!(!is_hook_name(&"a".repeat(65)));
    }
}
