//! Property tests of layer merging (docs/decisions.md, "Merging across
//! layers"; README, "Configuration reference"): layers merge per
//! (event, id) with ids compared in kebab-case; inside an entry (and in
//! `settings:`) maps merge key by key and scalars and lists replace, each
//! value keeping the layer that set it; an entry keeps the position where
//! it was first defined; and `enabled: false` in a later layer wins.
//!
//! Merging is a left fold over the layers. It is associative as long as a
//! key that holds a map in one layer holds a map in every layer (a scalar
//! between two maps cuts the first map off, whichever way the layers are
//! grouped; hooks.yaml has no such key: `config:`, `when:` and `settings:`
//! are maps everywhere), which is what the typed generator produces.
//!
//! Raise the case counts locally with `PROPTEST_CASES=5000`.

use ahp_config::yaml::{Node, NodeValue};
use ahp_config::{Layer, LoadedConfig, SourceFile};
use ahp_engine::registry::to_kebab;
use ahp_engine::{
    Event, HookContext, Oracle, OracleConfig, OracleError, PolicySource, Registry, Signal,
    async_trait, deep_merge,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Events and the spellings a layer may use for them.
const EVENTS: &[(&str, &[&str])] = &[
    (
        "pre-tool-use",
        &["pre-tool-use", "PreToolUse", "pre_tool_use"],
    ),
    ("pre-issue-submit", &["pre-issue-submit", "PreIssueSubmit"]),
];

/// Entry ids and their spellings (equal in kebab-case).
const IDS: &[&[&str]] = &[
    &["alpha", "Alpha"],
    &["beta-gamma", "betaGamma", "beta_gamma"],
    &["delta"],
];

const LAYERS: [Layer; 3] = [Layer::User, Layer::Project, Layer::Local];

/// A value and the layer that set it; maps keep the layer that started
/// them. The model of `yaml::merge`.
#[derive(Debug, Clone, PartialEq)]
enum M {
    Leaf(Value, Layer),
    Map(Vec<(String, M)>, Layer),
}

impl M {
    fn of(v: &Value, layer: Layer) -> M {
        match v {
            Value::Object(m) => M::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), M::of(v, layer)))
                    .collect(),
                layer,
            ),
            other => M::Leaf(other.clone(), layer),
        }
    }

    fn of_node(n: &Node) -> M {
        match &n.value {
            NodeValue::Map(m) => M::Map(
                m.iter()
                    .map(|(k, v)| (k.name.clone(), M::of_node(v)))
                    .collect(),
                n.origin.layer(),
            ),
            _ => M::Leaf(n.to_json(), n.origin.layer()),
        }
    }

    /// Maps merge key by key (new keys at the end), anything else replaces.
    fn merge(&mut self, overlay: M) {
        match (self, overlay) {
            (M::Map(base, _), M::Map(over, _)) => {
                for (k, v) in over {
                    match base.iter_mut().find(|(bk, _)| *bk == k) {
                        Some((_, slot)) => slot.merge(v),
                        None => base.push((k, v)),
                    }
                }
            }
            (slot, v) => *slot = v,
        }
    }
}

// ---------------------------------------------------------------------------
// Generators.

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..100).prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        // Strings a YAML reader could mistake for something else.
        prop::sample::select(vec![
            "x", "", "no", "on", "~", "null", "1.0", "a: b", "#c", "yes"
        ])
        .prop_map(Value::from),
    ]
}

fn int_list() -> impl Strategy<Value = Value> {
    prop::collection::vec((0i64..9).prop_map(Value::from), 0..4).prop_map(Value::Array)
}

/// `config:` with fixed kinds: `n` a number, `s` a string, `l` a list,
/// `m` a map of the same shape.
fn typed_config(depth: u32) -> BoxedStrategy<Value> {
    let nested = if depth == 0 {
        Just(None).boxed()
    } else {
        prop::option::of(typed_config(depth - 1)).boxed()
    };
    (
        prop::option::of(-5i64..100),
        prop::option::of(prop::sample::select(vec!["x", "no", "~", ""])),
        prop::option::of(int_list()),
        nested,
    )
        .prop_map(|(n, s, l, m)| {
            let mut out = Map::new();
            if let Some(n) = n {
                out.insert("n".into(), json!(n));
            }
            if let Some(s) = s {
                out.insert("s".into(), json!(s));
            }
            if let Some(l) = l {
                out.insert("l".into(), l);
            }
            if let Some(m) = m {
                out.insert("m".into(), m);
            }
            Value::Object(out)
        })
        .boxed()
}

/// Any JSON under the same keys: a key may be a map in one layer and a
/// scalar or list in the next.
fn untyped_config() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![Just(Value::Null), scalar(), int_list()];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop::collection::btree_map(prop::sample::select(vec!["n", "s", "l", "m"]), inner, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
    })
    .prop_map(|v| match v {
        Value::Object(_) => v,
        other => json!({ "m": other }),
    })
}

/// The fields of one entry in one layer (without `id` and `oracle`).
fn fields(typed: bool) -> BoxedStrategy<Map<String, Value>> {
    let config = if typed {
        typed_config(2)
    } else {
        untyped_config().boxed()
    };
    (
        prop::option::of(-3i64..4),
        prop::option::weighted(0.4, any::<bool>()),
        prop::option::of(1i64..5000),
        prop::option::of(prop::sample::select(vec!["allow", "block"])),
        prop::option::of(prop::collection::btree_map(
            prop::sample::select(vec!["tool.name", "environment"]),
            prop_oneof![
                prop::sample::select(vec!["shell", "prod"]).prop_map(Value::from),
                Just(json!(["shell", "edit"])),
            ],
            0..3,
        )),
        prop::option::of(config),
    )
        .prop_map(|(priority, enabled, timeout, on_error, when, config)| {
            let mut m = Map::new();
            if let Some(p) = priority {
                m.insert("priority".into(), json!(p));
            }
            if let Some(e) = enabled {
                m.insert("enabled".into(), json!(e));
            }
            if let Some(t) = timeout {
                m.insert("timeout".into(), json!(t));
            }
            if let Some(o) = on_error {
                m.insert("on_error".into(), json!(o));
            }
            if let Some(w) = when {
                m.insert(
                    "when".into(),
                    Value::Object(w.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
                );
            }
            if let Some(c) = config {
                m.insert("config".into(), c);
            }
            m
        })
        .boxed()
}

fn settings(typed: bool) -> BoxedStrategy<Value> {
    if typed {
        // Each key has one kind, as `ahp validate` wants it.
        (
            prop::option::of(prop::sample::select(vec!["development", "production"])),
            prop::option::of(1i64..5000),
            prop::option::of(prop::collection::vec(
                prop::sample::select(vec!["ssn", "pin"]),
                0..3,
            )),
            prop::option::of(prop::sample::select(vec!["stop", "collect"])),
            prop::option::of(prop::sample::select(vec!["main", "trunk"])),
        )
            .prop_map(|(env, timeout, mask, on_block, trunk)| {
                let mut m = Map::new();
                if let Some(v) = env {
                    m.insert("environment".into(), json!(v));
                }
                if let Some(v) = timeout {
                    m.insert("timeout".into(), json!(v));
                }
                if let Some(v) = mask {
                    m.insert("log_mask".into(), json!(v));
                }
                if let Some(v) = on_block {
                    m.insert("on_block".into(), json!(v));
                }
                if let Some(v) = trunk {
                    m.insert("trunk".into(), json!(v));
                }
                Value::Object(m)
            })
            .boxed()
    } else {
        prop::collection::btree_map(
            prop::sample::select(vec!["environment", "timeout", "log_mask", "trunk"]),
            prop_oneof![untyped_config(), scalar()],
            0..4,
        )
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
        .boxed()
    }
}

/// One entry of one layer before the layers are put together.
#[derive(Debug, Clone)]
struct Gen {
    event: usize,
    id: usize,
    spelling: usize,
    other_oracle: Option<bool>,
    fields: Map<String, Value>,
}

#[derive(Debug, Clone)]
struct GenLayer {
    settings: Option<Value>,
    event_spelling: [usize; 2],
    entries: Vec<Gen>,
}

fn gen_layer(typed: bool) -> impl Strategy<Value = GenLayer> {
    let per_event = move |event: usize| {
        (
            Just(vec![0usize, 1, 2]).prop_shuffle(),
            0usize..=3,
            prop::collection::vec(
                (
                    0usize..3,
                    prop::option::weighted(0.3, any::<bool>()),
                    fields(typed),
                ),
                3,
            ),
        )
            .prop_map(move |(ids, count, rest)| {
                ids.into_iter()
                    .take(count)
                    .zip(rest)
                    .map(|(id, (spelling, other_oracle, fields))| Gen {
                        event,
                        id,
                        spelling: spelling % IDS[id].len(),
                        other_oracle,
                        fields,
                    })
                    .collect::<Vec<_>>()
            })
    };
    (
        prop::option::weighted(0.5, settings(typed)),
        0usize..3,
        0usize..2,
        per_event(0),
        per_event(1),
    )
        .prop_map(|(settings, s0, s1, mut a, b)| {
            a.extend(b);
            GenLayer {
                settings,
                event_spelling: [s0 % EVENTS[0].1.len(), s1 % EVENTS[1].1.len()],
                entries: a,
            }
        })
}

/// Three layer documents (user, project, local) as JSON, which is YAML.
/// An entry's first layer names its oracle; later layers may or may not,
/// in either spelling.
fn layers(typed: bool) -> impl Strategy<Value = Vec<Value>> {
    (gen_layer(typed), gen_layer(typed), gen_layer(typed)).prop_map(|(u, p, l)| {
        let mut defined = std::collections::HashSet::new();
        [u, p, l]
            .into_iter()
            .map(|g| {
                let mut hooks = Map::new();
                for e in &g.entries {
                    let mut entry = e.fields.clone();
                    entry.insert("id".into(), json!(IDS[e.id][e.spelling]));
                    let first = defined.insert((e.event, e.id));
                    match (first, e.other_oracle) {
                        (true, _) | (false, Some(false)) => {
                            entry.insert("oracle".into(), json!("Nop"));
                        }
                        // Another spelling of the same oracle: naming
                        // another one is an error (a later layer cannot
                        // change what an entry runs).
                        (false, Some(true)) => {
                            entry.insert("oracle".into(), json!("nop"));
                        }
                        (false, None) => {}
                    }
                    let name = EVENTS[e.event].1[g.event_spelling[e.event]];
                    hooks
                        .entry(name.to_string())
                        .or_insert_with(|| json!([]))
                        .as_array_mut()
                        .unwrap()
                        .push(Value::Object(entry));
                }
                let mut doc = Map::new();
                if let Some(s) = g.settings {
                    doc.insert("settings".into(), s);
                }
                doc.insert("hooks".into(), Value::Object(hooks));
                Value::Object(doc)
            })
            .collect()
    })
}

// ---------------------------------------------------------------------------
// Loading and the model.

fn event_index(name: &str) -> usize {
    let e = Event::parse(name).unwrap();
    EVENTS.iter().position(|(c, _)| *c == e.as_str()).unwrap()
}

fn id_index(id: &str) -> usize {
    IDS.iter().position(|s| s[0] == to_kebab(id)).unwrap()
}

fn load(docs: &[(Layer, &Value)]) -> LoadedConfig {
    let files = docs
        .iter()
        .map(|(layer, doc)| {
            Arc::new(SourceFile {
                layer: *layer,
                path: format!("{layer}.yaml").into(),
                text: serde_json::to_string_pretty(doc).unwrap(),
            })
        })
        .collect();
    match LoadedConfig::from_files(".".into(), files) {
        Ok(cfg) => cfg,
        Err(e) => panic!("{e}\n{docs:#?}"),
    }
}

/// What a loaded config says: settings, and per entry (event, id as first
/// written, merged value with provenance), in config order.
type Merged = (Option<M>, Vec<(usize, String, M)>);

fn merged(cfg: &LoadedConfig) -> Merged {
    (
        cfg.settings.as_ref().map(M::of_node),
        cfg.entries
            .iter()
            .map(|e| {
                (
                    event_index(e.event.as_str()),
                    e.id.clone(),
                    M::of_node(&e.node),
                )
            })
            .collect(),
    )
}

/// The documented merge, as a left fold over the layer documents: the
/// project's layer (the repository's) does not change what the user's
/// layer sets (see [`untouched`]).
fn model(docs: &[(Layer, &Value)]) -> Merged {
    let mut settings: Option<M> = None;
    let mut entries: Vec<(usize, String, M)> = Vec::new();
    let user = docs
        .iter()
        .find(|(l, _)| *l == Layer::User)
        .map(|(_, d)| *d);
    for (layer, doc) in docs {
        let kept;
        let doc = match user {
            Some(u) if *layer == Layer::Project => {
                kept = untouched(u, doc);
                &kept
            }
            _ => *doc,
        };
        if let Some(s) = doc.get("settings") {
            let s = M::of(s, *layer);
            match &mut settings {
                Some(base) => base.merge(s),
                None => settings = Some(s),
            }
        }
        for (name, list) in doc["hooks"].as_object().unwrap() {
            let event = event_index(name);
            for entry in list.as_array().unwrap() {
                let id = entry["id"].as_str().unwrap();
                let node = M::of(entry, *layer);
                match entries
                    .iter_mut()
                    .find(|(e, i, _)| *e == event && to_kebab(i) == to_kebab(id))
                {
                    Some((_, _, base)) => base.merge(node),
                    None => entries.push((event, id.to_string(), node)),
                }
            }
        }
    }
    (settings, entries)
}

/// A repository's document `p` with what it may not change of the user's
/// `u` taken out: of an entry `u` defines, every key but its id and an
/// `on_error: block` (an entry left with its id alone goes); an
/// `environment` or `trunk` other than the user's, a `timeout` below it,
/// a value of another kind than the user's.
fn untouched(u: &Value, p: &Value) -> Value {
    let mut p = p.clone();
    let user = |key: &str| u.get("settings").and_then(|s| s.get(key)).cloned();
    let kind = |v: &Value| match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    };
    if let Some(s) = p.get_mut("settings").and_then(Value::as_object_mut) {
        // A value of another kind than the user's is broken: as good as
        // undoing the user's.
        for key in ["environment", "trunk", "timeout"] {
            if let (Some(mine), Some(theirs)) = (user(key), s.get(key))
                && kind(&mine) != kind(theirs)
            {
                s.remove(key);
            }
        }
        for key in ["environment", "trunk"] {
            if let (Some(mine), Some(theirs)) = (user(key), s.get(key))
                && mine.is_string()
                && theirs.is_string()
                && &mine != theirs
            {
                s.remove(key);
            }
        }
        if let (Some(mine), Some(theirs)) = (
            user("timeout").and_then(|v| v.as_i64()),
            s.get("timeout").and_then(Value::as_i64),
        ) && theirs < mine
        {
            s.remove("timeout");
        }
    }
    let defined = |event: usize, id: &str| {
        u["hooks"].as_object().unwrap().iter().any(|(n, list)| {
            event_index(n) == event
                && list
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| to_kebab(x["id"].as_str().unwrap()) == to_kebab(id))
        })
    };
    for (name, list) in p["hooks"].as_object_mut().unwrap() {
        let event = event_index(name);
        list.as_array_mut().unwrap().retain_mut(|x| {
            if !defined(event, x["id"].as_str().unwrap()) {
                return true;
            }
            let m = x.as_object_mut().unwrap();
            m.retain(|k, v| k == "id" || (k == "on_error" && v == "block"));
            m.len() > 1
        });
    }
    p
}

/// Two layer documents as one (the model merge, written as one file).
fn merge_docs(a: &Value, b: &Value) -> Value {
    let mut settings = a.get("settings").cloned();
    if let Some(s) = b.get("settings") {
        match &mut settings {
            Some(base) => deep_merge(base, s.clone()),
            None => settings = Some(s.clone()),
        }
    }
    let mut entries: Vec<(usize, usize, Value)> = Vec::new();
    for doc in [a, b] {
        for (name, list) in doc["hooks"].as_object().unwrap() {
            let event = event_index(name);
            for entry in list.as_array().unwrap() {
                let id = id_index(entry["id"].as_str().unwrap());
                match entries.iter_mut().find(|(e, i, _)| *e == event && *i == id) {
                    Some((_, _, base)) => deep_merge(base, entry.clone()),
                    None => entries.push((event, id, entry.clone())),
                }
            }
        }
    }
    let mut hooks = Map::new();
    for (event, _, entry) in entries {
        hooks
            .entry(EVENTS[event].0.to_string())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .unwrap()
            .push(entry);
    }
    let mut doc = Map::new();
    if let Some(s) = settings {
        doc.insert("settings".into(), s);
    }
    doc.insert("hooks".into(), Value::Object(hooks));
    Value::Object(doc)
}

/// Settings and (event, kebab id, merged value, enabled) per entry.
type Plain = (Option<Value>, Vec<(usize, String, Value, bool)>);

/// A loaded config without provenance, ids compared in kebab-case, the
/// entries of each event in config order, for comparing different
/// groupings of the same layers.
fn plain(cfg: &LoadedConfig) -> Plain {
    let mut entries: Vec<_> = cfg
        .entries
        .iter()
        .map(|e| {
            (
                event_index(e.event.as_str()),
                to_kebab(&e.id),
                e.node.to_json(),
                e.enabled(),
            )
        })
        .collect();
    // Stable: the order inside an event is kept.
    entries.sort_by_key(|e| e.0);
    (cfg.settings.as_ref().map(Node::to_json), entries)
}

struct Quiet;

#[async_trait]
impl Oracle for Quiet {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(vec![])
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    for name in ["Nop", "Other"] {
        r.register(name, "accepts any config", |_: OracleConfig<'_>| {
            Ok(Arc::new(Quiet) as Arc<dyn Oracle>)
        });
    }
    r
}

fn with_layers(docs: &[Value]) -> Vec<(Layer, &Value)> {
    LAYERS.iter().copied().zip(docs).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any three layers merge like the documented left fold: per (event,
    /// kebab id), maps merge, scalars and lists replace, every value keeps
    /// the layer that set it, first definition keeps the position and the
    /// id's spelling; the last layer that says `enabled` decides it.
    #[test]
    fn layers_merge_as_documented(docs in layers(false)) {
        let layered = with_layers(&docs);
        let cfg = load(&layered);
        prop_assert_eq!(merged(&cfg), model(&layered));
        for e in &cfg.entries {
            let (event, id) = (event_index(e.event.as_str()), to_kebab(&e.id));
            let effective = [docs[0].clone(), untouched(&docs[0], &docs[1]), docs[2].clone()];
            let said = effective
                .iter()
                .rev()
                .flat_map(|d| d["hooks"].as_object().unwrap().iter())
                .filter(|(name, _)| event_index(name) == event)
                .flat_map(|(_, list)| list.as_array().unwrap())
                .find(|x| to_kebab(x["id"].as_str().unwrap()) == id && x.get("enabled").is_some())
                .map(|x| x["enabled"].as_bool().unwrap());
            prop_assert_eq!(e.enabled(), said.unwrap_or(true), "{}", e.id);
        }
    }

    /// Where every key keeps its kind across layers, grouping does not
    /// matter: (user · project) · local = user · (project · local), and both
    /// equal the three files loaded as layers.
    #[test]
    fn merging_is_associative_when_kinds_agree(docs in layers(true)) {
        // Grouped with the user's, the project's keys are no longer the
        // repository's: compared without those it may not set.
        let p = &untouched(&docs[0], &docs[1]);
        let [u, l] = [&docs[0], &docs[2]];
        let docs = vec![u.clone(), p.clone(), l.clone()];
        let all = plain(&load(&with_layers(&docs)));
        let left = plain(&load(&[(Layer::Project, &merge_docs(u, p)), (Layer::Local, l)]));
        let right = plain(&load(&[(Layer::User, u), (Layer::Local, &merge_docs(p, l))]));
        let one = plain(&load(&[(Layer::Local, &merge_docs(&merge_docs(u, p), l))]));
        prop_assert_eq!(&left, &all);
        prop_assert_eq!(&right, &all);
        prop_assert_eq!(&one, &all);
        // And the configs compile (the generator writes valid policies).
        let cfg = load(&with_layers(&docs));
        prop_assert!(cfg.compile(&registry()).is_ok());
    }

    /// `enabled: false` in a later layer switches an entry off, whatever
    /// the earlier layers said, and the compiled policy leaves it out.
    #[test]
    fn enabled_false_in_a_later_layer_wins(
        docs in layers(true),
        pick in any::<prop::sample::Index>(),
        spelling in 0usize..3,
        event_spelling in 0usize..3,
        from_layer in 0usize..3,
    ) {
        let cfg = load(&with_layers(&docs));
        prop_assume!(!cfg.entries.is_empty());
        let target = &cfg.entries[pick.index(cfg.entries.len())];
        let (event, id) = (event_index(target.event.as_str()), id_index(&target.id));
        // The layer of the override: the first that defines the entry or
        // a later one. Later layers stop mentioning `enabled` for it.
        let first = docs
            .iter()
            .position(|d| {
                d["hooks"].as_object().unwrap().iter().any(|(n, list)| {
                    event_index(n) == event
                        && list.as_array().unwrap().iter().any(|x| id_index(x["id"].as_str().unwrap()) == id)
                })
            })
            .unwrap();
        // Not the project's layer over the user's: that is not the
        // repository's to switch off.
        let at = match first.max(from_layer) {
            1 if first == 0 => 2,
            at => at,
        };
        let mut docs = docs.clone();
        for (k, doc) in docs.iter_mut().enumerate().skip(at) {
            let hooks = doc["hooks"].as_object_mut().unwrap();
            let mut found = false;
            for (name, list) in hooks.iter_mut() {
                if event_index(name) != event {
                    continue;
                }
                for x in list.as_array_mut().unwrap() {
                    if id_index(x["id"].as_str().unwrap()) == id {
                        found = true;
                        let x = x.as_object_mut().unwrap();
                        if k == at {
                            x.insert("enabled".into(), json!(false));
                        } else {
                            x.remove("enabled");
                        }
                    }
                }
            }
            if k == at && !found {
                // No entry for it in this layer yet: an override by id,
                // spelled any way, under the event spelled any way.
                let names = EVENTS[event].1;
                let name = hooks
                    .keys()
                    .find(|n| event_index(n) == event)
                    .cloned()
                    .unwrap_or_else(|| names[event_spelling % names.len()].to_string());
                let spelled = IDS[id][spelling % IDS[id].len()];
                hooks
                    .entry(name)
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"id": spelled, "enabled": false}));
            }
        }
        let cfg = load(&with_layers(&docs));
        let off = cfg
            .entries
            .iter()
            .find(|e| event_index(e.event.as_str()) == event && id_index(&e.id) == id)
            .unwrap();
        prop_assert!(!off.enabled());
        prop_assert_eq!(off.node.get("enabled").unwrap().origin.layer(), LAYERS[at]);
        let policy = cfg.compile(&registry()).unwrap();
        let ev = Event::parse(EVENTS[event].0).unwrap();
        let ids: Vec<String> = policy
            .plan(ev)
            .map(|p| p.entries.iter().map(|e| to_kebab(&e.id)).collect())
            .unwrap_or_default();
        prop_assert!(!ids.contains(&IDS[id][0].to_string()), "{:?}", ids);
        // Every other enabled entry of the event is still there.
        for e in cfg.entries.iter().filter(|e| e.event == ev && e.enabled()) {
            prop_assert!(ids.contains(&to_kebab(&e.id)));
        }
    }
}
