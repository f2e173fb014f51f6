//! Shapes that oracles' typed `config:` settings share, beyond serde's
//! own (see `OracleConfig::parse`).

use ahp_engine::OracleConfigError;
use ahp_engine::suggest::did_you_mean;
use schemars::JsonSchema;
use serde::Deserialize;
use std::marker::PhantomData;

/// `true`, `false`, or a list (`include_files: [docs/**]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoolOrList<T> {
    /// Switched on or off as a whole.
    Bool(bool),
    /// On, for these.
    List(Vec<T>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for BoolOrList<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = BoolOrList<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a list")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
                Ok(BoolOrList::Bool(b))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(a))
                    .map(BoolOrList::List)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

impl<T: JsonSchema> JsonSchema for BoolOrList<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("BoolOrList_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let item = generator.subschema_for::<T>();
        schemars::json_schema!({
            "anyOf": [{"type": "boolean"}, {"type": "array", "items": item}]
        })
    }
}

/// A whole number of at least `min` at `key`, or `default` when absent,
/// with a message that says both.
pub(crate) fn at_least(
    value: Option<u64>,
    key: &str,
    default: u64,
    min: u64,
) -> Result<u64, ahp_engine::OracleConfigError> {
    match value {
        None => Ok(default),
        Some(n) if n >= min => Ok(n),
        Some(n) => Err(ahp_engine::OracleConfigError::at(
            key,
            format!(
                "`{key}` must be a whole number of at least {min} (default {default}), found {n}"
            ),
        )),
    }
}

/// A number of milliseconds (`timeout_ms: 60000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Millis(pub u64);

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Millis;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number of milliseconds (e.g. 60000)")
            }
            fn visit_u64<E>(self, n: u64) -> Result<Millis, E> {
                Ok(Millis(n))
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Millis {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Millis".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 1})
    }
}

/// A time limit in milliseconds at `key` (a dotted path), from 1 to
/// `max_ms`.
pub(crate) fn timeout_ms(
    value: Option<Millis>,
    key: &str,
    max_ms: u64,
) -> Result<Option<std::time::Duration>, ahp_engine::OracleConfigError> {
    match value {
        None => Ok(None),
        Some(Millis(ms)) if (1..=max_ms).contains(&ms) => {
            Ok(Some(std::time::Duration::from_millis(ms)))
        }
        Some(Millis(ms)) => {
            let name = key.rsplit('.').next().unwrap_or(key);
            Err(ahp_engine::OracleConfigError::at(
                key,
                format!(
                    "{ms} is out of range: `{name}` must be a whole number of milliseconds between 1 and {max_ms}"
                ),
            ))
        }
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
