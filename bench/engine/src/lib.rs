//! Policies and projects for the engine's benchmarks: generated hooks.yaml
//! texts of any size and temp projects with HOOK.md hooks.

use ahp::config::{Layer, SourceFile};
use ahp::LoadedConfig;
use std::fmt::Write as _;
use std::path::Path;

/// A pre-tool-use policy of `n` built-in entries: PermissionChecker and
/// SecurityScanner, then Rules entries with regex conditions that do not
/// fire on the benchmark's `ls -la src`.
pub fn policy_yaml(n: usize) -> String {
    let mut s = String::from("hooks:\n  pre-tool-use:\n");
    for i in 0..n {
        match i {
            0 => s.push_str("    - oracle: PermissionChecker\n"),
            1 => s.push_str(
                "    - oracle: SecurityScanner\n      config: { severity_threshold: high }\n",
            ),
            _ => {
                let _ = write!(
                    s,
                    "    - oracle: Rules\n      id: rule-{i}\n      config:\n        rules:\n          - condition: \"tool.input.command ~ 'forbidden-{i}\\\\s+now'\"\n            intensity: block\n            message: \"forbidden {i}\"\n"
                );
            }
        }
    }
    s
}

/// The policy as a loaded config (project layer, no files on disk).
pub fn loaded(yaml: &str) -> LoadedConfig {
    match LoadedConfig::from_files(
        ".".into(),
        vec![SourceFile {
            layer: Layer::Project,
            path: ".ahp/hooks.yaml".into(),
            text: yaml.to_string(),
        }
        .into()],
    ) {
        Ok(c) => c,
        Err(e) => panic!("the benchmark policy does not load: {e}"),
    }
}

/// Writes `n` user-level HOOK.md hooks (no trust needed) under
/// `home/.config/agents/hooks`, none matching a shell call.
pub fn write_hooks(home: &Path, n: usize) -> std::io::Result<()> {
    for i in 0..n {
        let dir = home.join(format!(".config/agents/hooks/hook-{i}"));
        std::fs::create_dir_all(dir.join("scripts"))?;
        std::fs::write(
            dir.join("HOOK.md"),
            format!(
                "---\nname: hook-{i}\ndescription: benchmark hook {i}\ntrigger: pre-tool-call\nmatcher: {{ tool: \"^Write$\" }}\ntimeout: 5000\n---\n# hook {i}\n\nNot read at load: only the frontmatter is.\n"
            ),
        )?;
        std::fs::write(dir.join("scripts/run"), "#!/bin/sh\nexit 0\n")?;
    }
    Ok(())
}
