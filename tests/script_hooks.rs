//! HOOK.md script hooks end to end: real processes, a temp HOME and XDG
//! dirs, the CLI as the agent would call it.

use crate::common::*;
use std::time::{Duration, Instant};

const SHELL_RM: &str = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /tmp/x"}}}"#;
const TRIGGER: &str = "trigger: pre-tool-call\n";

fn run(sb: &Sandbox, event: &str, ctx: &str) -> std::process::Output {
    sb.ahp()
        .args(["run", event])
        .write_stdin(ctx.to_string())
        .output()
        .unwrap()
}

fn kinds(sb: &Sandbox) -> Vec<String> {
    sb.log_lines()
        .iter()
        .map(|l| l["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn exit_2_blocks_with_stderr_as_reason() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "no-rm",
        TRIGGER,
        "cat >/dev/null; echo 'rm is not allowed here' >&2; exit 2",
    );
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    let s = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["header"]["source"] == "no-rm")
        .unwrap();
    assert_eq!(s["payload"]["reason"], "rm is not allowed here");
    assert_eq!(s["header"]["type"], "script-hook");
}

#[test]
fn json_decisions_map_to_intensities() {
    let cases = [
        (r#"{"decision":"deny","reason":"nope"}"#, 2, "block", "nope"),
        (
            r#"{"decision":"ask","reason":"sure?"}"#,
            3,
            "prompt",
            "sure?",
        ),
        (r#"{"decision":"allow"}"#, 0, "accept", ""),
        (
            r#"{"additional_context":"remember the style guide"}"#,
            0,
            "aid",
            "remember the style guide",
        ),
    ];
    for (answer, code, outcome, text) in cases {
        let sb = Sandbox::new();
        sb.hook(
            false,
            "answer",
            TRIGGER,
            &format!("cat >/dev/null; echo '{answer}'"),
        );
        let out = run(
            &sb,
            "pre-tool-use",
            r#"{"tool":{"name":"Read","input":{"path":"a"}}}"#,
        );
        assert_eq!(out.status.code(), Some(code), "{answer}: {}", stderr(&out));
        let v = json_out(&out);
        assert_eq!(v["outcome"], outcome, "{answer}");
        if !text.is_empty() {
            assert!(v["signals"].to_string().contains(text), "{answer}: {v}");
        }
    }
}

/// A byte-order mark before the answer (Python's `utf-8-sig`, PowerShell)
/// does not turn a deny into text; an answer after other output on stdout
/// warns instead of passing as text.
#[test]
fn a_byte_order_mark_keeps_a_deny_and_text_before_an_answer_warns() {
    let sb = Sandbox::new();
    sb.hook(
        true,
        "bom",
        TRIGGER,
        r#"cat >/dev/null; printf '\357\273\277{"decision":"deny","reason":"no rm here"}\n'"#,
    );
    sb.trust();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(json_out(&out)["signals"].to_string().contains("no rm here"));

    let sb = Sandbox::new();
    sb.hook(
        true,
        "chatty",
        TRIGGER,
        r#"cat >/dev/null; echo 'checking…'; echo '{"decision":"deny","reason":"no rm here"}'"#,
    );
    sb.trust();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    let err = stderr(&out);
    assert!(
        err.contains("hook `chatty` printed text before its JSON answer"),
        "{err}"
    );
    // Pretty-printed after the text, too.
    let sb = Sandbox::new();
    sb.hook(
        true,
        "pretty",
        TRIGGER,
        r#"cat >/dev/null; echo 'checking'; printf '{\n  "decision": "deny",\n  "reason": "no rm"\n}\n'"#,
    );
    sb.trust();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    let err = stderr(&out);
    assert!(
        err.contains("hook `pretty` printed text before its JSON answer"),
        "{err}"
    );
}

/// A misspelt key is not an allow: without `decision`, a key the protocol
/// does not know fails the hook as an unknown decision does (open, with a
/// warning on stderr and in the log), naming the key and the nearest known
/// one. Beside a `decision`, other keys are still ignored.
#[test]
fn an_answer_with_a_misspelt_key_warns_like_an_unknown_decision() {
    let sb = Sandbox::new();
    sb.hook(
        true,
        "typo",
        TRIGGER,
        r#"cat >/dev/null; echo '{"decison":"deny","reason":"no rm here"}'"#,
    );
    sb.trust();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("hook `typo` returned unknown key `decison` (did you mean `decision`?)"),
        "{err}"
    );
    let warning = sb
        .log_lines()
        .into_iter()
        .find(|l| l["kind"] == "warning" && l["source"] == "typo")
        .unwrap_or_else(|| panic!("no warning record: {:?}", kinds(&sb)));
    assert!(
        warning["message"].as_str().unwrap().contains("`decison`"),
        "{warning}"
    );
    let record = sb
        .log_lines()
        .into_iter()
        .find(|l| l["kind"] == "run")
        .unwrap();
    let entry = record["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "typo")
        .unwrap();
    assert_eq!(entry["status"], "failed", "{record}");

    // The same under on_error: block (here via fail_closed) blocks.
    sb.write(".ahp/hooks.yaml", "settings: {fail_closed: true}\n");
    sb.trust();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // Beside a decision, a key of another agent's protocol is ignored.
    let sb = Sandbox::new();
    sb.hook(
        false,
        "extra",
        TRIGGER,
        r#"cat >/dev/null; echo '{"decision":"allow","continue":true}'"#,
    );
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("unknown key"), "{}", stderr(&out));
}

#[test]
fn modified_input_is_a_control_that_rewrites_the_input() {
    let sb = Sandbox::new();
    sb.hook(false, "safer", TRIGGER, r#"cat >/dev/null; echo '{"modified_input":{"command":"rm -ri /tmp/x"},"reason":"interactive rm"}'"#);
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "control");
    let change = &v["context_changes"][0];
    assert_eq!(change["target"], "tool.input");
    assert_eq!(change["value"]["command"], "rm -ri /tmp/x");
}

#[test]
fn invalid_json_and_exit_1_fail_open_with_a_warning_record() {
    for (script, needle) in [
        ("cat >/dev/null; echo '{not json'", "hook `broken`"),
        ("cat >/dev/null; echo 'disk full' >&2; exit 1", "disk full"),
    ] {
        let sb = Sandbox::new();
        sb.hook(false, "broken", TRIGGER, script);
        let out = run(&sb, "pre-tool-use", SHELL_RM);
        assert_eq!(out.status.code(), Some(0), "{script}: {}", stderr(&out));
        assert_eq!(json_out(&out)["outcome"], "accept");
        assert!(stderr(&out).contains(needle), "{script}: {}", stderr(&out));
        let log = sb.log_lines();
        let warning = log
            .iter()
            .find(|l| l["kind"] == "warning")
            .unwrap_or_else(|| panic!("{log:?}"));
        assert!(
            warning["message"].as_str().unwrap().contains(needle),
            "{warning}"
        );
        assert_eq!(warning["source"], "broken");
    }
}

fn alive(pid: &str) -> bool {
    // A zombie would still have a /proc entry with state Z; a reaped or
    // killed-and-reaped process has none.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_file(path: &std::path::Path) -> String {
    for _ in 0..100 {
        if let Ok(s) = std::fs::read_to_string(path)
            && !s.trim().is_empty()
        {
            return s.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never written", path.display());
}

#[test]
fn timeout_kills_the_script_and_its_child_and_is_recorded() {
    let sb = Sandbox::new();
    let pids = sb.root().join("pids");
    sb.hook(
        false,
        "sleeper",
        "trigger: pre-tool-call\ntimeout: 200\n",
        &format!(
            "cat >/dev/null; sleep 30 & echo \"$$ $!\" > {}; wait",
            pids.display()
        ),
    );
    let start = Instant::now();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Generous bound (a 200 ms timeout; the acceptance asks for ~1 s).
    assert!(took < Duration::from_secs(3), "verdict took {took:?}");
    let text = wait_file(&pids);
    let (script, child) = text.split_once(' ').unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(script), "script {script} survived");
    assert!(!alive(child), "child {child} survived");
    let log = sb.log_lines();
    assert!(
        log.iter().any(|l| l["kind"] == "warning" && l["message"].as_str().unwrap().contains("timed out")),
        "{log:?}"
    );
}

/// A HOOK.md hook without `timeout` gets `settings.timeout`, as any entry
/// does (it got 30 s whatever the setting said), and a hooks.yaml
/// reference's `timeout` overrides the frontmatter's either way (a longer
/// one still killed the script at the frontmatter's). The user's own
/// settings and references here: a repository's do not shorten or change
/// the user's hooks.
#[test]
fn settings_and_a_reference_set_a_hooks_timeout() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "sleeper",
        "trigger: pre-tool-call\n",
        "cat >/dev/null; sleep 30",
    );
    sb.write_home(".ahp/hooks.yaml", "settings:\n  timeout: 300\n");
    let start = Instant::now();
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(took < Duration::from_secs(2), "verdict took {took:?}");
    assert!(
        sb.log_lines().iter().any(|l| l["kind"] == "warning"
            && l["message"]
                .as_str()
                .unwrap_or_default()
                .contains("timed out after 300 ms")),
        "{:?}",
        sb.log_lines()
    );

    let sb = Sandbox::new();
    sb.hook(
        false,
        "slow",
        "trigger: pre-tool-call\ntimeout: 200\n",
        "cat >/dev/null; sleep 1; echo slow but sure >&2; exit 2",
    );
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: slow\n      timeout: 10000\n",
    );
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).contains("slow but sure"), "{}", stdout(&out));

    // A script runs at most 10 minutes: an hour-long `settings.timeout`
    // is cut to that, and so is a reference's own `timeout` of an hour,
    // with a warning (an error would leave a blocking hook out).
    sb.write_home(".ahp/hooks.yaml", "settings:\n  timeout: 3600000\n");
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    sb.write_home(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: slow\n      timeout: 3600000\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains(".ahp/hooks.yaml:4:"), "{said}");
    assert!(
        said.contains("a HOOK.md hook runs at most 600000 milliseconds; cut to that"),
        "{said}"
    );
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn on_error_block_turns_a_timeout_into_a_block() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "sleeper",
        "trigger: pre-tool-call\ntimeout: 200\n",
        "cat >/dev/null; sleep 30",
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: sleeper\n      on_error: block\n",
    );
    let out = run(
        &sb,
        "pre-tool-use",
        r#"{"tool":{"name":"Read","input":{}}}"#,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["signals"][0]["header"]["type"], "oracle-error");
    let reason = v["signals"][0]["payload"]["reason"].as_str().unwrap();
    assert!(reason.contains("timed out"), "{reason}");
    // Said so that it is true whether on_error or fail_closed closed it.
    assert!(
        reason.contains("failing closed (on_error: block, or fail_closed)"),
        "{reason}"
    );
}

#[test]
fn async_hook_does_not_delay_the_verdict_and_is_logged() {
    let sb = Sandbox::new();
    let done = sb.root().join("async-done");
    sb.hook(
        false,
        "slow-async",
        "trigger: post-tool-call\nasync: true\n",
        &format!("cat >/dev/null; sleep 2; touch {}; echo '{{\"additional_context\":\"async finished\"}}'", done.display()),
    );
    let start = Instant::now();
    let out = run(
        &sb,
        "post-tool-use",
        r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#,
    );
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        took < Duration::from_millis(1500),
        "ahp waited for the async hook: {took:?}"
    );
    let v = json_out(&out);
    assert_eq!(v["outcome"], "accept");
    assert!(v["entries"].to_string().contains("detached"), "{v}");
    // The background run records the hook's answer.
    let mut found = false;
    for _ in 0..100 {
        if sb
            .log_lines()
            .iter()
            .any(|l| l["kind"] == "signal" && l["header"]["detached"] == true)
        {
            found = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(found, "{:?}", sb.log_lines());
    assert!(done.exists());
    let rec = sb
        .log_lines()
        .into_iter()
        .find(|l| l["kind"] == "signal")
        .unwrap();
    assert_eq!(rec["header"]["correlation_id"], v["correlation_id"]);
}

/// A project hook that does not run (untrusted, or switched off by
/// `settings.project_hooks: false`) replaces nothing: the user's hook of
/// the same name still runs. A cloned repository's do-nothing `guard`
/// used to remove the user's `guard` silently.
#[test]
fn a_project_hook_that_does_not_run_leaves_the_users_hook_of_its_name() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "guard",
        TRIGGER,
        "cat >/dev/null; echo user >&2; exit 2",
    );
    sb.hook(true, "guard", TRIGGER, "cat >/dev/null; exit 0");
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_out(&out);
    assert!(v["signals"].to_string().contains("\"user\""), "{v}");
    sb.ahp().arg("trust").assert().code(0);
    sb.write_home(".ahp/hooks.yaml", "settings:\n  project_hooks: false\n");
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn project_hook_replaces_user_hook_and_explain_says_so() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "guard",
        TRIGGER,
        "cat >/dev/null; echo user >&2; exit 2",
    );
    sb.hook(
        true,
        "guard",
        TRIGGER,
        "cat >/dev/null; echo project >&2; exit 2",
    );
    sb.ahp().arg("trust").assert().code(0);
    let out = run(&sb, "pre-tool-use", SHELL_RM);
    let v = json_out(&out);
    let s = v["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["header"]["source"] == "guard")
        .unwrap();
    assert_eq!(s["payload"]["reason"], "project");
    let out = sb
        .ahp()
        .args(["explain", "pre-tool-call"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("project hook `guard` replaces the user hook"),
        "{text}"
    );
}

#[test]
fn untrusted_project_hooks_are_skipped_loudly_until_trusted() {
    let sb = Sandbox::new();
    let dir = sb.hook(
        true,
        "guard",
        TRIGGER,
        "cat >/dev/null; echo 'from the repo' >&2; exit 2",
    );
    let ctx = r#"{"tool":{"name":"Read","input":{}}}"#;
    // Untrusted: skipped, with a warning on stderr and in the log.
    let out = run(&sb, "pre-tool-use", ctx);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("skipped project hook(s) guard"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("ahp trust"), "{}", stderr(&out));
    let log = sb.log_lines();
    assert!(
        log.iter()
            .any(|l| l["kind"] == "warning" && l["message"].as_str().unwrap().contains("guard")),
        "{log:?}"
    );
    // `--show` lists the files and changes nothing.
    let out = sb.ahp().args(["trust", "--show"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains(".agents/hooks/guard/HOOK.md"), "{text}");
    assert!(
        text.contains(".agents/hooks/guard/scripts/run.sh"),
        "{text}"
    );
    assert!(text.contains("not trusted"), "{text}");
    assert_eq!(run(&sb, "pre-tool-use", ctx).status.code(), Some(0));
    // Trusted: it runs.
    sb.ahp().arg("trust").assert().code(0);
    let out = run(&sb, "pre-tool-use", ctx);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Changed: skipped again, naming the changed file.
    std::fs::write(
        dir.join("scripts/run.sh"),
        "#!/usr/bin/env bash\ncat >/dev/null; exit 2\n",
    )
    .unwrap();
    let out = run(&sb, "pre-tool-use", ctx);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("changed"), "{}", stderr(&out));
    assert!(stderr(&out).contains("scripts/run.sh"), "{}", stderr(&out));
}

#[test]
fn matcher_tool_and_pattern_must_both_match() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "both",
        "trigger: pre-tool-call\nmatcher:\n  tool: \"^Bash$\"\n  pattern: \"rm\\\\s+-rf\"\n",
        "cat >/dev/null; echo both >&2; exit 2",
    );
    sb.hook(
        false,
        "tool-only",
        "trigger: pre-tool-call\nmatcher:\n  tool: \"^Write$\"\n",
        "cat >/dev/null; echo tool-only >&2; exit 2",
    );
    sb.hook(
        false,
        "pattern-only",
        "trigger: pre-tool-call\nmatcher:\n  pattern: \"secret\"\n",
        "cat >/dev/null; echo pattern-only >&2; exit 2",
    );
    let fired = |ctx: &str| -> Vec<String> {
        let out = sb
            .ahp()
            .args(["run", "pre-tool-use", "--no-log"])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap();
        let v = json_out(&out);
        let mut ids: Vec<String> = v["signals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["header"]["source"].as_str().unwrap().to_string())
            .filter(|s| s != "PermissionChecker")
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        fired(r#"{"tool":{"name":"Bash","input":{"command":"rm -rf build"}}}"#),
        vec!["both"]
    );
    assert!(fired(r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#).is_empty());
    assert!(fired(r#"{"tool":{"name":"Read","input":{"command":"rm -rf build"}}}"#).is_empty());
    assert_eq!(
        fired(r#"{"tool":{"name":"Write","input":{"content":"a secret"}}}"#),
        vec!["pattern-only", "tool-only"]
    );
    // The adapters' raw name matches too.
    assert_eq!(
        fired(r#"{"tool":{"name":"shell","raw_name":"Bash","input":{"command":"rm -rf x"}}}"#),
        vec!["both"]
    );
    // No tool in the context: hooks with a matcher do not fire.
    assert!(fired("{}").is_empty());
}

#[test]
fn explain_lists_hooks_and_oracles_in_final_order() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "early",
        "trigger: pre-tool-call\npriority: 999\n",
        "exit 0",
    );
    sb.hook(false, "late", "trigger: PreToolUse\n", "exit 0");
    sb.write(".ahp/hooks.yaml", "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      priority: 0\n    - oracle: Rules\n      id: mid\n      priority: 500\n      config: {rules: []}\n");
    let out = sb
        .ahp()
        .args(["explain", "pre-tool-call"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let pos = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} not in\n{text}"));
    assert!(pos("PermissionChecker") < pos(" early "));
    assert!(pos(" early ") < pos(" mid "));
    assert!(pos(" mid ") < pos(" late "));
    assert!(text.contains("agents/hooks/early/HOOK.md"), "{text}");
    assert!(text.contains("priority 1 "), "{text}");
    assert!(text.contains("priority 900"), "{text}");
}

#[test]
fn hook_load_errors_are_reported_and_the_rest_still_run() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "good",
        TRIGGER,
        "cat >/dev/null; echo good >&2; exit 2",
    );
    sb.hook(
        false,
        "bad",
        "trigger: pre-tool-call\nmatcher:\n  pattern: \"(oops\"\n",
        "exit 2",
    );
    let out = run(
        &sb,
        "pre-tool-use",
        r#"{"tool":{"name":"Read","input":{}}}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad/HOOK.md:6:12"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("invalid regex"), "{}", stderr(&out));
    // validate is strict about it.
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn hook_reference_must_name_a_hook_of_that_event() {
    let sb = Sandbox::new();
    sb.hook(false, "guard", TRIGGER, "exit 0");
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: gaurd\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean `guard`"),
        "{}",
        stderr(&out)
    );
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - hook: guard\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("triggers on pre-tool-use"),
        "{}",
        stderr(&out)
    );
    // A reference can disable or re-prioritise the hook: the user's own
    // reference (a repository's cannot, see the `layers` tests).
    std::fs::remove_file(sb.root().join(".ahp/hooks.yaml")).unwrap();
    sb.write_home(".ahp/hooks.yaml", "hooks:\n  pre-tool-use:\n    - hook: guard\n      when: {tool.name: write}\n      priority: 7\n");
    let out = sb.ahp().args(["explain", "pre-tool-use"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("guard") && text.contains("priority 7"),
        "{text}"
    );
}

// ---- the examples under examples/hooks, each exercised ----

#[test]
fn example_block_dangerous_commands_bash_and_python() {
    for name in ["block-dangerous-commands", "block-dangerous-commands-py"] {
        let sb = Sandbox::new();
        // Only the hook: the builtin layer would block `rm -rf /` too.
        sb.write(".ahp/hooks.yaml", "settings: {builtin: false}\n");
        sb.example_hook(false, name);
        let out = run(
            &sb,
            "pre-tool-use",
            r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#,
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let v = json_out(&out);
        assert_eq!(v["signals"][0]["header"]["source"], name);
        assert!(
            v["signals"][0]["payload"]["reason"]
                .as_str()
                .unwrap()
                .contains("Dangerous command blocked")
        );
        let out = run(
            &sb,
            "pre-tool-use",
            r#"{"tool":{"name":"Bash","input":{"command":"rm -rf ./target"}}}"#,
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    }
}

#[test]
fn example_enforce_tests_blocks_the_stop_while_tests_fail() {
    let sb = Sandbox::new();
    sb.example_hook(false, "enforce-tests");
    let stop = r#"{"session_id":"s1","turn":{"stop_reason":"no_tool_calls"}}"#;
    let out = sb
        .ahp()
        .env("ENFORCE_TESTS_COMMAND", "echo '2 tests failed'; false")
        .args(["run", "Stop"])
        .write_stdin(stop)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let reason = json_out(&out)["signals"][0]["payload"]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("2 tests failed"), "{reason}");
    let out = sb
        .ahp()
        .env("ENFORCE_TESTS_COMMAND", "true")
        .args(["run", "Stop"])
        .write_stdin(stop)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Already continuing because of a stop hook: let it stop.
    let again = r#"{"session_id":"s1","turn":{"stop_hook_active":true}}"#;
    let out = sb
        .ahp()
        .env("ENFORCE_TESTS_COMMAND", "false")
        .args(["run", "Stop"])
        .write_stdin(again)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn example_auto_format_formats_in_the_background() {
    let sb = Sandbox::new();
    sb.example_hook(false, "auto-format");
    let file = sb.write("src/lib.rs", "fn   main( ){let x=1;}\n");
    let ctx = format!(
        r#"{{"tool":{{"name":"Write","input":{{"file_path":"{}"}}}}}}"#,
        file.display()
    );
    let out = run(&sb, "post-tool-use", &ctx);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut formatted = false;
    for _ in 0..150 {
        let log = sb.log_lines();
        if log.iter().any(|l| {
            l["kind"] == "info" && l["message"].as_str().unwrap_or("").contains("auto-format")
        }) {
            formatted = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(formatted, "{:?}", sb.log_lines());
    let text = std::fs::read_to_string(&file).unwrap();
    let has_rustfmt = std::process::Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok();
    if has_rustfmt {
        assert_eq!(text, "fn main() {\n    let x = 1;\n}\n");
    }
}

#[test]
fn example_memo_capture_reminds_before_compaction() {
    let sb = Sandbox::new();
    sb.example_hook(false, "memo-capture");
    let out = run(&sb, "PreCompact", r#"{"session_id":"s1"}"#);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "aid");
    assert!(
        v["signals"][0]["payload"]["context_info"]
            .as_str()
            .unwrap()
            .contains("MEMO.md")
    );
}

#[test]
fn hook_schema_is_available() {
    let sb = Sandbox::new();
    let out = sb.ahp().args(["schema", "--hook-md"]).output().unwrap();
    let v = json_out(&out);
    assert_eq!(v["title"], "HOOK.md frontmatter");
    assert!(kinds(&sb).is_empty());
}

/// An agent that says `"cwd": "."` (or a user passing `--project .`) gets the
/// same project hooks as with an absolute path: the root is made absolute
/// before hook directories are derived from it.
#[test]
fn a_relative_project_root_still_runs_project_hooks() {
    let sb = Sandbox::new();
    sb.hook(
        true,
        "no-rm",
        TRIGGER,
        "cat >/dev/null; echo 'rm is not allowed here' >&2; exit 2",
    );
    let trusted = sb.ahp().arg("trust").output().unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));

    let out = sb
        .ahp()
        .args(["hook", "claude-code"])
        .write_stdin(
            r#"{"session_id":"s","cwd":".","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /tmp/x"}}"#,
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("error"), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("rm is not allowed here")
    );

    let out = sb
        .ahp()
        .args(["run", "pre-tool-use", "--project", "."])
        .write_stdin(SHELL_RM)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        json_out(&out)["signals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["header"]["source"] == "no-rm")
    );
}

/// Under `fail_closed`, a HOOK.md hook that does not load is a part of the
/// policy that does not run: the call blocks, as for a broken entry, and
/// the reason names the hook's file. Without it, a warning.
#[test]
fn under_fail_closed_a_hook_that_does_not_load_blocks() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "h1",
        "trigger: pre-tool-call\nmatcher: { tool: \"[\" }\n",
        "cat >/dev/null; exit 0",
    );
    let ls = r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#;
    let out = run(&sb, "pre-tool-use", ls);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("hook not loaded"), "{}", stderr(&out));
    sb.write_home(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    let out = sb
        .claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("\"permissionDecision\":\"deny\""), "{said}");
    assert!(said.contains("h1/HOOK.md"), "{said}");

    // A repository's broken hook that would not run (untrusted, or
    // project hooks switched off) does not block the user's calls;
    // `ahp validate` still names it.
    let sb = Sandbox::new();
    sb.write_home(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    sb.write(
        ".agents/hooks/bad/HOOK.md",
        "---\nname: bad\nevents: [nonsense\n---\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad/HOOK.md"), "{}", stderr(&out));
    for user in [
        "settings:\n  fail_closed: true\n",
        "settings:\n  fail_closed: true\n  project_hooks: false\n",
    ] {
        sb.write_home(".ahp/hooks.yaml", user);
        let out = sb
            .claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!said.contains("deny"), "{user}: {said}{}", stderr(&out));
    }
}

/// A repository's `on_error: allow` on the user's hook does not undo the
/// user's `fail_closed`: the hook's failure blocks, and a warning says why.
#[test]
fn a_repository_cannot_set_on_error_allow_under_fail_closed() {
    let sb = Sandbox::new();
    sb.hook(
        false,
        "h1",
        "trigger: pre-tool-call\n",
        "cat >/dev/null; exit 1",
    );
    sb.write_home(".ahp/hooks.yaml", "settings:\n  fail_closed: true\n");
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - hook: h1\n      on_error: allow\n",
    );
    let out = sb
        .claude_pre_tool("s", "Bash", serde_json::json!({"command": "ls"}))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains("\"permissionDecision\":\"deny\""), "{said}");
    assert!(
        said.contains("hooks.pre-tool-use[h1].on_error (project layer) is ignored"),
        "{said}"
    );
}

/// An agent that gives up on a slow hook stops ahp (SIGTERM): the hook's
/// processes are killed with it, and the call is recorded as an error.
#[test]
fn a_stopped_call_kills_its_hooks_and_is_recorded() {
    let sb = Sandbox::new();
    let pid_file = sb.root().join("hook.pid");
    sb.hook(
        false,
        "slow",
        "trigger: pre-tool-call\ntimeout: 600000\n",
        &format!(
            "cat >/dev/null; sleep 60 & echo $! > '{}'; wait",
            pid_file.display()
        ),
    );
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ahp"));
    cmd.args(["hook", "claude-code"])
        .current_dir(sb.root())
        .env("HOME", sb.home.path())
        .env("AHP_MANAGED_CONFIG", "")
        .env_remove("AHP_FAIL_CLOSED")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let payload = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"ls"}}}}"#,
        sb.root().display()
    );
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    let started = std::time::Instant::now();
    while !pid_file.exists() && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sleeper = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ahp was stopped (SIGTERM)"), "{err}");
    // Gone, or a zombie waiting for init to reap it.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{sleeper}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    let waited = std::time::Instant::now();
    while alive() && waited.elapsed() < std::time::Duration::from_secs(2) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!alive(), "the hook's `sleep` outlived the call");
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &sleeper])
        .status();
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(
        log.contains("\"kind\":\"error\"") && log.contains("SIGTERM"),
        "{log}"
    );
}

/// A HOOK.md whose script sits beside it, not in `scripts/`, pointed at a
/// blank line 1:1 and said only "no entry point"; a setting of the wrong
/// value said "found a number" without the number.
#[test]
fn load_errors_point_at_what_is_there_and_say_what_was_found() {
    let sb = Sandbox::new();
    let dir = sb.root().join(".agents/hooks/pyh");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("HOOK.md"),
        "---\nname: pyh\ndescription: x\ntrigger: pre-tool-call\n---\n",
    )
    .unwrap();
    std::fs::write(dir.join("run.py"), "print(1)\n").unwrap();
    sb.write(".ahp/hooks.yaml", "settings:\n  stop_block_cap: 0\n");
    let out = sb.ahp().arg("validate").output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("pyh/HOOK.md:2:1: hook `pyh` has no entry point")
            && err.contains("2 | name: pyh"),
        "{err}"
    );
    assert!(
        err.contains("run.py beside HOOK.md is not read: move it to scripts/run.py"),
        "{err}"
    );
    assert!(
        err.contains(
            "settings.stop_block_cap: expected a whole number of at least 1, found a number (0)"
        ),
        "{err}"
    );
}
