//! GitHub Enterprise Server and self-managed GitLab as they really are: the preview media type
//! GHES wants before it shows a PR's merge state.

use serde_json::json;

use crate::support::env::TestEnv;

#[test]
fn an_enterprise_server_that_hides_the_merge_state_without_its_preview_ticks_cleanly() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.enterprise = true;
        w.pr("octo/app", 1).title("Add a feature");
        w.check_run("octo/app", 1, "lint").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(3600);
    env.ok(&["run"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_eq!(s["state"], "open", "{s}");
}
