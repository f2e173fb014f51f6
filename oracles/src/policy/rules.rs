//! The `Rules` oracle: policies as declarative conditions, no Rust needed
//! (SPEC §4.1, "rule form").
//!
//! ```yaml
//! - oracle: Rules
//!   config:
//!     rules:
//!       - condition: "checklist.incomplete_count > 0"   # see `expr`
//!         intensity: block          # block (default) | control | prompt | aid
//!         message: "{{ checklist.incomplete_count }} item(s) still open"
//!         resolution_path: ["tick finished items with [x]"]
//!         type: open-checklist      # signal type; default: the rule's id, else "rule"
//!         id: open-checklist        # optional name of the rule
//!       - condition: "environment == production && tool.input.command ~ 'psql'"
//!         intensity: prompt
//!         severity: high            # prompt only: low | medium (default) | high
//!         message: "database access in production"
//!       - condition: "tool.input.command ~ '^rm -rf'"
//!         intensity: control
//!         message: "made rm interactive"
//!         modifications:            # control only, and required there
//!           - { target: tool.input.command, op: set, value: "rm -ri build", description: "interactive rm" }
//! ```
//!
//! Every rule is evaluated; each one whose condition holds yields one signal,
//! in config order. Messages, resolution steps, modification descriptions and
//! string modification values may hold `{{ dotted.path }}` placeholders,
//! filled from the context (strings as they are, other values as compact
//! JSON, a missing path as nothing, each cut at 4096 characters).
//!
//! ```
//! use ahp_oracles::policy::rules::Rules;
//! use ahp_engine::{HookContext, Intensity, OracleConfig};
//! use serde_json::json;
//!
//! let config = json!({"rules": [{
//!     "condition": "checklist.incomplete_count > 0",
//!     "message": "{{ checklist.incomplete_count }} item(s) still open",
//!     "resolution_path": ["tick finished items with [x]"],
//! }]});
//! let rules = Rules::from_config(OracleConfig::new(&config, None)).unwrap();
//! let ctx: HookContext = serde_json::from_value(json!({"checklist": {"incomplete_count": 2}})).unwrap();
//! let signals = rules.signals(&ctx);
//! assert_eq!(signals.len(), 1);
//! assert_eq!(signals[0].intensity(), Intensity::Block);
//! assert_eq!(signals[0].payload.summary(), "2 item(s) still open");
//! assert_eq!(signals[0].header.signal_type, "rule");
//! ```

use crate::template::{Template, truncate};
use ahp_engine::condition::expr::{Expr, check_path};
use ahp_engine::condition::{CmpOp, Matcher};
use ahp_engine::context_shape::{self as shape, Level, PathFinding, check_clause};
use ahp_engine::oracle::Strings;
use ahp_engine::oracle::kind_of;
use ahp_engine::{
    HookContext, Intensity, ModOp, Modification, Oracle, OracleConfig, OracleConfigError,
    OracleError, Severity, Signal, async_trait,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Rules' `config:` (see the [module documentation](self)).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    /// The rules, each a condition and the signal it raises.
    // Required (the schema says so); an `Option` so that absent or null
    // gets a message with an example.
    #[schemars(with = "Vec<RuleSpec>")]
    pub rules: Option<Vec<RuleSpec>>,
}

/// One rule of [`RulesConfig`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// When the rule fires: an expression over the context
    /// (`checklist.incomplete_count > 0`), or `true`.
    #[schemars(length(min = 1))]
    pub condition: String,
    /// The signal's intensity (default block).
    pub intensity: Option<Intensity>,
    /// What is wrong and why (`{{path}}` inserts a context value).
    #[schemars(length(min = 1))]
    pub message: String,
    /// How to fix it: one step or a list of steps.
    pub resolution_path: Option<Strings>,
    /// The signal's type (default: the id, else `rule`).
    #[serde(rename = "type")]
    pub signal_type: Option<String>,
    /// The rule's name.
    pub id: Option<String>,
    /// How serious a prompt is (prompt rules only).
    pub severity: Option<Severity>,
    /// What a control rule changes (control rules only).
    pub modifications: Option<Vec<ModificationSpec>>,
}

/// One change of a control rule.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModificationSpec {
    /// The context path changed (`tool.input.command`).
    #[schemars(length(min = 1))]
    pub target: String,
    /// set (default), merge or remove.
    pub op: Option<ModOp>,
    /// The value set or merged in; a string may use `{{path}}`.
    pub value: Option<Value>,
    /// What the change does, for the agent.
    pub description: Option<String>,
}

const RULE_EXAMPLE: &str =
    "`rules: [{condition: \"checklist.incomplete_count > 0\", message: \"items still open\"}]`";

/// Declarative rules: a list of conditions over the context, each with the
/// signal it raises. Build with [`Rules::from_config`].
///
/// ```
/// use ahp_oracles::policy::rules::Rules;
/// use ahp_engine::{HookContext, Intensity, OracleConfig, Oracle};
/// use serde_json::json;
///
/// let config = json!({"rules": [
///     {"condition": "issue.type == feature && files.changed_count >= 10",
///      "intensity": "prompt", "severity": "high", "message": "large feature change"},
///     {"condition": "true", "intensity": "aid", "message": "remember the changelog"},
/// ]});
/// let rules = Rules::from_config(OracleConfig::new(&config, None)).unwrap();
/// assert_eq!(rules.default_intensity(), Some(Intensity::Prompt));
/// let ctx: HookContext = serde_json::from_value(json!({
///     "issue": {"type": "feature"}, "files": {"changed_count": 12},
/// })).unwrap();
/// let kinds: Vec<Intensity> = rules.signals(&ctx).iter().map(|s| s.intensity()).collect();
/// assert_eq!(kinds, vec![Intensity::Prompt, Intensity::Aid]);
/// ```
#[derive(Debug, Clone)]
pub struct Rules {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    condition: Expr,
    intensity: Intensity,
    message: Template,
    resolution_path: Vec<Template>,
    signal_type: String,
    severity: Option<Severity>,
    modifications: Vec<ModSpec>,
}

#[derive(Debug, Clone)]
struct ModSpec {
    target: String,
    op: ModOp,
    value: Option<ValueSpec>,
    description: Option<Template>,
}

#[derive(Debug, Clone)]
enum ValueSpec {
    Text(Template),
    Json(Value),
}

impl Rules {
    /// Builds the oracle from its `config:` map. Every problem is an
    /// [`OracleConfigError`] naming the key: `rules.0.condition` for a
    /// condition that does not parse (with the column inside it),
    /// `rules.1.intensity` for an unknown intensity, `rules.0.conditon` for
    /// an unknown key (with a "did you mean"), and so on.
    ///
    /// ```
    /// use ahp_oracles::policy::rules::Rules;
    /// use ahp_engine::OracleConfig;
    /// use serde_json::json;
    ///
    /// let bad = json!({"rules": [{"condition": "checklist.incomplete_count >", "message": "x"}]});
    /// let err = Rules::from_config(OracleConfig::new(&bad, None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("rules.0.condition"));
    /// assert_eq!(
    ///     err.message,
    ///     "invalid condition `checklist.incomplete_count >`: column 29: expected a value after `>`, found the end of the condition",
    /// );
    ///
    /// let typo = json!({"rules": [{"conditon": "true", "message": "x"}]});
    /// let err = Rules::from_config(OracleConfig::new(&typo, None)).unwrap_err();
    /// assert_eq!(err.key.as_deref(), Some("rules.0.conditon"));
    /// assert!(err.message.contains("did you mean `condition`?"));
    /// ```
    pub fn from_config(cfg: OracleConfig<'_>) -> Result<Self, OracleConfigError> {
        // An error at `rules` itself is its shape: show one that works.
        let c: RulesConfig = cfg.parse().map_err(|e| match e.key.as_deref() {
            Some("rules") => {
                OracleConfigError::at("rules", format!("{}; e.g. {RULE_EXAMPLE}", e.message))
            }
            _ => e,
        })?;
        let Some(rules) = c.rules else {
            return Err(OracleConfigError::whole(format!(
                "Rules needs a `rules` list, e.g. {RULE_EXAMPLE}"
            )));
        };
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, spec)| compile_rule(spec, &format!("rules.{i}"), cfg.shared_tool_name()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Rules { rules })
    }

    /// The signals for `ctx`, one per rule whose condition holds, in config
    /// order. This is what [`Oracle::evaluate`] returns, without the async
    /// wrapper.
    pub fn signals(&self, ctx: &HookContext) -> Vec<Signal> {
        self.rules
            .iter()
            .filter(|r| r.condition.eval(ctx))
            .map(|r| r.signal(ctx))
            .collect()
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when there are no rules (`rules: []`): the oracle never fires.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

#[async_trait]
impl Oracle for Rules {
    async fn evaluate(&self, ctx: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self.signals(ctx))
    }

    /// The strongest intensity among the rules (`None` without rules).
    fn default_intensity(&self) -> Option<Intensity> {
        self.rules.iter().map(|r| r.intensity).max()
    }
}

impl Rule {
    fn signal(&self, ctx: &HookContext) -> Signal {
        let message = self.message.render(ctx);
        let steps: Vec<String> = self.resolution_path.iter().map(|t| t.render(ctx)).collect();
        let signal = match self.intensity {
            Intensity::Block => Signal::block(message).with_resolution_path(steps),
            Intensity::Prompt => Signal::prompt(message)
                .with_severity(self.severity.unwrap_or_default())
                .with_resolution_path(steps),
            Intensity::Aid => Signal::aid(message).with_resolution_path(steps),
            Intensity::Control => {
                let mods = self.modifications.iter().map(|m| m.build(ctx)).collect();
                Signal::control(mods).with_message(message)
            }
        };
        signal.with_type(self.signal_type.clone())
    }
}

impl ModSpec {
    fn build(&self, ctx: &HookContext) -> Modification {
        Modification {
            target: self.target.clone(),
            op: self.op,
            value: self.value.as_ref().map(|v| match v {
                ValueSpec::Text(t) => Value::String(t.render(ctx)),
                ValueSpec::Json(j) => j.clone(),
            }),
            description: self.description.as_ref().map(|t| t.render(ctx)),
        }
    }
}

/// Parses a `{{ path }}` template at config `key`; a placeholder no event
/// provides is an error (it would always render empty).
pub(crate) fn template(src: &str, key: &str) -> Result<Template, OracleConfigError> {
    let t = Template::parse(src).map_err(|m| OracleConfigError::at(key, m))?;
    for path in t.paths() {
        if let Some(f) = certain(shape::check_path(path)) {
            return Err(OracleConfigError::at(
                key,
                format!("placeholder `{{{{ {path} }}}}`: {}", described(f)),
            ));
        }
    }
    Ok(t)
}

/// A finding that is certainly a mistake. Warnings (a field an agent or the
/// caller might send) are not an oracle's to raise: it has no channel for
/// them, and the path may well be meant.
fn certain(f: Option<PathFinding>) -> Option<PathFinding> {
    f.filter(|f| f.level == Level::Error)
}

fn described(f: PathFinding) -> String {
    match f.help {
        Some(h) => format!("{}; {h}", f.message),
        None => f.message,
    }
}

/// A path of the condition that no event provides, or a comparison that
/// can never hold, would leave the rule silently off (SPEC §3).
fn check_condition(
    e: &Expr,
    key: &str,
    shared: Option<shape::SharedToolName>,
) -> Result<(), OracleConfigError> {
    let tool_names = e
        .tests()
        .into_iter()
        .filter(|(path, ..)| *path == shape::TOOL_NAME_PATH)
        .filter_map(|(_, column, m, differs)| {
            let shared = shared?;
            // `!=` is `Differs(Equals(v))`: judged as the `when:` form's
            // `"!= v"`.
            let m = match (differs, m) {
                (false, m) => m.clone(),
                (true, Matcher::Equals(v)) => Matcher::Compare(CmpOp::Ne, v.clone()),
                (true, _) => return None,
            };
            Some((column, shape::check_tool_name(&m, shared)))
        });
    let paths = e.paths().into_iter().map(|(path, column, matcher)| {
        let finding = match matcher {
            Some(m) => check_clause(path, m),
            None => shape::check_path(path),
        };
        (column, finding)
    });
    for (column, finding) in tool_names.chain(paths) {
        if let Some(f) = certain(finding) {
            return Err(OracleConfigError::at(
                key,
                format!(
                    "condition `{}`, column {column}: {}",
                    truncate(e.source(), 200),
                    described(f)
                ),
            ));
        }
    }
    Ok(())
}

fn compile_rule(
    spec: RuleSpec,
    prefix: &str,
    shared: Option<shape::SharedToolName>,
) -> Result<Rule, OracleConfigError> {
    let join = |key: &str| format!("{prefix}.{key}");
    let src = spec.condition.as_str();
    if src.trim().is_empty() {
        return Err(OracleConfigError::at(
            join("condition"),
            "`condition` must not be empty, e.g. `condition: \"checklist.incomplete_count > 0\"` (or \"true\")",
        ));
    }
    let condition = Expr::parse(src).map_err(|e| {
        OracleConfigError::at(
            join("condition"),
            format!("invalid condition `{}`: {e}", truncate(src, 200)),
        )
    })?;
    check_condition(&condition, &join("condition"), shared)?;

    let intensity = spec.intensity.unwrap_or(Intensity::Block);

    if spec.message.trim().is_empty() {
        return Err(OracleConfigError::at(
            join("message"),
            "`message` must not be empty, e.g. `message: \"what is wrong and why\"`",
        ));
    }
    let message = template(&spec.message, &join("message"))?;

    let has_resolution = spec.resolution_path.is_some();
    let resolution_path = match spec.resolution_path {
        None => Vec::new(),
        Some(Strings(steps)) if steps.len() == 1 => {
            vec![template(&steps[0], &join("resolution_path"))?]
        }
        Some(Strings(steps)) => steps
            .iter()
            .enumerate()
            .map(|(j, step)| template(step, &format!("{prefix}.resolution_path.{j}")))
            .collect::<Result<_, _>>()?,
    };

    let id = spec.id.as_deref();
    let signal_type = match spec.signal_type {
        Some(t) if t.trim().is_empty() => {
            return Err(OracleConfigError::at(
                join("type"),
                "`type` must not be empty; leave it out for the default",
            ));
        }
        Some(t) => t,
        None => id
            .filter(|i| !i.trim().is_empty())
            .unwrap_or("rule")
            .to_string(),
    };

    let severity = match spec.severity {
        Some(_) if intensity != Intensity::Prompt => {
            return Err(OracleConfigError::at(
                join("severity"),
                format!(
                    "`severity` applies only to `intensity: prompt` rules; this rule is {intensity}"
                ),
            ));
        }
        other => other,
    };

    let modifications = spec
        .modifications
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(j, m)| compile_modification(m, &format!("{prefix}.modifications.{j}")))
        .collect::<Result<Vec<_>, _>>()?;
    match intensity {
        Intensity::Control if modifications.is_empty() => {
            return Err(OracleConfigError::at(
                join("modifications"),
                "an `intensity: control` rule needs `modifications`, e.g. `[{target: tool.input.command, op: set, value: \"…\", description: \"…\"}]`",
            ));
        }
        Intensity::Control if has_resolution => {
            return Err(OracleConfigError::at(
                join("resolution_path"),
                "a control rule has no resolution path: describe each change in its modification's `description`",
            ));
        }
        other if other != Intensity::Control && !modifications.is_empty() => {
            return Err(OracleConfigError::at(
                join("modifications"),
                format!(
                    "`modifications` apply only to `intensity: control` rules; this rule is {other}"
                ),
            ));
        }
        _ => {}
    }

    Ok(Rule {
        condition,
        intensity,
        message,
        resolution_path,
        signal_type,
        severity,
        modifications,
    })
}

fn compile_modification(m: ModificationSpec, prefix: &str) -> Result<ModSpec, OracleConfigError> {
    let join = |key: &str| format!("{prefix}.{key}");
    let target = m.target.trim();
    if target.is_empty() {
        return Err(OracleConfigError::at(
            join("target"),
            "`target` must not be empty, e.g. `target: tool.input.command`",
        ));
    }
    check_path(target).map_err(|e| OracleConfigError::at(join("target"), e))?;
    // A target outside the context's shape is dropped when the context is
    // rebuilt (`tool.inptu.command`): the control would change nothing.
    if let Some(f) = certain(shape::check_path(target)) {
        return Err(OracleConfigError::at(join("target"), described(f)));
    }
    let op = m.op.unwrap_or(ModOp::Set);
    let value = match (op, m.value.as_ref()) {
        (ModOp::Remove, None) => None,
        (ModOp::Remove, Some(_)) => {
            return Err(OracleConfigError::at(
                join("value"),
                "`op: remove` takes no `value`",
            ));
        }
        (ModOp::Set | ModOp::Merge, None) => {
            return Err(OracleConfigError::at(
                prefix,
                format!(
                    "missing `value`: `op: {}` needs the value to apply",
                    if op == ModOp::Set { "set" } else { "merge" }
                ),
            ));
        }
        (ModOp::Merge, Some(v)) if !v.is_object() => {
            return Err(OracleConfigError::at(
                join("value"),
                format!("`op: merge` needs a map to merge in, found {}", kind_of(v)),
            ));
        }
        (_, Some(Value::String(s))) => Some(ValueSpec::Text(template(s, &join("value"))?)),
        (_, Some(v)) => Some(ValueSpec::Json(v.clone())),
    };
    let description = m
        .description
        .map(|d| template(&d, &join("description")))
        .transpose()?;
    Ok(ModSpec {
        target: target.to_string(),
        op,
        value,
        description,
    })
}
