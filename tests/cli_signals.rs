//! `ahp signals`: query, stats, tune, report and replay, end to end.

mod common;
use common::*;

const RM_RF: &str = r#"{"tool":{"name":"Bash","input":{"command":"rm -rf /"}}}"#;
const LS: &str = r#"{"tool":{"name":"Bash","input":{"command":"ls"}}}"#;

/// Two blocked `rm -rf /` and one accepted `ls`, with the default policy.
fn logged() -> Sandbox {
    let sb = Sandbox::new();
    for ctx in [RM_RF, LS, RM_RF] {
        sb.ahp()
            .args(["run", "pre-tool-use"])
            .write_stdin(ctx)
            .output()
            .unwrap();
    }
    sb
}

#[test]
fn stats_counts_blocks_per_source() {
    let sb = logged();
    let out = sb
        .ahp()
        .args(["signals", "stats", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["runs"], 3);
    let row = &v["rows"][0];
    assert_eq!(row["source"], "PermissionChecker");
    assert_eq!(row["event"], "pre-tool-use");
    assert_eq!(row["firings"], 2);
    assert_eq!(row["runs_selected"], 3);
    assert_eq!(row["intensity"]["block"], 2);
    let text = sb.ahp().args(["signals", "stats"]).output().unwrap();
    let text = stdout(&text);
    assert!(text.starts_with("SOURCE"), "{text}");
    assert!(text.contains("66.7%"), "{text}");
}

#[test]
fn query_prints_matching_records_as_json_lines() {
    let sb = logged();
    let out = sb
        .ahp()
        .args(["signals", "query", "--kind", "run", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let outcomes: Vec<String> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"].to_string())
        .collect();
    assert_eq!(outcomes, ["\"block\"", "\"accept\"", "\"block\""]);
    let out = sb
        .ahp()
        .args([
            "signals",
            "query",
            "--intensity",
            "block",
            "--since",
            "1h",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 2);
    sb.ahp()
        .args(["signals", "query", "--since", "yesterday"])
        .assert()
        .code(1);
}

#[test]
fn report_writes_an_offline_html_page() {
    let sb = logged();
    let out = sb.root().join("report.html");
    sb.ahp()
        .args(["signals", "report", "--out"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<svg"));
    assert!(html.contains("PermissionChecker"));
    assert!(!html.contains("http"));
}

#[test]
fn replay_flips_a_block_when_the_candidate_drops_the_entry() {
    let sb = logged();
    let candidate = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(candidate.path().join(".ahp")).unwrap();
    std::fs::write(
        candidate.path().join(".ahp/hooks.yaml"),
        "hooks:\n  post-tool-use:\n    - oracle: PermissionChecker\n",
    )
    .unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--config"])
        .arg(candidate.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let flips = text
        .lines()
        .filter(|l| l.starts_with("pre-tool-use") && l.contains("block → accept"))
        .count();
    assert_eq!(flips, 2, "{text}");
    assert!(text.contains("  block → accept: 2"), "{text}");
    assert!(text.contains("-PermissionChecker"), "{text}");
    assert!(
        text.contains("3 runs replayed: 2 changed, 2 outcome flips"),
        "{text}"
    );

    // The same policy as logged changes nothing.
    let same = tempfile::tempdir().unwrap();
    let out = sb
        .ahp()
        .args(["signals", "replay", "--format", "json", "--config"])
        .arg(same.path())
        .output()
        .unwrap();
    let v = json_out(&out);
    assert_eq!(v["runs"], 3);
    assert_eq!(v["outcome_flips"], 0);
}

#[test]
fn a_missing_log_is_an_error() {
    let sb = Sandbox::new();
    sb.ahp().args(["signals", "stats"]).assert().code(1);
}
