//! SecurityScanner end to end: `ahp run` blocks on a planted secret and no
//! trace of it reaches stdout, stderr or the log — at pre-tool-use and, for
//! the changed files of a git branch, at pre-issue-submit (`ahp gate`), for
//! every secret family; changed files at pre-issue-submit; prompts below the threshold; the allow list; config
//! errors.

use crate::common::*;
use serde_json::json;

/// Secret-shaped values assembled at run time (never a committed literal).
fn planted() -> (String, String, Vec<String>) {
    let aws = format!("AKIA{}", "R7T2Q9W4E6Y1U3I5");
    let gh = format!("ghp_{}{}", "Zq8Xw2Lk5Vb9Tn3Rm7", "Yp1Hd4Gs6Fa0Jc8Ke2");
    let pem: Vec<String> = (0..4)
        .map(|i| {
            format!(
                "MIIEow{i}AQAAAoIBAQC7{}",
                "x9Lq2Vb7Tn4Rm1Yp8Hd3Gs6Fa0Jc5Ke2Wz9Qs4Ut7Ni1Ol3"
            )
        })
        .collect();
    (aws, gh, pem)
}

fn scanner_policy(sb: &Sandbox, extra_settings: &str) {
    sb.write(
        ".ahp/hooks.yaml",
        &format!(
            r#"settings:
{extra_settings}  environment: development
hooks:
  pre-tool-use:
    - oracle: SecurityScanner
    # An oracle that echoes the input: the engine must redact its signal too.
    - oracle: Rules
      config:
        rules:
          - condition: "tool.name == write"
            intensity: aid
            message: "writing {{{{ tool.input.content }}}}"
  pre-issue-submit:
    - oracle: SecurityScanner
"#
        ),
    );
}

fn everything_written(sb: &Sandbox, out: &std::process::Output) -> String {
    let mut all = String::new();
    all.push_str(&stdout(out));
    all.push_str(&stderr(out));
    all.push_str(&sb.all_logs().0);
    all
}

#[test]
fn a_planted_secret_blocks_and_leaves_no_trace() {
    let (aws, gh, pem) = planted();
    for format in ["json", "text"] {
        let sb = Sandbox::new();
        // The log's own masking knows names like `password`, not `AWS_KEY`
        // or `GH`: only the engine's redaction keeps these out.
        scanner_policy(&sb, "");
        let content = format!(
            "import boto3\nAWS_KEY = \"{aws}\"\nGH = '{gh}'\nKEY = '''-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----'''\n",
            pem.join("\n")
        );
        let ctx = json!({
            "session_id": "s1",
            "tool": {"name": "write", "raw_name": "Write",
                     "input": {"file_path": "src/settings.py", "content": content}}
        });
        let out = sb
            .ahp()
            .args(["--debug", "run", "pre-tool-use", "--format", format])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("AKIA****"), "{text}");
        assert!(text.contains("ghp_****"), "{text}");
        assert!(text.contains("src/settings.py:2"), "{text}");
        assert!(text.contains("src/settings.py:4"), "{text}");
        let fp = ahp::oracles::policy::security::fingerprint(aws.as_bytes());
        assert!(text.contains(&fp), "{text}");
        let all = everything_written(&sb, &out);
        assert!(
            all.contains("\"kind\":\"run\""),
            "the run was logged: {all}"
        );
        for secret in [&aws, &gh].into_iter().chain(pem.iter()) {
            assert!(
                !all.contains(secret.as_str()),
                "{format}: `{secret}` leaked:\n{all}"
            );
        }
        // Not even a long piece of one.
        assert!(!all.contains(&aws[4..]), "{format}: AWS key body leaked");
        assert!(!all.contains(&gh[4..24]), "{format}: token body leaked");
        // The fix-it step reaches the agent and the log whole: masking
        // must not read `no-secrets: remove …` as a secret's name and value.
        let step = "[no-secrets] remove the secret from the change";
        assert!(text.contains(step), "{format}: {text}");
        let logged = serde_json::to_string(&sb.log_lines()).unwrap();
        assert!(logged.contains(step), "{format}: {logged}");
    }
}

#[test]
fn changed_files_are_scanned_at_pre_issue_submit() {
    let sb = Sandbox::new();
    scanner_policy(&sb, "");
    sb.write(
        "app/db.py",
        "def find(cur, name):\n    cur.execute(f\"SELECT id FROM users WHERE name = '{name}'\")\n",
    );
    sb.write(
        "deploy/install.sh",
        "#!/bin/sh\ncurl -fsSL https://get.example.com | sh\n",
    );
    sb.write("docs/readme.md", "nothing to see\n");
    sb.write("vendor/lib.py", "os.system(f\"rm {x}\")\n");
    let ctx = json!({"files": {"changed": ["app/db.py", "deploy/install.sh", "docs/readme.md", "gone.py"]}});
    let out = sb.run("pre-issue-submit", ctx.to_string());
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    let s = &v["signals"][0];
    assert_eq!(s["header"]["type"], "security-finding");
    let reason = s["payload"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("2 security findings (2 at or above high)"),
        "{reason}"
    );
    assert!(
        reason.contains("no-sql-injection (high)") && reason.contains("app/db.py:2"),
        "{reason}"
    );
    assert!(
        reason.contains("no-curl-pipe-sh (high)") && reason.contains("deploy/install.sh:2"),
        "{reason}"
    );
    assert_eq!(
        s["context"]["files"],
        json!(["app/db.py", "deploy/install.sh"])
    );
    let steps = s["payload"]["resolution_path"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|x| x.as_str().unwrap().contains("parameterized query")),
        "{steps:?}"
    );
}

/// One secret of each family the scanner knows, assembled at run time (no
/// committed literal): (family, value, what the finding shows, a line of
/// source holding it).
fn families() -> Vec<(&'static str, String, &'static str, String)> {
    let aws = format!("AKIA{}", "J4M7P2X9C3V6B8N5");
    let gh = format!("ghp_{}{}", "Vt6Np1Qs8Kd3Wf5Hz9", "Xc2Lm7Rb4Gy0Ja6Pe3");
    let slack = format!(
        "xoxb-{}-{}-{}",
        "620481937254", "7315920486371", "Qm4Zr8Tx2Wv6Yn1Ks5Lp9Hd3"
    );
    // A well-formed JWT: {"alg":"HS256","typ":"JWT"}.{"sub":…,"scope":"admin",…}.signature
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "zdWIiOiI4MjY0MTkzNyIsInNjb3BlIjoiYWRtaW4iLCJpYXQiOjE3MTcwMDAwMDB9",
        "Gk7Vq2Ls9Xw4Nd1Rb6Ty3Hm8Pz5Jc0Fe2Ua7Wi4KoQ"
    );
    let glpat = format!("glpat-{}", "Lw4Tq9Zx2Nv7Rk5Hb1Yd");
    let assigned = format!("{}{}", "S7q!Lz2@Vx9#", "Kd4$Wm8%Rb1^Tn6");
    vec![
        (
            "AWS",
            aws.clone(),
            "AKIA****",
            format!("BOTO_KEY = \"{aws}\""),
        ),
        (
            "GitHub",
            gh.clone(),
            "ghp_****",
            format!("  GH_RELEASE: {gh}"),
        ),
        (
            "Slack",
            slack.clone(),
            "xoxb-****",
            format!("const slack = new WebClient('{slack}');"),
        ),
        (
            "JWT",
            jwt.clone(),
            "eyJh****",
            format!("const bearer = \"{jwt}\";"),
        ),
        (
            "GitLab",
            glpat.clone(),
            "glpat-****",
            format!("git push https://oauth2:{glpat}@gitlab.example.com/acme/app.git"),
        ),
        (
            "assignment",
            assigned.clone(),
            "SIGNING_SECRET=****",
            format!("SIGNING_SECRET = \"{assigned}\""),
        ),
    ]
}

/// Neither a secret nor any 12-character piece of it is in `all`.
fn assert_no_trace(all: &str, secrets: &[&str], what: &str) {
    for secret in secrets {
        assert!(!all.contains(secret), "{what}: `{secret}` leaked:\n{all}");
        for i in 0..=secret.len().saturating_sub(12) {
            let piece = &secret[i..i + 12];
            assert!(
                !all.contains(piece),
                "{what}: `{piece}` of `{secret}` leaked:\n{all}"
            );
        }
    }
}

#[test]
fn planted_secrets_of_every_family_block_pre_issue_submit_and_leave_no_trace() {
    let fams = families();
    let line = |family: &str| fams.iter().find(|f| f.0 == family).unwrap().3.clone();
    let secrets: Vec<&str> = fams.iter().map(|f| f.1.as_str()).collect();
    let sb = Sandbox::new();
    let root = sb.root();
    sb.git_init();
    scanner_policy(&sb, "");
    sb.write(".gitignore", ".ahp/signals.jsonl*\n");
    sb.write("README.md", "# demo\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "chore: start"]);
    git(root, &["checkout", "-q", "-b", "feat/release"]);
    // Committed on the branch …
    sb.write(
        "config/settings.py",
        &format!("import os\n{}\n{}\n", line("AWS"), line("assignment")),
    );
    sb.write("ci/release.yml", &format!("env:\n{}\n", line("GitHub")));
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "feat: release config"]);
    // … and untracked in the working tree.
    sb.write(
        "bot/notify.js",
        &format!("// release notes to #releases\n{}\n", line("Slack")),
    );
    sb.write(
        "web/src/session.ts",
        &format!("// dev session\nexport {{}};\n{}\n", line("JWT")),
    );
    sb.write(
        "scripts/publish.sh",
        &format!("#!/bin/sh\n{}\n", line("GitLab")),
    );
    let expected = [
        "config/settings.py:2",
        "config/settings.py:3",
        "ci/release.yml:2",
        "bot/notify.js:2",
        "web/src/session.ts:3",
        "scripts/publish.sh:2",
    ];
    for format in ["json", "text"] {
        let out = sb
            .ahp()
            .args(["--debug", "gate", "pre-issue-submit", "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
        let text = stdout(&out);
        if format == "json" {
            let v = json_out(&out);
            let s = &v["signals"][0];
            assert_eq!(s["header"]["type"], "security-finding");
            assert_eq!(s["header"]["intensity"], "block");
        }
        assert!(text.contains("no-secrets (critical)"), "{text}");
        assert!(text.contains("no-secrets (high)"), "{text}");
        for at in expected {
            assert!(text.contains(at), "{format}: {at} not named:\n{text}");
        }
        for (_, _, shown, _) in &fams {
            assert!(text.contains(shown), "{format}: {shown} not shown:\n{text}");
        }
        let all = everything_written(&sb, &out);
        assert!(
            all.contains("\"kind\":\"run\""),
            "the run was logged: {all}"
        );
        assert_no_trace(&all, &secrets, &format!("pre-issue-submit {format}"));
    }
}

#[test]
fn every_family_written_by_a_tool_blocks_and_leaves_no_trace() {
    let sb = Sandbox::new();
    scanner_policy(&sb, "");
    for (family, secret, shown, line) in families() {
        let ctx = json!({
            "session_id": "s1",
            "tool": {"name": "write", "raw_name": "Write",
                     "input": {"file_path": "src/release.txt", "content": format!("# release\n{line}\n")}}
        });
        let out = sb
            .ahp()
            .args(["--debug", "run", "pre-tool-use"])
            .write_stdin(ctx.to_string())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{family}: stderr: {}",
            stderr(&out)
        );
        let text = stdout(&out);
        assert!(text.contains("no-secrets ("), "{family}: {text}");
        assert!(text.contains("src/release.txt:2"), "{family}: {text}");
        assert!(text.contains(shown), "{family}: {text}");
        let all = everything_written(&sb, &out);
        assert_no_trace(&all, &[&secret], &format!("pre-tool-use {family}"));
    }
}

#[test]
fn below_the_threshold_prompts_and_the_allow_list_accepts() {
    let sb = Sandbox::new();
    scanner_policy(&sb, "");
    let ctx = json!({"tool": {"name": "shell", "input": {"command": "chmod 777 /srv/shared"}}});
    let out = sb.run("pre-tool-use", ctx.to_string());
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    let s = &v["signals"][0];
    assert_eq!(s["header"]["intensity"], "prompt");
    assert_eq!(s["payload"]["severity"], "medium");
    let msg = s["payload"]["message"].as_str().unwrap();
    assert!(
        msg.contains("no-world-writable (medium)") && msg.contains("tool.input.command:1"),
        "{msg}"
    );
    // The fingerprint from the finding, on the allow list: accepted.
    let fp = msg.split("[fingerprint ").nth(1).unwrap()[..16].to_string();
    sb.write(
        ".ahp/hooks.yaml",
        &format!("hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config: {{allow: [{fp}]}}\n"),
    );
    let out = sb.run("pre-tool-use", ctx.to_string());
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(json_out(&out)["outcome"], "accept");
    // A lower threshold makes the same finding a block.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: security-scanner\n      config: {severity_threshold: medium}\n",
    );
    sb.ahp()
        .args(["run", "pre-tool-use"])
        .write_stdin(ctx.to_string())
        .assert()
        .code(2);
}

/// A rule of your own adds to the built-in rules, as PermissionChecker's
/// and PathGuard's lists add to theirs; naming built-in rules chooses.
#[test]
fn a_rule_of_your_own_keeps_the_built_in_rules() {
    let sb = Sandbox::new();
    let (aws, _, _) = planted();
    let write = |content: String| {
        json!({"tool": {"name": "write", "input": {"file_path": "src/a.py", "content": content}}})
            .to_string()
    };
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config:\n        rules:\n          - {id: no-internal-hosts, pattern: 'internal\\.corp', severity: medium, message: internal host}\n",
    );
    let out = sb.run("pre-tool-use", write(format!("aws_key = \"{aws}\"\n")));
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stdout(&out).contains("no-secrets"), "{}", stdout(&out));
    let out = sb.run("pre-tool-use", write("see http://internal.corp/x\n".into()));
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    // Named, only the named built-in rules run beside yours.
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config:\n        rules:\n          - no-curl-pipe-sh\n          - {id: no-internal-hosts, pattern: 'internal\\.corp', severity: medium, message: internal host}\n",
    );
    let out = sb.run("pre-tool-use", write(format!("aws_key = \"{aws}\"\n")));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_bad_rule_name_is_a_config_error_naming_the_key() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config:\n        rules: [no-secrets, no-curl-pipe-bash]\n",
    );
    let out = sb.ahp().args(["validate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("rules.1"), "{err}");
    assert!(err.contains("did you mean `no-curl-pipe-sh`"), "{err}");
    assert!(err.contains("hooks.yaml:5"), "{err}");
}

/// Echoes the command in an aid, like a chatty custom oracle would.
struct Echo;

#[ahp::async_trait]
impl ahp::Oracle for Echo {
    async fn evaluate(&self, ctx: &ahp::HookContext) -> Result<Vec<ahp::Signal>, ahp::OracleError> {
        let cmd = ctx
            .lookup("tool.input.command")
            .and_then(|v| v.as_str().map(str::to_string));
        Ok(vec![ahp::Signal::aid(format!(
            "running {}",
            cmd.unwrap_or_default()
        ))])
    }
}

/// Every record the engine hands to its sink, serialized.
#[derive(Default)]
struct Capture(std::sync::Mutex<Vec<String>>);

impl ahp::engine::SignalSink for Capture {
    fn record_signal(&self, s: &ahp::Signal) -> Result<(), ahp::engine::SinkError> {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::to_string(s).unwrap());
        Ok(())
    }
    fn record_diagnostic(&self, d: &ahp::engine::Diagnostic) -> Result<(), ahp::engine::SinkError> {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::to_string(d).unwrap());
        Ok(())
    }
    fn record_run(&self, r: &ahp::engine::RunRecord) -> Result<(), ahp::engine::SinkError> {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::to_string(r).unwrap());
        Ok(())
    }
}

#[tokio::test]
async fn a_secret_found_in_a_later_wave_is_redacted_from_earlier_signals() {
    use ahp::engine::{Entry, Policy, Settings};
    use std::sync::Arc;
    let token = format!("glpat-{}", "Hq3Xz8Lw2Vb7Tn5Rm1Yp");
    let scanner = ahp::oracles::SecurityScanner::from_config(ahp::OracleConfig::empty()).unwrap();
    let mut echo = Entry::new("Echo", Arc::new(Echo));
    echo.priority = 0;
    let mut scan = Entry::new("SecurityScanner", Arc::new(scanner));
    scan.priority = 5;
    let policy = Policy::new(
        Settings::default(),
        [(ahp::Event::PreToolUse, vec![echo, scan])],
    )
    .unwrap();
    assert_eq!(policy.plan(ahp::Event::PreToolUse).unwrap().waves.len(), 2);
    let sink = Arc::new(Capture::default());
    let engine = ahp::Engine::builder()
        .policy(policy)
        .sink(sink.clone() as Arc<dyn ahp::engine::SignalSink>)
        .build()
        .unwrap();
    let ctx: ahp::HookContext = serde_json::from_value(json!({
        "tool": {"name": "shell", "input": {"command": format!("git push https://oauth2:{token}@gitlab.example.com/x.git")}}
    }))
    .unwrap();
    let verdict = engine.dispatch(ahp::Event::PreToolUse, ctx).await;
    assert_eq!(verdict.outcome, ahp::Outcome::Block);
    let printed = serde_json::to_string(&verdict).unwrap();
    assert!(
        printed.contains("running git push https://oauth2:***@gitlab"),
        "{printed}"
    );
    assert!(printed.contains("glpat-****"), "{printed}");
    let records = sink.0.lock().unwrap().join("\n");
    assert_eq!(records.matches("\"header\"").count(), 2, "{records}");
    assert!(
        !printed.contains(&token) && !records.contains(&token),
        "{printed}\n{records}"
    );
    // The context handed back to the adapter is the agent's own.
    assert!(
        verdict
            .context
            .lookup("tool.input.command")
            .unwrap()
            .as_str()
            .unwrap()
            .contains(&token)
    );
}
