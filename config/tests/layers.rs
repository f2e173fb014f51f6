//! Layering, provenance and error locations of hooks.yaml, through the
//! public API with real files on disk.

use ahp_config::{Layer, LoadOptions, LoadedConfig};
use ahp_engine::{
    Event, HookContext, Oracle, OracleConfig, OracleConfigError, OracleError, PolicySource,
    Registry, Signal, async_trait,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// Says `config.say` as aid; rejects unknown keys.
struct Echo(String);

#[async_trait]
impl Oracle for Echo {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(vec![Signal::aid(self.0.clone())])
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EchoConfig {
    #[serde(default)]
    say: String,
    #[allow(dead_code)]
    tags: Option<serde_json::Value>,
    #[allow(dead_code)]
    nested: Option<serde_json::Value>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StrictConfig {
    limit: Option<i64>,
}

/// Settings of the `Runner` test oracle: a command and a name, unread.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RunnerConfig {
    command: Option<String>,
    name: Option<String>,
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register("EchoOracle", "says config.say", |cfg: OracleConfig<'_>| {
        let c: EchoConfig = cfg.parse()?;
        Ok(Arc::new(Echo(c.say)) as Arc<dyn Oracle>)
    });
    r.register(
        "Strict",
        "needs a positive limit",
        |cfg: OracleConfig<'_>| match cfg.parse::<StrictConfig>()?.limit {
            Some(n) if n > 0 => Ok(Arc::new(Echo(n.to_string())) as Arc<dyn Oracle>),
            _ => Err(OracleConfigError::at("limit", "must be a positive integer")),
        },
    );
    r
}

struct Fixture {
    _home: tempfile::TempDir,
    _project: tempfile::TempDir,
    opts: LoadOptions,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn fixture(user: Option<&str>, project: Option<&str>, local: Option<&str>) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    if let Some(t) = user {
        write(&home.path().join(".ahp/hooks.yaml"), t);
    }
    if let Some(t) = project {
        write(&proj.path().join(".ahp/hooks.yaml"), t);
    }
    if let Some(t) = local {
        write(&proj.path().join(".ahp/hooks.local.yaml"), t);
        // The user's own local layer, as `ahp init` leaves it: git-ignored
        // (one that is not is the repository's, gated by trust).
        git_init_ignoring_local(proj.path());
    }
    let opts = LoadOptions::new(Some(home.path().to_path_buf()), proj.path().to_path_buf());
    Fixture {
        _home: home,
        _project: proj,
        opts,
    }
}

fn git_init_ignoring_local(dir: &std::path::Path) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init");
    write(&dir.join(".gitignore"), ".ahp/hooks.local.yaml\n");
}

fn load_err(f: &Fixture) -> String {
    match LoadedConfig::load(&f.opts).and_then(|c| c.compile(&registry()).map(|_| c)) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

const PROJECT: &str = "\
hooks:
  pre-tool-use:
    - oracle: EchoOracle
      id: greet
      priority: 1
      config:
        say: hello
        tags: [a, b]
        nested: {x: 1, y: 2}
    - oracle: EchoOracle
      id: second
";

#[test]
fn local_layer_disables_a_project_entry() {
    let f = fixture(
        None,
        Some(PROJECT),
        Some("hooks:\n  pre-tool-use:\n    - id: second\n      enabled: false\n"),
    );
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    let (policy, _) = cfg.compile_events(&registry(), None).unwrap();
    let plan = policy.plan(Event::PreToolUse).unwrap();
    let ids: Vec<&str> = plan.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, vec!["greet"]);
    let view = cfg.render_json();
    // After the builtin layer's PermissionChecker and PathGuard.
    let second = &view["hooks"]["pre-tool-use"][3];
    assert_eq!(second["enabled"], false);
    assert_eq!(second["origins"]["enabled"]["layer"], "local");
    assert_eq!(second["origins"]["oracle"]["layer"], "project");
}

#[test]
fn later_layer_deep_merges_config_maps_and_replaces_lists() {
    let local = "hooks:\n  PreToolUse:\n    - id: greet\n      config:\n        say: bonjour\n        tags: [z]\n        nested: {y: 3}\n";
    let f = fixture(None, Some(PROJECT), Some(local));
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    let greet = cfg.entries.iter().find(|e| e.id == "greet").unwrap();
    assert_eq!(
        greet.node.get("config").unwrap().to_json(),
        json!({"say": "bonjour", "tags": ["z"], "nested": {"x": 1, "y": 3}})
    );
    let view = cfg.render_json();
    let origins = &view["hooks"]["pre-tool-use"][2]["origins"];
    assert_eq!(origins["config.say"]["layer"], "local");
    assert_eq!(origins["config.nested.x"]["layer"], "project");
    assert_eq!(origins["config.nested.y"]["layer"], "local");
    assert_eq!(origins["priority"]["layer"], "project");
    assert_eq!(origins["priority"]["line"], 5);
    // The text view says it too.
    let text = cfg.render_text();
    let say_line = text
        .lines()
        .find(|l| l.contains("say: \"bonjour\""))
        .unwrap();
    assert!(say_line.contains("# local"), "{say_line}");
    assert!(say_line.contains("hooks.local.yaml:5:14"), "{say_line}");
}

/// A repository's policy applies without `ahp trust`: it does not change
/// an entry of the user's own, and says so.
#[test]
fn project_does_not_override_a_user_entry() {
    let user = "settings:\n  on_block: collect\nhooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      id: greet\n      priority: 9\n      config: {say: from-user}\n";
    let f = fixture(Some(user), Some(PROJECT), None);
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert_eq!(
        cfg.files.iter().map(|f| f.layer).collect::<Vec<_>>(),
        vec![Layer::Builtin, Layer::User, Layer::Project]
    );
    let greet = cfg.entries.iter().find(|e| e.id == "greet").unwrap();
    assert_eq!(greet.node.get("priority").unwrap().to_json(), json!(9));
    assert_eq!(
        greet.node.get("priority").unwrap().origin.layer(),
        Layer::User
    );
    assert_eq!(greet.defined_at.layer(), Layer::User);
    assert!(
        cfg.warnings.iter().any(|w| w
            .message
            .contains("hooks.pre-tool-use[greet].priority (project layer) is ignored")),
        "{:?}",
        cfg.warnings
    );
    // Settings from the user layer survive.
    let (settings, _) = cfg.settings().unwrap();
    assert_eq!(settings.on_block, ahp_engine::OnBlock::Collect);
}

#[test]
fn the_builtin_layer_stays_below_every_file() {
    let f = fixture(None, None, None);
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert_eq!(cfg.files.len(), 1);
    assert_eq!(cfg.files[0].layer, Layer::Builtin);
    // A policy file adds to it (this used to drop it).
    let f = fixture(None, None, Some("hooks: {}\n"));
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert_eq!(
        cfg.files.iter().map(|f| f.layer).collect::<Vec<_>>(),
        vec![Layer::Builtin, Layer::Local]
    );
    assert!(
        cfg.entries
            .iter()
            .any(|e| e.id == "PermissionChecker" && e.defined_at.layer() == Layer::Builtin)
    );
    // Only an explicit `settings.builtin: false` drops it.
    let f = fixture(None, Some("settings: {builtin: false}\n"), None);
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert_eq!(cfg.files.len(), 1);
    assert!(cfg.entries.is_empty());
    assert_eq!(cfg.builtin_off.as_ref().map(|o| o.line), Some(1));
}

#[test]
fn bad_yaml_names_file_line_column() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n     priority: [\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:4:"), "{msg}");
    assert!(msg.contains("invalid YAML"), "{msg}");
}

#[test]
fn unknown_oracle_lists_known_ones() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: EchoOracel\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:3:15"), "{msg}");
    assert!(msg.contains("unknown oracle `EchoOracel`"), "{msg}");
    assert!(msg.contains("did you mean `EchoOracle`"), "{msg}");
    assert!(msg.contains("known oracles: EchoOracle, Strict"), "{msg}");
    assert!(
        msg.contains("hooks.pre-tool-use[EchoOracel].oracle"),
        "{msg}"
    );
}

#[test]
fn bad_when_expression_is_located() {
    let f = fixture(
        None,
        Some(
            "hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      when:\n        tool.input.command: \"~rm (-rf\"\n",
        ),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:5:29"), "{msg}");
    assert!(msg.contains("invalid regex"), "{msg}");
    let f = fixture(
        None,
        Some(
            "hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      when: {files.changed_count: \">\"}\n",
        ),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:4:35"), "{msg}");
    assert!(msg.contains("no operand"), "{msg}");
    // Regexes compile on first use, but one too big to compile is still
    // an error when the policy loads, located like a syntax error.
    let f = fixture(
        None,
        Some(
            "hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      when:\n        tool.input.command: \"~\\\\w{1000}\"\n",
        ),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:5:29"), "{msg}");
    assert!(msg.contains("exceeds size limit"), "{msg}");
}

#[test]
fn wrong_types_are_located() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      priority: high\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:4:17"), "{msg}");
    assert!(msg.contains("expected an integer"), "{msg}");
    assert!(msg.contains("found a string"), "{msg}");
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use: {oracle: EchoOracle}\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:2:17"), "{msg}");
    assert!(msg.contains("expected a list of entries"), "{msg}");
}

#[test]
fn unknown_keys_and_events_suggest_fixes() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      priorty: 1\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:4:7"), "{msg}");
    assert!(msg.contains("did you mean `priority`"), "{msg}");
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-usee:\n    - oracle: EchoOracle\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:2:3"), "{msg}");
    assert!(msg.contains("did you mean `pre-tool-use`"), "{msg}");
    let f = fixture(None, Some("setings:\n  on_block: stop\n"), None);
    let msg = load_err(&f);
    assert!(msg.contains("did you mean `settings`"), "{msg}");
}

#[test]
fn oracle_config_errors_point_at_the_key() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: Strict\n      config:\n        limit: -3\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains(".ahp/hooks.yaml:5:9"), "{msg}");
    assert!(msg.contains("must be a positive integer"), "{msg}");
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: strict\n      config: {limt: 3}\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains("did you mean `limit`"), "{msg}");
    assert!(msg.contains(".ahp/hooks.yaml:4:16"), "{msg}");
}

#[test]
fn errors_in_a_later_layer_point_at_that_layer() {
    let f = fixture(
        None,
        Some(PROJECT),
        Some("hooks:\n  pre-tool-use:\n    - id: greet\n      priority: soon\n"),
    );
    let msg = load_err(&f);
    assert!(msg.contains("hooks.local.yaml:4:17"), "{msg}");
}

#[test]
fn cycles_are_rejected_naming_members() {
    let text = "hooks:\n  pre-issue-submit:\n    - {oracle: EchoOracle, id: a, after: c}\n    - {oracle: EchoOracle, id: b, after: a}\n    - {oracle: EchoOracle, id: c, after: [b]}\n";
    let f = fixture(None, Some(text), None);
    let msg = load_err(&f);
    assert!(msg.contains("a → b → c → a"), "{msg}");
    assert!(msg.contains(".ahp/hooks.yaml:3:"), "{msg}");
}

#[test]
fn overriding_nothing_and_duplicates_are_errors() {
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - id: ghost\n      enabled: false\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains("overrides nothing"), "{msg}");
    let f = fixture(
        None,
        Some("hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n    - oracle: EchoOracle\n"),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains("second entry with id `EchoOracle`"), "{msg}");
    assert!(msg.contains(".ahp/hooks.yaml:4:"), "{msg}");
}

#[test]
fn every_error_is_reported_at_once() {
    let f = fixture(
        None,
        Some(
            "hooks:\n  pre-tool-use:\n    - oracle: Nope\n    - oracle: EchoOracle\n      priority: x\n",
        ),
        None,
    );
    let msg = load_err(&f);
    assert!(msg.contains("unknown oracle `Nope`"), "{msg}");
    assert!(msg.contains("expected an integer"), "{msg}");
    assert!(msg.contains("2 errors"), "{msg}");
}

#[test]
fn disallowed_intensity_is_a_warning() {
    let f = fixture(
        None,
        Some("hooks:\n  post-tool-use:\n    - oracle: EchoOracle\n      intensity: block\n"),
        None,
    );
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    let (_, warnings) = cfg.compile_events(&registry(), None).unwrap();
    assert_eq!(warnings.len(), 1);
    let w = warnings[0].to_string();
    assert!(
        w.contains("post-tool-use does not allow intensity `block`"),
        "{w}"
    );
    assert!(w.contains(".ahp/hooks.yaml:4:18"), "{w}");
}

#[test]
fn home_as_project_root_loads_the_file_once() {
    let home = tempfile::tempdir().unwrap();
    write(&home.path().join(".ahp/hooks.yaml"), PROJECT);
    let opts = LoadOptions::new(Some(home.path().to_path_buf()), home.path().to_path_buf());
    let cfg = LoadedConfig::load(&opts).unwrap();
    // The builtin layer and the file, once.
    assert_eq!(cfg.files.len(), 2);
    assert_eq!(cfg.entries_for(Event::PreToolUse).count(), 4);
}

#[test]
fn text_view_renders_lists_of_maps_as_yaml_items() {
    let f = fixture(
        None,
        Some(
            "hooks:\n  pre-tool-use:\n    - oracle: EchoOracle\n      config:\n        nested:\n          - {a: 1, b: two}\n          - [x, y]\n",
        ),
        None,
    );
    let text = LoadedConfig::load(&f.opts).unwrap().render_text();
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("          - a: 1"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(lines[i + 1].starts_with("            b: \"two\""), "{text}");
    assert!(
        lines[i + 2].starts_with("          - [\"x\", \"y\"]"),
        "{text}"
    );
}

#[test]
fn commands_set_by_a_local_layer_that_is_not_ignored_are_the_repositorys() {
    let mut r = registry();
    r.register("Runner", "runs config.command", |cfg: OracleConfig<'_>| {
        cfg.parse::<RunnerConfig>()?;
        Ok(Arc::new(Echo(String::new())) as Arc<dyn Oracle>)
    });
    assert!(r.set_command_keys("runner", &["command"]));
    let local = "hooks:\n  pre-issue-close:\n    - {oracle: Runner, id: lint, config: {command: make lint}}\n";
    let f = fixture(None, None, Some(local));
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert!(!cfg.local_is_repository_code);
    assert!(cfg.project_command_entries(&r).is_empty());
    // Not ignored any more: the repository's code, and said so.
    std::fs::remove_file(f.opts.project_root.join(".gitignore")).unwrap();
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    assert!(cfg.local_is_repository_code);
    assert_eq!(
        cfg.project_command_entries(&r),
        vec![(Event::PreIssueClose, "lint".to_string())]
    );
    assert!(
        cfg.warnings
            .iter()
            .any(|w| w.message.contains("not git-ignored"))
    );
}

#[test]
fn commands_set_by_the_project_layer_are_found() {
    let mut r = registry();
    r.register("Runner", "runs config.command", |cfg: OracleConfig<'_>| {
        cfg.parse::<RunnerConfig>()?;
        Ok(Arc::new(Echo(String::new())) as Arc<dyn Oracle>)
    });
    assert!(r.set_command_keys("runner", &["command"]));
    let project = "hooks:\n  pre-issue-close:\n    - {oracle: Runner, id: tests, config: {command: make test}}\n    - {oracle: Runner, id: named, config: {name: x}}\n    - {oracle: Runner, id: mine, config: {command: make lint}}\n";
    let local = "hooks:\n  pre-issue-close:\n    - {id: mine, config: {command: make my-lint}}\n";
    let f = fixture(
        Some("hooks:\n  pre-tool-use:\n    - {oracle: Runner, config: {command: ls}}\n"),
        Some(project),
        Some(local),
    );
    let cfg = LoadedConfig::load(&f.opts).unwrap();
    let found = cfg.project_command_entries(&r);
    assert_eq!(found, vec![(Event::PreIssueClose, "tests".to_string())]);
    let mut cfg = cfg;
    cfg.skip_entries(found, "untrusted");
    let (policy, _) = cfg.compile_events(&r, None).unwrap();
    let ids: Vec<&str> = policy
        .plan(Event::PreIssueClose)
        .unwrap()
        .entries
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(ids, vec!["named", "mine"]);
}
