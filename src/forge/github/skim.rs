//! JSON text read where it lies, without building values: an object's members found by
//! skimming over its text, and a value digested in one pass over its bytes. The summary read
//! ([`super::summary`]) takes from each PR's part of its answer the few values it tells apart
//! and digests the rest into the PR's fingerprint, with no tree and no copy.
//!
//! The digest tells a broken text (one that ends early, an object or an array that does not
//! close, a value that starts with a character no JSON value starts with) from JSON; it does
//! not check what a string or a number holds, nor where commas stand. The other functions take text already read as
//! JSON; given other text, each still gives some answer, and none ever panics.
//!
//! The digest ([`Cursor::digest`]) takes each string, number, `true`, `false` and `null` as
//! sent (escapes as they are: a forge writes one value the same way each time), arrays item by
//! item in order, and an object as how many members it has and the sum of its members' digests
//! (each that of its name and its value): whitespace between tokens and the order of an
//! object's members do not change it, any other change does. GraphQL answers a query's fields
//! in the order the query selects them (the specification's "Serialized Map Ordering"), so the
//! text alone would do while the query stays the same; not hanging on the order, the digest
//! also holds over a query whose fields are selected in another order, as the fingerprint
//! kept before it did.

use std::ops::Range;

use crate::core::hash::{Fingerprint, Pieces};

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first position from `i` that is not whitespace.
fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_space) {
        i += 1;
    }
    i
}

/// The end (past the closing quote) of the string whose opening quote is at `i`; the text's
/// end when it has none.
fn string_end(b: &[u8], i: usize) -> usize {
    string_close(b, i).unwrap_or(b.len())
}

/// The end (past the closing quote) of the string whose opening quote is at `i`; `None` when
/// it has none.
fn string_close(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while let Some(k) = b
        .get(j..)
        .and_then(|rest| rest.iter().position(|&c| c == b'"' || c == b'\\'))
    {
        j += k;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        // A backslash: the character it escapes is no closing quote.
        j += 2;
    }
    None
}

/// The end of the number, `true`, `false` or `null` at `i`.
fn scalar_end(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|rest| {
            rest.iter()
                .position(|&c| matches!(c, b',' | b'}' | b']') || is_space(c))
        })
        .map_or(b.len(), |k| i + k)
}

/// The end of the value at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0_usize;
            let mut j = i;
            while let Some(k) = b.get(j..).and_then(|rest| {
                rest.iter()
                    .position(|&c| matches!(c, b'"' | b'{' | b'[' | b'}' | b']'))
            }) {
                j += k;
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                }
                j += 1;
            }
            b.len()
        }
        Some(_) => scalar_end(b, i),
        None => b.len(),
    }
}

/// The member of an object that starts at `at` (just past the object's `{` or a member's
/// value): its name's span, quotes included, and where its value starts; `None` at the
/// object's end.
fn member_start(b: &[u8], at: usize) -> Option<(Range<usize>, usize)> {
    let mut i = skip_space(b, at);
    if b.get(i) == Some(&b',') {
        i = skip_space(b, i + 1);
    }
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let name = i..string_end(b, i);
    let colon = skip_space(b, name.end);
    (b.get(colon) == Some(&b':')).then(|| (name, skip_space(b, colon + 1)))
}

/// The members of an object's text, in the order they come: each name (its text between the
/// quotes, escapes as sent) and its value's text. None for a value that is no object.
#[derive(Debug, Clone)]
pub(super) struct Members<'a>(Cursor<'a>);

/// The members of the object `text` (see [`Members`]).
pub(super) fn members(text: &str) -> Members<'_> {
    Members(Cursor::new(text))
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let name = self.0.next_name()?;
        Some((name, self.0.skip()?))
    }
}

/// The value of the member `name` of the object `text`: the first of that name (a GraphQL
/// answer names each field once).
pub(super) fn member<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    members(text).find(|(n, _)| *n == name).map(|(_, v)| v)
}

/// The value `true` or `false` of a value's text.
pub(super) fn as_bool(text: &str) -> Option<bool> {
    match text {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The whole number of a value's text.
pub(super) fn as_u64(text: &str) -> Option<u64> {
    text.parse().ok()
}

/// The string of a value's text, its escapes read.
pub(super) fn as_string(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str(text).ok()
    } else {
        Some(inner.to_owned())
    }
}

/// Where a value was met: the names of the members it is in, from the outside in.
pub(super) type Path<'p, 'a> = &'p [&'a str];

/// Told each value a digest goes through (see [`Cursor::digest`]).
pub(super) type Visit<'v, 'a> = &'v mut dyn FnMut(Path<'_, 'a>, &'a str);

/// Steps through an object's members one at a time, each value skipped over or digested:
/// one pass over the text.
#[derive(Debug, Clone)]
pub(super) struct Cursor<'a> {
    text: &'a str,
    at: usize,
    /// Where the value of the member just named starts, until it is taken.
    value: Option<usize>,
}

impl<'a> Cursor<'a> {
    /// A cursor over the members of the object `text` (none when it is no object).
    pub(super) fn new(text: &'a str) -> Self {
        let b = text.as_bytes();
        let start = skip_space(b, 0);
        let at = if b.get(start) == Some(&b'{') {
            start + 1
        } else {
            b.len()
        };
        Cursor {
            text,
            at,
            value: None,
        }
    }

    /// The next member's name (its value, when not taken, is skipped over).
    pub(super) fn next_name(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        if let Some(value) = self.value.take() {
            self.at = value_end(b, value);
        }
        let (name, value) = member_start(b, self.at)?;
        self.value = Some(value);
        self.at = value;
        self.text.get(name.start + 1..name.end.checked_sub(1)?)
    }

    /// The text of the value of the member just named.
    pub(super) fn skip(&mut self) -> Option<&'a str> {
        let value = self.value.take()?;
        self.at = value_end(self.text.as_bytes(), value);
        self.text.get(value..self.at)
    }

    /// Whether the value of the member just named is an object.
    pub(super) fn at_object(&self) -> bool {
        self.value
            .is_some_and(|v| self.text.as_bytes().get(v) == Some(&b'{'))
    }

    /// Reads the value of the member just named, an object, with a cursor of its own over its
    /// members (`read` steps through them); this cursor then goes on past its end. `None` when
    /// the value is no object, when `read` says none, or when the object does not end where
    /// its members do (a broken text).
    pub(super) fn object<T>(
        &mut self,
        read: impl FnOnce(&mut Cursor<'a>) -> Option<T>,
    ) -> Option<T> {
        if !self.at_object() {
            return None;
        }
        let value = self.value.take()?;
        let mut inner = Cursor {
            text: self.text,
            at: value + 1,
            value: None,
        };
        let read = read(&mut inner);
        let end = inner.close();
        self.at = end.unwrap_or(self.text.len());
        end.and(read)
    }

    /// Past the object's closing brace, once its last member is read; `None` when it does not
    /// close there.
    fn close(&mut self) -> Option<usize> {
        let b = self.text.as_bytes();
        if let Some(value) = self.value.take() {
            self.at = value_end(b, value);
        }
        let i = skip_space(b, self.at);
        (b.get(i) == Some(&b'}')).then_some(i + 1)
    }

    /// Whether the whole text is the object, read to its end: it closes where its members
    /// end, and nothing but whitespace follows.
    pub(super) fn closed(mut self) -> bool {
        let len = self.text.len();
        self.close()
            .is_some_and(|end| skip_space(self.text.as_bytes(), end) == len)
    }

    /// The digest of the value of the member just named, its member `leave_out` left out when
    /// it is an object (see the module doc), written as a [`Fingerprint`]; `visit` is told each
    /// member's value within it, the member left out's too, by its path and its text (an
    /// object's or an array's by its first character). `None` when the value is broken: it
    /// ends early, an object or an array does not close, or a value starts with a character
    /// no JSON value starts with.
    pub(super) fn digest(&mut self, leave_out: &str, visit: Visit<'_, 'a>) -> Option<String> {
        let value = self.value.take()?;
        let mut digester = Digester {
            text: self.text,
            path: Vec::new(),
            visit,
            broken: false,
        };
        let mut digest = Pieces::default();
        self.at = digester.value(value, &mut digest, Some(leave_out));
        (!digester.broken).then(|| Fingerprint::written(digest.bits()))
    }
}

/// Marks where an object or an array stands in a digest, and where an array ends.
const OBJECT: u64 = 0x6f62_6a65_6374_7b7d;
const ARRAY: u64 = 0x6172_7261_795b_5d00;
const ARRAY_END: u64 = 0x6172_7261_795d_0000;

/// Digests the values of one text (see [`Cursor::digest`]).
struct Digester<'a, 'v> {
    text: &'a str,
    /// The names of the members the value in hand is in.
    path: Vec<&'a str>,
    visit: Visit<'v, 'a>,
    /// Whether the text was found broken (see [`Cursor::digest`]).
    broken: bool,
}

impl Digester<'_, '_> {
    /// Adds the value at `i` to `out` (an object's member `leave_out` left out); its end.
    fn value(&mut self, i: usize, out: &mut Pieces, leave_out: Option<&str>) -> usize {
        let b = self.text.as_bytes();
        let end = match b.get(i) {
            Some(b'{') => {
                let (members, end) = self.object(i, leave_out);
                out.word(OBJECT);
                out.word(members.count);
                out.word(members.sum[0]);
                out.word(members.sum[1]);
                end
            }
            Some(b'[') => self.array(i, out),
            Some(b'"') => {
                let Some(end) = string_close(b, i) else {
                    self.broken = true;
                    return b.len();
                };
                out.part(&b[i..end]);
                end
            }
            Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                let end = scalar_end(b, i);
                out.part(&b[i..end]);
                end
            }
            _ => {
                self.broken = true;
                return i;
            }
        };
        let told = match b[i] {
            b'{' | b'[' => self.text.get(i..=i),
            _ => self.text.get(i..end),
        };
        if let Some(told) = told {
            (self.visit)(&self.path, told);
        }
        end
    }

    /// The object at `i`'s count of members and the sum of their digests; its end.
    fn object(&mut self, i: usize, leave_out: Option<&str>) -> (Sum, usize) {
        let b = self.text.as_bytes();
        let mut members = Sum::default();
        let mut at = i + 1;
        while let Some((name, value)) = member_start(b, at) {
            let unquoted = self
                .text
                .get(name.start + 1..name.end.saturating_sub(1))
                .unwrap_or("");
            let mut member = Pieces::default();
            // Quoted, so where the name ends is told.
            member.part(&b[name]);
            self.path.push(unquoted);
            at = self.value(value, &mut member, None);
            self.path.pop();
            if leave_out != Some(unquoted) {
                members.add(member.bits());
            }
        }
        let close = skip_space(b, at);
        if b.get(close) == Some(&b'}') {
            (members, close + 1)
        } else {
            self.broken = true;
            (members, b.len())
        }
    }

    /// Adds the array at `i` to `out`, its items in order; its end.
    fn array(&mut self, i: usize, out: &mut Pieces) -> usize {
        let b = self.text.as_bytes();
        out.word(ARRAY);
        let mut at = skip_space(b, i + 1);
        loop {
            match b.get(at) {
                Some(b']') => {
                    out.word(ARRAY_END);
                    return at + 1;
                }
                Some(b',') => at = skip_space(b, at + 1),
                Some(_) => {
                    let end = self.value(at, out, None);
                    if self.broken {
                        return b.len();
                    }
                    at = skip_space(b, end);
                }
                None => {
                    self.broken = true;
                    return at;
                }
            }
        }
    }
}

/// An object's members, digested: how many, and the sum of their digests (so their order
/// does not count).
#[derive(Debug, Default)]
struct Sum {
    count: u64,
    sum: [u64; 2],
}

impl Sum {
    fn add(&mut self, [x, y]: [u64; 2]) {
        self.count += 1;
        self.sum = [self.sum[0].wrapping_add(x), self.sum[1].wrapping_add(y)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest of the value `text`, its member `baseRef` left out (a summary's
    /// comparison), with what the digest was told of each value.
    fn told(text: &str) -> (String, Vec<(String, String)>) {
        let wrapped = format!("{{\"v\": {text}}}");
        let mut cursor = Cursor::new(&wrapped);
        assert_eq!(cursor.next_name(), Some("v"));
        let mut seen = Vec::new();
        let digest = cursor
            .digest("baseRef", &mut |path, value| {
                seen.push((path.join("."), value.to_owned()));
            })
            .unwrap();
        (digest, seen)
    }

    fn digest(text: &str) -> String {
        told(text).0
    }

    #[test]
    fn members_are_skimmed_in_order_with_their_values_text() {
        let text = r#" { "a" : 1, "b":{"c": [1, {"d": "}"}], "e": "x\"]"} ,"esc\"aped": "v\\" ,
            "n": null, "t": true } "#;
        let got: Vec<(&str, &str)> = members(text).collect();
        assert_eq!(
            got,
            vec![
                ("a", "1"),
                ("b", r#"{"c": [1, {"d": "}"}], "e": "x\"]"}"#),
                ("esc\\\"aped", r#""v\\""#),
                ("n", "null"),
                ("t", "true"),
            ]
        );
        let b = member(text, "b").unwrap();
        assert_eq!(member(b, "e").and_then(as_string).as_deref(), Some("x\"]"));
        assert_eq!(member(b, "c"), Some(r#"[1, {"d": "}"}]"#));
        assert_eq!(member(text, "t").and_then(as_bool), Some(true));
        assert_eq!(member(text, "a").and_then(as_u64), Some(1));
        assert_eq!(member(text, "n").and_then(as_bool), None);
        assert_eq!(member(text, "missing"), None);
        assert_eq!(members("[1, 2]").count(), 0, "an array has no members");
        assert_eq!(members("null").count(), 0);
        assert_eq!(members("{}").count(), 0);
        assert_eq!(as_string(r#""plain""#).as_deref(), Some("plain"));
        assert_eq!(as_string(r#""\u00e9\n""#).as_deref(), Some("é\n"));
        assert_eq!(as_string("1"), None);
    }

    #[test]
    fn a_digest_ignores_spacing_and_member_order_and_nothing_else() {
        let text = r#"{"pullRequest": {"title": "a \"b\"", "checks": [{"n": "x", "s": 1}, {"n": "y", "s": null}]}, "z": [1, 2.50, true]}"#;
        let one = digest(text);
        assert!(Fingerprint::is_written(&one), "{one}");
        let same = [
            // Compact.
            r#"{"pullRequest":{"title":"a \"b\"","checks":[{"n":"x","s":1},{"n":"y","s":null}]},"z":[1,2.50,true]}"#,
            // Spread out.
            "{\n  \"pullRequest\" : {\n\t\"title\" : \"a \\\"b\\\"\",\r\n \"checks\" : [ { \"n\" : \"x\" , \"s\" : 1 } , { \"n\" : \"y\", \"s\" : null } ] } ,\n \"z\" : [ 1 , 2.50 , true ] }\n",
            // Members the other way round, at every depth.
            r#"{"z": [1, 2.50, true], "pullRequest": {"checks": [{"s": 1, "n": "x"}, {"s": null, "n": "y"}], "title": "a \"b\""}}"#,
            // The member left out changes nothing, wherever it is.
            r#"{"baseRef": {"compare": {"behindBy": 3}}, "pullRequest": {"title": "a \"b\"", "checks": [{"n": "x", "s": 1}, {"n": "y", "s": null}]}, "z": [1, 2.50, true]}"#,
            r#"{"pullRequest": {"title": "a \"b\"", "checks": [{"n": "x", "s": 1}, {"n": "y", "s": null}]}, "baseRef": null, "z": [1, 2.50, true]}"#,
        ];
        for other in same {
            assert_eq!(digest(other), one, "{other}");
        }
        let different = [
            // A value.
            text.replace(r#""s": 1"#, r#""s": 2"#),
            text.replace("2.50", "2.5"),
            text.replace(r#"a \"b\""#, r#"a \"c\""#),
            text.replace(r#""title": "a \"b\"""#, r#""title": "a \"b\" ""#),
            // A name.
            text.replace(r#""title""#, r#""titles""#),
            // The array's order.
            text.replace("[1, 2.50, true]", "[2.50, 1, true]"),
            // A value moved to another member.
            text.replace(r#"{"n": "x", "s": 1}"#, r#"{"n": 1, "s": "x"}"#),
            // A member more or fewer; the same member twice.
            text.replace(r#""s": null}"#, r#""s": null, "t": null}"#),
            text.replace(r#", "z": [1, 2.50, true]"#, ""),
            text.replace(r#""n": "y", "#, r#""n": "y", "n": "y", "#),
            // An empty value.
            text.replace("[1, 2.50, true]", "[]"),
            text.replace("[1, 2.50, true]", "{}"),
            text.replace("[1, 2.50, true]", r#""""#),
            // `baseRef` is only left out at the top.
            text.replace(r#""checks""#, r#""baseRef""#),
        ];
        for other in &different {
            assert_ne!(digest(other), one, "{other}");
        }
        // Each value is told by its path, the member left out's too, inner ones first.
        let (_, seen) = told(r#"{"a": {"b": [1, {"c": null}]}, "baseRef": {"d": "x"}}"#);
        let seen: Vec<(&str, &str)> = seen.iter().map(|(p, v)| (p.as_str(), v.as_str())).collect();
        assert_eq!(
            seen,
            [
                ("a.b", "1"),
                ("a.b.c", "null"),
                ("a.b", "{"),
                ("a.b", "["),
                ("a", "{"),
                ("baseRef.d", r#""x""#),
                ("baseRef", "{"),
                ("", "{"),
            ]
        );
        // A digest is that of its own text only, whatever surrounds it.
        let part = member(r#"{"s0": {"a": 1}, "s1": {"a": 2}}"#, "s0").unwrap();
        assert_eq!(digest(part), digest(r#"{"a": 1}"#));
        // Kept in the database: the same on every build and machine.
        assert_eq!(
            digest(r#"{"a": [1, "b"]}"#),
            "#ba7d9ba83d00f4d9e118febceb68a7dc"
        );
    }

    #[test]
    fn a_broken_text_has_no_digest_and_no_text_panics() {
        let texts = [
            "",
            " ",
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            "{\"",
            "{\"a",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":\"",
            "{\"a\":\"\\",
            "{\"a\":[",
            "{\"a\":{",
            "{\"a\" 1}",
            "{,}",
            "[,,]",
            "[}",
            "{]",
            "{\"a\":}",
            "{\"a\":1,}",
            "é",
            "{\"é\":\"é\\é\"}",
            "[1 2]",
            "{\"a\":1 \"b\":2}",
        ];
        // The value of a member that is not closed: only what follows the name is read.
        let digest_of = |text: &str| {
            let open = format!("{{\"v\": {text}");
            let mut cursor = Cursor::new(&open);
            cursor.next_name();
            cursor.digest("baseRef", &mut |_, _| {})
        };
        for text in texts {
            let _ = digest_of(text);
            let _ = members(text).count();
            let _ = member(text, "a");
        }
        for broken in [
            "",
            "{",
            "[",
            "]",
            "}",
            "\"",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":[",
            "{\"a\":{",
            "{\"a\" 1}",
            "[}",
            "{]",
            "{\"a\":}",
            "{\"a\": [1, {\"b\": x}]}",
            "é",
            "{\"a\": 1 ",
        ] {
            assert_eq!(digest_of(broken), None, "{broken}");
        }
        for whole in [
            "{}",
            "[]",
            "1",
            "-2.5e3",
            "\"x\"",
            "null",
            "{\"a\": [1, {\"b\": null}]}",
        ] {
            assert!(digest_of(whole).is_some(), "{whole}");
        }
    }
}
