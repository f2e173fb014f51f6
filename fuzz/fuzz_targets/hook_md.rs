//! HOOK.md discovery and frontmatter parsing, through the same code path as
//! `ahp` (the file is written under a project's `.agents/hooks/fuzz-hook/`,
//! which has a `scripts/run`, and the hooks are discovered).
#![no_main]

use ahp::config::hookmd;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn project() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        // libFuzzer exits without running destructors, so each run leaves
        // its directory behind: remove those of processes that are gone.
        const PREFIX: &str = "ahp-fuzz-hook-md-";
        if let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) {
            for e in entries.flatten() {
                let name = e.file_name();
                let pid = name.to_str().and_then(|n| n.strip_prefix(PREFIX));
                if pid.is_some_and(|p| !std::path::Path::new("/proc").join(p).exists()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("{PREFIX}{}", std::process::id()));
        let scripts = dir.join(".agents/hooks/fuzz-hook/scripts");
        if let Err(e) = std::fs::create_dir_all(&scripts) {
            panic!("cannot create {}: {e}", scripts.display());
        }
        if let Err(e) = std::fs::write(scripts.join("run"), "#!/bin/sh\nexit 0\n") {
            panic!("cannot write the hook script: {e}");
        }
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = project();
    let hook_md = dir.join(".agents/hooks/fuzz-hook/HOOK.md");
    if std::fs::write(&hook_md, data).is_err() {
        return;
    }
    let found = hookmd::discover(None, &hookmd::project_hooks_dir(dir));
    assert!(found.hooks.len() + found.errors.len() >= 1, "the hook was not read");
    for hook in &found.hooks {
        let _ = hook.effective_priority();
        let timeout = std::time::Duration::from_millis(hook.timeout_ms.unwrap_or(30_000));
        let _ = hook.oracle_config(dir, timeout);
    }
});
