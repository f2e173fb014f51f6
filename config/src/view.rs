//! The merged config with provenance, for `ahp config`: every value next to
//! the layer and file:line that set it.

use crate::load::LoadedConfig;
use crate::source::path_line;
use crate::yaml::{Node, NodeValue};
use ahp_engine::Event;
use serde_json::{Map, Value, json};
use std::fmt::Write;

fn scalar_text(n: &Node) -> Option<String> {
    Some(match &n.value {
        NodeValue::Null => "null".into(),
        NodeValue::Bool(b) => b.to_string(),
        NodeValue::Int(i) => i.to_string(),
        NodeValue::Float(f) => f.to_string(),
        NodeValue::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        NodeValue::Seq(items)
            if items
                .iter()
                .all(|i| !matches!(i.value, NodeValue::Seq(_) | NodeValue::Map(_))) =>
        {
            let parts: Vec<String> = items.iter().filter_map(scalar_text).collect();
            format!("[{}]", parts.join(", "))
        }
        NodeValue::Map(m) if m.is_empty() => "{}".into(),
        _ => return None,
    })
}

fn note(n: &Node) -> String {
    format!("# {} {}", n.origin.layer(), n.origin.location())
}

fn render(out: &mut String, key: &str, n: &Node, indent: usize) {
    let pad = " ".repeat(indent);
    if let Some(text) = scalar_text(n) {
        let line = format!("{pad}{key}: {text}");
        let _ = writeln!(out, "{line:<52} {}", note(n));
        return;
    }
    let _ = writeln!(out, "{pad}{key}:");
    match &n.value {
        NodeValue::Map(m) => {
            for (k, v) in m {
                render(out, &k.name, v, indent + 2);
            }
        }
        NodeValue::Seq(items) => {
            for item in items {
                match scalar_text(item) {
                    Some(t) => {
                        let line = format!("{pad}  - {t}");
                        let _ = writeln!(out, "{line:<52} {}", note(item));
                    }
                    None => {
                        // A map (or list) item: its first line carries the
                        // "- " marker, the rest line up under it.
                        let mut sub = String::new();
                        match &item.value {
                            NodeValue::Map(m) => {
                                for (k, v) in m {
                                    render(&mut sub, &k.name, v, indent + 4);
                                }
                            }
                            _ => render(&mut sub, "-", item, indent + 4),
                        }
                        let marker = format!("{pad}  - ");
                        let body = sub.get(marker.len()..).unwrap_or(&sub);
                        out.push_str(&marker);
                        out.push_str(body);
                    }
                }
            }
        }
        _ => {}
    }
}

fn origins(n: &Node, prefix: &str, out: &mut Map<String, Value>) {
    match &n.value {
        NodeValue::Map(m) if !m.is_empty() => {
            for (k, v) in m {
                let p = if prefix.is_empty() {
                    k.name.clone()
                } else {
                    format!("{prefix}.{}", k.name)
                };
                origins(v, &p, out);
            }
        }
        _ => {
            out.insert(
                prefix.to_string(),
                json!({"layer": n.origin.layer(), "file": n.origin.file.path, "line": n.origin.line, "column": n.origin.column}),
            );
        }
    }
}

impl LoadedConfig {
    /// The merged config as annotated YAML: each value followed by
    /// `# layer file:line:column`.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# project root: {}", path_line(&self.project_root));
        for f in &self.files {
            let _ = writeln!(
                out,
                "# layer {:<8} {}",
                f.layer.as_str(),
                path_line(&f.path)
            );
        }
        if let Some(off) = &self.builtin_off {
            let _ = writeln!(
                out,
                "# builtin layer: off (settings.builtin: false at {} {})",
                off.layer(),
                off.location()
            );
        }
        // The merged value is the last layer's; `fail_closed` is on when
        // any layer or the environment says so, which the merge cannot show.
        match self.fail_closed() {
            Some(crate::fail_closed::FailClosed::Layer(p)) => {
                let _ = writeln!(
                    out,
                    "# fail_closed: on, from {} (no layer can switch it off)",
                    path_line(p)
                );
            }
            Some(why) => {
                let _ = writeln!(out, "# fail_closed: on ({why})");
            }
            None => {}
        }
        // Only the user's or the managed `agent_timeout` applies.
        if let Some(t) = self.agent_timeout {
            let _ = writeln!(
                out,
                "# agent_timeout: {} ms, from the user's or the managed policy: `ahp hook` answers within {} ms",
                t.as_millis(),
                self.answer_within().as_millis()
            );
        }
        if let Some(s) = &self.settings {
            render(&mut out, "settings", s, 0);
        }
        let _ = writeln!(out, "hooks:");
        // One key per event (a later layer's entries of an event the
        // builtin layer has join them), so the output reads back as YAML.
        let mut events: Vec<Event> = Vec::new();
        for e in &self.entries {
            if !events.contains(&e.event) {
                events.push(e.event);
            }
        }
        let grouped = events
            .iter()
            .flat_map(|ev| self.entries.iter().filter(move |e| e.event == *ev));
        let mut last_event = None;
        for e in grouped {
            if last_event != Some(e.event) {
                let _ = writeln!(out, "  {}:", e.event);
                last_event = Some(e.event);
            }
            let line = format!(
                "    - id: {}",
                serde_json::to_string(&e.id).unwrap_or_default()
            );
            let _ = writeln!(
                out,
                "{line:<52} # {} {}",
                e.defined_at.layer(),
                e.defined_at.location()
            );
            if let Some(m) = e.node.as_map() {
                for (k, v) in m.iter().filter(|(k, _)| k.name != "id") {
                    render(&mut out, &k.name, v, 6);
                }
            }
        }
        out
    }

    /// The merged config as JSON: values plus, per entry, the origin of
    /// every leaf value (dotted key → layer, file, line, column).
    pub fn render_json(&self) -> Value {
        let mut hooks = Map::new();
        for e in &self.entries {
            let mut o = Map::new();
            origins(&e.node, "", &mut o);
            let list = hooks
                .entry(e.event.as_str().to_string())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = list {
                a.push(json!({
                    "id": e.id,
                    "enabled": e.enabled(),
                    "value": e.node.to_json(),
                    "defined_at": {"layer": e.defined_at.layer(), "file": e.defined_at.file.path, "line": e.defined_at.line},
                    "origins": o,
                }));
            }
        }
        let mut settings_origins = Map::new();
        if let Some(s) = &self.settings {
            origins(s, "", &mut settings_origins);
        }
        json!({
            "project_root": self.project_root,
            "layers": self.files.iter().map(|f| json!({"layer": f.layer, "file": f.path})).collect::<Vec<_>>(),
            "builtin_off": self.builtin_off.as_ref().map(|o| json!({"layer": o.layer(), "file": o.file.path, "line": o.line})),
            "settings": self.settings.as_ref().map(Node::to_json).unwrap_or(Value::Null),
            "settings_origins": settings_origins,
            "hooks": hooks,
        })
    }
}
