//! Whether errors inside ahp block (`settings.fail_closed`), decided per
//! layer from the parsed files.
//!
//! The setting protects the user, so only switching it **on** is honoured
//! from any source: `AHP_FAIL_CLOSED` in the environment, or
//! `settings.fail_closed: true` in any layer — the user's
//! `~/.ahp/hooks.yaml`, and also the project's (turning it on only adds
//! protection). No later layer switches it off again: a cloned repository
//! that says `fail_closed: false` does not undo the user's `true`.
//!
//! When the policy cannot be loaded, the layers are read again one by one
//! with the same YAML parser ([`fail_closed_from_layers`]): a project file
//! broken further down still counts if it parses; one that does not parse
//! cannot switch anything on. The user layer decides for the user, so a
//! user layer that cannot be read or parsed, or whose
//! `settings.fail_closed` is not a boolean, fails closed: a broken policy
//! never silently takes the user's protection away.

use crate::layers::LoadOptions;
pub use crate::layers::{FAIL_CLOSED_ENV, fail_closed_env};
use crate::source::Layer;
use crate::yaml::{Node, NodeValue};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why errors inside ahp block instead of letting the call through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailClosed {
    /// `AHP_FAIL_CLOSED` is set (and not `0`, `false` or empty).
    Env,
    /// This layer file says `settings.fail_closed: true`.
    Layer(PathBuf),
    /// The user layer, which decides, cannot be read or parsed, or its
    /// `settings.fail_closed` is not `true` or `false`.
    UserLayerUnreadable(PathBuf),
}

impl fmt::Display for FailClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailClosed::Env => write!(f, "{FAIL_CLOSED_ENV} is set"),
            FailClosed::Layer(_) => write!(f, "settings.fail_closed is true"),
            FailClosed::UserLayerUnreadable(p) => write!(
                f,
                "the policy {}, which decides settings.fail_closed, cannot be read",
                p.display()
            ),
        }
    }
}

/// What one parsed layer says about `settings.fail_closed`: `Ok(None)`
/// when it does not say, `Err` (with what is wrong) when the layer is not
/// shaped like a policy there.
pub(crate) fn layer_value(root: &Node) -> Result<Option<bool>, String> {
    let settings = match &root.value {
        NodeValue::Null => return Ok(None),
        NodeValue::Map(_) => match root.get("settings") {
            None => return Ok(None),
            Some(s) => s,
        },
        _ => return Err(format!("the top level is {}, not a map", root.kind())),
    };
    let value = match &settings.value {
        NodeValue::Null => return Ok(None),
        NodeValue::Map(_) => match settings.get("fail_closed") {
            None => return Ok(None),
            Some(v) => v,
        },
        _ => return Err(format!("settings is {}, not a map", settings.kind())),
    };
    match value.value {
        NodeValue::Bool(b) => Ok(Some(b)),
        _ => Err(format!(
            "settings.fail_closed is {}, not true or false",
            value.kind()
        )),
    }
}

/// Decides `fail_closed` from the layer files alone, for when the policy
/// could not be loaded; `None` means fail open. See the [module
/// documentation](self).
pub fn fail_closed_from_layers(opts: &LoadOptions) -> Option<FailClosed> {
    if opts.fail_closed_env {
        return Some(FailClosed::Env);
    }
    for (layer, path) in opts.layer_paths() {
        // The user layer decides for the user, the managed one for the
        // organisation: either unreadable fails closed.
        let user = matches!(layer, Layer::User | Layer::Managed);
        match read_layer_value(&path, layer, opts) {
            Ok(Some(true)) => return Some(FailClosed::Layer(path)),
            Ok(_) => {}
            Err(why) if user => {
                tracing::debug!(path = %path.display(), %why, "user layer unreadable: failing closed");
                return Some(FailClosed::UserLayerUnreadable(path));
            }
            // A project or local file that cannot be read cannot switch
            // the setting on; the load error itself is reported anyway.
            Err(_) => {}
        }
    }
    None
}

/// `settings.fail_closed` of the file at `path` (`Ok(None)` when the file
/// does not exist or does not say).
fn read_layer_value(path: &Path, layer: Layer, opts: &LoadOptions) -> Result<Option<bool>, String> {
    // Read as the loader reads a layer: a FIFO or a symlinked project
    // file is an error here too, never a read that blocks.
    let Some(file) = crate::layers::read_layer(layer, path, opts).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let root = crate::yaml::parse(file).map_err(|e| e.to_string())?;
    layer_value(&root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LoadedConfig;
    use crate::source::SourceFile;
    use std::sync::Arc;

    fn load(layers: &[(Layer, &str)]) -> Result<LoadedConfig, crate::ConfigErrors> {
        let files = layers
            .iter()
            .map(|(layer, text)| {
                Arc::new(SourceFile {
                    layer: *layer,
                    path: format!("{}.yaml", layer.as_str()).into(),
                    text: text.to_string(),
                })
            })
            .collect();
        LoadedConfig::from_files(".".into(), files)
    }

    #[test]
    fn a_later_layer_cannot_switch_it_off() {
        let cfg = load(&[
            (Layer::User, "settings: {fail_closed: true}\n"),
            (Layer::Project, "settings:\n  fail_closed: false\n"),
            (Layer::Local, "settings:\n  fail_closed: false\n"),
        ])
        .unwrap();
        assert_eq!(
            cfg.fail_closed(),
            Some(&FailClosed::Layer("user.yaml".into()))
        );
        assert!(cfg.settings().unwrap().1);
    }

    #[test]
    fn any_layer_can_switch_it_on_and_none_means_open() {
        let cfg = load(&[(Layer::Project, "settings:\n  \"fail_closed\" : TRUE\n")]).unwrap();
        assert!(cfg.fail_closed().is_some());
        let cfg = load(&[(Layer::User, "settings:\n  fail_closed: false\n")]).unwrap();
        assert_eq!(cfg.fail_closed(), None);
        assert!(!cfg.settings().unwrap().1);
    }

    #[test]
    fn a_value_that_is_not_a_boolean_is_an_error_in_any_layer() {
        let err = load(&[
            (Layer::User, "settings:\n  fail_closed: yes\n"),
            (Layer::Project, "settings:\n  fail_closed: true\n"),
        ])
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("settings.fail_closed") && text.contains("user.yaml"),
            "{text}"
        );
    }
}
