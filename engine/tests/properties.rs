//! Property tests of the engine's documented rules (docs/decisions.md):
//! ordering by `after` and priority waves, clamping, the verdict's outcome,
//! and the composition of control modifications.
//!
//! Case counts are kept modest so that `cargo test` stays fast; raise them
//! locally with `PROPTEST_CASES=10000 cargo test -p ahp-engine --test properties`.

use ahp_engine::dispatch::clamp;
use ahp_engine::policy::order;
use ahp_engine::{
    Engine, Entry, Event, HookContext, Intensity, ModOp, Modification, OnBlock, Oracle,
    OracleError, Outcome, Policy, PolicyError, Settings, Signal, ToolCall, async_trait,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;

/// Returns fresh signals (new ids on every call) built from its spec.
struct Emit(Vec<SignalSpec>);

#[derive(Debug, Clone)]
enum SignalSpec {
    /// A signal of this intensity (a control sets `tool.input.n<k>`).
    Of(Intensity),
    /// A control with these modifications.
    Control(Vec<Modification>),
}

#[async_trait]
impl Oracle for Emit {
    async fn evaluate(&self, _: &HookContext) -> Result<Vec<Signal>, OracleError> {
        Ok(self
            .0
            .iter()
            .enumerate()
            .map(|(k, spec)| match spec {
                SignalSpec::Of(Intensity::Block) => Signal::block(format!("block {k}")),
                SignalSpec::Of(Intensity::Control) => Signal::control(vec![Modification::set(
                    format!("tool.input.n{k}"),
                    json!(k),
                )]),
                SignalSpec::Of(Intensity::Prompt) => Signal::prompt(format!("prompt {k}")),
                SignalSpec::Of(Intensity::Aid) => Signal::aid(format!("aid {k}")),
                SignalSpec::Control(mods) => Signal::control(mods.clone()),
            })
            .collect())
    }
}

fn entry(id: String, priority: i64, signals: Vec<SignalSpec>) -> Entry {
    let mut e = Entry::new("Emit", Arc::new(Emit(signals)));
    e.id = id;
    e.priority = priority;
    e
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn intensity() -> impl Strategy<Value = Intensity> {
    prop::sample::select(Intensity::ALL.to_vec())
}

fn event() -> impl Strategy<Value = Event> {
    prop::sample::select(Event::ALL.to_vec())
}

// ---------------------------------------------------------------------------
// (b) Ordering: `after` beats priority; waves are maximal.

/// A DAG over `n` entries: priorities, and per entry the entries it runs
/// after. Edges only go from a lower to a higher rank of a random
/// permutation, so there is no cycle; `after` may name an entry twice.
#[derive(Debug, Clone)]
struct Dag {
    priorities: Vec<i64>,
    after: Vec<Vec<usize>>,
}

fn dag() -> impl Strategy<Value = Dag> {
    (1usize..12).prop_flat_map(|n| {
        (
            prop::collection::vec(-2i64..3, n),
            prop::collection::vec(any::<u32>(), n),
            prop::collection::vec(prop::collection::vec(0u8..10, n), n),
        )
            .prop_map(move |(priorities, rank, dice)| {
                // i runs after j when j ranks lower and the dice say so
                // (30 %; 5 % of the edges are written twice).
                let after = (0..n)
                    .map(|i| {
                        let mut deps = Vec::new();
                        for j in 0..n {
                            if (rank[j], j) < (rank[i], i) && dice[i][j] < 3 {
                                deps.push(j);
                                if dice[j][i] == 9 {
                                    deps.push(j);
                                }
                            }
                        }
                        deps
                    })
                    .collect();
                Dag { priorities, after }
            })
    })
}

fn id(i: usize) -> String {
    format!("e{i}")
}

fn dag_entries(d: &Dag) -> Vec<Entry> {
    (0..d.priorities.len())
        .map(|i| {
            let mut e = entry(id(i), d.priorities[i], vec![]);
            e.after = d.after[i].iter().map(|j| id(*j)).collect();
            e
        })
        .collect()
}

/// The documented algorithm, written naively: at each step the ready
/// entries (every dependency already placed) of the lowest ready priority
/// form the next wave, in config order.
fn reference_waves(d: &Dag) -> Vec<Vec<usize>> {
    let n = d.priorities.len();
    let mut placed = vec![false; n];
    let mut waves = Vec::new();
    loop {
        let ready: Vec<usize> = (0..n)
            .filter(|i| !placed[*i] && d.after[*i].iter().all(|j| placed[*j]))
            .collect();
        let Some(low) = ready.iter().map(|i| d.priorities[*i]).min() else {
            break;
        };
        let wave: Vec<usize> = ready
            .into_iter()
            .filter(|i| d.priorities[*i] == low)
            .collect();
        for i in &wave {
            placed[*i] = true;
        }
        waves.push(wave);
    }
    waves
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn order_is_a_topological_order_in_maximal_priority_waves(d in dag()) {
        let entries = dag_entries(&d);
        let waves = order(Event::PreToolUse, &entries).unwrap();
        let n = entries.len();

        // Every entry exactly once.
        let mut wave_of = vec![usize::MAX; n];
        for (w, wave) in waves.iter().enumerate() {
            prop_assert!(!wave.is_empty(), "empty wave {w}");
            for &i in wave {
                prop_assert_eq!(wave_of[i], usize::MAX, "e{} in two waves", i);
                wave_of[i] = w;
            }
            // Config order inside a wave; one priority per wave.
            prop_assert!(wave.windows(2).all(|p| p[0] < p[1]), "{:?}", wave);
            prop_assert!(wave.iter().all(|i| d.priorities[*i] == d.priorities[wave[0]]));
        }
        prop_assert!(wave_of.iter().all(|w| *w != usize::MAX));

        // `after` beats priority: never before what it follows.
        for i in 0..n {
            for &j in &d.after[i] {
                prop_assert!(wave_of[j] < wave_of[i], "e{} after e{}: waves {:?}", i, j, waves);
            }
        }

        // Waves are maximal: nothing that was ready with the wave's
        // priority was left for later, and nothing ready had a lower one.
        for (w, wave) in waves.iter().enumerate() {
            for i in 0..n {
                let ready = wave_of[i] >= w && d.after[i].iter().all(|j| wave_of[*j] < w);
                if ready {
                    prop_assert!(d.priorities[i] >= d.priorities[wave[0]], "e{} ready at wave {} with a lower priority", i, w);
                    if d.priorities[i] == d.priorities[wave[0]] {
                        prop_assert_eq!(wave_of[i], w, "e{} ready at wave {} but left out", i, w);
                    }
                }
            }
        }

        // The same as the documented algorithm, and the same through Policy.
        prop_assert_eq!(&waves, &reference_waves(&d));
        let policy = Policy::new(Settings::default(), [(Event::PreToolUse, entries)]).unwrap();
        prop_assert_eq!(&policy.plan(Event::PreToolUse).unwrap().waves, &waves);
    }

    #[test]
    fn a_back_edge_is_a_cycle_naming_its_members(d in dag(), pick in any::<prop::sample::Index>()) {
        let edges: Vec<(usize, usize)> = (0..d.after.len())
            .flat_map(|i| d.after[i].iter().map(move |j| (i, *j)))
            .collect();
        if edges.is_empty() {
            return Ok(());
        }
        let (i, j) = edges[pick.index(edges.len())];
        let mut cyclic = d.clone();
        cyclic.after[j].push(i);
        let err = order(Event::PreToolUse, &dag_entries(&cyclic)).unwrap_err();
        let PolicyError::Cycle { members, .. } = err else {
            panic!("not a cycle error: {err}");
        };
        prop_assert_eq!(members.first(), members.last());
        prop_assert!(members.contains(&id(i)) && members.contains(&id(j)), "{:?}", members);
    }
}

// ---------------------------------------------------------------------------
// (d) Clamping never raises, for every event and intensity.

#[test]
fn clamping_never_raises_and_lands_on_an_allowed_intensity() {
    for &event in Event::ALL {
        for intensity in Intensity::ALL {
            let c = clamp(event, intensity);
            assert!(c <= intensity, "{event}: {intensity} raised to {c}");
            assert!(event.allows(c), "{event}: {c} is not allowed");
            if event.allows(intensity) {
                assert_eq!(c, intensity, "{event}: allowed {intensity} changed");
            } else {
                // The strongest allowed intensity below, never control.
                assert_ne!(
                    c,
                    Intensity::Control,
                    "{event}: {intensity} clamped to control"
                );
                let best = Intensity::ALL
                    .into_iter()
                    .filter(|i| *i < intensity && *i != Intensity::Control && event.allows(*i))
                    .max()
                    .unwrap_or(Intensity::Aid);
                assert_eq!(c, best, "{event}: {intensity}");
            }
            assert_eq!(clamp(event, c), c, "{event}: clamping is idempotent");
        }
    }
}

// ---------------------------------------------------------------------------
// (c) The verdict's outcome is the strongest delivered signal; (d) again,
// through dispatch: delivered signals are clamped down, never up.

#[derive(Debug, Clone)]
struct Emitter {
    priority: i64,
    intensity_override: Option<Intensity>,
    signals: Vec<Intensity>,
}

fn emitters() -> impl Strategy<Value = Vec<Emitter>> {
    prop::collection::vec(
        (
            0i64..3,
            prop::option::weighted(0.25, intensity()),
            prop::collection::vec(intensity(), 0..4),
        )
            .prop_map(|(priority, intensity_override, signals)| Emitter {
                priority,
                intensity_override,
                signals,
            }),
        0..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_outcome_is_the_strongest_delivered_intensity(
        event in event(),
        emitters in emitters(),
        collect in any::<bool>(),
    ) {
        let entries: Vec<Entry> = emitters
            .iter()
            .enumerate()
            .map(|(k, em)| {
                let mut e = entry(id(k), em.priority, em.signals.iter().copied().map(SignalSpec::Of).collect());
                e.intensity = em.intensity_override;
                e
            })
            .collect();
        let settings = Settings {
            on_block: if collect { OnBlock::Collect } else { OnBlock::Stop },
            ..Settings::default()
        };
        let policy = Policy::new(settings, [(event, entries)]).unwrap();
        let engine = Engine::builder().policy(policy).build().unwrap();
        let mut ctx = HookContext::for_event(event);
        ctx.tool = Some(ToolCall { name: "shell".into(), input: json!({}), ..ToolCall::default() });
        let verdict = runtime().block_on(engine.dispatch(event, ctx));

        let strongest = verdict.signals.iter().map(Signal::intensity).max();
        prop_assert_eq!(verdict.outcome, Outcome::from_strongest(strongest));
        for s in &verdict.signals {
            prop_assert!(event.allows(s.intensity()), "{} delivered at {}", s.intensity(), event);
            prop_assert_eq!(s.header.intensity, s.intensity());
            let k: usize = s.header.source[1..].parse().unwrap();
            let wanted = emitters[k].intensity_override;
            if let Some(from) = s.header.clamped_from {
                prop_assert!(from > s.intensity(), "clamped up: {} → {}", from, s.intensity());
                prop_assert_eq!(clamp(event, from), s.intensity());
            } else {
                prop_assert!(event.allows(s.intensity()));
            }
            let pre = s.header.clamped_from.unwrap_or(s.intensity());
            match wanted {
                // A control override of a signal with nothing to modify
                // leaves it at its own intensity (only controls carry one).
                Some(Intensity::Control) if pre != Intensity::Control => {
                    prop_assert!(emitters[k].signals.contains(&pre), "{} not emitted", pre);
                }
                Some(want) => prop_assert_eq!(pre, want),
                None => {}
            }
        }
        if collect {
            // Every wave ran: the outcome is the strongest emitted
            // intensity, overridden and clamped.
            let expected = emitters
                .iter()
                .flat_map(|em| {
                    em.signals.iter().map(|i| match em.intensity_override {
                        Some(Intensity::Control) if *i != Intensity::Control => *i,
                        o => o.unwrap_or(*i),
                    })
                })
                .map(|i| clamp(event, i))
                .max();
            prop_assert_eq!(verdict.outcome, Outcome::from_strongest(expected));
            prop_assert_eq!(verdict.signals.len(), emitters.iter().map(|e| e.signals.len()).sum::<usize>());
        }
    }
}

// ---------------------------------------------------------------------------
// (e) Control modifications compose deterministically.

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..10).prop_map(Value::from),
        prop::sample::select(vec!["", "x", "rm -rf /", "ls"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "l"]), inner, 0..3)
                .prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
        ]
    })
}

const TARGETS: &[&str] = &[
    "tool.input",
    "tool.input.a",
    "tool.input.a.b",
    "tool.input.a.b.c",
    "tool.input.l",
    "tool.input.l.0",
    "tool.input.l.2",
    "tool.input.a.l.1",
    "tool.name",
    "files.batches",
    "files.changed",
    "issue.status",
    "environment",
    "extra.key",
    "",
];

fn modification() -> impl Strategy<Value = Modification> {
    (
        prop::sample::select(TARGETS.to_vec()),
        prop::sample::select(vec![ModOp::Set, ModOp::Merge, ModOp::Remove]),
        // Mostly with a value; a set or merge without one must fail.
        prop::option::weighted(0.85, json_value()),
    )
        .prop_map(|(target, op, value)| Modification {
            target: target.to_string(),
            op,
            value,
            description: None,
        })
}

fn start_context() -> impl Strategy<Value = HookContext> {
    (
        prop::option::weighted(0.9, json_value()),
        prop::option::of(json_value()),
    )
        .prop_map(|(input, issue)| {
            let mut ctx = HookContext::for_event(Event::PreToolUse);
            ctx.correlation_id = Some("c".into());
            ctx.tool = input.map(|input| ToolCall {
                name: "shell".into(),
                input,
                ..ToolCall::default()
            });
            ctx.issue = issue;
            ctx
        })
}

/// How many JSON values `v` holds, itself included.
fn nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(nodes).sum(),
        Value::Object(map) => map.values().map(nodes).sum(),
        _ => 0,
    }
}

/// Applies `mods` one by one; which ones failed.
fn apply_all(ctx: &mut HookContext, mods: &[Modification]) -> Vec<bool> {
    mods.iter().map(|m| ctx.apply(m).is_ok()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn applying_modifications_is_deterministic_and_atomic(
        start in start_context(),
        mods in prop::collection::vec(modification(), 0..8),
    ) {
        let mut once = start.clone();
        let mut twice = start.clone();
        let ok_once = apply_all(&mut once, &mods);
        let ok_twice = apply_all(&mut twice, &mods);
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(&ok_once, &ok_twice);

        // A modification that fails changes nothing; the ones that succeed,
        // replayed alone, give the same context.
        // A remove never creates anything on its way.
        let mut step = start.clone();
        for m in &mods {
            let before = step.clone();
            match step.apply(m) {
                Err(_) => prop_assert_eq!(&step, &before, "failed {:?} changed the context", m),
                Ok(()) if m.op == ModOp::Remove => prop_assert!(
                    nodes(&step.to_value()) <= nodes(&before.to_value()),
                    "{:?} added to {:?}", m, before
                ),
                Ok(()) => {}
            }
        }
        prop_assert_eq!(&step, &once);
        let applied: Vec<Modification> = mods
            .iter()
            .zip(&ok_once)
            .filter(|(_, ok)| **ok)
            .map(|(m, _)| m.clone())
            .collect();
        let mut replay = start.clone();
        prop_assert!(apply_all(&mut replay, &applied).iter().all(|ok| *ok));
        prop_assert_eq!(&replay, &once);
    }
}

/// An entry of a dispatch: its priority and, per control signal, its
/// modifications.
type ControlEntry = (i64, Vec<Vec<Modification>>);

fn control_entries() -> impl Strategy<Value = Vec<ControlEntry>> {
    prop::collection::vec(
        (
            0i64..4,
            prop::collection::vec(prop::collection::vec(modification(), 1..3), 1..3),
        ),
        1..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn dispatch_composes_controls_in_run_order_like_applying_them_step_by_step(
        start in start_context(),
        spec in control_entries(),
    ) {
        let entries: Vec<Entry> = spec
            .iter()
            .enumerate()
            .map(|(k, (priority, signals))| {
                entry(id(k), *priority, signals.iter().cloned().map(SignalSpec::Control).collect())
            })
            .collect();
        let policy = Policy::new(Settings::default(), [(Event::PreToolUse, entries)]).unwrap();
        let engine = Engine::builder().policy(policy).build().unwrap();
        let rt = runtime();
        let first = rt.block_on(engine.dispatch(Event::PreToolUse, start.clone()));
        let second = rt.block_on(engine.dispatch(Event::PreToolUse, start.clone()));

        // Step by step, in run order (wave by wave, config order inside a
        // wave), each modification once, failures skipped.
        let plan = engine.policy().plan(Event::PreToolUse).unwrap();
        let mut expected = start.clone();
        let mut applied: Vec<(String, Modification)> = Vec::new();
        for (_, e) in plan.ordered() {
            let k: usize = e.id[1..].parse().unwrap();
            for m in spec[k].1.iter().flatten() {
                if expected.apply(m).is_ok() {
                    applied.push((e.id.clone(), m.clone()));
                }
            }
        }
        let changes = |v: &ahp_engine::Verdict| -> Vec<(String, Modification)> {
            v.context_changes
                .iter()
                .map(|c| (c.source.clone(), c.modification.clone()))
                .collect()
        };
        prop_assert_eq!(&first.context, &expected);
        prop_assert_eq!(&changes(&first), &applied);
        // Replaying what the verdict says was applied gives its context.
        let mut replay = start.clone();
        for (_, m) in &applied {
            prop_assert!(replay.apply(m).is_ok());
        }
        prop_assert_eq!(&replay, &first.context);
        // Deterministic: the same again.
        prop_assert_eq!(&second.context, &first.context);
        prop_assert_eq!(changes(&second), changes(&first));
        // Each failed modification is reported once.
        let failed = spec.iter().flat_map(|(_, s)| s.iter().flatten()).count() - applied.len();
        prop_assert_eq!(first.diagnostics.len(), failed, "{:?}", first.diagnostics);
    }
}

#[test]
fn failed_modifications_and_removes_of_missing_paths_leave_no_trace() {
    let mut ctx = HookContext::for_event(Event::PreToolUse);
    ctx.tool = Some(ToolCall {
        name: "shell".into(),
        input: json!({"command": "ls", "n": null}),
        ..ToolCall::default()
    });
    let before = ctx.clone();
    for target in ["tool.input.new.deep", "tool.input.n.x", "tool.input.n"] {
        let m = Modification {
            target: target.into(),
            op: ModOp::Set,
            value: None,
            description: None,
        };
        assert!(ctx.apply(&m).is_err(), "{target}");
        assert_eq!(ctx, before, "{target}");
    }
    for target in [
        "tool.input.a.b.c",
        "tool.input.n.x.y",
        "files.batches",
        "issue.x.y",
    ] {
        ctx.apply(&Modification::remove(target)).unwrap();
        assert_eq!(ctx, before, "{target}");
    }
}

/// A policy pattern answers exactly as the regex crate does, whether it is
/// gated by its prefixes, answered by its literals or compiled.
mod pattern_agrees_with_regex {
    use ahp_engine::pattern::Pattern;
    use proptest::prelude::*;

    /// Pieces of a pattern: literals, classes, look-arounds, flags.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a", "b", "ab", "é", " ", ".", "[ab]", r"\b", "a?", "b*", "(a|b)", "(?:ab|)", "(?i:k)",
            "(?i:s)", "a{2}", "(?m:^)", "(?m:$)",
        ])
    }

    fn pattern() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            prop::collection::vec(piece(), 0..4),
            prop::collection::vec(prop::collection::vec(piece(), 0..3), 0..3),
            any::<bool>(),
        )
            .prop_map(|(start, first, alts, end)| {
                let mut branches = vec![first.concat()];
                branches.extend(alts.into_iter().map(|a| a.concat()));
                let body = if branches.len() > 1 {
                    format!("(?:{})", branches.join("|"))
                } else {
                    branches.concat()
                };
                format!(
                    "{}{}{}",
                    if start { "^" } else { "" },
                    body,
                    if end { "$" } else { "" }
                )
            })
    }

    /// Patterns near the plain-text shapes read without the regex parser
    /// (`^(a|b)$`, `a\.b`, …) and just outside them (`\d`, `(a)b`, `\<`).
    fn plain_pattern() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "b", "ab", "é", " ", "-", "#", "&", "~", "/", "\\.", "\\$", "\\^", "\\(", "\\)",
            "\\|", "\\\\", "\\-", "\\#", "|", "(", ")", ".", "$", "^", "\\d", "\\<", "\\b",
        ]);
        (
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(piece, 0..5),
            any::<bool>(),
        )
            .prop_map(|(start, group, pieces, end)| {
                let body = pieces.concat();
                format!(
                    "{}{}{}",
                    if start { "^" } else { "" },
                    if group { format!("({body})") } else { body },
                    if end { "$" } else { "" }
                )
            })
    }

    fn haystack() -> impl Strategy<Value = String> {
        let chars = "abAB \nékK\u{212A}sſ".chars().collect::<Vec<_>>();
        prop::collection::vec(prop::sample::select(chars), 0..8)
            .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn same_answer(src in pattern(), hays in prop::collection::vec(haystack(), 1..8)) {
            let p = Pattern::new(&src).unwrap();
            let re = regex::Regex::new(&src).unwrap();
            for h in &hays {
                prop_assert_eq!(p.is_match(h), re.is_match(h), "{:?} on {:?}", src, h);
            }
        }

        #[test]
        fn same_answer_for_plain_text(
            src in plain_pattern(),
            hays in prop::collection::vec(plain_haystack(), 1..8),
        ) {
            agrees(&src, &hays)?;
        }
    }

    /// `Pattern` and the regex crate accept `src` alike and, when they do,
    /// answer alike on every haystack.
    fn agrees(src: &str, hays: &[String]) -> Result<(), TestCaseError> {
        let re = regex::Regex::new(src);
        let p = Pattern::new(src);
        prop_assert_eq!(p.is_ok(), re.is_ok(), "{:?}", src);
        if let (Ok(p), Ok(re)) = (p, re) {
            for h in hays {
                prop_assert_eq!(p.is_match(h), re.is_match(h), "{:?} on {:?}", src, h);
            }
        }
        Ok(())
    }

    /// Text, groups of alternatives and gaps (what `Pattern` reads without
    /// the regex parser), mixed with pieces that take a pattern out of that
    /// shape: quantifiers after text or a gap, classes, flags, bad groups.
    fn sequence_pattern() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "b", "ab", "é", " ", "-", "#", "\\.", "\\(", "\\)", "\\|", "\\\\", "\\s", "(a|b)",
            "(&&|;)", "(é)", ".*", ".+", ".", "\\s*", "\\s+", "\\b", "*", "+", "?", "{2}", "[ab]",
            "(?i)", "(", ")", "|", "(a|)", "\\d", "\\w", "\\B", "$", "^",
        ]);
        (
            any::<bool>(),
            prop::collection::vec(piece, 0..7),
            any::<bool>(),
        )
            .prop_map(|(start, pieces, end)| {
                format!(
                    "{}{}{}",
                    if start { "^" } else { "" },
                    pieces.concat(),
                    if end { "$" } else { "" }
                )
            })
    }

    fn sequence_haystack() -> impl Strategy<Value = String> {
        let pieces = vec![
            "a", "b", "ab", "é", " ", "\t", "-", "#", "&&", ";", ".", "(", ")", "|", "\\", "\n",
            "(x)", "1",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..9).prop_map(|ps| ps.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn same_answer_for_sequences(
            src in sequence_pattern(),
            hays in prop::collection::vec(sequence_haystack(), 1..10),
        ) {
            agrees(&src, &hays)?;
        }
    }

    fn plain_haystack() -> impl Strategy<Value = String> {
        let pieces = vec![
            "a", "b", "é", " ", "-", "#", "&", "~", "/", ".", "$", "^", "(", ")", "|", "\\", "\n",
            "1",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..7).prop_map(|ps| ps.concat())
    }
}
