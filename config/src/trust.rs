//! The trust store: project-level script hooks (and commands named in the
//! project's committed `.ahp/hooks.yaml`) run only once the user has trusted
//! the project's current hook set, like direnv's `allow`.
//!
//! Script hooks under `<project>/.agents/hooks/` and the policy
//! `<project>/.ahp/hooks.yaml` come with a cloned repository, so they are
//! someone else's code. [`hook_set`] hashes them
//! (paths, executable bits, contents and symlink targets) into one digest;
//! [`TrustStore::trust`] records that digest for the project, and
//! [`TrustStore::status`] tells whether the hooks on disk are still the ones
//! that were trusted, and if not which files changed.
//!
//! ```
//! use ahp_config::trust::{hook_set, TrustStatus, TrustStore};
//! # let tmp = tempfile::tempdir().unwrap();
//! # let project = tmp.path().join("project");
//! std::fs::create_dir_all(project.join(".agents/hooks")).unwrap();
//! std::fs::write(project.join(".agents/hooks/check.sh"), "#!/bin/sh\nexit 0\n").unwrap();
//! let store = TrustStore::at(tmp.path().join("data/ahp/trust.json"));
//!
//! let set = hook_set(&project).unwrap();
//! assert_eq!(store.status(&set).unwrap(), TrustStatus::Untrusted);
//! store.trust(&set).unwrap();
//! assert_eq!(store.status(&set).unwrap(), TrustStatus::Trusted);
//!
//! std::fs::write(project.join(".agents/hooks/check.sh"), "#!/bin/sh\nexit 1\n").unwrap();
//! let set = hook_set(&project).unwrap();
//! match store.status(&set).unwrap() {
//!     TrustStatus::Changed { changed, .. } => assert_eq!(changed, [".agents/hooks/check.sh"]),
//!     other => panic!("{other:?}"),
//! }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where project script hooks live, relative to the project root.
pub const HOOKS_DIR: &str = ".agents/hooks";

/// The project's committed policy, trusted together with the hooks.
pub const POLICY_FILE: &str = ".ahp/hooks.yaml";

/// The personal layer. It is the user's own only while git ignores it and
/// does not track it (see [`local_policy_is_repository_code`]); otherwise
/// it came with the repository and is trusted together with the hooks.
pub const LOCAL_POLICY_FILE: &str = ".ahp/hooks.local.yaml";

/// At most this many entries (files, symlinks and directories together)
/// under [`HOOKS_DIR`].
pub const MAX_ENTRIES: usize = 10_000;

/// At most this many bytes of regular-file content under [`HOOKS_DIR`]
/// (64 MiB).
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// At most this many components in a path relative to [`HOOKS_DIR`]
/// (`a.sh` has one, `lib/a.sh` two).
pub const MAX_DEPTH: usize = 16;

/// The digest of a hook set without files (no [`HOOKS_DIR`], or an empty
/// one).
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// let set = ahp_config::trust::hook_set(tmp.path()).unwrap();
/// assert_eq!(set.digest, ahp_config::trust::EMPTY_HOOK_SET_DIGEST);
/// ```
pub const EMPTY_HOOK_SET_DIGEST: &str =
    "sha256:3321c7367cf56fa3247a178b7baaf8bddddf2f937ba1acd55883a74bb083f807";

/// Tag at the start of the serialization the set digest is taken over;
/// changing the serialization means changing the tag.
const SET_DIGEST_TAG: &[u8] = b"ahp-hook-set-v1\0";

/// The version of the trust store file this code writes and reads.
const STORE_VERSION: u32 = 1;

/// A project's script hooks as found on disk, hashed.
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// let set = ahp_config::trust::hook_set(tmp.path()).unwrap();
/// assert!(set.is_empty());
/// assert!(set.digest.starts_with("sha256:"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSet {
    /// The project root, as given to [`hook_set`].
    pub project_root: PathBuf,
    /// `sha256:<hex>` over all entries (see [`hook_set`]).
    pub digest: String,
    /// The entries, sorted by [`HookFile::path`] (byte order).
    pub files: Vec<HookFile>,
}

impl HookSet {
    /// Whether the project has no script hooks (an empty set is always
    /// trusted: there is nothing to run).
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// assert!(ahp_config::trust::hook_set(tmp.path()).unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// One regular file or symlink of a [`HookSet`] (directories contribute
/// only through the paths of what they contain).
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// # std::fs::create_dir_all(tmp.path().join(".agents/hooks/lib")).unwrap();
/// std::fs::write(tmp.path().join(".agents/hooks/lib/x.sh"), "echo hi\n").unwrap();
/// let set = ahp_config::trust::hook_set(tmp.path()).unwrap();
/// let file = &set.files[0];
/// assert_eq!(file.path, ".agents/hooks/lib/x.sh");
/// assert!(file.digest.starts_with("sha256:"));
/// assert_eq!(file.symlink_target, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookFile {
    /// The path relative to the project root, `/`-separated
    /// (`.agents/hooks/lib/x.sh`, `.ahp/hooks.yaml`).
    pub path: String,
    /// `sha256:<hex>` of the content; for a symlink, of the target string.
    pub digest: String,
    /// Whether any execute bit is set (always false for a symlink and on
    /// platforms without execute bits).
    pub executable: bool,
    /// The target of a symlink, as written in the link (not resolved).
    pub symlink_target: Option<String>,
}

/// Whether a project's hook set may run.
///
/// ```
/// use ahp_config::trust::TrustStatus;
/// let status = TrustStatus::Changed {
///     trusted_at: "2026-01-01T00:00:00Z".into(),
///     changed: vec!["check.sh".into()],
/// };
/// assert!(!status.is_trusted());
/// assert!(TrustStatus::Trusted.is_trusted());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStatus {
    /// The hooks on disk are the ones the user trusted (or there are none).
    Trusted,
    /// The project's hooks were never trusted (or trust was revoked).
    Untrusted,
    /// The project was trusted, but its hooks changed since.
    Changed {
        /// When the project was last trusted (RFC 3339, UTC).
        trusted_at: String,
        /// Paths (relative to [`HOOKS_DIR`]) added, removed or modified
        /// since, sorted; modified includes a changed executable bit or
        /// symlink target.
        changed: Vec<String>,
    },
}

impl TrustStatus {
    /// Whether the hooks may run.
    ///
    /// ```
    /// assert!(!ahp_config::trust::TrustStatus::Untrusted.is_trusted());
    /// ```
    pub fn is_trusted(&self) -> bool {
        matches!(self, TrustStatus::Trusted)
    }
}

/// A failure to hash a project's hooks or to read or write the trust store.
///
/// Every variant names the path concerned and says how to fix it. The
/// underlying IO error is part of the message and kept in the `error` field;
/// it is deliberately not also exposed as [`std::error::Error::source`], so
/// that error chains do not print it twice.
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// let store_path = tmp.path().join("trust.json");
/// std::fs::write(&store_path, "{ not json").unwrap();
/// let store = ahp_config::trust::TrustStore::at(&store_path);
/// let err = store.revoke(tmp.path()).unwrap_err();
/// assert!(err.to_string().contains(&store_path.display().to_string()));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// Neither `XDG_DATA_HOME` nor `HOME` is set to an absolute path.
    #[error(
        "cannot locate the trust store: neither XDG_DATA_HOME nor HOME is set to an absolute \
         path; set HOME (or XDG_DATA_HOME) and run again"
    )]
    NoDataDir,
    /// A file or directory could not be read, created or written.
    #[error("cannot {action} `{}`: {error}; check that it exists and that you may access it", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What was being done (`read`, `create the directory`, …).
        action: &'static str,
        /// What the OS said.
        error: io::Error,
    },
    /// The trust store file is not a trust store.
    #[error(
        "the trust store `{}` is corrupt ({message}); no project counts as trusted while it is. \
         Fix the file or delete it, then trust projects again with `ahp trust`",
        path.display()
    )]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The trust store was written by a newer ahp.
    #[error(
        "the trust store `{}` has version {version}, but this ahp reads only version {}; \
         upgrade ahp, or delete the file and trust projects again",
        path.display(), STORE_VERSION
    )]
    NewerStore {
        /// The store file.
        path: PathBuf,
        /// The version found in it.
        version: u32,
    },
    /// More than [`MAX_ENTRIES`] files, symlinks and directories.
    #[error(
        "`{}` holds more than {limit} files and directories; hook sets that large are not \
         supported: remove what is not a hook",
        dir.display()
    )]
    TooManyFiles {
        /// The hooks directory.
        dir: PathBuf,
        /// [`MAX_ENTRIES`].
        limit: usize,
    },
    /// More than [`MAX_TOTAL_BYTES`] of content.
    #[error(
        "`{}` takes what `ahp trust` hashes (the policy files and the hooks) past {limit} \
         bytes; hook sets that large are not supported: remove what is not a hook or policy",
        path.display()
    )]
    TooLarge {
        /// The file at which the total went past the limit.
        path: PathBuf,
        /// [`MAX_TOTAL_BYTES`].
        limit: u64,
    },
    /// A path with more than [`MAX_DEPTH`] components.
    #[error(
        "`{}` is nested more than {limit} levels below the hooks directory; flatten it",
        path.display()
    )]
    TooDeep {
        /// The offending path.
        path: PathBuf,
        /// [`MAX_DEPTH`].
        limit: usize,
    },
    /// A file name, symlink target or project path that is not UTF-8.
    #[error("`{}` is not valid UTF-8 ({what}); rename it", path.display())]
    NotUtf8 {
        /// The offending path.
        path: PathBuf,
        /// What is not UTF-8 (`file name`, `symlink target`, `project path`).
        what: &'static str,
    },
    /// A file name or symlink target with a control character (a newline
    /// in a name would forge lines of `ahp trust --show`).
    #[error("{shown} has a control character in its {what}; rename it")]
    ControlCharacter {
        /// The path, its control characters escaped.
        shown: String,
        /// `file name` or `symlink target`.
        what: &'static str,
    },
    /// Something under the hooks directory that is neither a regular file,
    /// a directory nor a symlink (a FIFO, socket or device).
    #[error(
        "`{}` is neither a regular file, a directory nor a symlink; remove it from the hooks \
         directory",
        path.display()
    )]
    UnsupportedFileType {
        /// The offending path.
        path: PathBuf,
    },
    /// Another process held the store's lock for too long.
    #[error(
        "the trust store is locked by `{}` (another ahp is writing it); if no ahp is running, \
         delete that file and try again",
        path.display()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// A symlink under the hooks directory that resolves outside it: what
    /// it points to could change without changing the digest.
    #[error(
        "`{}` is a symlink to `{target}`, which is outside `{}`; a trusted hook set must hold \
         every file it runs: copy what it points to into the hooks directory",
        path.display(), dir.display()
    )]
    SymlinkOutside {
        /// The symlink.
        path: PathBuf,
        /// Its target, as written in the link.
        target: String,
        /// The hooks directory.
        dir: PathBuf,
    },
    /// A project policy file (or its `.ahp` directory) is a symlink: the
    /// loader would read a file the digest does not cover.
    #[error(
        "`{}` is a symlink; a project's policy must be a regular file inside the project, so \
         that `ahp trust` covers exactly what is loaded: replace the link with a copy of the file",
        path.display()
    )]
    SymlinkedPolicy {
        /// The symlink.
        path: PathBuf,
    },
    /// `<project>/.agents/hooks` exists but is not a directory.
    #[error("`{}` is not a directory; hook scripts belong in a directory there", path.display())]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
    },
}

/// Shorthand for building [`TrustError::Io`] in `map_err`.
fn io_err(path: &Path, action: &'static str) -> impl FnOnce(io::Error) -> TrustError + use<> {
    let path = path.to_path_buf();
    move |error| TrustError::Io {
        path,
        action,
        error,
    }
}

/// Hashes the script hooks of the project at `project_root`: everything
/// under `<project_root>/.agents/hooks/`.
///
/// The directory is walked recursively and the entries sorted by their
/// relative path (byte order). Each regular file contributes its path, its
/// executable bit and the SHA-256 of its content. Directories contribute
/// only through the paths of what they contain (an empty directory changes
/// nothing). `.agents/hooks` itself may be a symlink (its target's content
/// is hashed), but below it **symlinks are not followed**: a symlink
/// contributes its path and its target *string*, never the target's content.
/// So re-pointing a symlink changes the digest. A symlink to another file
/// or directory inside the hooks directory is fine, as what it reaches is
/// hashed itself; one that resolves outside it (`../../scripts/lib`,
/// `/usr/local/bin/x`, dangling or not) is an error
/// ([`TrustError::SymlinkOutside`]): editing what it points to would not
/// change the digest, so no such set can be trusted or run.
///
/// The project's `.ahp/hooks.yaml` is part of the set, and so is
/// `.ahp/hooks.local.yaml` when it came with the repository
/// ([`local_policy_is_repository_code`]); either one being a symlink, or
/// under a symlinked `.ahp`, is an error ([`check_policy_path`]), as the
/// loader refuses it too.
///
/// The set digest is the SHA-256 of an unambiguous serialization: a version
/// tag, the entry count, then per entry its length-prefixed path, a kind
/// byte (file or symlink), the executable bit, and the length-prefixed
/// content digest (file) or target (symlink).
///
/// A missing `.agents/hooks` gives an empty set with
/// [`EMPTY_HOOK_SET_DIGEST`]. Errors: more than [`MAX_ENTRIES`] entries,
/// more than [`MAX_TOTAL_BYTES`] of content, paths deeper than
/// [`MAX_DEPTH`], names that are not UTF-8, FIFOs and other special files,
/// symlinks out of the hooks directory, symlinked policy files, and IO
/// errors.
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// # let project = tmp.path();
/// std::fs::create_dir_all(project.join(".agents/hooks")).unwrap();
/// std::fs::write(project.join(".agents/hooks/b.sh"), "b").unwrap();
/// std::fs::write(project.join(".agents/hooks/a.sh"), "a").unwrap();
/// let set = ahp_config::trust::hook_set(project).unwrap();
/// let paths: Vec<_> = set.files.iter().map(|f| f.path.as_str()).collect();
/// assert_eq!(paths, [".agents/hooks/a.sh", ".agents/hooks/b.sh"]);
/// assert_eq!(set, ahp_config::trust::hook_set(project).unwrap());
/// ```
pub fn hook_set(project_root: &Path) -> Result<HookSet, TrustError> {
    hook_set_with_local(project_root, local_policy_is_repository_code(project_root))
}

/// [`hook_set`] when whether `.ahp/hooks.local.yaml` is the repository's
/// is known already (a loaded policy has asked git once:
/// `LoadedConfig::local_is_repository_code`).
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(tmp.path().join(".ahp")).unwrap();
/// std::fs::write(tmp.path().join(".ahp/hooks.local.yaml"), "hooks: {}\n").unwrap();
/// let set = ahp_config::trust::hook_set_with_local(tmp.path(), true).unwrap();
/// assert_eq!(set.files[0].path, ".ahp/hooks.local.yaml");
/// assert!(ahp_config::trust::hook_set_with_local(tmp.path(), false).unwrap().is_empty());
/// ```
pub fn hook_set_with_local(
    project_root: &Path,
    local_is_repository_code: bool,
) -> Result<HookSet, TrustError> {
    let dir = project_root.join(HOOKS_DIR);
    let files = match fs::metadata(&dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(&dir, "read")(e)),
        Ok(meta) if !meta.is_dir() => return Err(TrustError::NotADirectory { path: dir }),
        Ok(_) => {
            let mut walk = Walk {
                root: &dir,
                canonical_root: Some(fs::canonicalize(&dir).map_err(io_err(&dir, "resolve"))?),
                files: Vec::new(),
                entries: 0,
                bytes: 0,
            };
            walk.dir(&dir, HOOKS_DIR, 0)?;
            walk.files
        }
    };
    let mut files = files;
    // The committed policy can name commands (test runners, linters) and
    // adjust hooks: it is part of what the user trusts. So is a local layer
    // that came with the repository.
    let mut policies = vec![POLICY_FILE];
    if local_is_repository_code {
        policies.push(LOCAL_POLICY_FILE);
    }
    for rel in policies {
        let policy = project_root.join(rel);
        check_policy_path(project_root, rel)?;
        if let Ok(meta) = fs::symlink_metadata(&policy) {
            if meta.is_file() {
                let mut walk = Walk {
                    root: &dir,
                    canonical_root: None,
                    files: Vec::new(),
                    entries: 0,
                    bytes: 0,
                };
                let (hash, executable) = walk.hash_file(&policy)?;
                files.push(HookFile {
                    path: rel.to_string(),
                    digest: tagged(&hash),
                    executable,
                    symlink_target: None,
                });
            } else if !meta.is_dir() {
                return Err(TrustError::UnsupportedFileType { path: policy });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(HookSet {
        project_root: project_root.to_path_buf(),
        digest: set_digest(&files),
        files,
    })
}

/// The state of a walk over the hooks directory.
struct Walk<'a> {
    /// The hooks directory (for error messages).
    root: &'a Path,
    /// The hooks directory with every symlink resolved, which every
    /// symlink under it must resolve inside (`None`: hashing a policy file).
    canonical_root: Option<PathBuf>,
    /// What was found so far.
    files: Vec<HookFile>,
    /// Entries seen so far (files, symlinks, directories).
    entries: usize,
    /// Content bytes hashed so far.
    bytes: u64,
}

impl Walk<'_> {
    /// Walks `dir`, whose path relative to the hooks directory is `rel`
    /// (empty for the hooks directory itself) and has `depth` components.
    fn dir(&mut self, dir: &Path, rel: &str, depth: usize) -> Result<(), TrustError> {
        let read = fs::read_dir(dir).map_err(io_err(dir, "read the directory"))?;
        for entry in read {
            let entry = entry.map_err(io_err(dir, "read the directory"))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_str().ok_or_else(|| TrustError::NotUtf8 {
                path: path.clone(),
                what: "file name",
            })?;
            if name.chars().any(char::is_control) {
                return Err(TrustError::ControlCharacter {
                    shown: format!("{:?}", path.display().to_string()),
                    what: "file name",
                });
            }
            let rel_path = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            if depth + 1 > MAX_DEPTH {
                return Err(TrustError::TooDeep {
                    path,
                    limit: MAX_DEPTH,
                });
            }
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(TrustError::TooManyFiles {
                    dir: self.root.to_path_buf(),
                    limit: MAX_ENTRIES,
                });
            }
            // The type the directory listing gives (one stat less per
            // entry); std falls back to lstat where the filesystem does
            // not say.
            let kind = entry.file_type().map_err(io_err(&path, "read"))?;
            if kind.is_symlink() {
                let target = fs::read_link(&path).map_err(io_err(&path, "read the symlink"))?;
                let target =
                    target
                        .into_os_string()
                        .into_string()
                        .map_err(|_| TrustError::NotUtf8 {
                            path: path.clone(),
                            what: "symlink target",
                        })?;
                if target.chars().any(char::is_control) {
                    return Err(TrustError::ControlCharacter {
                        shown: format!("{:?}", path.display().to_string()),
                        what: "symlink target",
                    });
                }
                self.check_link(&path, &target)?;
                self.files.push(HookFile {
                    path: rel_path,
                    digest: tagged(&Sha256::digest(target.as_bytes())),
                    executable: false,
                    symlink_target: Some(target),
                });
            } else if kind.is_dir() {
                self.dir(&path, &rel_path, depth + 1)?;
            } else if kind.is_file() {
                let (hash, executable) = self.hash_file(&path)?;
                self.files.push(HookFile {
                    path: rel_path,
                    digest: tagged(&hash),
                    executable,
                    symlink_target: None,
                });
            } else {
                return Err(TrustError::UnsupportedFileType { path });
            }
        }
        Ok(())
    }

    /// The SHA-256 and executable bit of the regular file at `path`,
    /// counting its bytes against [`MAX_TOTAL_BYTES`].
    fn hash_file(&mut self, path: &Path) -> Result<([u8; 32], bool), TrustError> {
        let mut file = fs::File::open(path).map_err(io_err(path, "read"))?;
        // Metadata of the opened file, so that the bit and the content
        // belong to the same file even if the path was swapped meanwhile.
        let meta = file.metadata().map_err(io_err(path, "read"))?;
        if !meta.is_file() {
            return Err(TrustError::UnsupportedFileType {
                path: path.to_path_buf(),
            });
        }
        // Fail early on a file too large by its size; the bytes actually
        // read are what counts (the file may change while it is read).
        if self.bytes.saturating_add(meta.len()) > MAX_TOTAL_BYTES {
            return Err(too_large(path));
        }
        let mut hasher = Sha256::new();
        // On the stack: a fresh 64 KiB heap buffer per file cost a page
        // fault per 4 KiB on every hook call (bench/RESULTS.md).
        let mut buf = [0u8; 8 * 1024];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_err(path, "read")(e)),
            };
            self.bytes = self.bytes.saturating_add(n as u64);
            if self.bytes > MAX_TOTAL_BYTES {
                return Err(too_large(path));
            }
            hasher.update(&buf[..n]);
        }
        Ok((
            hasher.finalize().into(),
            ahp_engine::paths::is_executable(&meta),
        ))
    }

    /// Refuses a symlink that resolves outside the hooks directory: the
    /// digest covers its target string only, so the file it reaches must
    /// be hashed itself. A dangling link is judged by its target's path,
    /// since the file it names could appear later.
    fn check_link(&self, link: &Path, target: &str) -> Result<(), TrustError> {
        let Some(canonical_root) = &self.canonical_root else {
            return Ok(());
        };
        let inside = match fs::canonicalize(link) {
            Ok(resolved) => resolved.starts_with(canonical_root),
            Err(_) => {
                let joined = link.parent().unwrap_or(self.root).join(target);
                let lexical = normalize_lexically(&joined);
                lexical.starts_with(normalize_lexically(self.root))
                    || lexical.starts_with(canonical_root)
            }
        };
        if inside {
            Ok(())
        } else {
            Err(TrustError::SymlinkOutside {
                path: link.to_path_buf(),
                target: target.to_string(),
                dir: self.root.to_path_buf(),
            })
        }
    }
}

/// The error for more than [`MAX_TOTAL_BYTES`], reached at `path`.
fn too_large(path: &Path) -> TrustError {
    TrustError::TooLarge {
        path: path.to_path_buf(),
        limit: MAX_TOTAL_BYTES,
    }
}

/// `path` with `.` and `a/..` removed, without touching the filesystem.
fn normalize_lexically(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Refuses a project policy file `rel` (`.ahp/hooks.yaml`,
/// `.ahp/hooks.local.yaml`) when it or its `.ahp` directory is a symlink:
/// the loader would read bytes the digest does not cover. The loader calls
/// this too, so `ahp trust` refuses exactly what loading refuses.
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(tmp.path().join(".ahp")).unwrap();
/// # #[cfg(unix)] {
/// std::os::unix::fs::symlink("../policy.yaml", tmp.path().join(".ahp/hooks.yaml")).unwrap();
/// assert!(ahp_config::trust::check_policy_path(tmp.path(), ".ahp/hooks.yaml").is_err());
/// # }
/// assert!(ahp_config::trust::check_policy_path(tmp.path(), ".ahp/hooks.local.yaml").is_ok());
/// ```
pub fn check_policy_path(project_root: &Path, rel: &str) -> Result<(), TrustError> {
    let mut path = project_root.to_path_buf();
    for part in rel.split('/') {
        path.push(part);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(TrustError::SymlinkedPolicy { path });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(&path, "read")(e)),
        }
    }
    Ok(())
}

/// Whether `<project>/.ahp/hooks.local.yaml` exists and came with the
/// repository: git tracks it, or does not ignore it (including when the
/// project is no git repository, or git cannot say), or ignores
/// `.ahp/hooks.yaml` too (the project is inside an ignored folder, such as
/// a package in `node_modules/`, which came from elsewhere). Such a file is
/// gated by `ahp trust` like `.ahp/hooks.yaml`; an ignored, untracked one
/// beside a policy git does not ignore is the user's own. Asks `git
/// check-ignore`, only when the file exists.
///
/// ```
/// # let tmp = tempfile::tempdir().unwrap();
/// assert!(!ahp_config::trust::local_policy_is_repository_code(tmp.path()));
/// std::fs::create_dir_all(tmp.path().join(".ahp")).unwrap();
/// std::fs::write(tmp.path().join(".ahp/hooks.local.yaml"), "hooks: {}\n").unwrap();
/// // Not a git repository: nothing says the file is the user's own.
/// assert!(ahp_config::trust::local_policy_is_repository_code(tmp.path()));
/// ```
pub fn local_policy_is_repository_code(project_root: &Path) -> bool {
    if fs::symlink_metadata(project_root.join(LOCAL_POLICY_FILE)).is_err() {
        return false;
    }
    // Exit 0: ignored and untracked. A bare repository committed inside
    // the project is not asked (see `GIT_SAFE_CONFIG`): git then fails,
    // and the file counts as the repository's.
    // Prints each ignored path of the two, one a line.
    let Ok(out) = std::process::Command::new("git")
        .args(ahp_engine::GIT_SAFE_CONFIG)
        .arg("-C")
        .arg(project_root)
        .args(["check-ignore", "--"])
        .args([LOCAL_POLICY_FILE, POLICY_FILE])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return true;
    };
    let ignored = |path: &str| {
        out.status.success()
            && String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l == path)
    };
    !ignored(LOCAL_POLICY_FILE) || ignored(POLICY_FILE)
}

/// `sha256:<lowercase hex>`.
fn tagged(hash: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + hash.len() * 2);
    out.push_str("sha256:");
    for b in hash {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xf)] as char);
    }
    out
}

/// The digest of a sorted list of entries: SHA-256 over the tag, the entry
/// count, and per entry `len(path) path kind exec len(x) x` where `x` is
/// the content digest of a file or the target of a symlink; lengths and the
/// count are 8-byte big-endian integers.
fn set_digest(files: &[HookFile]) -> String {
    let mut h = Sha256::new();
    h.update(SET_DIGEST_TAG);
    h.update((files.len() as u64).to_be_bytes());
    let with_len = |h: &mut Sha256, bytes: &[u8]| {
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    };
    for f in files {
        with_len(&mut h, f.path.as_bytes());
        match &f.symlink_target {
            Some(target) => {
                h.update([b'L', 0]);
                with_len(&mut h, target.as_bytes());
            }
            None => {
                h.update([b'F', u8::from(f.executable)]);
                with_len(&mut h, f.digest.as_bytes());
            }
        }
    }
    tagged(&h.finalize())
}

/// The trust store file: which projects' hook sets the user trusted.
///
/// Only the path is held; every call reads the file afresh, so two stores
/// (or two processes) on the same file see each other's changes. Writes
/// ([`TrustStore::trust`], [`TrustStore::revoke`]) re-read and replace the
/// file atomically under a lock file (`<path>.lock`), so concurrent writers
/// do not lose each other's entries.
///
/// ```
/// let store = ahp_config::trust::TrustStore::at("/tmp/ahp-example/trust.json");
/// assert_eq!(store.path(), std::path::Path::new("/tmp/ahp-example/trust.json"));
/// ```
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// The store file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    /// [`STORE_VERSION`].
    version: u32,
    /// Canonical project root → its trusted hook set.
    #[serde(default)]
    projects: BTreeMap<String, TrustedSet>,
}

/// What is recorded when a project is trusted.
#[derive(Debug, Serialize, Deserialize)]
struct TrustedSet {
    /// The [`HookSet::digest`] trusted.
    digest: String,
    /// When (RFC 3339, UTC).
    trusted_at: String,
    /// Per-file records, to tell which files changed.
    #[serde(default)]
    files: BTreeMap<String, FileRecord>,
}

/// A [`HookFile`] as recorded.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileRecord {
    digest: String,
    #[serde(default)]
    executable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    symlink_target: Option<String>,
}

impl From<&HookFile> for FileRecord {
    fn from(f: &HookFile) -> Self {
        FileRecord {
            digest: f.digest.clone(),
            executable: f.executable,
            symlink_target: f.symlink_target.clone(),
        }
    }
}

impl TrustStore {
    /// A store kept in the file at `path` (which need not exist yet).
    ///
    /// ```
    /// let store = ahp_config::trust::TrustStore::at("trust.json");
    /// assert_eq!(store.path().to_str(), Some("trust.json"));
    /// ```
    pub fn at(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The user's store: `$XDG_DATA_HOME/ahp/trust.json`, else
    /// `$HOME/.local/share/ahp/trust.json`. See [`TrustStore::from_vars`].
    ///
    /// ```no_run
    /// let store = ahp_config::trust::TrustStore::from_env()?;
    /// println!("{}", store.path().display());
    /// # Ok::<(), ahp_config::trust::TrustError>(())
    /// ```
    pub fn from_env() -> Result<Self, TrustError> {
        Self::from_vars(
            std::env::var_os("XDG_DATA_HOME").as_deref(),
            std::env::var_os("HOME").as_deref(),
        )
    }

    /// [`TrustStore::from_env`] with the values of `XDG_DATA_HOME` and
    /// `HOME` given. As the XDG Base Directory specification says, an empty
    /// or relative `XDG_DATA_HOME` is ignored; an empty or relative `HOME`
    /// is too. Fails with [`TrustError::NoDataDir`] when neither is usable.
    ///
    /// ```
    /// use ahp_config::trust::TrustStore;
    /// use std::ffi::OsStr;
    /// use std::path::Path;
    /// let s = TrustStore::from_vars(Some(OsStr::new("/x")), Some(OsStr::new("/home/u"))).unwrap();
    /// assert_eq!(s.path(), Path::new("/x/ahp/trust.json"));
    /// let s = TrustStore::from_vars(None, Some(OsStr::new("/home/u"))).unwrap();
    /// assert_eq!(s.path(), Path::new("/home/u/.local/share/ahp/trust.json"));
    /// assert!(TrustStore::from_vars(None, None).is_err());
    /// ```
    pub fn from_vars(
        xdg_data_home: Option<&OsStr>,
        home: Option<&OsStr>,
    ) -> Result<Self, TrustError> {
        fn usable(v: Option<&OsStr>) -> Option<&Path> {
            v.map(Path::new).filter(|p| p.is_absolute())
        }
        if let Some(xdg) = usable(xdg_data_home) {
            return Ok(Self::at(xdg.join("ahp").join("trust.json")));
        }
        if let Some(home) = usable(home) {
            return Ok(Self::at(
                home.join(".local")
                    .join("share")
                    .join("ahp")
                    .join("trust.json"),
            ));
        }
        Err(TrustError::NoDataDir)
    }

    /// The store file.
    ///
    /// ```
    /// let store = ahp_config::trust::TrustStore::at("/data/trust.json");
    /// assert!(store.path().ends_with("trust.json"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `set` may run: [`TrustStatus::Trusted`] when it is empty or
    /// its digest is the one trusted for its (canonicalized) project root,
    /// [`TrustStatus::Changed`] with the changed paths when another digest
    /// was trusted, [`TrustStatus::Untrusted`] otherwise.
    ///
    /// A missing store file means nothing is trusted; a corrupt one is an
    /// error, never "everything trusted".
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # std::fs::create_dir_all(tmp.path().join(".agents/hooks")).unwrap();
    /// std::fs::write(tmp.path().join(".agents/hooks/x.sh"), "x").unwrap();
    /// let set = ahp_config::trust::hook_set(tmp.path()).unwrap();
    /// let store = ahp_config::trust::TrustStore::at(tmp.path().join("trust.json"));
    /// assert_eq!(store.status(&set).unwrap(), ahp_config::trust::TrustStatus::Untrusted);
    /// ```
    pub fn status(&self, set: &HookSet) -> Result<TrustStatus, TrustError> {
        if set.is_empty() {
            return Ok(TrustStatus::Trusted);
        }
        let key = project_key(&set.project_root)?;
        let store = self.load()?;
        let Some(trusted) = store.projects.get(&key) else {
            return Ok(TrustStatus::Untrusted);
        };
        if trusted.digest == set.digest {
            return Ok(TrustStatus::Trusted);
        }
        let now: BTreeMap<&str, FileRecord> = set
            .files
            .iter()
            .map(|f| (f.path.as_str(), FileRecord::from(f)))
            .collect();
        let mut changed = BTreeSet::new();
        for (path, record) in &trusted.files {
            if now.get(path.as_str()) != Some(record) {
                changed.insert(path.clone());
            }
        }
        for path in now.keys() {
            if !trusted.files.contains_key(*path) {
                changed.insert((*path).to_string());
            }
        }
        Ok(TrustStatus::Changed {
            trusted_at: trusted.trusted_at.clone(),
            changed: changed.into_iter().collect(),
        })
    }

    /// Records `set` as trusted for its (canonicalized) project root, with
    /// the time and the per-file digests, replacing an earlier record. The
    /// digest recorded is the one in `set`, i.e. what the user was shown,
    /// not a fresh hash of the disk.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # std::fs::create_dir_all(tmp.path().join(".agents/hooks")).unwrap();
    /// std::fs::write(tmp.path().join(".agents/hooks/x.sh"), "x").unwrap();
    /// let set = ahp_config::trust::hook_set(tmp.path()).unwrap();
    /// let store = ahp_config::trust::TrustStore::at(tmp.path().join("trust.json"));
    /// store.trust(&set).unwrap();
    /// assert!(store.status(&set).unwrap().is_trusted());
    /// ```
    pub fn trust(&self, set: &HookSet) -> Result<(), TrustError> {
        let key = project_key(&set.project_root)?;
        let record = TrustedSet {
            digest: set.digest.clone(),
            trusted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            files: set
                .files
                .iter()
                .map(|f| (f.path.clone(), FileRecord::from(f)))
                .collect(),
        };
        self.update(|store| {
            store.projects.insert(key, record);
            true
        })
        .map(drop)
    }

    /// Forgets the trust of the project at `project_root`; whether it was
    /// trusted. The store file is not written when nothing changes.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// let store = ahp_config::trust::TrustStore::at(tmp.path().join("trust.json"));
    /// assert!(!store.revoke(tmp.path()).unwrap());
    /// ```
    pub fn revoke(&self, project_root: &Path) -> Result<bool, TrustError> {
        let key = match project_key(project_root) {
            Ok(key) => key,
            // A project deleted since: its record is keyed by the absolute
            // path it had, which is the best guess left.
            Err(TrustError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                let abs =
                    std::path::absolute(project_root).map_err(io_err(project_root, "resolve"))?;
                abs.into_os_string()
                    .into_string()
                    .map_err(|_| TrustError::NotUtf8 {
                        path: project_root.to_path_buf(),
                        what: "project path",
                    })?
            }
            Err(e) => return Err(e),
        };
        // Nothing to do, nothing to lock or create.
        if !self.load()?.projects.contains_key(&key) {
            return Ok(false);
        }
        self.update(|store| store.projects.remove(&key).is_some())
    }

    /// The directory of the store file.
    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// Read-modify-write under the store's lock: applies `change` to the
    /// store as it is on disk now and writes it back if `change` says it
    /// changed something. Returns what `change` returned.
    ///
    /// Readers ([`TrustStore::status`]) take no lock: the file is replaced
    /// atomically, so they see the old or the new store, never a torn one.
    /// Writers serialize on the lock file so that two processes trusting
    /// different projects at once do not lose each other's entry.
    fn update(&self, change: impl FnOnce(&mut StoreFile) -> bool) -> Result<bool, TrustError> {
        create_private_dir(&self.dir())?;
        let _lock = StoreLock::acquire(&self.lock_path())?;
        let mut store = self.load()?;
        let changed = change(&mut store);
        if changed {
            store.version = STORE_VERSION;
            self.save(&store)?;
        }
        Ok(changed)
    }

    /// `<store>.lock`, next to the store.
    fn lock_path(&self) -> PathBuf {
        let mut name = self
            .path
            .file_name()
            .map(OsStr::to_os_string)
            .unwrap_or_else(|| "trust.json".into());
        name.push(".lock");
        self.path.with_file_name(name)
    }

    /// Reads the store; a missing file is an empty store.
    fn load(&self) -> Result<StoreFile, TrustError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(StoreFile {
                    version: STORE_VERSION,
                    projects: BTreeMap::new(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                return Err(TrustError::Corrupt {
                    path: self.path.clone(),
                    message: String::from("not UTF-8"),
                });
            }
            Err(e) => return Err(io_err(&self.path, "read")(e)),
        };
        let store: StoreFile = serde_json::from_str(&text).map_err(|e| TrustError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        if store.version > STORE_VERSION {
            return Err(TrustError::NewerStore {
                path: self.path.clone(),
                version: store.version,
            });
        }
        if store.version == 0 {
            return Err(TrustError::Corrupt {
                path: self.path.clone(),
                message: String::from("version 0"),
            });
        }
        Ok(store)
    }

    /// Writes the store atomically: a temporary file in the same directory,
    /// fsynced, then renamed over the store.
    fn save(&self, store: &StoreFile) -> Result<(), TrustError> {
        let mut json = serde_json::to_string_pretty(store).map_err(|e| TrustError::Io {
            path: self.path.clone(),
            action: "serialize",
            error: io::Error::other(e),
        })?;
        json.push('\n');

        let private = ahp_engine::paths::owner_only();
        ahp_engine::paths::replace_file(&self.path, json.as_bytes(), private)
            .map_err(io_err(&self.path, "write"))
    }
}

/// After this long a lock file is taken for the leftover of a crashed
/// process and removed (a writer holds it for milliseconds).
const LOCK_STALE: Duration = Duration::from_secs(10);

/// How long a writer waits for the lock before giving up; longer than
/// [`LOCK_STALE`], so that a stale lock is cleared rather than reported.
const LOCK_WAIT: Duration = Duration::from_secs(15);

/// The store's lock: a file created exclusively (`O_EXCL`) next to the
/// store, removed on drop.
///
/// A lock file rather than `flock`: `File::lock` needs Rust 1.89 (the
/// workspace supports 1.85) and there is no libc dependency. Its weakness
/// is a crash while holding it, handled by [`LOCK_STALE`]; two waiters
/// that both judge the same lock stale at the same instant can both
/// proceed, a race that needs a crashed writer to begin with.
struct StoreLock {
    path: PathBuf,
}

impl StoreLock {
    fn acquire(path: &Path) -> Result<Self, TrustError> {
        let start = Instant::now();
        // A little per-process jitter so that waiters do not retry in step.
        let pause = Duration::from_millis(5 + u64::from(std::process::id() % 10));
        loop {
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            match options.open(path) {
                Ok(mut file) => {
                    // For whoever finds it: who holds it (best effort).
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(StoreLock {
                        path: path.to_path_buf(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let stale = fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > LOCK_STALE);
                    if stale {
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if start.elapsed() > LOCK_WAIT {
                        return Err(TrustError::Locked {
                            path: path.to_path_buf(),
                        });
                    }
                    std::thread::sleep(pause);
                }
                Err(e) => return Err(io_err(path, "create the lock file")(e)),
            }
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The key of a project in the store: its canonical root path.
fn project_key(project_root: &Path) -> Result<String, TrustError> {
    let canonical = fs::canonicalize(project_root).map_err(io_err(project_root, "resolve"))?;
    canonical
        .into_os_string()
        .into_string()
        .map_err(|_| TrustError::NotUtf8 {
            path: project_root.to_path_buf(),
            what: "project path",
        })
}

/// Creates `dir` and missing parents, mode 0700 on unix (existing
/// directories are left as they are).
fn create_private_dir(dir: &Path) -> Result<(), TrustError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(io_err(dir, "create the directory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_empty_digest_constant_matches() {
        assert_eq!(set_digest(&[]), EMPTY_HOOK_SET_DIGEST);
    }

    #[test]
    fn trust_hex_is_lowercase_and_complete() {
        assert_eq!(tagged(&[0x00, 0xab, 0xff]), "sha256:00abff");
    }

    #[test]
    fn trust_set_digest_separates_fields() {
        // Same concatenated bytes, different split between path and target.
        let a = HookFile {
            path: "ab".into(),
            digest: "d".into(),
            executable: false,
            symlink_target: Some("c".into()),
        };
        let b = HookFile {
            path: "a".into(),
            digest: "d".into(),
            executable: false,
            symlink_target: Some("bc".into()),
        };
        assert_ne!(set_digest(std::slice::from_ref(&a)), set_digest(&[b]));
        // A file and a symlink with the same path and digest differ.
        let file = HookFile {
            symlink_target: None,
            ..a.clone()
        };
        assert_ne!(set_digest(&[a]), set_digest(&[file]));
    }

    #[test]
    fn trust_from_vars_ignores_empty_and_relative() {
        let home = Some(OsStr::new("/home/u"));
        let want = Path::new("/home/u/.local/share/ahp/trust.json");
        for xdg in ["", "relative/dir"] {
            let store = TrustStore::from_vars(Some(OsStr::new(xdg)), home).unwrap();
            assert_eq!(store.path(), want);
        }
        assert!(matches!(
            TrustStore::from_vars(Some(OsStr::new("")), Some(OsStr::new(""))),
            Err(TrustError::NoDataDir)
        ));
    }
}
