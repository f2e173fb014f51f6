//! Reading a `config:` map into an oracle's typed settings.
//!
//! A serde deserializer over the config's JSON value that knows where it
//! is. Every error carries the dotted path of the value at fault
//! (`rules.0.intensity`), from which the loader finds the file, line and
//! column the user wrote; and it speaks a policy author's words ("unknown
//! key `max_file`; did you mean `max_files`?", "expected a whole number,
//! found a string") instead of Rust's (`u32`, `struct FileLimitConfig`).
//!
//! Enum values are matched ignoring ASCII case and `-`/`_`, as the
//! hand-written readers before it did: `Block`, `split-batch`.

use super::{OracleConfigError, kind_of};
use crate::suggest::suggest_key;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor,
};
use serde_json::{Map, Value};
use std::fmt;

/// Deserializes `value` (a config map, or a part of one at `path`) into `T`.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: &Value,
    path: &str,
) -> Result<T, OracleConfigError> {
    T::deserialize(De {
        value,
        path: Path::Root(path),
    })
    .map_err(|e| OracleConfigError {
        key: e.key.filter(|k| !k.is_empty()),
        message: e.message,
    })
}

/// A deserialization error: what, and the dotted path of where.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Error {
    key: Option<String>,
    message: String,
}

impl Error {
    fn new(message: impl Into<String>) -> Self {
        Error {
            key: None,
            message: message.into(),
        }
    }

    // The innermost value that fails names the path; outer ones keep it.
    fn at(mut self, path: Path<'_>) -> Self {
        if self.key.is_none() {
            self.key = Some(path.to_string());
        }
        self
    }
}

/// How a value a visitor did not expect reads in a message.
fn describe(u: &Unexpected<'_>) -> String {
    match u {
        Unexpected::Bool(_) => "a boolean".into(),
        Unexpected::Unsigned(n) => format!("a number ({n})"),
        Unexpected::Signed(n) => format!("a number ({n})"),
        Unexpected::Float(n) => format!("a number ({n})"),
        Unexpected::Str(s) => format!("a string (`{s}`)"),
        Unexpected::Char(c) => format!("a string (`{c}`)"),
        Unexpected::Unit | Unexpected::Option => "null".into(),
        Unexpected::Seq => "a list".into(),
        Unexpected::Map => "a map".into(),
        other => other.to_string(),
    }
}

/// How a JSON value reads in a message: numbers and short strings by
/// value, the rest by kind.
fn found(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) if s.chars().count() <= 40 => format!("a string (`{s}`)"),
        other => kind_of(other).to_string(),
    }
}

fn unknown_key(field: &str, expected: &[&str]) -> String {
    let hint = match suggest_key(field, expected) {
        Some(s) => format!("did you mean `{s}`?"),
        None if expected.is_empty() => "this oracle takes no settings".to_string(),
        None => format!("known keys: {}", expected.join(", ")),
    };
    format!("unknown key `{field}`; {hint}")
}

impl de::Error for Error {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Error::new(msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Error::new(format!("expected {exp}, found {}", describe(&unexp)))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Error::new(format!("expected {exp}, found {}", describe(&unexp)))
    }

    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        Error::new(format!("expected {exp}, found {len} items"))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let hint = match suggest_key(variant, expected) {
            Some(s) => format!(" (did you mean `{s}`?)"),
            None => String::new(),
        };
        Error::new(format!(
            "unknown value `{variant}`{hint}; expected one of {}",
            expected.join(", ")
        ))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Error::new(unknown_key(field, expected))
    }

    fn missing_field(field: &'static str) -> Self {
        Error::new(format!("missing `{field}`"))
    }

    fn duplicate_field(field: &'static str) -> Self {
        Error::new(format!("`{field}` is given twice"))
    }
}

/// Where a value sits: its parent's path and its key or index, spelled
/// out (`rules.0.intensity`) only when an error names it.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root(&'p str),
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn is_root(&self) -> bool {
        matches!(self, Path::Root(p) if p.is_empty())
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (parent, last): (&Path<'_>, &dyn fmt::Display) = match self {
            Path::Root(p) => return f.write_str(p),
            Path::Key(parent, key) => (parent, key),
            Path::Index(parent, i) => (parent, i),
        };
        if !parent.is_root() {
            write!(f, "{parent}.")?;
        }
        last.fmt(f)
    }
}

/// A value and the path it sits at.
struct De<'a, 'p> {
    value: &'a Value,
    path: Path<'p>,
}

impl<'a> De<'a, '_> {
    fn wrong(&self, expected: &str) -> Error {
        Error::new(format!("expected {expected}, found {}", found(self.value))).at(self.path)
    }

    fn visit_object<V: Visitor<'a>>(
        &self,
        map: &'a Map<String, Value>,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_map(MapDe {
            iter: map.iter(),
            value: None,
            path: &self.path,
        })
    }

    fn visit_array<V: Visitor<'a>>(&self, items: &'a [Value], v: V) -> Result<V::Value, Error> {
        let mut seq = SeqDe {
            iter: items.iter().enumerate(),
            path: &self.path,
        };
        let out = v.visit_seq(&mut seq)?;
        match seq.iter.len() {
            0 => Ok(out),
            _ => Err(de::Error::invalid_length(items.len(), &"fewer items")),
        }
    }
}

macro_rules! unsigned {
    ($($method:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
            match self.value.as_u64() {
                Some(n) if <$ty>::try_from(n).is_ok() => v.visit_u64(n).map_err(|e: Error| e.at(self.path)),
                Some(_) => Err(self.wrong(&format!("a whole number up to {}", <$ty>::MAX))),
                None => Err(self.wrong("a whole number")),
            }
        }
    )*};
}

macro_rules! signed {
    ($($method:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
            match self.value.as_i64() {
                Some(n) if <$ty>::try_from(n).is_ok() => v.visit_i64(n).map_err(|e: Error| e.at(self.path)),
                _ => Err(self.wrong("an integer")),
            }
        }
    )*};
}

impl<'a> de::Deserializer<'a> for De<'a, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        let out = match self.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => v.visit_u64(u),
                (_, Some(i), _) => v.visit_i64(i),
                (_, _, Some(f)) => v.visit_f64(f),
                _ => Err(self.wrong("a number")),
            },
            Value::String(s) => v.visit_borrowed_str(s),
            Value::Array(items) => self.visit_array(items, v),
            Value::Object(map) => self.visit_object(map, v),
        };
        out.map_err(|e: Error| e.at(self.path))
    }

    fn deserialize_bool<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Bool(b) => v.visit_bool(*b).map_err(|e: Error| e.at(self.path)),
            _ => Err(self.wrong("true or false")),
        }
    }

    unsigned!(deserialize_u8 u8, deserialize_u16 u16, deserialize_u32 u32, deserialize_u64 u64);
    signed!(deserialize_i8 i8, deserialize_i16 i16, deserialize_i32 i32, deserialize_i64 i64);

    fn deserialize_f32<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_f64(v)
    }

    fn deserialize_f64<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value.as_f64() {
            Some(f) => v.visit_f64(f).map_err(|e: Error| e.at(self.path)),
            None => Err(self.wrong("a number")),
        }
    }

    fn deserialize_char<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_str<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => v.visit_borrowed_str(s).map_err(|e: Error| e.at(self.path)),
            _ => Err(self.wrong("a string")),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_any(v)
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_any(v)
    }

    fn deserialize_option<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => v.visit_none(),
            _ => {
                let path = self.path;
                v.visit_some(self).map_err(|e: Error| e.at(path))
            }
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => v.visit_unit(),
            _ => Err(self.wrong("nothing (null)")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        let path = self.path;
        v.visit_newtype_struct(self).map_err(|e: Error| e.at(path))
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => self
                .visit_array(items, v)
                .map_err(|e: Error| e.at(self.path)),
            _ => Err(self.wrong("a list")),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value, Error> {
        self.deserialize_seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(v)
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(map) => self
                .visit_object(map, v)
                .map_err(|e: Error| e.at(self.path)),
            _ => Err(self.wrong("a map")),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(map) => self
                .visit_object(map, v)
                .map_err(|e: Error| e.at(self.path)),
            _ => Err(self.wrong(&format!("a map with the keys {}", fields.join(", ")))),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        let (variant, value) = match self.value {
            Value::String(s) => (s.as_str(), None),
            Value::Object(map) if map.len() == 1 => match map.iter().next() {
                Some((k, val)) => (k.as_str(), Some(val)),
                None => return Err(self.wrong(&format!("one of {}", variants.join(", ")))),
            },
            _ => return Err(self.wrong(&format!("one of {}", variants.join(", ")))),
        };
        let wanted = |name: &str| name.trim().to_ascii_lowercase().replace('-', "_");
        let canonical = variants
            .iter()
            .find(|known| wanted(known) == wanted(variant))
            .copied();
        let parent = self.path;
        let path = match value {
            Some(_) => Path::Key(&parent, variant),
            None => parent,
        };
        let Some(canonical) = canonical else {
            return Err(<Error as de::Error>::unknown_variant(variant, variants).at(path));
        };
        v.visit_enum(EnumDe {
            variant: canonical,
            value,
            path,
        })
        .map_err(|e: Error| e.at(path))
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }
}

struct MapDe<'a, 'p> {
    iter: serde_json::map::Iter<'a>,
    value: Option<(&'a str, &'a Value)>,
    path: &'p Path<'p>,
}

impl<'a> de::MapAccess<'a> for MapDe<'a, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(key))
            .map(Some)
            .map_err(|e: Error| e.at(Path::Key(self.path, key)))
    }

    fn next_value_seed<S: DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, Error> {
        let Some((key, value)) = self.value.take() else {
            return Err(Error::new("a value without its key"));
        };
        seed.deserialize(De {
            value,
            path: Path::Key(self.path, key),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct SeqDe<'a, 'p> {
    iter: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    path: &'p Path<'p>,
}

impl<'a> de::SeqAccess<'a> for &mut SeqDe<'a, '_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        match self.iter.next() {
            None => Ok(None),
            Some((i, value)) => seed
                .deserialize(De {
                    value,
                    path: Path::Index(self.path, i),
                })
                .map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An enum value: a bare variant name (`block`), or a one-key map from the
/// variant to its data (`{regex: '…'}`).
struct EnumDe<'a, 'p> {
    variant: &'static str,
    value: Option<&'a Value>,
    path: Path<'p>,
}

impl<'a> de::EnumAccess<'a> for EnumDe<'a, '_> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let v = seed.deserialize(self.variant.into_deserializer())?;
        Ok((v, self))
    }
}

impl<'a> de::VariantAccess<'a> for EnumDe<'a, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None | Some(Value::Null) => Ok(()),
            Some(v) => Err(Error::new(format!(
                "`{}` takes no value, found {}",
                self.variant,
                found(v)
            ))),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<S::Value, Error> {
        match self.value {
            Some(value) => seed.deserialize(De {
                value,
                path: self.path,
            }),
            None => Err(Error::new(format!("`{}` needs a value", self.variant))),
        }
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value, Error> {
        match self.value {
            Some(value) => de::Deserializer::deserialize_seq(
                De {
                    value,
                    path: self.path,
                },
                v,
            ),
            None => Err(Error::new(format!("`{}` needs a list", self.variant))),
        }
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(value) => de::Deserializer::deserialize_struct(
                De {
                    value,
                    path: self.path,
                },
                "",
                fields,
                v,
            ),
            None => Err(Error::new(format!("`{}` needs a map", self.variant))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Limits {
        max_files: u32,
        #[serde(default)]
        action: Action,
        #[serde(default)]
        rules: Vec<Rule>,
    }

    #[derive(Deserialize, Debug, PartialEq, Default)]
    #[serde(rename_all = "snake_case")]
    enum Action {
        #[default]
        Control,
        SplitBatch,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Rule {
        condition: String,
        #[serde(default)]
        quiet: bool,
    }

    fn err(v: Value) -> OracleConfigError {
        from_value::<Limits>(&v, "").unwrap_err()
    }

    #[test]
    fn reads_a_valid_config() {
        let l: Limits = from_value(
            &json!({"max_files": 3, "action": "Split-Batch", "rules": [{"condition": "x"}]}),
            "",
        )
        .unwrap();
        assert_eq!(l.max_files, 3);
        assert_eq!(l.action, Action::SplitBatch);
        assert_eq!(l.rules[0].condition, "x");
    }

    #[test]
    fn errors_name_the_path_in_the_authors_words() {
        let e = err(json!({"max_file": 3}));
        assert_eq!(e.key.as_deref(), Some("max_file"));
        assert!(e.message.contains("did you mean `max_files`?"), "{e}");
        let e = err(json!({"max_files": "3"}));
        assert_eq!(e.key.as_deref(), Some("max_files"));
        assert_eq!(e.message, "expected a whole number, found a string (`3`)");
        let e = err(
            json!({"max_files": 3, "rules": [{"condition": "x"}, {"condition": "y", "quiet": 1}]}),
        );
        assert_eq!(e.key.as_deref(), Some("rules.1.quiet"));
        assert_eq!(e.message, "expected true or false, found a number (1)");
        let e = err(json!({"max_files": 3, "rules": [{}]}));
        assert_eq!(e.key.as_deref(), Some("rules.0"));
        assert_eq!(e.message, "missing `condition`");
        let e = err(json!({"max_files": 3, "action": "blok"}));
        assert_eq!(e.key.as_deref(), Some("action"));
        assert_eq!(
            e.message,
            "unknown value `blok`; expected one of control, split_batch"
        );
        let e = err(json!({"max_files": 3, "action": "contrl"}));
        assert!(e.message.contains("did you mean `control`?"), "{e}");
        let e = err(json!({}));
        assert_eq!(e.key, None);
        assert_eq!(e.message, "missing `max_files`");
        let e = err(json!({"max_files": 3, "rules": "x"}));
        assert_eq!(e.message, "expected a list, found a string (`x`)");
    }
}
