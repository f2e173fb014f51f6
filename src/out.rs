//! Standard output for commands whose output is read by people and pipes
//! (`ahp signals …`, `ahp config`, `ahp explain`, …).
//!
//! `println!` panics when the reader has gone (`ahp signals query | head`):
//! Rust ignores SIGPIPE, so the write fails with EPIPE. Writing through
//! here turns that into an error that [`is_closed_pipe`] recognizes, and
//! `main` ends quietly on it.

use anyhow::Result;
use std::io::Write;

/// Writes `text` to stdout and flushes it.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `println!` through [`print`]: a reader that went away is an error the
/// caller returns, not a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::print(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Whether the error is a write to a pipe whose reader has closed it: the
/// reader wanted no more, which is no failure of ahp.
pub(crate) fn is_closed_pipe(e: &anyhow::Error) -> bool {
    let closed = Some(std::io::ErrorKind::BrokenPipe);
    e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().map(|io| io.kind()) == closed
            // JSON written straight to stdout fails with serde_json's error.
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == closed
    })
}
