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
        let setting = |name: &str, n: &Node| {
            let at = settings.get(name)?;
            // Switching `fail_closed` on strengthens the policy, as
            // raising an intensity does.
            (!(name == "fail_closed" && matches!(n.value, NodeValue::Bool(true))))
                .then(|| at.location())
        };
        let find = |event: Event, item: &Node| by_id_or_hook(&entries, event, item);
        trim_layer(root, *layer, Layer::Managed, setting, find, &mut out);
    }
    out
}

/// Takes out of the repository's layers (the project's policy, and a
/// local one that is the repository's code) what would weaken the user's
/// own policy, and returns what was taken out: any key of an entry the
/// user's file defines except an `intensity` that raises it (of a
/// builtin entry the user tuned, the keys the user set), and a setting
/// that loosens the user's (see [`weakens`]). A repository's policy
/// applies without `ahp trust`; it may add to the user's rules, as to the
/// managed ones, but not switch them off. `user_hooks` are the user's
/// HOOK.md hooks (name, where), which a `- hook: NAME` entry would tune.
/// (The builtin layer's entries are the repository's to tune, with a
/// warning: see `LoadedConfig`.)
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
    let mut settings: HashMap<String, Node> = HashMap::new();
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
            settings.insert(k.name.clone(), n.clone());
        }
    }
    // The user's HOOK.md hooks, which a `- hook: NAME` reference names
    // at any event.
    let hooks: HashMap<String, Managed> = user_hooks
        .iter()
        .map(|(name, at)| {
            let m = Managed {
                at: at.clone(),
                intensity: None,
                only: None,
            };
            (to_kebab(name), m)
        })
        .collect();
    let mut out = Vec::new();
    let repository = |l: Layer| l == Layer::Project || (l == Layer::Local && local_is_repository);
    for (layer, _, root) in roots.iter_mut().filter(|(l, _, _)| repository(*l)) {
        let setting = |name: &str, n: &Node| {
            let mine = settings.get(name)?;
            weakens(name, mine, n).then(|| mine.origin.location())
        };
        let find = |event: Event, item: &Node| {
            let reference = item.get("oracle").is_none() && item.get("hook").is_some();
            if reference {
                let by_name = |key: Option<&str>| hooks.get(&to_kebab(key?));
                by_name(entry_id(item).as_deref())
                    .or_else(|| by_name(item.get("hook").and_then(Node::as_str)))
            } else {
                by_id_or_hook(&entries, event, item)
            }
        };
        trim_layer(root, *layer, Layer::User, setting, find, &mut out);
    }
    out
}

/// Whether a repository's value `theirs` of setting `name` would weaken
/// the user's `mine`: each setting that protects the user may only be
/// made stricter. A value either side cannot read is left to the settings'
/// own checks (which report it), not judged here.
fn weakens(name: &str, mine: &Node, theirs: &Node) -> bool {
    let int = |n: &Node| match n.value {
        NodeValue::Int(i) => Some(i),
        _ => None,
    };
    let protects = matches!(
        name,
        "prompt_fallback"
            | "rewrite_fallback"
            | "environment"
            | "trunk"
            | "stop_block_cap"
            | "timeout"
            | "log_fsync"
            | "project_hooks"
    );
    // A value of another kind than the user's (`environment: 1`, `timeout:
    // "1"`) is broken, and a broken setting falls back to ahp's default,
    // not to the user's value: as good as undoing it.
    if protects && mine.kind() != theirs.kind() {
        return true;
    }
    match name {
        // `deny` is the stronger answer of both fallbacks; anything else
        // over it (`context`, a misspelt `Context`) loosens it.
        "prompt_fallback" | "rewrite_fallback" => {
            mine.as_str() == Some("deny") && theirs.as_str() != Some("deny")
        }
        // Which rules apply where, and which branch the gates guard, are
        // the user's to say.
        "environment" | "trunk" => {
            mine.as_str().is_some() && theirs.as_str().is_some() && mine.as_str() != theirs.as_str()
        }
        // Fewer blocks before a stop gate lets go; less time before an
        // entry or hook fails open.
        "stop_block_cap" | "timeout" => int(theirs).zip(int(mine)).is_some_and(|(t, m)| t < m),
        "log_fsync" => {
            let rank = |n: &Node| match n.as_str() {
                Some("never") => Some(0),
                Some("batch") => Some(1),
                Some("always") => Some(2),
                _ => None,
            };
            // A misspelt value is broken, and would fall back to `batch`.
            rank(mine).is_some_and(|m| rank(theirs).is_none_or(|t| t < m))
        }
        // "Never run a repository's script hooks", trusted or not.
        "project_hooks" => {
            matches!(mine.value, NodeValue::Bool(false))
                && matches!(theirs.value, NodeValue::Bool(true))
        }
        _ => false,
    }
}

/// Takes out of one later layer's `root` what it may not change: a
/// setting `setting` says is set where (`None`: the layer's value
/// stays), and of an entry `find` gives the final one of, all but what
/// [`keep_entry`] keeps.
fn trim_layer<'m>(
    root: &mut Node,
    layer: Layer,
    authority: Layer,
    setting: impl Fn(&str, &Node) -> Option<String>,
    find: impl Fn(Event, &Node) -> Option<&'m Managed>,
    out: &mut Vec<Override>,
) {
    let NodeValue::Map(top) = &mut root.value else {
        return;
    };
    for (key, node) in top.iter_mut() {
        match (key.name.as_str(), &mut node.value) {
            ("settings", NodeValue::Map(m)) => m.retain(|(k, n)| {
                let Some(at) = setting(&k.name, n) else {
                    return true;
                };
                out.push(Override {
                    location: n.origin.location(),
                    layer,
                    key: format!("settings.{}", k.name),
                    managed_at: at,
                    authority,
                });
                false
            }),
            ("hooks", NodeValue::Map(events)) => {
                for (ev, list) in events.iter_mut() {
                    let Ok(event) = Event::parse(&ev.name) else {
                        continue;
                    };
                    if let NodeValue::Seq(items) = &mut list.value {
                        items.retain_mut(|item| match find(event, item) {
                            Some(m) => keep_entry(item, &ev.name, layer, m, out, authority),
                            None => true,
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

/// The final entry `item` names at `event`: by its id, or for a hook
/// reference by the hook it names, whatever its `id`.
fn by_id_or_hook<'m>(
    entries: &'m HashMap<(Event, String), Managed>,
    event: Event,
    item: &Node,
) -> Option<&'m Managed> {
    let id = entry_id(item)?;
    entries.get(&(event, to_kebab(&id))).or_else(|| {
        let hook = item.get("hook").and_then(Node::as_str)?;
        entries.get(&(event, to_kebab(hook)))
    })
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

/// Trims a later layer's entry that names a final one (`managed`) down
/// to what it may say (an `intensity` that raises it, `on_error: block`);
/// false when nothing of it is left.
fn keep_entry(
    item: &mut Node,
    event_name: &str,
    layer: Layer,
    managed: &Managed,
    out: &mut Vec<Override>,
    authority: Layer,
) -> bool {
    let Some(id) = entry_id(item) else {
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
