//! Links to a forge's pages: a failed check's run and log, and which addresses a message may
//! link to (the PR's own page is [`crate::model::PrRef::url_on`]). Pure.

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
