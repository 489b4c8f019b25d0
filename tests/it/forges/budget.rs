//! Budget-aware scheduling, written once over both fakes: the rate-limit figures the forge's
//! answers carried are kept, and a run whose kept budget will not cover every due change pushes
//! the idle ones past the reset (armed and active ones keep their turn), exits 0, and says so in
//! `status`, the history and the metrics file; until the reset nothing more is due, and a
//! budget found whole again ends the deferral. Which changes a summary asked for is in each
//! forge's own words (GitHub: the PRs of the GraphQL summary; GitLab: the listing's `iids[]`).

use serde_json::json;

use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::{FakeForge, OnGitHub};

const METRICS: &str = "report:\n  metrics_path: out/pr_monitor.prom\n";

/// Change 1 armed (its merge held by a missing approval), change 2 with a check still running,
/// changes 3–8 idle; read with the whole budget (a first look, then once more for the auto-merge
/// the first run turned on), then ten minutes later so no head counts as recent.
fn eight_changes_settled(f: &mut impl FakeForge) {
    f.hold_merges();
    for n in 1..=8 {
        f.open(n, "dev");
    }
    f.running(2, "build");
    f.ok(&["watch", "add", &f.pr(1), "--merge-when-ready"]);
    let rest: Vec<String> = (2..=8).map(|n| f.pr(n)).collect();
    let mut args = vec!["watch", "add"];
    args.extend(rest.iter().map(String::as_str));
    f.ok(&args);
    f.ok(&["run"]);
    f.advance(600);
    f.ok(&["run", "--force"]);
}

/// With what a run of the settled changes costs (`cost`: the summary, and the full reads the
/// forge needs for an armed change) left, then nothing, only changes 1 and 2 are read
/// (`asked_only_1_and_2` sees the request log); changes 3–8 are pushed to just after the reset,
/// and the status, its text, the history and the metrics say so.
fn idle_changes_wait_for_the_reset_when_the_kept_budget_is_short<F: FakeForge>(
    f: &mut F,
    cost: u64,
    asked_only_1_and_2: impl FnOnce(&F),
) {
    eight_changes_settled(f);
    // One run's worth left: the next run spends it, and its answer says none is left.
    f.leave_budget(cost);
    f.clear_requests();
    f.advance(60);
    f.ok(&["run", "--force"]);
    assert_eq!(f.request_count() as u64, cost, "one run's worth");
    // The kept figures say nothing is left until the reset, an hour away: only the armed
    // change and the one with running checks are read (what they cost is there).
    f.leave_budget(cost);
    f.clear_requests();
    f.advance(60);
    let out = f.run(&["run", "--force"]);
    assert_eq!(
        out.code, 0,
        "a predictable shortfall fails nothing: {}",
        out.stderr
    );
    assert_eq!(f.request_count() as u64, cost, "the same run's worth");
    asked_only_1_and_2(f);
    for n in 1..=2 {
        let s = f.status(&f.pr(n));
        assert_eq!(
            (
                s["last_tick_at"].clone(),
                s["deferred"].clone(),
                s["last_error"].clone()
            ),
            (json!(f.now), json!(null), json!(null)),
            "change {n} kept its turn: {s}"
        );
    }
    for n in 3..=8 {
        deferred_to_the_reset(f, n);
    }
    told_deferred(f);
    waits_for_the_reset_or_a_whole_budget(f);
}

/// Change `n` was not read and waits until just after the reset, saying why.
fn deferred_to_the_reset(f: &impl FakeForge, n: u64) {
    let w = f.words();
    let pr = f.pr(n);
    let s = f.status(&pr);
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert_ne!(s["last_tick_at"], json!(f.now), "{pr} was not read");
    let deferred = &s["deferred"];
    assert_eq!(deferred["at"], json!(f.now), "{s}");
    assert_eq!(s["next_tick_at"], deferred["until"], "{s}");
    let until = deferred["until"].as_str().unwrap();
    let reset_in = chrono::DateTime::parse_from_rfc3339(until).unwrap()
        - chrono::DateTime::parse_from_rfc3339(&f.now).unwrap();
    assert!(
        (3000..=3700).contains(&reset_in.num_seconds()),
        "pushed to just after the reset: {s}"
    );
    let why = deferred["why"].as_str().unwrap();
    let left = format!(
        "{} budget: 0 {} left until its reset in ",
        w.forge, w.budget
    );
    assert!(
        why.starts_with(&left)
            && why.contains("the 8 PRs due need about")
            && why.ends_with("armed and active PRs went first"),
        "{why}"
    );
}

/// `status` and the history say a change waits; the metrics count the six deferred.
fn told_deferred(f: &impl FakeForge) {
    let text = f.ok(&["status", &f.pr(5)]).stdout;
    assert!(text.contains("deferred   until "), "{text}");
    assert!(
        text.contains("deferred for budget until"),
        "the history says it: {text}"
    );
    let metrics = std::fs::read_to_string(f.dir.path().join("out/pr_monitor.prom")).unwrap();
    let forge = f.forge();
    for line in [
        format!("pr_monitor_budget_deferred_prs{{forge=\"{forge}\"}} 6"),
        format!("pr_monitor_budget_deferrals_total{{forge=\"{forge}\"}} 6"),
        format!("pr_monitor_rate_limit_remaining{{forge=\"{forge}\"}} 0"),
    ] {
        assert!(metrics.contains(&line), "{line}: {metrics}");
    }
}

/// Until the reset nothing more is due. The armed and active changes' answers tell the budget
/// is whole again (someone else's spending stopped): the next run reads every change, and a
/// tick ends the deferral.
fn waits_for_the_reset_or_a_whole_budget(f: &impl FakeForge) {
    f.clear_requests();
    f.ok(&["run"]);
    assert_eq!(f.request_count(), 0);
    f.restore_budget();
    f.ok(&["run", "--force"]);
    let idle = f.pr(5);
    assert_ne!(
        f.status(&idle)["deferred"],
        json!(null),
        "still the kept figures"
    );
    f.ok(&["run", "--force"]);
    let s = f.status(&idle);
    assert_eq!(
        (s["deferred"].clone(), s["last_tick_at"].clone()),
        (json!(null), json!(f.now)),
        "{s}"
    );
}

#[test]
fn idle_prs_wait_for_the_reset_when_the_kept_budget_is_short_on_github() {
    idle_changes_wait_for_the_reset_when_the_kept_budget_is_short(
        &mut OnGitHub::with_config(METRICS),
        1,
        |f| {
            let log = f.gh.requests();
            let summary = &log.matching("POST /graphql PullRequestSummaries")[0];
            assert_eq!(
                summary.prs,
                vec![("octo/app".to_owned(), 1), ("octo/app".to_owned(), 2)]
            );
        },
    );
}

#[test]
fn idle_mrs_wait_for_the_reset_when_the_kept_budget_is_short_on_gitlab() {
    idle_changes_wait_for_the_reset_when_the_kept_budget_is_short(
        &mut GitLabEnv::with_config(METRICS),
        // The listing, its pipelines and the branch tip; the armed MR's full read (it has no
        // pipeline, so GitLab cannot arm it yet, and each run reads it to try again): the MR
        // once, its project, head commit, statuses, discussions and approvals.
        9,
        |f| {
            let log = f.gl.requests();
            let listing = log.matching("GET /projects/{id}/merge_requests")[0]
                .query
                .clone()
                .unwrap_or_default();
            assert!(
                listing.contains("iids[]=1")
                    && listing.contains("iids[]=2")
                    && !listing.contains("iids[]=3"),
                "{listing}"
            );
        },
    );
}
