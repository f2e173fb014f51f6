//! Reading a file that a repository names.
//!
//! Oracles read files whose paths come from a project's policy or from the
//! repository itself: test and coverage reports, `CODEOWNERS`, manifests,
//! the files an issue lists. A repository can commit a symlink at any of
//! them (`target/lcov.info -> ~/.netrc`), or name a path outside the
//! project (`/proc/self/fd/1`, `/dev/zero`); a plain `fs::read` follows
//! the link into the user's files, or blocks forever on a FIFO or a
//! terminal, past every timeout. [`open_in_project`] opens a path only
//! when, symlinks resolved, it is a regular file inside the project, and
//! [`read_in_project`] reads one up to a size limit. Errors name the path
//! and never quote the file's content.
//!
//! ```
//! use ahp_oracles::project_file::{read_in_project, ReadError};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("lcov.info"), "SF:a.rs\n").unwrap();
//! let bytes = read_in_project(dir.path(), "lcov.info".as_ref(), 1 << 20).unwrap();
//! assert_eq!(bytes, b"SF:a.rs\n");
//! let err = read_in_project(dir.path(), "/etc/hostname".as_ref(), 1 << 20).unwrap_err();
//! assert!(matches!(err, ReadError::OutsideProject { .. } | ReadError::NotFound { .. }), "{err}");
//! ```

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a file a repository names was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Nothing is there.
    #[error("not found at {}", path.display())]
    NotFound {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path, symlinks resolved, leads out of the project.
    #[error("{} is outside the project (it resolves to {}): not read", path.display(), resolved.display())]
    OutsideProject {
        /// The path asked for.
        path: PathBuf,
        /// Where it leads.
        resolved: PathBuf,
    },
    /// A directory, FIFO, socket or device.
    #[error("{} is not a regular file: not read", path.display())]
    NotAFile {
        /// The path asked for.
        path: PathBuf,
    },
    /// Larger than the caller's limit.
    #[error("{} is larger than {max} bytes: not read", path.display())]
    TooLarge {
        /// The path asked for.
        path: PathBuf,
        /// The limit.
        max: u64,
    },
    /// The file system said no.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path asked for.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

/// Opens `path` (relative to `root`, or absolute) for reading when it
/// resolves inside `root` and is a regular file; returns the file and its
/// metadata (taken from the opened file).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.txt"), "hi").unwrap();
/// let (_file, meta) = ahp_oracles::project_file::open_in_project(dir.path(), "a.txt".as_ref()).unwrap();
/// assert_eq!(meta.len(), 2);
/// ```
pub fn open_in_project(root: &Path, path: &Path) -> Result<(File, Metadata), ReadError> {
    let full = root.join(path);
    let io = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ReadError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            ReadError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    let resolved = std::fs::canonicalize(&full).map_err(io)?;
    let canonical_root = std::fs::canonicalize(root).map_err(io)?;
    if !resolved.starts_with(&canonical_root) {
        return Err(ReadError::OutsideProject {
            path: path.to_path_buf(),
            resolved,
        });
    }
    // Checked before opening: opening a FIFO for reading blocks until a
    // writer appears.
    if !std::fs::metadata(&resolved).map_err(io)?.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let file = File::open(&resolved).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok((file, meta))
}

/// Reads the whole of `path` (see [`open_in_project`]), refusing a file
/// larger than `max` bytes.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
/// let err = ahp_oracles::project_file::read_in_project(dir.path(), "big".as_ref(), 10).unwrap_err();
/// assert!(err.to_string().contains("larger than 10 bytes"));
/// ```
pub fn read_in_project(root: &Path, path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_in_project(root, path)?;
    let too_large = || ReadError::TooLarge {
        path: path.to_path_buf(),
        max,
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn symlinks_out_fifos_and_directories_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("netrc"), "machine x password y").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink(outside.path().join("netrc"), root.join("lcov.info")).unwrap();
        std::fs::write(root.join("real"), "ok").unwrap();
        std::os::unix::fs::symlink("real", root.join("alias")).unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(root.join("fifo"))
                .status()
                .unwrap()
                .success()
        );
        let read = |p: &str| read_in_project(root, p.as_ref(), 1 << 20);
        assert!(matches!(
            read("lcov.info"),
            Err(ReadError::OutsideProject { .. })
        ));
        assert!(matches!(
            read("../x"),
            Err(ReadError::NotFound { .. } | ReadError::OutsideProject { .. })
        ));
        assert!(matches!(read("fifo"), Err(ReadError::NotAFile { .. })));
        assert!(matches!(read("d"), Err(ReadError::NotAFile { .. })));
        assert!(matches!(
            read("/dev/zero"),
            Err(ReadError::OutsideProject { .. })
        ));
        assert_eq!(read("alias").unwrap(), b"ok");
        let e = read("lcov.info").unwrap_err().to_string();
        assert!(!e.contains("password"), "{e}");
    }
}
