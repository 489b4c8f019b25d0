//! The forge's own web addresses, derived from the configured `api_url`, so links on the status
//! page are right on GitHub Enterprise and self-managed GitLab: `https://api.github.com` →
//! `https://github.com`, `https://HOST/api/v3` → `https://HOST`, `https://HOST/api/v4` →
//! `https://HOST`. Pure.

use crate::config::Config;
use crate::model::{ForgeKind, PrRef};

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
    match api.split_once("://") {
        Some((scheme, host)) if host.starts_with("api.") && !host.contains('/') => {
            format!("{scheme}://{}", &host["api.".len()..])
        }
        _ => api.to_owned(),
    }
}

/// The web roots of both forges, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRoots {
    pub github: String,
    pub gitlab: String,
}

impl WebRoots {
    pub fn of(config: &Config) -> WebRoots {
        WebRoots {
            github: web_root(ForgeKind::GitHub, &config.github.api_url),
            gitlab: web_root(ForgeKind::GitLab, &config.gitlab.api_url),
        }
    }

    /// The PR's page on its forge.
    pub fn pr_page(&self, pr: &PrRef) -> String {
        match pr.forge {
            ForgeKind::GitHub => format!("{}/{}/pull/{}", self.github, pr.repo, pr.number),
            ForgeKind::GitLab => {
                format!("{}/{}/-/merge_requests/{}", self.gitlab, pr.repo, pr.number)
            }
        }
    }
}

impl Default for WebRoots {
    fn default() -> Self {
        WebRoots::of(&Config::default())
    }
}

/// A failed check's links: its run and its log. A GitHub Actions job page (`…/runs/R/job/J`)
/// is the log, its run is `…/runs/R`; a GitLab job page (`…/-/jobs/J`) is the run, its log is
/// `…/raw`; any other address is one link.
pub fn check_links(url: &str) -> (String, Option<String>) {
    let url = url.trim_end_matches('/');
    if let Some((run, _job)) = url.rsplit_once("/job/") {
        return (run.to_owned(), Some(url.to_owned()));
    }
    if url.contains("/-/jobs/") {
        return (url.to_owned(), Some(format!("{url}/raw")));
    }
    (url.to_owned(), None)
}

/// `url` if it is an http(s) address, the only kind a message links to.
pub fn web_link(url: &str) -> Option<&str> {
    let url = url.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_roots_follow_the_api_address() {
        for (forge, api, want) in [
            (
                ForgeKind::GitHub,
                "https://api.github.com",
                "https://github.com",
            ),
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
            (
                ForgeKind::GitLab,
                "https://gitlab.com/api/v4",
                "https://gitlab.com",
            ),
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
        ] {
            assert_eq!(web_root(forge, api), want, "{api}");
        }
        let roots = WebRoots {
            github: "https://ghe.example.com".into(),
            gitlab: "https://git.example.org".into(),
        };
        assert_eq!(
            roots.pr_page(&PrRef::github("octo/app", 1)),
            "https://ghe.example.com/octo/app/pull/1"
        );
        assert_eq!(
            roots.pr_page(&"g/p!57".parse().unwrap()),
            "https://git.example.org/g/p/-/merge_requests/57"
        );
        assert_eq!(
            WebRoots::default().pr_page(&PrRef::github("o/r", 2)),
            "https://github.com/o/r/pull/2"
        );
    }

    #[test]
    fn a_check_links_its_run_and_its_log() {
        assert_eq!(
            check_links("https://github.com/o/r/actions/runs/1/job/7"),
            (
                "https://github.com/o/r/actions/runs/1".to_owned(),
                Some("https://github.com/o/r/actions/runs/1/job/7".to_owned())
            )
        );
        assert_eq!(
            check_links("https://gitlab.com/g/p/-/jobs/9"),
            (
                "https://gitlab.com/g/p/-/jobs/9".to_owned(),
                Some("https://gitlab.com/g/p/-/jobs/9/raw".to_owned())
            )
        );
        assert_eq!(
            check_links("https://ci.example/x"),
            ("https://ci.example/x".to_owned(), None)
        );
    }
}
