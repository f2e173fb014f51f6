//! Temporary git repositories for tests: `git init -b main`, a local
//! identity, no signing, and helpers to write files and commit.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A throwaway repository (removed on drop).
pub struct Repo {
    pub dir: TempDir,
}

impl Repo {
    /// `git init -b BRANCH` with user.name/email set in the repo.
    pub fn init_with(branch: &str) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo { dir };
        repo.git(&["init", "-q", "-b", branch]);
        repo.git(&["config", "user.name", "Test User"]);
        repo.git(&["config", "user.email", "test@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "core.autocrlf", "false"]);
        repo
    }

    /// `git init -b main`.
    pub fn init() -> Repo {
        Repo::init_with("main")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn path_buf(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Runs git in the repository (with the user's global and system
    /// config left out), panicking on failure; returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Writes a file (creating directories).
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let p = self.dir.path().join(path);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, content).unwrap();
    }

    /// Removes a file from the work tree (not from the index).
    pub fn remove(&self, path: &str) {
        fs::remove_file(self.dir.path().join(path)).unwrap();
    }

    /// `git add -A && git commit -m MESSAGE`.
    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Writes the files and commits them.
    pub fn commit_files(&self, files: &[(&str, &str)], message: &str) {
        for (p, c) in files {
            self.write(p, c);
        }
        self.commit_all(message);
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }
}
