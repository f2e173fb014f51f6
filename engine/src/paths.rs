//! The one place that names where ahp keeps a project's files: the `.ahp`
//! directory and the signal log in it (with its numbered rotations); and
//! the one way ahp replaces a file it owns ([`replace_file`]) and tells an
//! executable file ([`is_executable`]).

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The project directory ahp keeps its files in.
pub const AHP_DIR: &str = ".ahp";

/// The signal log's file name inside [`AHP_DIR`].
pub const LOG_FILE: &str = "signals.jsonl";

/// The signal log, relative to the project root.
pub const DEFAULT_LOG: &str = ".ahp/signals.jsonl";

/// Whether `name` is the signal log's file name or one of its rotations
/// (`signals.jsonl.1`, `signals.jsonl.2`, …), exactly.
///
/// ```
/// use ahp_engine::paths::is_log_file_name;
/// assert!(is_log_file_name("signals.jsonl"));
/// assert!(is_log_file_name("signals.jsonl.3"));
/// assert!(is_log_file_name("signals.jsonl.12.gz"));
/// assert!(!is_log_file_name("signals.jsonl.sh"));
/// assert!(!is_log_file_name("signals.jsonl.x.gz"));
/// assert!(!is_log_file_name("signals.jsonl."));
/// ```
pub fn is_log_file_name(name: &str) -> bool {
    name == LOG_FILE
        || name
            .strip_prefix(LOG_FILE)
            .and_then(|rest| rest.strip_prefix('.'))
            .map(|rest| rest.strip_suffix(".gz").unwrap_or(rest))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Replaces the file `target` whole: `contents` go to a new temporary file
/// beside it (never an existing file, never through a link: `O_EXCL`),
/// which gets `permissions` (when given, before anything is written),
/// is synced and renamed over `target`; then the directory is synced, best
/// effort. A reader sees the old file or the new one, and so does whoever
/// looks after a crash. The temporary file is removed when a step fails.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let target = dir.path().join("a.json");
/// ahp_engine::paths::replace_file(&target, b"{}", None).unwrap();
/// ahp_engine::paths::replace_file(&target, b"[]", None).unwrap();
/// assert_eq!(std::fs::read(&target).unwrap(), b"[]");
/// ```
pub fn replace_file(
    target: &Path,
    contents: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let (tmp, mut file) = create_temp(dir, target)?;
    let written = (|| {
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // Not every platform can open a directory to sync it.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Permissions that let only the file's owner read and write it (mode
/// 0600), for [`replace_file`]; `None` where files have no such mode.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::fs::PermissionsExt;
/// let p = ahp_engine::paths::owner_only().unwrap();
/// assert_eq!(p.mode() & 0o777, 0o600);
/// # }
/// ```
pub fn owner_only() -> Option<Permissions> {
    #[cfg(unix)]
    return Some(std::os::unix::fs::PermissionsExt::from_mode(0o600));
    #[cfg(not(unix))]
    return None;
}

/// Whether a file with this metadata has an execute bit (for anyone):
/// what runs a script hook directly, what `ahp trust` records, what a
/// `PATH` lookup accepts. Where files have no mode, a regular file.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::fs::PermissionsExt;
/// # let dir = tempfile::tempdir().unwrap();
/// let script = dir.path().join("check.sh");
/// std::fs::write(&script, "#!/bin/sh\n").unwrap();
/// std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
/// assert!(!ahp_engine::paths::is_executable(&std::fs::metadata(&script).unwrap()));
/// std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
/// assert!(ahp_engine::paths::is_executable(&std::fs::metadata(&script).unwrap()));
/// # }
/// ```
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    return std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
    #[cfg(not(unix))]
    return meta.is_file();
}

/// A new file `.NAME.ahp-PID-N.tmp` in `dir`; a name left by a crashed
/// process with the same pid is skipped.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.ahp-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_log_is_the_log_file_in_the_ahp_dir() {
        assert_eq!(
            super::DEFAULT_LOG,
            format!("{}/{}", super::AHP_DIR, super::LOG_FILE)
        );
    }
}
