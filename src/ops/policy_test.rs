//! Policy tests (`ahp test`): YAML files of cases, each an event as an
//! agent or a workflow would send it and the decision the policy must
//! make, run in-process against the loaded policy.
//!
//! A case is one of three shapes:
//!
//! - an ahp event and its context (`event: pre-tool-use`, `context: {tool:
//!   …}`), as `ahp run` takes them;
//! - an agent's own hook payload (`agent: gemini`, `payload: {…}`), mapped
//!   by that agent's adapter exactly as `ahp hook AGENT` maps it;
//! - a tool call in the attack corpus's short form (`tool: Bash`, `input:
//!   {command: …}`), sent as the agent's pre-tool event (Claude Code
//!   unless `agent` says otherwise).
//!
//! `expect` is an outcome (`allow`, `block`, `prompt`, …) or a map that
//! also names the signal's source, intensity, a part of its message, or
//! the tool input after control changes. `{{home}}` and `{{project}}` in a
//! case stand for the home directory and the project root.
//!
//! Nothing is written to the signal log: a test is not a decision.

use crate::adapters::{self, Agent, Inbound};
use crate::ops::policy::runtime;
use ahp_config::{ConfigError, LoadedConfig, SourceFile};
use ahp_engine::{Engine, EntryStatus, Event, HookContext, Intensity, Outcome, Registry, Verdict};
use anyhow::{Context, Result, anyhow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file of policy tests.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestFile {
    /// What the file tests, for readers.
    #[serde(default)]
    #[allow(dead_code, reason = "read by people and the schema, not by ahp")]
    pub description: Option<String>,
    /// A label for the cases (the attack corpus names its category).
    #[serde(default)]
    #[allow(dead_code, reason = "read by people and the schema, not by ahp")]
    pub category: Option<String>,
    /// The cases, run in order.
    pub cases: Vec<Case>,
}

/// One policy test.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    /// Its name, shown in the results.
    pub name: String,
    /// An ahp event (any alias), with `context`.
    #[serde(default)]
    pub event: Option<String>,
    /// The hook context for `event` (`tool`, `issue`, `files`, …).
    #[serde(default)]
    pub context: Option<Value>,
    /// The agent whose payload `payload` (or `tool`/`input`) is: claude-code,
    /// codex, gemini, copilot, cursor, kimi, agenthooks. Default claude-code.
    #[serde(default)]
    pub agent: Option<String>,
    /// The agent's own hook payload, as it writes it on stdin.
    #[serde(default)]
    pub payload: Option<Value>,
    /// A tool call's tool name as the agent names it (`Bash`, `Read`, …),
    /// with `input`: sent as the agent's pre-tool event.
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool call's input.
    #[serde(default)]
    pub input: Option<Value>,
    /// What the case needs around it.
    #[serde(default)]
    pub fixtures: Fixtures,
    /// The decision the policy must make.
    pub expect: Expect,
    /// The policy is known to get this case wrong, and why: it is reported,
    /// not failed, and reported again when it starts to pass.
    #[serde(default)]
    pub known_miss: Option<String>,
    /// The technique the case stands for (MITRE ATT&CK id), for readers.
    #[serde(default)]
    #[allow(dead_code, reason = "read by people and the schema, not by ahp")]
    pub technique: Option<String>,
    /// Why the expectation is right, for readers.
    #[serde(default)]
    pub why: Option<String>,
}

/// What a case needs around it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Fixtures {
    /// An issue file (relative to the test file), loaded as `issue` and
    /// `checklist` as `ahp gate --issue` loads it.
    #[serde(default)]
    pub issue: Option<PathBuf>,
    /// The environment name (`development`, `production`, …).
    #[serde(default)]
    pub environment: Option<String>,
    /// The changed files (`files` of the context): `changed`, `added`,
    /// `deleted`, … as `ahp run` receives them.
    #[serde(default)]
    pub files: Option<Value>,
}

/// The expected decision: an outcome, or a map with more to check.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Expect {
    /// `allow` (accept, aid or control: the call goes ahead), `accept`,
    /// `aid`, `control`, `prompt` or `block`.
    Outcome(String),
    /// The outcome and more.
    Full(FullExpect),
}

/// The expected decision in full.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FullExpect {
    /// `allow`, `accept`, `aid`, `control`, `prompt` or `block`.
    pub outcome: String,
    /// A signal came from this entry (its id) or oracle.
    #[serde(default)]
    pub source: Option<String>,
    /// A signal (from `source`, when given) has this intensity.
    #[serde(default)]
    pub intensity: Option<String>,
    /// A signal (from `source`, when given) says this, as a part of its message.
    #[serde(default)]
    pub message: Option<String>,
    /// The tool input after control changes, exactly.
    #[serde(default)]
    pub input: Option<Value>,
}

/// A case read from a file, with where it is.
#[derive(Debug, Clone)]
pub(crate) struct LoadedCase {
    pub file: PathBuf,
    pub line: usize,
    pub case: Case,
}

/// The result of one case.
#[derive(Debug)]
pub(crate) struct CaseResult {
    /// What did not match, one line each; empty when it passed.
    pub mismatches: Vec<String>,
    /// The verdict's signals, as `intensity source: message` lines.
    pub signals: Vec<String>,
}

/// Reads the test files among `paths` (files, or directories searched for
/// `*.yaml`/`*.yml`), in name order. A file that does not parse is an
/// error naming its line and key.
pub(crate) fn load_cases(paths: &[PathBuf]) -> Result<Vec<LoadedCase>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            not_a_link(p)?;
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot read {}", ahp_config::path_line(p)))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| matches!(f.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")))
                .collect();
            found.sort();
            for f in &found {
                not_a_link(f)?;
            }
            files.extend(found.into_iter().filter(|f| f.is_file()));
        } else if p.is_file() {
            not_a_link(p)?;
            files.push(p.clone());
        } else {
            return Err(anyhow!(
                "{}: no such file or directory (give test files, or a folder of them)",
                ahp_config::path_line(p)
            ));
        }
    }
    let mut out = Vec::new();
    for f in files {
        out.extend(read_file(&f)?);
    }
    Ok(out)
}

/// Test files and their folders are read as they are in the project, not
/// through a symbolic link: a repository's `.ahp/tests/x.yaml` linked to
/// `/proc/self/environ` or a credential file would print its lines in the
/// parse error, in a CI log.
fn not_a_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(anyhow!(
            "{}: is a symbolic link; test files and folders are read only as they are (name the file it points to, if it is yours)",
            ahp_config::path_line(path)
        )),
        _ => Ok(()),
    }
}

/// The largest test file read.
const MAX_TEST_FILE: u64 = 16 * 1024 * 1024;

fn read_file(path: &Path) -> Result<Vec<LoadedCase>> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| {
            std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_TEST_FILE + 1), &mut text)
        })
        .with_context(|| format!("cannot read {}", ahp_config::path_line(path)))?;
    if text.len() as u64 > MAX_TEST_FILE {
        return Err(anyhow!(
            "{}: larger than {} MiB; split the cases into several files",
            ahp_config::path_line(path),
            MAX_TEST_FILE / (1024 * 1024)
        ));
    }
    let source = Arc::new(SourceFile {
        layer: ahp_config::Layer::Project,
        path: path.to_path_buf(),
        text,
    });
    let node = ahp_config::yaml::parse(source).map_err(|e| anyhow!("{e}"))?;
    let spec: TestFile = ahp_engine::oracle::from_value(&node.to_json()).map_err(|e| {
        let mut key = e.key.clone().unwrap_or_default();
        // serde's word for a value that is neither form of `expect`; a
        // map of the wrong keys is told by the key at fault.
        let message = if e.message.contains("untagged enum Expect") {
            let expect = format!("{key}.expect");
            match expect_map_error(&node, &expect) {
                Some((at, message)) => {
                    key = at;
                    message
                }
                None => "`expect` is an outcome (allow, accept, aid, control, prompt, block) or a map with `outcome:` and, optionally, `source`, `intensity`, `message`, `input`".to_string(),
            }
        } else {
            e.message
        };
        let origin = node
            .find_key(&key)
            .map(|k| &k.origin)
            .or_else(|| node.find(&key).map(|n| &n.origin))
            .unwrap_or(&node.origin);
        let err = ConfigError::at(origin, (!key.is_empty()).then_some(key), message)
            .help("the format: `ahp schema --tests`, or docs/policy-tests.md");
        anyhow::Error::from(ahp_config::ConfigErrors(vec![err]))
    })?;
    check_expectations(&spec, &node)?;
    Ok(spec
        .cases
        .into_iter()
        .enumerate()
        .map(|(i, case)| LoadedCase {
            file: path.to_path_buf(),
            line: node
                .find(&format!("cases.{i}"))
                .map_or(0, |n| n.origin.line),
            case,
        })
        .collect())
}

/// The keys of an `expect` map.
const EXPECT_KEYS: &[&str] = &["outcome", "source", "intensity", "message", "input"];

/// What is wrong with the `expect` map at `path`, and the dotted key at
/// fault: a key it does not have (`mesage`), or no `outcome`.
fn expect_map_error(node: &ahp_config::yaml::Node, path: &str) -> Option<(String, String)> {
    let map = node.find(path)?.as_map()?;
    if let Some((k, _)) = map
        .iter()
        .find(|(k, _)| !EXPECT_KEYS.contains(&k.name.as_str()))
    {
        let hint = ahp_engine::suggest::did_you_mean(&k.name, EXPECT_KEYS.iter().copied())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return Some((
            format!("{path}.{}", k.name),
            format!("unknown key `{}`{hint}", k.name),
        ));
    }
    (!map.iter().any(|(k, _)| k.name == "outcome")).then(|| {
        (
            path.to_string(),
            "an `expect` map needs `outcome:`".to_string(),
        )
    })
}

/// The outcomes and intensities `expect` may name.
const OUTCOMES: &[&str] = &["allow", "accept", "aid", "control", "prompt", "block"];
const INTENSITIES: &[&str] = &["block", "control", "prompt", "aid"];

/// A mistyped outcome or intensity is the file's error at its line: as a
/// case failure it read as a policy that decides wrongly.
fn check_expectations(spec: &TestFile, node: &ahp_config::yaml::Node) -> Result<()> {
    let mut errors = Vec::new();
    for (i, case) in spec.cases.iter().enumerate() {
        let (outcome, intensity, at) = match &case.expect {
            Expect::Outcome(o) => (o, None, format!("cases.{i}.expect")),
            Expect::Full(f) => (
                &f.outcome,
                f.intensity.as_ref(),
                format!("cases.{i}.expect.outcome"),
            ),
        };
        let mut check = |valid: bool, word: &str, known: &[&str], key: String, what: &str| {
            if valid {
                return;
            }
            let hint = ahp_engine::suggest::did_you_mean(word, known.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            let origin = node.find(&key).map_or(&node.origin, |n| &n.origin);
            errors.push(
                ConfigError::at(origin, Some(key), format!("unknown {what} `{word}`{hint}"))
                    .help(format!("one of: {}", known.join(", "))),
            );
        };
        let valid = outcome_is(outcome, Outcome::Accept).is_ok();
        check(valid, outcome, OUTCOMES, at, "outcome");
        if let Some(intensity) = intensity {
            let valid = intensity.parse::<Intensity>().is_ok();
            let at = format!("cases.{i}.expect.intensity");
            check(valid, intensity, INTENSITIES, at, "intensity");
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ahp_config::ConfigErrors(errors).into())
    }
}

/// Runs cases against one loaded policy and remembers which entries ran.
pub(crate) struct Runner<'a> {
    cfg: &'a LoadedConfig,
    engine: Engine,
    rt: tokio::runtime::Runtime,
    home: String,
    /// (event, entry id) of every entry some case ran.
    pub exercised: BTreeSet<(Event, String)>,
}

impl<'a> Runner<'a> {
    /// A runner for `cfg`, compiled once for every event.
    pub fn new(cfg: &'a LoadedConfig, registry: &Registry) -> Result<Runner<'a>> {
        let compiled = cfg.compile_with_errors(registry, None);
        if !compiled.errors.is_empty() {
            return Err(ahp_config::ConfigErrors(compiled.errors).into());
        }
        crate::ops::output::print_warnings(&compiled.warnings);
        let engine = Engine::builder()
            .policy(compiled.policy)
            .defer_detached(true)
            .build()?;
        Ok(Runner {
            cfg,
            engine,
            rt: runtime()?,
            home: std::env::var("HOME").unwrap_or_default(),
            exercised: BTreeSet::new(),
        })
    }

    /// Every entry of the policy: (event, id, where it is defined).
    pub fn entries(&self) -> Vec<(Event, String, String)> {
        let mut out = Vec::new();
        for e in Event::ALL {
            if let Some(plan) = self.engine.policy().plan(*e) {
                for entry in &plan.entries {
                    out.push((*e, entry.id.clone(), entry.origin.clone()));
                }
            }
        }
        out
    }

    /// Runs one case.
    pub fn run(&mut self, lc: &LoadedCase) -> Result<CaseResult> {
        let (event, mut ctx, inbound) = self.event_and_context(lc)?;
        // The issue commands of a shell call are their issue events, as
        // under `ahp hook` (`monoco issue close FEAT-1` runs pre-issue-close).
        let calls = crate::ops::dispatch::issue_calls(event, &mut ctx, self.cfg, &self.rt);
        let mut verdict = self.rt.block_on(self.engine.dispatch(event, ctx));
        for call in &calls {
            if call.refuse.is_some() {
                verdict.outcome = Outcome::Block;
            }
            // As under `ahp hook`: an error is a refusal under fail_closed,
            // an issue that does not load leaves the event unrun.
            let ictx = match call.prepare(&verdict.context, &self.rt, self.cfg, None) {
                Ok(Ok(ictx)) => ictx,
                Ok(Err(_)) => continue,
                Err(_) => {
                    verdict.outcome = Outcome::Block;
                    continue;
                }
            };
            let issue = self.rt.block_on(self.engine.dispatch(call.event, ictx));
            for run in &issue.entries {
                if matches!(
                    run.status,
                    EntryStatus::Accepted | EntryStatus::Signalled | EntryStatus::Failed
                ) {
                    self.exercised.insert((call.event, run.id.clone()));
                }
            }
            crate::ops::dispatch::fold_in(&mut verdict, issue);
        }
        // An agent's case is judged by the answer that agent gets: a
        // rewrite it cannot take is a deny, a prompt where it cannot ask
        // goes as context, as `ahp hook` answers.
        if let Some(inbound) = inbound {
            verdict.outcome = self.answered(&verdict, &inbound, event);
        }
        for run in &verdict.entries {
            if matches!(
                run.status,
                EntryStatus::Accepted | EntryStatus::Signalled | EntryStatus::Failed
            ) {
                self.exercised.insert((event, run.id.clone()));
            }
        }
        Ok(compare(&lc.case.expect, &verdict))
    }

    /// The outcome of the answer `ahp hook` gives the agent.
    fn answered(&self, verdict: &Verdict, inbound: &Inbound, event: Event) -> Outcome {
        let settings = self.cfg.hook_settings_checked().0;
        let (prompt, rewrite) = adapters::fallbacks(&settings, inbound, event);
        let caps = adapters::caps(inbound.agent, &inbound.native_event, event, inbound.camel);
        match adapters::Decision::from_verdict(verdict, caps, prompt, rewrite) {
            adapters::Decision::Deny { .. } => Outcome::Block,
            adapters::Decision::Ask { .. } => Outcome::Prompt,
            adapters::Decision::Rewrite { .. } => Outcome::Control,
            // A prompt delivered as context still asks the agent to confirm.
            adapters::Decision::Allow { .. } => verdict.outcome,
        }
    }

    fn fill(&self, v: &Value) -> Value {
        let project = self.cfg.project_root.to_string_lossy();
        match v {
            Value::String(s) => Value::String(
                s.replace("{{home}}", &self.home)
                    .replace("{{project}}", &project),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.fill(x))).collect())
            }
            other => other.clone(),
        }
    }

    fn event_and_context(&self, lc: &LoadedCase) -> Result<(Event, HookContext, Option<Inbound>)> {
        let case = &lc.case;
        let agent = match case.agent.as_deref() {
            None => Agent::ClaudeCode,
            Some(name) => <Agent as clap::ValueEnum>::from_str(name, true).map_err(|_| {
                let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
                anyhow!("unknown agent `{name}` (one of: {})", names.join(", "))
            })?,
        };
        let project = self.cfg.project_root.to_string_lossy().into_owned();
        let (event, mut ctx, inbound) = match (&case.event, &case.payload, &case.tool) {
            (Some(name), None, None) => {
                let event = Event::parse(name).map_err(|e| anyhow!("{e}"))?;
                let raw = self.fill(case.context.as_ref().unwrap_or(&json!({})));
                let shape = crate::ops::input::context_warnings(Some(&raw));
                let mut ctx: HookContext =
                    serde_json::from_value(raw).context("`context` is not a hook context")?;
                // Read as `ahp run` reads a context (`Bash` is `shell`).
                if let Some(tool) = ctx.tool.as_mut() {
                    crate::adapters::normalize_context_tool(tool);
                }
                // A case whose context the policy reads as nothing tests
                // nothing: it fails, as `ahp run` warns.
                let broken: Vec<String> = shape
                    .into_iter()
                    .chain(crate::ops::input::tool_warning(&ctx))
                    .collect();
                if !broken.is_empty() {
                    return Err(anyhow!("context: {}", broken.join("; ")));
                }
                (event, ctx, None)
            }
            // With a payload, `event` is the agent's own event name, for
            // agents whose payload does not carry it (`ahp hook copilot
            // --event NAME`).
            (native, Some(payload), None) => {
                let (event, mut ctx, inbound) =
                    agent_event(agent, &self.fill(payload), native.as_deref())?;
                // Where the call runs, as `ahp hook` places it.
                crate::ops::input::place_tool_call(&mut ctx, &self.cfg.project_root);
                (event, ctx, inbound)
            }
            (None, None, Some(_)) if agent == Agent::Windsurf => {
                return Err(anyhow!(
                    "the `tool` form is not available for windsurf, whose payload names an action (`pre_run_command`, `pre_write_code`, …) rather than a tool: give its `payload`"
                ));
            }
            (None, None, Some(tool)) => {
                let native = match agent {
                    Agent::Gemini => "BeforeTool",
                    Agent::AgentHooks => "pre-tool-call",
                    _ => "PreToolUse",
                };
                let payload = json!({
                    "session_id": "ahp-test",
                    "cwd": project,
                    "hook_event_name": native,
                    // The Agent Hooks standard's name for the event field.
                    "event_type": native,
                    "tool_name": tool,
                    "tool_input": self.fill(case.input.as_ref().unwrap_or(&json!({}))),
                    "tool_use_id": "ahp-test",
                });
                let (event, ctx, inbound) = agent_event(agent, &payload, None)?;
                if let Some(w) = crate::ops::input::tool_warning(&ctx) {
                    return Err(anyhow!("input: {w}"));
                }
                (event, ctx, inbound)
            }
            _ => {
                return Err(anyhow!(
                    "a case is one of: `event` (with `context`), `payload` (with `agent`, and `event` for the agent's event name when the payload lacks it), or `tool` (with `input`)"
                ));
            }
        };
        let fx = &case.fixtures;
        if let Some(env) = &fx.environment {
            ctx.environment = Some(env.clone());
        }
        if let Some(files) = &fx.files {
            ctx.files = Some(
                serde_json::from_value(self.fill(files))
                    .context("`fixtures.files` is not a file list")?,
            );
        }
        if let Some(issue) = &fx.issue {
            let path = issue_fixture("fixtures.issue", &lc.file, issue, &self.cfg.project_root)?;
            let loaded = ahp_oracles::workflow::issue::load_issue(&path)
                .map_err(|e| anyhow!("fixtures.issue: {e}"))?;
            ctx.issue = Some(loaded.context_issue());
            ctx.extra
                .insert("checklist".into(), loaded.context_checklist());
        }
        // ChecklistValidator reads the file at `issue.path` (from the
        // project root when relative): as an issue fixture, it must be the
        // project's or the test folder's.
        if let Some(path) = ctx
            .issue
            .as_ref()
            .and_then(|i| i.get("path"))
            .and_then(Value::as_str)
            && !path.trim().is_empty()
        {
            let path = self.cfg.project_root.join(path);
            issue_fixture(
                "context.issue.path",
                &lc.file,
                &path,
                &self.cfg.project_root,
            )?;
        }
        if ctx.work_dir.is_none() {
            ctx.work_dir = Some(project);
        }
        Ok((event, ctx, inbound))
    }
}

/// The issue file a case names (`field`), relative to its test file: a regular file
/// of at most 1 MiB inside the test file's folder or the project (a test
/// file from a repository must not read the machine's files, or a FIFO
/// that never ends).
fn issue_fixture(field: &str, test_file: &Path, issue: &Path, root: &Path) -> Result<PathBuf> {
    let dir = test_file.parent().unwrap_or(Path::new("."));
    let path = dir.join(issue);
    let real = std::fs::canonicalize(&path)
        .with_context(|| format!("{field}: cannot find {}", ahp_config::path_line(&path)))?;
    let inside = |base: &Path| std::fs::canonicalize(base).is_ok_and(|b| real.starts_with(b));
    if !inside(dir) && !inside(root) {
        return Err(anyhow!(
            "{field}: {} is outside the test file's folder and the project",
            ahp_config::path_line(&path)
        ));
    }
    let meta = std::fs::metadata(&real)
        .with_context(|| format!("{field}: cannot read {}", ahp_config::path_line(&path)))?;
    if !meta.is_file() || meta.len() > 1024 * 1024 {
        return Err(anyhow!(
            "{field}: {} is not a regular file of at most 1 MiB",
            ahp_config::path_line(&path)
        ));
    }
    Ok(real)
}

/// The event and context an agent's payload maps to, and what `ahp hook`
/// knows of the agent to answer it.
fn agent_event(
    agent: Agent,
    payload: &Value,
    native: Option<&str>,
) -> Result<(Event, HookContext, Option<Inbound>)> {
    let inbound = adapters::parse(agent, payload, native).map_err(|e| anyhow!("{e}"))?;
    let event = inbound.event.ok_or_else(|| {
        anyhow!(
            "{agent} event `{}` is not one ahp decides on",
            inbound.native_event
        )
    })?;
    let ctx = inbound.context.clone();
    Ok((event, ctx, Some(inbound)))
}

/// Whether the verdict's outcome is the one `want` names.
fn outcome_is(want: &str, got: Outcome) -> Result<bool, String> {
    Ok(match want {
        "allow" => matches!(got, Outcome::Accept | Outcome::Aid | Outcome::Control),
        "accept" => got == Outcome::Accept,
        "aid" => got == Outcome::Aid,
        "control" => got == Outcome::Control,
        "prompt" | "ask" => got == Outcome::Prompt,
        "block" | "deny" => got == Outcome::Block,
        other => {
            return Err(format!(
                "unknown outcome `{other}` (allow, accept, aid, control, prompt or block)"
            ));
        }
    })
}

/// What of `expect` the verdict does not meet.
pub(crate) fn compare(expect: &Expect, verdict: &Verdict) -> CaseResult {
    let signals: Vec<String> = verdict
        .signals
        .iter()
        .map(|s| {
            format!(
                "{} {}: {}",
                s.intensity().as_str(),
                s.header.source,
                s.payload.summary().lines().next().unwrap_or_default()
            )
        })
        .collect();
    let full = match expect {
        Expect::Outcome(o) => FullExpect {
            outcome: o.clone(),
            source: None,
            intensity: None,
            message: None,
            input: None,
        },
        Expect::Full(f) => f.clone(),
    };
    let mut mismatches = Vec::new();
    match outcome_is(&full.outcome, verdict.outcome) {
        Ok(true) => {}
        Ok(false) => mismatches.push(format!(
            "outcome: expected {}, found {}",
            full.outcome,
            verdict.outcome.as_str()
        )),
        Err(e) => mismatches.push(e),
    }
    let from_source: Vec<&ahp_engine::Signal> = verdict
        .signals
        .iter()
        .filter(|s| {
            full.source.as_deref().is_none_or(|src| {
                s.header.source == src || s.header.source.split('/').any(|p| p == src)
            })
        })
        .collect();
    if let Some(src) = &full.source
        && from_source.is_empty()
    {
        mismatches.push(format!("source: expected a signal from {src}, found none"));
    }
    if let Some(want) = &full.intensity {
        match want.parse::<Intensity>().ok() {
            Some(i) if from_source.iter().any(|s| s.intensity() == i) => {}
            Some(_) => mismatches.push(format!(
                "intensity: expected a {want} signal{}, found {}",
                full.source
                    .as_deref()
                    .map(|s| format!(" from {s}"))
                    .unwrap_or_default(),
                listed(from_source.iter().map(|s| s.intensity().as_str()))
            )),
            None => mismatches.push(format!(
                "unknown intensity `{want}` (block, control, prompt or aid)"
            )),
        }
    }
    if let Some(part) = &full.message
        && !from_source
            .iter()
            .any(|s| s.payload.summary().contains(part.as_str()))
    {
        mismatches.push(format!("message: expected a signal saying {part:?}"));
    }
    if let Some(want) = &full.input {
        let got = verdict
            .context
            .tool
            .as_ref()
            .map_or(Value::Null, |t| t.input.clone());
        if &got != want {
            mismatches.push(format!(
                "input: expected {}, found {}",
                serde_json::to_string(want).unwrap_or_default(),
                serde_json::to_string(&got).unwrap_or_default()
            ));
        }
    }
    CaseResult {
        mismatches,
        signals,
    }
}

fn listed<'s>(items: impl Iterator<Item = &'s str>) -> String {
    let v: Vec<&str> = items.collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// A test file holding the run `id` of the log at `log` (a run record's
/// correlation id, or its start): its recorded context and event, and the
/// decision it got as the expectation.
pub(crate) fn case_from_log(log: &Path, id: &str) -> Result<String> {
    let mut run: Option<ahp_engine::RunRecord> = None;
    let mut signals: Vec<ahp_engine::Signal> = Vec::new();
    let reader = ahp_signals_log::read_all(log)
        .with_context(|| format!("cannot read the signal log {}", ahp_config::path_line(log)))?;
    for record in reader {
        match record.with_context(|| format!("cannot read {}", ahp_config::path_line(log)))? {
            ahp_signals_log::Record::Run(r) if r.correlation_id.starts_with(id) => {
                if run
                    .as_ref()
                    .is_some_and(|x| x.correlation_id != r.correlation_id)
                {
                    return Err(anyhow!(
                        "`{id}` starts more than one run's id in {}; give more of it",
                        ahp_config::path_line(log)
                    ));
                }
                run = Some(r);
            }
            ahp_signals_log::Record::Signal(s)
                if s.header
                    .correlation_id
                    .as_deref()
                    .is_some_and(|c| c.starts_with(id)) =>
            {
                signals.push(s);
            }
            _ => {}
        }
    }
    let run = run.ok_or_else(|| {
        anyhow!(
            "no run `{id}` in {} (`ahp signals query --kind run` lists the runs)",
            ahp_config::path_line(log)
        )
    })?;
    let strongest = signals
        .iter()
        .filter(|s| run.signal_ids.contains(&s.header.id))
        .max_by_key(|s| s.intensity());
    let mut expect = format!("      outcome: {}\n", run.outcome.as_str());
    // A case has no history: an escalated decision replays as the one
    // before escalation.
    let escalated = signals
        .iter()
        .filter(|s| run.signal_ids.contains(&s.header.id))
        .filter(|s| s.header.escalation.is_some())
        .find_map(|s| {
            s.header
                .escalated_from
                .map(|from| (s.header.source.clone(), from))
        });
    if let Some(s) = strongest {
        expect.push_str(&format!(
            "      source: {}\n",
            serde_json::to_string(&s.header.source)?
        ));
    }
    let note = match &escalated {
        Some((source, from)) => format!(
            "# Note: {source}'s signal was escalated from {from} by the history of the log; a test has\n\
             # no history, so the case decides as before escalation unless you give it one.\n"
        ),
        None => String::new(),
    };
    Ok(format!(
        "# Recorded by `ahp test --from-log {id}` from {log}: the run of {when}.\n\
         # Its decision is the expectation; edit it if the decision was wrong.\n{note}\
         cases:\n\
         \x20 - name: {name}\n\
         \x20   event: {event}\n\
         \x20   context: {context}\n\
         \x20   expect:\n{expect}",
        log = ahp_config::path_line(log),
        when = run.timestamp.to_rfc3339(),
        name = serde_json::to_string(&format!(
            "{} run {} ({})",
            run.event,
            &run.correlation_id,
            run.outcome.as_str()
        ))?,
        event = run.event,
        context = serde_json::to_string(&run.context)?,
    ))
}

/// The JSON Schema of a test file.
pub(crate) fn schema() -> Value {
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<TestFile>();
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// The starter test file `ahp init` writes (`.ahp/tests/policy.yaml`).
pub(crate) const STARTER_TESTS: &str = include_str!("starter-tests.yaml");

/// The default place of a project's policy tests.
pub(crate) fn default_dir(root: &Path) -> PathBuf {
    root.join(ahp_engine::paths::AHP_DIR).join("tests")
}

/// Entries no case ran, grouped for the report: `event id (origin)`.
pub(crate) fn unexercised(runner: &Runner<'_>) -> Vec<String> {
    let mut by: BTreeMap<String, ()> = BTreeMap::new();
    for (event, id, origin) in runner.entries() {
        if !runner.exercised.contains(&(event, id.clone())) {
            by.insert(format!("{event} {id} ({origin})"), ());
        }
    }
    by.into_keys().collect()
}
