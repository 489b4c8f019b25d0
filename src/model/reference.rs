//! A PR reference as people write it (a web address, `OWNER/REPO#N`, `GROUP/PROJECT!N`): the
//! one parser of every spelling ([`PrArg`]), and the check that an address names a configured
//! forge host ([`ForgeHosts`]) that turns it into a [`PrRef`].

use std::fmt;
use std::str::FromStr;

use crate::address::Address;

use super::{ForgeKind, PrRef};

/// The accepted spellings of a PR reference, for error messages.
pub const PR_REF_FORMS: &str = "https://github.com/OWNER/REPO/pull/N, \
https://gitlab.com/GROUP/PROJECT/-/merge_requests/N, OWNER/REPO#N (GitHub) or GROUP/PROJECT!N (GitLab)";

/// The web hosts a PR address may name, per forge: `github.com` and `gitlab.com` always, plus
/// the hosts of the configured APIs (GitHub Enterprise, self-managed GitLab, a test server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgeHosts {
    pub github: Vec<String>,
    pub gitlab: Vec<String>,
}

impl Default for ForgeHosts {
    fn default() -> Self {
        ForgeHosts {
            github: vec!["github.com".to_owned()],
            gitlab: vec!["gitlab.com".to_owned()],
        }
    }
}

impl ForgeHosts {
    /// The defaults plus the web hosts behind the two API addresses (`api.HOST` → `HOST`).
    pub fn with_apis(github_api: &str, gitlab_api: &str) -> Self {
        let mut hosts = ForgeHosts::default();
        for (api, list) in [
            (github_api, &mut hosts.github),
            (gitlab_api, &mut hosts.gitlab),
        ] {
            if let Some(host) = url_host(api) {
                let web = host.strip_prefix("api.").unwrap_or(&host).to_owned();
                if !list.contains(&web) {
                    list.push(web);
                }
            }
        }
        hosts
    }

    /// These hosts and the hosts of `roots`.
    #[must_use]
    pub fn with_web(mut self, roots: &super::web::WebRoots) -> Self {
        for (root, list) in [
            (&roots.github, &mut self.github),
            (&roots.gitlab, &mut self.gitlab),
        ] {
            if let Some(host) = url_host(root)
                && !list.contains(&host)
            {
                list.push(host);
            }
        }
        self
    }

    fn allows(&self, forge: ForgeKind, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let host = host.strip_prefix("www.").unwrap_or(&host);
        let list = match forge {
            ForgeKind::GitHub => &self.github,
            ForgeKind::GitLab => &self.gitlab,
        };
        list.iter().any(|h| h == host)
    }
}

/// Text that is none of the spellings in [`PR_REF_FORMS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPrRef(String);

impl fmt::Display for BadPrRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a pull request reference; use {PR_REF_FORMS}",
            self.0
        )
    }
}

impl std::error::Error for BadPrRef {}

/// A PR reference as written, parsed: the PR it names and, for a web address, the host it
/// names. Which hosts are a forge's is configuration, so [`PrArg::on`] makes it a [`PrRef`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrArg {
    /// The reference as written (trimmed), for error messages.
    text: String,
    pr: PrRef,
    /// The host (lower-cased, with its port) of a web address; none for `OWNER/REPO#N` and
    /// `GROUP/PROJECT!N`.
    host: Option<String>,
}

impl PrArg {
    /// The PR, when the address names one of `hosts` for the forge its path shape says.
    pub fn on(&self, hosts: &ForgeHosts) -> Result<PrRef, String> {
        match &self.host {
            Some(host) if !hosts.allows(self.pr.forge, host) => Err(format!(
                "`{}` names host `{host}`, which is not a configured {} host ({})",
                self.text,
                self.pr.forge.as_str(),
                match self.pr.forge {
                    ForgeKind::GitHub => hosts.github.join(", "),
                    ForgeKind::GitLab => hosts.gitlab.join(", "),
                }
            )),
            _ => Ok(self.pr.clone()),
        }
    }
}

/// What `fix` names: a PR, or a watched branch as a job names it (`OWNER/REPO@BRANCH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixTarget {
    Pr(PrArg),
    Branch(String),
}

impl FromStr for FixTarget {
    type Err = BadPrRef;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = match s.parse::<PrArg>() {
            Ok(pr) => return Ok(FixTarget::Pr(pr)),
            Err(e) => e,
        };
        let text = s.trim();
        let branch = !text.contains("://")
            && text
                .split_once('@')
                .is_some_and(|(repo, name)| repo.contains('/') && !name.trim().is_empty());
        if branch {
            Ok(FixTarget::Branch(text.to_owned()))
        } else {
            Err(err)
        }
    }
}

impl FromStr for PrArg {
    type Err = BadPrRef;

    /// Every form in [`PR_REF_FORMS`], on any host.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadPrRef(s.to_owned());
        let text = s.trim();
        let arg = |forge, repo: &str, number, host| PrArg {
            text: text.to_owned(),
            pr: PrRef {
                forge,
                repo: repo.to_owned(),
                number,
            },
            host,
        };
        if text.starts_with("https://") || text.starts_with("http://") {
            let address = web_address(text).ok_or_else(bad)?;
            let host = address.host_port();
            let path = address
                .path()
                .strip_prefix('/')
                .unwrap_or("")
                .trim_end_matches('/');
            let (forge, repo, n, max_parts) =
                if let Some((repo, n)) = path.split_once("/-/merge_requests/") {
                    (ForgeKind::GitLab, repo, n, 20)
                } else if let Some((repo, n)) = path.split_once("/pull/") {
                    (ForgeKind::GitHub, repo, n, 2)
                } else {
                    return Err(bad());
                };
            let n = pr_number(n.split('/').next().unwrap_or("")).ok_or_else(bad)?;
            if !valid_repo(repo, 2, max_parts) {
                return Err(bad());
            }
            return Ok(arg(forge, repo, n, Some(host)));
        }
        if let Some((repo, n)) = text.split_once('#') {
            if let Some(n) = pr_number(n).filter(|_| valid_repo(repo, 2, 2)) {
                return Ok(arg(ForgeKind::GitHub, repo, n, None));
            }
        } else if let Some((repo, n)) = text.split_once('!')
            && let Some(n) = pr_number(n).filter(|_| valid_repo(repo, 2, 20))
        {
            return Ok(arg(ForgeKind::GitLab, repo, n, None));
        }
        Err(bad())
    }
}

impl PrRef {
    /// Parses every form in [`PR_REF_FORMS`]; an address must name one of `hosts` for the
    /// forge its path shape says.
    pub fn parse_on(s: &str, hosts: &ForgeHosts) -> Result<Self, String> {
        s.parse::<PrArg>().map_err(|e| e.to_string())?.on(hosts)
    }
}

/// An `http(s)://` address without userinfo; `None` for anything else.
fn web_address(url: &str) -> Option<Address> {
    Address::parse(url)
        .ok()
        .filter(|a| matches!(a.scheme(), "http" | "https") && !a.has_userinfo())
}

/// The host (with its port, lower-cased) of an `http(s)://` address; `None` for anything else
/// or an address carrying userinfo.
fn url_host(url: &str) -> Option<String> {
    web_address(url).map(|a| a.host_port())
}

/// A PR number as the forges store it: 1 up to 2³¹ − 1.
fn pr_number(n: &str) -> Option<u64> {
    n.parse::<u64>()
        .ok()
        .filter(|n| (1..=u64::from(i32::MAX.unsigned_abs())).contains(n))
}

/// A repository path of `min..=max` parts, each a real name: ASCII letters, digits, `-`, `_`
/// and `.`, not only dots (`.`, `..`), not starting with `-`, not ending in `.git` or `.atom`.
fn valid_repo(r: &str, min_parts: usize, max_parts: usize) -> bool {
    let parts: Vec<&str> = r.split('/').collect();
    parts.len() >= min_parts
        && parts.len() <= max_parts
        && parts.iter().all(|p| {
            p.len() <= 100
                && p.chars().any(|c| c != '.')
                && !p.starts_with('-')
                && ![".git", ".atom"].iter().any(|ext| {
                    p.len() >= ext.len()
                        && p.as_bytes()[p.len() - ext.len()..].eq_ignore_ascii_case(ext.as_bytes())
                })
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_contract_form() {
        let cases = [
            (
                "https://github.com/octo/app/pull/342",
                PrRef::github("octo/app", 342),
            ),
            (
                "https://github.com/octo/app/pull/342/files",
                PrRef::github("octo/app", 342),
            ),
            ("octo/app#7", PrRef::github("octo/app", 7)),
            (
                "https://gitlab.com/g/sub/p/-/merge_requests/57",
                PrRef {
                    forge: ForgeKind::GitLab,
                    repo: "g/sub/p".into(),
                    number: 57,
                },
            ),
            (
                "g/p!57",
                PrRef {
                    forge: ForgeKind::GitLab,
                    repo: "g/p".into(),
                    number: 57,
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(text.parse::<PrRef>().as_ref(), Ok(&want), "{text}");
        }
    }

    #[test]
    fn rejects_malformed_references_naming_the_forms() {
        for bad in [
            "",
            "octo/app",
            "octo#1",
            "octo/app#0",
            "octo/app#x",
            "https://github.com/o/r/issues/1",
            "a/b/c#1",
            "../r#1",
            "o/..#1",
            "o/.#1",
            "g/..!1",
            "-o/r#1",
            "o/r#2147483648",
            "o/r#99999999999999999999",
            "https://github.com/o/../pull/1",
            "https://github.com/o/r/pull/2147483648",
        ] {
            let err = bad.parse::<PrRef>().unwrap_err();
            assert!(err.contains("OWNER/REPO#N"), "{bad}: {err}");
        }
    }

    #[test]
    fn addresses_name_only_the_configured_hosts() {
        for foreign in [
            "https://github.com.evil.com/o/r/pull/1",
            "https://evil.com/o/r/pull/1",
            "https://user@github.com/o/r/pull/1",
            "https://gitlab.com/o/r/pull/1",
            "https://github.com/g/p/-/merge_requests/1",
            "https://gitlab.com.evil.com/g/p/-/merge_requests/1",
        ] {
            assert!(foreign.parse::<PrRef>().is_err(), "{foreign}");
        }
        assert_eq!(
            "https://www.github.com/o/r/pull/2147483647".parse::<PrRef>(),
            Ok(PrRef::github("o/r", 2_147_483_647))
        );
        let hosts = ForgeHosts::with_apis(
            "https://ghe.example.com/api/v3",
            "http://127.0.0.1:8080/api/v4",
        );
        assert_eq!(
            PrRef::parse_on("https://ghe.example.com/o/r/pull/1", &hosts),
            Ok(PrRef::github("o/r", 1))
        );
        assert_eq!(
            PrRef::parse_on("http://127.0.0.1:8080/g/p/-/merge_requests/3", &hosts)
                .map(|p| p.number),
            Ok(3)
        );
        let api = ForgeHosts::with_apis("https://api.github.com", "https://gitlab.com/api/v4");
        assert_eq!(api.github, ["github.com"]);
        let err = PrRef::parse_on("https://ghe.example.com/o/r/pull/1", &api).unwrap_err();
        assert!(err.contains("not a configured github host"), "{err}");
    }

    /// Many generated references, from pieces of the valid forms mixed with accented letters,
    /// bidi marks, zero-width characters and multi-byte text: each parses or is refused,
    /// never panics.
    #[test]
    fn no_generated_reference_panics() {
        let pieces = [
            "o",
            "r",
            "/",
            "#",
            "!",
            "1",
            "42",
            ".git",
            ".atom",
            "é",
            "ä.git",
            "xé",
            "\u{202e}",
            "\u{200f}",
            "\u{200b}",
            "\u{feff}",
            "日本",
            "🦀",
            "-",
            ".",
            "..",
            "https://",
            "github.com/",
            "gitlab.com/",
            "/pull/",
            "/-/merge_requests/",
            "?",
            "@",
            ":8080",
            " ",
            "\u{301}",
            "ß",
            "İ",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let hosts = ForgeHosts::default();
        for _ in 0..20_000 {
            let len = next() % 10;
            let text: String = (0..len)
                .map(|_| pieces[usize::try_from(next() % pieces.len() as u64).unwrap()])
                .collect();
            let _ = PrRef::parse_on(&text, &hosts);
        }
        for text in [
            "éxyz/app#1",
            "o/é.git#1",
            "o/xé#1",
            "\u{202e}o/r.git#1",
            "o/日.atom!1",
        ] {
            assert!(text.parse::<PrRef>().is_err(), "{text}");
        }
    }

    #[test]
    fn an_argument_keeps_the_host_it_names_until_the_configured_hosts_are_known() {
        let hosts = ForgeHosts::with_apis(
            "https://ghe.example.com/api/v3",
            "https://gitlab.com/api/v4",
        );
        for (text, host, on_hosts) in [
            ("octo/app#7", None, Ok(PrRef::github("octo/app", 7))),
            (
                " https://GHE.example.com/octo/app/pull/7/files ",
                Some("ghe.example.com"),
                Ok(PrRef::github("octo/app", 7)),
            ),
            (
                "https://evil.example/octo/app/pull/7",
                Some("evil.example"),
                Err("`https://evil.example/octo/app/pull/7` names host `evil.example`, which is not a configured github host (github.com, ghe.example.com)".to_owned()),
            ),
        ] {
            let arg: PrArg = text.parse().unwrap();
            assert_eq!(arg.host.as_deref(), host, "{text}");
            assert_eq!(arg.on(&hosts), on_hosts, "{text}");
        }
        assert_eq!(
            "o/..#1".parse::<PrArg>().unwrap_err().to_string(),
            format!("`o/..#1` is not a pull request reference; use {PR_REF_FORMS}")
        );
    }
}
