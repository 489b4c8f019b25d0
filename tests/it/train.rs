//! GitLab's merge trains where GitLab alone differs: without the train's list (404, or 403 to
//! a Developer) the MR's own car is read and its place is not guessed. What trains share with
//! GitHub's merge queue is in `forges::queue`.

use crate::support::fake_gitlab::{Fault, GitLabEnv};
use crate::support::forge::FakeForge;

#[test]
fn without_a_train_list_the_mrs_own_car_is_read_and_its_place_is_not_guessed() {
    let mut env = GitLabEnv::new();
    env.gl.fault(
        Fault::status(404)
            .on("GET /projects/{id}/merge_trains/{branch}")
            .always(),
    );
    env.queued_behind(5, 1, "dev");
    the_mrs_own_car_is_read(&mut env);
}

/// Some installs let only Maintainers list a train (403): the token is not refused for it, and
/// the MR's own car is read instead.
#[test]
fn a_train_list_refused_to_a_developer_falls_back_to_the_mrs_own_car() {
    let mut env = GitLabEnv::new();
    env.queued_behind(5, 1, "dev");
    env.gl.world(|w| {
        w.project("g/p").train_list_forbidden();
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
