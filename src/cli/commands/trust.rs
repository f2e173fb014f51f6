//! `ahp trust`: trust this project's hooks and commands after reviewing
//! them (`--show` lists them, `--revoke` forgets the trust).

use crate::cli::args::ProjectArg;
use crate::ops::output::EXIT_PROCEED;
use ahp_config::trust::{self, TrustStatus, TrustStore};
use ahp_config::{ConfigErrors, LoadOptions, LoadedConfig};
use ahp_engine::Registry;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

/// Arguments of `ahp trust`.
#[derive(Debug, clap::Args)]
pub(crate) struct TrustArgs {
    #[command(flatten)]
    project: ProjectArg,
    /// List the files that would be trusted and the current status; change nothing.
    #[arg(long, conflicts_with = "revoke")]
    show: bool,
    /// Forget the trust given to this project.
    #[arg(long)]
    revoke: bool,
}

pub(crate) fn run(args: TrustArgs, registry: &Registry) -> Result<u8> {
    trust_command(args.project.project, args.show, args.revoke, registry)
}

/// The project's own errors among `errors`: those in a file under the
/// project root (its policy files, its HOOK.md hooks).
fn project_errors(root: &Path, errors: &[ahp_config::ConfigError]) -> Vec<ahp_config::ConfigError> {
    errors
        .iter()
        .filter(|e| e.file.as_ref().is_some_and(|f| f.starts_with(root)))
        .cloned()
        .collect()
}

/// `ahp trust` trusts only what would run as reviewed: a project whose
/// policy files or hooks loading refuses (a symlink out of the project, an
/// `oracle: Script`, a HOOK.md that does not load) is refused here too,
/// naming each file, rather than trusted and then quietly left out.
fn check_loads_as_reviewed(opts: &LoadOptions, registry: &Registry) -> Result<()> {
    let root = &opts.project_root;
    let refuse = |errors: Vec<ahp_config::ConfigError>| {
        anyhow!(
            "not trusted: ahp would not load {} of what you are trusting, so it would not run as reviewed:\n{}\nfix it, then run `ahp trust` again",
            if errors.len() == 1 {
                "this part"
            } else {
                "these parts"
            },
            ConfigErrors(errors)
        )
    };
    let cfg = LoadedConfig::load_with_errors(opts);
    let mut mine = project_errors(root, &cfg.hook_errors);
    mine.extend(project_errors(
        root,
        &cfg.compile_with_errors(registry, None).errors,
    ));
    if mine.is_empty() {
        Ok(())
    } else {
        Err(refuse(mine))
    }
}

/// How `trust --show` and `ahp trust` mark a file no review can read.
const COMPILED: &str = "compiled, not source: review cannot read it";

/// Whether `f` is compiled code (bytecode, a native library or program)
/// rather than source a reviewer reads: a known extension, or the magic
/// bytes of an executable (ELF, Mach-O, PE, WebAssembly, an archive). A
/// `.pyc` runs in place of the `.py` beside it. Other binary files (an
/// image, UTF-16 text) run nothing by themselves.
fn compiled(root: &Path, f: &ahp_config::trust::HookFile) -> bool {
    use std::io::Read;
    const EXTENSIONS: &[&str] = &[
        "pyc", "pyo", "so", "dylib", "dll", "exe", "class", "jar", "wasm", "o", "a", "node",
    ];
    if f.symlink_target.is_some() {
        return false;
    }
    let path = root.join(&f.path);
    if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
    {
        return true;
    }
    const MAGIC: &[&[u8]] = &[
        b"\x7fELF",
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"MZ",
        b"\0asm",
        b"!<arch>\n",
    ];
    let mut head = Vec::new();
    std::fs::File::open(&path)
        .and_then(|file| file.take(8).read_to_end(&mut head))
        .is_ok_and(|_| MAGIC.iter().any(|m| head.starts_with(m)))
}

fn trust_command(
    project: Option<PathBuf>,
    show: bool,
    revoke: bool,
    registry: &Registry,
) -> Result<u8> {
    let opts = crate::ops::policy::load_options(project)?;
    let root = &opts.project_root;
    let store = TrustStore::from_env()?;
    if revoke {
        if store.revoke(root)? {
            crate::ops::output::outln!(
                "revoked: project hooks of {} will not run until trusted again",
                ahp_config::path_line(root)
            )?;
        } else {
            crate::ops::output::outln!("{} was not trusted", ahp_config::path_line(root))?;
        }
        return Ok(EXIT_PROCEED);
    }
    let set = trust::hook_set(root)?;
    let status = store.status(&set)?;
    if show {
        crate::ops::output::outln!("project: {}", ahp_config::path_line(root))?;
        crate::ops::output::outln!("hook set: {} ({} file(s))", set.digest, set.files.len())?;
        for f in &set.files {
            let mut kind = match (&f.symlink_target, f.executable) {
                (Some(t), _) => format!("symlink → {t}"),
                (None, true) => "executable".to_string(),
                (None, false) => String::new(),
            };
            if compiled(root, f) {
                kind.push_str(if kind.is_empty() { "" } else { ", " });
                kind.push_str(COMPILED);
            }
            crate::ops::output::outln!("  {}  {} {kind}", f.digest, f.path)?;
        }
        let line = match &status {
            TrustStatus::Trusted if set.is_empty() => "status: no project hooks".to_string(),
            TrustStatus::Trusted => "status: trusted".to_string(),
            TrustStatus::Untrusted => "status: not trusted (run `ahp trust`)".to_string(),
            TrustStatus::Changed {
                trusted_at,
                changed,
            } => format!(
                "status: changed since trusted at {trusted_at}: {}",
                changed.join(", ")
            ),
        };
        crate::ops::output::outln!("{line}")?;
        return Ok(EXIT_PROCEED);
    }
    if set.is_empty() {
        crate::ops::output::outln!(
            "{} has no project hooks (.agents/hooks); nothing to trust",
            ahp_config::path_line(root)
        )?;
        return Ok(EXIT_PROCEED);
    }
    check_loads_as_reviewed(&opts, registry)?;
    let unreadable: Vec<&str> = set
        .files
        .iter()
        .filter(|f| compiled(root, f))
        .map(|f| f.path.as_str())
        .collect();
    if !unreadable.is_empty() {
        eprintln!(
            "warning: {}",
            crate::ops::output::terminal_safe(&format!(
                "you are trusting {} file(s) that are {COMPILED}: {} (Python runs a committed \
                 __pycache__/*.pyc, or a .pyc beside where its .py would be, in place of the \
                 source you read); if you did not expect them, run `ahp trust --revoke`",
                unreadable.len(),
                unreadable.join(", ")
            ))
        );
    }
    store.trust(&set)?;
    crate::ops::output::outln!(
        "trusted {} file(s) of {} ({}); recorded in {}",
        set.files.len(),
        ahp_config::path_line(root),
        set.digest,
        ahp_config::path_line(store.path())
    )?;
    Ok(EXIT_PROCEED)
}
