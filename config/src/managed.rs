//! The managed layer: an organisation's policy that the layers after it
//! (user, project, local) may add to but never weaken.
//!
//! Before the layers merge, every value a later layer writes over the
//! managed policy is taken out of that layer and reported as an
//! [`Override`]: a setting the managed file sets (`fail_closed`,
//! `builtin`, `mode`, …) except `fail_closed: true`, and any key of a
//! managed entry (`enabled`, `when`, `config`, `mode`, …) except an
//! `intensity` that raises it: what only strengthens stays. What
//! was taken out is named by `ahp validate`, `ahp config` and `ahp doctor`,
//! and the managed rule keeps deciding.

use crate::source::{Layer, Origin};
use crate::yaml::{Node, NodeValue};
use ahp_engine::registry::to_kebab;
use ahp_engine::{Event, Intensity};
use std::collections::HashMap;
use std::path::PathBuf;

/// A later layer's attempt to change what the managed policy sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Where the attempt is (`file:line:column`).
    pub location: String,
    /// The layer that tried.
    pub layer: Layer,
    /// The key it wrote (`settings.fail_closed`,
    /// `hooks.pre-tool-use[no-curl].enabled`).
    pub key: String,
    /// Where the managed policy (or the user's) sets it.
    pub managed_at: String,
    /// Whose value it is: [`Layer::Managed`], or [`Layer::User`] for a
    /// repository's attempt on the user's own policy.
    pub authority: Layer,
}

impl std::fmt::Display for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.authority == Layer::User {
            return write!(
                f,
                "{} ({} layer) is ignored: it would change or weaken what your own policy says ({}), and a repository's policy, which applies without `ahp trust`, cannot (to change it for this project, write it in .ahp/hooks.local.yaml)",
                self.key, self.layer, self.managed_at
            );
        }
        write!(
            f,
            "{} ({} layer) is ignored: the managed policy sets it at {}, and no later layer can switch off, change or weaken it",
            self.key, self.layer, self.managed_at
        )
    }
}

/// A managed entry: where it is and the intensity it sets.
struct Managed {
    at: String,
    intensity: Option<Intensity>,
    /// The keys that are final, when not all are: those the user's
    /// layer set on a builtin entry (the rest stays the repository's to
    /// tune, with a warning).
    only: Option<Vec<String>>,
}

/// The entries of a layer's `hooks:`, keyed by (event, kebab id), each
/// said to be at `at(item origin)`.
fn entries_of(
    root: &Node,
    at: &dyn Fn(&Origin) -> String,
    out: &mut HashMap<(Event, String), Managed>,
) {
    for (key, list) in root.get("hooks").and_then(Node::as_map).unwrap_or_default() {
        let Ok(event) = Event::parse(&key.name) else {
            continue;
        };
        let NodeValue::Seq(items) = &list.value else {
            continue;
        };
        for item in items {
            if let Some(id) = entry_id(item) {
                out.insert(
                    (event, to_kebab(&id)),
                    Managed {
                        at: at(&item.origin),
                        intensity: item
                            .get("intensity")
                            .and_then(Node::as_str)
                            .and_then(|i| i.parse().ok()),
                        only: None,
                    },
                );
            }
        }
    }
}

/// An entry's id as the loader keys it: `id`, else `oracle`, else `hook`.
fn entry_id(item: &Node) -> Option<String> {
    item.get("id")
        .or_else(|| item.get("oracle"))
        .or_else(|| item.get("hook"))
        .and_then(Node::as_str)
        .map(str::to_string)
}

/// Takes out of the layers after the managed one whatever would change
/// the managed policy, and returns what was taken out. `roots` are the
/// parsed layers in order.
pub(crate) fn enforce(roots: &mut [(Layer, PathBuf, Node)]) -> Vec<Override> {
    let Some(managed) = roots.iter().find(|(l, _, _)| *l == Layer::Managed) else {
        return Vec::new();
    };
    let root = &managed.2;
    let settings: HashMap<String, Origin> = root
        .get("settings")
        .and_then(Node::as_map)
        .map(|m| {
            m.iter()
                .map(|(k, n)| (k.name.clone(), n.origin.clone()))
                .collect()
        })
        .unwrap_or_default();
    let mut entries: HashMap<(Event, String), Managed> = HashMap::new();
    // `builtin: true` pins the builtin layer: its entries are as final as
    // the managed ones.
    if let Some(pin) = root
        .get("settings")
        .and_then(|s| s.get("builtin"))
        .filter(|n| matches!(n.value, NodeValue::Bool(true)))
        && let Some((_, _, builtin)) = roots.iter().find(|(l, _, _)| *l == Layer::Builtin)
    {
        let pinned = pin.origin.location();
        entries_of(
            builtin,
            &|o: &Origin| {
                format!(
                    "{} (the builtin layer, pinned by settings.builtin: true at {pinned})",
                    o.location()
                )
            },
            &mut entries,
        );
    }
    entries_of(root, &|o: &Origin| o.location(), &mut entries);
    let mut out = Vec::new();
    for (layer, _, root) in roots.iter_mut().filter(|(l, _, _)| *l > Layer::Managed) {
        let layer = *layer;
        let NodeValue::Map(top) = &mut root.value else {
            continue;
        };
        for (key, node) in top.iter_mut() {
            match (key.name.as_str(), &mut node.value) {
                ("settings", NodeValue::Map(m)) => m.retain(|(k, n)| {
                    let Some(at) = settings.get(&k.name) else {
                        return true;
                    };
                    // Switching `fail_closed` on strengthens the policy,
                    // as raising an intensity does.
                    if k.name == "fail_closed" && matches!(n.value, NodeValue::Bool(true)) {
                        return true;
                    }
                    out.push(Override {
                        location: n.origin.location(),
                        layer,
                        key: format!("settings.{}", k.name),
                        managed_at: at.location(),
                        authority: Layer::Managed,
                    });
                    false
                }),
                ("hooks", NodeValue::Map(events)) => {
                    for (ev, list) in events.iter_mut() {
                        let Ok(event) = Event::parse(&ev.name) else {
                            continue;
                        };
                        if let NodeValue::Seq(items) = &mut list.value {
                            items.retain_mut(|item| {
                                keep_entry(
                                    item,
                                    event,
                                    &ev.name,
                                    layer,
                                    &entries,
                                    &mut out,
                                    Layer::Managed,
                                )
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Takes out of the repository's layers (the project's policy, and a
/// local one that is the repository's code) what would weaken the user's
/// own policy, and returns what was taken out: any key of an entry the
/// user's file defines except an `intensity` that raises it (of a
/// builtin entry the user tuned, the keys the user set), and a fallback
/// or environment that undoes the user's. A repository's policy
/// applies without `ahp trust`; it may add to the user's rules, as to the
/// managed ones, but not switch them off. `user_hooks` are the user's
/// HOOK.md hooks (name, where), which a `- hook: NAME` entry would tune. (The builtin layer's entries
/// are the repository's to tune, with a warning: see `LoadedConfig`.)
pub(crate) fn enforce_user(
    roots: &mut [(Layer, PathBuf, Node)],
    local_is_repository: bool,
    user_hooks: &[(String, String)],
) -> Vec<Override> {
    let user = roots
        .iter()
        .find(|(l, _, _)| *l == Layer::User)
        .map(|(_, _, r)| r);
    let mut entries: HashMap<(Event, String), Managed> = HashMap::new();
    let mut settings: HashMap<String, (String, Origin)> = HashMap::new();
    if let Some(root) = user {
        entries_of(root, &|o: &Origin| o.location(), &mut entries);
        // A builtin entry the user tuned: what the user set is final.
        let mut builtin = HashMap::new();
        if let Some((_, _, b)) = roots.iter().find(|(l, _, _)| *l == Layer::Builtin) {
            entries_of(b, &|o: &Origin| o.location(), &mut builtin);
        }
        for (key, m) in entries.iter_mut().filter(|(k, _)| builtin.contains_key(*k)) {
            m.only = Some(user_keys(root, key));
        }
        for (k, n) in root
            .get("settings")
            .and_then(Node::as_map)
            .unwrap_or_default()
        {
            if let Some(v) = n.as_str() {
                settings.insert(k.name.clone(), (v.to_string(), n.origin.clone()));
            }
        }
    }
    let mut out = Vec::new();
    let repository = |l: Layer| l == Layer::Project || (l == Layer::Local && local_is_repository);
    for (layer, _, root) in roots.iter_mut().filter(|(l, _, _)| repository(*l)) {
        let layer = *layer;
        let NodeValue::Map(top) = &mut root.value else {
            continue;
        };
        for (key, node) in top.iter_mut() {
            match (key.name.as_str(), &mut node.value) {
                ("settings", NodeValue::Map(m)) => m.retain(|(k, n)| {
                    let mine = settings.get(&k.name);
                    let theirs = n.as_str();
                    let at = match (k.name.as_str(), mine, theirs) {
                        // `deny` is the stronger answer of both fallbacks.
                        ("prompt_fallback", Some((v, at)), Some("context")) if v == "deny" => {
                            at.location()
                        }
                        ("rewrite_fallback", Some((v, at)), Some("context")) if v == "deny" => {
                            at.location()
                        }
                        ("environment", Some((v, at)), Some(t)) if v != t => at.location(),
                        _ => return true,
                    };
                    out.push(Override {
                        location: n.origin.location(),
                        layer,
                        key: format!("settings.{}", k.name),
                        managed_at: at,
                        authority: Layer::User,
                    });
                    false
                }),
                ("hooks", NodeValue::Map(events))
                    if !entries.is_empty() || !user_hooks.is_empty() =>
                {
                    for (ev, list) in events.iter_mut() {
                        let Ok(event) = Event::parse(&ev.name) else {
                            continue;
                        };
                        // The user's HOOK.md hooks, named at this event.
                        let mut mine = HashMap::new();
                        for (name, at) in user_hooks {
                            mine.insert(
                                (event, to_kebab(name)),
                                Managed {
                                    at: at.clone(),
                                    intensity: None,
                                    only: None,
                                },
                            );
                        }
                        if let NodeValue::Seq(items) = &mut list.value {
                            items.retain_mut(|item| {
                                let hook =
                                    item.get("oracle").is_none() && item.get("hook").is_some();
                                let of = if hook { &mine } else { &entries };
                                keep_entry(item, event, &ev.name, layer, of, &mut out, Layer::User)
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The keys the layer at `root` writes on its entry `key`.
fn user_keys(root: &Node, key: &(Event, String)) -> Vec<String> {
    let mut out = Vec::new();
    for (ev, list) in root.get("hooks").and_then(Node::as_map).unwrap_or_default() {
        if Event::parse(&ev.name).ok() != Some(key.0) {
            continue;
        }
        let NodeValue::Seq(items) = &list.value else {
            continue;
        };
        for item in items {
            if entry_id(item).is_some_and(|id| to_kebab(&id) == key.1)
                && let NodeValue::Map(m) = &item.value
            {
                out.extend(m.iter().map(|(k, _)| k.name.clone()));
            }
        }
    }
    out
}

/// Trims a later layer's entry that names a managed one down to what it
/// may say (an `intensity` that raises the managed one); false when
/// nothing of it is left.
fn keep_entry(
    item: &mut Node,
    event: Event,
    event_name: &str,
    layer: Layer,
    entries: &HashMap<(Event, String), Managed>,
    out: &mut Vec<Override>,
    authority: Layer,
) -> bool {
    let Some(id) = entry_id(item) else {
        return true;
    };
    // A hook reference is merged by the hook it names, whatever its `id`.
    let hook = item.get("hook").and_then(Node::as_str).map(str::to_string);
    let Some(managed) = entries.get(&(event, to_kebab(&id))).or_else(|| {
        hook.as_ref()
            .and_then(|h| entries.get(&(event, to_kebab(h))))
    }) else {
        return true;
    };
    let NodeValue::Map(m) = &mut item.value else {
        return true;
    };
    m.retain(|(k, n)| {
        let allowed = match k.name.as_str() {
            // What names it.
            "id" | "hook" => true,
            // Failing closed only strengthens it.
            "on_error" => n.as_str() == Some("block"),
            name if managed
                .only
                .as_ref()
                .is_some_and(|o| !o.iter().any(|x| x == name)) =>
            {
                true
            }
            // Raising is what later layers may do.
            "intensity" => n
                .as_str()
                .and_then(|i| i.parse::<Intensity>().ok())
                .is_some_and(|i| match managed.intensity {
                    Some(m) => i >= m,
                    // The oracle's own intensity is not known here: only
                    // block is surely no weaker.
                    None => i == Intensity::Block,
                }),
            _ => false,
        };
        if !allowed {
            out.push(Override {
                location: n.origin.location(),
                layer,
                key: format!("hooks.{event_name}[{id}].{}", k.name),
                managed_at: managed.at.clone(),
                authority,
            });
        }
        allowed
    });
    m.iter().any(|(k, _)| k.name != "id")
}
