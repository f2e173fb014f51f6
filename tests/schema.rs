//! `ahp schema` against `ahp validate`: every hooks file of the corpus
//! below that validate refuses, the schema refuses too (so an editor flags
//! it as you type), and every one validate accepts, the schema accepts.
//!
//! The validator here covers the draft-07 keywords the schema uses, and
//! the test fails on any other, so a keyword it does not know cannot make
//! it pass by being ignored.

use crate::common::Sandbox;
use serde_json::Value;

/// Hooks files `ahp validate` refuses, each for one reason.
const INVALID: &[&str] = &[
    // An entry key that does not exist.
    "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      priorty: 1\n      config: {rules: [{condition: 'true', message: x}]}\n",
    // An oracle that does not exist.
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecka\n",
    // A key PermissionChecker does not have.
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config: {dangerous_command: [x]}\n",
    // A wrong type for one of its keys.
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config: {allow_confirmation: 'no'}\n",
    // A pattern item without its pattern.
    "hooks:\n  pre-tool-use:\n    - oracle: permission-checker\n      config: {require_confirmation: [{reason: x}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config: {rules: [{message: x}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config: {rules: [{condition: 'true', message: x, intensity: blok}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: Rules\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: FileChangeLimiter\n      config: {max_files: 0}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: FileChangeLimiter\n      config: {max_files: 5, action: warn}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: FileChangeLimiter\n      config: {}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: TestGate\n      config: {command: cargo test, timeout_ms: '10s'}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: TestGate\n      config: {coverage: {format: jacoco, path: x}}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: TestGate\n      config: {coverage_threshold: 120, coverage: {format: lcov, path: x}}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: LintChecker\n      config: {linters: []}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: LintChecker\n      config: {linters: [{command: x, fixx: y}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config: {severity_threshold: urgent}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config: {rules: [{id: x}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config: {rules: [no-secret]}\n",
    "hooks:\n  post-tool-use:\n    - oracle: ChangeLogger\n      config: {fields: [tool, byte]}\n",
    "hooks:\n  post-tool-use:\n    - oracle: ChangeLogger\n      config: {log_level: verbose}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: ChecklistValidator\n      config: {min_completion_rate: 1.5}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: CompletionVerifier\n      config: {docs: {a: 1}}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: CommitMessageValidator\n      config: {preset: angular}\n",
    "hooks:\n  pre-issue-start:\n    - oracle: ContextLoader\n      config: {include_files: 'yes'}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: DependencyChecker\n      config: {manifest_files: []}\n",
    "hooks:\n  post-issue-submit:\n    - oracle: ReviewTrigger\n      config: {notify: true}\n",
    "hooks:\n  post-issue-close:\n    - oracle: RetrospectiveGenerator\n      config: {generate_metrics: 'yes'}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      timeout: 0\n",
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      on_error: ignore\n",
    "settings:\n  fail_closed: 'yes'\n",
    "settings:\n  log_mask: [ticket, '']\n",
    "setings:\n  fail_closed: true\n",
];

/// Hooks files both accept.
const VALID: &[&str] = &[
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n",
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n        dangerous_commands: ['\\bdeploy\\s+prod\\b', {pattern: 'kubectl\\s+delete', reason: deletes}]\n        require_confirmation: true\n",
    "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      config: {rules: [{condition: 'true', message: x, intensity: prompt, severity: high, resolution_path: step}]}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: file-change-limiter\n      config: {max_files: 5, action: prompt, exclude: '*.lock'}\n",
    "hooks:\n  pre-issue-close:\n    - oracle: TestGate\n      config: {command: cargo test, timeout_ms: 60000, junit: [a.xml], coverage: {format: lcov, path: x}}\n",
    "hooks:\n  pre-issue-submit:\n    - oracle: LintChecker\n      config: {linters: [cargo clippy, {name: fmt, command: cargo fmt --check}]}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: SecurityScanner\n      config: {rules: [no-secrets, {id: corp, pattern: 'internal\\.corp', severity: low}]}\n",
    "hooks:\n  pre-issue-start:\n    - oracle: ContextLoader\n      config: {include_files: [docs/**], history_limit: 3}\n",
    "hooks:\n  pre-tool-use:\n    - oracle: PermissionChecker\n      config:\n",
];

#[test]
fn the_schema_refuses_what_validate_refuses() {
    let sb = Sandbox::new();
    let out = sb.ahp().arg("schema").output().unwrap();
    assert!(out.status.success());
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_keywords(&schema);
    for (text, valid) in INVALID
        .iter()
        .map(|t| (t, false))
        .chain(VALID.iter().map(|t| (t, true)))
    {
        sb.write(".ahp/hooks.yaml", text);
        let out = sb.ahp().arg("validate").output().unwrap();
        assert_eq!(
            out.status.success(),
            valid,
            "ahp validate on\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = ahp_config::yaml::parse_document(text).unwrap().to_json();
        let errors = validate(&schema, &schema, &doc, "");
        assert_eq!(errors.is_empty(), valid, "schema on\n{text}\n{errors:?}");
    }
    // The policies ahp ships read as valid in an editor.
    for text in [ahp_config::DEFAULT_POLICY, ahp_config::STARTER_POLICY] {
        let doc = ahp_config::yaml::parse_document(text).unwrap().to_json();
        let errors = validate(&schema, &schema, &doc, "");
        assert!(errors.is_empty(), "{errors:?}");
    }
}

const KEYWORDS: &[&str] = &[
    "$schema",
    "$ref",
    "title",
    "description",
    "definitions",
    "default",
    "format",
    "type",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
];

/// Fails on a keyword [`validate`] does not implement.
fn check_keywords(schema: &Value) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                assert!(KEYWORDS.contains(&k.as_str()), "unsupported keyword `{k}`");
                match k.as_str() {
                    "properties" | "definitions" => {
                        v.as_object().unwrap().values().for_each(check_keywords)
                    }
                    "enum" | "const" | "default" | "required" => {}
                    _ => check_keywords(v),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(check_keywords),
        _ => {}
    }
}

/// The errors of `v` against `s` (a draft-07 subset), by path.
fn validate(root: &Value, s: &Value, v: &Value, at: &str) -> Vec<String> {
    let Some(s) = s.as_object() else {
        return if s == &Value::Bool(false) {
            vec![format!("{at}: not allowed")]
        } else {
            vec![]
        };
    };
    let mut errors = Vec::new();
    let mut fail = |what: String| errors.push(format!("{at}: {what}"));
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        let target = &root["definitions"][name];
        assert!(!target.is_null(), "dangling $ref {r}");
        return validate(root, target, v, at);
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let is = |t: &str| match t {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "string" => v.is_string(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            "number" => v.is_number(),
            "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
            _ => panic!("unknown type {t}"),
        };
        if !types.iter().any(|t| is(t)) {
            fail(format!("expected {types:?}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        fail(format!("not one of {e:?}"));
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        fail(format!("not {c}"));
    }
    if let Some(n) = v.as_f64() {
        if s.get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n < m)
        {
            fail("below minimum".into());
        }
        if s.get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n > m)
        {
            fail("above maximum".into());
        }
    }
    if let Some(text) = v.as_str() {
        let len = text.chars().count() as u64;
        if s.get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| len < m)
        {
            fail("too short".into());
        }
        if s.get("maxLength")
            .and_then(Value::as_u64)
            .is_some_and(|m| len > m)
        {
            fail("too long".into());
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str)
            && !regex::Regex::new(p).unwrap().is_match(text)
        {
            fail(format!("does not match {p}"));
        }
    }
    if let Some(map) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !map.contains_key(r.as_str().unwrap_or_default()) {
                fail(format!("missing {r}"));
            }
        }
        for (k, item) in map {
            let path = format!("{at}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => errors.extend(validate(root, ps, item, &path)),
                None => {
                    if let Some(extra) = s.get("additionalProperties") {
                        errors.extend(validate(root, extra, item, &path));
                    }
                }
            }
        }
    }
    if let Some(list) = v.as_array() {
        let n = list.len() as u64;
        if s.get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
        {
            errors.push(format!("{at}: too few items"));
        }
        if s.get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n > m)
        {
            errors.push(format!("{at}: too many items"));
        }
    }
    if let (Some(items), Some(list)) = (s.get("items"), v.as_array()) {
        for (i, item) in list.iter().enumerate() {
            errors.extend(validate(root, items, item, &format!("{at}.{i}")));
        }
    }
    let passes = |sub: &Value| validate(root, sub, v, at).is_empty();
    if let Some(any) = s.get("anyOf").and_then(Value::as_array)
        && !any.iter().any(passes)
    {
        errors.push(format!("{at}: matches none of anyOf"));
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array)
        && one.iter().filter(|x| passes(x)).count() != 1
    {
        errors.push(format!("{at}: does not match exactly one of oneOf"));
    }
    for sub in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        errors.extend(validate(root, sub, v, at));
    }
    if let (Some(cond), Some(then)) = (s.get("if"), s.get("then"))
        && passes(cond)
    {
        errors.extend(validate(root, then, v, at));
    }
    errors
}
