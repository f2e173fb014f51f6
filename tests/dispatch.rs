//! Dispatch semantics through hooks.yaml: waves, ties, `after`, block
//! short-circuit vs `on_block: collect`, control modifications, async
//! entries, failures.

use ahp::config::{Layer, SourceFile};
use ahp::engine::{Diagnostic, EntryStatus, SignalSink, SinkError};
use ahp::{
    Engine, Event, HookContext, LoadedConfig, Oracle, OracleConfig, OracleError, Outcome, Registry,
    Signal,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Trail = Arc<Mutex<Vec<String>>>;

/// Records its id when evaluated, then says `config.say` as aid.
struct Mark {
    name: String,
    trail: Trail,
}

#[ahp::async_trait]
impl Oracle for Mark {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        self.trail.lock().unwrap().push(self.name.clone());
        Ok(vec![Signal::aid(format!("{} ran", self.name))])
    }
}

/// Waits until `n` rendezvous oracles are running at once.
struct Rendezvous(Arc<tokio::sync::Barrier>);

#[ahp::async_trait]
impl Oracle for Rendezvous {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        self.0.wait().await;
        Ok(vec![Signal::aid("met")])
    }
}

enum Failure {
    Error,
    Panic,
    Hang,
}

struct Broken(Failure);

#[ahp::async_trait]
impl Oracle for Broken {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        match self.0 {
            Failure::Error => Err(OracleError::new("database unreachable")),
            Failure::Panic => panic!("bug in a custom oracle"),
            Failure::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(vec![])
            }
        }
    }
}

fn registry(trail: &Trail) -> Registry {
    let mut r = ahp::default_registry();
    let t = Arc::clone(trail);
    r.register("Mark", "records its run", move |cfg: OracleConfig<'_>| {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct MarkConfig {
            #[serde(default)]
            name: String,
        }
        let name = cfg.parse::<MarkConfig>()?.name;
        Ok(Arc::new(Mark {
            name,
            trail: Arc::clone(&t),
        }) as Arc<dyn Oracle>)
    });
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    r.register("Rendezvous", "waits for a partner", move |_| {
        Ok(Arc::new(Rendezvous(Arc::clone(&barrier))) as Arc<dyn Oracle>)
    });
    r.register("Broken", "fails", |cfg: OracleConfig<'_>| {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct BrokenConfig {
            #[serde(default)]
            how: String,
        }
        let how = cfg.parse::<BrokenConfig>()?.how;
        let f = match how.as_str() {
            "panic" => Failure::Panic,
            "hang" => Failure::Hang,
            _ => Failure::Error,
        };
        Ok(Arc::new(Broken(f)) as Arc<dyn Oracle>)
    });
    r
}

#[derive(Default)]
struct MemorySink {
    signals: Mutex<Vec<Signal>>,
    diagnostics: Mutex<Vec<Diagnostic>>,
}

impl SignalSink for MemorySink {
    fn record_signal(&self, s: &Signal) -> Result<(), SinkError> {
        self.signals.lock().unwrap().push(s.clone());
        Ok(())
    }
    fn record_diagnostic(&self, d: &Diagnostic) -> Result<(), SinkError> {
        self.diagnostics.lock().unwrap().push(d.clone());
        Ok(())
    }
}

fn engine(yaml: &str, trail: &Trail, sink: Option<Arc<MemorySink>>) -> Engine {
    let file = Arc::new(SourceFile {
        layer: Layer::Project,
        path: "hooks.yaml".into(),
        text: yaml.into(),
    });
    let cfg = LoadedConfig::from_files(".".into(), vec![file]).unwrap();
    let mut b = Engine::builder().registry(registry(trail)).config(cfg);
    if let Some(s) = sink {
        b = b.sink(s);
    }
    b.build().unwrap()
}

fn ctx(v: serde_json::Value) -> HookContext {
    serde_json::from_value(v).unwrap()
}

fn trail() -> Trail {
    Arc::new(Mutex::new(Vec::new()))
}

#[tokio::test(flavor = "current_thread")]
async fn priority_waves_and_ties_in_config_order() {
    let t = trail();
    let e = engine(
        "hooks:\n  pre-tool-use:\n    - {oracle: Mark, id: c, priority: 2, config: {name: c}}\n    - {oracle: Mark, id: a1, priority: 1, config: {name: a1}}\n    - {oracle: Mark, id: a2, priority: 1, config: {name: a2}}\n    - {oracle: Mark, id: z, priority: 0, config: {name: z}}\n",
        &t,
        None,
    );
    let v = e.dispatch(Event::PreToolUse, HookContext::default()).await;
    let sources: Vec<&str> = v.signals.iter().map(|s| s.header.source.as_str()).collect();
    assert_eq!(sources, vec!["z", "a1", "a2", "c"]);
    let waves: Vec<(String, usize)> = v.entries.iter().map(|r| (r.id.clone(), r.wave)).collect();
    assert_eq!(
        waves,
        vec![
            ("z".into(), 0),
            ("a1".into(), 1),
            ("a2".into(), 1),
            ("c".into(), 2)
        ]
    );
    // Wave order is also the evaluation order across waves.
    let ran = t.lock().unwrap().clone();
    assert_eq!(ran.first().map(String::as_str), Some("z"));
    assert_eq!(ran.last().map(String::as_str), Some("c"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_wave_runs_concurrently() {
    let t = trail();
    // Each waits for the other: only concurrent evaluation lets both finish
    // before the (generous) guard timeout.
    let e = engine(
        "hooks:\n  pre-tool-use:\n    - {oracle: Rendezvous, id: left, timeout: 20000}\n    - {oracle: Rendezvous, id: right, timeout: 20000}\n",
        &t,
        None,
    );
    let v = e.dispatch(Event::PreToolUse, HookContext::default()).await;
    assert!(v.diagnostics.is_empty(), "{:?}", v.diagnostics);
    assert_eq!(v.signals.len(), 2);
    assert_eq!(v.signals[0].header.source, "left");
}

#[tokio::test(flavor = "current_thread")]
async fn after_edges_order_entries() {
    let t = trail();
    let e = engine(
        "hooks:\n  pre-tool-use:\n    - {oracle: Mark, id: report, after: [scan, lint], config: {name: report}}\n    - {oracle: Mark, id: scan, after: lint, config: {name: scan}}\n    - {oracle: Mark, id: lint, priority: 3, config: {name: lint}}\n",
        &t,
        None,
    );
    let v = e.dispatch(Event::PreToolUse, HookContext::default()).await;
    assert_eq!(*t.lock().unwrap(), vec!["lint", "scan", "report"]);
    assert_eq!(
        v.entries.iter().map(|r| r.wave).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
}

const BLOCK_THEN_MORE: &str = "
hooks:
  pre-tool-use:
    - oracle: Rules
      id: gate
      config:
        rules:
          - {condition: \"tool.name == Bash\", intensity: block, message: no shell}
    - {oracle: Mark, id: later, priority: 5, config: {name: later}}
";

#[tokio::test(flavor = "current_thread")]
async fn block_stops_later_waves_unless_collect() {
    let t = trail();
    let e = engine(BLOCK_THEN_MORE, &t, None);
    let c = ctx(json!({"tool": {"name": "Bash", "input": {}}}));
    let v = e.dispatch(Event::PreToolUse, c.clone()).await;
    assert_eq!(v.outcome, Outcome::Block);
    assert_eq!(v.signals.len(), 1);
    assert!(t.lock().unwrap().is_empty());
    assert_eq!(v.entries[1].status, EntryStatus::SkippedAfterBlock);

    let t = trail();
    let e = engine(
        &format!("settings:\n  on_block: collect\n{BLOCK_THEN_MORE}"),
        &t,
        None,
    );
    let v = e.dispatch(Event::PreToolUse, c).await;
    assert_eq!(v.outcome, Outcome::Block);
    assert_eq!(v.signals.len(), 2);
    assert_eq!(*t.lock().unwrap(), vec!["later"]);
}

#[tokio::test(flavor = "current_thread")]
async fn control_modifications_reach_later_oracles() {
    let t = trail();
    let yaml = "
hooks:
  pre-tool-use:
    - oracle: Rules
      id: safer-rm
      config:
        rules:
          - condition: \"tool.input.command ~ '^rm -rf'\"
            intensity: control
            message: ask rm to prompt
            modifications:
              - {target: tool.input.command, op: set, value: 'rm -ri build', description: interactive rm}
    - oracle: Rules
      id: observer
      priority: 1
      config:
        rules:
          - {condition: \"tool.input.command == 'rm -ri build'\", intensity: aid, message: 'saw {{ tool.input.command }}'}
";
    let e = engine(yaml, &t, None);
    let v = e
        .dispatch(
            Event::PreToolUse,
            ctx(json!({"tool": {"name": "Bash", "input": {"command": "rm -rf build"}}})),
        )
        .await;
    assert_eq!(v.outcome, Outcome::Control);
    assert_eq!(v.context_changes.len(), 1);
    assert_eq!(v.context_changes[0].source, "safer-rm");
    assert_eq!(v.signals[1].payload.summary(), "saw rm -ri build");
    assert_eq!(
        v.context.tool.as_ref().unwrap().input["command"],
        "rm -ri build"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn async_entries_are_detached_and_only_logged() {
    let t = trail();
    let sink = Arc::new(MemorySink::default());
    let e = engine(
        "hooks:\n  post-tool-use:\n    - {oracle: Mark, id: bg, async: true, config: {name: bg}}\n",
        &t,
        Some(Arc::clone(&sink)),
    );
    let v = e.dispatch(Event::PostToolUse, HookContext::default()).await;
    assert_eq!(v.outcome, Outcome::Accept);
    assert!(v.signals.is_empty());
    assert_eq!(v.entries[0].status, EntryStatus::Detached);
    e.finish_detached().await;
    let logged = sink.signals.lock().unwrap();
    assert_eq!(logged.len(), 1);
    assert!(logged[0].header.detached);
    assert_eq!(logged[0].header.source, "bg");
}

#[tokio::test(flavor = "current_thread")]
async fn async_entries_do_not_start_after_a_block() {
    let t = trail();
    let e = engine(
        &format!(
            "{BLOCK_THEN_MORE}    - {{oracle: Mark, id: bg, async: true, config: {{name: bg}}}}\n"
        ),
        &t,
        None,
    );
    let v = e
        .dispatch(Event::PreToolUse, ctx(json!({"tool": {"name": "Bash"}})))
        .await;
    e.finish_detached().await;
    assert!(!t.lock().unwrap().contains(&"bg".to_string()));
    assert!(
        v.entries
            .iter()
            .any(|r| r.id == "bg" && r.status == EntryStatus::DetachedNotStarted)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn failures_fail_open_or_closed() {
    let t = trail();
    let sink = Arc::new(MemorySink::default());
    let e = engine(
        "hooks:\n  pre-tool-use:\n    - {oracle: Broken, id: open}\n    - {oracle: Broken, id: closed, on_error: block, config: {how: panic}}\n    - {oracle: Broken, id: slow, timeout: 50, config: {how: hang}}\n",
        &t,
        Some(Arc::clone(&sink)),
    );
    let v = e.dispatch(Event::PreToolUse, HookContext::default()).await;
    assert_eq!(v.outcome, Outcome::Block);
    assert_eq!(v.signals.len(), 1);
    assert_eq!(v.signals[0].header.source, "closed");
    assert_eq!(v.signals[0].header.signal_type, "oracle-error");
    assert!(
        v.signals[0].payload.summary().contains("panicked"),
        "{}",
        v.signals[0].payload.summary()
    );
    let msgs: Vec<String> = v.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("database unreachable") && m.contains("failing open")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("timed out after 50 ms")),
        "{msgs:?}"
    );
    // Everything went to the sink too.
    assert_eq!(sink.diagnostics.lock().unwrap().len(), 3);
    assert_eq!(sink.signals.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn fail_closed_setting_changes_the_default() {
    let t = trail();
    let e = engine(
        "settings:\n  fail_closed: true\nhooks:\n  pre-tool-use:\n    - {oracle: Broken, id: db}\n    - {oracle: Broken, id: lenient, on_error: allow}\n",
        &t,
        None,
    );
    let v = e.dispatch(Event::PreToolUse, HookContext::default()).await;
    assert_eq!(v.outcome, Outcome::Block);
    assert_eq!(v.signals.len(), 1);
    assert_eq!(v.signals[0].header.source, "db");
}

#[tokio::test(flavor = "current_thread")]
async fn entry_intensity_override_and_when() {
    let t = trail();
    let e = engine(
        "hooks:\n  pre-issue-submit:\n    - oracle: Mark\n      intensity: block\n      when: {issue.type: [feature, fix], files.changed_count: \"> 10\"}\n      config: {name: big}\n",
        &t,
        None,
    );
    let small =
        ctx(json!({"issue": {"type": "feature"}, "files": {"changed": [], "changed_count": 3}}));
    assert_eq!(
        e.dispatch(Event::PreIssueSubmit, small).await.outcome,
        Outcome::Accept
    );
    let big =
        ctx(json!({"issue": {"type": "fix", "id": "FIX-0007"}, "files": {"changed_count": 12}}));
    let v = e.dispatch(Event::PreIssueSubmit, big).await;
    assert_eq!(v.outcome, Outcome::Block);
    assert_eq!(v.signals[0].context.issue_id.as_deref(), Some("FIX-0007"));
    assert_eq!(*t.lock().unwrap(), vec!["big"]);
}

/// Library users spawn dispatches on multi-thread runtimes: the future
/// must stay `Send` (checked at compile time).
#[test]
fn a_dispatch_can_be_spawned() {
    fn assert_send<T: Send>(_: &T) {}
    let e = engine("hooks: {}\n", &trail(), None);
    let f = e.dispatch(Event::PreToolUse, HookContext::default());
    assert_send(&f);
}
