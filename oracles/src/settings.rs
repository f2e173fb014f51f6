//! Shapes that oracles' typed `config:` settings share, beyond serde's
//! own (see `OracleConfig::parse`).

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
