//! Tests of the fake GitHub itself, over real HTTP: if these fail, every scenario test built on
//! the fake is suspect.

use serde_json::{Value, json};

use pr_monitor::forge::SnapshotRequest;
use pr_monitor::forge::github::features::Features;
use pr_monitor::forge::github::queries::{OPERATIONS, snapshot_query};
use pr_monitor::model::PrRef;

use crate::support::fake_github::{
    CheckStatus, DEFAULT_NOW, Event, Fault, FaultKind, JOB_ID_BASE, MergeMethod, MergeState,
    PrState, UpdateMethod,
};
use crate::support::fake_github::{FakeGitHub, World};

/// An HTTP client that hands back every status (also used by the conformance tests).
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

fn agent_without_redirects() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build()
        .into()
}

/// Sends a GraphQL request with the world's token; returns the status and the body as JSON
/// (`Null` when it is not JSON).
fn graphql(
    gh: &FakeGitHub,
    query: &str,
    variables: &Value,
    operation: Option<&str>,
) -> (u16, Value) {
    let mut body = json!({ "query": query, "variables": variables });
    if let Some(op) = operation {
        body["operationName"] = json!(op);
    }
    let mut resp = agent()
        .post(&gh.graphql_url())
        .header("Authorization", &format!("Bearer {}", gh.token()))
        .send_json(&body)
        .expect("POST /graphql");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("read body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A PR to snapshot: repository, number, and (base, head) branches to compare.
type Wanted<'a> = (&'a str, u64, Option<(&'a str, &'a str)>);

fn snapshot(gh: &FakeGitHub, prs: &[Wanted<'_>]) -> Value {
    let reqs: Vec<SnapshotRequest> = prs
        .iter()
        .map(|(repo, n, branches)| SnapshotRequest {
            pr: PrRef::github(repo, *n),
            branches: branches.map(|(b, h)| (b.to_owned(), h.to_owned())),
            required_checks: false,
        })
        .collect();
    let (status, body) = graphql(
        gh,
        &snapshot_query(&reqs, Features::default()),
        &json!({}),
        None,
    );
    assert_eq!(status, 200, "{body}");
    body
}

fn rest(gh: &FakeGitHub, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}{path}", gh.url());
    let auth = format!("Bearer {}", gh.token());
    let a = agent();
    let resp = match (method, body) {
        ("GET", _) => a.get(&url).header("Authorization", &auth).call(),
        ("POST", None) => a.post(&url).header("Authorization", &auth).send_empty(),
        ("POST", Some(b)) => a.post(&url).header("Authorization", &auth).send_json(&b),
        ("PUT", b) => a
            .put(&url)
            .header("Authorization", &auth)
            .send_json(b.unwrap_or_else(|| json!({}))),
        _ => panic!("method {method}"),
    };
    let mut resp = resp.expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("read body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Two PRs in two repositories: a failing Actions check with a log, a status, threads,
/// reviews, comments, labels.
fn two_pr_world(w: &mut World) {
    w.repo("octo/app").required_checks(&["lint"]);
    w.pr("octo/app", 1)
        .author("dev")
        .title("Add feature")
        .label("automerge")
        .head_commit(|c| c.author("fixer-bot"));
    w.check_run("octo/app", 1, "lint")
        .failure()
        .title("1 error")
        .summary("unused variable")
        .log("error: unused\n");
    w.check_run("octo/app", 1, "test");
    w.status("octo/app", 1, "ci/legacy")
        .pending()
        .target_url("https://ci.example.com/1");
    w.thread("octo/app", 1)
        .path("src/a.rs")
        .line(3)
        .comment("reviewer", "please rename")
        .comment("dev", "ok");
    w.thread("octo/app", 1)
        .comment("reviewer", "nit")
        .resolved();
    w.review("octo/app", 1, "reviewer")
        .changes_requested()
        .body("see comments");
    w.comment("octo/app", 1, "alice", "looks good");
    w.pr("octo/other", 2)
        .head_ref("feature/x")
        .behind(3)
        .draft();
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one shape test: every field GitHub answers, one assertion each"
)]
fn snapshot_query_for_two_prs_answers_githubs_shapes() {
    let gh = FakeGitHub::start();
    gh.world(two_pr_world);
    let (head1, job, run_id) = gh.world(|w| {
        let head = w.get_pr("octo/app", 1).head_sha().to_owned();
        let suite = &w.head("octo/app", 1).suites[0];
        (
            head,
            suite.runs[0].database_id,
            suite.workflow_run.as_ref().expect("actions").database_id,
        )
    });
    let body = snapshot(
        &gh,
        &[
            ("octo/app", 1, None),
            ("octo/other", 2, Some(("main", "feature/x"))),
        ],
    );
    assert!(body.get("errors").is_none(), "{body}");
    let pr0 = &body["data"]["pr0"];
    assert_eq!(pr0["nameWithOwner"], "octo/app");
    assert_eq!(pr0["defaultBranchRef"]["name"], "main");
    assert_eq!(pr0["autoMergeAllowed"], true);
    let pr = &pr0["pullRequest"];
    assert!(pr["id"].as_str().expect("id").starts_with("PR_"), "{pr}");
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["url"], "https://github.com/octo/app/pull/1");
    assert_eq!(pr["title"], "Add feature");
    assert_eq!(pr["state"], "OPEN");
    assert_eq!(pr["isDraft"], false);
    assert_eq!(pr["author"]["login"], "dev");
    assert_eq!(pr["headRefName"], "feature-1");
    assert_eq!(pr["headRefOid"], head1.as_str());
    assert_eq!(pr["mergeable"], "MERGEABLE");
    assert_eq!(pr["mergeStateStatus"], "BLOCKED", "required lint fails");
    assert_eq!(pr["autoMergeRequest"], Value::Null);
    assert_eq!(pr["labels"]["nodes"], json!([{"name": "automerge"}]));
    let commit = &pr["commits"]["nodes"][0]["commit"];
    assert_eq!(commit["oid"], head1.as_str());
    assert_eq!(commit["committedDate"], "2026-11-29T11:00:00Z");
    assert_eq!(commit["author"]["user"]["login"], "fixer-bot");
    assert_eq!(commit["committer"]["user"]["login"], "dev");
    let suite = &commit["checkSuites"]["nodes"][0];
    assert!(suite["id"].as_str().expect("suite id").starts_with("CS_"));
    assert_eq!(suite["app"]["slug"], "github-actions");
    assert_eq!(
        suite["workflowRun"],
        json!({"databaseId": run_id, "event": "pull_request", "workflow": {"name": "CI"}})
    );
    assert_eq!(suite["checkRuns"]["pageInfo"]["hasNextPage"], false);
    let lint = &suite["checkRuns"]["nodes"][0];
    assert_eq!(
        lint["databaseId"], job,
        "job ids are beyond 32 bits, like GitHub's"
    );
    assert!(job > JOB_ID_BASE);
    assert_eq!(lint["name"], "lint");
    assert_eq!(lint["status"], "COMPLETED");
    assert_eq!(lint["conclusion"], "FAILURE");
    assert_eq!(lint["title"], "1 error");
    assert_eq!(lint["summary"], "unused variable");
    assert!(
        lint["detailsUrl"]
            .as_str()
            .expect("url")
            .contains(&format!("/actions/runs/{run_id}/job/{job}"))
    );
    assert_eq!(suite["checkRuns"]["nodes"][1]["conclusion"], "SUCCESS");
    let ctx = &commit["status"]["contexts"][0];
    assert_eq!(ctx["context"], "ci/legacy");
    assert_eq!(ctx["state"], "PENDING");
    assert_eq!(ctx["targetUrl"], "https://ci.example.com/1");
    let threads = &pr["reviewThreads"];
    assert_eq!(threads["nodes"].as_array().expect("threads").len(), 2);
    let t0 = &threads["nodes"][0];
    assert!(t0["id"].as_str().expect("thread id").starts_with("PRRT_"));
    assert_eq!(
        (
            t0["isResolved"].clone(),
            t0["path"].clone(),
            t0["line"].clone()
        ),
        (json!(false), json!("src/a.rs"), json!(3))
    );
    assert_eq!(t0["comments"]["nodes"][0]["author"]["login"], "reviewer");
    assert_eq!(t0["comments"]["nodes"][1]["body"], "ok");
    assert!(
        t0["comments"]["nodes"][0]["url"]
            .as_str()
            .expect("url")
            .contains("#discussion_r")
    );
    assert_eq!(threads["nodes"][1]["isResolved"], true);
    assert_eq!(pr["reviews"]["nodes"][0]["state"], "CHANGES_REQUESTED");
    assert_eq!(pr["reviews"]["nodes"][0]["body"], "see comments");
    assert_eq!(pr["comments"]["nodes"][0]["author"]["login"], "alice");
    assert_eq!(pr["comments"]["pageInfo"]["hasNextPage"], false);

    let pr1 = &body["data"]["pr1"];
    assert_eq!(pr1["pullRequest"]["isDraft"], true);
    assert_eq!(pr1["pullRequest"]["mergeStateStatus"], "DRAFT");
    assert_eq!(
        pr1["pullRequest"]["commits"]["nodes"][0]["commit"]["status"],
        Value::Null,
        "no statuses: null"
    );
    assert_eq!(
        pr1["baseRef"]["compare"],
        json!({"behindBy": 3, "aheadBy": 1, "status": "DIVERGED"})
    );

    let log = gh.requests();
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 1);
    assert_eq!(
        log.entries[0].prs,
        vec![("octo/app".to_owned(), 1), ("octo/other".to_owned(), 2)]
    );
}

#[test]
fn a_missing_pr_or_repository_is_null_with_a_not_found_error() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1);
    });
    let body = snapshot(
        &gh,
        &[
            ("octo/app", 1, None),
            ("octo/app", 99, None),
            ("octo/nope", 1, None),
        ],
    );
    assert_eq!(body["data"]["pr0"]["pullRequest"]["number"], 1);
    assert_eq!(body["data"]["pr1"]["pullRequest"], Value::Null);
    assert_eq!(body["data"]["pr2"], Value::Null);
    let errors = body["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 2, "{body}");
    assert_eq!(errors[0]["type"], "NOT_FOUND");
    assert_eq!(errors[0]["path"], json!(["pr1", "pullRequest"]));
    assert_eq!(
        errors[0]["message"],
        "Could not resolve to a PullRequest with the number of 99."
    );
    assert!(errors[0]["locations"].is_array());
    assert_eq!(errors[1]["path"], json!(["pr2"]));
    assert_eq!(
        errors[1]["message"],
        "Could not resolve to a Repository with the name 'octo/nope'."
    );
}

#[test]
fn review_threads_page_past_one_hundred() {
    let gh = FakeGitHub::start();
    let (pr_id, ids) = gh.world(|w| {
        let ids: Vec<String> = (0..150)
            .map(|i| {
                w.thread("octo/app", 1)
                    .comment("reviewer", &format!("thread {i}"))
                    .id()
            })
            .collect();
        (w.get_pr("octo/app", 1).node_id.clone(), ids)
    });
    let body = snapshot(&gh, &[("octo/app", 1, None)]);
    let first = &body["data"]["pr0"]["pullRequest"]["reviewThreads"];
    assert_eq!(first["nodes"].as_array().expect("nodes").len(), 100);
    assert_eq!(first["pageInfo"]["hasNextPage"], true);
    let cursor = first["pageInfo"]["endCursor"]
        .as_str()
        .expect("endCursor")
        .to_owned();

    let page = "query Page($id: ID!, $after: String) {
      node(id: $id) { __typename ... on PullRequest { reviewThreads(first: 100, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } nodes { id comments(first: 1) { nodes { body } } } } } } }";
    let (status, second) = graphql(
        &gh,
        page,
        &json!({"id": pr_id, "after": cursor}),
        Some("Page"),
    );
    assert_eq!(status, 200);
    let conn = &second["data"]["node"]["reviewThreads"];
    assert_eq!(second["data"]["node"]["__typename"], "PullRequest");
    assert_eq!(conn["totalCount"], 150);
    assert_eq!(conn["pageInfo"]["hasNextPage"], false);
    let mut seen: Vec<String> = first["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["id"].as_str().expect("id").to_owned())
        .collect();
    seen.extend(
        conn["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| n["id"].as_str().expect("id").to_owned()),
    );
    assert_eq!(seen, ids, "every thread once, in order");
    assert_eq!(
        conn["nodes"][49]["comments"]["nodes"][0]["body"],
        "thread 149"
    );
    assert_eq!(
        gh.requests().entries[1].prs,
        vec![("octo/app".to_owned(), 1)],
        "a page query is about its PR"
    );
}

#[test]
fn documents_github_would_refuse_are_refused_with_githubs_words() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1);
    });
    let (status, body) = graphql(
        &gh,
        "query { repository(owner: \"octo\", name: \"app\") { pullRequest(number: 1) { isDraftt } } }",
        &json!({}),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["errors"][0]["message"],
        "Field 'isDraftt' doesn't exist on type 'PullRequest'"
    );
    assert!(
        body.get("data").is_none(),
        "validation errors come without data: {body}"
    );

    let unused = "query { viewer { login } }\nfragment Extra on User { login }";
    let (_, body) = graphql(&gh, unused, &json!({}), None);
    assert_eq!(
        body["errors"][0]["message"],
        "Fragment Extra was defined, but not used"
    );

    let (_, body) = graphql(
        &gh,
        "query { repository(owner: \"octo\", name: \"app\") { pullRequest(number: 1) { labels { totalCount } } } }",
        &json!({}),
        None,
    );
    assert_eq!(
        body["errors"][0]["type"], "MISSING_PAGINATION_BOUNDARIES",
        "{body}"
    );
    let (_, body) = graphql(
        &gh,
        "query { repository(owner: \"octo\", name: \"app\") { pullRequest(number: 1) { labels(first: 101) { totalCount } } } }",
        &json!({}),
        None,
    );
    assert_eq!(body["errors"][0]["type"], "EXCESSIVE_PAGINATION", "{body}");

    let (_, body) = graphql(&gh, OPERATIONS, &json!({}), None);
    assert_eq!(
        body["errors"][0]["message"],
        "An operation name is required"
    );
}

#[test]
fn a_snapshot_batch_may_ask_for_at_most_half_a_million_nodes() {
    let gh = FakeGitHub::start();
    let reqs = |n: u64| -> Vec<SnapshotRequest> {
        (1..=n)
            .map(|i| SnapshotRequest {
                pr: PrRef::github("octo/app", i),
                branches: None,
                required_checks: false,
            })
            .collect()
    };
    gh.world(|w| {
        for i in 1..=33 {
            w.pr("octo/app", i);
        }
    });
    let (_, ok) = graphql(
        &gh,
        &snapshot_query(&reqs(32), Features::default()),
        &json!({}),
        None,
    );
    assert!(ok.get("errors").is_none(), "32 PRs fit: {}", ok["errors"]);
    let (status, too_big) = graphql(
        &gh,
        &snapshot_query(&reqs(33), Features::default()),
        &json!({}),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(
        too_big["errors"][0]["type"], "MAX_NODE_LIMIT_EXCEEDED",
        "{too_big}"
    );
    assert!(too_big.get("data").is_none());
}

#[test]
fn viewer_and_authentication() {
    let gh = FakeGitHub::start();
    let (_, body) = graphql(&gh, OPERATIONS, &json!({}), Some("Viewer"));
    assert_eq!(body["data"]["viewer"], json!({"login": "owner"}));
    assert_eq!(body["data"]["rateLimit"]["cost"], json!(1), "{body}");

    let resp = agent()
        .post(&gh.graphql_url())
        .send_json(json!({"query": "query { viewer { login } }"}))
        .expect("post");
    assert_eq!(resp.status().as_u16(), 401);
    let mut resp = agent()
        .get(&format!("{}/rate_limit", gh.url()))
        .header("Authorization", "Bearer wrong")
        .call()
        .expect("get");
    assert_eq!(resp.status().as_u16(), 401);
    let body: Value = resp.body_mut().read_json().expect("json");
    assert_eq!(body["message"], "Bad credentials");

    let mut resp = agent()
        .get(&format!("{}/rate_limit", gh.url()))
        .header("Authorization", &format!("token {}", gh.token()))
        .call()
        .expect("get");
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers().get("content-type").expect("ct"),
        "application/json; charset=utf-8"
    );
    for h in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-ratelimit-used",
        "x-ratelimit-resource",
    ] {
        assert!(resp.headers().get(h).is_some(), "{h}");
    }
    let body: Value = resp.body_mut().read_json().expect("json");
    assert_eq!(body["resources"]["core"]["limit"], 5000);
    let (status, body) = rest(&gh, "GET", "/repos/octo/app/nothing-here", None);
    assert_eq!((status, body["message"].clone()), (404, json!("Not Found")));
    assert_eq!(gh.take_nonconforming().len(), 1, "no such route");
}

#[test]
fn job_logs_redirect_to_a_blob_url_that_refuses_credentials() {
    let gh = FakeGitHub::start();
    let (job, bare_job) = gh.world(|w| {
        let job = w
            .check_run("octo/app", 1, "lint")
            .failure()
            .log("error: unused variable\n")
            .job_id();
        (job, w.check_run("octo/app", 1, "test").failure().job_id())
    });
    let auth = format!("Bearer {}", gh.token());
    let resp = agent_without_redirects()
        .get(&format!(
            "{}/repos/octo/app/actions/jobs/{job}/logs",
            gh.url()
        ))
        .header("Authorization", &auth)
        .call()
        .expect("get");
    assert_eq!(resp.status().as_u16(), 302);
    let location = resp
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(
        location.starts_with(&format!("{}/_blobs/job-logs/{job}?token=", gh.url())),
        "{location}"
    );

    let mut blob = agent().get(&location).call().expect("get blob");
    assert_eq!(blob.status().as_u16(), 200);
    assert_eq!(
        blob.body_mut().read_to_string().expect("text"),
        "error: unused variable\n"
    );
    let forwarded = agent()
        .get(&location)
        .header("Authorization", &auth)
        .call()
        .expect("get blob");
    assert_eq!(
        forwarded.status().as_u16(),
        400,
        "credentials must not reach the blob host"
    );

    // ureq's default agent follows the redirect and drops the Authorization header.
    let mut followed = agent()
        .get(&format!(
            "{}/repos/octo/app/actions/jobs/{job}/logs",
            gh.url()
        ))
        .header("Authorization", &auth)
        .call()
        .expect("get");
    assert_eq!(followed.status().as_u16(), 200);
    assert_eq!(
        followed.body_mut().read_to_string().expect("text"),
        "error: unused variable\n"
    );

    let (status, body) = rest(
        &gh,
        "GET",
        &format!("/repos/octo/app/actions/jobs/{bare_job}/logs"),
        None,
    );
    assert_eq!((status, body["message"].clone()), (404, json!("Not Found")));
    let log = gh.requests();
    assert_eq!(log.count("GET /repos/{o}/{r}/actions/jobs/{id}/logs"), 3);
    assert_eq!(log.count("GET /_blobs/job-logs/{id}"), 3);
}

#[test]
fn enabling_auto_merge_follows_githubs_refusals_and_github_merges_when_ready() {
    let gh = FakeGitHub::start();
    let (clean, blocked) = gh.world(|w| {
        w.repo("octo/app").required_checks(&["lint"]);
        w.check_run("octo/app", 1, "lint");
        let clean = w.pr("octo/app", 1).node_id();
        w.check_run("octo/app", 2, "lint").in_progress();
        (clean, w.pr("octo/app", 2).node_id())
    });
    let enable = |id: &str| {
        graphql(
            &gh,
            OPERATIONS,
            &json!({"pullRequestId": id, "mergeMethod": "SQUASH"}),
            Some("EnableAutoMerge"),
        )
        .1
    };
    let body = enable(&clean);
    assert_eq!(body["data"]["enablePullRequestAutoMerge"], Value::Null);
    assert_eq!(body["errors"][0]["type"], "UNPROCESSABLE");
    assert_eq!(
        body["errors"][0]["message"],
        "Pull request Pull request is in clean status"
    );
    assert_eq!(
        body["errors"][0]["path"],
        json!(["enablePullRequestAutoMerge"])
    );

    let body = enable(&blocked);
    assert!(body.get("errors").is_none(), "{body}");
    let am = &body["data"]["enablePullRequestAutoMerge"]["pullRequest"]["autoMergeRequest"];
    assert_eq!(am["mergeMethod"], "SQUASH");
    assert_eq!(am["enabledAt"], DEFAULT_NOW);
    assert!(
        enable(&blocked).get("errors").is_none(),
        "enabling twice succeeds"
    );
    assert_eq!(gh.world(|w| w.auto_merge_enables("octo/app", 2)), 2);

    // The required check passes: GitHub merges the armed PR by the next request.
    gh.world(|w| {
        w.check_run("octo/app", 2, "lint").success();
    });
    let body = snapshot(&gh, &[("octo/app", 2, None)]);
    assert_eq!(body["data"]["pr0"]["pullRequest"]["state"], "MERGED");
    gh.world(|w| {
        assert!(matches!(
            w.events.last(),
            Some(Event::Merged {
                number: 2,
                auto_merge: true,
                method: MergeMethod::Squash,
                ..
            })
        ));
        assert_eq!(w.get_pr("octo/app", 1).behind_by, 1, "the base moved on");
    });

    gh.world(|w| {
        w.repo("octo/off").auto_merge_allowed(false);
        w.pr("octo/off", 1).merge_state(MergeState::Blocked);
        w.repo("octo/bare").unprotected();
        w.pr("octo/bare", 1).merge_state(MergeState::Blocked);
    });
    let off = gh.world(|w| w.get_pr("octo/off", 1).node_id.clone());
    assert_eq!(
        enable(&off)["errors"][0]["message"],
        "Pull request Auto merge is not allowed for this repository"
    );
    let bare = gh.world(|w| w.get_pr("octo/bare", 1).node_id.clone());
    assert_eq!(
        enable(&bare)["errors"][0]["message"],
        "Pull request Protected branch rules not configured for this branch"
    );

    let (_, body) = graphql(
        &gh,
        OPERATIONS,
        &json!({"pullRequestId": clean}),
        Some("DisableAutoMerge"),
    );
    assert_eq!(
        body["errors"][0]["message"],
        "Can't disable auto-merge for this pull request."
    );
}

#[test]
fn a_document_of_several_arming_mutations_applies_each_and_answers_per_alias() {
    use pr_monitor::forge::github::queries::{Arming, auto_merge_many};
    let gh = FakeGitHub::start();
    let prs = gh.world(|w| {
        w.repo("octo/app").required_checks(&["lint"]);
        w.repo("octo/off").auto_merge_allowed(false);
        let mut prs = Vec::new();
        for (repo, n) in [("octo/app", 1), ("octo/off", 1), ("octo/app", 2)] {
            w.check_run(repo, n, "lint").in_progress();
            w.pr(repo, n).merge_state(MergeState::Blocked);
            let pr = w.get_pr(repo, n);
            prs.push((pr.node_id.clone(), pr.head_sha().to_owned()));
        }
        prs
    });
    let arming: Vec<Arming<'_>> = prs
        .iter()
        .map(|(id, head)| Arming {
            pull_request_id: id,
            expected_head: head,
            method: "SQUASH",
        })
        .collect();
    let (status, body) = graphql(&gh, &auto_merge_many(&arming), &json!({}), None);
    assert_eq!(status, 200);
    let armed = |alias: &str| &body["data"][alias]["pullRequest"]["autoMergeRequest"];
    assert_eq!(armed("arm0")["mergeMethod"], "SQUASH", "{body}");
    assert_eq!(body["data"]["arm1"], Value::Null);
    assert_eq!(armed("arm2")["mergeMethod"], "SQUASH", "{body}");
    let errors = body["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{body}");
    assert_eq!(errors[0]["path"], json!(["arm1"]));
    assert_eq!(errors[0]["type"], "UNPROCESSABLE");
    assert_eq!(
        errors[0]["message"],
        "Pull request Auto merge is not allowed for this repository"
    );
    gh.world(|w| {
        assert_eq!(w.auto_merge_enables("octo/app", 1), 1);
        assert_eq!(w.auto_merge_enables("octo/off", 1), 0);
        assert_eq!(w.auto_merge_enables("octo/app", 2), 1);
    });
    // One request, charged by GitHub's formula: no connection, so one point.
    let log = gh.requests();
    assert_eq!(log.count("POST /graphql EnableAutoMerges"), 1);
    assert_eq!(log.points("POST /graphql EnableAutoMerges"), 1);
    assert!(log.entries.last().is_some_and(|r| r.mutation));

    // A document GitHub's schema refuses is refused whole: nothing is applied.
    let wrong = auto_merge_many(&arming).replacen("mergeMethod: SQUASH", "mergeMethod: FAST", 1);
    let (_, body) = graphql(&gh, &wrong, &json!({}), None);
    assert!(body["data"].is_null(), "{body}");
    assert!(body["errors"][0]["message"].is_string(), "{body}");
    gh.world(|w| {
        assert_eq!(w.auto_merge_enables("octo/app", 1), 1);
        assert_eq!(w.auto_merge_enables("octo/app", 2), 1);
    });
}

#[test]
fn merging_guards_the_head_sha_and_never_merges_twice() {
    let gh = FakeGitHub::start();
    let head = gh.world(|w| w.pr("octo/app", 1).head_sha());
    let (status, body) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/1/merge",
        Some(json!({"merge_method": "squash", "sha": "0".repeat(40)})),
    );
    assert_eq!(status, 409);
    assert_eq!(
        body["message"],
        "Head branch was modified. Review and try the merge again."
    );
    assert_eq!(gh.world(|w| w.merges("octo/app", 1)), 0);

    let (status, body) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/1/merge",
        Some(json!({"merge_method": "squash", "sha": head})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["merged"], true);
    assert_eq!(body["message"], "Pull Request successfully merged");
    assert_eq!(body["sha"].as_str().expect("sha").len(), 40);
    let (status, body) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/1/merge",
        Some(json!({"merge_method": "squash", "sha": head})),
    );
    assert_eq!(
        (status, body["message"].clone()),
        (405, json!("Pull Request is not mergeable"))
    );
    assert_eq!(gh.world(|w| w.merges("octo/app", 1)), 1);

    gh.world(|w| {
        w.repo("octo/app").merge_methods(&[MergeMethod::Squash]);
        w.pr("octo/app", 2);
        w.pr("octo/app", 3).conflicting();
    });
    let (status, body) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/2/merge",
        Some(json!({"merge_method": "merge"})),
    );
    assert_eq!(
        (status, body["message"].clone()),
        (
            405,
            json!("Merge commits are not allowed on this repository.")
        )
    );
    let (status, _) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/3/merge",
        Some(json!({"merge_method": "squash"})),
    );
    assert_eq!(status, 405);
    assert_eq!(gh.requests().count("PUT /repos/{o}/{r}/pulls/{n}/merge"), 5);
}

#[test]
fn updating_a_branch_makes_a_new_head_and_keeps_auto_merge() {
    let gh = FakeGitHub::start();
    let (id, old_head) = gh.world(|w| {
        w.repo("octo/app").required_checks(&["lint"]).strict();
        w.check_run("octo/app", 1, "lint");
        let pr = w
            .pr("octo/app", 1)
            .author("dev")
            .behind(2)
            .auto_merge(MergeMethod::Squash);
        (pr.node_id(), w.get_pr("octo/app", 1).head_sha().to_owned())
    });
    assert_eq!(
        gh.world(|w| w.merge_state("octo/app", 1)),
        MergeState::Behind
    );
    let update = |expected: &str| {
        graphql(
            &gh,
            OPERATIONS,
            &json!({"pullRequestId": id, "expectedHeadOid": expected, "updateMethod": "MERGE"}),
            Some("UpdateBranch"),
        )
        .1
    };
    let body = update(&"f".repeat(40));
    assert_eq!(
        body["errors"][0]["message"],
        "expected head sha didn't match current head ref."
    );

    let body = update(&old_head);
    let new_head = body["data"]["updatePullRequestBranch"]["pullRequest"]["headRefOid"]
        .as_str()
        .expect("oid")
        .to_owned();
    assert_ne!(new_head, old_head);
    gh.world(|w| {
        let pr = w.get_pr("octo/app", 1);
        assert_eq!(pr.behind_by, 0);
        assert!(
            pr.auto_merge.is_some(),
            "an update never disarms auto-merge"
        );
        assert_eq!(
            pr.state,
            PrState::Open,
            "the new head has no checks yet, so it is not merged"
        );
        let head = w.head("octo/app", 1);
        assert_eq!(
            (head.author.as_deref(), head.committer.as_deref()),
            (Some("owner"), Some("owner"))
        );
        assert!(head.suites.is_empty());
        assert_eq!(w.merge_state("octo/app", 1), MergeState::Blocked);
        assert_eq!(w.branch_updates("octo/app", 1), 1);
    });
    let body = update(&new_head);
    assert_eq!(
        body["errors"][0]["message"],
        "There are no new commits on the base branch."
    );
}

#[test]
fn replying_to_and_resolving_a_thread() {
    let gh = FakeGitHub::start();
    let thread = gh.world(|w| {
        w.thread("octo/app", 1)
            .comment("reviewer", "rename this")
            .id()
    });
    let (_, body) = graphql(
        &gh,
        OPERATIONS,
        &json!({"threadId": thread, "body": "🤖 done"}),
        Some("ReplyToThread"),
    );
    let comment = &body["data"]["addPullRequestReviewThreadReply"]["comment"];
    assert!(
        comment["id"].as_str().expect("id").starts_with("PRRC_"),
        "{body}"
    );
    assert!(
        comment["url"]
            .as_str()
            .expect("url")
            .starts_with("https://github.com/octo/app/pull/1#discussion_r")
    );
    let (_, body) = graphql(
        &gh,
        OPERATIONS,
        &json!({"threadId": thread}),
        Some("ResolveThread"),
    );
    assert_eq!(
        body["data"]["resolveReviewThread"]["thread"],
        json!({"id": thread, "isResolved": true})
    );
    gh.world(|w| {
        let t = w.thread_by_id(&thread).expect("thread");
        assert!(t.resolved);
        assert_eq!(t.comments[1].author.as_deref(), Some("owner"));
        assert_eq!(w.replies(&thread), vec!["🤖 done".to_owned()]);
    });
    let (_, body) = graphql(
        &gh,
        OPERATIONS,
        &json!({"threadId": "PRRT_nope"}),
        Some("ResolveThread"),
    );
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
    assert_eq!(gh.requests().writes().len(), 3);
}

#[test]
fn rerunning_failed_jobs_requeues_them_once_the_run_is_done() {
    let gh = FakeGitHub::start();
    let (run_id, failed) = gh.world(|w| {
        let failed = w.check_run("octo/app", 1, "lint").failure().job_id();
        w.check_run("octo/app", 1, "test").in_progress();
        (
            w.check_run("octo/app", 1, "build")
                .run_id()
                .expect("actions"),
            failed,
        )
    });
    let path = format!("/repos/octo/app/actions/runs/{run_id}/rerun-failed-jobs");
    let (status, body) = rest(&gh, "POST", &path, None);
    assert_eq!(
        (status, body["message"].clone()),
        (403, json!("This workflow is already running"))
    );
    gh.world(|w| {
        w.update_check_run("octo/app", 1, "test").success();
    });
    let (status, body) = rest(&gh, "POST", &path, None);
    assert_eq!((status, body), (201, json!({})));
    gh.world(|w| {
        let (_, run) = w.check_run_by_job_id(failed).expect("job");
        assert_eq!((run.status, run.conclusion), (CheckStatus::Queued, None));
        assert_eq!(w.reruns(run_id), 1);
    });
    let (status, _) = rest(
        &gh,
        "POST",
        "/repos/octo/app/actions/runs/1/rerun-failed-jobs",
        None,
    );
    assert_eq!(status, 404);
}

/// `mergeable` and `mergeStateStatus` of `octo/app#1`, read through a snapshot query.
fn mergeability(gh: &FakeGitHub) -> (Value, Value) {
    let body = snapshot(gh, &[("octo/app", 1, None)]);
    let pr = &body["data"]["pr0"]["pullRequest"];
    (pr["mergeable"].clone(), pr["mergeStateStatus"].clone())
}

#[test]
fn mergeability_can_read_unknown_for_a_while() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1).mergeable_unknown_for(2);
    });
    let read = || mergeability(&gh);
    assert_eq!(read(), (json!("UNKNOWN"), json!("UNKNOWN")));
    assert_eq!(read(), (json!("UNKNOWN"), json!("UNKNOWN")));
    assert_eq!(read(), (json!("MERGEABLE"), json!("CLEAN")));
}

#[test]
fn mergeability_reads_unknown_once_after_each_push_and_branch_update() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1).behind(1);
    });
    let read = || mergeability(&gh);
    let unknown = (json!("UNKNOWN"), json!("UNKNOWN"));
    assert_eq!(read(), (json!("MERGEABLE"), json!("CLEAN")));
    gh.world(|w| {
        w.push("octo/app", 1, "octocat");
    });
    assert_eq!(read(), unknown, "the first read after a push");
    assert_eq!(read(), (json!("MERGEABLE"), json!("CLEAN")));
    gh.world(|w| {
        w.update_branch("octo/app", 1, None, UpdateMethod::Merge)
            .expect("updated");
    });
    assert_eq!(read(), unknown, "the first read after a branch update");
    assert_eq!(read(), (json!("MERGEABLE"), json!("CLEAN")));
}

#[test]
fn faults_fire_in_order_on_matching_requests() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/app", 2);
        w.pr("octo/app", 3);
    });
    gh.fault(Fault::status(502).on("POST /graphql").times(2));
    let q = |prs: &[u64]| {
        let reqs: Vec<SnapshotRequest> = prs
            .iter()
            .map(|n| SnapshotRequest {
                pr: PrRef::github("octo/app", *n),
                branches: None,
                required_checks: false,
            })
            .collect();
        graphql(
            &gh,
            &snapshot_query(&reqs, Features::default()),
            &json!({}),
            None,
        )
    };
    assert_eq!(q(&[1]).0, 502);
    let (status, body) = q(&[1]);
    assert_eq!(status, 502);
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .expect("message")
            .contains("Something went wrong")
    );
    assert_eq!(q(&[1]).0, 200);
    assert_eq!(gh.pending_faults(), 0);

    // A PR-scoped fault: every batch with PR 3 fails, the others pass.
    gh.fault(Fault::status(500).when_query_mentions("octo/app", 3));
    assert_eq!(q(&[1, 2, 3]).0, 500);
    assert_eq!(q(&[1, 2]).0, 200);
    assert_eq!(q(&[3]).0, 500);
    assert_eq!(q(&[3]).0, 500);
    gh.clear_faults();

    gh.fault(Fault::rate_limit(60));
    let resp = agent()
        .get(&format!("{}/rate_limit", gh.url()))
        .header("Authorization", &format!("Bearer {}", gh.token()))
        .call()
        .expect("get");
    assert_eq!(resp.status().as_u16(), 403);
    assert_eq!(
        resp.headers().get("retry-after").expect("retry-after"),
        "60"
    );
    assert_eq!(
        resp.headers()
            .get("x-ratelimit-remaining")
            .expect("remaining"),
        "0"
    );
    assert!(resp.headers().get("x-ratelimit-reset").is_some());

    gh.fault(Fault::malformed().on("POST /graphql PullRequestSnapshots"));
    let (status, body) = q(&[1]);
    assert_eq!(
        (status, body),
        (200, Value::Null),
        "the body does not parse"
    );

    gh.fault(Fault::graphql_rate_limit());
    let (status, body) = q(&[1]);
    assert_eq!(
        (status, body["errors"][0]["type"].clone()),
        (200, json!("RATE_LIMITED"))
    );

    gh.fault(Fault::delay(50));
    assert_eq!(q(&[1]).0, 200);

    // The merge happens, the client hears 500.
    let head = gh.world(|w| w.get_pr("octo/app", 1).head_sha().to_owned());
    gh.fault(Fault::merge_then_500());
    let (status, _) = rest(
        &gh,
        "PUT",
        "/repos/octo/app/pulls/1/merge",
        Some(json!({"sha": head})),
    );
    assert_eq!(status, 500);
    assert_eq!(
        gh.world(|w| (w.get_pr("octo/app", 1).state, w.merges("octo/app", 1))),
        (PrState::Merged, 1)
    );

    let log = gh.requests();
    let faulted: Vec<&FaultKind> = log
        .entries
        .iter()
        .filter_map(|r| r.fault.as_ref())
        .collect();
    assert_eq!(faulted.len(), 10);
    assert_eq!(log.count("POST /graphql PullRequestSnapshots"), 10);
    assert_eq!(log.count("POST /graphql"), 10);
    assert_eq!(log.count("GET /rate_limit"), 1);
}

#[test]
fn queries_cost_githubs_documented_points_and_the_log_counts_them() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1);
    });
    // Connection requests: threads 1 + their comments 100 + commits 1 + suites 1 + runs 50
    // = 153 → 2 points; nodes 100 + 10,000 + 1 + 50 + 5,000.
    let query = "query Example { repository(owner: \"octo\", name: \"app\") { pullRequest(number: 1) { \
                 reviewThreads(first: 100) { nodes { comments(first: 100) { nodes { body } } } } \
                 commits(last: 1) { nodes { commit { checkSuites(first: 50) { nodes { \
                 checkRuns(first: 100) { nodes { name } } } } } } } } } \
                 rateLimit { cost nodeCount used } }";
    let (status, body) = graphql(&gh, query, &json!({}), None);
    assert_eq!(status, 200, "{body}");
    let rate = &body["data"]["rateLimit"];
    assert_eq!(
        (rate["cost"].clone(), rate["nodeCount"].clone()),
        (json!(2), json!(15_151)),
        "{body}"
    );
    assert_eq!(rate["used"], json!(2), "charged before it answers");
    // No connection at all still costs one point.
    let (_, body) = graphql(
        &gh,
        "query { rateLimit { cost nodeCount } }",
        &json!({}),
        None,
    );
    assert_eq!(
        body["data"]["rateLimit"],
        json!({"cost": 1, "nodeCount": 0})
    );
    // A refused query costs nothing.
    let (_, body) = graphql(
        &gh,
        "query { viewer { repositories(first: 101) { totalCount } } }",
        &json!({}),
        None,
    );
    assert_eq!(body["errors"][0]["type"], "EXCESSIVE_PAGINATION");
    rest(&gh, "GET", "/repos/octo/app/nothing-here", None);
    assert_eq!(gh.take_nonconforming().len(), 1, "no such route");
    let log = gh.requests();
    assert_eq!(log.points("POST /graphql Example"), 2);
    assert_eq!(log.points("POST /graphql"), 3);
    assert_eq!(log.points(""), 4, "a REST call is one point");
}

#[test]
fn the_budget_falls_refuses_what_it_cannot_cover_and_resets() {
    let gh = FakeGitHub::start();
    gh.world(|w| {
        w.pr("octo/app", 1);
        w.rate.limit = 2;
    });
    let ask = || {
        let mut resp = agent()
            .post(&gh.graphql_url())
            .header("Authorization", &format!("Bearer {}", gh.token()))
            .send_json(json!({"query": "query { rateLimit { cost remaining resetAt } }"}))
            .expect("POST /graphql");
        let remaining = resp
            .headers()
            .get("x-ratelimit-remaining")
            .map(|v| v.to_str().unwrap().to_owned());
        let reset = resp
            .headers()
            .get("x-ratelimit-reset")
            .map(|v| v.to_str().unwrap().parse::<i64>().unwrap());
        let body: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        (resp.status().as_u16(), remaining, reset, body)
    };
    let (status, remaining, reset, body) = ask();
    assert_eq!((status, remaining.as_deref()), (200, Some("1")));
    assert_eq!(body["data"]["rateLimit"]["remaining"], json!(1), "{body}");
    let reset = reset.unwrap();
    let reset_at = chrono::DateTime::from_timestamp(reset, 0).unwrap();
    assert_eq!(
        body["data"]["rateLimit"]["resetAt"],
        json!(reset_at.format("%Y-%m-%dT%H:%M:%SZ").to_string())
    );
    assert_eq!(ask().1.as_deref(), Some("0"), "it falls with each query");
    let (status, remaining, _, body) = ask();
    assert_eq!(
        (
            status,
            remaining.as_deref(),
            body["errors"][0]["type"].clone()
        ),
        (200, Some("0"), json!("RATE_LIMITED")),
        "spent: GitHub's HTTP 200 rate limit"
    );
    assert_eq!(
        gh.requests().points("POST /graphql"),
        2,
        "a refusal costs nothing"
    );
    // REST's own budget is spent the same way: 403 once nothing is left.
    gh.world(|w| w.rate.core_used = 2);
    let (status, _) = rest(&gh, "GET", "/user", None);
    assert_eq!(status, 403);
    // Past its reset time the budget is whole again.
    gh.world(|w| w.rate.reset_epoch = chrono::Utc::now().timestamp() - 1);
    let (status, remaining, reset, _) = ask();
    assert_eq!((status, remaining.as_deref()), (200, Some("1")));
    assert!(
        reset.unwrap() > chrono::Utc::now().timestamp() + 3000,
        "the next reset is an hour on"
    );
    assert_eq!(rest(&gh, "GET", "/user", None).0, 200);
}

#[test]
fn dropping_the_fake_with_a_fault_that_never_fired_fails_the_test() {
    let panic_of = |gh: FakeGitHub| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(gh)))
            .err()
            .map(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "a panic without a message".to_owned())
            })
    };

    let gh = FakeGitHub::start();
    gh.fault(Fault::status(502).on("POST /graphql"));
    gh.fault(Fault::status(500).when_query_mentions("octo/app", 3));
    assert_eq!(
        panic_of(gh).as_deref(),
        Some(
            "FakeGitHub: queued faults that never fired: on POST /graphql; \
             on every request about octo/app#3"
        )
    );

    // A fault that fired, even once of several, and a cleared fault are fine.
    let gh = FakeGitHub::start();
    gh.fault(Fault::status(502).on("GET /rate_limit").times(3));
    assert_eq!(rest(&gh, "GET", "/rate_limit", None).0, 502);
    gh.fault(Fault::rate_limit(60));
    gh.clear_faults();
    gh.fault(Fault::delay(1).on("GET /rate_limit").always());
    assert_eq!(rest(&gh, "GET", "/rate_limit", None).0, 200);
    assert_eq!(panic_of(gh), None);
}

/// The fake serves every open connection at once, as a real forge's front end does: eight
/// clients, each on a connection of its own that it keeps open once answered, ask together;
/// the fake holds each request until the eight are there, and every one is answered. (A
/// server that gave a few threads to kept-alive connections would leave some unread until
/// another closed; the timeout only bounds how long such a failure takes.)
#[test]
fn eight_kept_open_connections_are_served_at_once() {
    const RATE: &str = "GET /rate_limit";
    let gh = FakeGitHub::start();
    gh.hold_until_together(RATE, 8);
    let answered = std::sync::Barrier::new(8);
    let url = format!("{}/rate_limit", gh.url());
    let auth = format!("Bearer {}", gh.token());
    let statuses: Vec<Result<u16, String>> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let client: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .proxy(None)
                        .timeout_global(Some(std::time::Duration::from_secs(20)))
                        .build()
                        .into();
                    let status = client
                        .get(&url)
                        .header("Authorization", &auth)
                        .call()
                        .and_then(|mut r| {
                            r.body_mut().read_to_string()?;
                            Ok(r.status().as_u16())
                        })
                        .map_err(|e| e.to_string());
                    // The client's connection stays open until every client has its answer.
                    answered.wait();
                    status
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(statuses, vec![Ok(200); 8]);
    assert_eq!(gh.most_together(RATE), 8);
}
