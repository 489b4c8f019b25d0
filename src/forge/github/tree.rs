//! A JSON value read straight from an answer's text: its strings borrowed from the text where
//! they hold no escape, its objects' fields kept in the order `serde_json::Value` keeps them
//! (by name, the last of a repeated name winning), so it is written exactly as `serde_json`
//! writes the `Value` of the same text, at the cost of a few vectors instead of a string and a
//! map node per field. The summary read digests each PR's part of its answer this way
//! ([`super::summary`]).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// One JSON value of an answer, borrowing from its text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tree<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Tree<'a>>),
    /// Fields by name (as `serde_json::Map` without `preserve_order`), each name once.
    Object(Fields<'a>),
}

/// An object's fields, sorted by name, each name once.
pub(super) type Fields<'a> = Vec<(Cow<'a, str>, Tree<'a>)>;

impl<'a> Tree<'a> {
    /// The field `name` of an object; `None` for a missing field or a value that is no object.
    pub(super) fn get(&self, name: &str) -> Option<&Tree<'a>> {
        match self {
            Tree::Object(fields) => field(fields, name),
            _ => None,
        }
    }

    pub(super) fn as_bool(&self) -> Option<bool> {
        match self {
            Tree::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub(super) fn as_u64(&self) -> Option<u64> {
        match self {
            Tree::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Tree::String(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn is_null(&self) -> bool {
        matches!(self, Tree::Null)
    }
}

/// The field `name` of sorted `fields`.
pub(super) fn field<'f, 'a>(fields: &'f Fields<'a>, name: &str) -> Option<&'f Tree<'a>> {
    fields
        .binary_search_by(|(k, _)| k.as_ref().cmp(name))
        .ok()
        .map(|i| &fields[i].1)
}

/// `fields` as read, put in name order with the last of each name kept (as a map fed them
/// one after another keeps them).
pub(super) fn sorted(mut fields: Fields<'_>) -> Fields<'_> {
    // Stable: the fields of one name stay in the order they came, the last of them last.
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    // In place: the first of a name stays, given the value of each later one in turn.
    fields.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(&mut later.1, &mut kept.1);
        }
        same
    });
    fields
}

impl Tree<'_> {
    /// Writes the tree as `serde_json` writes the `Value` of the same text: compact, fields
    /// by name.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        match self {
            Tree::Null => out.extend_from_slice(b"null"),
            Tree::Bool(true) => out.extend_from_slice(b"true"),
            Tree::Bool(false) => out.extend_from_slice(b"false"),
            Tree::Number(n) => {
                // Infallible: a number always serializes, and a vector always takes it.
                let _ = serde_json::to_writer(&mut *out, n);
            }
            Tree::String(text) => write_str(text, out),
            Tree::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Tree::Object(fields) => write_fields(fields.iter(), out),
        }
    }
}

/// Writes an object of `fields` (in the order given), as [`Tree::write`] does.
pub(super) fn write_fields<'f, 'a: 'f>(
    fields: impl Iterator<Item = &'f (Cow<'a, str>, Tree<'a>)>,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, (name, value)) in fields.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(name, out);
        out.push(b':');
        value.write(out);
    }
    out.push(b'}');
}

/// Writes `text` as a JSON string, escaped as `serde_json` escapes it (quotes, backslashes and
/// control characters; nothing else).
fn write_str(text: &str, out: &mut Vec<u8>) {
    if text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        // Infallible: a string always serializes, and a vector always takes it.
        let _ = serde_json::to_writer(&mut *out, text);
    } else {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Tree<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

/// Builds a [`Tree`] as `serde_json::Value`'s own visitor builds a `Value`.
struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Tree::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Tree::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Tree::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok(Number::from_f64(n).map_or(Tree::Null, Tree::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Tree::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Tree::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Tree::String(Cow::Owned(s)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Tree::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Tree::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Tree::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Most objects of an answer have a few fields: room for them saves growing.
        let mut fields: Fields<'de> = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(name) = map.next_key::<Name<'de>>()? {
            fields.push((name.0, map.next_value()?));
        }
        Ok(Tree::Object(sorted(fields)))
    }
}

/// An object's field name, borrowed from the text when it holds no escape.
pub(super) struct Name<'a>(pub(super) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Name<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Name(Cow::Owned(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Texts a forge could send, each written back the way `Value` writes it.
    const TEXTS: &[&str] = &[
        r#"{"b": 1, "a": {"z": [1, -2, 3.5, 1e3, 0.1, -0, 18446744073709551615, -9223372036854775808], "y": null}}"#,
        r#"{"s": "plain", "c": "\u0001\u001f\u007f", "t": "tab\there \"quoted\" back\\slash \u00e9 \ud83d\ude00 \u003cb\u003e / \/", "u": "é😀"}"#,
        r#"{"k": 1, "k": 2, "j": {"k": [true, false, {}], "k": "last"}, "esc\u0061ped": 3, "escaped": 4}"#,
        r#"[{"b": 2, "a": 1}, [], "", 1.0, 1.50, 12345678901234567890123]"#,
        r#"{"pullRequest": {"headRefName": "x", "isCrossRepository": false, "baseRefName": "main"}, "baseRef": {"compare": {"behindBy": 0}}}"#,
        "null",
    ];

    #[test]
    fn a_tree_is_written_as_the_value_of_the_same_text() {
        for text in TEXTS {
            let tree: Tree<'_> = serde_json::from_str(text).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            let mut written = Vec::new();
            tree.write(&mut written);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                value.to_string(),
                "{text}"
            );
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed_and_fields_are_found_by_name() {
        let text = r#"{"b": "plain", "a": "esc\"aped", "c": {"n": 7, "t": true}}"#;
        let tree: Tree<'_> = serde_json::from_str(text).unwrap();
        assert!(matches!(
            tree.get("b"),
            Some(Tree::String(Cow::Borrowed("plain")))
        ));
        assert_eq!(tree.get("a").and_then(Tree::as_str), Some("esc\"aped"));
        let c = tree.get("c").unwrap();
        assert_eq!(c.get("n").and_then(Tree::as_u64), Some(7));
        assert_eq!(c.get("t").and_then(Tree::as_bool), Some(true));
        assert!(tree.get("missing").is_none());
        assert!(
            c.get("n").unwrap().get("n").is_none(),
            "a number has no fields"
        );
        assert!(!tree.is_null());
        assert!(serde_json::from_str::<Tree<'_>>("null").unwrap().is_null());
    }
}
