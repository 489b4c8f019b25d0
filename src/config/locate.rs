//! Where a key or value sits in a YAML text, for errors found after parsing.
//!
//! Instead of a hand-written line scanner, the text is parsed a second time by serde_yaml with a
//! *probe*: a deserializer that walks down a key path, skipping everything else, and fails on
//! purpose when it reaches the target. serde_yaml stamps that failure with the target's line and
//! column, exactly as it does for a real error. So positions are right for block and flow style,
//! quoted keys, comments and anchors alike, and they come from the same parser as the values.
//! It runs only when an error is being reported.

use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One step of a key path: a mapping key or a sequence index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Which end of the last step to point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The value (for a sequence item: the item).
    Value,
    /// The key itself (only meaningful when the last step is a key).
    Key,
}

/// A 1-based line and column.
pub(crate) type Position = (usize, usize);

/// The marker the probe fails with; never shown to anyone.
const SENTINEL: &str = "\u{1}pr-monitor position probe\u{1}";

/// The position of `path` in `text`, or `None` when the path is not in the document.
pub(crate) fn locate(text: &str, path: &[Seg<'_>], target: Target) -> Option<Position> {
    run(
        text,
        Probe {
            path,
            at_key: target == Target::Key,
            skip: 0,
        },
    )
}

/// The position of the second `key` in the mapping at `path`: where a repeated key is.
pub(crate) fn locate_repeat(text: &str, path: &[Seg<'_>], key: &str) -> Option<Position> {
    let mut full = path.to_vec();
    full.push(Seg::Key(key));
    run(
        text,
        Probe {
            path: &full,
            at_key: true,
            skip: 1,
        },
    )
}

/// For serde's "duplicate field `x`" (which it reports at the start of the mapping, however
/// far down the repeat is): the position of the repeat.
pub(crate) fn duplicate_field(text: &str, message: &str) -> Option<Position> {
    let (path, rest) = match message.split_once(": duplicate field `") {
        Some((path, rest)) => (path, rest),
        None => ("", message.strip_prefix("duplicate field `")?),
    };
    let key = rest.strip_suffix('`')?;
    locate_repeat(text, &parse_path(path), key)
}

/// The inverse of [`render`], for paths without dots or brackets inside keys.
fn parse_path(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, indices) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        for index in indices.split(['[', ']']).filter(|i| !i.is_empty()) {
            match index.parse() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(index)),
            }
        }
    }
    out
}

fn run(text: &str, probe: Probe<'_>) -> Option<Position> {
    match probe.deserialize(serde_yaml::Deserializer::from_str(text)) {
        Err(e) if e.to_string().contains(SENTINEL) => e.location().map(|l| (l.line(), l.column())),
        _ => None,
    }
}

/// The position of `path`, else of its nearest enclosing node that exists, else line 1 column 1.
pub(crate) fn position(text: &str, path: &[Seg<'_>], target: Target) -> Position {
    if let Some(p) = locate(text, path, target) {
        return p;
    }
    (0..path.len())
        .rev()
        .find_map(|n| locate(text, &path[..n], Target::Value))
        .unwrap_or((1, 1))
}

/// `pr.poll_sec`, `watch[1].pr`: a path written the way serde_yaml writes one in its messages.
pub(crate) fn render(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

struct Probe<'p> {
    path: &'p [Seg<'p>],
    at_key: bool,
    /// At the last step, with `at_key`: how many matching keys to pass over first.
    skip: usize,
}

impl Probe<'_> {
    /// A scalar reached: it is the target when the path is used up.
    fn scalar<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(SENTINEL))
        } else {
            Ok(())
        }
    }
}

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.scalar()
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.scalar()
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar()
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar()
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(SENTINEL));
        };
        let Seg::Key(name) = *first else {
            return Ok(());
        };
        let on_key = self.at_key && rest.is_empty();
        let mut skip = if on_key { self.skip } else { 0 };
        while let Some(matched) = map.next_key_seed(KeyProbe {
            name,
            fail: on_key && skip == 0,
        })? {
            if matched && !on_key {
                return map.next_value_seed(Probe { path: rest, ..self });
            }
            if matched {
                skip -= 1;
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(SENTINEL));
        };
        let Seg::Index(index) = *first else {
            return Ok(());
        };
        for _ in 0..index {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Probe { path: rest, ..self })
            .map(|_| ())
    }
}

/// Reads a mapping key as text: `true` when it is `name`; fails *at the key* when `fail`.
struct KeyProbe<'a> {
    name: &'a str,
    fail: bool,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyProbe<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        match (v == self.name, self.fail) {
            (true, true) => Err(E::custom(SENTINEL)),
            (matched, _) => Ok(matched),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Seg::{Index, Key};
    use super::*;

    const BLOCK: &str = "\
# a comment
database: pr-monitor.db
pr:
  auto_fix: true
  poll_sec: -5        # trailing comment
agents:
  fixer:
    inbox: inbox/fixer
    logins: [fixer-bot, other-bot]
watch:
  - pr: octo/app#1
  - repo: octo/app
    labels:
      - automerge
      - ready
\"quoted key\": 1
";

    const FLOW: &str = "\
notify:
  email: { smtp_url: \"smtps://smtp.example.com:465\", username_env: SMTP_USER,
           from: \"pr-monitor@example.com\", to: [\"owner@example.com\", bad] }
  slack: {webhook_url_env: SLACK_WEBHOOK_URL}
";

    #[test]
    fn finds_values_and_keys_in_block_style() {
        let cases: &[(&[Seg<'_>], Target, Option<Position>)] = &[
            (&[Key("database")], Target::Value, Some((2, 11))),
            (&[Key("database")], Target::Key, Some((2, 1))),
            (&[Key("pr"), Key("poll_sec")], Target::Value, Some((5, 13))),
            (&[Key("pr"), Key("poll_sec")], Target::Key, Some((5, 3))),
            (&[Key("agents"), Key("fixer")], Target::Key, Some((7, 3))),
            (
                &[Key("agents"), Key("fixer"), Key("inbox")],
                Target::Value,
                Some((8, 12)),
            ),
            (
                &[Key("agents"), Key("fixer"), Key("logins"), Index(1)],
                Target::Value,
                Some((9, 25)),
            ),
            (
                &[Key("watch"), Index(0), Key("pr")],
                Target::Value,
                Some((11, 9)),
            ),
            (&[Key("watch"), Index(1)], Target::Value, Some((12, 5))),
            (
                &[Key("watch"), Index(1), Key("labels"), Index(1)],
                Target::Value,
                Some((15, 9)),
            ),
            (&[Key("quoted key")], Target::Key, Some((16, 1))),
            (&[], Target::Value, Some((2, 1))),
            (&[Key("nope")], Target::Value, None),
            (&[Key("pr"), Key("nope")], Target::Key, None),
            (&[Key("watch"), Index(9)], Target::Value, None),
            (&[Key("database"), Key("deeper")], Target::Value, None),
            (&[Key("watch"), Key("not-a-seq-step")], Target::Value, None),
        ];
        for (path, target, want) in cases {
            assert_eq!(locate(BLOCK, path, *target), *want, "{}", render(path));
        }
    }

    #[test]
    fn finds_values_inside_flow_collections() {
        let cases: &[(&[Seg<'_>], Target, Position)] = &[
            (
                &[Key("notify"), Key("email"), Key("smtp_url")],
                Target::Value,
                (2, 22),
            ),
            (
                &[Key("notify"), Key("email"), Key("from")],
                Target::Key,
                (3, 12),
            ),
            (
                &[Key("notify"), Key("email"), Key("to"), Index(1)],
                Target::Value,
                (3, 70),
            ),
            (
                &[Key("notify"), Key("slack"), Key("webhook_url_env")],
                Target::Value,
                (4, 28),
            ),
        ];
        for (path, target, want) in cases {
            assert_eq!(locate(FLOW, path, *target), Some(*want), "{}", render(path));
        }
    }

    #[test]
    fn falls_back_to_the_nearest_enclosing_node_then_the_start() {
        assert_eq!(
            position(BLOCK, &[Key("pr"), Key("missing")], Target::Key),
            (4, 3)
        );
        assert_eq!(position(BLOCK, &[Key("missing")], Target::Value), (2, 1));
        assert_eq!(position("", &[Key("x")], Target::Value), (1, 1));
        assert_eq!(
            position("just a scalar", &[Key("x")], Target::Value),
            (1, 1)
        );
    }

    #[test]
    fn finds_repeated_keys() {
        let text =
            "pr:\n  poll_sec: 1\n  auto_fix: true\n  poll_sec: 2\nwatch:\n  - {pr: a, pr: b}\n";
        assert_eq!(
            duplicate_field(text, "pr: duplicate field `poll_sec`"),
            Some((4, 3))
        );
        assert_eq!(
            duplicate_field(text, "watch[0]: duplicate field `pr`"),
            Some((6, 13))
        );
        assert_eq!(duplicate_field(text, "duplicate field `pr`"), None);
        assert_eq!(duplicate_field(text, "pr: unknown field `x`"), None);
    }

    #[test]
    fn renders_paths_like_serde_yaml() {
        assert_eq!(render(&[Key("pr"), Key("poll_sec")]), "pr.poll_sec");
        assert_eq!(render(&[Key("watch"), Index(2), Key("pr")]), "watch[2].pr");
        assert_eq!(render(&[]), "");
        for path in ["pr.poll_sec", "watch[2].pr", "a.b[1][2].c", ""] {
            assert_eq!(render(&parse_path(path)), path);
        }
    }
}
