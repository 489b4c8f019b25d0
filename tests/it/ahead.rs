//! A chunk's stage ahead of its acting phase, end to end on GitHub: the evidence of who
//! pushed each failing head bound for the agent is read on the read pool, the chunk's reads in
//! flight together, before the chunk is acted on (also in a dry run); the acting phase uses it
//! only for the head it was read for, so a head that moved before the act is judged on its own.

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";
const ACTIVITY: &str = "GET /repos/{o}/{r}/activity";
const RERUN: &str = "POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs";

/// #1 a human's head whose runner was lost; #2 and #3 the agent's failing heads, watched for
/// the agent `fixer`. Read ahead one after another, the two evidence reads would each wait for
/// the other until the hold gives up.
fn a_chunk_with_two_heads_for_the_agent() -> TestEnv {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        // Re-run by the acting phase, whoever made the commit, without asking who pushed it.
        w.check_run(REPO, 1, "test").runner_lost();
        for n in 2..=3 {
            w.pr(REPO, n).head_commit(|c| c.by("fixer-bot"));
            w.check_run(REPO, n, "test")
                .failure()
                .log("error: assertion failed\n");
        }
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "octo/app#2",
        "octo/app#3",
    ]);
    env
}

#[test]
fn a_chunks_heads_for_the_agent_have_their_evidence_read_together_before_it_is_acted_on() {
    let env = a_chunk_with_two_heads_for_the_agent();
    env.gh.hold_until_together(ACTIVITY, 2);
    env.ok(&["run"]);
    assert_eq!(
        env.gh.most_together(ACTIVITY),
        2,
        "read together, on the pool"
    );
    let log = env.gh.requests();
    let (activity, rerun) = (log.matching(ACTIVITY), log.matching(RERUN));
    assert_eq!((activity.len(), rerun.len()), (2, 1), "{:?}", log.counts());
    assert!(
        activity.iter().all(|a| a.seq < rerun[0].seq),
        "both read before anything is written: {:?}",
        log.entries.iter().map(|e| &e.key).collect::<Vec<_>>()
    );
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 2, "{}", env.history_text("octo/app#2"));
    assert!(msgs.iter().all(|m| m["trusted_by"] == "push by fixer-bot"));
}

#[test]
fn a_dry_run_reads_the_evidence_ahead_too() {
    let env = a_chunk_with_two_heads_for_the_agent();
    env.gh.hold_until_together(ACTIVITY, 2);
    env.ok(&["run", "--dry-run"]);
    assert_eq!(env.gh.most_together(ACTIVITY), 2);
    let log = env.gh.requests();
    assert_eq!(log.count(ACTIVITY), 2, "{:?}", log.counts());
    assert!(log.writes().is_empty(), "{:?}", log.counts());
    assert!(env.inbox_messages().is_empty());
}

/// #2's head waits for the forge to list its push; an hour on, the push is listed, the kept
/// read's decision has its evidence read ahead, and the head moves just then: the kept read
/// would act, so it is read again in full, and the new head is judged on its own evidence. #1,
/// first in the chunk, has had a check running for the hour: its kept read is read again in
/// full too, when the chunk is acted on.
#[test]
fn a_head_that_moved_after_its_evidence_was_read_ahead_is_judged_on_its_own() {
    let mut env = TestEnv::new();
    let first = env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("human"));
        w.check_run(REPO, 1, "test").in_progress();
        w.pr(REPO, 2)
            .head_commit(|c| c.by("fixer-bot").push_unlisted());
        w.check_run(REPO, 2, "lint").failure().log("error: one\n");
        w.pr(REPO, 2).head_sha()
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#2"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#2")["why"], serde_json::Value::Null);
    assert!(env.inbox_messages().is_empty(), "waits for the push");
    env.advance(3601);
    env.gh
        .world(|w| w.commit_mut(REPO, &first).push_unlisted = false);
    env.gh.after_request(ACTIVITY, |w| {
        w.push(REPO, 2, "fixer-bot");
        w.check_run(REPO, 2, "lint").failure().log("error: two\n");
    });
    env.gh.clear_requests();
    env.ok(&["run"]);
    let moved = env.gh.world(|w| w.pr(REPO, 2).head_sha());
    assert_ne!(moved, first);
    let log = env.gh.requests();
    let activity = log.matching(ACTIVITY);
    let reads = log.matching("POST /graphql PullRequestSnapshots");
    assert_eq!((activity.len(), reads.len()), (2, 2), "{:?}", log.counts());
    assert!(
        activity[0].seq < reads[0].seq && reads[1].seq < activity[1].seq,
        "the first head's evidence read ahead, the moved one's when it is acted on: {:?}",
        log.entries.iter().map(|e| &e.key).collect::<Vec<_>>()
    );
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{}", env.history_text("octo/app#2"));
    assert_eq!(msgs[0]["pr"]["head_sha"], moved.as_str());
    assert_eq!(msgs[0]["trusted_by"], "push by fixer-bot");
    assert_eq!(env.status("octo/app#2")["head_sha"], moved.as_str());
    assert_eq!(
        env.pills("octo/app#1")["ci"],
        true,
        "#1's check never finished"
    );
}
