//! GitLab merge requests end to end: the real binary with `--now` against the fake GitLab —
//! pills, the auto-merge trap, a merge without a pipeline, a vanished MR, paging, and GitLab's
//! own recorded shapes. The agent loop, infra retries, arming, `merge --now`, the rebase of a
//! behind armed MR (and after a reply lost or a crash), discussions, merge trains and rate
//! limits run against both fakes from one body in `forges/`.

use serde_json::{Value, json};

use crate::support::fake_gitlab::{Event, GitLabEnv};

const P: &str = "g/p";

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/gitlab/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn a_run_reads_state_and_lights_pills_for_each_mr() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1);
        w.job(P, 1, "lint").failed().trace("error: lint\n");
        w.job(P, 1, "test").success();
        w.mr(P, 2).conflict();
        w.mr(P, 3);
        w.thread(P, 3)
            .note("reviewer", "please rename")
            .on("src/a.rs", 3);
        w.thread(P, 3).note("reviewer", "done?").resolved();
        w.comment(P, 3, "reviewer", "looks fine overall");
    });
    env.ok(&[
        "watch",
        "add",
        "g/p!1",
        "g/p!2",
        "https://gitlab.example.com/g/p/-/merge_requests/3",
    ]);
    env.ok(&["run"]);

    let s1 = env.status("g/p!1");
    assert_eq!(s1["forge"], "gitlab");
    assert_eq!(s1["state"], "open");
    assert_eq!(s1["pills"]["ci"], true, "{s1}");
    assert_eq!(s1["why"], "not_agent_commit");
    let sha = env.gl.world(|w| w.get_mr(P, 1).sha.clone());
    assert_eq!(s1["head_sha"], sha.as_str());
    assert_eq!(env.pills("g/p!2")["cnf"], true);
    let s3 = env.status("g/p!3");
    assert_eq!(s3["pills"]["cmt"], 1, "{s3}");
    assert_eq!(s3["pills"]["ci"], false);

    let log = env.gl.requests();
    assert_eq!(log.count("GET /projects/{id}/merge_requests/{iid}"), 3);
    assert_eq!(
        log.count("GET /projects/{id}"),
        1,
        "settings read once per run"
    );
    assert_eq!(
        log.count("GET /projects/{id}/pipelines/{pid}/jobs"),
        1,
        "only MR 1 has a pipeline"
    );
    assert_eq!(
        log.count("GET /projects/g%2Fp/merge_requests/1"),
        1,
        "project ids are URL-encoded"
    );
    assert!(
        log.entries
            .iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer gl-test-token")),
        "bearer auth on every request"
    );
    let mr_reads = log.matching("GET /projects/{id}/merge_requests/{iid}");
    assert_eq!(
        mr_reads[0]
            .param("include_diverged_commits_count")
            .as_deref(),
        Some("true")
    );
    assert!(log.writes().is_empty(), "{:?}", log.writes());
}

#[test]
fn check_reports_jobs_statuses_threads_and_approvals_without_duplicates() {
    let env = GitLabEnv::new();
    let (thread, sha) = env.gl.world(|w| {
        w.project(P).approvals_required(2);
        w.mr(P, 1);
        w.job(P, 1, "lint").failed().reason("script_failure");
        w.job(P, 1, "flaky").failed().allow_failure();
        w.job(P, 1, "deploy").manual();
        w.job(P, 1, "test").running();
        w.status(P, 1, "external/sonar", "success");
        w.mr(P, 1).approved_by("alice");
        let t = w.thread(P, 1).note("bob", "rename").on("src/a.rs", 7).id();
        w.comment(P, 1, "carol", "nice");
        (t, w.get_mr(P, 1).sha.clone())
    });
    let v = env.ok(&["check", "g/p!1", "--json", "--no-state"]).json();
    assert_eq!(v["pr"]["headRefOid"], sha.as_str());
    assert_eq!(v["pr"]["headRefName"], "feature-1");
    assert_eq!(v["pr"]["baseRefName"], "main");
    assert_eq!(
        v["pr"]["mergeStateStatus"], "BLOCKED",
        "not_approved → blocked: {v}"
    );
    // Four jobs and one external status; the jobs GitLab repeats as statuses are not counted twice.
    assert_eq!(v["checks"]["total"], 5, "{}", v["checks"]);
    assert_eq!(v["checks"]["failed"], 1, "allow_failure is not a failure");
    assert_eq!(v["checks"]["pending"], 1);
    assert_eq!(v["checks"]["passed"], 1);
    assert_eq!(v["checks"]["failedChecks"][0]["name"], "lint");
    assert_eq!(v["threads"]["unresolved"], 1);
    assert_eq!(v["threads"]["unresolvedThreadIds"], json!([thread]));
    let detail = &v["threadDetails"][&thread];
    assert_eq!(detail["path"], "src/a.rs");
    assert_eq!(detail["line"], 7);
    assert_eq!(detail["comments"][0]["author"], "bob");
    assert_eq!(v["comments"]["totalIssueComments"], 1);
    assert_eq!(v["reviews"]["total"], 1);
    assert_eq!(
        v["reviews"]["latestByReviewer"]["alice"], "APPROVED",
        "{}",
        v["reviews"]
    );
}

#[test]
fn auto_merge_is_armed_only_once_the_heads_pipeline_exists() {
    let mut env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1);
        w.job(P, 1, "test").success();
        // A new head: the MR's head pipeline still belongs to the old one.
        w.push(P, 1, "dev");
    });
    env.ok(&["watch", "add", "g/p!1"]);
    env.ok(&["merge", "g/p!1", "--when-ready"]);
    env.ok(&["run"]);
    let gl = &env.gl;
    assert_eq!(
        gl.requests()
            .count("PUT /projects/{id}/merge_requests/{iid}/merge"),
        0,
        "never armed while the head has no pipeline (GitLab would merge at once)"
    );
    assert_eq!(gl.world(|w| w.merges(P, 1)), 0);
    assert!(
        env.history_text("g/p!1")
            .contains("pipeline has not started")
    );

    // The new head's pipeline starts: now it is armed, with the sha guard.
    env.advance(30);
    let sha = env.gl.world(|w| {
        w.job(P, 1, "test").running();
        w.get_mr(P, 1).sha.clone()
    });
    env.ok(&["run"]);
    let gl = &env.gl;
    let puts = gl.requests();
    let puts = puts.matching("PUT /projects/{id}/merge_requests/{iid}/merge");
    assert_eq!(puts.len(), 1);
    let body = puts[0].json();
    assert_eq!(body["sha"], sha.as_str());
    assert_eq!(body["merge_when_pipeline_succeeds"], true);
    assert_eq!(body["auto_merge"], true);
    assert!(gl.world(|w| w.get_mr(P, 1).auto_merge.is_some()));
    assert_eq!(env.status("g/p!1")["merge_via"], "auto_merge");

    // GitLab merges when the pipeline succeeds; the next tick sees it and stops.
    env.advance(60);
    env.gl.world(|w| {
        w.job(P, 1, "test").success();
        w.settle();
    });
    env.ok(&["run"]);
    let events = env.gl.world(|w| w.events.clone());
    let merged: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Merged { .. }))
        .collect();
    assert_eq!(merged.len(), 1, "{events:?}");
    assert!(
        matches!(merged[0], Event::Merged { at_once_without_pipeline: false, sha: s, .. } if *s == sha),
        "{merged:?}"
    );
    let s = env.status("g/p!1");
    assert_eq!(s["state"], "merged");
    assert_eq!(s["next_tick_at"], json!(null));
}

#[test]
fn a_project_without_pipelines_is_merged_directly_with_the_sha_guard() {
    let mut env = GitLabEnv::new();
    let sha = env.gl.world(|w| {
        w.project(P).squash_option("never");
        w.mr(P, 1).sha()
    });
    env.ok(&["watch", "add", "--merge-when-ready", "g/p!1"]);
    env.ok(&["run"]);
    assert_eq!(
        env.gl.world(|w| w.merges(P, 1)),
        0,
        "within the no-checks grace"
    );

    env.advance(601);
    env.ok(&["run"]);
    assert_eq!(env.gl.world(|w| w.merges(P, 1)), 1);
    let log = env.gl.requests();
    let puts = log.matching("PUT /projects/{id}/merge_requests/{iid}/merge");
    assert_eq!(puts.len(), 1, "{:?}", log.counts());
    let body = puts[0].json();
    assert_eq!(body["sha"], sha.as_str());
    assert_eq!(body["squash"], false, "the project never squashes");
    assert_eq!(body.get("merge_when_pipeline_succeeds"), None);
    let at_once = env.gl.world(|w| {
        w.events.iter().any(|e| {
            matches!(
                e,
                Event::Merged {
                    at_once_without_pipeline: true,
                    ..
                }
            )
        })
    });
    assert!(!at_once);
    env.advance(30);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gl.world(|w| w.merges(P, 1)), 1, "never twice");
    assert_eq!(env.status("g/p!1")["state"], "merged");
}

#[test]
fn a_missing_mr_is_reported_and_no_longer_polled() {
    let mut env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1);
    });
    env.ok(&["watch", "add", "g/p!1", "g/p!9"]);
    env.run(&["run"]);
    assert_eq!(env.status("g/p!1")["last_error"], json!(null));
    let gone = env.status("g/p!9");
    assert!(
        gone["last_error"]
            .as_str()
            .unwrap()
            .contains("no longer polled"),
        "{gone}"
    );
    assert_eq!(gone["next_tick_at"], json!(null));
    env.gl.clear_requests();
    env.advance(3600);
    env.ok(&["run"]);
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/g%2Fp/merge_requests/9"),
        0
    );
}

#[test]
fn lists_are_paged_with_x_next_page() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.max_per_page = 2;
        w.project(P);
        w.mr(P, 1);
        for name in ["a", "b", "c", "d", "e"] {
            w.job(P, 1, name).success();
            w.thread(P, 1).note("reviewer", name);
        }
    });
    let v = env.ok(&["check", "g/p!1", "--json", "--no-state"]).json();
    assert_eq!(v["checks"]["total"], 5);
    assert_eq!(v["threads"]["unresolved"], 5);
    let log = env.gl.requests();
    assert_eq!(log.count("GET /projects/{id}/pipelines/{pid}/jobs"), 3);
    assert_eq!(
        log.count("GET /projects/{id}/merge_requests/{iid}/discussions"),
        3
    );
}

/// A list is read to its end past a hundred pages; only a server that never ends one is left at
/// a thousand pages, and stderr names the list that was cut.
#[test]
fn lists_are_read_past_a_hundred_pages_and_a_list_cut_at_a_thousand_says_so() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.max_per_page = 1;
        w.project(P);
        w.mr(P, 1);
        for n in 0..150 {
            w.job(P, 1, &format!("job-{n}")).success();
        }
        for n in 0..3 {
            w.thread(P, 1).note("reviewer", &format!("note {n}"));
        }
        w.endless_discussions = true;
    });
    let out = env.ok(&["check", "g/p!1", "--json", "--no-state"]);
    let v = out.json();
    assert_eq!(v["checks"]["total"], 150, "read to the end");
    assert_eq!(v["threads"]["unresolved"], 3);
    let log = env.gl.requests();
    assert_eq!(log.count("GET /projects/{id}/pipelines/{pid}/jobs"), 150);
    assert_eq!(
        log.count("GET /projects/{id}/merge_requests/{iid}/discussions"),
        1000
    );
    assert!(
        out.stderr.contains(
            "the discussions list is cut short: only its first 3 items were read, and it goes on past 1000 pages"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("jobs list"), "{}", out.stderr);
}

#[test]
fn gitlabs_recorded_shapes_are_read_by_the_client() {
    let env = GitLabEnv::new();
    let project = "gitlab-org/gitlab-ee";
    let mr = fixture("get_merge_request.json");
    let discussions = fixture("getMergeRequestDiscussions.nock.json")[0]["response"].clone();
    let approvals = fixture("getMergeRequestApprovals.nock.json")[0]["response"].clone();
    env.gl.world(|w| {
        w.project(project);
        // The fixture's head commit and pipeline, so the client's follow-up reads succeed.
        w.mr(project, 14656);
        let sha = mr["sha"].as_str().unwrap().to_owned();
        w.get_mr_mut(project, 14656).sha.clone_from(&sha);
        let now = w.now;
        w.commits.insert(
            sha.clone(),
            crate::support::fake_gitlab::Commit::by(&sha, "Alex Kalderimis", now),
        );
        let pid = w.pipeline(project, 14656);
        let mut p = w.pipelines.remove(&pid).unwrap();
        p.id = mr["head_pipeline"]["id"].as_u64().unwrap();
        w.pipelines.insert(p.id, p);
        w.raw_mrs.insert((project.into(), 14656), mr.clone());
        w.raw_discussions
            .insert((project.into(), 14656), discussions);
        w.raw_approvals.insert((project.into(), 14656), approvals);
    });
    let v = env
        .ok(&[
            "check",
            "gitlab-org/gitlab-ee!14656",
            "--json",
            "--no-state",
        ])
        .json();
    assert_eq!(v["pr"]["title"], "Add deletion support for designs");
    assert_eq!(v["pr"]["headRefName"], "delete-designs-v2");
    assert_eq!(v["pr"]["baseRefName"], "master");
    assert_eq!(v["pr"]["headRefOid"], mr["sha"]);
    assert_eq!(v["pr"]["mergeable"], "CONFLICTING", "has_conflicts: true");
    assert_eq!(v["merge"]["hasConflicts"], true);
    assert!(
        v["pr"]["labels"]
            .as_array()
            .unwrap()
            .contains(&json!("design management"))
    );
    assert_eq!(v["threads"]["unresolved"], 0, "a system note is no thread");
    assert_eq!(v["comments"]["totalIssueComments"], 0, "nor a comment");
    assert_eq!(v["reviews"]["total"], 2, "{}", v["reviews"]);
    assert_eq!(v["reviews"]["latestByReviewer"]["reprazent"], "APPROVED");
}

#[test]
fn the_fakes_mr_has_the_fixtures_shape() {
    let env = GitLabEnv::new();
    let real = fixture("get_merge_request.json");
    let fake = env.gl.world(|w| {
        w.mr(P, 1);
        let mr = w.get_mr(P, 1).clone();
        w.mr_json(&mr, false)
    });
    for key in [
        "id",
        "iid",
        "title",
        "state",
        "draft",
        "web_url",
        "sha",
        "source_branch",
        "target_branch",
        "author",
        "detailed_merge_status",
        "merge_status",
        "has_conflicts",
        "merge_when_pipeline_succeeds",
        "labels",
        "source_project_id",
        "target_project_id",
    ] {
        let kind = crate::support::json_type;
        assert_eq!(kind(&fake[key]), kind(&real[key]), "`{key}`");
    }
    assert_eq!(
        fake["author"]["username"].is_string(),
        real["author"]["username"].is_string()
    );
    let list = fixture("get_merge_requests.json");
    assert!(list.as_array().unwrap().iter().all(|m| m["iid"].is_u64()));
}

#[test]
fn the_fake_merges_at_once_when_armed_without_a_pipeline() {
    // The trap the auto-merge test guards against is real in the fake: arming while the head
    // has no pipeline of its own merges immediately.
    let env = GitLabEnv::new();
    let merged_at_once = env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1);
        w.job(P, 1, "test").running();
        let sha = w.push(P, 1, "dev");
        w.merge(&(P.to_owned(), 1), Some(&sha), false, true)
            .unwrap();
        w.events.iter().any(|e| {
            matches!(
                e,
                Event::Merged {
                    at_once_without_pipeline: true,
                    ..
                }
            )
        })
    });
    assert!(merged_at_once);
}

/// How many rebases were asked for (`PUT …/rebase`).
pub(crate) fn rebases(env: &GitLabEnv) -> usize {
    env.gl
        .requests()
        .count("PUT /projects/{id}/merge_requests/{iid}/rebase")
}

/// The rebase happened once: its head gets a green pipeline, and the MR must merge once and
/// never be disarmed.
#[test]
fn notices_name_the_mr_as_mr_bang_n_whichever_form_was_watched() {
    let slack = crate::support::http_sink::HttpSink::start();
    let mut env =
        GitLabEnv::with_config("notify:\n  slack:\n    webhook_url_env: PRM_TEST_SLACK\n");
    env.env
        .vars
        .push(("PRM_TEST_SLACK".into(), slack.url("/services/T0/B0/hook")));
    env.gl.world(|w| {
        w.project("g/sub/p");
        w.mr("g/sub/p", 57);
        w.job("g/sub/p", 57, "lint").failed();
    });
    env.ok(&[
        "watch",
        "add",
        "https://gitlab.example.com/g/sub/p/-/merge_requests/57",
    ]);
    env.ok(&["watch", "add", "g/sub/p!57"]);
    let all = env.ok(&["status", "--json"]).json();
    assert_eq!(all.as_array().unwrap().len(), 1, "one watch: {all}");
    env.ok(&["run"]);
    let first_lines = slack.slack_lines();
    assert_eq!(
        first_lines,
        vec!["MR !57: lint failed · g/sub/p".to_owned()]
    );
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/g%2Fsub%2Fp/merge_requests/57"),
        1,
        "a nested group's path is one URL-encoded id"
    );
}
