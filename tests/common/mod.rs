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

    /// `ahp` with HOME pointing at the sandbox and the project as cwd.
    pub fn ahp(&self) -> Command {
        let mut c = Command::cargo_bin("ahp").unwrap();
        c.env("HOME", self.home.path())
            .env_remove("AHP_DEBUG")
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(self.root());
        c
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
