//! What a command reads: an event name, and a context as JSON from a
//! file or stdin, bounded in size, with errors that name line and column.

use ahp_engine::{Event, HookContext};
use anyhow::{Context, Result, anyhow};
use std::io::{IsTerminal, Read};
use std::path::Path;

/// Largest context accepted on stdin or from a file. Agent payloads are a
/// few KiB; a tool input carrying a whole file can reach a few MiB.
pub const MAX_CONTEXT_BYTES: u64 = 16 * 1024 * 1024;

pub(crate) fn parse_event(name: &str) -> Result<Event> {
    Event::parse(name).map_err(|e| anyhow!("{e}"))
}

/// Reads the context: `--context FILE`, `-` or piped stdin; an empty
/// context when stdin is a terminal and no file was given.
pub(crate) fn read_context(source: Option<&str>) -> Result<HookContext> {
    let (name, bytes) = match source {
        Some("-") => (
            "<stdin>".to_string(),
            read_limited(std::io::stdin().lock(), "<stdin>")?,
        ),
        Some(path) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot open context file `{path}`"))?;
            (path.to_string(), read_limited(f, path)?)
        }
        None if !std::io::stdin().is_terminal() => (
            "<stdin>".to_string(),
            read_limited(std::io::stdin().lock(), "<stdin>")?,
        ),
        None => return Ok(HookContext::default()),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(HookContext::default());
    }
    let value = parse_json(&bytes, &format!("context {name}"))?;
    let raw = value.clone();
    let mut ctx: HookContext = serde_json::from_value(value)
        .map_err(|e| anyhow!("context {name}: {e}\n  help: the context is a JSON object with fields such as event, session_id, tool {{name, input}}, files {{changed}} and issue"))?;
    if let Some(files) = ctx.files.as_mut()
        && files.changed_count == 0
    {
        files.changed_count = files.changed.len();
    }
    if ctx.raw.is_none() {
        ctx.raw = Some(raw);
    }
    if let Some(tool) = ctx.tool.as_mut() {
        crate::adapters::normalize_context_tool(tool);
    }
    let warnings = context_warnings(ctx.raw.as_ref())
        .into_iter()
        .chain(tool_warning(&ctx));
    for w in warnings {
        eprintln!(
            "{}",
            super::output::terminal_safe(&format!("warning: context {name}: {w}"))
        );
    }
    Ok(ctx)
}

/// What in a context is most likely a mistake, since the policy would
/// judge it as nothing: an agent's own payload (its fields are not ahp's),
/// or a key one letter off one of ahp's.
pub(crate) fn context_warnings(raw: Option<&serde_json::Value>) -> Vec<String> {
    let mut out = Vec::new();
    let Some(map) = raw.and_then(serde_json::Value::as_object) else {
        return out;
    };
    if map.contains_key("hook_event_name") || map.contains_key("tool_name") {
        out.push(
            "this is an agent's hook payload (hook_event_name, tool_name), which `ahp run` does not read: give ahp's context ({\"tool\": {\"name\": \"Bash\", \"input\": {…}}}), or pipe the payload to `ahp hook AGENT`".to_string(),
        );
        return out;
    }
    // The context's one shape says which keys are near one of its fields
    // (any other key is the policy's own).
    for key in map.keys().filter(|k| !k.contains('.')) {
        if let Err(found) = ahp_engine::context_shape::resolve(key)
            && found.level == ahp_engine::context_shape::Level::Error
            && let Some(hint) = found.help
        {
            out.push(format!(
                "`{key}` is not a field of ahp's context ({hint}); the policy sees it only as a key of its own"
            ));
        }
    }
    out
}

/// A shell call without its command, which the policy judges as running
/// nothing (`comand` for `command`).
pub(crate) fn tool_warning(ctx: &HookContext) -> Option<String> {
    let tool = ctx.tool.as_ref()?;
    if tool.name != "shell" || tool.input.get("command").is_some() {
        return None;
    }
    let near = tool.input.as_object().and_then(|input| {
        input
            .keys()
            .find(|k| ahp_engine::suggest::did_you_mean(k, ["command"]).is_some())
    });
    Some(match near {
        Some(k) => format!(
            "tool.input has no `command` (`{k}` is not it): the shell call is judged as running nothing"
        ),
        None => {
            "tool.input has no `command`: the shell call is judged as running nothing".to_string()
        }
    })
}

/// Parses one JSON value; errors name the source, line and column.
pub(crate) fn parse_json(bytes: &[u8], name: &str) -> Result<serde_json::Value> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{name}: not UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let text = crate::adapters::without_lone_surrogates(text);
    let mut de = serde_json::Deserializer::from_str(&text);
    // Deeply nested JSON must be an error, not a stack overflow: serde_json
    // stops at 128 levels by default, which we keep.
    let value: serde_json::Value = serde::Deserialize::deserialize(&mut de)
        .map_err(|e| anyhow!("{name}:{}:{}: invalid JSON: {e}", e.line(), e.column()))?;
    de.end().map_err(|e| {
        anyhow!(
            "{name}:{}:{}: trailing data after the JSON value",
            e.line(),
            e.column()
        )
    })?;
    Ok(value)
}

pub(crate) fn read_limited(r: impl Read, name: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(MAX_CONTEXT_BYTES + 1)
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read context from {name}"))?;
    if buf.len() as u64 > MAX_CONTEXT_BYTES {
        return Err(anyhow!(
            "context from {name} is larger than the limit of {} MiB; send the tool input, not whole files",
            MAX_CONTEXT_BYTES / (1024 * 1024)
        ));
    }
    Ok(buf)
}

/// Sets the tool call's [`ToolCall::work_dir`](ahp_engine::ToolCall::work_dir)
/// to the agent's `cwd` when the call runs outside the project `root` (see
/// [`runs_outside_the_project`]) and the agent named no folder of its own:
/// its shell command's relative paths are then the files there. `ahp
/// hook` and `ahp test`'s payload cases both place a call this way.
pub(crate) fn place_tool_call(ctx: &mut HookContext, root: &Path) {
    if let Some(cwd) = ctx.work_dir.clone()
        && let Some(tool) = ctx.tool.as_mut()
        && tool.work_dir.is_none()
        && runs_outside_the_project(Path::new(&cwd), root)
    {
        tool.work_dir = Some(cwd);
    }
}

/// Whether a call in the agent's `cwd` runs outside the project `root`:
/// in a folder apart from it (Claude Code's terminal after `cd ~` in an
/// earlier call), or where no project lives: `root` is the home folder,
/// or holds no `.git` or policy and is a hidden folder of home (`~/.ssh`)
/// or a system folder (`/etc`, `/`). A shell command's relative paths are then
/// the files there (see `shell::model_in`); a project anywhere else
/// (`/usr/src/app`, `/var/www/html`, `~/.config/nvim` with its `.git`)
/// keeps them relative, for its own globs.
fn runs_outside_the_project(cwd: &Path, root: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (cwd, root) = (real(cwd), real(root));
    if !cwd.starts_with(&root) {
        return true;
    }
    // The home folder is the user's files, also when a dotfiles repository
    // or ahp's own `.ahp` folder is there.
    let home = std::env::var_os("HOME").map(|h| real(Path::new(&h)));
    let rest = home
        .as_deref()
        .filter(|h| h.parent().is_some())
        .and_then(|h| root.strip_prefix(h).ok());
    if rest.is_some_and(|r| r.as_os_str().is_empty()) {
        return true;
    }
    // A repository or a policy makes a project wherever it is; an `.ahp`
    // folder alone may be only the log ahp wrote there.
    if root.join(".git").exists() || root.join(ahp_config::trust::POLICY_FILE).exists() {
        return false;
    }
    if let Some(rest) = rest {
        return rest
            .components()
            .next()
            .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    }
    let parts: Vec<String> = root
        .components()
        .skip(1)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    matches!(
        parts.as_slice(),
        [] | ["private", "etc", ..]
            | [
                "etc"
                    | "boot"
                    | "bin"
                    | "sbin"
                    | "lib"
                    | "lib32"
                    | "lib64"
                    | "dev"
                    | "proc"
                    | "sys"
                    | "root",
                ..
            ]
            | ["usr" | "var" | "home" | "Users" | "opt" | "srv" | "System" | "Library"]
            | ["home" | "Users", _]
            | [
                "usr",
                "bin" | "sbin" | "lib" | "lib32" | "lib64" | "libexec" | "share",
                ..
            ]
            | ["usr", "local"]
            | ["usr", "local", "bin" | "sbin" | "lib" | "etc", ..]
    )
}
