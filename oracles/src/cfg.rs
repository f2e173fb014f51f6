//! Small helpers for reading oracle `config:` values by hand, so every error
//! names the exact dotted key (`rules.0.intensity`).

use ahp_engine::OracleConfigError;
use ahp_engine::oracle::kind_of;
use ahp_engine::suggest::did_you_mean;
use serde_json::{Map, Value};

/// `prefix.key`, or `key` when `prefix` is empty.
pub(crate) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The map at `key`, or an error naming what was found.
pub(crate) fn as_map<'a>(
    v: &'a Value,
    key: &str,
    what: &str,
) -> Result<&'a Map<String, Value>, OracleConfigError> {
    v.as_object()
        .ok_or_else(|| OracleConfigError::at(key, format!("expected {what}, found {}", kind_of(v))))
}

pub(crate) use ahp_engine::oracle::check_map_keys as check_keys;

/// An optional string (absent or `null` = `None`).
pub(crate) fn opt_str<'a>(
    map: &'a Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<Option<&'a str>, OracleConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(OracleConfigError::at(
            join(prefix, key),
            format!("expected a string, found {}", kind_of(other)),
        )),
    }
}

/// One of `names` (case-insensitive), with a "did you mean" when not.
pub(crate) fn one_of<'n>(
    value: &str,
    names: &[&'n str],
    key: &str,
    what: &str,
) -> Result<&'n str, OracleConfigError> {
    let lower = value.trim().to_ascii_lowercase();
    if let Some(n) = names.iter().find(|n| **n == lower) {
        return Ok(n);
    }
    let hint = match did_you_mean(&lower, names.iter().copied()) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    };
    Err(OracleConfigError::at(
        key,
        format!(
            "unknown {what} `{value}`{hint}; expected one of {}",
            names.join(", ")
        ),
    ))
}
