//! GitHub's webhook deliveries: the signature check (`X-Hub-Signature-256`: `sha256=` and the
//! hex HMAC-SHA256 of the raw body under the webhook's secret, compared in constant time) and
//! the events that name watched PRs, turned into [`Nudge`]s. Wire types stay here.

use serde::Deserialize;

use crate::model::nudge::{Named, Nudge};
use crate::model::{ForgeKind, Sha};

/// Whether `signature` (the `X-Hub-Signature-256` header) signs `body` under `secret`. An
/// empty secret signs nothing.
pub fn signed(secret: &[u8], body: &[u8], signature: Option<&str>) -> bool {
    let Some(hex) = signature.and_then(|s| s.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Some(tag) = unhex(hex) else {
        return false;
    };
    !secret.is_empty()
        && ring::hmac::verify(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret),
            body,
            &tag,
        )
        .is_ok()
}

/// The bytes of a hex string, or `None` when it is not one.
fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    repository: Option<Repository>,
    pull_request: Option<Numbered>,
    issue: Option<Issue>,
    check_run: Option<Run>,
    check_suite: Option<Run>,
    workflow_run: Option<Run>,
    merge_group: Option<MergeGroup>,
    /// `status`: the commit; `push`: `before` is the head the branch had.
    sha: Option<String>,
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    before: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Repository {
    full_name: String,
}

#[derive(Debug, Deserialize)]
struct Numbered {
    number: u64,
}

#[derive(Debug, Deserialize)]
struct Issue {
    number: u64,
    /// Present when the issue is a pull request.
    #[serde(default)]
    pull_request: Option<serde::de::IgnoredAny>,
}

/// A check run, check suite or workflow run.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Run {
    head_sha: Option<String>,
    head_branch: Option<String>,
    /// The PRs of the same repository whose head this is (empty for a fork's).
    pull_requests: Vec<Numbered>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MergeGroup {
    /// `refs/heads/gh-readonly-queue/BASE/pr-N-SHA`.
    head_ref: Option<String>,
}

/// The PRs a delivery of event `kind` (the `X-GitHub-Event` header) names; none for events
/// that cannot concern a PR, and for bodies that are not such an event.
pub fn nudges(kind: &str, body: &[u8]) -> Vec<Nudge> {
    let Ok(event) = serde_json::from_slice::<Event>(body) else {
        return Vec::new();
    };
    let Some(repo) = event.repository.as_ref().map(|r| r.full_name.clone()) else {
        return Vec::new();
    };
    let mut named = Vec::new();
    match kind {
        "check_run" | "check_suite" | "workflow_run" => {
            let run = match kind {
                "check_run" => event.check_run,
                "check_suite" => event.check_suite,
                _ => event.workflow_run,
            };
            if let Some(run) = run {
                named.extend(run.pull_requests.iter().map(|p| Named::Number(p.number)));
                named.extend(run.head_sha.map(|s| Named::Head(Sha(s))));
                named.extend(run.head_branch.map(Named::Branch));
            }
        }
        "status" => named.extend(event.sha.map(|s| Named::Head(Sha(s)))),
        "pull_request"
        | "pull_request_review"
        | "pull_request_review_comment"
        | "pull_request_review_thread" => {
            named.extend(event.pull_request.map(|p| Named::Number(p.number)));
        }
        "issue_comment" => named.extend(
            event
                .issue
                .filter(|i| i.pull_request.is_some())
                .map(|i| Named::Number(i.number)),
        ),
        "push" => named.extend(crate::model::nudge::pushed(
            event.git_ref.as_deref(),
            event.before,
        )),
        "merge_group" => named.extend(
            event
                .merge_group
                .and_then(|g| g.head_ref)
                .and_then(|r| queued_pr(&r))
                .map(Named::Number),
        ),
        _ => {}
    }
    Nudge::all(ForgeKind::GitHub, &repo, named)
}

/// The PR number in a merge queue's branch, `…/gh-readonly-queue/BASE/pr-N-SHA`.
fn queued_pr(head_ref: &str) -> Option<u64> {
    let last = head_ref.rsplit('/').next()?;
    let (number, _sha) = last.strip_prefix("pr-")?.split_once('-')?;
    number.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &str, body: &[u8]) -> String {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
        let tag = ring::hmac::sign(&key, body);
        let hex = tag.as_ref().iter().fold(String::new(), |mut hex, b| {
            let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
            hex
        });
        format!("sha256={hex}")
    }

    #[test]
    fn a_signature_holds_only_for_its_secret_and_its_exact_body() {
        let body = br#"{"zen":"Keep it logically awesome."}"#;
        let good = sign("It's a Secret to Everybody", body);
        assert!(signed(b"It's a Secret to Everybody", body, Some(&good)));
        assert!(signed(
            b"It's a Secret to Everybody",
            body,
            Some(&good.to_uppercase().replacen("SHA256", "sha256", 1))
        ));
        assert!(!signed(b"another secret", body, Some(&good)));
        assert!(!signed(
            b"It's a Secret to Everybody",
            b"{\"zen\":\"x\"}",
            Some(&good)
        ));
        assert!(!signed(b"It's a Secret to Everybody", body, None));
        assert!(!signed(
            b"It's a Secret to Everybody",
            body,
            Some(&good["sha256=".len()..])
        ));
        assert!(!signed(
            b"It's a Secret to Everybody",
            body,
            Some("sha256=zz")
        ));
        assert!(!signed(
            b"It's a Secret to Everybody",
            body,
            Some(&good[..good.len() - 2])
        ));
        assert!(!signed(b"", body, Some(&sign("", body))));
    }

    #[test]
    fn github_documents_this_signature() {
        // GitHub's "Validating webhook deliveries": secret and payload, and the expected header.
        assert!(signed(
            b"It's a Secret to Everybody",
            b"Hello, World!",
            Some("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"),
        ));
    }

    fn names(kind: &str, body: &str) -> Vec<Named> {
        let out = nudges(kind, body.as_bytes());
        assert!(
            out.iter()
                .all(|n| n.forge == ForgeKind::GitHub && n.repo == "octo/app"),
            "{out:?}"
        );
        out.into_iter().map(|n| n.names).collect()
    }

    const REPO: &str = r#""repository": {"id": 1, "full_name": "octo/app"}"#;

    #[test]
    fn each_pr_event_names_its_prs() {
        let sha = "1b4f5e2c4a0d5b7e2c1b3a4f5e6d7c8b9a0f1e2d";
        let head = || Named::Head(Sha(sha.to_owned()));
        let cases: Vec<(&str, String, Vec<Named>)> = vec![
            (
                "check_run",
                format!(
                    r#"{{"action": "completed", "check_run": {{"head_sha": "{sha}", "pull_requests": [{{"number": 7}}]}}, {REPO}}}"#
                ),
                vec![Named::Number(7), head()],
            ),
            (
                "check_suite",
                format!(
                    r#"{{"check_suite": {{"head_sha": "{sha}", "head_branch": "fix", "pull_requests": []}}, {REPO}}}"#
                ),
                vec![head(), Named::Branch("fix".into())],
            ),
            (
                "workflow_run",
                format!(
                    r#"{{"workflow_run": {{"head_sha": "{sha}", "head_branch": null, "pull_requests": [{{"number": 3}}, {{"number": 3}}]}}, {REPO}}}"#
                ),
                vec![Named::Number(3), head()],
            ),
            (
                "status",
                format!(r#"{{"sha": "{sha}", "state": "failure", {REPO}}}"#),
                vec![head()],
            ),
            (
                "pull_request",
                format!(r#"{{"number": 9, "pull_request": {{"number": 9}}, {REPO}}}"#),
                vec![Named::Number(9)],
            ),
            (
                "pull_request_review",
                format!(r#"{{"pull_request": {{"number": 9}}, {REPO}}}"#),
                vec![Named::Number(9)],
            ),
            (
                "pull_request_review_comment",
                format!(r#"{{"pull_request": {{"number": 9}}, {REPO}}}"#),
                vec![Named::Number(9)],
            ),
            (
                "pull_request_review_thread",
                format!(r#"{{"thread": {{}}, "pull_request": {{"number": 9}}, {REPO}}}"#),
                vec![Named::Number(9)],
            ),
            (
                "issue_comment",
                format!(r#"{{"issue": {{"number": 4, "pull_request": {{"url": "x"}}}}, {REPO}}}"#),
                vec![Named::Number(4)],
            ),
            (
                "issue_comment",
                format!(r#"{{"issue": {{"number": 4}}, {REPO}}}"#),
                vec![],
            ),
            (
                "push",
                format!(r#"{{"ref": "refs/heads/fix", "before": "{sha}", "after": "2c", {REPO}}}"#),
                vec![
                    head(),
                    Named::Branch("fix".into()),
                    Named::Base("fix".into()),
                ],
            ),
            (
                "push",
                format!(
                    r#"{{"ref": "refs/tags/v1", "before": "0000000000000000000000000000000000000000", {REPO}}}"#
                ),
                vec![],
            ),
            (
                "merge_group",
                format!(
                    r#"{{"merge_group": {{"head_ref": "refs/heads/gh-readonly-queue/main/pr-12-{sha}"}}, {REPO}}}"#
                ),
                vec![Named::Number(12)],
            ),
            (
                "star",
                format!(r#"{{"action": "created", {REPO}}}"#),
                vec![],
            ),
            (
                "ping",
                format!(r#"{{"zen": "x", "hook_id": 1, {REPO}}}"#),
                vec![],
            ),
        ];
        for (kind, body, want) in cases {
            assert_eq!(names(kind, &body), want, "{kind}: {body}");
        }
    }

    #[test]
    fn a_body_that_is_not_an_event_names_nothing() {
        assert_eq!(nudges("check_run", b"not json"), vec![]);
        assert_eq!(
            nudges("pull_request", br#"{"pull_request": {"number": 1}}"#),
            vec![]
        );
        assert_eq!(
            nudges(
                "pull_request",
                br#"{"pull_request": {"number": -1}, "repository": {"full_name": "o/r"}}"#
            ),
            vec![]
        );
    }
}
