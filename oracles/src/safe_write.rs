//! Writing a file on a repository's behalf.
//!
//! ahp writes files whose paths a repository controls: a retrospective next
//! to an issue file, the issue file itself (`archive_issue`), `.ahp/` and
//! `.gitignore` at `ahp init`. A repository can commit a symlink at any of
//! those paths (`Issues/FEAT-1.retrospective.md -> ~/.bashrc`), or a
//! symlinked directory on the way (`Issues -> ~`); a plain `fs::write`
//! follows both and turns ahp into a file-overwrite primitive. Every such
//! write goes through [`write_in_project`], which
//!
//! * refuses a symlink at the file itself, whatever it points at;
//! * refuses a path that leaves the project (`..`, an absolute path
//!   elsewhere, a directory symlink that resolves outside the canonical
//!   project root); directory symlinks that stay inside are followed;
//! * refuses to replace anything but a regular file;
//! * writes atomically: a fresh temp file in the same directory
//!   (`O_CREAT|O_EXCL|O_NOFOLLOW`), fsync, then a rename over the target.
//!   `rename` replaces a symlink that appears at the target meanwhile
//!   instead of following it, so the last step cannot be redirected either.
//!
//! A refusal is an error naming the path and why, never a silent success.
//!
//! ```
//! use ahp_oracles::safe_write::{write_in_project, SafeWriteError};
//! let dir = tempfile::tempdir().unwrap();
//! write_in_project(dir.path(), "notes/a.md".as_ref(), b"hello\n").unwrap();
//! assert_eq!(std::fs::read_to_string(dir.path().join("notes/a.md")).unwrap(), "hello\n");
//! let err = write_in_project(dir.path(), "../escape.md".as_ref(), b"x").unwrap_err();
//! assert!(matches!(err, SafeWriteError::OutsideProject { .. }), "{err}");
//! ```

use std::path::{Component, Path, PathBuf};

/// Why a write on a repository's behalf was refused or failed. Paths are
/// shown as given (relative to the project when they were), so the user
/// recognizes the file the repository asked for.
#[derive(Debug, thiserror::Error)]
pub enum SafeWriteError {
    /// The file to write is a symlink.
    #[error("refusing to write through a symlink: {} -> {}", path.display(), target.display())]
    Symlink {
        /// The path asked for.
        path: PathBuf,
        /// Where the link points (as stored in the link).
        target: PathBuf,
    },
    /// The path, or a directory symlink on the way, leads out of the project.
    #[error("refusing to write {}: {why}, outside the project {}", path.display(), root.display())]
    OutsideProject {
        /// The path asked for.
        path: PathBuf,
        /// What leads out (`..`, an absolute path, `Issues -> /home/u`).
        why: String,
        /// The project root.
        root: PathBuf,
    },
    /// Something other than a regular file (or a directory on the way
    /// that is not one) is in the way.
    #[error("refusing to write {}: {why}", path.display())]
    NotAFile {
        /// The path asked for.
        path: PathBuf,
        /// What is there instead.
        why: String,
    },
    /// The file system said no.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The path asked for.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `contents` to `rel` inside the project `root`, creating missing
/// directories, without following a symlink at the file and without
/// leaving the project; atomically (temp file, fsync, rename). An existing
/// file keeps its permissions. See the [module documentation](self).
///
/// `rel` is relative to `root`, or an absolute path inside it.
pub fn write_in_project(root: &Path, rel: &Path, contents: &[u8]) -> Result<(), SafeWriteError> {
    let io = |source: std::io::Error| SafeWriteError::Io {
        path: rel.to_path_buf(),
        source,
    };
    let canon_root = std::fs::canonicalize(root).map_err(io)?;
    let outside = |why: String| SafeWriteError::OutsideProject {
        path: rel.to_path_buf(),
        why,
        root: root.to_path_buf(),
    };
    let inner = if rel.is_absolute() {
        match rel
            .strip_prefix(root)
            .or_else(|_| rel.strip_prefix(&canon_root))
        {
            Ok(r) => r,
            Err(_) => return Err(outside("it is an absolute path".into())),
        }
    } else {
        rel
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in inner.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            Component::ParentDir => return Err(outside("it goes up with `..`".into())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(outside("it is an absolute path".into()));
            }
        }
    }
    let Some((name, dirs)) = parts.split_last() else {
        return Err(SafeWriteError::NotAFile {
            path: rel.to_path_buf(),
            why: "it names the project directory itself".into(),
        });
    };

    // The directories on the way: created when missing, followed when they
    // are symlinks that stay inside the project.
    let mut dir = root.to_path_buf();
    let mut shown = PathBuf::new();
    for part in dirs {
        dir.push(part);
        shown.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => {
                let inside = std::fs::canonicalize(&dir)
                    .map(|real| real.starts_with(&canon_root) && real.is_dir())
                    .unwrap_or(false);
                if !inside {
                    let target = std::fs::read_link(&dir).unwrap_or_default();
                    return Err(outside(format!(
                        "{} -> {} leads",
                        shown.display(),
                        target.display()
                    )));
                }
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(SafeWriteError::NotAFile {
                    path: rel.to_path_buf(),
                    why: format!("{} is not a directory", shown.display()),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::create_dir(&dir) {
                    Ok(()) => {}
                    // Created meanwhile: checked again below, as a whole.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        }
    }
    // The whole parent once more, resolved: it must be inside the project.
    let real_dir = std::fs::canonicalize(&dir).map_err(io)?;
    if !real_dir.starts_with(&canon_root) {
        return Err(outside(format!(
            "its directory resolves to {}",
            real_dir.display()
        )));
    }

    let target = real_dir.join(name);
    let mode = match std::fs::symlink_metadata(&target) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(SafeWriteError::Symlink {
                path: rel.to_path_buf(),
                target: std::fs::read_link(&target).unwrap_or_default(),
            });
        }
        Ok(m) if m.is_file() => Some(m.permissions()),
        Ok(_) => {
            return Err(SafeWriteError::NotAFile {
                path: rel.to_path_buf(),
                why: "something other than a regular file is there".into(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };

    ahp_engine::paths::replace_file(&target, contents, mode).map_err(io)
}

/// Removes the file `path` of the project `root`, only when its directory
/// resolves inside the project; a symlink there is removed itself, never
/// what it points to.
///
/// ```
/// use ahp_oracles::safe_write::{remove_in_project, write_in_project};
/// let dir = tempfile::tempdir().unwrap();
/// write_in_project(dir.path(), "a.json".as_ref(), b"{}").unwrap();
/// remove_in_project(dir.path(), &dir.path().join("a.json")).unwrap();
/// assert!(!dir.path().join("a.json").exists());
/// ```
pub fn remove_in_project(root: &Path, path: &Path) -> Result<(), SafeWriteError> {
    let dir = path.parent().unwrap_or(root);
    let inside = match (std::fs::canonicalize(dir), std::fs::canonicalize(root)) {
        (Ok(d), Ok(r)) => d.starts_with(r),
        _ => false,
    };
    if !inside {
        return Err(SafeWriteError::OutsideProject {
            path: path.to_path_buf(),
            why: "its directory resolves elsewhere".into(),
            root: root.to_path_buf(),
        });
    }
    std::fs::remove_file(path).map_err(|source| SafeWriteError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlink_at_the_file_is_refused_and_its_target_untouched() {
        let root = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        let bashrc = victim.path().join(".bashrc");
        std::fs::write(&bashrc, "original\n").unwrap();
        std::fs::create_dir(root.path().join("Issues")).unwrap();
        symlink(&bashrc, root.path().join("Issues/F.md")).unwrap();
        let err = write_in_project(root.path(), "Issues/F.md".as_ref(), b"evil").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "refusing to write through a symlink: Issues/F.md -> {}",
                bashrc.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "original\n");
    }

    #[test]
    fn a_directory_symlink_out_of_the_project_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        symlink(victim.path(), root.path().join("Issues")).unwrap();
        let err = write_in_project(root.path(), "Issues/a/F.md".as_ref(), b"x").unwrap_err();
        assert!(
            matches!(err, SafeWriteError::OutsideProject { .. })
                && err.to_string().contains("Issues ->"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_symlink_inside_the_project_is_followed() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("real")).unwrap();
        symlink("real", root.path().join("alias")).unwrap();
        write_in_project(root.path(), "alias/F.md".as_ref(), b"x").unwrap();
        assert_eq!(std::fs::read(root.path().join("real/F.md")).unwrap(), b"x");
    }

    #[test]
    fn an_existing_file_is_replaced_keeping_its_mode_and_no_temp_is_left() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let p = root.path().join("f");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_in_project(root.path(), &p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn paths_outside_and_non_files_are_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("d")).unwrap();
        for (rel, want) in [
            ("../x", "`..`"),
            ("/etc/x", "absolute"),
            ("d", "other than a regular file"),
            (".", "project directory itself"),
        ] {
            let err = write_in_project(root.path(), rel.as_ref(), b"x").unwrap_err();
            assert!(err.to_string().contains(want), "{rel}: {err}");
        }
    }
}
