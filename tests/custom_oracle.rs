//! The custom-oracle example registers a new oracle that hooks.yaml uses.

#[path = "../examples/custom_oracle.rs"]
mod example;

use ahp::config::{Layer, SourceFile};
use ahp::{Engine, Event, HookContext, LoadedConfig, Outcome};
use std::sync::Arc;

fn engine(yaml: &str) -> Result<Engine, String> {
    let mut registry = ahp::default_registry();
    example::register(&mut registry);
    let file = Arc::new(SourceFile {
        layer: Layer::Project,
        path: ".ahp/hooks.yaml".into(),
        text: yaml.into(),
    });
    let cfg = LoadedConfig::from_files(".".into(), vec![file]).map_err(|e| e.to_string())?;
    Engine::builder()
        .registry(registry)
        .config(cfg)
        .build()
        .map_err(|e| e.to_string())
}

fn shell(cmd: &str) -> HookContext {
    serde_json::from_value(serde_json::json!({"tool": {"name": "Bash", "input": {"command": cmd}}}))
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn custom_oracle_runs_from_hooks_yaml() {
    let e = engine(
        "hooks:\n  pre-tool-use:\n    - oracle: command-length\n      config: {max_chars: 10}\n",
    )
    .unwrap();
    let v = e
        .dispatch(Event::PreToolUse, shell("echo a very long command indeed"))
        .await;
    assert_eq!(v.outcome, Outcome::Prompt);
    assert_eq!(v.signals[0].header.source, "command-length");
    assert_eq!(v.signals[0].header.signal_type, "long-command");
    assert!(v.signals[0].payload.summary().contains("limit 10"));
    let v = e.dispatch(Event::PreToolUse, shell("ls")).await;
    assert_eq!(v.outcome, Outcome::Accept);
}

#[test]
fn custom_oracle_config_is_validated() {
    let err = engine(
        "hooks:\n  pre-tool-use:\n    - oracle: CommandLength\n      config: {max_chars: 0}\n",
    )
    .err()
    .unwrap();
    assert!(err.contains(".ahp/hooks.yaml:4:16"), "{err}");
    assert!(err.contains("must be at least 1"), "{err}");
}
