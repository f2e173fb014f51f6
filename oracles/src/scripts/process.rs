//! Running a child process the way every ahp oracle that starts one needs:
//! in its own process group, stdin fed without blocking, stdout and stderr
//! captured with a cap, a timeout that kills the whole group (children
//! included), and nothing left behind — no zombie, no orphan in the group.
//!
//! Used by the `Script` oracle (HOOK.md hooks) and by the oracles that run
//! project commands (tests, linters, …).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use ahp_oracles::scripts::process::run;
//! use std::time::Duration;
//! let mut cmd = tokio::process::Command::new("sh");
//! cmd.args(["-c", "cat; echo done >&2"]);
//! let out = run(cmd, b"hello".to_vec(), Duration::from_secs(10)).await.unwrap();
//! assert!(out.status.success());
//! assert_eq!(out.stdout.text(), "hello");
//! assert_eq!(out.stderr.text().trim(), "done");
//! # });
//! ```

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

/// How much of stdout and of stderr is kept (1 MiB each); the rest is read
/// and discarded.
pub const OUTPUT_CAP: usize = 1 << 20;

/// How long a timed-out process has between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(100);

/// How long pipes are still read after the process exited and its group was
/// killed (only a process that left the group can hold them longer).
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How many SIGKILL rounds a group gets, and the pause between them.
const KILL_ROUNDS: u32 = 3;
const KILL_PAUSE: Duration = Duration::from_millis(10);

/// How long to wait for a SIGKILLed process to be reaped before leaving it
/// to tokio's background reaping.
const REAP_LIMIT: Duration = Duration::from_secs(2);

/// The suffix of a truncated stream's text.
pub const TRUNCATED_NOTE: &str = "truncated at 1 MiB";

/// Why a run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The process could not be started.
    #[error("cannot start: {0}")]
    Spawn(io::Error),
    /// Waiting for it failed.
    #[error("lost track of the process: {0}")]
    Lost(io::Error),
    /// It ran past the time limit; its group was killed.
    #[error("timed out after {} ms; its process group was killed", .0.as_millis())]
    TimedOut(Duration),
}

/// Starts `cmd` (its stdio is set here), feeds it `input` on stdin, collects
/// its output and cleans up its process group. Set the working directory and
/// environment on `cmd` before.
pub async fn run(mut cmd: Command, input: Vec<u8>, timeout: Duration) -> Result<Run, ProcessError> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);

    let mut child = cmd.spawn().map_err(ProcessError::Spawn)?;
    // From here on, dropping this future kills the whole group.
    let mut group = GroupGuard::new(child.id());
    let mut io = ChildIo {
        stdin: Feeder::new(child.stdin.take(), input),
        stdout: Capture::new(child.stdout.take()),
        stderr: Capture::new(child.stderr.take()),
    };

    let deadline = Instant::now() + timeout;
    match io.wait_exit(&mut child, deadline).await {
        Some(Ok(status)) => {
            // The process is done: nothing of it may outlive the run.
            io.stdin.close();
            let left_behind = group.kill().await;
            io.drain(Instant::now() + DRAIN_GRACE).await;
            group.disarm();
            Ok(Run {
                status,
                stdout: io.stdout.finish(),
                stderr: io.stderr.finish(),
                left_behind,
            })
        }
        Some(Err(e)) => {
            group.kill().await;
            let _ = child.start_kill();
            io.wait_exit(&mut child, Instant::now() + REAP_LIMIT).await;
            group.disarm();
            Err(ProcessError::Lost(e))
        }
        None => {
            io.stdin.close();
            group.terminate();
            let exited = io.wait_exit(&mut child, Instant::now() + TERM_GRACE).await;
            group.kill().await;
            if exited.is_none() {
                // Non-unix fallback; on unix the group kill got it already.
                let _ = child.start_kill();
                io.wait_exit(&mut child, Instant::now() + REAP_LIMIT).await;
            }
            group.disarm();
            Err(ProcessError::TimedOut(timeout))
        }
    }
}

/// Runs a shell command line (`sh -c LINE`) in `cwd` with no input.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let out = ahp_oracles::scripts::process::run_shell("echo hi && exit 3", std::path::Path::new("."), std::time::Duration::from_secs(5)).await.unwrap();
/// assert_eq!(out.status.code(), Some(3));
/// assert_eq!(out.stdout.text(), "hi\n");
/// # });
/// ```
pub async fn run_shell(
    line: &str,
    cwd: &std::path::Path,
    timeout: Duration,
) -> Result<Run, ProcessError> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line);
    cmd.current_dir(cwd);
    run(cmd, Vec::new(), timeout).await
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// How it exited.
    pub status: ExitStatus,
    /// What it wrote on stdout (capped).
    pub stdout: Captured,
    /// What it wrote on stderr (capped).
    pub stderr: Captured,
    /// Processes of the hook's group were still there after it exited (and
    /// were killed).
    pub left_behind: bool,
}

/// What was read from one pipe.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The first [`OUTPUT_CAP`] bytes.
    pub data: Vec<u8>,
    /// More was written and discarded.
    pub truncated: bool,
}

impl Captured {
    /// The bytes as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }
}

/// The child's three pipes, driven together.
struct ChildIo {
    stdin: Feeder,
    stdout: Capture<ChildStdout>,
    stderr: Capture<ChildStderr>,
}

impl ChildIo {
    /// Feeds stdin and drains stdout/stderr until the child exits (`Some`)
    /// or `until` passes (`None`). The child is reaped when it exits.
    async fn wait_exit(
        &mut self,
        child: &mut Child,
        until: Instant,
    ) -> Option<io::Result<ExitStatus>> {
        loop {
            tokio::select! {
                status = child.wait() => return Some(status),
                _ = self.stdin.step(), if self.stdin.is_open() => {}
                _ = self.stdout.step(), if self.stdout.is_open() => {}
                _ = self.stderr.step(), if self.stderr.is_open() => {}
                _ = tokio::time::sleep_until(until) => return None,
            }
        }
    }

    /// Reads stdout/stderr to their end, or until `until` passes; then
    /// gives up on them.
    async fn drain(&mut self, until: Instant) {
        while self.stdout.is_open() || self.stderr.is_open() {
            tokio::select! {
                _ = self.stdout.step(), if self.stdout.is_open() => {}
                _ = self.stderr.step(), if self.stderr.is_open() => {}
                _ = tokio::time::sleep_until(until) => break,
            }
        }
        self.stdout.reader = None;
        self.stderr.reader = None;
    }
}

/// Writes the event to the child's stdin, one cancel-safe `write` per step,
/// then closes it. A broken pipe (the hook does not read stdin, or exited)
/// just closes it.
struct Feeder {
    stdin: Option<ChildStdin>,
    data: Vec<u8>,
    pos: usize,
}

impl Feeder {
    fn new(stdin: Option<ChildStdin>, data: Vec<u8>) -> Feeder {
        Feeder {
            stdin,
            data,
            pos: 0,
        }
    }

    fn is_open(&self) -> bool {
        self.stdin.is_some()
    }

    fn close(&mut self) {
        self.stdin = None;
    }

    async fn step(&mut self) {
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        if self.pos >= self.data.len() {
            self.stdin = None; // EOF for the hook
            return;
        }
        match stdin.write(&self.data[self.pos..]).await {
            Ok(0) => self.stdin = None,
            Ok(n) => {
                self.pos += n;
                if self.pos >= self.data.len() {
                    self.stdin = None; // all written: EOF for the hook
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.stdin = None, // EPIPE and friends: the hook stopped reading
        }
    }
}

/// Reads one pipe, keeping the first [`OUTPUT_CAP`] bytes and discarding
/// the rest, one cancel-safe `read` per step.
///
/// Reads land in `data`'s spare capacity, which grows with the output: most
/// hooks print nothing or a line, so a large buffer zeroed up front per
/// pipe would be wasted.
struct Capture<R> {
    reader: Option<R>,
    data: Vec<u8>,
    truncated: bool,
    /// Where output past the cap is read to be dropped; allocated only
    /// then (an array here would sit in every run's future).
    sink: Option<Box<[u8]>>,
}

/// The first read's room; each later one doubles it, up to a pipe's size.
const FIRST_READ: usize = 4 * 1024;
const MAX_READ: usize = 64 * 1024;

impl<R: AsyncRead + Unpin> Capture<R> {
    fn new(reader: Option<R>) -> Capture<R> {
        Capture {
            reader,
            data: Vec::new(),
            truncated: false,
            sink: None,
        }
    }

    fn is_open(&self) -> bool {
        self.reader.is_some()
    }

    async fn step(&mut self) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let room = OUTPUT_CAP - self.data.len();
        let read = if room == 0 {
            // Past the cap: read and discard.
            let sink = self.sink.get_or_insert_with(|| vec![0; 8 * 1024].into());
            reader.read(sink).await.map(|n| (n, n > 0))
        } else {
            let want = self.data.len().clamp(FIRST_READ, MAX_READ).min(room);
            self.data.reserve(want);
            // `take` bounds the read to `want`, so `data` never passes the cap.
            let mut limited = (&mut *reader).take(want as u64);
            limited.read_buf(&mut self.data).await.map(|n| (n, false))
        };
        match read {
            Ok((0, _)) => self.reader = None,
            Ok((_, discarded)) => self.truncated |= discarded,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.reader = None,
        }
    }

    fn finish(self) -> Captured {
        Captured {
            data: self.data,
            truncated: self.truncated,
        }
    }
}

/// Signals the hook's process group, and SIGKILLs it when dropped while
/// armed (the evaluation was cancelled).
struct GroupGuard {
    /// The group id: the hook's pid, as it leads its own group.
    pgid: Option<u32>,
    armed: bool,
}

impl GroupGuard {
    fn new(pid: Option<u32>) -> GroupGuard {
        GroupGuard {
            pgid: pid,
            armed: true,
        }
    }

    /// SIGTERM to the group.
    fn terminate(&self) {
        self.signal(GroupSignal::Term);
    }

    /// SIGKILL to the group, a few rounds apart, to catch processes forked
    /// while it was being killed. True when the group still had a process.
    async fn kill(&self) -> bool {
        let mut found = false;
        for round in 0..KILL_ROUNDS {
            if round > 0 {
                tokio::time::sleep(KILL_PAUSE).await;
            }
            if !self.signal(GroupSignal::Kill) {
                break; // the group is gone
            }
            found = true;
        }
        found
    }

    /// Done with the group: the drop no longer kills.
    fn disarm(&mut self) {
        self.armed = false;
    }

    /// Sends `sig` to the group; false when the group no longer exists.
    #[cfg(unix)]
    fn signal(&self, sig: GroupSignal) -> bool {
        use rustix::process::{Pid, Signal as Sig, kill_process_group};
        let Some(pid) = self
            .pgid
            .and_then(|p| i32::try_from(p).ok())
            .and_then(Pid::from_raw)
        else {
            return false;
        };
        let sig = match sig {
            GroupSignal::Term => Sig::TERM,
            GroupSignal::Kill => Sig::KILL,
        };
        kill_process_group(pid, sig).is_ok()
    }

    /// Without process groups only the direct child can be killed (by
    /// `kill_on_drop` and `start_kill`).
    #[cfg(not(unix))]
    fn signal(&self, _sig: GroupSignal) -> bool {
        false
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.signal(GroupSignal::Kill);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum GroupSignal {
    Term,
    Kill,
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn output_of(script: &str) -> Run {
        runtime()
            .block_on(run_shell(
                script,
                std::path::Path::new("."),
                Duration::from_secs(20),
            ))
            .unwrap()
    }

    #[test]
    fn output_is_kept_whole_up_to_the_cap_and_marked_truncated_beyond() {
        for (len, truncated) in [
            (0, false),
            (1, false),
            (FIRST_READ + 1, false),
            (OUTPUT_CAP - 1, false),
            (OUTPUT_CAP, false),
            (OUTPUT_CAP + 1, true),
            (3 * OUTPUT_CAP, true),
        ] {
            // Each line numbers itself, so a lost or repeated chunk shows.
            let run = output_of(&format!(
                "i=0; while [ $i -lt 400000 ]; do printf '%07d\\n' $i; i=$((i+1)); done | head -c {len}; head -c {len} /dev/zero >&2"
            ));
            let want: Vec<u8> = (0..400000u32)
                .flat_map(|i| format!("{i:07}\n").into_bytes())
                .take(len.min(OUTPUT_CAP))
                .collect();
            assert_eq!(run.stdout.data.len(), want.len(), "stdout of {len}");
            assert!(run.stdout.data == want, "stdout of {len} differs");
            assert_eq!(run.stdout.truncated, truncated, "stdout of {len}");
            assert_eq!(
                run.stderr.data.len(),
                len.min(OUTPUT_CAP),
                "stderr of {len}"
            );
            assert_eq!(run.stderr.truncated, truncated, "stderr of {len}");
        }
    }
}
