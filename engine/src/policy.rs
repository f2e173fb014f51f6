//! A compiled policy: per event, the enabled entries with their oracles
//! built, and the order they run in (priority waves and `after` edges).
//!
//! Ordering is computed once, when the policy is built; a cycle of `after`
//! edges is an error that names every member of the cycle.

use crate::condition::Condition;
use crate::{Event, Intensity, Oracle};
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// What happens when an oracle fails (errors, panics or times out).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail open: no signal, a warning record.
    #[default]
    Allow,
    /// Fail closed: a block signal naming the failure.
    Block,
}

/// Whether an entry's findings count (`enforce`, the default) or are only
/// recorded as what it would have done (`shadow`), to roll a rule out.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Its signals are part of the verdict.
    #[default]
    Enforce,
    /// Evaluated and recorded (`shadow: true` on its signals); never part
    /// of the verdict or of an agent's answer.
    Shadow,
}

/// What a block does to later waves.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnBlock {
    /// Later waves are skipped (the default: answer fast).
    #[default]
    Stop,
    /// Later waves still run, for full feedback.
    Collect,
}

/// Settings the engine needs at dispatch time.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The environment when the context does not say.
    pub environment: Option<String>,
    /// Stop or collect after a block.
    pub on_block: OnBlock,
    /// Time limit for an entry without its own `timeout`.
    pub default_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            environment: None,
            on_block: OnBlock::Stop,
            default_timeout: Duration::from_secs(30),
        }
    }
}

/// One enabled entry of one event, ready to run.
#[derive(Clone)]
pub struct Entry {
    /// Unique per event; defaults to the oracle name. Becomes `source`.
    pub id: String,
    /// The oracle's registered name.
    pub oracle_name: String,
    /// The built oracle.
    pub oracle: Arc<dyn Oracle>,
    /// Runs only when this holds.
    pub when: Condition,
    /// Lower runs first; equal priorities form a wave.
    pub priority: i64,
    /// Ids of entries this one must follow.
    pub after: Vec<String>,
    /// Fire-and-forget: cannot block, only logged.
    pub is_async: bool,
    /// Overrides the oracle's intensity.
    pub intensity: Option<Intensity>,
    /// Intensity by `environment` of the context (e.g. production → block);
    /// takes precedence over `intensity` when the environment is listed.
    pub intensity_by_environment: BTreeMap<String, Intensity>,
    /// Fail open or closed.
    pub on_error: OnError,
    /// Time limit (the settings' default when `None`).
    pub timeout: Option<Duration>,
    /// Where the entry was defined (layer and file:line), for explanations.
    pub origin: String,
    /// `mode: shadow`: evaluated and recorded as what it would have done
    /// ([`crate::SignalHeader::shadow`]), never part of the verdict.
    pub shadow: bool,
    /// A guard whose judgement must hold for what finally runs: when a
    /// later control rewrites the tool input, it judges the final input
    /// again (ahp's builtin and the managed entries).
    pub recheck: bool,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("id", &self.id)
            .field("oracle", &self.oracle_name)
            .field("priority", &self.priority)
            .field("after", &self.after)
            .field("async", &self.is_async)
            .field("origin", &self.origin)
            .finish()
    }
}

impl Entry {
    /// An entry for `oracle` with defaults: id = oracle name, priority 0,
    /// always, fail open.
    pub fn new(oracle_name: impl Into<String>, oracle: Arc<dyn Oracle>) -> Entry {
        let oracle_name = oracle_name.into();
        Entry {
            id: oracle_name.clone(),
            oracle_name,
            oracle,
            when: Condition::default(),
            priority: 0,
            after: Vec::new(),
            is_async: false,
            intensity: None,
            intensity_by_environment: BTreeMap::new(),
            on_error: OnError::Allow,
            timeout: None,
            origin: String::from("(code)"),
            shadow: false,
            recheck: false,
        }
    }
}

/// The entries of one event and their run order.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// In config order.
    pub entries: Vec<Entry>,
    /// Indices into `entries`, wave by wave; within a wave, config order.
    pub waves: Vec<Vec<usize>>,
}

impl Plan {
    /// The entries in run order, each with its wave number.
    pub fn ordered(&self) -> impl Iterator<Item = (usize, &Entry)> {
        self.waves
            .iter()
            .enumerate()
            .flat_map(move |(w, idxs)| idxs.iter().map(move |i| (w, &self.entries[*i])))
    }
}

/// A policy that cannot be ordered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// `after` edges form a cycle.
    #[error("`after` dependencies of {event} form a cycle: {}; remove one of these `after` entries", members.join(" → "))]
    Cycle {
        /// The event.
        event: Event,
        /// The ids in the cycle, in config order, the first repeated at the end.
        members: Vec<String>,
    },
    /// `after` names an id that is not an entry of this event.
    #[error("entry `{id}` of {event} runs `after: {missing}`, but {event} has no entry with that id{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownAfter {
        /// The event.
        event: Event,
        /// The entry with the bad `after`.
        id: String,
        /// The id it names.
        missing: String,
        /// The closest existing id.
        suggestion: Option<String>,
    },
    /// Two entries of one event share an id.
    #[error("two entries of {event} have the id `{id}`; give one of them another `id:`")]
    DuplicateId {
        /// The event.
        event: Event,
        /// The shared id.
        id: String,
    },
}

/// Orders `entries` into waves: Kahn's algorithm over `after` edges where
/// each step takes every ready entry of the lowest ready priority as one
/// wave (config order inside it).
///
/// An `after` edge wins over priority: an entry never runs before what it
/// follows, even if its priority is lower.
pub fn order(event: Event, entries: &[Entry]) -> Result<Vec<Vec<usize>>, PolicyError> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if index.insert(e.id.as_str(), i).is_some() {
            return Err(PolicyError::DuplicateId {
                event,
                id: e.id.clone(),
            });
        }
    }
    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(entries.len(), 0);
    let nodes: Vec<NodeIndex> = (0..entries.len()).map(|i| graph.add_node(i)).collect();
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    for (i, e) in entries.iter().enumerate() {
        for a in &e.after {
            let Some(&j) = index.get(a.as_str()) else {
                return Err(PolicyError::UnknownAfter {
                    event,
                    id: e.id.clone(),
                    missing: a.clone(),
                    suggestion: crate::suggest::did_you_mean(
                        a,
                        index.keys().copied().filter(|k| *k != e.id),
                    )
                    .map(str::to_string),
                });
            };
            graph.add_edge(nodes[j], nodes[i], ());
            deps[i].push(j);
        }
    }
    for scc in tarjan_scc(&graph) {
        let self_loop = scc.len() == 1 && graph.contains_edge(scc[0], scc[0]);
        if scc.len() > 1 || self_loop {
            let mut idxs: Vec<usize> = scc.iter().map(|n| graph[*n]).collect();
            idxs.sort_unstable();
            let mut members: Vec<String> = idxs.iter().map(|i| entries[*i].id.clone()).collect();
            members.push(members[0].clone());
            return Err(PolicyError::Cycle { event, members });
        }
    }
    let mut indegree: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    for (i, ds) in deps.iter().enumerate() {
        for d in ds {
            dependents[*d].push(i);
        }
    }
    // Wave by wave: of the entries whose dependencies have all run, the
    // ones with the lowest priority run together.
    let mut ready: Vec<usize> = (0..entries.len()).filter(|i| indegree[*i] == 0).collect();
    let mut waves: Vec<Vec<usize>> = Vec::new();
    while let Some(p) = ready.iter().map(|i| entries[*i].priority).min() {
        let (mut wave, rest): (Vec<usize>, Vec<usize>) =
            ready.into_iter().partition(|i| entries[*i].priority == p);
        ready = rest;
        wave.sort_unstable();
        for &i in &wave {
            for &n in &dependents[i] {
                indegree[n] -= 1;
                if indegree[n] == 0 {
                    ready.push(n);
                }
            }
        }
        waves.push(wave);
    }
    Ok(waves)
}

/// Everything the engine runs: settings and, per event, a [`Plan`].
///
/// ```
/// use ahp_engine::{Entry, Event, Policy, Settings};
/// # use ahp_engine::{async_trait, HookContext, Oracle, OracleError, Signal};
/// # struct Quiet;
/// # #[async_trait] impl Oracle for Quiet {
/// #   async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> { Ok(vec![]) } }
/// use std::sync::Arc;
/// let mut a = Entry::new("Quiet", Arc::new(Quiet));
/// a.id = "a".into();
/// let mut b = Entry::new("Quiet", Arc::new(Quiet));
/// b.id = "b".into();
/// b.after = vec!["a".into()];
/// let policy = Policy::new(Settings::default(), [(Event::PreToolUse, vec![a, b])]).unwrap();
/// assert_eq!(policy.plan(Event::PreToolUse).unwrap().waves, vec![vec![0], vec![1]]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Dispatch settings.
    pub settings: Settings,
    plans: BTreeMap<Event, Plan>,
    digest: Option<String>,
    escalation: Vec<crate::EscalationRule>,
}

impl Policy {
    /// Orders each event's entries; fails on a cycle, an unknown `after`
    /// or a duplicate id.
    pub fn new(
        settings: Settings,
        events: impl IntoIterator<Item = (Event, Vec<Entry>)>,
    ) -> Result<Policy, PolicyError> {
        let mut plans = BTreeMap::new();
        for (event, entries) in events {
            let waves = order(event, &entries)?;
            plans.insert(event, Plan { entries, waves });
        }
        Ok(Policy {
            settings,
            plans,
            digest: None,
            escalation: Vec::new(),
        })
    }

    /// Tags the policy with a digest of its sources (recorded with every
    /// run, so a decision can be traced to the exact configuration).
    pub fn with_digest(mut self, digest: impl Into<String>) -> Policy {
        self.digest = Some(digest.into());
        self
    }

    /// Adds escalation rules (hooks.yaml `escalation:`).
    pub fn with_escalation(mut self, rules: Vec<crate::EscalationRule>) -> Policy {
        self.escalation = rules;
        self
    }

    /// The escalation rules, in config order.
    pub fn escalation(&self) -> &[crate::EscalationRule] {
        &self.escalation
    }

    /// The digest of the policy's sources, if known.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// The plan of `event`, if it has entries.
    pub fn plan(&self, event: Event) -> Option<&Plan> {
        self.plans.get(&event)
    }

    /// Every event with entries.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        self.plans.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HookContext, OracleError, Signal};

    struct Nop;
    #[async_trait::async_trait]
    impl Oracle for Nop {
        async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
            Ok(vec![])
        }
    }

    fn e(id: &str, priority: i64, after: &[&str]) -> Entry {
        let mut e = Entry::new("Nop", Arc::new(Nop));
        e.id = id.into();
        e.priority = priority;
        e.after = after.iter().map(|s| s.to_string()).collect();
        e
    }

    fn ids(entries: &[Entry], waves: &[Vec<usize>]) -> Vec<Vec<String>> {
        waves
            .iter()
            .map(|w| w.iter().map(|i| entries[*i].id.clone()).collect())
            .collect()
    }

    #[test]
    fn priority_waves_with_ties_in_config_order() {
        let es = vec![
            e("c", 2, &[]),
            e("a", 1, &[]),
            e("b", 1, &[]),
            e("d", 0, &[]),
        ];
        let w = order(Event::PreToolUse, &es).unwrap();
        assert_eq!(ids(&es, &w), vec![vec!["d"], vec!["a", "b"], vec!["c"]]);
    }

    #[test]
    fn after_splits_a_wave_and_beats_priority() {
        let es = vec![e("a", 0, &["b"]), e("b", 0, &[]), e("c", 0, &[])];
        let w = order(Event::PreToolUse, &es).unwrap();
        assert_eq!(ids(&es, &w), vec![vec!["b", "c"], vec!["a"]]);
        let es = vec![e("low", 0, &["high"]), e("high", 5, &[])];
        let w = order(Event::PreToolUse, &es).unwrap();
        assert_eq!(ids(&es, &w), vec![vec!["high"], vec!["low"]]);
    }

    #[test]
    fn cycles_name_every_member() {
        let es = vec![
            e("a", 0, &["c"]),
            e("b", 0, &["a"]),
            e("c", 0, &["b"]),
            e("d", 0, &[]),
        ];
        let err = order(Event::PreIssueSubmit, &es).unwrap_err();
        assert_eq!(
            err,
            PolicyError::Cycle {
                event: Event::PreIssueSubmit,
                members: vec!["a".into(), "b".into(), "c".into(), "a".into()],
            }
        );
        assert!(err.to_string().contains("a → b → c → a"), "{err}");
        let selfish = vec![e("x", 0, &["x"])];
        assert!(matches!(
            order(Event::PreToolUse, &selfish),
            Err(PolicyError::Cycle { .. })
        ));
    }

    #[test]
    fn unknown_after_and_duplicates_are_errors() {
        let es = vec![e("alpha", 0, &[]), e("beta", 0, &["alpah"])];
        let err = order(Event::PreToolUse, &es).unwrap_err();
        assert!(err.to_string().contains("did you mean `alpha`"), "{err}");
        // An entry is never suggested as its own predecessor.
        let es = vec![e("alpha", 0, &["alpah"])];
        let err = order(Event::PreToolUse, &es).unwrap_err();
        assert!(!err.to_string().contains("did you mean"), "{err}");
        let es = vec![e("a", 0, &[]), e("a", 1, &[])];
        assert!(matches!(
            order(Event::PreToolUse, &es),
            Err(PolicyError::DuplicateId { .. })
        ));
    }
}
