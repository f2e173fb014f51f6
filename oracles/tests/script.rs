//! The Script oracle (HOOK.md script hooks) with real processes: hook
//! folders are written into temporary directories and run through
//! `evaluate_full`.

use ahp_engine::{
    Evaluation, Event, HookContext, Intensity, ModOp, Oracle, OracleConfig, OracleConfigError,
    OracleError, Payload, Registry, Severity, Signal, ToolCall,
};
use ahp_oracles::scripts::script::{OUTPUT_CAP, SIGNAL_TYPE, ScriptHook};
use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

// ---------------------------------------------------------------- helpers

/// A hook folder with one script under `scripts/`.
fn hook_folder(file: &str, body: &str) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    add_script(dir.path(), file, body, true);
    dir
}

fn add_script(dir: &Path, file: &str, body: &str, executable: bool) -> PathBuf {
    let scripts = dir.join("scripts");
    fs::create_dir_all(&scripts).unwrap();
    let path = scripts.join(file);
    fs::write(&path, body).unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn config(dir: &Path, extra: Value) -> Value {
    let mut c = json!({"name": "test-hook", "hook_dir": dir.to_str().unwrap()});
    if let (Some(c), Value::Object(e)) = (c.as_object_mut(), extra) {
        c.extend(e);
    }
    c
}

fn hook_with(dir: &Path, extra: Value) -> ScriptHook {
    let c = config(dir, extra);
    match ScriptHook::from_config(OracleConfig::new(&c, None)) {
        Ok(h) => h,
        Err(e) => panic!("config {c} rejected: {e}"),
    }
}

fn hook(dir: &Path) -> ScriptHook {
    hook_with(dir, json!({}))
}

fn config_error(c: Value) -> OracleConfigError {
    match ScriptHook::from_config(OracleConfig::new(&c, None)) {
        Ok(_) => panic!("config {c} accepted but should not be"),
        Err(e) => e,
    }
}

fn tool_ctx(input: Value) -> HookContext {
    let mut ctx = HookContext::for_event(Event::PreToolUse);
    ctx.session_id = Some("sess-1".into());
    ctx.tool = Some(ToolCall {
        name: "shell".into(),
        raw_name: Some("Bash".into()),
        input,
        use_id: Some("tool_123".into()),
        ..ToolCall::default()
    });
    ctx
}

fn ctx() -> HookContext {
    tool_ctx(json!({"command": "ls -l"}))
}

async fn run(hook: &ScriptHook, ctx: &HookContext) -> Evaluation {
    match hook.evaluate_full(ctx).await {
        Ok(e) => e,
        Err(e) => panic!("hook failed: {e}"),
    }
}

async fn run_err(hook: &ScriptHook, ctx: &HookContext) -> OracleError {
    match hook.evaluate_full(ctx).await {
        Ok(e) => panic!("hook succeeded but should not: {e:?}"),
        Err(e) => e,
    }
}

/// Runs a `run.sh` with this body.
async fn sh(body: &str) -> Evaluation {
    let dir = hook_folder("run.sh", body);
    run(&hook(dir.path()), &ctx()).await
}

async fn sh_err(body: &str) -> OracleError {
    let dir = hook_folder("run.sh", body);
    run_err(&hook(dir.path()), &ctx()).await
}

fn only(eval: &Evaluation) -> &Signal {
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    &eval.signals[0]
}

fn block_reason(s: &Signal) -> &str {
    match &s.payload {
        Payload::Block(b) => &b.reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

fn aid_text(s: &Signal) -> &str {
    match &s.payload {
        Payload::Aid(a) => &a.context_info,
        other => panic!("expected an aid, got {other:?}"),
    }
}

/// Whether a process is running: no /proc entry, or a zombie / dead
/// entry, counts as not running.
fn running(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z') | Some('X') | None)
}

fn wait_until_stopped(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if !running(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(path: &Path) -> u32 {
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        if let Ok(s) = fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < until, "{} never written", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ----------------------------------------------------------- exit codes

#[tokio::test(flavor = "current_thread")]
async fn exit_2_blocks_with_stderr_as_reason() {
    let eval = sh("echo 'Dangerous command blocked: rm -rf /' >&2\nexit 2\n").await;
    let s = only(&eval);
    assert_eq!(s.intensity(), Intensity::Block);
    assert_eq!(block_reason(s), "Dangerous command blocked: rm -rf /");
    assert_eq!(s.header.signal_type, SIGNAL_TYPE);
    assert!(eval.notes.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn exit_2_without_stderr_still_blocks() {
    let eval = sh("exit 2\n").await;
    assert_eq!(
        block_reason(only(&eval)),
        "hook `test-hook` blocked the action (exit 2) without giving a reason"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn exit_2_with_non_utf8_stderr_is_decoded_lossily() {
    let eval = sh("printf 'bad \\377\\376 bytes' >&2\nexit 2\n").await;
    let reason = block_reason(only(&eval));
    assert!(reason.starts_with("bad "), "{reason}");
    assert!(reason.contains('\u{FFFD}'), "{reason}");
    assert!(reason.ends_with(" bytes"), "{reason}");
}

#[tokio::test(flavor = "current_thread")]
async fn exit_1_fails_open_with_stderr_in_the_message() {
    let err = sh_err("echo 'config file missing' >&2\nexit 1\n").await;
    let msg = err.to_string();
    assert!(msg.contains("hook `test-hook`"), "{msg}");
    assert!(msg.contains("exit code 1"), "{msg}");
    assert!(msg.contains("config file missing"), "{msg}");
}

#[tokio::test(flavor = "current_thread")]
async fn long_stderr_is_cut_in_error_messages() {
    let err = sh_err("head -c 5000 /dev/zero | tr '\\0' 'e' >&2\nexit 3\n").await;
    let msg = err.to_string();
    assert!(msg.contains("exit code 3"), "{msg}");
    assert!(msg.len() < 1000, "{} chars", msg.len());
    assert!(msg.ends_with('…'), "{msg}");
}

#[tokio::test(flavor = "current_thread")]
async fn death_by_signal_is_an_error() {
    let err = sh_err("kill -9 $$\n").await;
    let msg = err.to_string();
    assert!(msg.contains("killed by signal 9"), "{msg}");
    assert!(msg.contains("wrote nothing to stderr"), "{msg}");
}

#[tokio::test(flavor = "current_thread")]
async fn empty_stdout_accepts() {
    let eval = sh("echo 'debug only' >&2\nexit 0\n").await;
    assert_eq!(eval, Evaluation::default());
    let eval = sh("echo '   '\n").await;
    assert!(eval.signals.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn plain_stdout_is_context() {
    let eval = sh("echo 'remember: run the tests'\n").await;
    let s = only(&eval);
    assert_eq!(s.intensity(), Intensity::Aid);
    assert_eq!(aid_text(s), "remember: run the tests");
    assert_eq!(s.header.signal_type, SIGNAL_TYPE);
}

// ------------------------------------------------------------ JSON answers

#[tokio::test(flavor = "current_thread")]
async fn decision_deny_blocks_with_reason() {
    let eval = sh(r#"echo '{"decision": "deny", "reason": "no force push"}'"#).await;
    let s = only(&eval);
    assert_eq!(block_reason(s), "no force push");
    assert_eq!(s.header.signal_type, SIGNAL_TYPE);

    let eval = sh(r#"echo '{"decision": "block"}'"#).await;
    assert_eq!(block_reason(only(&eval)), "denied by hook `test-hook`");
}

#[tokio::test(flavor = "current_thread")]
async fn decision_ask_prompts_with_high_severity() {
    let eval = sh(r#"echo '{"decision": "ask", "reason": "touches production"}'"#).await;
    match &only(&eval).payload {
        Payload::Prompt(p) => {
            assert_eq!(p.message, "touches production");
            assert_eq!(p.severity, Severity::High);
        }
        other => panic!("{other:?}"),
    }
    let eval = sh(r#"echo '{"decision": "ask"}'"#).await;
    match &only(&eval).payload {
        Payload::Prompt(p) => assert_eq!(p.message, "hook `test-hook` asks for confirmation"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn decision_allow_says_nothing_and_log_becomes_notes() {
    let eval = sh(r#"echo '{"decision": "allow", "log": "Command validated"}'"#).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert_eq!(eval.notes, vec!["Command validated"]);

    let eval = sh(r#"echo '{"log": ["one", "two", 3]}'"#).await;
    assert!(eval.signals.is_empty());
    assert_eq!(eval.notes, vec!["one", "two", "3"]);
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_decision_fails_open() {
    let err = sh_err(r#"echo '{"decision": "maybe"}'"#).await;
    let msg = err.to_string();
    assert!(msg.contains("unknown decision `maybe`"), "{msg}");
    assert!(msg.contains("allow, deny or ask"), "{msg}");
    let err = sh_err(r#"echo '{"decision": true}'"#).await;
    assert!(err.to_string().contains("a boolean"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_keys_without_a_decision_fail_open() {
    let err = sh_err(r#"echo '{"additonal_context": "x", "verdict": "deny"}'"#).await;
    let msg = err.to_string();
    assert!(
        msg.contains(
            "unknown keys `additonal_context` (did you mean `additional_context`?), `verdict`"
        ),
        "{msg}"
    );
    // Known keys alone, or any keys beside a decision, are fine.
    let eval = sh(r#"echo '{"reason": "r", "log": "l"}'"#).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    let eval = sh(r#"echo '{"decision": "allow", "suppressOutput": true}'"#).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn modified_input_is_a_deep_merge_control() {
    let eval = sh(r#"echo '{"modified_input": {"command": "rm -ri build", "opts": {"x": 1}}, "reason": "made rm interactive"}'"#).await;
    let s = only(&eval);
    let Payload::Control(c) = &s.payload else {
        panic!("{s:?}")
    };
    assert_eq!(c.message.as_deref(), Some("made rm interactive"));
    assert_eq!(c.modifications.len(), 1);
    let m = &c.modifications[0];
    assert_eq!(m.target, "tool.input");
    assert_eq!(m.op, ModOp::Merge);

    // Applied, it keeps the fields the hook did not mention.
    let mut ctx = tool_ctx(json!({"command": "rm -rf build", "timeout": 5, "opts": {"y": 2}}));
    ctx.apply(m).unwrap();
    assert_eq!(
        ctx.tool.unwrap().input,
        json!({"command": "rm -ri build", "timeout": 5, "opts": {"x": 1, "y": 2}})
    );

    let eval = sh(r#"echo '{"modified_input": {"command": "ls"}}'"#).await;
    let Payload::Control(c) = &only(&eval).payload else {
        panic!()
    };
    assert_eq!(
        c.message.as_deref(),
        Some("hook `test-hook` rewrote the tool input")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn modified_input_must_be_an_object() {
    let err = sh_err(r#"echo '{"modified_input": "ls"}'"#).await;
    assert!(err.to_string().contains("modified_input"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn additional_context_is_an_aid() {
    let eval = sh(r#"echo '{"additional_context": "tests live in ./t"}'"#).await;
    assert_eq!(aid_text(only(&eval)), "tests live in ./t");
    let eval = sh(r#"echo '{"additional_context": {"files": ["a.rs"]}}'"#).await;
    assert_eq!(aid_text(only(&eval)), r#"{"files":["a.rs"]}"#);
}

#[tokio::test(flavor = "current_thread")]
async fn several_fields_give_several_signals() {
    let eval = sh(r#"echo '{"decision": "deny", "reason": "no", "additional_context": "see CONTRIBUTING.md", "log": "checked"}'"#).await;
    let kinds: Vec<Intensity> = eval.signals.iter().map(Signal::intensity).collect();
    assert_eq!(kinds, vec![Intensity::Block, Intensity::Aid]);
    assert_eq!(block_reason(&eval.signals[0]), "no");
    assert_eq!(aid_text(&eval.signals[1]), "see CONTRIBUTING.md");
    assert_eq!(eval.notes, vec!["checked"]);
    assert!(
        eval.signals
            .iter()
            .all(|s| s.header.signal_type == SIGNAL_TYPE)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn invalid_json_fails_open() {
    let err = sh_err(r#"echo '{"decision": "deny", '"#).await;
    let msg = err.to_string();
    assert!(msg.contains("invalid JSON"), "{msg}");
    assert!(msg.contains("hook `test-hook`"), "{msg}");
    let err = sh_err("echo '[1, 2'").await;
    assert!(err.to_string().contains("invalid JSON"), "{err}");
    let err = sh_err("echo '[1, 2]'").await;
    assert!(err.to_string().contains("expected a JSON object"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn evaluate_returns_the_signals_of_evaluate_full() {
    let dir = hook_folder("run.sh", r#"echo '{"decision": "deny", "log": "x"}'"#);
    let signals = hook(dir.path()).evaluate(&ctx()).await.unwrap();
    assert_eq!(signals.len(), 1);
    assert_eq!(signals[0].intensity(), Intensity::Block);
}

// ------------------------------------------------------------- processes

#[tokio::test(flavor = "current_thread")]
async fn timeout_kills_the_whole_process_group() {
    let dir = hook_folder(
        "run.sh",
        "sleep 30 &\necho $! > \"$AHP_HOOK_DIR/child.pid\"\necho $$ > \"$AHP_HOOK_DIR/main.pid\"\nsleep 30\n",
    );
    let h = hook_with(dir.path(), json!({"timeout_ms": 200}));
    let started = Instant::now();
    let err = run_err(&h, &ctx()).await;
    let elapsed = started.elapsed();
    assert_eq!(
        err.to_string(),
        "hook `test-hook` timed out after 200 ms; its process group was killed"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");

    let main = read_pid(&dir.path().join("main.pid"));
    let child = read_pid(&dir.path().join("child.pid"));
    // Our own child is reaped: not even a zombie is left.
    assert!(
        !Path::new(&format!("/proc/{main}")).exists(),
        "hook process {main} still has a /proc entry"
    );
    assert!(
        wait_until_stopped(child),
        "background child {child} survived"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_background_child_does_not_outlive_the_hook() {
    // The background `sleep` holds stdout open: without the group kill the
    // evaluation would wait 30 s for EOF.
    let dir = hook_folder(
        "run.sh",
        "sleep 30 &\necho $! > \"$AHP_HOOK_DIR/child.pid\"\necho 'started a watcher'\n",
    );
    let started = Instant::now();
    let eval = run(&hook(dir.path()), &ctx()).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(aid_text(only(&eval)), "started a watcher");
    assert_eq!(eval.notes.len(), 1, "{eval:?}");
    assert!(eval.notes[0].contains("left processes running"), "{eval:?}");
    let child = read_pid(&dir.path().join("child.pid"));
    assert!(
        wait_until_stopped(child),
        "background child {child} survived"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_process_that_left_the_group_is_not_waited_for() {
    // `setsid` escapes the group kill; its inherited pipes are given up on
    // after a short grace.
    let dir = hook_folder(
        "run.sh",
        "setsid sleep 30 &\necho $! > \"$AHP_HOOK_DIR/escaped.pid\"\necho 'done'\n",
    );
    let started = Instant::now();
    let eval = run(&hook(dir.path()), &ctx()).await;
    let elapsed = started.elapsed();
    let escaped = read_pid(&dir.path().join("escaped.pid"));
    // Clean up what the hook left behind before asserting anything.
    if let Some(pid) = rustix::process::Pid::from_raw(escaped as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_eq!(aid_text(only(&eval)), "done");
}

#[tokio::test(flavor = "current_thread")]
async fn dropping_the_evaluation_kills_the_group() {
    let dir = hook_folder(
        "run.sh",
        "sleep 30 &\necho $! > \"$AHP_HOOK_DIR/child.pid\"\necho $$ > \"$AHP_HOOK_DIR/main.pid\"\nsleep 30\n",
    );
    let h = hook(dir.path()); // 30 s timeout of its own
    let c = ctx();
    let cancelled = tokio::time::timeout(Duration::from_millis(300), h.evaluate_full(&c)).await;
    assert!(cancelled.is_err(), "the hook should still be running");
    let main = read_pid(&dir.path().join("main.pid"));
    let child = read_pid(&dir.path().join("child.pid"));
    assert!(wait_until_stopped(main), "hook process {main} survived");
    assert!(
        wait_until_stopped(child),
        "background child {child} survived"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_hook_that_never_reads_stdin_gets_a_large_input() {
    let big = "x".repeat(5 * 1024 * 1024);
    let c = tool_ctx(json!({"content": big}));
    for body in ["echo fine\n", "exit 0\n", "sleep 0.2\necho slow\n"] {
        let dir = hook_folder("run.sh", body);
        let started = Instant::now();
        let eval = run(&hook(dir.path()), &c).await;
        assert!(started.elapsed() < Duration::from_secs(10), "{body}");
        assert!(eval.signals.len() <= 1, "{body}: {eval:?}");
    }
    // And one that does read it all sees all of it.
    let dir = hook_folder("run.sh", "wc -c\n");
    let eval = run(&hook(dir.path()), &c).await;
    let n: usize = aid_text(only(&eval)).trim().parse().unwrap();
    assert!(n > 2 * 5 * 1024 * 1024, "{n} bytes read");
}

#[tokio::test(flavor = "current_thread")]
async fn stdout_is_capped_at_one_mib() {
    // Over the cap, the output is the hook's error: its answer may have
    // been in what was cut.
    let err = sh_err("head -c 3145728 /dev/zero | tr '\\0' 'a'\n").await;
    assert!(
        err.to_string()
            .contains("printed more than the 1 MiB read on stdout"),
        "{err}"
    );
    // At the cap exactly, it is read.
    let eval = sh(&format!("head -c {OUTPUT_CAP} /dev/zero | tr '\\0' 'a'\n")).await;
    assert_eq!(aid_text(only(&eval)).len(), OUTPUT_CAP);
}

#[tokio::test(flavor = "current_thread")]
async fn stderr_is_capped_at_one_mib() {
    let eval = sh("head -c 3145728 /dev/zero | tr '\\0' 'e' >&2\nexit 2\n").await;
    let reason = block_reason(only(&eval));
    assert!(
        reason.ends_with(" [stderr truncated at 1 MiB]"),
        "…{}",
        &reason[reason.len() - 60..]
    );
    let kept = reason.strip_suffix(" [stderr truncated at 1 MiB]").unwrap();
    assert_eq!(kept.len(), OUTPUT_CAP);
    assert!(kept.bytes().all(|b| b == b'e'));
}

// ------------------------------------------------- environment and stdin

const ECHO_ENV_PY: &str = r#"
import json, os
keys = ["AHP_EVENT", "AHP_SESSION_ID", "AHP_PROJECT_DIR", "AHP_HOOK_DIR"]
info = {k: os.environ.get(k) for k in keys}
info["cwd"] = os.getcwd()
print(json.dumps({"additional_context": info}))
"#;

async fn env_of(h: &ScriptHook, ctx: &HookContext) -> Value {
    let eval = run(h, ctx).await;
    serde_json::from_str(aid_text(only(&eval))).unwrap()
}

fn same_dir(a: &Value, b: &Path) -> bool {
    let a = fs::canonicalize(a.as_str().unwrap()).unwrap();
    a == fs::canonicalize(b).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn environment_and_working_directory() {
    let dir = hook_folder("run.py", ECHO_ENV_PY);
    let project = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();

    // project_dir wins.
    let h = hook_with(
        dir.path(),
        json!({"project_dir": project.path().to_str().unwrap()}),
    );
    let mut c = ctx();
    c.work_dir = Some(work.path().to_str().unwrap().into());
    let env = env_of(&h, &c).await;
    assert_eq!(env["AHP_EVENT"], "pre-tool-use");
    assert_eq!(env["AHP_SESSION_ID"], "sess-1");
    assert!(same_dir(&env["AHP_PROJECT_DIR"], project.path()), "{env}");
    assert!(same_dir(&env["AHP_HOOK_DIR"], dir.path()), "{env}");
    assert!(same_dir(&env["cwd"], project.path()), "{env}");

    // Else the context's work_dir, when it exists.
    let h = hook(dir.path());
    let env = env_of(&h, &c).await;
    assert!(same_dir(&env["cwd"], work.path()), "{env}");

    // Else the hook folder.
    c.work_dir = Some("/no/such/dir".into());
    c.session_id = None;
    c.event = Some(Event::PreAgentTurnStop);
    let env = env_of(&h, &c).await;
    assert!(same_dir(&env["cwd"], dir.path()), "{env}");
    assert_eq!(env["AHP_SESSION_ID"], "");
    assert_eq!(env["AHP_EVENT"], "pre-agent-turn-stop");
}

#[tokio::test(flavor = "current_thread")]
async fn the_project_dir_of_the_oracle_config_is_the_default() {
    let dir = hook_folder("run.py", ECHO_ENV_PY);
    let project = tempfile::tempdir().unwrap();
    let c = config(dir.path(), json!({}));
    let h = ScriptHook::from_config(OracleConfig::new(&c, Some(project.path()))).unwrap();
    let env = env_of(&h, &ctx()).await;
    assert!(same_dir(&env["cwd"], project.path()), "{env}");
    assert!(same_dir(&env["AHP_PROJECT_DIR"], project.path()), "{env}");
}

const CAT_STDIN: &str = "printf '{\"additional_context\": %s}' \"$(cat)\"\n";

async fn stdin_of(c: &HookContext) -> Value {
    let dir = hook_folder("run.sh", CAT_STDIN);
    let eval = run(&hook(dir.path()), c).await;
    serde_json::from_str(aid_text(only(&eval))).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn stdin_has_the_agent_hooks_shape() {
    let mut c = tool_ctx(json!({"command": "rm -rf /tmp/old-files"}));
    c.work_dir = Some("/home/user/project".into());
    c.raw = Some(json!({"huge": "original payload"}));
    let v = stdin_of(&c).await;
    assert_eq!(v["event_type"], "pre-tool-call");
    assert_eq!(v["session_id"], "sess-1");
    assert_eq!(v["work_dir"], "/home/user/project");
    assert_eq!(v["tool_name"], "Bash");
    assert_eq!(v["tool_input"], json!({"command": "rm -rf /tmp/old-files"}));
    assert_eq!(v["tool_use_id"], "tool_123");
    assert!(v["timestamp"].as_str().unwrap().contains('T'), "{v}");
    assert_eq!(v["context"]["tool"]["name"], "shell");
    assert_eq!(v["context"]["event"], "pre-tool-use");
    assert!(v["context"].get("raw").is_none(), "{v}");
    assert!(v.get("prompt").is_none());

    let mut c = HookContext::for_event(Event::PostToolUseFailure);
    c.tool = Some(ToolCall {
        name: "write".into(),
        input: json!({"path": "a.rs"}),
        response: Some(json!({"error": "denied"})),
        ..ToolCall::default()
    });
    let v = stdin_of(&c).await;
    assert_eq!(v["event_type"], "post-tool-call-failure");
    assert_eq!(v["tool_name"], "write");
    assert_eq!(v["tool_response"], json!({"error": "denied"}));
    assert_eq!(v["session_id"], Value::Null);
}

#[tokio::test(flavor = "current_thread")]
async fn stdin_carries_turn_and_subagent_fields() {
    let c: HookContext = serde_json::from_value(json!({
        "event": "pre-agent-turn-stop",
        "session_id": "s",
        "turn": {"stop_reason": "no_tool_calls", "step_count": 5,
                 "final_message": {"role": "assistant", "content": "done"},
                 "stop_hook_active": false},
    }))
    .unwrap();
    let v = stdin_of(&c).await;
    assert_eq!(v["event_type"], "pre-agent-turn-stop");
    assert_eq!(v["stop_reason"], "no_tool_calls");
    assert_eq!(v["step_count"], 5);
    assert_eq!(v["final_message"]["content"], "done");
    assert_eq!(v["stop_hook_active"], false);
    assert!(v.get("tool_name").is_none());

    let c: HookContext = serde_json::from_value(json!({
        "event": "SubagentStart",
        "subagent": {"subagent_name": "code-reviewer", "subagent_type": "coder",
                     "task_description": "review auth", "session_id": "not-this"},
        "session_id": "s",
    }))
    .unwrap();
    let v = stdin_of(&c).await;
    assert_eq!(v["event_type"], "pre-subagent");
    assert_eq!(v["subagent_name"], "code-reviewer");
    assert_eq!(v["subagent_type"], "coder");
    assert_eq!(v["task_description"], "review auth");
    assert_eq!(v["session_id"], "s", "base fields are not overwritten");

    let c: HookContext =
        serde_json::from_value(json!({"event": "UserPromptSubmit", "turn": {"prompt": "hi"}}))
            .unwrap();
    let v = stdin_of(&c).await;
    assert_eq!(v["event_type"], "pre-agent-turn");
    assert_eq!(v["prompt"], "hi");
}

// ---------------------------------------------------------------- matcher

fn matcher_hook(matcher: Value) -> ScriptHook {
    let c = json!({"name": "m", "hook_dir": "/nonexistent/hook", "matcher": matcher});
    ScriptHook::from_config(OracleConfig::new(&c, None)).unwrap()
}

#[test]
fn matcher_on_tool_name_or_raw_name() {
    let c = ctx(); // name shell, raw_name Bash
    assert!(matcher_hook(json!({"tool": "^Bash$"})).matches(&c));
    assert!(matcher_hook(json!({"tool": "^shell$"})).matches(&c));
    assert!(matcher_hook(json!({"tool": "Shell|Bash"})).matches(&c));
    assert!(!matcher_hook(json!({"tool": "^Write"})).matches(&c));
    let mut no_raw = c.clone();
    if let Some(t) = no_raw.tool.as_mut() {
        t.raw_name = None;
    }
    assert!(!matcher_hook(json!({"tool": "^Bash$"})).matches(&no_raw));
    assert!(matcher_hook(json!({"tool": "^shell$"})).matches(&no_raw));
}

#[test]
fn matcher_on_input_pattern() {
    let c = tool_ctx(json!({"command": "rm -rf /tmp/x"}));
    assert!(matcher_hook(json!({"pattern": "rm -rf|mkfs"})).matches(&c));
    assert!(matcher_hook(json!({"pattern": r#""command":"rm"#})).matches(&c));
    assert!(!matcher_hook(json!({"pattern": "git push"})).matches(&c));
}

#[test]
fn matcher_needs_both_when_both_are_set() {
    let c = tool_ctx(json!({"command": "rm -rf /tmp/x"}));
    assert!(matcher_hook(json!({"tool": "Bash", "pattern": "rm -rf"})).matches(&c));
    assert!(!matcher_hook(json!({"tool": "Write", "pattern": "rm -rf"})).matches(&c));
    assert!(!matcher_hook(json!({"tool": "Bash", "pattern": "mkfs"})).matches(&c));
}

#[test]
fn matcher_without_a_tool_call_does_not_match() {
    let c = HookContext::for_event(Event::PreSession);
    assert!(!matcher_hook(json!({"tool": ".*"})).matches(&c));
    assert!(!matcher_hook(json!({"pattern": ""})).matches(&c));
    // No matcher (or an empty one): every event.
    assert!(matcher_hook(Value::Null).matches(&c));
    assert!(matcher_hook(json!({})).matches(&c));
}

#[tokio::test(flavor = "current_thread")]
async fn a_hook_that_does_not_match_is_not_run() {
    // The folder has no entry point: running it would be an error.
    let dir = tempfile::tempdir().unwrap();
    let h = hook_with(dir.path(), json!({"matcher": {"tool": "^Write$"}}));
    assert_eq!(run(&h, &ctx()).await, Evaluation::default());
    let h = hook(dir.path());
    assert!(
        run_err(&h, &ctx())
            .await
            .to_string()
            .contains("no entry point")
    );
}

// ------------------------------------------------------------ entry point

#[tokio::test(flavor = "current_thread")]
async fn entry_point_precedence_run_then_sh_then_py() {
    let dir = tempfile::tempdir().unwrap();
    let run_path = add_script(dir.path(), "run", "#!/bin/sh\necho from-run\n", true);
    let sh_path = add_script(dir.path(), "run.sh", "echo from-sh\n", false);
    add_script(dir.path(), "run.py", "print('from-py')\n", false);
    let h = hook(dir.path());
    assert_eq!(aid_text(only(&run(&h, &ctx()).await)), "from-run");
    fs::remove_file(run_path).unwrap();
    // run.sh and run.py need no executable bit: bash / python3 run them.
    assert_eq!(aid_text(only(&run(&h, &ctx()).await)), "from-sh");
    fs::remove_file(sh_path).unwrap();
    assert_eq!(aid_text(only(&run(&h, &ctx()).await)), "from-py");
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_that_is_not_executable_says_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = add_script(dir.path(), "run", "#!/bin/sh\necho hi\n", false);
    add_script(dir.path(), "run.sh", "echo not-me\n", true);
    let err = run_err(&hook(dir.path()), &ctx()).await.to_string();
    assert!(err.contains("is not executable"), "{err}");
    assert!(
        err.contains(&format!("chmod +x {}", path.display())),
        "{err}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn missing_entry_point_names_the_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let err = run_err(&hook(dir.path()), &ctx()).await.to_string();
    assert_eq!(
        err,
        format!(
            "hook `test-hook` has no entry point: expected scripts/run, scripts/run.sh or scripts/run.py in {}",
            dir.path().display()
        )
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_explicit_entry_is_used() {
    let dir = hook_folder("run.sh", "echo default\n");
    let other = add_script(dir.path(), "other.sh", "echo explicit\n", false);
    let h = hook_with(dir.path(), json!({"entry": other.to_str().unwrap()}));
    assert_eq!(aid_text(only(&run(&h, &ctx()).await)), "explicit");
    let h = hook_with(dir.path(), json!({"entry": "/no/such/entry.sh"}));
    let err = run_err(&h, &ctx()).await.to_string();
    assert!(err.contains("does not exist"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_script_without_a_shebang_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    add_script(dir.path(), "run", "echo no shebang\n", true);
    let err = run_err(&hook(dir.path()), &ctx()).await.to_string();
    assert!(err.contains("cannot start"), "{err}");
    assert!(err.contains("#!"), "{err}");
}

// ---------------------------------------------------------------- config

#[test]
fn config_errors_name_the_key() {
    let e =
        config_error(json!({"name": "x", "hook_dir": "/h", "matcher": {"pattern": "(unclosed"}}));
    assert_eq!(e.key.as_deref(), Some("matcher.pattern"));
    assert!(e.message.contains("invalid regex"), "{e}");

    let e = config_error(json!({"name": "x", "hook_dir": "/h", "matcher": {"tool": "[a-"}}));
    assert_eq!(e.key.as_deref(), Some("matcher.tool"));

    let e = config_error(json!({"name": "x", "hook_dir": "/h", "timeout": 100}));
    assert_eq!(e.key.as_deref(), Some("timeout"));
    assert!(e.message.contains("did you mean `timeout_ms`"), "{e}");

    let e = config_error(json!({"name": "x", "hook_dir": "/h", "matcher": {"tools": "Bash"}}));
    assert_eq!(e.key.as_deref(), Some("matcher.tools"));
    assert!(e.message.contains("did you mean `tool`"), "{e}");

    let e = config_error(json!({"name": "x", "hook_dir": "/h", "matcher": "Bash"}));
    assert_eq!(e.key.as_deref(), Some("matcher"));

    let e = config_error(json!({"hook_dir": "/h"}));
    assert_eq!(e.key, None);
    assert!(e.message.contains("missing `name`"), "{e}");

    let e = config_error(json!({"name": "x"}));
    assert!(e.message.contains("missing `hook_dir`"), "{e}");

    let e = config_error(json!({"name": "x", "hook_dir": "hooks/x"}));
    assert_eq!(e.key.as_deref(), Some("hook_dir"));
    assert!(e.message.contains("absolute"), "{e}");

    let e = config_error(json!({"name": "x", "hook_dir": "/h", "entry": "scripts/run"}));
    assert_eq!(e.key.as_deref(), Some("entry"));

    for bad in [json!(0), json!(600_001), json!("30s"), json!(1.5)] {
        let e = config_error(json!({"name": "x", "hook_dir": "/h", "timeout_ms": bad}));
        assert_eq!(e.key.as_deref(), Some("timeout_ms"), "{bad}");
    }
}

#[test]
fn config_defaults() {
    let h = matcher_hook(Value::Null);
    assert_eq!(h.name(), "m");
    assert_eq!(h.hook_dir(), Path::new("/nonexistent/hook"));
    assert_eq!(h.timeout(), Duration::from_millis(30_000));
    let c = json!({"name": "m", "hook_dir": "/h", "timeout_ms": 250});
    let h = ScriptHook::from_config(OracleConfig::new(&c, None)).unwrap();
    assert_eq!(h.timeout(), Duration::from_millis(250));
}

#[test]
fn registered_as_script() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(registry.resolve("script"), Some("Script"));
    let c = json!({"name": "x", "hook_dir": "/h"});
    assert!(
        registry
            .build("Script", OracleConfig::new(&c, None))
            .is_ok()
    );
    let bad = json!({"name": "x"});
    assert!(
        registry
            .build("script", OracleConfig::new(&bad, None))
            .is_err()
    );
}

/// Polls until no process of group `pgid` is left.
fn wait_until_group_gone(pgid: u32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pgid as i32) else {
        return true;
    };
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if rustix::process::test_kill_process_group(pid).is_err() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test(flavor = "current_thread")]
async fn a_hook_ignoring_sigterm_is_killed() {
    let dir = hook_folder(
        "run.sh",
        "trap '' TERM\necho $$ > \"$AHP_HOOK_DIR/main.pid\"\nwhile :; do sleep 0.05; done\n",
    );
    let h = hook_with(dir.path(), json!({"timeout_ms": 200}));
    let started = Instant::now();
    let err = run_err(&h, &ctx()).await;
    assert!(err.to_string().contains("timed out after 200 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let main = read_pid(&dir.path().join("main.pid"));
    assert!(wait_until_group_gone(main), "group {main} survived");
}

#[tokio::test(flavor = "current_thread")]
async fn a_hook_that_keeps_forking_is_killed_with_all_its_children() {
    let dir = hook_folder(
        "run.sh",
        "echo $$ > \"$AHP_HOOK_DIR/main.pid\"\nwhile :; do sleep 30 & sleep 0.01; done\n",
    );
    let h = hook_with(dir.path(), json!({"timeout_ms": 300}));
    let err = run_err(&h, &ctx()).await;
    assert!(err.to_string().contains("timed out"), "{err}");
    let main = read_pid(&dir.path().join("main.pid"));
    assert!(wait_until_group_gone(main), "group {main} survived");
}
