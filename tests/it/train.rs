//! Merge trains end to end against the fake GitLab's trains: an armed MR joins its train once,
//! shows its place, merges when the train does and is never merged directly; a failed train
//! pipeline is told once and the same head is not put on the train again; a new head or the
//! owner's `merge --when-ready` does.

use serde_json::json;

use crate::support::fake_gitlab::{ApiError, Fault, GitLabEnv};
use crate::support::smtp::SmtpServer;

const P: &str = "g/p";

/// A project with merge trains and "pipelines must succeed"; MR 5 is already on the train,
/// MR 1 (head by `author`) has a passing pipeline and is not armed yet.
fn train_project(env: &GitLabEnv, author: &str) {
    env.gl.world(|w| {
        w.project(P).pipelines_must_succeed().merge_trains();
        w.mr(P, 5);
        w.job(P, 5, "test").success();
        let key = (P.to_owned(), 5);
        w.add_to_train(&key, None, false, true).unwrap();
        w.mr(P, 1).head_by(author);
        w.job(P, 1, "test").success();
    });
}

/// MR 1 (head by `author`, agent `fixer`) armed and on the train; then its train pipeline's
/// `test` fails with `log` and the train drops it.
fn on_the_train_then_failed(env: &mut GitLabEnv, author: &str, log: &str) {
    train_project(env, author);
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "--merge-when-ready",
        "g/p!1",
    ]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.gl.world(|w| {
        w.train_job(P, 1, "test").failed().trace(log);
        w.settle();
    });
}

fn with_email(smtp: &SmtpServer) -> GitLabEnv {
    GitLabEnv::with_config(&smtp.notify_config())
}

#[test]
fn an_armed_mr_joins_the_train_once_shows_its_place_and_merges_at_the_front() {
    let mut env = GitLabEnv::new();
    train_project(&env, "fixer-bot");
    env.ok(&["watch", "add", "--merge-when-ready", "g/p!1"]);
    env.ok(&["run"]);
    let log = env.gl.requests();
    let joins = log.matching("POST /projects/{id}/merge_trains/merge_requests/{iid}");
    assert_eq!(joins.len(), 1);
    let body = joins[0].json();
    let sha = env.gl.world(|w| w.get_mr(P, 1).sha.clone());
    assert_eq!(body["sha"], sha.as_str(), "guarded by the head sha");
    assert_eq!(body["auto_merge"], true);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 1);
    let s = env.status("g/p!1");
    assert_eq!(s["queue"]["position"], 2, "{s}");
    assert_eq!(s["queue"]["state"], "QUEUED");
    assert_eq!(s["queue"]["estimated_seconds"], json!(null));
    assert_eq!(s["queue"]["ahead"], json!([5]), "{s}");
    assert!(s["queue"]["enqueued_at"].is_string());
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("⏳ 2nd in train"), "{line}");
    let detail = env.ok(&["status", "g/p!1"]).stdout;
    assert!(
        detail.contains("2nd in the merge train (QUEUED)"),
        "{detail}"
    );
    assert!(detail.contains("entered the merge train"), "{detail}");
    assert!(detail.contains("ahead      !5"), "{detail}");

    // MR 5's train pipeline passes and it merges; MR 1 is at the front, checking.
    env.gl.world(|w| {
        w.train_job(P, 5, "test").success();
        w.train_job(P, 1, "test").running();
        w.settle();
    });
    assert_eq!(env.gl.world(|w| w.merges(P, 5)), 1);
    env.advance(60);
    env.ok(&["run", "--force"]);
    let s = env.status("g/p!1");
    assert_eq!(s["queue"]["position"], 1, "{s}");
    assert_eq!(s["queue"]["state"], "AWAITING_CHECKS");
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("⏳ queued, checking"), "{line}");
    env.gl.world(|w| {
        w.train_job(P, 1, "test").success();
        w.settle();
    });
    for _ in 0..3 {
        env.advance(60);
        env.ok(&["run", "--force"]);
    }
    let s = env.status("g/p!1");
    assert_eq!(s["state"], "merged", "{s}");
    assert_eq!(s["queue"], json!(null));
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 1, "joined once");
    assert_eq!(env.gl.world(|w| w.merges(P, 1)), 1);
    let log = env.gl.requests();
    assert_eq!(
        log.count("PUT /projects/{id}/merge_requests/{iid}/merge"),
        0,
        "never a direct merge on a train project"
    );
    assert_eq!(
        log.count("PUT /projects/{id}/merge_requests/{iid}/rebase"),
        0
    );
}

#[test]
fn a_train_pipeline_failure_is_told_once_and_the_same_head_is_not_put_on_the_train_again() {
    let smtp = SmtpServer::start();
    let mut env = with_email(&smtp);
    on_the_train_then_failed(
        &mut env,
        "dev",
        "thread 'main' panicked: assertion failed: left == right\n",
    );
    for _ in 0..6 {
        env.advance(60);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(
        env.gl.world(|w| w.train_joins(P, 1)),
        1,
        "the same head is not put on the train again"
    );
    let left: Vec<String> = smtp
        .subjects()
        .into_iter()
        .filter(|s| s.contains("left the merge train"))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with("MR !1: left the merge train: test failed in the merge train"),
        "{left:?}"
    );
    let v = env.ok(&["status", "g/p!1", "--json"]).json();
    let history = v["history"].to_string();
    assert!(history.contains("left the merge train"), "{history}");
    assert!(history.contains("assertion failed"), "{history}");
    assert_eq!(v["queue"], json!(null));

    // A new head (a fix) joins the train again once its pipeline passes.
    env.gl.world(|w| {
        w.push(P, 1, "fixer-bot");
        w.job(P, 1, "test").success();
    });
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 2);
    assert!(
        env.inbox_messages().is_empty(),
        "the failed head was not the agent's"
    );
}

#[test]
fn a_train_failure_on_the_agents_commit_goes_to_the_agent_with_the_log() {
    let smtp = SmtpServer::start();
    let mut env = with_email(&smtp);
    on_the_train_then_failed(
        &mut env,
        "fixer-bot",
        "error[E0308]: mismatched types in src/train.rs\n",
    );
    env.advance(60);
    env.ok(&["run", "--force"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert!(
        msgs[0].to_string().contains("mismatched types"),
        "{}",
        msgs[0]
    );
    assert!(
        !smtp
            .subjects()
            .iter()
            .any(|s| s.contains("left the merge train")),
        "the agent's failure is the agent's"
    );
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 1);
}

#[test]
fn the_owners_merge_when_ready_puts_the_refused_head_on_the_train_again() {
    let mut env = GitLabEnv::new();
    on_the_train_then_failed(&mut env, "dev", "test failed\n");
    env.advance(60);
    env.ok(&["run", "--force"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 1);
    // The failed train pipeline does not fail the MR's own: retrying puts it back.
    env.ok(&["merge", "g/p!1", "--when-ready"]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gl.world(|w| w.train_joins(P, 1)), 2);
    // `merge --now` never skips the train, and GitLab refuses a direct merge there.
    let out = env.run(&["merge", "g/p!1", "--merge-now"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("merge train"), "{}", out.stderr);
    assert_eq!(
        env.gl
            .requests()
            .count("PUT /projects/{id}/merge_requests/{iid}/merge"),
        0
    );
    let refused = env.gl.world(|w| {
        let sha = w.get_mr(P, 1).sha.clone();
        w.merge(&(P.to_owned(), 1), Some(&sha), false, false)
    });
    assert!(matches!(refused, Err(ApiError(405, _))), "{refused:?}");
}

#[test]
fn without_a_train_list_the_mrs_own_car_is_read_and_its_place_is_not_guessed() {
    let mut env = GitLabEnv::new();
    env.gl.fault(
        Fault::status(404)
            .on("GET /projects/{id}/merge_trains/{branch}")
            .always(),
    );
    train_project(&env, "dev");
    the_mrs_own_car_is_read(&mut env);
}

/// Some installs let only Maintainers list a train (403): the token is not refused for it, and
/// the MR's own car is read instead.
#[test]
fn a_train_list_refused_to_a_developer_falls_back_to_the_mrs_own_car() {
    let mut env = GitLabEnv::new();
    train_project(&env, "dev");
    env.gl.world(|w| {
        w.project(P).train_list_forbidden();
    });
    the_mrs_own_car_is_read(&mut env);
    let refused = env
        .gl
        .requests()
        .matching("GET /projects/{id}/merge_trains/{branch}")
        .iter()
        .map(|r| r.status)
        .collect::<Vec<_>>();
    assert_eq!(refused, [403], "the list was asked, and refused");
}

/// MR 1, armed, is in its train, whose list the forge does not give: its own car is read,
/// and it shows in the train with its place unknown.
fn the_mrs_own_car_is_read(env: &mut GitLabEnv) {
    env.ok(&["watch", "add", "--merge-when-ready", "g/p!1"]);
    env.ok(&["run"]);
    env.advance(60);
    env.ok(&["run", "--force"]);
    let s = env.status("g/p!1");
    assert_eq!(s["queue"]["position"], 0, "{s}");
    assert_eq!(s["queue"]["state"], "QUEUED");
    let line = env.ok(&["status"]).stdout;
    assert!(line.contains("⏳ in train"), "{line}");
    let detail = env.ok(&["status", "g/p!1"]).stdout;
    assert!(detail.contains("in the merge train (QUEUED)"), "{detail}");
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/{id}/merge_trains/merge_requests/{iid}"),
        1
    );
}
