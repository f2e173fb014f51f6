//! Config commands end to end: layering shown by `ahp config`, located
//! errors, `validate`, `explain`, `init`, `schema`.

use crate::common::*;

const PROJECT: &str = "\
settings:
  on_block: stop
hooks:
  pre-tool-use:
    - oracle: PermissionChecker
      priority: 0
    - oracle: Rules
      id: no-curl
      priority: 5
      when: { tool.name: shell }
      config:
        rules:
          - condition: \"tool.input.command ~ 'curl'\"
            intensity: prompt
            message: network access
    - oracle: Rules
      id: noisy
      priority: 9
      config:
        rules:
          - { condition: \"tool.name\", intensity: aid, message: hi }
";

#[test]
fn config_shows_the_layer_of_each_value() {
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", "settings:\n  environment: development\n");
    sb.write(".ahp/hooks.yaml", PROJECT);
    sb.write(".ahp/hooks.local.yaml", "hooks:\n  pre-tool-use:\n    - id: noisy\n      enabled: false\n    - id: no-curl\n      priority: 1\n");
    let out = sb.ahp().arg("config").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"))
            .to_string()
    };
    assert!(line("environment: \"development\"").contains("# user "));
    assert!(line("enabled: false").contains("# local "));
    assert!(line("enabled: false").contains("hooks.local.yaml:4:16"));
    assert!(line("priority: 1").contains("# local "));
    assert!(line("on_block: \"stop\"").contains("# project "));
    let out = sb
        .ahp()
        .args(["config", "--format", "json"])
        .output()
        .unwrap();
    let v = json_out(&out);
    // builtin, user, project, local.
    assert_eq!(v["layers"].as_array().unwrap().len(), 4);
    assert_eq!(
        v["hooks"]["pre-tool-use"][2]["origins"]["priority"]["layer"],
        "local"
    );
    assert_eq!(
        v["hooks"]["pre-tool-use"][2]["origins"]["when.tool.name"]["layer"],
        "project"
    );
}

/// `validate` fails naming the error; a run reports it just as loudly
/// and runs the rest of the policy (the broken part is left out).
fn expect_config_error(yaml: &str, location: &str, words: &[&str]) {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", yaml);
    for args in [vec!["validate"], vec!["run", "pre-tool-use"]] {
        let out = sb.ahp().args(&args).write_stdin("{}").output().unwrap();
        let run = args[0] == "run";
        let want = if run { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(want), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(location),
            "{args:?}: want {location} in\n{err}"
        );
        for w in words {
            assert!(err.contains(w), "{args:?}: want {w:?} in\n{err}");
        }
        if run {
            assert!(err.contains("left out of the policy"), "{err}");
            assert_eq!(json_out(&out)["outcome"], "accept");
        }
    }
}

#[test]
fn malformed_yaml_is_located() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n   config: [\n",
        ".ahp/hooks.yaml:4:",
        &["invalid YAML"],
    );
}

/// An anchored value repeats by alias and merges with `<<`: a second
/// entry that reuses the first one's rules blocks the same command.
#[test]
fn anchors_and_merge_keys_reuse_a_config() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: first\n      when: {tool: Read}\n      \
         config: &rules\n        rules:\n          - condition: \"tool.input.command ~ 'curl'\"\n            \
         intensity: block\n            message: no network\n    - &entry\n      oracle: Rules\n      id: second\n      \
         when: {tool: Bash}\n      config: *rules\n    - <<: *entry\n      id: third\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sb
        .ahp()
        .args(["run", "pre-tool-use"])
        .write_stdin(
            r#"{"tool": {"name": "Bash", "input": {"command": "curl https://x.example"}}}"#,
        )
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["outcome"], "block", "{v}");
    let fired: Vec<_> = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["header"]["source"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        fired.iter().any(|s| s == "second") && fired.iter().any(|s| s == "third"),
        "{v}"
    );
}

/// A file built to exhaust memory (a "billion laughs"), a second document
/// and a repeated key are errors at their line, not a hang or a silent
/// half-policy.
#[test]
fn hostile_yaml_is_located() {
    let mut bomb = String::from(
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config:\n        a: &a [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for (prev, name) in ["a", "b", "c", "d", "e", "f"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g"])
    {
        bomb += &format!(
            "        {name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        );
    }
    expect_config_error(&bomb, ".ahp/hooks.yaml:10:", &["more than 250000 values"]);
    expect_config_error(
        "hooks: {}\n---\nhooks: {}\n",
        ".ahp/hooks.yaml:2:1",
        &["second YAML document"],
    );
    expect_config_error(
        "hooks:\n  pre-tool-use: []\nsettings: {}\nhooks: {}\n",
        ".ahp/hooks.yaml:4:1",
        &["duplicate key `hooks`", "first at line 1"],
    );
}

#[test]
fn unknown_oracle_is_located_and_lists_known() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: PermisionChecker\n",
        ".ahp/hooks.yaml:3:15",
        &[
            "unknown oracle `PermisionChecker`",
            "did you mean `PermissionChecker`",
            "known oracles:",
            "Rules",
        ],
    );
}

#[test]
fn bad_when_is_located() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      when:\n        tool.input.command: \"~(rm\"\n      config: {rules: []}\n",
        ".ahp/hooks.yaml:5:29",
        &["invalid regex"],
    );
}

#[test]
fn bad_rule_condition_is_located() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config:\n        rules:\n          - condition: \"checklist.incomplete_count >\"\n            message: x\n",
        ".ahp/hooks.yaml:6:",
        &["rules.0.condition"],
    );
}

#[test]
fn wrong_type_is_located() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      enabled: maybe\n",
        ".ahp/hooks.yaml:4:16",
        &["expected true or false", "found a string"],
    );
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        dangerous_commands: yes-please\n",
        ".ahp/hooks.yaml:5:",
        &["dangerous_commands"],
    );
}

#[test]
fn cycle_is_rejected_with_members() {
    expect_config_error(
        "hooks:\n  pre-tool-use:\n    - {oracle: Rules, id: one, after: two, config: {rules: []}}\n    - {oracle: Rules, id: two, after: one, config: {rules: []}}\n",
        ".ahp/hooks.yaml:3:",
        &["one → two → one"],
    );
}

#[test]
fn validate_reports_ok_and_layers() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", PROJECT);
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // The project's three and the builtin layer's three other entries (its
    // PermissionChecker is the one the project tunes).
    assert!(
        text.starts_with("ok: 6 enabled entries across 3 events"),
        "{text}"
    );
    assert!(text.contains("(builtin)"), "{text}");
    assert!(text.contains("(project)"), "{text}");
    // With nothing at all, the builtin layer is what validates.
    let sb = Sandbox::new();
    let out = sb.ahp().arg("validate").output().unwrap();
    assert!(
        stdout(&out).contains("<builtin>/default-hooks.yaml (builtin)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn explain_shows_order_layers_and_why_not() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", PROJECT);
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: noisy\n      enabled: false\n",
    );
    let ctx = sb.write(
        "ctx.json",
        r#"{"tool":{"name":"Read","input":{"path":"x"}}}"#,
    );
    let out = sb
        .ahp()
        .args(["explain", "PreToolUse", "--context"])
        .arg(&ctx)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let pc = text.find("PermissionChecker").unwrap();
    let nc = text.find("no-curl").unwrap();
    assert!(pc < nc, "{text}");
    assert!(text.contains("1. wave 0  PermissionChecker"), "{text}");
    assert!(text.contains("2. wave 0  PathGuard"), "{text}");
    assert!(text.contains("3. wave 1  no-curl"), "{text}");
    assert!(
        // The context's `Read` is read as the agents' hooks read it.
        text.contains("NOT SELECTED: `tool.name` == \"shell\" does not hold (value: \"read\")"),
        "{text}"
    );
    assert!(text.contains("from project"), "{text}");
    assert!(text.contains("noisy"), "{text}");
    assert!(text.contains("enabled: false set by local"), "{text}");
    // Each entry's own time limit; a HOOK.md hook's, not the engine's
    // backstop behind it.
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: noisy\n      enabled: false\n    - id: no-curl\n      timeout: 1500\n",
    );
    sb.hook(
        false,
        "fmt",
        "trigger: PreToolUse\ntimeout: 5000\n",
        "exit 0",
    );
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let text = stdout(&out);
    let line = |id: &str| {
        text.lines()
            .find(|l| l.contains(id))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("no-curl").contains("time limit: 1.5 s"), "{text}");
    assert!(line("fmt").contains("time limit: 5 s"), "{text}");
    assert!(!line("PermissionChecker").contains("time limit"), "{text}");
    let out = sb.ahp().args(["explain", "--list"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("pre-tool-use"), "{text}");
    assert!(text.contains("pre-tool-call"), "{text}");
    assert!(text.contains("permission-request"), "{text}");
    assert_eq!(text.lines().count(), 30);
    assert!(text.contains("pre-issue-cancel"), "{text}");
}

#[test]
fn init_writes_starter_and_gitignore_once() {
    let sb = Sandbox::new();
    std::fs::write(sb.root().join(".gitignore"), "target/").unwrap();
    sb.ahp().arg("init").assert().code(0);
    let hooks = std::fs::read_to_string(sb.root().join(".ahp/hooks.yaml")).unwrap();
    assert!(hooks.contains("yaml-language-server: $schema=./hooks.schema.json"));
    assert!(sb.root().join(".ahp/hooks.schema.json").exists());
    let gi = std::fs::read_to_string(sb.root().join(".gitignore")).unwrap();
    assert!(gi.starts_with("target/\n"), "{gi}");
    assert!(gi.lines().any(|l| l == ".ahp/hooks.local.yaml"), "{gi}");
    // The starter is a valid policy.
    sb.ahp().arg("validate").assert().code(0);
    // A second init refuses to overwrite, and --force does not duplicate lines.
    let out = sb.ahp().arg("init").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    sb.ahp().args(["init", "--force"]).assert().code(0);
    let gi = std::fs::read_to_string(sb.root().join(".gitignore")).unwrap();
    assert_eq!(gi.matches(".ahp/hooks.local.yaml").count(), 1, "{gi}");
}

#[test]
fn schema_is_draft_07_json() {
    let sb = Sandbox::new();
    let out = sb.ahp().arg("schema").output().unwrap();
    let v = json_out(&out);
    assert_eq!(v["$schema"], "http://json-schema.org/draft-07/schema#");
    assert!(v["definitions"]["EntrySpec"]["properties"]["when"].is_object());
}

#[test]
fn project_flag_and_discovery_from_a_subdirectory() {
    let sb = Sandbox::new();
    sb.write(".ahp/hooks.yaml", "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config:\n        rules:\n          - {condition: \"tool == Read\", intensity: block, message: no reading}\n");
    std::fs::create_dir_all(sb.root().join("src/deep")).unwrap();
    let ctx = r#"{"tool":{"name":"Read","input":{}}}"#;
    sb.ahp()
        .current_dir(sb.root().join("src/deep"))
        .args(["run", "pre-tool-use"])
        .write_stdin(ctx)
        .assert()
        .code(2);
    let elsewhere = tempfile::tempdir().unwrap();
    sb.ahp()
        .current_dir(elsewhere.path())
        .args(["run", "pre-tool-use", "--no-log", "--project"])
        .arg(sb.root())
        .write_stdin(ctx)
        .assert()
        .code(2);
}

#[test]
fn validate_warns_about_an_escalation_rule_that_matches_no_entry() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: FileChangeLimiter\n      config: {max_files: 5}\nescalation:\n  - source: FileChangeLimitr\n    scope: issue\n    after_firings: 1\n  - source: FileChangeLimiter\n    scope: issue\n    after_firings: 2\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml:6:")
            && err.contains("escalation rule for `FileChangeLimitr` matches no entry")
            && err.contains("did you mean `FileChangeLimiter`?"),
        "{err}"
    );
    assert_eq!(err.matches("matches no entry").count(), 1, "{err}");
}

/// A Rules rule's own `intensity` that the event does not allow is
/// clamped at run time, as an entry's is: validate and the hook call say so
/// at the rule's line, as they do for the entry's. An entry `intensity`
/// replaces the rules', and only it is warned about.
#[test]
fn a_rule_intensity_the_event_does_not_allow_is_warned_at_its_line() {
    let sb = Sandbox::new();
    let rules = "hooks:\n  pre-issue-close:\n    - oracle: Rules\n      config:\n        rules:\n          - condition: \"true\"\n            intensity: block\n            message: fine\n          - condition: \"true\"\n            intensity: prompt\n            message: asks\n";
    sb.write(".ahp/hooks.yaml", rules);
    let file = sb.root().join(".ahp/hooks.yaml");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}:10:24: hooks.pre-issue-close[Rules].config.rules.1.intensity: pre-issue-close does not allow intensity `prompt`; signals will be clamped to `aid`",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(err.matches("will be clamped").count(), 1, "{err}");

    // The hook call of the event says it too, and clamps.
    let out = sb.run("pre-issue-close", r#"{"issue":{"id":"F-1"}}"#);
    assert!(
        stderr(&out).contains("rules.1.intensity"),
        "{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // With an entry intensity, the rules' do not apply.
    sb.write(
        ".ahp/hooks.yaml",
        &rules.replace(
            "    - oracle: Rules\n",
            "    - oracle: Rules\n      intensity: control\n",
        ),
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(!err.contains("rules.1.intensity"), "{err}");
    assert!(
        err.contains(":4:18: pre-issue-close does not allow intensity `control`"),
        "{err}"
    );
}

/// `ahp config` shows the merged `fail_closed: false` of a project that
/// tries to switch it off, and says it is on all the same, and why.
#[test]
fn config_says_fail_closed_is_on_whatever_the_merged_value() {
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    sb.write(".ahp/hooks.yaml", "settings:\n  fail_closed: false\n");
    let out = sb.ahp().arg("config").output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("# fail_closed: on, from")
            && text.contains(".ahp/hooks.yaml (no layer can switch it off)"),
        "{text}"
    );
    let out = sb
        .ahp()
        .arg("config")
        .env("AHP_FAIL_CLOSED", "1")
        .current_dir(sb.home.path())
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("# fail_closed: on"),
        "{}",
        stdout(&out)
    );
    std::fs::remove_file(sb.home.path().join(".ahp/hooks.yaml")).unwrap();
    let out = sb.ahp().arg("config").output().unwrap();
    assert!(
        !stdout(&out).contains("# fail_closed: on"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn ahp_config_output_reads_back_as_one_policy() {
    let sb = Sandbox::new();
    // An event the builtin layer has too: one `pre-issue-submit:` key.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-issue-submit:\n    - oracle: ChecklistValidator\n",
    );
    let out = sb.ahp().arg("config").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("\n  pre-issue-submit:\n").count(), 1, "{text}");
    // Written back as the only layer, it validates and keeps every entry.
    let again = Sandbox::new();
    again.write(
        ".ahp/hooks.yaml",
        &format!(
            "settings:\n  builtin: false\n{}",
            text.replace("settings:\n", "")
        ),
    );
    let out = again.ahp().arg("validate").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("5 enabled entries"),
        "{}",
        stdout(&out)
    );
}

/// `ahp validate` lists every error of an entry, not only its first: a
/// wrong intensity and a misspelt config key of one entry, two wrong
/// settings of another, in one run.
#[test]
fn validate_lists_every_error_of_an_entry() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      intensity: blok\n      config: {rulez: []}\n    - oracle: SecurityScanner\n      config:\n        severity_threshold: hi\n        rules: [no-secret]\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    for want in [
        "[Rules].intensity: unknown value `blok`",
        "[Rules].config.rulez: unknown key `rulez`",
        "[SecurityScanner].config.severity_threshold: unknown value `hi`",
        "[SecurityScanner].config.rules.0: unknown rule `no-secret`",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // An entry left out for a key ahp does not know is still checked
    // for the rest.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      priorty: 1\n      intensity: blok\n",
    );
    let err = stderr(&sb.ahp().arg("validate").output().unwrap());
    assert!(
        err.contains("priorty: unknown key") && err.contains("unknown value `blok`"),
        "{err}"
    );
}

/// ReviewTrigger's `command` gets its values in the environment; a
/// placeholder, which would reach the shell as written, is an error at
/// its line that says where the values are.
#[test]
fn a_placeholder_in_review_triggers_command_is_an_error() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-issue-submit:\n    - oracle: ReviewTrigger\n      config:\n        reviewers: ['@alice']\n        command: 'notify {{ reviewers }}'\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(".ahp/hooks.yaml:6")
            && err.contains("config.command: placeholders are not filled in a command")
            && err.contains("$AHP_REVIEWERS"),
        "{err}"
    );
}

/// A repository whose `.gitignore` is a link out of it: `ahp init` wrote
/// the policy and the schema, then refused the link, and a second run said
/// "already exists". Now it refuses before writing anything.
#[test]
fn init_refuses_a_symlinked_gitignore_before_writing_anything() {
    let sb = Sandbox::new();
    let outside = sb.home.path().join("elsewhere");
    std::fs::write(&outside, "x\n").unwrap();
    std::os::unix::fs::symlink(&outside, sb.root().join(".gitignore")).unwrap();
    let out = sb.ahp().arg("init").output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("refusing to write through a symlink")
            && stderr(&out).contains("nothing was written"),
        "{}",
        stderr(&out)
    );
    assert!(!sb.root().join(".ahp/hooks.yaml").exists());
    assert!(!sb.root().join(".ahp/hooks.schema.json").exists());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x\n");
}
