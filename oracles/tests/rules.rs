//! The Rules oracle as a user sees it: conditions, intensities, messages,
//! modifications, and config errors that name the key.

use ahp_engine::{
    Event, HookContext, Intensity, ModOp, Oracle, OracleConfig, OracleConfigError, Payload,
    Registry, Severity, Signal,
};
use ahp_oracles::policy::rules::Rules;
use serde_json::{Value, json};

fn rules(config: Value) -> Rules {
    match Rules::from_config(OracleConfig::new(&config, None)) {
        Ok(r) => r,
        Err(e) => panic!("config {config} rejected: {e}"),
    }
}

fn one_rule(rule: Value) -> Rules {
    rules(json!({ "rules": [rule] }))
}

fn config_error(config: Value) -> OracleConfigError {
    match Rules::from_config(OracleConfig::new(&config, None)) {
        Ok(_) => panic!("config {config} accepted but should not be"),
        Err(e) => e,
    }
}

fn rule_error(rule: Value) -> OracleConfigError {
    config_error(json!({ "rules": [rule] }))
}

fn ctx(v: Value) -> HookContext {
    serde_json::from_value(v).expect("test context")
}

fn issue_ctx() -> HookContext {
    let mut c = ctx(json!({
        "environment": "production",
        "issue": {"id": "FEAT-0123", "type": "feature", "title": "Add login"},
        "files": {"changed": ["a.rs", "b.rs"], "changed_count": 12},
        "checklist": {"incomplete_count": 2, "items": ["one", "two"]},
        "tool": {"name": "shell", "input": {"command": "rm -rf build"}},
    }));
    c.event = Some(Event::PreIssueSubmit);
    c
}

async fn eval(r: &Rules, c: &HookContext) -> Vec<Signal> {
    r.evaluate(c).await.expect("Rules never fails")
}

#[tokio::test(flavor = "current_thread")]
async fn a_matching_rule_blocks_by_default() {
    let r = one_rule(json!({
        "condition": "checklist.incomplete_count > 0",
        "message": "{{ checklist.incomplete_count }} checklist item(s) still open",
        "resolution_path": ["tick finished items with [x]", "cancel dropped ones with [~]"],
    }));
    let signals = eval(&r, &issue_ctx()).await;
    assert_eq!(signals.len(), 1);
    let s = &signals[0];
    assert_eq!(s.intensity(), Intensity::Block);
    assert_eq!(s.header.signal_type, "rule");
    match &s.payload {
        Payload::Block(b) => {
            assert_eq!(b.reason, "2 checklist item(s) still open");
            assert!(b.resolvable);
            assert_eq!(
                b.resolution_path,
                [
                    "tick finished items with [x]",
                    "cancel dropped ones with [~]"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        eval(&r, &ctx(json!({"checklist": {"incomplete_count": 0}})))
            .await
            .is_empty()
    );
    assert!(eval(&r, &HookContext::default()).await.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn every_intensity() {
    let r = rules(json!({"rules": [
        {"condition": "true", "intensity": "block", "message": "b", "resolution_path": ["fix"]},
        {"condition": "true", "intensity": "prompt", "message": "p", "severity": "high", "resolution_path": ["maybe"]},
        {"condition": "true", "intensity": "prompt", "message": "p2"},
        {"condition": "true", "intensity": "aid", "message": "a", "resolution_path": ["later"]},
        {"condition": "true", "intensity": "control", "message": "c",
         "modifications": [{"target": "tool.input.timeout", "op": "set", "value": 30}]},
        {"condition": "true", "intensity": "BLOCK", "message": "case does not matter"},
    ]}));
    let s = eval(&r, &issue_ctx()).await;
    let kinds: Vec<Intensity> = s.iter().map(Signal::intensity).collect();
    assert_eq!(
        kinds,
        [
            Intensity::Block,
            Intensity::Prompt,
            Intensity::Prompt,
            Intensity::Aid,
            Intensity::Control,
            Intensity::Block
        ]
    );
    match &s[1].payload {
        Payload::Prompt(p) => {
            assert_eq!(p.severity, Severity::High);
            assert_eq!(p.message, "p");
            assert_eq!(p.suggestions, ["maybe"]);
            assert!(p.continue_allowed);
        }
        other => panic!("{other:?}"),
    }
    match &s[2].payload {
        Payload::Prompt(p) => assert_eq!(p.severity, Severity::Medium),
        other => panic!("{other:?}"),
    }
    match &s[3].payload {
        Payload::Aid(a) => {
            assert_eq!(a.context_info, "a");
            assert_eq!(a.follow_ups, ["later"]);
        }
        other => panic!("{other:?}"),
    }
    match &s[4].payload {
        Payload::Control(c) => {
            assert_eq!(c.message.as_deref(), Some("c"));
            assert_eq!(c.modifications.len(), 1);
            assert_eq!(c.modifications[0].value, Some(json!(30)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.default_intensity(), Some(Intensity::Block));
    assert_eq!(r.len(), 6);
}

#[tokio::test(flavor = "current_thread")]
async fn control_rule_modifies_with_placeholders() {
    let r = one_rule(json!({
        "condition": "tool.input.command ~ '^rm -rf'",
        "intensity": "control",
        "message": "made `{{ tool.input.command }}` interactive",
        "type": "safer-rm",
        "modifications": [
            {"target": "tool.input.command", "op": "set", "value": "{{ tool.input.command }} -i", "description": "ask before each file"},
            {"target": "tool.input", "op": "merge", "value": {"timeout": 10}},
            {"target": "tool.input.dangerous", "op": "remove"},
            {"target": "tool.input.flags", "value": ["-v"]},
        ],
    }));
    let mut c = issue_ctx();
    let s = eval(&r, &c).await;
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].header.signal_type, "safer-rm");
    let Payload::Control(ctl) = &s[0].payload else {
        panic!("{:?}", s[0].payload)
    };
    assert_eq!(
        ctl.message.as_deref(),
        Some("made `rm -rf build` interactive")
    );
    let m = &ctl.modifications;
    assert_eq!(
        (m[0].target.as_str(), m[0].op),
        ("tool.input.command", ModOp::Set)
    );
    assert_eq!(m[0].value, Some(json!("rm -rf build -i")));
    assert_eq!(m[0].description.as_deref(), Some("ask before each file"));
    assert_eq!(m[1].op, ModOp::Merge);
    assert_eq!((m[2].op, &m[2].value), (ModOp::Remove, &None));
    assert_eq!(m[3].op, ModOp::Set, "op defaults to set");
    // The modifications apply to a context as the engine would.
    for modification in m {
        c.apply(modification).expect("applies");
    }
    assert_eq!(
        c.lookup("tool.input.command").as_deref(),
        Some(&json!("rm -rf build -i"))
    );
    assert_eq!(c.lookup("tool.input.timeout").as_deref(), Some(&json!(10)));
}

#[tokio::test(flavor = "current_thread")]
async fn every_rule_is_evaluated_in_order() {
    let r = rules(json!({"rules": [
        {"condition": "issue.type == feature", "intensity": "aid", "message": "feature"},
        {"condition": "issue.type == fix", "intensity": "aid", "message": "fix"},
        {"condition": "files.changed_count >= 10", "intensity": "prompt", "message": "{{ files.changed_count }} files"},
    ]}));
    let s = eval(&r, &issue_ctx()).await;
    let texts: Vec<String> = s.iter().map(|s| s.payload.summary()).collect();
    assert_eq!(texts, ["feature", "12 files"]);
}

#[tokio::test(flavor = "current_thread")]
async fn operators_through_the_oracle() {
    let c = issue_ctx();
    let cases = [
        ("issue.type == feature", true),
        ("issue.type == 'feature'", true),
        ("issue.type != feature", false),
        ("files.changed_count > 12", false),
        ("files.changed_count >= 12", true),
        ("files.changed_count < 13", true),
        ("files.changed_count <= 11", false),
        ("tool.input.command ~ 'rm -rf'", true),
        ("tool.input.command !~ 'rm -rf'", false),
        ("issue.title == \"Add login\"", true),
        ("issue.title == 'Add  login'", false),
        ("issue.type == feature && files.changed_count >= 10", true),
        ("issue.type == fix || files.changed_count >= 10", true),
        (
            "!(environment == production) || tool.name == \"read\"",
            false,
        ),
        ("!(environment == production) || tool.name == shell", true),
        ("issue.type == fix && false || true", true),
        ("issue.type == fix && (false || true)", false),
        ("not (issue.type == fix) and checklist.items", true),
        (
            "issue.nope == 1 || issue.nope != 1 || issue.nope ~ '.*'",
            false,
        ),
        ("files.changed == b.rs", true),
    ];
    for (condition, want) in cases {
        let r = one_rule(json!({"condition": condition, "intensity": "aid", "message": "m"}));
        assert_eq!(!eval(&r, &c).await.is_empty(), want, "{condition}");
    }
}

#[test]
fn placeholders_fill_from_the_context() {
    let r = one_rule(json!({
        "condition": "true",
        "intensity": "prompt",
        "message": "{{ issue.id }} ({{issue.type}}) changes {{ files.changed }}; missing=[{{ issue.nothing }}]",
        "resolution_path": ["split {{ files.changed_count }} files"],
    }));
    let s = r.signals(&issue_ctx());
    assert_eq!(
        s[0].payload.summary(),
        r#"FEAT-0123 (feature) changes ["a.rs","b.rs"]; missing=[]"#
    );
    assert_eq!(s[0].payload.steps(), ["split 12 files"]);
}

#[test]
fn type_defaults_to_the_rule_id() {
    let r = rules(json!({"rules": [
        {"condition": "true", "message": "a", "id": "open-items"},
        {"condition": "true", "message": "b", "id": "x", "type": "explicit"},
        {"condition": "true", "message": "c"},
    ]}));
    let types: Vec<String> = r
        .signals(&issue_ctx())
        .into_iter()
        .map(|s| s.header.signal_type)
        .collect();
    assert_eq!(types, ["open-items", "explicit", "rule"]);
}

#[test]
fn empty_rules_list_never_fires() {
    let r = rules(json!({"rules": []}));
    assert!(r.is_empty());
    assert!(r.signals(&issue_ctx()).is_empty());
    assert_eq!(r.default_intensity(), None);
}

#[test]
fn bad_condition_names_the_rule_and_column() {
    let e = config_error(json!({"rules": [
        {"condition": "true", "message": "fine"},
        {"condition": "checklist.incomplete_count 0", "message": "x"},
    ]}));
    assert_eq!(e.key.as_deref(), Some("rules.1.condition"));
    assert_eq!(
        e.message,
        "invalid condition `checklist.incomplete_count 0`: column 28: expected an operator after `checklist.incomplete_count`, found `0`"
    );
    assert_eq!(
        e.to_string(),
        "config.rules.1.condition: invalid condition `checklist.incomplete_count 0`: column 28: expected an operator after `checklist.incomplete_count`, found `0`"
    );
    let e = rule_error(json!({"condition": "checklist.incomplete_count >", "message": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.condition"));
    assert!(
        e.message.contains("column 29: expected a value after `>`"),
        "{e}"
    );
    let e = rule_error(json!({"condition": "x ~ '(oops'", "message": "x"}));
    assert!(e.message.contains("column 5: invalid regex `(oops`"), "{e}");
    let e = rule_error(json!({"condition": "", "message": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.condition"));
    assert!(e.message.contains("must not be empty"), "{e}");
    let e = rule_error(json!({"condition": 5, "message": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.condition"));
    assert!(
        e.message.contains("expected a string, found a number"),
        "{e}"
    );
}

#[test]
fn missing_required_fields() {
    let e = rule_error(json!({"message": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules.0"));
    assert!(e.message.contains("missing `condition`"), "{e}");
    let e = rule_error(json!({"condition": "true"}));
    assert_eq!(e.key.as_deref(), Some("rules.0"));
    assert!(e.message.contains("missing `message`"), "{e}");
    let e = config_error(Value::Null);
    assert_eq!(e.key, None);
    assert!(e.message.contains("needs a `rules` list"), "{e}");
    let e = config_error(json!({"rules": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules"));
    assert!(e.message.contains("expected a list, found a string"), "{e}");
    let e = config_error(json!({"rules": ["x"]}));
    assert_eq!(e.key.as_deref(), Some("rules.0"));
    assert!(e.message.contains("found a string"), "{e}");
}

#[test]
fn unknown_keys_suggest_the_right_one() {
    let e = config_error(json!({"rule": []}));
    assert_eq!(e.key.as_deref(), Some("rule"));
    assert!(e.message.contains("did you mean `rules`?"), "{e}");
    let e = rule_error(json!({"conditon": "true", "message": "x"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.conditon"));
    assert_eq!(
        e.message,
        "unknown key `conditon`; did you mean `condition`?"
    );
    let e = rule_error(json!({"condition": "true", "message": "x", "resolution": ["a"]}));
    assert_eq!(e.key.as_deref(), Some("rules.0.resolution"));
    assert!(e.message.contains("did you mean `resolution_path`?"), "{e}");
    let e = rule_error(
        json!({"condition": "true", "message": "x", "intensity": "control",
        "modifications": [{"target": "a", "value": 1, "descripton": "d"}]}),
    );
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0.descripton"));
    assert!(e.message.contains("did you mean `description`?"), "{e}");
}

#[test]
fn bad_values_name_the_key() {
    let e = rule_error(json!({"condition": "true", "message": "x", "intensity": "blok"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.intensity"));
    assert_eq!(
        e.message,
        "unknown value `blok` (did you mean `block`?); expected one of aid, prompt, control, block"
    );
    let e = rule_error(
        json!({"condition": "true", "message": "x", "intensity": "prompt", "severity": "urgent"}),
    );
    assert_eq!(e.key.as_deref(), Some("rules.0.severity"));
    assert!(
        e.message.contains("expected one of low, medium, high"),
        "{e}"
    );
    let e = rule_error(json!({"condition": "true", "message": "x", "severity": "high"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.severity"));
    assert!(e.message.contains("only to `intensity: prompt`"), "{e}");
    let e = rule_error(json!({"condition": "true", "message": "x", "resolution_path": [1]}));
    assert_eq!(e.key.as_deref(), Some("rules.0.resolution_path.0"));
    let e = rule_error(json!({"condition": "true", "message": "{{ issue.id"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.message"));
    assert!(e.message.contains("unclosed `{{` at column 1"), "{e}");
    let e = rule_error(
        json!({"condition": "true", "message": "x", "resolution_path": ["ok", "{{ }}"]}),
    );
    assert_eq!(e.key.as_deref(), Some("rules.0.resolution_path.1"));
    let e = rule_error(json!({"condition": "true", "message": "x", "type": ""}));
    assert_eq!(e.key.as_deref(), Some("rules.0.type"));
}

#[test]
fn control_rules_need_modifications_and_only_they_take_them() {
    let e = rule_error(json!({"condition": "true", "message": "x", "intensity": "control"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications"));
    assert!(e.message.contains("needs `modifications`"), "{e}");
    let e = rule_error(
        json!({"condition": "true", "message": "x", "intensity": "control", "modifications": []}),
    );
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications"));
    let e = rule_error(json!({"condition": "true", "message": "x",
        "modifications": [{"target": "a", "value": 1}]}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications"));
    assert!(
        e.message.contains("apply only to `intensity: control`"),
        "{e}"
    );
    let e = rule_error(
        json!({"condition": "true", "message": "x", "intensity": "control",
        "resolution_path": ["a"], "modifications": [{"target": "a", "value": 1}]}),
    );
    assert_eq!(e.key.as_deref(), Some("rules.0.resolution_path"));
    let control = |m: Value| {
        rule_error(
            json!({"condition": "true", "message": "x", "intensity": "control", "modifications": [m]}),
        )
    };
    let e = control(json!({"target": "a", "op": "sett", "value": 1}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0.op"));
    assert!(e.message.contains("did you mean `set`?"), "{e}");
    let e = control(json!({"target": "a"}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0"));
    assert!(e.message.contains("missing `value`"), "{e}");
    let e = control(json!({"target": "a", "op": "remove", "value": 1}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0.value"));
    let e = control(json!({"target": "a", "op": "merge", "value": 1}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0.value"));
    assert!(e.message.contains("needs a map"), "{e}");
    let e = control(json!({"target": "a..b", "value": 1}));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0.target"));
    let e = control(json!({"value": 1}));
    assert!(e.message.contains("missing `target`"), "{e}");
    let e = control(json!("set a"));
    assert_eq!(e.key.as_deref(), Some("rules.0.modifications.0"));
}

#[test]
fn registered_under_both_names() {
    let mut reg = Registry::new();
    ahp_oracles::register_builtins(&mut reg);
    assert_eq!(reg.resolve("rules"), Some("Rules"));
    let cfg = json!({"rules": [{"condition": "true", "intensity": "aid", "message": "hi"}]});
    let o = reg
        .build("rules", OracleConfig::new(&cfg, None))
        .expect("builds");
    assert_eq!(o.default_intensity(), Some(Intensity::Aid));
    let bad = json!({"rules": [{"condition": "a ==", "message": "x"}]});
    let err = reg
        .build("Rules", OracleConfig::new(&bad, None))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with("config.rules.0.condition: invalid condition `a ==`: column 5"),
        "{err}"
    );
}
