//! TestGate with real files and commands: JUnit reports, the three coverage
//! formats, and test commands that pass, fail, hang or do not exist.

use ahp_engine::{
    Evaluation, HookContext, Intensity, Oracle, OracleConfig, OracleConfigError, OracleError,
    Payload, Registry, Severity, Signal,
};
use ahp_oracles::workflow::test_gate::{COVERAGE_TYPE, TESTS_FAILED_TYPE, TestGate};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use tempfile::TempDir;

// ---------------------------------------------------------------- helpers

fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, body) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    dir
}

fn gate(dir: &Path, config: Value) -> TestGate {
    match TestGate::from_config(OracleConfig::new(&config, Some(dir))) {
        Ok(g) => g,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn config_error(config: Value) -> OracleConfigError {
    match TestGate::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

async fn run(dir: &Path, config: Value) -> Evaluation {
    match gate(dir, config.clone())
        .evaluate_full(&HookContext::default())
        .await
    {
        Ok(e) => e,
        Err(e) => panic!("{config}: {e}"),
    }
}

async fn run_err(dir: &Path, config: Value) -> OracleError {
    match gate(dir, config.clone())
        .evaluate_full(&HookContext::default())
        .await
    {
        Ok(e) => panic!("{config}: expected an error, got {e:?}"),
        Err(e) => e,
    }
}

fn block(s: &Signal) -> (&str, &[String]) {
    match &s.payload {
        Payload::Block(b) => (b.reason.as_str(), b.resolution_path.as_slice()),
        other => panic!("expected a block, got {other:?}"),
    }
}

const PASSING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0">
  <testsuite name="unit" tests="2">
    <testcase classname="app.math" name="adds" time="0.01"/>
    <testcase classname="app.math" name="subtracts" time="0.01"/>
  </testsuite>
</testsuites>"#;

const FAILING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="unit" tests="4" failures="1" errors="1" skipped="1">
  <testcase classname="app.math" name="adds"/>
  <testcase classname="app.math" name="divides"><failure message="assertion failed: 1 / 0 == 0&#10;  at src/math.rs:12" type="panic"/></testcase>
  <testcase classname="app.io" name="reads_file"><error message="No such file: data.txt"/></testcase>
  <testcase classname="app.io" name="slow"><skipped/></testcase>
</testsuite>"#;

/// 724 of 1000 lines: 72.4%; src/low.rs is the least covered.
const LCOV_72: &str = "TN:\nSF:src/low.rs\nLF:400\nLH:124\nend_of_record\nSF:src/mid.rs\nLF:100\nLH:100\nend_of_record\nSF:src/full.rs\nLF:500\nLH:500\nend_of_record\n";

// ----------------------------------------------------------- config errors

#[test]
fn nothing_to_check_is_a_config_error() {
    for config in [json!(null), json!({}), json!({"require_all_pass": true})] {
        let e = config_error(config);
        assert!(
            e.message
                .contains("set command, junit, coverage or coverage_threshold"),
            "{e}"
        );
    }
}

#[test]
fn bad_settings_name_their_key() {
    for (config, key, expected) in [
        (json!({"comand": "x"}), "comand", "did you mean `command`"),
        (json!({"command": ""}), "command", "must not be empty"),
        (json!({"command": 5}), "command", "expected a string"),
        (
            json!({"command": "x", "timeout_ms": 0}),
            "timeout_ms",
            "between 1 and",
        ),
        (
            json!({"command": "x", "timeout_ms": "10s"}),
            "timeout_ms",
            "milliseconds",
        ),
        (
            json!({"command": "x", "require_all_pass": "yes"}),
            "require_all_pass",
            "true or false",
        ),
        (
            json!({"coverage": {"format": "lcov", "path": "l"}, "coverage_threshold": 120}),
            "coverage_threshold",
            "between 0 and 100",
        ),
        (
            json!({"coverage": {"format": "lcov", "path": "l"}, "coverage_threshold": "80%"}),
            "coverage_threshold",
            "found a string",
        ),
        (
            json!({"coverage": {"format": "lcv", "path": "l"}}),
            "coverage.format",
            "did you mean `lcov`",
        ),
        (
            json!({"coverage": {"format": "jacoco", "path": "l"}}),
            "coverage.format",
            "lcov, cobertura, llvm-cov-json",
        ),
        (
            json!({"coverage": {"format": "lcov"}}),
            "coverage",
            "missing `path`",
        ),
        (
            json!({"coverage": {"format": "lcov", "path": "l", "kind": 1}}),
            "coverage.kind",
            "unknown key",
        ),
        (
            json!({"coverage": "lcov.info"}),
            "coverage",
            "expected a map",
        ),
        (json!({"junit": 3}), "junit", "expected a string or a list"),
        (
            json!({"junit": ["a.xml", ""]}),
            "junit.1",
            "must not be empty",
        ),
        (
            json!({"junit": ["a.xml", 7]}),
            "junit.1",
            "expected a string",
        ),
        (json!({"junit": "reports/[a.xml"}), "junit.0", "bad glob"),
    ] {
        let e = config_error(config.clone());
        assert_eq!(e.key.as_deref(), Some(key), "{config}: {e}");
        assert!(e.message.contains(expected), "{config}: {e}");
    }
    let e = config_error(json!([1]));
    assert!(e.message.contains("must be a map"), "{e}");
}

#[test]
fn registered_under_both_names() {
    let mut registry = Registry::new();
    ahp_oracles::register_builtins(&mut registry);
    assert_eq!(registry.resolve("test-gate"), Some("TestGate"));
    let config = json!({"command": "true"});
    let oracle = registry
        .build("test-gate", OracleConfig::new(&config, None))
        .unwrap();
    assert_eq!(oracle.default_intensity(), Some(Intensity::Block));
}

// ------------------------------------------------------------------ JUnit

#[tokio::test(flavor = "current_thread")]
async fn passing_junit_gives_no_signal() {
    let dir = project(&[("target/junit.xml", PASSING)]);
    let eval = run(dir.path(), json!({"junit": "target/junit.xml"})).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
    assert!(
        eval.notes[0].contains("2 tests, 2 passed, 0 failed"),
        "{:?}",
        eval.notes
    );
}

#[tokio::test(flavor = "current_thread")]
async fn failing_junit_blocks_naming_tests() {
    let dir = project(&[("target/junit.xml", FAILING)]);
    let eval = run(dir.path(), json!({"junit": ["target/junit.xml"]})).await;
    assert_eq!(eval.signals.len(), 1);
    let s = &eval.signals[0];
    assert_eq!(s.header.signal_type, TESTS_FAILED_TYPE);
    let (reason, steps) = block(s);
    assert!(
        reason.starts_with("2 of 4 tests failed (1 failures, 1 errors)"),
        "{reason}"
    );
    assert!(
        reason.contains("app.math::divides: assertion failed: 1 / 0 == 0"),
        "{reason}"
    );
    assert!(
        reason.contains("app.io::reads_file: No such file: data.txt"),
        "{reason}"
    );
    assert!(
        !reason.contains("slow"),
        "skipped tests are not failures: {reason}"
    );
    assert_eq!(
        steps[0],
        "fix app.math::divides: assertion failed: 1 / 0 == 0"
    );
    assert_eq!(steps[1], "fix app.io::reads_file: No such file: data.txt");
    assert!(steps[2].contains("re-run the tests"), "{steps:?}");
    assert_eq!(s.context.files, vec!["target/junit.xml"]);
    assert!(eval.notes[0].contains("1 skipped"), "{:?}", eval.notes);
}

#[tokio::test(flavor = "current_thread")]
async fn many_failures_are_cut() {
    let cases: String = (0..30)
        .map(|i| {
            format!(
                "<testcase classname=\"c\" name=\"t{i}\"><failure message=\"m{i}\"/></testcase>"
            )
        })
        .collect();
    let dir = project(&[("j.xml", &format!("<testsuite>{cases}</testsuite>"))]);
    let eval = run(dir.path(), json!({"junit": "j.xml"})).await;
    let (reason, steps) = block(&eval.signals[0]);
    assert!(reason.contains("; and 27 more"), "{reason}");
    assert_eq!(steps.len(), 22, "{steps:?}");
    assert!(
        steps[20].contains("… and 10 more failing tests (see j.xml)"),
        "{steps:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn reports_are_merged_across_a_glob() {
    let dir = project(&[
        ("reports/unit/a.xml", PASSING),
        ("reports/it/b.xml", FAILING),
        ("reports/notes.txt", "not a report"),
    ]);
    let eval = run(dir.path(), json!({"junit": "reports/**/*.xml"})).await;
    let (reason, _) = block(&eval.signals[0]);
    assert!(reason.starts_with("2 of 6 tests failed"), "{reason}");
    assert_eq!(
        eval.signals[0].context.files,
        vec!["reports/it/b.xml", "reports/unit/a.xml"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_require_all_pass_failures_prompt() {
    let dir = project(&[("j.xml", FAILING)]);
    let g = gate(
        dir.path(),
        json!({"junit": "j.xml", "require_all_pass": false}),
    );
    assert_eq!(g.default_intensity(), Some(Intensity::Prompt));
    let signals = g.evaluate(&HookContext::default()).await.unwrap();
    match &signals[0].payload {
        Payload::Prompt(p) => {
            assert_eq!(p.severity, Severity::High);
            assert!(
                p.message.contains("require_all_pass is false"),
                "{}",
                p.message
            );
            assert!(p.continue_allowed);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn malformed_or_missing_reports_are_errors() {
    let dir = project(&[
        ("bad.xml", "<testsuite><testcase name=\"a\">\n</testsuite>"),
        ("html.xml", "<html></html>"),
        ("empty.xml", ""),
    ]);
    let e = run_err(dir.path(), json!({"junit": "bad.xml"})).await;
    assert!(
        e.message
            .contains("JUnit report bad.xml does not parse: line 2"),
        "{e}"
    );
    let e = run_err(dir.path(), json!({"junit": "html.xml"})).await;
    assert!(e.message.contains("root element is <html>"), "{e}");
    let e = run_err(dir.path(), json!({"junit": "empty.xml"})).await;
    assert!(e.message.contains("empty.xml does not parse"), "{e}");
    let e = run_err(dir.path(), json!({"junit": "missing.xml"})).await;
    assert!(
        e.message.contains("JUnit report `missing.xml` not found"),
        "{e}"
    );
    let e = run_err(dir.path(), json!({"junit": "out/*.xml"})).await;
    assert!(e.message.contains("`out/*.xml` not found"), "{e}");
    // One good report does not hide a bad one.
    let dir = project(&[("r/a.xml", PASSING), ("r/b.xml", "<testsuite>")]);
    let e = run_err(dir.path(), json!({"junit": "r/*.xml"})).await;
    assert!(e.message.contains("r/b.xml does not parse"), "{e}");
}

// --------------------------------------------------------------- coverage

#[tokio::test(flavor = "current_thread")]
async fn lcov_below_threshold_blocks_with_the_gap() {
    let dir = project(&[("lcov.info", LCOV_72)]);
    let config =
        json!({"coverage": {"format": "lcov", "path": "lcov.info"}, "coverage_threshold": 80});
    let eval = run(dir.path(), config).await;
    assert_eq!(eval.signals.len(), 1);
    let s = &eval.signals[0];
    assert_eq!(s.header.signal_type, COVERAGE_TYPE);
    let (reason, steps) = block(s);
    assert_eq!(
        reason,
        "line coverage 72.4% < 80% (−7.6 points), 724 of 1000 lines covered"
    );
    assert_eq!(
        steps[0],
        "add tests for src/low.rs: 31% (124 of 400 lines covered)"
    );
    assert_eq!(steps.len(), 2, "full files are not named: {steps:?}");
    assert!(steps[1].contains("regenerate lcov.info"), "{steps:?}");
    assert_eq!(s.context.files, vec!["src/low.rs"]);
}

#[tokio::test(flavor = "current_thread")]
async fn coverage_at_or_above_threshold_passes() {
    let dir = project(&[("lcov.info", LCOV_72)]);
    for threshold in [72.4, 70.0, 0.0] {
        let config = json!({"coverage": {"format": "lcov", "path": "lcov.info"}, "coverage_threshold": threshold});
        let eval = run(dir.path(), config).await;
        assert!(eval.signals.is_empty(), "{threshold}: {eval:?}");
        assert!(
            eval.notes[0].contains("line coverage 72.4%"),
            "{:?}",
            eval.notes
        );
    }
    // Without a threshold the report is read and noted.
    let eval = run(
        dir.path(),
        json!({"coverage": {"format": "lcov", "path": "lcov.info"}}),
    )
    .await;
    assert!(eval.signals.is_empty());
    assert_eq!(eval.notes, vec!["line coverage 72.4% in lcov.info"]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_threshold_alone_reads_the_first_well_known_report() {
    // The seed's form: no `coverage`, so the usual report paths are tried.
    let dir = project(&[("coverage/lcov.info", LCOV_72)]);
    let eval = run(dir.path(), json!({"coverage_threshold": 80})).await;
    let (reason, steps) = block(&eval.signals[0]);
    assert!(reason.starts_with("line coverage 72.4% < 80%"), "{reason}");
    assert!(
        steps
            .last()
            .unwrap()
            .contains("regenerate coverage/lcov.info"),
        "{steps:?}"
    );
    // No report where one is looked for: an error naming the places.
    let empty = tempfile::tempdir().unwrap();
    let e = run_err(empty.path(), json!({"coverage_threshold": 80})).await;
    assert!(
        e.message.contains("needs a coverage report")
            && e.message
                .contains("lcov.info, coverage/lcov.info, target/lcov.info, coverage.xml"),
        "{e}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn absolute_lcov_paths_are_shown_relative() {
    let dir = tempfile::tempdir().unwrap();
    let abs = dir.path().join("src/a.rs");
    fs::write(
        dir.path().join("lcov.info"),
        format!("SF:{}\nDA:1,1\nDA:2,0\nend_of_record\n", abs.display()),
    )
    .unwrap();
    let config =
        json!({"coverage": {"format": "lcov", "path": "lcov.info"}, "coverage_threshold": 90});
    let eval = run(dir.path(), config).await;
    assert_eq!(eval.signals[0].context.files, vec!["src/a.rs"]);
}

#[tokio::test(flavor = "current_thread")]
async fn cobertura_threshold() {
    let xml = r#"<?xml version="1.0" ?>
<coverage line-rate="0.6" lines-valid="10" lines-covered="6">
  <packages><package name="app"><classes>
    <class name="a" filename="app/a.py"><lines>
      <line number="1" hits="1"/><line number="2" hits="0"/><line number="3" hits="0"/><line number="4" hits="0"/>
    </lines></class>
    <class name="b" filename="app/b.py"><lines>
      <line number="1" hits="1"/><line number="2" hits="1"/><line number="3" hits="1"/><line number="4" hits="1"/><line number="5" hits="1"/><line number="6" hits="0"/>
    </lines></class>
  </classes></package></packages>
</coverage>"#;
    let dir = project(&[("coverage.xml", xml)]);
    let cfg = |t: f64| json!({"coverage": {"format": "cobertura", "path": "coverage.xml"}, "coverage_threshold": t, "command": "true"});
    let eval = run(dir.path(), cfg(75.0)).await;
    let (reason, steps) = block(&eval.signals[0]);
    assert_eq!(
        reason,
        "line coverage 60.0% < 75% (−15.0 points), 6 of 10 lines covered"
    );
    assert!(
        steps[0].starts_with("add tests for app/a.py: 25%"),
        "{steps:?}"
    );
    assert!(
        steps[1].starts_with("add tests for app/b.py: 83.3%"),
        "{steps:?}"
    );
    assert!(steps[2].contains("re-run `true`"), "{steps:?}");
    assert!(run(dir.path(), cfg(60.0)).await.signals.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn llvm_cov_json_threshold() {
    let text = r#"{"data":[{"files":[
        {"filename":"src/a.rs","summary":{"lines":{"count":50,"covered":10,"percent":20}}},
        {"filename":"src/b.rs","summary":{"lines":{"count":50,"covered":45,"percent":90}}}],
        "totals":{"lines":{"count":100,"covered":55,"percent":55.0}}}],
        "type":"llvm.coverage.json.export","version":"2.0.1"}"#;
    let dir = project(&[("cov.json", text)]);
    let cfg = |t: f64| json!({"coverage": {"format": "llvm-cov-json", "path": "cov.json"}, "coverage_threshold": t});
    let eval = run(dir.path(), cfg(79.96)).await;
    let (reason, steps) = block(&eval.signals[0]);
    assert_eq!(
        reason,
        "line coverage 55.0% < 79.96% (−25.0 points), 55 of 100 lines covered"
    );
    assert_eq!(
        steps[0],
        "add tests for src/a.rs: 20% (10 of 50 lines covered)"
    );
    assert!(run(dir.path(), cfg(55.0)).await.signals.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn malformed_or_missing_coverage_is_an_error() {
    let dir = project(&[
        ("lcov.info", "this is not lcov\n"),
        ("cov.xml", "<coverage line-rate=\"0.5\"><packages>"),
        ("cov.json", "{\"data\": []}"),
        ("empty.info", ""),
    ]);
    for (format, path, expected) in [
        (
            "lcov",
            "lcov.info",
            "lcov.info does not parse as lcov: line 1",
        ),
        (
            "lcov",
            "empty.info",
            "empty.info does not parse as lcov: no `SF:` record",
        ),
        (
            "cobertura",
            "cov.xml",
            "cov.xml does not parse as cobertura",
        ),
        ("llvm-cov-json", "cov.json", "no `data[0]`"),
        (
            "lcov",
            "nope.info",
            "coverage report nope.info (lcov): not found at",
        ),
    ] {
        let config =
            json!({"coverage": {"format": format, "path": path}, "coverage_threshold": 50});
        let e = run_err(dir.path(), config).await;
        assert!(e.message.contains(expected), "{format} {path}: {e}");
    }
}

// ---------------------------------------------------------------- command

#[tokio::test(flavor = "current_thread")]
async fn passing_command_gives_no_signal() {
    let dir = tempfile::tempdir().unwrap();
    let eval = run(dir.path(), json!({"command": "echo running; exit 0"})).await;
    assert!(eval.signals.is_empty());
    assert_eq!(
        eval.notes,
        vec!["test command `echo running; exit 0` passed"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn failing_command_blocks_with_its_output_tail() {
    let dir = tempfile::tempdir().unwrap();
    let script = "for i in $(seq 1 30); do echo \"line $i\"; done; echo 'test result: FAILED. 1 failed' >&2; exit 101";
    let eval = run(dir.path(), json!({ "command": script })).await;
    let s = &eval.signals[0];
    assert_eq!(s.header.signal_type, TESTS_FAILED_TYPE);
    let (reason, steps) = block(s);
    assert!(
        reason.contains("failed (exit 101); the end of its output:"),
        "{reason}"
    );
    assert!(
        reason.ends_with("test result: FAILED. 1 failed"),
        "{reason}"
    );
    assert!(
        reason.contains("line 30") && reason.contains("line 12"),
        "{reason}"
    );
    assert!(!reason.contains("line 11\n"), "only the tail: {reason}");
    assert!(
        steps.iter().any(|s| s.contains("re-run `for i in")),
        "{steps:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn failing_command_with_junit_names_the_tests() {
    let dir = tempfile::tempdir().unwrap();
    let failing = FAILING.replace('\'', "");
    let config = json!({
        "command": format!("mkdir -p out && cat > out/junit.xml <<'EOF'\n{failing}\nEOF\nexit 1"),
        "junit": "out/junit.xml"
    });
    let eval = run(dir.path(), config).await;
    assert_eq!(eval.signals.len(), 1);
    let (reason, _) = block(&eval.signals[0]);
    assert!(reason.starts_with("2 of 4 tests failed"), "{reason}");
    assert!(reason.contains("ended with exit 1"), "{reason}");
    assert!(reason.contains("app.math::divides"), "{reason}");
}

#[tokio::test(flavor = "current_thread")]
async fn failing_command_with_clean_reports_still_blocks() {
    let dir = project(&[("j.xml", PASSING)]);
    let eval = run(dir.path(), json!({"command": "echo 'error[E0425]: cannot find value' >&2; exit 101", "junit": "j.xml"})).await;
    let (reason, _) = block(&eval.signals[0]);
    assert!(
        reason.contains("although the JUnit reports show no failing test (2 tests)"),
        "{reason}"
    );
    assert!(reason.contains("error[E0425]"), "{reason}");
}

#[tokio::test(flavor = "current_thread")]
async fn failing_command_and_low_coverage_give_two_blocks() {
    let dir = project(&[("lcov.info", LCOV_72)]);
    let config = json!({"command": "exit 1", "coverage": {"format": "lcov", "path": "lcov.info"}, "coverage_threshold": 90});
    let eval = run(dir.path(), config).await;
    let types: Vec<&str> = eval
        .signals
        .iter()
        .map(|s| s.header.signal_type.as_str())
        .collect();
    assert_eq!(types, vec![TESTS_FAILED_TYPE, COVERAGE_TYPE]);
    let (reason, _) = block(&eval.signals[0]);
    assert!(reason.ends_with("without any output"), "{reason}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_hanging_command_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_err(
        dir.path(),
        json!({"command": "sleep 30", "timeout_ms": 200}),
    )
    .await;
    assert!(
        e.message
            .contains("test command `sleep 30` timed out after 200 ms"),
        "{e}"
    );
    assert!(e.message.contains("timeout_ms"), "{e}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_missing_command_is_an_error_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_err(
        dir.path(),
        json!({"command": "no-such-test-runner-xyz --all"}),
    )
    .await;
    assert!(e.message.contains("could not start"), "{e}");
    assert!(e.message.contains("not found"), "{e}");
}

#[tokio::test(flavor = "current_thread")]
async fn the_command_runs_in_the_project_dir() {
    let dir = project(&[("marker.txt", "here")]);
    let eval = run(dir.path(), json!({"command": "test -f marker.txt"})).await;
    assert!(eval.signals.is_empty(), "{eval:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_command_that_fails_before_writing_its_reports_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "command": "echo 'error: could not compile `app`' >&2; exit 101",
        "junit": "target/junit.xml",
        "coverage": {"format": "lcov", "path": "target/lcov.info"},
        "coverage_threshold": 80
    });
    let eval = run(dir.path(), config).await;
    assert_eq!(eval.signals.len(), 1, "{eval:?}");
    let (reason, _) = block(&eval.signals[0]);
    assert!(reason.contains("could not compile"), "{reason}");
    assert!(
        eval.notes
            .iter()
            .any(|n| n.contains("JUnit report `target/junit.xml` not found")
                && n.contains("the failing test command is reported instead")),
        "{:?}",
        eval.notes
    );
    assert!(
        eval.notes
            .iter()
            .any(|n| n.contains("coverage report target/lcov.info")),
        "{:?}",
        eval.notes
    );
    // The same reports missing after a passing command: an error.
    let e = run_err(
        dir.path(),
        json!({"command": "true", "junit": "target/junit.xml"}),
    )
    .await;
    assert!(e.message.contains("not found"), "{e}");
}
