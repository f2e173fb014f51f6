//! Helpers for end-to-end tests: an isolated HOME and project per test.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub struct Sandbox {
    pub home: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

impl Sandbox {
    /// A temp HOME with nothing in it and a temp project with `.git/`.
    pub fn new() -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".git")).unwrap();
        Sandbox { home, project }
    }

    pub fn root(&self) -> &Path {
        self.project.path()
    }

    /// Makes the project a real git repository on `main`, with a committer
    /// identity (the sandbox's `.git/` is only a project-root marker).
    pub fn git_init(&self) {
        let root = self.root();
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        git(root, &["init", "-q", "-b", "main"]);
        git(root, &["config", "user.email", "dev@example.com"]);
        git(root, &["config", "user.name", "Dev"]);
    }

    pub fn log_path(&self) -> PathBuf {
        self.root().join(".ahp/signals.jsonl")
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn write_home(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.home.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `ahp trust` for the project as it is now: its hooks, its commands and
    /// its controls run from here on (until a file changes).
    pub fn trust(&self) {
        self.ahp().arg("trust").assert().success();
    }

    /// `ahp` with HOME pointing at the sandbox and the project as cwd.
    pub fn ahp(&self) -> Command {
        let mut c = Command::cargo_bin("ahp").unwrap();
        c.env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_DATA_HOME", self.home.path().join(".local/share"))
            .env_remove("AHP_DEBUG")
            .env_remove("AHP_FAIL_CLOSED")
            .env_remove("CODEX_HOME")
            .env_remove("KIMI_CODE_HOME")
            .env_remove("AHP_ENVIRONMENT")
            // No organisation policy of the machine running the tests.
            .env("AHP_MANAGED_CONFIG", "")
            .current_dir(self.root());
        c
    }

    /// `ahp hook claude-code` with, on stdin, Claude Code's PreToolUse
    /// payload of a `tool` call with `input` in this project, in `session`.
    pub fn claude_pre_tool(&self, session: &str, tool: &str, input: serde_json::Value) -> Command {
        let payload = serde_json::json!({
            "session_id": session,
            "cwd": self.root(),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
        });
        let mut c = self.ahp();
        c.args(["hook", "claude-code"])
            .write_stdin(payload.to_string());
        c
    }

    /// `ahp run EVENT` with `ctx` (a hook context as JSON) on stdin.
    pub fn run(&self, event: &str, ctx: impl Into<Vec<u8>>) -> std::process::Output {
        self.ahp()
            .args(["run", event])
            .write_stdin(ctx)
            .output()
            .unwrap()
    }

    /// Writes a HOOK.md hook (frontmatter lines after name/description)
    /// with `scripts/run.sh`, under the user (`project == false`) or the
    /// project hooks directory.
    pub fn hook(&self, project: bool, name: &str, frontmatter: &str, script: &str) -> PathBuf {
        let base = if project {
            self.root().join(".agents/hooks")
        } else {
            self.home.path().join(".config/agents/hooks")
        };
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("HOOK.md"),
            format!(
                "---\nname: {name}\ndescription: test hook {name}\n{frontmatter}---\n# {name}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("scripts/run.sh"),
            format!("#!/usr/bin/env bash\n{script}\n"),
        )
        .unwrap();
        dir
    }

    /// Copies `examples/hooks/NAME` into the user or project hooks directory.
    pub fn example_hook(&self, project: bool, name: &str) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/hooks")
            .join(name);
        let base = if project {
            self.root().join(".agents/hooks")
        } else {
            self.home.path().join(".config/agents/hooks")
        };
        copy_dir(&src, &base.join(name));
    }

    /// The log and every rotated segment (decompressed), concatenated, and
    /// how many files.
    pub fn all_logs(&self) -> (String, usize) {
        use std::io::Read;
        let mut text = String::new();
        let mut files = 0;
        let log = self.log_path();
        for segment in ahp_signals_log::segments::rotated(&log).unwrap() {
            files += 1;
            let (mut r, _) = segment.open().unwrap();
            r.read_to_string(&mut text).unwrap();
        }
        if log.exists() {
            files += 1;
            text.push_str(&std::fs::read_to_string(&log).unwrap());
        }
        (text, files)
    }

    pub fn log_lines(&self) -> Vec<serde_json::Value> {
        match std::fs::read_to_string(self.log_path()) {
            Ok(s) => s
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

pub fn json_out(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// A small deterministic generator (xorshift64*): the same corpus every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn pick(&mut self, alphabet: &[u8]) -> char {
        alphabet[(self.next() % alphabet.len() as u64) as usize] as char
    }
}

/// Runs `git ARGS` in `dir`; a failure fails the test with git's stderr.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
