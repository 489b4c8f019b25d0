//! Budget-aware scheduling end to end: the rate-limit figures the forge's answers carried are
//! kept, and a run whose kept budget will not cover every due PR pushes the idle ones past the
//! reset (armed and active ones keep their turn), exits 0, and says so in `status`, the
//! history and the metrics file.

use serde_json::json;

use crate::support::env::TestEnv;

/// PR 1 armed, PR 2 with a check still running, PRs 3–8 idle; read twice with the whole
/// budget (a first look, then once more for the auto-merge the first run enabled), then ten
/// minutes later so no head counts as recent.
fn eight_prs_settled() -> TestEnv {
    let mut env = TestEnv::with_config("report:\n  metrics_path: out/pr_monitor.prom\n");
    env.gh.world(|w| {
        w.auto_merge_executes = false;
        w.repo("octo/app").required_approvals(1);
        for n in 1..=8 {
            w.pr("octo/app", n);
        }
        w.check_run("octo/app", 2, "build").in_progress();
    });
    env.ok(&["watch", "add", "octo/app#1", "--merge-when-ready"]);
    for n in 2..=8 {
        env.ok(&["watch", "add", &format!("octo/app#{n}")]);
    }
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run", "--force"]);
    env
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario end to end: each step a few lines, in the order it happens"
)]
fn idle_prs_wait_for_the_reset_when_the_kept_budget_is_short() {
    let mut env = eight_prs_settled();
    // One point left: the next run's summary spends it, and its answer says none is left.
    env.gh.world(|w| w.rate.graphql_used = w.rate.limit - 1);
    env.advance(60);
    env.ok(&["run", "--force"]);
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSummaries"),
        3
    );
    // The kept figures say nothing is left until the reset, an hour away: only the armed
    // PR and the one with running checks are read (one summary, the point it costs is there).
    env.gh.world(|w| w.rate.graphql_used = w.rate.limit - 1);
    env.gh.clear_requests();
    env.advance(60);
    let out = env.run(&["run", "--force"]);
    assert_eq!(
        out.code, 0,
        "a predictable shortfall fails nothing: {}",
        out.stderr
    );
    let log = env.gh.requests();
    assert_eq!(
        log.count("POST /graphql PullRequestSummaries"),
        1,
        "{:?}",
        log.counts()
    );
    let summary = log
        .entries
        .iter()
        .find(|r| r.operation.as_deref() == Some("PullRequestSummaries"))
        .unwrap();
    assert_eq!(
        summary.prs,
        vec![("octo/app".to_owned(), 1), ("octo/app".to_owned(), 2)]
    );
    for n in 1..=2 {
        let s = env.status(&format!("octo/app#{n}"));
        assert_eq!(
            (
                s["last_tick_at"].clone(),
                s["deferred"].clone(),
                s["last_error"].clone()
            ),
            (json!(env.now), json!(null), json!(null)),
            "PR {n} kept its turn: {s}"
        );
    }
    for n in 3..=8 {
        let pr = format!("octo/app#{n}");
        let s = env.status(&pr);
        assert_eq!(s["last_error"], json!(null), "{s}");
        assert_ne!(s["last_tick_at"], json!(env.now), "{pr} was not read");
        let deferred = &s["deferred"];
        assert_eq!(deferred["at"], json!(env.now), "{s}");
        assert_eq!(s["next_tick_at"], deferred["until"], "{s}");
        let until = deferred["until"].as_str().unwrap();
        let reset_in = chrono::DateTime::parse_from_rfc3339(until).unwrap()
            - chrono::DateTime::parse_from_rfc3339(&env.now).unwrap();
        assert!(
            (3000..=3700).contains(&reset_in.num_seconds()),
            "pushed to just after the reset: {s}"
        );
        let why = deferred["why"].as_str().unwrap();
        assert!(
            why.starts_with("GitHub budget: 0 points left until its reset in ")
                && why.contains("the 8 PRs due need about")
                && why.ends_with("armed and active PRs went first"),
            "{why}"
        );
    }
    let text = env.ok(&["status", "octo/app#5"]).stdout;
    assert!(text.contains("deferred   until "), "{text}");
    assert!(
        text.contains("deferred for budget until"),
        "the history says it: {text}"
    );
    let metrics = std::fs::read_to_string(env.dir.path().join("out/pr_monitor.prom")).unwrap();
    assert!(
        metrics.contains("pr_monitor_budget_deferred_prs{forge=\"github\"} 6"),
        "{metrics}"
    );
    assert!(
        metrics.contains("pr_monitor_budget_deferrals_total{forge=\"github\"} 6"),
        "{metrics}"
    );
    assert!(
        metrics.contains("pr_monitor_rate_limit_remaining{forge=\"github\"} 0"),
        "{metrics}"
    );

    // Until the reset nothing more is due.
    env.gh.clear_requests();
    env.ok(&["run"]);
    assert_eq!(env.gh.requests().total(), 0);
    // The armed and active PRs' answers tell the budget is whole again (someone else's
    // spending stopped): the next run reads every PR, and a tick ends the deferral.
    env.gh.world(|w| w.rate.graphql_used = 0);
    env.ok(&["run", "--force"]);
    assert_ne!(
        env.status("octo/app#5")["deferred"],
        json!(null),
        "still the kept figures"
    );
    env.ok(&["run", "--force"]);
    let s = env.status("octo/app#5");
    assert_eq!(
        (s["deferred"].clone(), s["last_tick_at"].clone()),
        (json!(null), json!(env.now)),
        "{s}"
    );
}

#[test]
fn gitlab_idle_mrs_wait_for_the_reset_when_the_kept_budget_is_short() {
    use crate::support::fake_gitlab::GitLabEnv;
    let mut env = GitLabEnv::new();
    env.gl.world(|w| {
        w.project("g/p");
        for n in 1..=5 {
            w.mr("g/p", n);
            w.job("g/p", n, "test").success();
        }
        w.job("g/p", 1, "lint").running();
        // A window that outlasts the test.
        w.rate.reset_epoch = chrono::Utc::now().timestamp() + 3600;
    });
    let refs: Vec<String> = (1..=5).map(|n| format!("g/p!{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(refs.iter().map(String::as_str));
    env.ok(&args);
    env.ok(&["run"]);
    env.advance(600);
    // Three requests left: the summary (listing, pipelines, branch tip) spends them.
    env.gl.world(|w| w.rate.used = w.rate.limit - 3);
    env.gl.clear_requests();
    env.ok(&["run", "--force"]);
    assert_eq!(
        env.gl.requests().total(),
        3,
        "{:?}",
        env.gl.requests().counts()
    );
    // Nothing left, as the kept figures say: the MR with a running job is read (its summary
    // alone), the four idle ones wait for the reset.
    env.gl.world(|w| w.rate.used = w.rate.limit - 3);
    env.gl.clear_requests();
    env.advance(60);
    let out = env.run(&["run", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let log = env.gl.requests();
    assert_eq!(log.total(), 3, "{:?}", log.counts());
    let listing = &log.matching("GET /projects/{id}/merge_requests")[0];
    assert!(
        listing.query.as_deref().unwrap_or("").contains("iids[]=1")
            && !listing.query.as_deref().unwrap_or("").contains("iids[]=2"),
        "{:?}",
        listing.query
    );
    assert_eq!(env.status("g/p!1")["deferred"], json!(null));
    for n in 2..=5 {
        let s = env.status(&format!("g/p!{n}"));
        let why = s["deferred"]["why"].as_str().unwrap_or_default().to_owned();
        assert!(
            why.starts_with("GitLab budget: 0 requests left until its reset in ")
                && why.contains("the 5 PRs due need about"),
            "{s}"
        );
        assert_eq!(s["next_tick_at"], s["deferred"]["until"], "{s}");
    }
}
