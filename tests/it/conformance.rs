//! REST conformance: the validator the fake GitHub runs on every REST request, against the
//! vendored cut of GitHub's REST OpenAPI description (`tests/fixtures/github/rest-openapi-subset.json`).
//! Wrong requests must be refused here, or the scenario tests prove nothing about the real API.
//! The fake GitLab's check against its table of GitLab's API reference (`support/fake_gitlab/api.rs`)
//! is tested here too.

use serde_json::{Value, json};

use crate::fake_github_selftest::agent;
use crate::support::fake_github::openapi::{self, Refusal, RestSpec};
use crate::support::fake_github::rest::{Route, route};
use crate::support::fake_github::{FakeGitHub, MergeMethod};
use crate::support::fake_gitlab::api as gitlab_api;

fn check(method: &str, path: &str, query: Option<&str>, body: &str) -> Result<String, Refusal> {
    openapi::spec().check(method, path, query, body)
}

fn invalid(result: Result<String, Refusal>) -> String {
    match result {
        Err(Refusal::Invalid(why)) => why,
        other => panic!("expected a 422 refusal, got {other:?}"),
    }
}

#[test]
fn the_requests_pr_monitor_sends_conform() {
    let merge = json!({"merge_method": "squash", "sha": "0123abcd"}).to_string();
    let update = json!({"expected_head_sha": "0123abcd"}).to_string();
    for (method, path, query, body) in [
        ("PUT", "/repos/octo/app/pulls/7/merge", None, merge.as_str()),
        (
            "PUT",
            "/repos/octo/app/pulls/7/update-branch",
            None,
            &update,
        ),
        (
            "POST",
            "/repos/octo/app/actions/runs/42/rerun-failed-jobs",
            None,
            "{}",
        ),
        ("GET", "/repos/octo/app/actions/jobs/991/logs", None, ""),
        (
            "GET",
            "/repos/octo/app/compare/main...fix/deep/branch",
            Some("per_page=1"),
            "",
        ),
        (
            "GET",
            "/repos/octo/app/activity",
            Some("ref=refs%2Fheads%2Ffix&per_page=100"),
            "",
        ),
        (
            "GET",
            "/repos/octo/app/pulls/7/commits",
            Some("per_page=100"),
            "",
        ),
        ("GET", "/repos/octo/app/commits/0123abcd", None, ""),
        ("GET", "/app", None, ""),
        ("GET", "/repos/octo/app/installation", None, ""),
        ("POST", "/app/installations/12/access_tokens", None, ""),
        ("GET", "/user", None, ""),
        ("GET", "/rate_limit", None, ""),
    ] {
        assert!(
            check(method, path, query, body).is_ok(),
            "{method} {path} {query:?} {body}: {:?}",
            check(method, path, query, body)
        );
    }
}

#[test]
fn a_misspelled_body_field_is_refused() {
    let why = invalid(check(
        "PUT",
        "/repos/octo/app/pulls/7/merge",
        None,
        r#"{"merge_methd": "squash", "sha": "0123abcd"}"#,
    ));
    assert_eq!(why, "\"merge_methd\" is not a permitted key.");
}

#[test]
fn a_value_outside_its_enum_or_type_is_refused() {
    let why = invalid(check(
        "PUT",
        "/repos/octo/app/pulls/7/merge",
        None,
        r#"{"merge_method": "fast-forward"}"#,
    ));
    assert!(
        why.contains("fast-forward") && why.contains("rebase"),
        "{why}"
    );
    let why = invalid(check(
        "PUT",
        "/repos/octo/app/pulls/7/update-branch",
        None,
        r#"{"expected_head_sha": 17}"#,
    ));
    assert!(why.contains("not of type string"), "{why}");
    let why = invalid(check(
        "GET",
        "/repos/octo/app/activity",
        Some("activity_type=pushed"),
        "",
    ));
    assert!(why.contains("pushed"), "{why}");
    assert!(
        invalid(check(
            "GET",
            "/repos/octo/app/pulls/7/commits",
            Some("per_page=all"),
            ""
        ))
        .contains("integer")
    );
}

#[test]
fn an_undeclared_query_parameter_or_a_typed_path_parameter_out_of_type_is_refused() {
    let why = invalid(check(
        "GET",
        "/repos/octo/app/activity",
        Some("branch=fix"),
        "",
    ));
    assert!(why.contains("branch"), "{why}");
    let why = invalid(check("PUT", "/repos/octo/app/pulls/seven/merge", None, ""));
    assert!(
        why.contains("pull_number") && why.contains("integer"),
        "{why}"
    );
    let why = invalid(check("GET", "/repos/octo/app/activity", None, "{}"));
    assert!(why.contains("takes no body"), "{why}");
}

#[test]
fn a_path_or_method_github_has_not_is_not_found() {
    for (method, path) in [
        ("GET", "/repos/octo/app/pulls/7/merge/now"),
        ("POST", "/repos/octo/app/pulls/7/merge"),
        ("GET", "/repos/octo/app/pull/7/commits"),
        ("DELETE", "/user"),
    ] {
        assert!(
            matches!(check(method, path, None, ""), Err(Refusal::NotFound(_))),
            "{method} {path}"
        );
    }
}

#[test]
fn a_missing_required_field_is_refused() {
    // None of the bodies pr-monitor sends has a required field; the rule is the description's.
    let spec = RestSpec::from_json(&json!({"operations": [{
        "method": "POST",
        "path": "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        "parameters": [
            {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "issue_number", "in": "path", "required": true, "schema": {"type": "integer"}},
        ],
        "requestBody": {"required": true, "schema": {
            "type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"],
        }},
    }]}));
    let path = "/repos/octo/app/issues/7/comments";
    assert!(spec.check("POST", path, None, r#"{"body": "hi"}"#).is_ok());
    assert_eq!(
        spec.check("POST", path, None, "{}"),
        Err(Refusal::Invalid("\"body\" wasn't supplied.".into()))
    );
    assert!(matches!(
        spec.check("POST", path, None, ""),
        Err(Refusal::Invalid(_))
    ));
}

#[test]
fn every_operation_of_the_subset_is_one_the_fake_serves() {
    let sample = |segment: &str| match segment {
        "{owner}" => "octo".to_owned(),
        "{repo}" => "app".to_owned(),
        "{basehead}" => "main...fix".to_owned(),
        s if s.starts_with('{') => "7".to_owned(),
        s => s.to_owned(),
    };
    let operations = openapi::spec().operations();
    assert!(operations.len() >= 13, "{operations:?}");
    for op in operations {
        let (method, template) = op.split_once(' ').unwrap();
        let path: Vec<String> = template.split('/').map(sample).collect();
        assert_ne!(route(method, &path.join("/")), Route::Unknown, "{op}");
    }
}

/// A wrong request sent to the fake over HTTP: GitHub's 422, and the fake keeps it to fail the
/// test that sent it.
#[test]
fn the_fake_answers_a_wrong_request_as_github_does_and_fails_the_test() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.repo("octo/app").merge_methods(&[MergeMethod::Squash]);
        w.pr("octo/app", 1);
    });
    let agent = agent();
    let mut resp = agent
        .put(&format!("{}/repos/octo/app/pulls/1/merge", gh.url()))
        .header("Authorization", &format!("Bearer {}", gh.token()))
        .send_json(json!({"merge_methd": "squash"}))
        .unwrap();
    assert_eq!(resp.status().as_u16(), 422);
    let body: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(
        body["message"],
        "Invalid request.\n\n\"merge_methd\" is not a permitted key."
    );
    assert_eq!(
        gh.world(|w| w.merges("octo/app", 1)),
        0,
        "refused, not handled"
    );
    let mut resp = agent
        .get(&format!("{}/repos/octo/app/pulls/1/reviewers", gh.url()))
        .header("Authorization", &format!("Bearer {}", gh.token()))
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let _ = resp.body_mut().read_to_string();

    // Left untaken, the refusals fail the test when the fake stops.
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(gh)));
    let message = dropped.expect_err("dropping the fake fails the test");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("merge_methd") && text.contains("/pulls/1/reviewers"),
        "{text}"
    );
}

#[test]
fn a_test_that_takes_its_wrong_requests_passes() {
    let gh = FakeGitHub::start();
    let resp = agent()
        .get(&format!("{}/repos/octo/app/activity?branch=x", gh.url()))
        .header("Authorization", &format!("Bearer {}", gh.token()))
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 422);
    let taken = gh.take_nonconforming();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert!(taken[0].contains("branch"), "{taken:?}");
}

// ── GitLab ──────────────────────────────────────────────────────────────────────────────────

fn gitlab(
    method: &str,
    tmpl: &str,
    query: Option<&str>,
    body: &str,
) -> Result<(), gitlab_api::Refusal> {
    gitlab_api::check(method, tmpl, query, body)
}

#[test]
fn the_requests_pr_monitor_sends_to_gitlab_conform() {
    let merge = json!({"sha": "0123abcd", "merge_when_pipeline_succeeds": true, "auto_merge": true, "squash": true}).to_string();
    let train = json!({"sha": "0123abcd", "auto_merge": true, "when_pipeline_succeeds": true, "squash": false}).to_string();
    let note = json!({"body": "Renamed."}).to_string();
    for (method, tmpl, query, body) in [
        ("GET", "/user", None, ""),
        (
            "GET",
            "/merge_requests",
            Some("scope=created_by_me&state=opened&per_page=100&page=2"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/merge_requests",
            Some("per_page=100&iids[]=1&iids%5B%5D=2"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/merge_requests/{iid}",
            Some("include_diverged_commits_count=true&include_rebase_in_progress=true"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/pipelines",
            Some("order_by=updated_at&sort=desc&per_page=100"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/pipelines/{pid}/jobs",
            Some("per_page=100&include_retried=false"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/repository/compare",
            Some("from=a1&to=b2&straight=false"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/events",
            Some("action=pushed&per_page=100"),
            "",
        ),
        (
            "GET",
            "/projects/{id}/merge_trains/{branch}",
            Some("scope=active&sort=asc&per_page=100"),
            "",
        ),
        (
            "PUT",
            "/projects/{id}/merge_requests/{iid}/merge",
            None,
            merge.as_str(),
        ),
        (
            "POST",
            "/projects/{id}/merge_trains/merge_requests/{iid}",
            None,
            &train,
        ),
        (
            "POST",
            "/projects/{id}/merge_requests/{iid}/discussions/{did}/notes",
            None,
            &note,
        ),
        (
            "PUT",
            "/projects/{id}/merge_requests/{iid}/discussions/{did}",
            Some("resolved=true"),
            "",
        ),
        ("POST", "/projects/{id}/pipelines/{pid}/retry", None, ""),
    ] {
        assert_eq!(gitlab(method, tmpl, query, body), Ok(()), "{method} {tmpl}");
    }
}

#[test]
fn gitlab_refuses_an_unknown_operation_a_bad_value_and_a_missing_one_and_an_undeclared_one_is_caught()
 {
    use gitlab_api::Refusal;
    assert!(matches!(
        gitlab("DELETE", "/projects/{id}/merge_requests/{iid}", None, ""),
        Err(Refusal::NotFound(_))
    ));
    assert!(matches!(
        gitlab(
            "GET",
            "/projects/{id}/merge_requests/{iid}/reviewers",
            None,
            ""
        ),
        Err(Refusal::NotFound(_))
    ));
    for (method, tmpl, query, body, why) in [
        (
            "GET",
            "/projects/{id}/merge_requests",
            Some("state=open"),
            "",
            "state is invalid",
        ),
        (
            "GET",
            "/projects/{id}/merge_requests",
            Some("iids[]=one"),
            "",
            "iids is invalid",
        ),
        (
            "GET",
            "/projects/{id}/merge_requests/{iid}/discussions",
            Some("per_page=all"),
            "",
            "per_page is invalid",
        ),
        (
            "PUT",
            "/projects/{id}/merge_requests/{iid}/merge",
            None,
            r#"{"squash": "yes"}"#,
            "squash is invalid",
        ),
        (
            "GET",
            "/projects/{id}/repository/compare",
            Some("from=a1"),
            "",
            "to is missing",
        ),
        (
            "PUT",
            "/projects/{id}/merge_requests/{iid}/discussions/{did}",
            None,
            "",
            "resolved is missing",
        ),
        (
            "POST",
            "/projects/{id}/merge_requests/{iid}/discussions/{did}/notes",
            None,
            "{}",
            "body is missing",
        ),
    ] {
        assert_eq!(
            gitlab(method, tmpl, query, body),
            Err(Refusal::Invalid(why.into())),
            "{method} {tmpl}"
        );
    }
    // GitLab ignores what it does not declare; the request then does not say what was meant.
    for (method, tmpl, query, body) in [
        (
            "PUT",
            "/projects/{id}/merge_requests/{iid}/merge",
            None,
            r#"{"merge_method": "squash"}"#,
        ),
        (
            "GET",
            "/projects/{id}/merge_requests/{iid}",
            Some("per_page=100"),
            "",
        ),
        ("GET", "/projects/{id}/pipelines", Some("branch=main"), ""),
    ] {
        assert!(
            matches!(
                gitlab(method, tmpl, query, body),
                Err(Refusal::Undeclared(_))
            ),
            "{method} {tmpl} {query:?} {body}"
        );
    }
}

/// Wrong requests sent to the fake GitLab over HTTP: answered as GitLab answers them, and kept
/// to fail the test that sent them.
#[test]
fn the_fake_gitlab_answers_a_wrong_request_as_gitlab_does_and_fails_the_test() {
    let gl = crate::support::fake_gitlab::FakeGitLab::start();
    gl.world(|w| {
        w.project("g/p");
        w.mr("g/p", 1);
    });
    let call = |method: &str, path: &str, body: Option<Value>| {
        let url = format!("{}{path}", gl.url());
        let auth = format!("Bearer {}", gl.token());
        let mut resp = match body {
            Some(b) => agent()
                .put(&url)
                .header("Authorization", &auth)
                .send_json(b),
            None if method == "GET" => agent().get(&url).header("Authorization", &auth).call(),
            None => agent().delete(&url).header("Authorization", &auth).call(),
        }
        .unwrap();
        (
            resp.status().as_u16(),
            resp.body_mut().read_to_string().unwrap_or_default(),
        )
    };
    let (status, body) = call("GET", "/projects/g%2Fp/merge_requests?state=open", None);
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "state is invalid"
    );
    assert_eq!(
        call("DELETE", "/projects/g%2Fp/merge_requests/1", None).0,
        404
    );
    let (status, _) = call(
        "PUT",
        "/projects/g%2Fp/merge_requests/1/merge",
        Some(json!({"merge_methd": "squash"})),
    );
    assert_eq!(
        status, 200,
        "an undeclared attribute is ignored, as GitLab does"
    );
    let taken = gl.take_nonconforming();
    assert_eq!(taken.len(), 3, "{taken:?}");
    assert!(taken[2].contains("merge_methd"), "{taken:?}");

    let (status, _) = call("GET", "/projects/g%2Fp/merge_requests/1?per_pag=5", None);
    assert_eq!(status, 200);
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(gl)));
    let message = dropped.expect_err("dropping the fake fails the test");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("per_pag"), "{text}");
}
