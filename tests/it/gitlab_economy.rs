//! Request economy on GitLab: a run reads each project's watched MRs in one listing by
//! `iids[]`, with one page of its pipelines and its target branch's tip, and reads in full only
//! the MRs whose summary changed or that have no kept read yet. Requests are deterministic, so
//! each case asserts them exactly from the fake's log.

use crate::support::fake_gitlab::GitLabEnv;

const P: &str = "g/p";

/// The requests of a summary alone: the listing, the pipelines, the target branch.
const SUMMARY: usize = 3;

/// The requests of one open MR's full read with a pipeline on its head (MR, head commit, jobs,
/// statuses, discussions, approvals), plus the project's settings once per run.
const FULL: usize = 6;

/// 30 watched MRs with passing pipelines, all read once.
fn thirty_mrs() -> GitLabEnv {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        for n in 1..=30 {
            w.mr(P, n);
            w.job(P, n, "test").success();
        }
    });
    let refs: Vec<String> = (1..=30).map(|n| format!("{P}!{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    env
}

/// Runs once more after every MR is due again; the requests that run sent.
fn next_run(env: &mut GitLabEnv) -> usize {
    env.advance(600);
    env.gl.clear_requests();
    env.ok(&["run"]);
    env.gl.requests().total()
}

#[test]
fn a_first_look_reads_every_mr_in_full_after_the_summary() {
    let env = thirty_mrs();
    let log = env.gl.requests();
    assert_eq!(
        log.count("GET /projects/{id}/merge_requests"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(log.count("GET /projects/{id}/merge_requests/{iid}"), 30);
    assert_eq!(log.total(), SUMMARY + 30 * FULL + 1, "{:?}", log.counts());
    let listing = &log.matching("GET /projects/{id}/merge_requests")[0];
    let query = listing.query.clone().unwrap_or_default();
    assert!(
        query.contains("iids[]=1&") && query.contains("iids[]=30"),
        "{query}"
    );
}

#[test]
fn idle_mrs_cost_a_tenth_of_a_request_each() {
    let mut env = thirty_mrs();
    let before = env.status("g/p!7");
    let sent = next_run(&mut env);
    assert_eq!(sent, SUMMARY, "{:?}", env.gl.requests().counts());
    let after = env.status("g/p!7");
    for key in ["pills", "why", "head_sha", "state", "last_error"] {
        assert_eq!(after[key], before[key], "{key} decided as before");
    }
    assert!(
        after["last_tick_at"] != before["last_tick_at"],
        "ticked: {after}"
    );
}

#[test]
fn a_new_pipeline_or_a_new_note_reads_only_that_mr() {
    let mut env = thirty_mrs();
    env.gl.world(|w| {
        w.push(P, 3, "dev");
        w.job(P, 3, "test").running();
    });
    assert_eq!(
        next_run(&mut env),
        SUMMARY + FULL + 1,
        "a new head and pipeline"
    );
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/g%2Fp/merge_requests/3"),
        1
    );
    env.gl
        .world(|w| w.comment(P, 9, "reviewer", "one question"));
    assert_eq!(next_run(&mut env), SUMMARY + FULL + 1, "a new note");
    assert_eq!(
        env.gl
            .requests()
            .count("GET /projects/g%2Fp/merge_requests/9"),
        1
    );
    assert_eq!(next_run(&mut env), SUMMARY, "idle again");
    env.gl.world(|w| {
        w.job(P, 3, "test").failed().trace("error: boom\n");
    });
    assert_eq!(
        next_run(&mut env),
        SUMMARY + FULL + 1 + 1,
        "the pipeline failed: MR 3 and its failed job's trace"
    );
    assert_eq!(env.pills("g/p!3")["ci"], true);
}

#[test]
fn an_mr_with_a_running_pipeline_costs_only_its_share_of_the_summary() {
    let mut env = thirty_mrs();
    env.gl.world(|w| {
        w.push(P, 5, "dev");
        w.job(P, 5, "test").running();
    });
    assert_eq!(next_run(&mut env), SUMMARY + FULL + 1, "the new head, once");
    assert_eq!(
        next_run(&mut env),
        SUMMARY,
        "still running, nothing else changed: {:?}",
        env.gl.requests().counts()
    );
    assert_eq!(env.pills("g/p!5")["ci"], false);
}

#[test]
fn arming_auto_merge_reads_the_mr_once() {
    let env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P);
        w.mr(P, 1);
        w.job(P, 1, "test").running();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "g/p!1"]);
    env.ok(&["run"]);
    let log = env.gl.requests();
    assert_eq!(
        log.count("PUT /projects/{id}/merge_requests/{iid}/merge"),
        1,
        "armed: {:?}",
        log.counts()
    );
    assert!(env.gl.world(|w| w.get_mr_mut(P, 1).auto_merge.is_some()));
    assert_eq!(
        log.count("GET /projects/{id}/merge_requests/{iid}"),
        1,
        "the MR once: {:?}",
        log.counts()
    );
    assert_eq!(log.total(), SUMMARY + FULL + 1 + 1, "{:?}", log.counts());
}

#[test]
fn an_armed_idle_mr_costs_its_share_of_the_summary_and_is_rebased_once_behind() {
    let mut env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project(P).merge_method("ff");
        for n in 1..=30 {
            w.mr(P, n);
            w.job(P, n, "test").running();
        }
    });
    env.ok(&["watch", "add", "--merge-when-ready", "g/p!1"]);
    let refs: Vec<String> = (2..=30).map(|n| format!("{P}!{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    assert!(env.gl.world(|w| w.get_mr_mut(P, 1).auto_merge.is_some()));
    // Arming changed its summary: it is read once more, then, armed on the forge, it costs
    // what the 29 others do: its share of the summary.
    assert_eq!(
        next_run(&mut env),
        SUMMARY + FULL + 1,
        "armed since its read"
    );
    for _ in 0..2 {
        assert_eq!(
            next_run(&mut env),
            SUMMARY,
            "armed and idle: {:?}",
            env.gl.requests().counts()
        );
    }
    // Auto-merge turned off on the forge: that MR alone is read in full, and armed again.
    env.gl.world(|w| w.get_mr_mut(P, 1).auto_merge = None);
    assert_eq!(
        next_run(&mut env),
        SUMMARY + FULL + 1 + 1,
        "read and re-armed"
    );
    let log = env.gl.requests();
    assert_eq!(
        log.count("PUT /projects/g%2Fp/merge_requests/1/merge"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(
        next_run(&mut env),
        SUMMARY + FULL + 1,
        "armed since its read"
    );
    assert_eq!(next_run(&mut env), SUMMARY, "idle again");
    // The target branch moves: every MR's summary says so, and the armed one, now behind on
    // a fast-forward project, is rebased in the same tick.
    env.gl.world(|w| w.advance_target(P, "main", 2));
    let sent = next_run(&mut env);
    let log = env.gl.requests();
    assert_eq!(
        log.count("PUT /projects/g%2Fp/merge_requests/1/rebase"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(
        log.count("PUT /projects/{id}/merge_requests/{iid}/rebase"),
        1,
        "{:?}",
        log.counts()
    );
    assert_eq!(
        sent,
        SUMMARY + 30 * FULL + 1 + 1,
        "every MR read, and the rebase: {:?}",
        log.counts()
    );
}
