//! The context shape (`ahp_engine::context_shape`) against what the
//! adapters really fill from the agents' payloads in tests/fixtures/agents:
//! no path an agent provides is reported as unknown.

use serde_json::Value;
use std::path::PathBuf;

/// Every path an adapter fills from a real payload is one the shape knows:
/// nothing an agent sends is reported as unknown.
#[test]
fn every_path_of_every_agent_fixture_is_known() {
    use ahp::adapters::{Agent, parse};
    use ahp_engine::context_shape::resolve;
    fn leaves(prefix: &str, v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, v) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(&p, v, out);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, v) in a.iter().enumerate() {
                    leaves(&format!("{prefix}.{i}"), v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    let mut checked = 0;
    let mut unknown = std::collections::BTreeSet::new();
    for agent in Agent::ALL {
        let Ok(files) = std::fs::read_dir(dir.join(agent.as_str())) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let payload: Value = serde_json::from_str(&text).unwrap();
            let event = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(|s| s.split('-').next().unwrap_or(s).to_string());
            let inbound = match parse(agent, &payload, None) {
                Ok(i) => i,
                // camelCase protocols name the event on the command line.
                Err(_) => match parse(agent, &payload, event.as_deref()) {
                    Ok(i) => i,
                    Err(_) => continue,
                },
            };
            let mut paths = Vec::new();
            leaves("", &inbound.context.to_value(), &mut paths);
            for p in paths {
                if let Err(f) = resolve(&p) {
                    // An agent's own payload fields are kept at the top level
                    // under their names: the shape lists the ones known, and
                    // one it does not know yet may only be warned about.
                    let root = p.split('.').next().unwrap_or_default().to_string();
                    let top_level = resolve(&root).is_err();
                    assert!(top_level, "{}: `{p}`: {f:?}", path.display());
                    unknown.insert(root);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} paths checked");
    assert!(
        unknown.is_empty(),
        "payload fields the shape does not list: {unknown:?}"
    );
}
