//! Validating deserializers for single values.
//!
//! Every check here runs *inside* a serde visitor, while serde_yaml is looking at the value, so a
//! rejected value comes back with its own line and column and its key path (`pr.poll_sec: …`).
//! Checks that compare several values run after parsing, in `validate`, and find their position
//! through [`super::locate`].

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::str::FromStr;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use crate::address::{Address, without_userinfo};
use crate::model::MergeMethod;
use crate::model::reference::PrArg;

/// The ceiling on every duration: a year. Far beyond any sensible cadence or timeout, and far
/// below what date arithmetic could overflow.
pub(crate) const MAX_SECS: i64 = 366 * 24 * 3600;

/// An integer in `min..=max`, read as signed so that `-5` earns "must be at least 1" rather than
/// a type error.
struct IntIn {
    min: i64,
    max: i64,
    /// Said when the value is below `min` (`at least 1`, `0 (off) or more`).
    floor: &'static str,
}

impl IntIn {
    fn check<E: de::Error>(&self, v: i64) -> Result<i64, E> {
        if v < self.min {
            Err(E::custom(format_args!("must be {}, not {v}", self.floor)))
        } else if v > self.max {
            Err(E::custom(format_args!(
                "must be at most {}, not {v}",
                self.max
            )))
        } else {
            Ok(v)
        }
    }
}

impl Visitor<'_> for IntIn {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a whole number, {}", self.floor)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        self.check(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        self.check(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

/// An integer in `min..=max` (`min` is 0 or 1), as the unsigned number it is.
fn int_in<'de, D: Deserializer<'de>>(d: D, min: i64, max: i64) -> Result<u64, D::Error> {
    let floor = if min == 0 {
        "0 (off) or more"
    } else {
        "at least 1"
    };
    d.deserialize_i64(IntIn { min, max, floor })
        .map(i64::unsigned_abs)
}

/// Seconds, at least 1.
pub(crate) fn secs<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    int_in(d, 1, MAX_SECS)
}

/// Seconds where 0 is allowed (and means "off" or "at once", as the field says).
pub(crate) fn secs_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    int_in(d, 0, MAX_SECS)
}

/// Optional seconds, at least 1.
pub(crate) fn opt_secs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    secs(d).map(Some)
}

/// A positive integer id (a GitHub App's).
pub(crate) fn id<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    int_in(d, 1, i64::MAX)
}

/// A count, at least 1.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    u32::try_from(int_in(d, 1, i64::from(u32::MAX))?).map_err(de::Error::custom)
}

/// An optional count, at least 1.
pub(crate) fn opt_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    count(d).map(Some)
}

/// A size (lines, bytes), at least 1.
pub(crate) fn size<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    usize::try_from(int_in(d, 1, i64::from(u32::MAX))?).map_err(de::Error::custom)
}

/// A string checked (and possibly normalised) by `check`, whose `Err` is the message.
struct Checked {
    check: fn(&str) -> Result<String, String>,
    expecting: &'static str,
}

impl Visitor<'_> for Checked {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        (self.check)(v).map_err(E::custom)
    }
}

/// The same, for an optional value: absent or `null` is `None`.
struct OptChecked(Checked);

impl<'de> Visitor<'de> for OptChecked {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.expecting)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self.0).map(Some)
    }
}

fn checked<'de, D: Deserializer<'de>>(
    d: D,
    check: fn(&str) -> Result<String, String>,
    expecting: &'static str,
) -> Result<String, D::Error> {
    d.deserialize_str(Checked { check, expecting })
}

fn opt_checked<'de, D: Deserializer<'de>>(
    d: D,
    check: fn(&str) -> Result<String, String>,
    expecting: &'static str,
) -> Result<Option<String>, D::Error> {
    d.deserialize_option(OptChecked(Checked { check, expecting }))
}

/// A forge API address: https, or http to a loopback host. Trailing slashes are dropped.
pub(crate) fn api_url<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked(d, check_http_url, "an http(s) URL")
}

/// An optional http(s) URL, as [`api_url`].
pub(crate) fn opt_http_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    opt_checked(d, check_http_url, "an http(s) URL")
}

/// An SMTP server address: `smtp://` or `smtps://`.
pub(crate) fn smtp_url<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked(d, check_smtp_url, "an smtp(s) URL")
}

/// An email address, bare or as `Name <address>`.
pub(crate) fn email<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked(d, check_email, "an email address")
}

/// A list of email addresses.
pub(crate) fn emails<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Email(String);
    impl<'de> de::Deserialize<'de> for Email {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            email(d).map(Email)
        }
    }
    let list: Vec<Email> = de::Deserialize::deserialize(d)?;
    Ok(list.into_iter().map(|e| e.0).collect())
}

/// The name of an environment variable.
pub(crate) fn env_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked(d, check_env_name, "an environment variable name")
}

/// An optional file mode: an octal string of read and write bits (`"0640"`).
pub(crate) fn opt_file_mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    fn check(s: &str) -> Result<String, String> {
        let digits = s.trim();
        let ok = (3..=4).contains(&digits.len())
            && u32::from_str_radix(digits, 8).is_ok_and(|m| m & !0o666 == 0 && m & 0o600 == 0o600);
        if ok {
            Ok(digits.to_owned())
        } else {
            Err(format!(
                "`{s}` is not a file mode; use an octal string of read and write bits, at least \
                 the owner's, such as \"0640\""
            ))
        }
    }
    let text = opt_checked(d, check, "an octal file mode")?;
    Ok(text.and_then(|t| u32::from_str_radix(&t, 8).ok()))
}

/// A socket address to listen on: `HOST:PORT` with an IP address (`127.0.0.1:8080`,
/// `0.0.0.0:8080`, `[::1]:8080`).
pub(crate) fn socket_addr<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<std::net::SocketAddr, D::Error> {
    fn check(s: &str) -> Result<String, String> {
        s.trim()
            .parse::<std::net::SocketAddr>()
            .map(|a| a.to_string())
            .map_err(|_| {
                format!(
                    "`{s}` is not an address to listen on; use IP:PORT, such as \"127.0.0.1:8080\""
                )
            })
    }
    let text = checked(d, check, "an address to listen on (IP:PORT)")?;
    text.parse().map_err(de::Error::custom)
}

/// A list of environment variable names.
pub(crate) fn env_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Name(String);
    impl<'de> de::Deserialize<'de> for Name {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            env_name(d).map(Name)
        }
    }
    let list: Vec<Name> = de::Deserialize::deserialize(d)?;
    Ok(list.into_iter().map(|n| n.0).collect())
}

/// A list of forge logins, none of them one the forge itself acts as (see
/// [`crate::model::Login::forge_actor`]).
pub(crate) fn logins<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct One(String);
    impl<'de> de::Deserialize<'de> for One {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            checked(d, check_login, "a login").map(One)
        }
    }
    let list: Vec<One> = de::Deserialize::deserialize(d)?;
    Ok(list.into_iter().map(|n| n.0).collect())
}

/// An optional list of logins, as [`logins`].
pub(crate) fn opt_logins<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    logins(d).map(Some)
}

fn check_login(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("a login cannot be empty".to_owned());
    }
    match crate::model::Login::forge_actor(s) {
        Some(why) => Err(format!(
            "`{s}` cannot be an agent's or a trusted login: {why}"
        )),
        None => Ok(s.to_owned()),
    }
}

/// An optional environment variable name.
pub(crate) fn opt_env_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    opt_checked(d, check_env_name, "an environment variable name")
}

/// An optional non-empty string (a shell command).
pub(crate) fn opt_command<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    opt_checked(d, check_non_empty, "a shell command")
}

/// A filesystem path, not empty.
pub(crate) fn path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    checked(d, check_non_empty, "a path").map(PathBuf::from)
}

/// An optional filesystem path, not empty.
pub(crate) fn opt_path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    opt_checked(d, check_non_empty, "a path").map(|p| p.map(PathBuf::from))
}

/// A job name: letters, digits, `-`, `_` and `.`, as `--job NAME` takes it.
pub(crate) fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked(d, check_name, "a name")
}

/// An optional agent name (checked against `agents` after parsing).
pub(crate) fn opt_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    opt_checked(d, check_name, "a name")
}

/// A handle the agent is called by in comments (`@fixer`): `@` and a login (letters, digits,
/// `-`, `_`, `.`).
pub(crate) fn opt_mention<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    fn check(s: &str) -> Result<String, String> {
        let login = s
            .strip_prefix('@')
            .ok_or("a mention starts with `@`, like `@fixer`")?;
        if login.is_empty()
            || !login
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(format!(
                "`{s}` is not a mention: `@` and a login (letters, digits, `-`, `_`, `.`)"
            ));
        }
        Ok(s.to_owned())
    }
    opt_checked(d, check, "a mention like \"@fixer\"")
}

/// A PR reference in any form [`PrArg`] parses, on any host (which hosts are a forge's is
/// checked against the config after parsing).
pub(crate) fn opt_pr_arg<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PrArg>, D::Error> {
    fn check(s: &str) -> Result<String, String> {
        PrArg::from_str(s)
            .map(|_| s.to_owned())
            .map_err(|e| e.to_string())
    }
    let text = opt_checked(d, check, "a pull request reference")?;
    // The check above has accepted the text, so this parse succeeds.
    Ok(text.and_then(|t| PrArg::from_str(&t).ok()))
}

/// A repository path: `owner/name` (GitHub) or `group/…/project` (GitLab).
pub(crate) fn opt_repo<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    opt_checked(d, check_repo, "a repository path")
}

/// `squash`, `merge`, `rebase`, or `""` for unset.
pub(crate) fn merge_method<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<MergeMethod>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = Option<MergeMethod>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("squash, merge, rebase or \"\"")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            if v.trim().is_empty() {
                Ok(None)
            } else {
                MergeMethod::from_str(v.trim()).map(Some).map_err(E::custom)
            }
        }
    }
    d.deserialize_any(V)
}

/// A job's override of `merge_method`: absent is `None`, `""` is `Some(None)` (unset: the first
/// the repository allows, whatever the config says).
#[allow(clippy::option_option, reason = "three states: absent, \"\", a method")]
pub(crate) fn opt_merge_method<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<MergeMethod>>, D::Error> {
    merge_method(d).map(Some)
}

/// A map with unique keys: a repeated key is an error at the repeat (a plain `BTreeMap` would
/// silently keep the last).
pub(crate) fn unique_map<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: de::Deserialize<'de>,
{
    struct MapVisitor<V>(PhantomData<V>);
    impl<'de, V: de::Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key_seed(NewKey(&out))? {
                let value = map.next_value()?;
                out.insert(key, value);
            }
            Ok(out)
        }
    }
    d.deserialize_map(MapVisitor(PhantomData))
}

/// A map key that must not be in the map yet; the error is raised while serde_yaml reads the
/// key, so it carries the key's position.
struct NewKey<'a, V>(&'a BTreeMap<String, V>);

impl<'de, V> DeserializeSeed<'de> for NewKey<'_, V> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<V> Visitor<'_> for NewKey<'_, V> {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        if self.0.contains_key(v) {
            Err(E::custom(format_args!("duplicate key `{v}`")))
        } else {
            Ok(v.to_owned())
        }
    }
}

fn check_non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(s.to_owned())
    }
}

pub(crate) fn check_name(s: &str) -> Result<String, String> {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{s}` is not a valid name; use letters, digits, `-`, `_` and `.`"
        ))
    }
}

/// A repository path as `repo:` takes it (`OWNER/NAME`, `GROUP/…/PROJECT`).
pub(crate) fn repo_path(s: &str) -> Result<String, String> {
    check_repo(s)
}

fn check_repo(s: &str) -> Result<String, String> {
    let s = s.trim().trim_matches('/');
    let parts: Vec<&str> = s.split('/').collect();
    let part_ok = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    if parts.len() >= 2 && parts.iter().all(part_ok) {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{s}` is not a repository; use OWNER/NAME (GitHub) or GROUP/PROJECT (GitLab)"
        ))
    }
}

fn check_env_name(s: &str) -> Result<String, String> {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{s}` is not an environment variable name (letters, digits and `_`, not starting with a digit)"
        ))
    }
}

pub(crate) fn check_email(s: &str) -> Result<String, String> {
    let bad = || Err(format!("`{s}` is not an email address"));
    let addr = match s.trim().strip_suffix('>').and_then(|r| r.rsplit_once('<')) {
        Some((_display_name, addr)) => addr,
        None => s.trim(),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return bad();
    };
    let domain_ok = !domain.is_empty()
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && domain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.".contains(c));
    let local_ok = !local.is_empty()
        && !local.contains('@')
        && !local
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>,;".contains(c));
    if domain_ok && local_ok {
        Ok(s.trim().to_owned())
    } else {
        bad()
    }
}

/// Runs `check` on a URL; its error never shows the URL's userinfo.
fn url_checked(s: &str, check: fn(&str) -> Result<String, String>) -> Result<String, String> {
    check(s).map_err(|e| e.replace(s, &without_userinfo(s)))
}

pub(crate) fn check_http_url(s: &str) -> Result<String, String> {
    url_checked(s, check_http_url_shown)
}

fn check_http_url_shown(s: &str) -> Result<String, String> {
    let url = Address::parse(s)?;
    match url.scheme() {
        "https" => {}
        "http" if url.is_loopback() => {}
        "http" => {
            return Err(format!(
                "`{s}` uses plain http, which is allowed only to a loopback host \
                 (127.0.0.0/8, ::1, localhost); use https"
            ));
        }
        other => return Err(format!("`{s}` must be an https URL, not `{other}`")),
    }
    Ok(s.trim_end_matches('/').to_owned())
}

pub(crate) fn check_smtp_url(s: &str) -> Result<String, String> {
    url_checked(s, check_smtp_url_shown)
}

fn check_smtp_url_shown(s: &str) -> Result<String, String> {
    let url = Address::parse(s)?;
    let tls = url.query("tls");
    match url.scheme() {
        "smtps" => Ok(s.to_owned()),
        "smtp" if matches!(tls.as_deref(), Some("required" | "opportunistic")) => Ok(s.to_owned()),
        "smtp" if url.is_loopback() => Ok(s.to_owned()),
        "smtp" => Err(format!(
            "`{s}` is plain SMTP to a host that is not loopback; use smtps:// or smtp://…?tls=required"
        )),
        other => Err(format!(
            "`{s}` must be an smtp:// or smtps:// URL, not `{other}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_errors_never_show_userinfo() {
        for bad in [
            "smtp://me:hunter2-sentinel@mail.example.com:25",
            "ftp://me:hunter2-sentinel@mail.example.com",
            "http://me:hunter2-sentinel@example.com/api",
        ] {
            let err = check_smtp_url(bad)
                .err()
                .into_iter()
                .chain(check_http_url(bad).err())
                .collect::<Vec<_>>()
                .join(" ");
            assert!(!err.is_empty(), "{bad}");
            assert!(!err.contains("hunter2"), "{bad}: {err}");
            assert!(err.contains("***@"), "{bad}: {err}");
        }
    }

    #[test]
    fn http_urls() {
        let ok = [
            ("https://api.github.com", "https://api.github.com"),
            (
                "https://ghe.example.com/api/v3/",
                "https://ghe.example.com/api/v3",
            ),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("http://127.5.6.7", "http://127.5.6.7"),
            ("http://localhost:3000/api", "http://localhost:3000/api"),
            ("http://[::1]:9000", "http://[::1]:9000"),
            (
                "HTTPS://Example.COM:443/x?y=1#z",
                "HTTPS://Example.COM:443/x?y=1#z",
            ),
        ];
        for (input, want) in ok {
            assert_eq!(check_http_url(input).as_deref(), Ok(want), "{input}");
        }
        let bad = [
            ("http://example.com", "plain http"),
            ("http://10.0.0.1", "plain http"),
            ("http://[::2]", "plain http"),
            ("ftp://example.com", "must be an https URL"),
            ("api.github.com", "is not a URL"),
            ("https://", "has no host"),
            ("https://exa mple.com", "whitespace"),
            ("https://example.com:99999", "malformed port"),
            ("https://example.com:", "malformed port"),
            ("https://exa$mple.com", "malformed host"),
            ("https://[zz]:80", "malformed IPv6"),
        ];
        for (input, want) in bad {
            let err = check_http_url(input).unwrap_err();
            assert!(err.contains(want), "{input}: {err}");
        }
    }

    #[test]
    fn smtp_urls() {
        assert!(check_smtp_url("smtps://smtp.example.com:465").is_ok());
        assert!(check_smtp_url("smtp://smtp.example.com:587?tls=required").is_ok());
        assert!(check_smtp_url("smtp://127.0.0.1:2525").is_ok());
        assert!(
            check_smtp_url("smtp://smtp.example.com:25")
                .unwrap_err()
                .contains("loopback")
        );
        assert!(check_smtp_url("smtp://user@localhost:2525?tls=required").is_ok());
        assert!(
            check_smtp_url("https://smtp.example.com")
                .unwrap_err()
                .contains("smtp://")
        );
        assert!(
            check_smtp_url("smtp.example.com")
                .unwrap_err()
                .contains("not a URL")
        );
    }

    #[test]
    fn emails() {
        for ok in [
            "owner@example.com",
            "Owner Name <owner@example.com>",
            "a+b@localhost",
        ] {
            assert!(check_email(ok).is_ok(), "{ok}");
        }
        for bad in [
            "owner",
            "@example.com",
            "owner@",
            "a b@example.com",
            "a@b@c",
            "a@.com",
            "a@x..y",
        ] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_repos_and_env_names() {
        assert!(check_name("my-prs_2.x").is_ok());
        assert!(check_name("my prs").is_err());
        assert!(check_name("").is_err());
        assert_eq!(check_repo("octo/app").as_deref(), Ok("octo/app"));
        assert_eq!(check_repo("g/sub/p/").as_deref(), Ok("g/sub/p"));
        assert!(check_repo("octo").is_err());
        assert!(check_repo("octo//app").is_err());
        assert!(check_env_name("GITHUB_TOKEN").is_ok());
        assert!(check_env_name("_X1").is_ok());
        assert!(check_env_name("1X").is_err());
        assert!(check_env_name("MY-TOKEN").is_err());
        assert!(check_env_name("").is_err());
    }
}
