//! GitLab's merged-results pipelines: they run on a merge commit of the target branch and the
//! MR's head, so their sha is never the head's; GitLab names them as the MR's head pipeline.

use crate::support::fake_gitlab::GitLabEnv;

const P: &str = "g/p";

#[test]
fn a_merged_results_pipelines_failure_on_the_agents_commit_reaches_the_agent() {
    let env = GitLabEnv::new();
    let pipeline = env.gl.world(|w| {
        w.project(P).merge_trains();
        w.mr(P, 1).head_by("fixer-bot");
        let pid = w.merged_results_pipeline(P, 1);
        w.pipeline_job(pid, "test")
            .failed()
            .trace("error[E0308]: mismatched types in src/merge.rs\n");
        pid
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("g/p!1"));
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert_eq!(msgs[0]["checks"][0]["name"], "test");
    assert!(
        msgs[0]["checks"][0]["log_tail"]
            .as_str()
            .unwrap()
            .contains("mismatched types"),
        "{}",
        msgs[0]
    );
    let body = msgs[0]["body"].as_str().unwrap();
    assert!(
        body.contains("merged result"),
        "the agent is told where the failure came from: {body}"
    );
    let log = env.gl.requests();
    assert_eq!(
        log.count(&format!("GET /projects/g%2Fp/pipelines/{pipeline}/jobs")),
        1,
        "the merged-results pipeline's jobs are read"
    );
}

/// A merged-results pipeline of an earlier head (GitLab keeps naming it until the new head's
/// pipeline exists) is not the current head's: its failure is nobody's yet.
#[test]
fn a_merged_results_pipeline_of_an_earlier_head_is_not_judged() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1).head_by("fixer-bot");
        let pid = w.merged_results_pipeline(P, 1);
        w.pipeline_job(pid, "test").failed().trace("error: old\n");
        w.push(P, 1, "fixer-bot");
    });
    env.ok(&["watch", "add", "--agent", "fixer", "g/p!1"]);
    env.ok(&["run"]);
    assert!(
        env.inbox_messages().is_empty(),
        "{:?}",
        env.inbox_messages()
    );
    assert_eq!(env.status("g/p!1")["pills"]["ci"], false);
}
