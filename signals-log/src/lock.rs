//! The file facts the writer needs under its lock: flock, identity, size.

use std::fs::File;
use std::io;
use std::path::Path;

/// Identity and size of an open file or a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Id {
    dev: u64,
    ino: u64,
}

/// What `fstat` says about the open log.
pub(crate) struct Facts {
    pub(crate) id: Id,
    pub(crate) len: u64,
    pub(crate) regular: bool,
}

#[cfg(unix)]
mod imp {
    use super::*;
    use rustix::fs::{FileType, FlockOperation, flock, fstat, stat};

    // The field types differ between platforms (u32 on some).
    #[allow(clippy::unnecessary_cast)]
    fn id(st: &rustix::fs::Stat) -> Id {
        Id {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }

    pub(crate) fn lock(file: &File) -> io::Result<()> {
        flock(file, FlockOperation::LockExclusive).map_err(io::Error::from)
    }

    pub(crate) fn lock_shared(file: &File) -> io::Result<()> {
        flock(file, FlockOperation::LockShared).map_err(io::Error::from)
    }

    pub(crate) fn unlock(file: &File) -> io::Result<()> {
        flock(file, FlockOperation::Unlock).map_err(io::Error::from)
    }

    pub(crate) fn facts(file: &File) -> io::Result<Facts> {
        let st = fstat(file).map_err(io::Error::from)?;
        Ok(Facts {
            id: id(&st),
            len: u64::try_from(st.st_size).unwrap_or(0),
            regular: FileType::from_raw_mode(st.st_mode).is_file(),
        })
    }

    /// The identity of what `path` names now; `None` if nothing.
    pub(crate) fn path_id(path: &Path) -> io::Result<Option<Id>> {
        match stat(path) {
            Ok(st) => Ok(Some(id(&st))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(not(unix))]
mod imp {
    //! Without flock: no cross-process lock; rotation by other processes
    //! is not noticed.
    use super::*;

    pub(crate) fn lock(_: &File) -> io::Result<()> {
        Ok(())
    }

    pub(crate) fn lock_shared(_: &File) -> io::Result<()> {
        Ok(())
    }

    pub(crate) fn unlock(_: &File) -> io::Result<()> {
        Ok(())
    }

    pub(crate) fn facts(file: &File) -> io::Result<Facts> {
        let m = file.metadata()?;
        Ok(Facts {
            id: Id { dev: 0, ino: 0 },
            len: m.len(),
            regular: m.is_file(),
        })
    }

    pub(crate) fn path_id(path: &Path) -> io::Result<Option<Id>> {
        Ok(path.exists().then_some(Id { dev: 0, ino: 0 }))
    }
}

pub(crate) use imp::{facts, lock, lock_shared, path_id, unlock};

/// The `O_NONBLOCK` bit for `custom_flags`: opening a FIFO for reading
/// would otherwise wait for a writer, and a hook call must never hang on
/// its log. Regular files ignore it.
#[cfg(unix)]
pub(crate) fn nonblock_flag() -> i32 {
    // The flag's value fits an i32 (it is one bit of open(2)'s flags).
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

/// Opens an existing log file for reading, refusing (without waiting on
/// it) whatever is not a regular file.
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nonblock_flag());
    }
    let file = options.open(path)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// As [`open_read`], refusing a symbolic link at `path` (`O_NOFOLLOW`):
/// for the files beside the log — its segments and cursors — which a
/// cloned repository may have committed as links to `/proc/self/environ`
/// or to a file of the user's.
pub(crate) fn open_read_nofollow(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nonblock_flag() | rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let file = options.open(path)?;
    ensure_regular(&file)?;
    Ok(file)
}

/// An error unless `file` is a regular file. A FIFO, socket or device at
/// the log's path would swallow records (or block) without a word, so it
/// is refused like a directory is.
pub(crate) fn ensure_regular(file: &File) -> io::Result<std::fs::Metadata> {
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(meta);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else {
        non_regular_kind(&kind)
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "it is {what}, not a regular file; the log is only written to a regular file: remove it or pass another --log path"
        ),
    ))
}

#[cfg(unix)]
fn non_regular_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn non_regular_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}
