//! Where each forge's web pages are: the root every PR address is written on (`PrRef::url`,
//! which is also the key of a PR's seen items, history and outbox rows). From `web_url`, else
//! derived from `api_url`: `https://api.github.com` → `https://github.com`,
//! `https://HOST/api/v3` → `https://HOST`, `https://HOST/api/v4` → `https://HOST`, anything
//! else → its scheme and host.
//!
//! The roots are a value here, passed in ([`PrRef::url_on`]); the process's own, set once
//! where its config is loaded, are the shell's (`crate::web_roots`).

use super::{ForgeKind, PrRef};

/// The public forges' web roots.
pub const GITHUB: &str = "https://github.com";
pub const GITLAB: &str = "https://gitlab.com";

/// The web root of a forge whose API is at `api_url`.
pub fn web_root(forge: ForgeKind, api_url: &str) -> String {
    let api = api_url.trim_end_matches('/');
    let suffix = match forge {
        ForgeKind::GitHub => "/api/v3",
        ForgeKind::GitLab => "/api/v4",
    };
    if let Some(root) = api.strip_suffix(suffix) {
        return root.to_owned();
    }
    let Some((scheme, rest)) = api.split_once("://") else {
        return api.to_owned();
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    match host.strip_prefix("api.") {
        Some(web) => format!("{scheme}://{web}"),
        None => format!("{scheme}://{host}"),
    }
}

/// The web roots of both forges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRoots {
    pub github: String,
    pub gitlab: String,
}

impl Default for WebRoots {
    fn default() -> Self {
        WebRoots {
            github: GITHUB.to_owned(),
            gitlab: GITLAB.to_owned(),
        }
    }
}

impl WebRoots {
    /// `web_url` when given, else derived from `api_url`, per forge.
    pub fn new(github: (&str, Option<&str>), gitlab: (&str, Option<&str>)) -> WebRoots {
        let root = |forge, (api, web): (&str, Option<&str>)| {
            web.map_or_else(
                || web_root(forge, api),
                |w| w.trim_end_matches('/').to_owned(),
            )
        };
        WebRoots {
            github: root(ForgeKind::GitHub, github),
            gitlab: root(ForgeKind::GitLab, gitlab),
        }
    }

    /// The root of `forge`.
    pub fn of(&self, forge: ForgeKind) -> &str {
        match forge {
            ForgeKind::GitHub => &self.github,
            ForgeKind::GitLab => &self.gitlab,
        }
    }
}

impl PrRef {
    /// The PR's web address under `roots`.
    pub fn url_on(&self, roots: &WebRoots) -> String {
        let root = roots.of(self.forge);
        match self.forge {
            ForgeKind::GitHub => format!("{root}/{}/pull/{}", self.repo, self.number),
            ForgeKind::GitLab => format!("{root}/{}/-/merge_requests/{}", self.repo, self.number),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_roots_follow_the_api_address_unless_given() {
        for (forge, api, want) in [
            (ForgeKind::GitHub, "https://api.github.com", GITHUB),
            (
                ForgeKind::GitHub,
                "https://ghe.example.com/api/v3/",
                "https://ghe.example.com",
            ),
            (
                ForgeKind::GitHub,
                "https://api.acme.ghe.com",
                "https://acme.ghe.com",
            ),
            (ForgeKind::GitLab, "https://gitlab.com/api/v4", GITLAB),
            (
                ForgeKind::GitLab,
                "https://git.example.org/api/v4",
                "https://git.example.org",
            ),
            (
                ForgeKind::GitHub,
                "http://127.0.0.1:8080",
                "http://127.0.0.1:8080",
            ),
            (
                ForgeKind::GitLab,
                "http://127.0.0.1:8080/other/path",
                "http://127.0.0.1:8080",
            ),
        ] {
            assert_eq!(web_root(forge, api), want, "{api}");
        }
        let roots = WebRoots::new(
            ("http://127.0.0.1:1", Some("https://ghe.example.com/")),
            ("https://gitlab.com/api/v4", None),
        );
        assert_eq!(roots.github, "https://ghe.example.com");
        assert_eq!(roots.gitlab, GITLAB);
    }
}
