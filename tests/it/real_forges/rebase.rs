//! GitLab rebases in the background: `PUT …/rebase` answers 202, the MR then shows
//! `rebase_in_progress: true` (asked with `include_rebase_in_progress=true`), and the rebase
//! ends with a new head, or with `merge_error` when it failed. pr-monitor asks once, waits for
//! it on later ticks, and takes a failed rebase for a conflict.

use crate::gitlab::rebases;
use crate::support::fake_gitlab::{Event, GitLabEnv};

const P: &str = "g/p";
const MR: &str = "g/p!1";

/// An armed MR of someone's whose target moved on, in a job whose conflicts go to the agent;
/// each rebase stays under way for `reads` reads of the MR.
fn armed_mr_behind(reads: u32, fails: bool) -> GitLabEnv {
    let mut env = GitLabEnv::new();
    env.job(
        "conflicts",
        "name: conflicts\npolicy:\n  agent: fixer\n  conflicts: agent\n",
    );
    env.gl.world(|w| {
        w.project(P).merge_method("ff");
        let mr = w.mr(P, 1).head_by("fixer-bot");
        if fails {
            mr.rebase_fails();
        }
        w.job(P, 1, "test").running();
        w.rebase_takes_reads = reads;
    });
    env.ok(&[
        "watch",
        "add",
        "--job",
        "conflicts",
        "--merge-when-ready",
        MR,
    ]);
    env.ok(&["run"]);
    env.advance(30);
    env.gl.world(|w| w.advance_target(P, "main", 2));
    env
}

fn rebased(env: &GitLabEnv) -> usize {
    env.gl.world(|w| {
        w.events
            .iter()
            .filter(|e| matches!(e, Event::Rebased { .. }))
            .count()
    })
}

#[test]
fn a_rebase_under_way_is_waited_for_on_later_ticks_and_asked_once() {
    let mut env = armed_mr_behind(3, false);
    env.ok(&["run", "--force"]);
    assert_eq!(rebases(&env), 1);
    let asked = env.gl.requests();
    assert!(
        asked
            .matching("GET /projects/{id}/merge_requests/{iid}")
            .iter()
            .all(|r| r.param("include_rebase_in_progress").as_deref() == Some("true")),
        "every read of the MR asks whether a rebase is under way"
    );
    for _ in 0..4 {
        env.advance(30);
        env.ok(&["run", "--force"]);
    }
    assert_eq!(rebased(&env), 1, "{}", env.history_text(MR));
    assert_eq!(rebases(&env), 1, "{}", env.history_text(MR));
    let status = env.status(MR);
    let head = env.gl.world(|w| w.get_mr(P, 1).sha.clone());
    assert_eq!(status["head_sha"], head.as_str(), "{status}");
    assert_eq!(status["merge_armed"], true, "{}", env.history_text(MR));
    assert_eq!(status["pills"]["cnf"], false, "{status}");
    assert!(
        env.inbox_messages().is_empty(),
        "{:?}",
        env.inbox_messages()
    );
}

#[test]
fn a_rebase_that_fails_in_the_background_is_a_conflict_sent_to_the_agent() {
    let mut env = armed_mr_behind(1, true);
    env.ok(&["run", "--force"]);
    assert_eq!(rebases(&env), 1);
    for _ in 0..3 {
        env.advance(30);
        env.ok(&["run", "--force"]);
    }
    let history = env.history_text(MR);
    assert_eq!(rebased(&env), 0);
    assert_eq!(rebases(&env), 1, "not asked again: {history}");
    assert_eq!(env.status(MR)["pills"]["cnf"], true, "{history}");
    assert!(history.contains("Rebase failed"), "{history}");
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{history}");
    assert_eq!(msgs[0]["kind"], "conflict", "{}", msgs[0]);
}
