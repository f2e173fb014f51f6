//! `ahp install` / `ahp uninstall` / `ahp doctor`, end to end: install into
//! a user's existing config, run the installed command with an agent
//! fixture, uninstall and get the original bytes back.

use crate::common::{Sandbox, stderr, stdout};
use std::path::{Path, PathBuf};

fn fixture(agent: &str, name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(agent)
            .join(name),
    )
    .unwrap()
}

/// A user's config with their own settings, hooks and (where the format
/// allows) comments.
fn user_config(agent: &str) -> (&'static str, &'static str, bool) {
    // (relative path, text, under home)
    match agent {
        "claude-code" => (
            ".claude/settings.json",
            "{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"./my-guard.sh\"}]\n            }\n        ]\n    }\n}\n",
            false,
        ),
        "codex" => (
            ".codex/hooks.json",
            "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"notify done\", \"timeout\": 5}]}\n    ]\n  }\n}\n",
            false,
        ),
        "gemini" => (
            ".gemini/settings.json",
            "// my gemini settings\n{\n  \"theme\": \"GitHub\", // the light one\n  \"general\": {\n    \"vimMode\": true\n  }\n}\n",
            false,
        ),
        "copilot" => (".github/hooks/ahp.json", "", false),
        "cursor" => (
            ".cursor/hooks.json",
            "{\n  // team hooks\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [{ \"command\": \"./format.sh\" }]\n  }\n}\n",
            false,
        ),
        "kimi" => (
            ".kimi/config.toml",
            "# Kimi settings\ndefault_model = \"kimi-k2\"  # fast\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"notify-send done\"\ntimeout = 5\n\n[loop_control]\nmax_steps_per_run = 100\n",
            true,
        ),
        "qwen" => (
            ".qwen/settings.json",
            "{\n  \"model\": {\"name\": \"qwen3-coder-plus\"},\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}}\n}\n",
            false,
        ),
        // Droid's hooks.json is keyed by event name: a user's own hook sits
        // at the top of the file beside ahp's.
        "droid" => (
            ".factory/hooks.json",
            "{\n  \"PostToolUse\": [\n    {\"matcher\": \"Create\", \"hooks\": [{\"type\": \"command\", \"command\": \"./fmt.sh\"}]}\n  ]\n}\n",
            false,
        ),
        "windsurf" => (
            ".windsurf/hooks.json",
            "{\n  \"hooks\": {\n    \"post_write_code\": [{\"command\": \"./fmt.sh\", \"show_output\": false}]\n  }\n}\n",
            false,
        ),
        // OpenCode's plugin is a whole file of ahp's own.
        "opencode" => (".opencode/plugins/ahp.js", "", false),
        _ => unreachable!(),
    }
}

fn pre_tool_fixture(agent: &str) -> &'static str {
    match agent {
        "claude-code" | "codex" | "kimi" | "qwen" | "droid" | "opencode" => "PreToolUse.json",
        "gemini" => "BeforeTool.json",
        "windsurf" => "pre_run_command.json",
        "copilot" => "preToolUse.json",
        "cursor" => "beforeShellExecution.json",
        _ => unreachable!(),
    }
}

fn config_path(sb: &Sandbox, rel: &str, home: bool) -> PathBuf {
    if home {
        sb.home.path().join(rel)
    } else {
        sb.root().join(rel)
    }
}

/// The installed command for the fixture's event, read back from the file.
fn installed_command(agent: &str, text: &str) -> String {
    let line = text
        .lines()
        .find(|l| {
            l.contains(&format!("\"ahp hook {agent}"))
                && (agent != "copilot" || l.contains("preToolUse"))
        })
        .unwrap_or_else(|| panic!("no ahp hook in:\n{text}"));
    let start = line.find("ahp hook").unwrap();
    let rest = &line[start..];
    rest[..rest.find('"').unwrap()].to_string()
}

#[test]
fn every_agent_installs_runs_and_uninstalls_byte_for_byte() {
    for agent in [
        "claude-code",
        "codex",
        "gemini",
        "copilot",
        "cursor",
        "kimi",
        "qwen",
        "droid",
        "opencode",
        "windsurf",
    ] {
        let sb = Sandbox::new();
        let (rel, text, home) = user_config(agent);
        let path = config_path(&sb, rel, home);
        if !text.is_empty() {
            if home {
                sb.write_home(rel, text);
            } else {
                sb.write(rel, text);
            }
        }
        let out = sb.ahp().args(["install", agent]).output().unwrap();
        assert!(out.status.success(), "{agent}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("installed"),
            "{agent}: {}",
            stdout(&out)
        );
        let installed = std::fs::read_to_string(&path).unwrap();
        if !text.is_empty() {
            // The user's own lines are all still there (a one-line list
            // of hooks may have ahp's appended to it).
            for line in text
                .lines()
                .filter(|l| !l.trim_end().ends_with(['[', ']']) && !l.trim_end().ends_with("],"))
            {
                assert!(
                    installed.contains(line.trim()),
                    "{agent}: lost `{line}`:\n{installed}"
                );
            }
        }
        // Twice = the same bytes.
        let out = sb.ahp().args(["install", agent]).output().unwrap();
        assert!(out.status.success());
        assert!(
            stdout(&out).contains("nothing changed"),
            "{agent}: {}",
            stdout(&out)
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            installed,
            "{agent}"
        );

        // The installed command blocks `rm -rf /`.
        let cmd = installed_command(agent, &installed);
        let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
        let out = sb
            .ahp()
            .args(&args)
            .arg("--no-log")
            .write_stdin(fixture(agent, pre_tool_fixture(agent)))
            .output()
            .unwrap();
        let said = format!("{}{}", stdout(&out), stderr(&out));
        let denied = match agent {
            "kimi" => {
                said.contains("\"permissionDecision\":\"deny\"") || out.status.code() == Some(2)
            }
            "cursor" => said.contains("\"permission\":\"deny\""),
            "windsurf" => out.status.code() == Some(2),
            "gemini" => said.contains("\"decision\":\"deny\""),
            _ => said.contains("\"permissionDecision\":\"deny\""),
        };
        assert!(denied, "{agent} `{cmd}` did not deny: {said}");

        let out = sb.ahp().args(["uninstall", agent]).output().unwrap();
        assert!(out.status.success(), "{agent}: {}", stderr(&out));
        if text.is_empty() {
            assert!(
                !path.exists(),
                "{agent}: the file ahp created is left behind"
            );
        } else {
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{agent}");
        }
    }
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let sb = Sandbox::new();
    let (rel, text, _) = user_config("cursor");
    let path = sb.write(rel, text);
    let out = sb
        .ahp()
        .args(["install", "cursor", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.starts_with(&format!(
            "--- {}\n+++ {}\n@@ ",
            path.display(),
            path.display()
        )),
        "{diff}"
    );
    assert!(
        diff.contains("+    \"beforeShellExecution\": [\n"),
        "{diff}"
    );
    assert!(
        diff.contains("+        \"command\": \"ahp hook cursor\""),
        "{diff}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // A new file: the diff is from /dev/null and no directory is made.
    let out = sb
        .ahp()
        .args(["install", "codex", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).starts_with("--- /dev/null\n"),
        "{}",
        stdout(&out)
    );
    assert!(!sb.root().join(".codex").exists());

    // Uninstall too.
    sb.ahp().args(["install", "cursor"]).assert().success();
    let installed = std::fs::read_to_string(&path).unwrap();
    let out = sb
        .ahp()
        .args(["uninstall", "cursor", "--dry-run"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("-        \"command\": \"ahp hook cursor\""));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
}

#[test]
fn a_malformed_config_is_refused_with_file_line_and_column() {
    let sb = Sandbox::new();
    let bad = "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n";
    let path = sb.write(".claude/settings.json", bad);
    let out = sb.ahp().args(["install", "claude-code"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3:3:", path.display())), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);

    let toml = "[ui\ntheme = 1\n";
    let tpath = sb.write_home(".kimi/config.toml", toml);
    let out = sb.ahp().args(["install", "kimi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{}:1:", tpath.display())),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&tpath).unwrap(), toml);

    // `hooks` of the wrong type is named too.
    sb.write(".gemini/settings.json", "{\"hooks\": []}");
    let out = sb.ahp().args(["install", "gemini"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(":1:11: `hooks` must be an object"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn uninstall_keeps_the_users_own_hook_on_the_same_event() {
    let sb = Sandbox::new();
    let (rel, text, _) = user_config("claude-code");
    let path = sb.write(rel, text);
    sb.ahp().args(["install", "claude-code"]).assert().success();
    // The user adds another hook of their own after ahp's.
    let installed = std::fs::read_to_string(&path).unwrap();
    let edited = installed.replacen(
        "\"command\": \"./my-guard.sh\"}",
        "\"command\": \"./my-guard.sh\"}, {\"type\": \"command\", \"command\": \"./audit.sh\"}",
        1,
    );
    assert_ne!(edited, installed);
    std::fs::write(&path, &edited).unwrap();
    sb.ahp()
        .args(["uninstall", "claude-code"])
        .assert()
        .success();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains("ahp hook"), "{after}");
    assert!(
        after.contains("./my-guard.sh") && after.contains("./audit.sh"),
        "{after}"
    );
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(v["model"], "opus");
}

#[test]
fn scopes_files_and_refusals() {
    let sb = Sandbox::new();
    sb.ahp()
        .args(["install", "claude-code", "--scope", "local"])
        .assert()
        .success();
    assert!(sb.root().join(".claude/settings.local.json").is_file());
    sb.ahp()
        .args(["install", "gemini", "--scope", "user"])
        .assert()
        .success();
    let g = std::fs::read_to_string(sb.home.path().join(".gemini/settings.json")).unwrap();
    assert!(
        g.contains("\"timeout\": 600000"),
        "gemini timeouts are in ms: {g}"
    );
    sb.ahp()
        .args(["install", "copilot", "--scope", "user"])
        .assert()
        .success();
    assert!(sb.home.path().join(".copilot/hooks/ahp.json").is_file());

    let out = sb
        .ahp()
        .args(["install", "kimi", "--scope", "project"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("kimi has no project hook config"),
        "{}",
        stderr(&out)
    );
    let out = sb.ahp().args(["install", "agenthooks"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("would make every ahp dispatch start ahp again"));

    // Codex: the trust step is said.
    let out = sb.ahp().args(["install", "codex"]).output().unwrap();
    assert!(stdout(&out).contains("/hooks"), "{}", stdout(&out));
}

#[test]
fn a_custom_command_is_installed_and_recognised_by_uninstall() {
    let sb = Sandbox::new();
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let exe = exe.to_str().unwrap();
    sb.ahp()
        .args(["install", "cursor", "--command", exe])
        .assert()
        .success();
    let text = std::fs::read_to_string(sb.root().join(".cursor/hooks.json")).unwrap();
    assert!(
        text.contains(&format!("\"command\": \"{exe} hook cursor\"")),
        "{text}"
    );
    // Uninstall with the default command does not touch it.
    let out = sb.ahp().args(["uninstall", "cursor"]).output().unwrap();
    assert!(stdout(&out).contains("nothing changed"));
    sb.ahp()
        .args(["uninstall", "cursor", "--command", exe])
        .assert()
        .success();
    assert!(!sb.root().join(".cursor/hooks.json").exists());
}

#[test]
fn doctor_reports_a_missing_ahp_and_an_untrusted_project() {
    let sb = Sandbox::new();
    sb.ahp().args(["install", "claude-code"]).assert().success();
    sb.hook(true, "guard", "trigger: pre-tool-call\n", "exit 0");
    let out = sb
        .ahp()
        .args(["doctor"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("`ahp` is not on PATH"), "{text}");
    assert!(text.contains("PreToolUse"), "{text}");
    assert!(text.contains("not trusted"), "{text}");

    // With ahp resolvable and the project trusted, all is well.
    sb.ahp().args(["trust"]).assert().success();
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let dir = exe.parent().unwrap();
    let out = sb
        .ahp()
        .args(["doctor", "--format", "json"])
        .env("PATH", dir)
        .output()
        .unwrap();
    let v = crate::common::json_out(&out);
    assert_eq!(v["problems"], 0, "{v}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn doctor_names_why_cursor_hooks_would_not_fire() {
    let sb = Sandbox::new();
    sb.write(
        ".cursor/hooks.json",
        "{\"hooks\": {\"stop\": [{\"command\": \"ahp hook cursor\"}]}}",
    );
    let out = sb.ahp().args(["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("has no `\"version\": 1`"),
        "{}",
        stdout(&out)
    );
    sb.write(".cursor/hooks.json", "{\"hooks\": {\"stop\": [");
    let out = sb.ahp().args(["doctor"]).output().unwrap();
    assert!(stdout(&out).contains("hooks.json:1:"), "{}", stdout(&out));

    // No agent has ahp's hooks at all: that is a problem too.
    let sb = Sandbox::new();
    let out = sb.ahp().args(["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("no agent config has ahp's hooks"));
}

/// A repository that commits its agent config as a symlink (to a file of
/// the user's, or through a linked directory) does not get ahp's install
/// written there: the project scope is the repository's, so the write is
/// refused with the path, and the linked file is untouched.
#[cfg(unix)]
#[test]
fn a_committed_symlink_does_not_redirect_a_project_install() {
    use std::os::unix::fs::symlink;
    for linked_dir in [false, true] {
        let sb = Sandbox::new();
        let theirs = sb.write_home(
            "dotfiles/claude/settings.json",
            "{\n  \"model\": \"opus\"\n}\n",
        );
        if linked_dir {
            symlink(theirs.parent().unwrap(), sb.root().join(".claude")).unwrap();
        } else {
            std::fs::create_dir_all(sb.root().join(".claude")).unwrap();
            symlink(&theirs, sb.root().join(".claude/settings.json")).unwrap();
        }
        let before = std::fs::read(&theirs).unwrap();
        let out = sb
            .ahp()
            .args(["install", "claude-code", "--scope", "project"])
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
        let err = stderr(&out);
        let want = if linked_dir {
            "leads, outside the project"
        } else {
            "refusing to write through a symlink: .claude/settings.json -> "
        };
        assert!(err.contains(want), "want `{want}` in {err}");
        assert_eq!(std::fs::read(&theirs).unwrap(), before);
    }
}

/// `hooks.state` keys Codex gives ahp's handlers in `file`: the file's
/// path, the event in snake_case, the group and the handler index.
fn codex_state_keys(file: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut keys = Vec::new();
    for (event, groups) in v["hooks"].as_object().unwrap() {
        let mut label = String::new();
        for (i, c) in event.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                label.push('_');
            }
            label.push(c.to_ascii_lowercase());
        }
        for (g, group) in groups.as_array().unwrap().iter().enumerate() {
            for (h, handler) in group["hooks"].as_array().unwrap().iter().enumerate() {
                if handler["command"].as_str().unwrap().contains("hook codex") {
                    keys.push(format!("{}:{label}:{g}:{h}", file.display()));
                }
            }
        }
    }
    keys
}

/// Codex skips a project's hooks until the project is trusted, and any hook
/// until the user trusted it in /hooks: `ahp doctor` reads both from
/// `$CODEX_HOME/config.toml` and says the exact step; `ahp install codex`
/// says the same.
#[test]
fn doctor_live_runs_the_installed_hook_as_the_agent_would() {
    let sb = Sandbox::new();
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let bin_dir = exe.parent().unwrap().to_path_buf();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    let run = |cmd: &[&str]| sb.ahp().args(cmd).env("PATH", &path).output().unwrap();
    for agent in ["claude-code", "gemini", "cursor", "copilot"] {
        assert!(run(&["install", agent]).status.success(), "{agent}");
        let out = run(&["doctor", "--live", agent]);
        let text = stdout(&out);
        let live: Vec<&str> = text.lines().filter(|l| l.contains("(live)")).collect();
        assert_eq!(live.len(), 2, "{agent}: {text}");
        assert!(live.iter().all(|l| l.starts_with("ok")), "{agent}: {text}");
        assert!(
            live[0].contains("`rm -rf ~/`") && live[0].contains(" ms, said "),
            "{agent}: {text}"
        );
    }
    // A hook command that does not answer as ahp does is a problem.
    let settings = sb.root().join(".claude/settings.json");
    let installed = std::fs::read_to_string(&settings).unwrap();
    let set = |command: &str| {
        std::fs::write(
            &settings,
            installed.replace("\"ahp hook claude-code\"", &format!("{command:?}")),
        )
        .unwrap();
        stdout(&run(&["doctor", "--live", "claude-code"]))
    };
    let executable = |path: &std::path::Path| {
        let mut mode = std::fs::metadata(path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
        std::fs::set_permissions(path, mode).unwrap();
    };
    let quiet = sb.write_home("bin/ahp", "#!/bin/sh\ncat >/dev/null\n");
    executable(&quiet);
    let text = set(&format!("{} hook claude-code", quiet.display()));
    assert!(
        text.contains("problem claude-code (live)") && text.contains("did not refuse"),
        "{text}"
    );
    // The repository's agent config chose the command: doctor runs only a
    // plain `CMD hook AGENT`, and no program of the repository's own.
    let marker = sb.root().join("pwned");
    sb.write("hook", "touch pwned\n");
    sb.write("Makefile", "hook:\n\ttouch pwned\n");
    std::fs::create_dir_all(sb.root().join("sh")).unwrap();
    std::os::unix::fs::symlink("/bin/sh", sb.root().join("sh/ahp")).unwrap();
    executable(&sb.write("bin/ahp", "#!/bin/sh\ntouch pwned\n"));
    for (command, why) in [
        ("ahp hook claude-code && touch pwned", "not the `CMD hook"),
        ("ahp hook claude-code $(touch pwned)", "not the `CMD hook"),
        ("ahp hook claude-code --log pwned", "not the `CMD hook"),
        ("touch pwned", "no ahp hook on PreToolUse"),
        ("./bin/ahp hook claude-code", "a relative path"),
        ("../bin/ahp hook claude-code", "a relative path"),
        ("./sh/ahp hook claude-code", "a relative path"),
        ("sh hook claude-code", "is not `ahp`"),
        ("make hook claude-code", "is not `ahp`"),
    ] {
        let text = set(command);
        assert!(
            text.contains("problem claude-code (live)") && text.contains(why),
            "{command}: {text}"
        );
        assert!(!marker.exists(), "{command} ran");
    }
    // Written absolute, inside the project or the git work tree around it.
    std::fs::create_dir_all(sb.root().join(".git")).unwrap();
    let inside = format!("{} hook claude-code", sb.root().join("bin/ahp").display());
    let text = set(&inside);
    assert!(text.contains("inside the project"), "{text}");
    assert!(!marker.exists(), "{inside} ran");
}

#[test]
fn doctor_says_gemini_leaves_an_untrusted_folders_hooks_out() {
    let sb = Sandbox::new();
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let bin_dir = exe.parent().unwrap().to_path_buf();
    let run = |cmd: &[&str]| {
        sb.ahp()
            .args(cmd)
            .env("PATH", &bin_dir)
            .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
            .output()
            .unwrap()
    };
    assert!(run(&["install", "gemini"]).status.success());
    let text = stdout(&run(&["doctor"]));
    assert!(
        text.contains("Gemini CLI does not trust") && text.contains("TRUST_FOLDER"),
        "{text}"
    );
    let root = sb.root().canonicalize().unwrap();
    sb.write_home(
        ".gemini/trustedFolders.json",
        &serde_json::json!({ root.parent().unwrap().join("x").to_string_lossy(): "TRUST_PARENT" })
            .to_string(),
    );
    let text = stdout(&run(&["doctor"]));
    assert!(text.contains("Gemini CLI trusts this folder"), "{text}");
    sb.write_home(
        ".gemini/trustedFolders.json",
        &serde_json::json!({
            root.parent().unwrap().join("x").to_string_lossy(): "TRUST_PARENT",
            root.to_string_lossy(): "DO_NOT_TRUST",
        })
        .to_string(),
    );
    let text = stdout(&run(&["doctor"]));
    assert!(text.contains("Gemini CLI does not trust"), "{text}");
}

/// OpenCode's plugin is a file of ahp's own: a file of the same name that
/// is not ahp's is never overwritten or removed, `--command` is what the
/// plugin runs, and doctor notices a plugin this ahp would not write.
#[test]
fn opencode_plugin_is_ahps_own_file() {
    let sb = Sandbox::new();
    let plugin = sb.root().join(".opencode/plugins/ahp.js");
    sb.write(
        ".opencode/plugins/ahp.js",
        "export const Mine = async () => ({});\n",
    );
    let out = sb.ahp().args(["install", "opencode"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not ahp's plugin"),
        "{}",
        stderr(&out)
    );
    let out = sb.ahp().args(["uninstall", "opencode"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({});\n"
    );
    std::fs::remove_file(&plugin).unwrap();

    let out = sb
        .ahp()
        .args(["install", "opencode", "--command", "/opt/tools/ahp"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert!(
        text.contains(r#"const COMMAND = "/opt/tools/ahp hook opencode";"#),
        "{text}"
    );
    // Edited (or written by another version): doctor says how to renew it.
    std::fs::write(&plugin, text.replace("timeout: 600000", "timeout: 1")).unwrap();
    let said = stdout(&sb.ahp().arg("doctor").output().unwrap());
    assert!(said.contains("is not the plugin this ahp writes"), "{said}");
    let out = sb
        .ahp()
        .args(["uninstall", "opencode", "--command", "/opt/tools/ahp"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!plugin.exists());
}

/// Droid ignores a `hooks` wrapper in hooks.json without a word: doctor
/// says so, and install puts ahp's hooks where Droid reads them.
#[test]
fn doctor_flags_a_hooks_wrapper_droid_would_ignore() {
    let sb = Sandbox::new();
    sb.write(
        ".factory/hooks.json",
        "{\"hooks\": {\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}]}}\n",
    );
    assert!(
        sb.ahp()
            .args(["install", "droid"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let text = std::fs::read_to_string(sb.root().join(".factory/hooks.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["PreToolUse"][0]["hooks"][0]["command"] == "ahp hook droid",
        "{text}"
    );
    let out = sb.ahp().arg("doctor").output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("has a `hooks` key") && !out.status.success(),
        "{text}"
    );

    // ahp's own hooks inside the wrapper alone: said too.
    let sb = Sandbox::new();
    sb.write(
        ".factory/hooks.json",
        "{\"hooks\": {\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"ahp hook droid\"}]}]}}\n",
    );
    let text = stdout(&sb.ahp().arg("doctor").output().unwrap());
    assert!(text.contains("has a `hooks` key"), "{text}");
}

/// Droid reads the hooks of settings.json only while there is no
/// hooks.json: creating one would switch the user's hooks off, so install
/// refuses, and doctor says when it already happened.
#[test]
fn droid_install_never_hides_the_hooks_in_settings_json() {
    let sb = Sandbox::new();
    let settings = "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Execute\", \"hooks\": [{\"type\": \"command\", \"command\": \"./my-guard.sh\"}]}]}}\n";
    sb.write(".factory/settings.json", settings);
    let out = sb.ahp().args(["install", "droid"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("would switch them off"),
        "{}",
        stderr(&out)
    );
    assert!(!sb.root().join(".factory/hooks.json").exists());
    sb.write(".factory/hooks.json", "{}\n");
    let text = stdout(&sb.ahp().arg("doctor").output().unwrap());
    assert!(text.contains("do not run"), "{text}");
}

/// Copilot CLI leaves an untrusted repository's hooks out without a word
/// (found by the live suite): `ahp doctor` reads its `trustedFolders`, where
/// a folder trusts everything below it.
#[test]
fn doctor_says_copilot_leaves_an_untrusted_folders_hooks_out() {
    let sb = Sandbox::new();
    let run = |cmd: &[&str]| {
        sb.ahp()
            .args(cmd)
            .env_remove("COPILOT_HOME")
            .output()
            .unwrap()
    };
    assert!(run(&["install", "copilot"]).status.success());
    let text = stdout(&run(&["doctor"]));
    assert!(
        text.contains("Copilot CLI does not trust") && text.contains("trustedFolders"),
        "{text}"
    );
    let root = sb.root().canonicalize().unwrap();
    let config = |folders: serde_json::Value| {
        sb.write_home(
            ".copilot/config.json",
            &serde_json::json!({ "trustedFolders": folders }).to_string(),
        )
    };
    config(serde_json::json!([root.join("elsewhere")]));
    assert!(stdout(&run(&["doctor"])).contains("Copilot CLI does not trust"));
    config(serde_json::json!([root.parent().unwrap()]));
    let text = stdout(&run(&["doctor"]));
    assert!(text.contains("Copilot CLI trusts this folder"), "{text}");
    // An odd entry beside it, and a link to the folder, still count.
    let link = sb.home.path().join("link-to-project");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    config(serde_json::json!([5, link]));
    let text = stdout(&run(&["doctor"]));
    assert!(text.contains("Copilot CLI trusts this folder"), "{text}");
    sb.write_home(".copilot/config.json", "{ not json");
    let text = stdout(&run(&["doctor"]));
    assert!(text.contains("not JSON"), "{text}");
}

#[test]
fn doctor_reads_codex_hook_trust() {
    let sb = Sandbox::new();
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let bin_dir = exe.parent().unwrap().to_path_buf();
    let codex_home = sb.home.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    let root = sb.root().to_string_lossy().to_string();
    let trust_line = format!("[projects.\"{root}\"]\ntrust_level = \"trusted\"");
    let run = |cmd: &[&str]| {
        sb.ahp()
            .args(cmd)
            .env("CODEX_HOME", &codex_home)
            .env("PATH", &bin_dir)
            .output()
            .unwrap()
    };

    // Installed, nothing trusted: install and doctor both say what to do.
    let out = run(&["install", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains(&trust_line), "{said}");
    assert!(
        said.contains("open /hooks") && said.contains("PermissionRequest"),
        "{said}"
    );
    let out = run(&["doctor"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("all good"), "{text}");
    assert!(text.contains(&trust_line), "{text}");
    assert!(
        text.contains("Codex has not trusted ahp's hooks on")
            && text.contains(&config.display().to_string()),
        "{text}"
    );

    // The project trusted, the hooks not yet: still a problem, only that one.
    std::fs::write(&config, format!("model = \"gpt-5\"\n\n{trust_line}\n")).unwrap();
    let out = run(&["doctor", "--format", "json"]);
    let v = crate::common::json_out(&out);
    assert_eq!(v["problems"], 1, "{v}");
    assert!(v.to_string().contains("open /hooks"), "{v}");

    // Every ahp hook trusted (as Codex's /hooks writes it): all good.
    let hooks = sb.root().join(".codex/hooks.json");
    let keys = codex_state_keys(&hooks);
    assert!(keys.len() >= 10, "{keys:?}");
    let mut text = format!("{trust_line}\n");
    for k in &keys {
        text.push_str(&format!(
            "\n[hooks.state.\"{k}\"]\ntrusted_hash = \"sha256:0123\"\n"
        ));
    }
    std::fs::write(&config, &text).unwrap();
    let out = run(&["doctor"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Codex trusts ahp's"),
        "{}",
        stdout(&out)
    );
    let out = run(&["install", "codex"]);
    assert!(!stdout(&out).contains("open /hooks"), "{}", stdout(&out));

    // One switched off in /hooks: a problem naming it.
    let off = text.replacen(
        "trusted_hash = \"sha256:0123\"",
        "enabled = false\ntrusted_hash = \"sha256:0123\"",
        1,
    );
    std::fs::write(&config, off).unwrap();
    let out = run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("switched off"), "{}", stdout(&out));

    // The project marked untrusted: the fix names that entry.
    let untrusted = text.replace("trust_level = \"trusted\"", "trust_level = \"untrusted\"");
    std::fs::write(&config, untrusted).unwrap();
    let out = run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("trust_level = \"untrusted\"`: set it to \"trusted\""),
        "{}",
        stdout(&out)
    );

    // Codex's config broken: named with line and column, never "all good".
    std::fs::write(&config, "[projects\n").unwrap();
    let out = run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("config.toml:1:"), "{}", stdout(&out));
}

/// User-scope Codex hooks live in CODEX_HOME, where Codex reads them; they
/// need no project trust, only their own.
#[test]
fn codex_user_hooks_go_to_codex_home() {
    let sb = Sandbox::new();
    let codex_home = sb.home.path().join("elsewhere");
    let out = sb
        .ahp()
        .args(["install", "codex", "--scope", "user"])
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(codex_home.join("hooks.json").is_file());
    assert!(!sb.home.path().join(".codex/hooks.json").exists());
    let said = stdout(&out);
    assert!(
        said.contains("open /hooks") && !said.contains("[projects."),
        "{said}"
    );
    sb.ahp()
        .args(["uninstall", "codex", "--scope", "user"])
        .env("CODEX_HOME", &codex_home)
        .assert()
        .success();
    assert!(!codex_home.join("hooks.json").exists());
}

/// A Codex config (or an agent's settings file) that is a FIFO or a device
/// is refused before it is opened: opening a FIFO waits for a writer, and
/// `ahp doctor` / `ahp install codex` must answer, not hang.
#[cfg(unix)]
#[test]
fn doctor_and_install_do_not_hang_on_a_fifo_codex_config() {
    let sb = Sandbox::new();
    let codex_home = sb.home.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let fifo = codex_home.join("config.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink(&fifo, codex_home.join("config.toml")).unwrap();
    std::fs::create_dir_all(sb.root().join(".claude")).unwrap();
    std::os::unix::fs::symlink(&fifo, sb.root().join(".claude/settings.json")).unwrap();
    let run = |cmd: &[&str]| {
        sb.ahp()
            .args(cmd)
            .env("CODEX_HOME", &codex_home)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap()
    };
    let out = run(&["install", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["doctor"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("config.toml: not a regular file")
            && text.contains("settings.json: not a regular file"),
        "{text}"
    );
}

/// A value from Codex's config quoted by `ahp install codex` cannot drive
/// the terminal: control characters are escaped, as `ahp doctor` does.
#[test]
fn install_codex_escapes_control_characters_from_codex_config() {
    let sb = Sandbox::new();
    let codex_home = sb.home.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let root = sb.root().to_string_lossy().to_string();
    std::fs::write(
        codex_home.join("config.toml"),
        format!("[projects.\"{root}\"]\ntrust_level = \"\\u001b]0;pwned\\u0007\\u001b[2Jnope\"\n"),
    )
    .unwrap();
    for cmd in [&["install", "codex"][..], &["doctor"][..]] {
        let out = sb
            .ahp()
            .args(cmd)
            .env("CODEX_HOME", &codex_home)
            .output()
            .unwrap();
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(text.contains("nope"), "{cmd:?}: {text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{cmd:?}: {text:?}"
        );
    }
}

#[test]
fn install_refuses_an_agent_config_that_is_not_a_regular_file() {
    let sb = Sandbox::new();
    let settings = sb.home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let fifo = sb.home.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink(&fifo, &settings).unwrap();
    let out = sb
        .ahp()
        .args(["install", "claude-code", "--scope", "user"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a regular file"),
        "{}",
        stderr(&out)
    );
}

/// An agent that waits less than `settings.agent_timeout` says ahp
/// gives up on a slow call after the agent did: doctor names it, reading
/// each agent's timeout in its own unit.
#[test]
fn doctor_flags_an_agent_that_waits_less_than_ahp_answers_in() {
    let exe = assert_cmd::cargo::cargo_bin("ahp");
    let dir = exe.parent().unwrap();
    for agent in ["claude-code", "gemini", "copilot"] {
        let sb = Sandbox::new();
        sb.ahp().args(["install", agent]).assert().success();
        let doctor = || {
            let out = sb.ahp().arg("doctor").env("PATH", dir).output().unwrap();
            stdout(&out)
        };
        // What install writes is what ahp assumes.
        let text = doctor();
        assert!(!text.contains("settings.agent_timeout"), "{agent}: {text}");
        // The user says the agent waits longer than it does.
        sb.write_home(".ahp/hooks.yaml", "settings:\n  agent_timeout: 900000\n");
        let text = doctor();
        assert!(
            text.contains("gives ahp 600000 ms, less than settings.agent_timeout (900000 ms)")
                && text.contains("set `agent_timeout: 600000`"),
            "{agent}: {text}"
        );
        // Said to match: all is well again.
        sb.write_home(".ahp/hooks.yaml", "settings:\n  agent_timeout: 600000\n");
        assert!(!doctor().contains("settings.agent_timeout"), "{agent}");
    }
}

/// Kimi Code reads `~/.kimi-code/config.toml` (or `$KIMI_CODE_HOME`); the
/// Kimi CLI before it read `~/.kimi/config.toml`, which keeps ahp's hooks
/// while only that CLI is there.
#[test]
fn kimi_code_gets_its_own_config_and_the_old_cli_keeps_its_own() {
    let sb = Sandbox::new();
    let home = sb.home.path().to_path_buf();
    sb.ahp().args(["install", "kimi"]).assert().success();
    let code = std::fs::read_to_string(home.join(".kimi-code/config.toml")).unwrap();
    assert!(code.contains("ahp hook kimi"), "{code}");
    assert!(!home.join(".kimi").exists());

    let elsewhere = home.join("kh");
    sb.ahp()
        .env("KIMI_CODE_HOME", &elsewhere)
        .args(["install", "kimi"])
        .assert()
        .success();
    let moved = std::fs::read_to_string(elsewhere.join("config.toml")).unwrap();
    assert!(moved.contains("ahp hook kimi"), "{moved}");

    let old = Sandbox::new();
    let legacy = old.write_home(".kimi/config.toml", "default_model = \"k2\"\n");
    old.ahp().args(["install", "kimi"]).assert().success();
    let text = std::fs::read_to_string(&legacy).unwrap();
    assert!(text.contains("ahp hook kimi"), "{text}");
    assert!(!old.home.path().join(".kimi-code").exists());
    // Kimi Code arrives later: doctor still sees the hooks in the old
    // file, and uninstall takes them from there.
    std::fs::create_dir_all(old.home.path().join(".kimi-code")).unwrap();
    let out = old.ahp().arg("doctor").output().unwrap();
    assert!(
        stdout(&out).contains(&format!("{}: ahp hooks on", legacy.display())),
        "{}",
        stdout(&out)
    );
    old.ahp().args(["uninstall", "kimi"]).assert().success();
    let text = std::fs::read_to_string(&legacy).unwrap();
    assert!(!text.contains("ahp hook kimi"), "{text}");
}

/// Copilot CLI also runs the hooks of a repository's `.claude/settings.json`:
/// with ahp installed there and for Copilot, each Copilot call runs ahp
/// twice, which doctor says.
#[test]
fn doctor_says_copilot_would_run_ahp_twice_beside_claude_codes_project_hooks() {
    let sb = Sandbox::new();
    sb.ahp().args(["install", "copilot"]).assert().success();
    let out = sb.ahp().arg("doctor").output().unwrap();
    assert!(!stdout(&out).contains("runs ahp twice"), "{}", stdout(&out));
    sb.ahp().args(["install", "claude-code"]).assert().success();
    let out = sb.ahp().arg("doctor").output().unwrap();
    assert!(
        stdout(&out).contains("note    copilot: Copilot CLI also runs the hooks of this repository's .claude/settings*.json (claude-code (project)), so each of its calls runs ahp twice"),
        "{}",
        stdout(&out)
    );
}
