//! What ahp writes for people and pipes: standard output that ends
//! quietly when its reader has gone, text made safe for a terminal, the
//! exit codes, and the `--debug` trace.
//!
//! `println!` panics when the reader has gone (`ahp signals query | head`):
//! Rust ignores SIGPIPE, so the write fails with EPIPE. Writing through
//! [`print`] turns that into an error that [`is_closed_pipe`] recognizes,
//! and `main` ends quietly on it.

use ahp_engine::unseen::escape_controls;
use anyhow::Result;
use std::io::Write;

/// Exit code: proceed (accept, aid, control).
pub const EXIT_PROCEED: u8 = 0;

/// Exit code: usage or configuration error.
pub const EXIT_ERROR: u8 = 1;

/// Exit code: block.
pub const EXIT_BLOCK: u8 = 2;

/// Exit code: a prompt awaits an answer.
pub const EXIT_PROMPT: u8 = 3;

/// Writes `text` to stdout and flushes it.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `println!` through [`print`] and [`terminal_safe`]: a reader that went
/// away is an error the caller returns, not a panic, and a name from a
/// cloned repository cannot drive the terminal.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::ops::output::print(&$crate::ops::output::terminal_safe(&format!(
            "{}\n",
            format_args!($($arg)*)
        )))
    };
}
pub(crate) use outln;

/// [`outln!`] for a command whose exit code is its answer (`run`, `gate`,
/// `test`): a reader that went away (`ahp gate … | head -n1`) does not end
/// the command early, so its exit code still says block or failure.
macro_rules! answerln {
    ($($arg:tt)*) => {
        $crate::ops::output::keep_going($crate::ops::output::outln!($($arg)*))
    };
}
pub(crate) use answerln;

/// `result`, with a write to a closed pipe taken as done (see
/// [`answerln!`]).
pub(crate) fn keep_going(result: Result<()>) -> Result<()> {
    match result {
        Err(e) if is_closed_pipe(&e) => Ok(()),
        other => other,
    }
}

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

/// Text for a terminal, or any stream a person or agent reads: the
/// credential shapes of [`ahp_engine::secrets`] are masked, as in the log
/// (a config value, a hook's stderr or an error can quote a command with
/// its password); control characters other than newline and tab, and the
/// bidirectional overrides, are escaped (`\u{1b}`), so that a hook's
/// stderr, a value in a cloned repository's hooks.yaml or an agent's event
/// name cannot drive the terminal that shows ahp's messages. The log keeps
/// the text as masked (its JSON escapes it).
pub(crate) fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    match ahp_engine::secrets::mask(s) {
        std::borrow::Cow::Borrowed(s) => escape_controls(s),
        std::borrow::Cow::Owned(m) => std::borrow::Cow::Owned(escape_controls(&m).into_owned()),
    }
}

pub(crate) fn print_warnings(cfg_warnings: &[ahp_config::ConfigWarning]) {
    let mut err = std::io::stderr().lock();
    for w in cfg_warnings {
        let _ = writeln!(err, "warning: {}", terminal_safe(&w.to_string()));
    }
}

pub(crate) fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(|| MaskedStderr)
        .without_time()
        .with_level(false)
        .with_target(false)
        .try_init();
}

/// `--debug` output on its way to stderr, through [`terminal_safe`]: a
/// debug line quotes signals, hook output and errors. The formatter hands
/// over each event whole, in one write, so a secret is never split across
/// two calls.
struct MaskedStderr;

impl std::io::Write for MaskedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr()
            .lock()
            .write_all(terminal_safe(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
