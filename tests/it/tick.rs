//! The foundation end to end: `watch add` then `run` against the fake GitHub records state and
//! the right next tick for each cadence rule; merged and closed PRs stop; one failing PR never
//! stops the others; config errors name file:line:column.

use serde_json::json;

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

#[test]
fn nothing_watched_says_how_to_add_a_pr() {
    let env = TestEnv::new();
    let out = env.ok(&["run"]);
    assert!(out.stdout.contains("nothing is watched"), "{}", out.stdout);
    assert!(
        out.stdout.contains("pr-monitor watch add"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.gh.requests().total(),
        0,
        "no forge request when nothing is due"
    );
}

#[test]
fn an_idle_green_pr_is_polled_on_the_idle_cadence() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1).title("Add a feature");
        w.check_run("octo/app", 1, "lint").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    assert_eq!(
        env.status("octo/app#1")["next_tick_at"],
        "2026-11-29T12:00:00Z",
        "a new watch is due at once"
    );
    env.ok(&["run"]);
    let first = env.status("octo/app#1");
    assert_eq!(
        first["next_tick_at"], "2026-11-29T12:00:30Z",
        "a head seen for the first time is recent activity"
    );
    env.advance(150);
    env.ok(&["run"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["state"], "open");
    assert_eq!(
        s["pills"],
        json!({"ci": false, "ci_fixing": false, "cnf": false, "cmt": 0})
    );
    assert_eq!(s["why"], json!(null));
    assert_eq!(s["last_tick_at"], "2026-11-29T12:02:30Z");
    assert_eq!(s["next_tick_at"], "2026-11-29T12:07:30Z");
    assert_eq!(
        s["head_sha"],
        env.gh
            .world(|w| w.get_pr("octo/app", 1).head_sha().to_owned())
    );
    // Not due again until then: a second run asks nothing.
    let before = env.gh.requests().total();
    let out = env.ok(&["run"]);
    assert!(out.stdout.contains("nothing is due"), "{}", out.stdout);
    assert_eq!(env.gh.requests().total(), before);
    // --force ticks it anyway.
    env.ok(&["run", "--force"]);
    assert!(env.gh.requests().total() > before);
}

#[test]
fn cadence_rules() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        // 1: checks running → poll_sec.
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "test").in_progress();
        // 2: a commit in the last two minutes → poll_sec.
        w.pr("octo/app", 2);
        w.check_run("octo/app", 2, "test").success();
        // 3: mergeability still being computed → poll_sec.
        w.pr("octo/app", 3).mergeable_unknown_for(10);
        w.check_run("octo/app", 3, "test").success();
        // 4: idle → idle_poll_sec.
        w.pr("octo/app", 4);
        w.check_run("octo/app", 4, "test").success();
    });
    env.ok(&[
        "watch",
        "add",
        "octo/app#1",
        "octo/app#2",
        "octo/app#3",
        "octo/app#4",
    ]);
    env.ok(&["run"]);
    // A first look at a head counts as activity: everything is on the fast cadence once.
    env.advance(600);
    env.gh.world(|w| {
        w.push("octo/app", 2, "dev");
        w.check_run("octo/app", 2, "test").success();
    });
    env.advance(60);
    env.ok(&["run"]);
    let next = |n: u64| env.status(&format!("octo/app#{n}"))["next_tick_at"].clone();
    assert_eq!(next(1), "2026-11-29T12:11:30Z", "checks running");
    assert_eq!(next(2), "2026-11-29T12:11:30Z", "a recent commit");
    assert_eq!(next(3), "2026-11-29T12:11:30Z", "mergeability unknown");
    assert_eq!(next(4), "2026-11-29T12:16:00Z", "idle");
}

#[test]
fn an_armed_pr_is_polled_on_the_active_cadence() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "test").in_progress();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run"]);
    assert_eq!(
        env.status("octo/app#1")["next_tick_at"],
        "2026-11-29T12:10:30Z"
    );
    assert_eq!(env.status("octo/app#1")["merge_armed"], true);
}

#[test]
fn merged_and_closed_prs_stop_being_polled() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1).merged();
        w.pr("octo/app", 2).closed();
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    for (n, state) in [(1, "merged"), (2, "closed")] {
        let s = env.status(&format!("octo/app#{n}"));
        assert_eq!(s["state"], state);
        assert_eq!(s["next_tick_at"], json!(null));
    }
    let before = env.gh.requests().total();
    let out = env.ok(&["run", "--force"]);
    assert_eq!(env.gh.requests().total(), before, "{}", out.stdout);
}

#[test]
fn pills_light_from_the_snapshot() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint")
            .failure()
            .log("error: unused variable `x`\n");
        w.pr("octo/app", 2).conflicting();
        w.check_run("octo/app", 2, "lint").failure();
        w.pr("octo/app", 3);
        w.thread("octo/app", 3)
            .comment("reviewer", "rename this")
            .unresolved();
        w.thread("octo/app", 3)
            .comment("reviewer", "and this")
            .unresolved();
        w.thread("octo/app", 3)
            .comment("reviewer", "done")
            .resolved();
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2", "octo/app#3"]);
    env.ok(&["run"]);
    assert_eq!(
        env.pills("octo/app#1"),
        json!({"ci": true, "ci_fixing": false, "cnf": false, "cmt": 0})
    );
    assert_eq!(env.status("octo/app#1")["why"], "not_agent_commit");
    assert_eq!(
        env.pills("octo/app#2"),
        json!({"ci": false, "ci_fixing": false, "cnf": true, "cmt": 0}),
        "a conflict beats failing checks"
    );
    assert_eq!(env.pills("octo/app#3")["cmt"], 2);
    // `status PR` shows the picture the tick saw.
    let detail = env.ok(&["status", "octo/app#1"]).stdout;
    assert!(detail.contains("✗ lint"), "{detail}");
    assert!(detail.contains("mergeable  MERGEABLE"), "{detail}");
    let json = env.ok(&["status", "octo/app#1", "--json"]).json();
    assert_eq!(json["picture"]["failed"][0][0], "lint");
}

#[test]
fn one_failing_pr_never_stops_the_others() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.repo("octo/app");
        for n in 1..=3 {
            w.pr("octo/app", n);
            w.check_run("octo/app", n, "test").success();
        }
    });
    // #2 answers 502 whenever a request reads it; #9 does not exist.
    env.gh.fault(
        Fault::status(502)
            .when_query_mentions("octo/app", 2)
            .always(),
    );
    env.ok(&[
        "watch",
        "add",
        "octo/app#1",
        "octo/app#2",
        "octo/app#3",
        "octo/app#9",
    ]);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    for n in [1, 3] {
        let s = env.status(&format!("octo/app#{n}"));
        assert_eq!(s["last_error"], json!(null), "#{n}: {s}");
        assert!(s["head_sha"].is_string(), "#{n} was read: {s}");
    }
    let bad = env.status("octo/app#2");
    assert!(bad["last_error"].as_str().unwrap().contains("502"), "{bad}");
    assert_eq!(
        bad["next_tick_at"], "2026-11-29T12:00:30Z",
        "retried on the active cadence"
    );
    let gone = env.status("octo/app#9");
    assert!(
        gone["last_error"]
            .as_str()
            .unwrap()
            .contains("no longer polled"),
        "{gone}"
    );
    assert_eq!(
        gone["next_tick_at"],
        json!(null),
        "a PR that does not exist is reported, not retried forever"
    );
}

#[test]
fn a_malformed_answer_fails_only_that_tick() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.gh
        .fault(Fault::malformed().on("POST /graphql").times(20));
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 1);
    assert!(
        env.status("octo/app#1")["last_error"]
            .as_str()
            .unwrap()
            .contains("not JSON"),
        "{}",
        out.stdout
    );
    env.gh.clear_faults();
    env.ok(&["run", "--force"]);
    assert_eq!(env.status("octo/app#1")["last_error"], json!(null));
}

#[test]
fn paused_watches_are_skipped_until_resumed() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "https://github.com/octo/app/pull/1"]);
    env.ok(&["watch", "pause", "octo/app#1"]);
    env.ok(&["run", "--force"]);
    assert_eq!(env.gh.requests().total(), 0);
    env.ok(&["watch", "resume", "octo/app#1"]);
    env.ok(&["run"]);
    assert!(env.gh.requests().total() > 0);
    env.ok(&["watch", "rm", "octo/app#1"]);
    assert_eq!(env.ok(&["status", "--json"]).json(), json!([]));
}

#[test]
fn dry_run_decides_and_changes_nothing() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.ok(&["run", "--dry-run"]);
    assert!(out.stdout.contains("ci lit"), "{}", out.stdout);
    assert_eq!(env.status("octo/app#1")["last_tick_at"], json!(null));
}

#[test]
fn bad_references_and_unknown_names_are_usage_errors() {
    let env = TestEnv::new();
    let out = env.run(&["watch", "add", "octo-app-1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("OWNER/REPO#N"), "{}", out.stderr);
    let out = env.run(&["watch", "add", "--agent", "nobody", "octo/app#1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("nobody"), "{}", out.stderr);
}

#[test]
fn config_errors_name_file_line_and_column() {
    let env = TestEnv::new();
    let bad = env.dir.path().join("bad.yaml");
    let cases = [
        ("pr:\n  poll_sec: 0\n", ":2:"),
        ("pr:\n  pol_sec: 30\n", ":2:"),
        (
            "database: x.db\ngithub:\n  api_url: http://example.com\n",
            ":3:",
        ),
        (
            "agents:\n  fixer:\n    inbox: x\n    logins: [a]\npr:\n  idle_poll_sec: -5\n",
            ":6:",
        ),
        ("schedule: \"61 * * * *\"\n", ":1:"),
        ("pr: [\n", ":"),
    ];
    for (yaml, at) in cases {
        std::fs::write(&bad, yaml).unwrap();
        let out = env.run_with_config(&bad, &["config", "check"]);
        assert_eq!(out.code, 2, "{yaml}: {}", out.stderr);
        let want = format!("{}{at}", bad.display());
        assert!(
            out.stderr.contains(&want),
            "{yaml}: want {want} in {}",
            out.stderr
        );
    }
    env.job("broken", "name: broken\npolicy:\n  agent: nobody\n");
    let out = env.run(&["config", "check"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("broken.yaml:3:"), "{}", out.stderr);
}

#[test]
fn tokens_never_appear_in_output() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.gh
        .fault(Fault::status(401).on("POST /graphql").always());
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.run(&["run"]);
    let token = env.gh.token();
    for text in [
        &out.stdout,
        &out.stderr,
        &env.ok(&["status", "--json"]).stdout,
        &env.ok(&["status", "octo/app#1"]).stdout,
    ] {
        assert!(!text.contains(&token), "token leaked: {text}");
    }
}

#[test]
fn the_daemon_sweeps_on_its_schedule_and_stops_on_sigterm_or_sigint() {
    for signal in ["-TERM", "-INT"] {
        the_daemon_sweeps_and_stops_on(signal);
    }
}

fn the_daemon_sweeps_and_stops_on(signal: &str) {
    let env = TestEnv::with_config("schedule: \"* * * * * *\"\n");
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
        .current_dir(env.dir.path())
        .args([
            "--config",
            env.config_path().to_str().unwrap(),
            "--now",
            &env.now,
            "daemon",
        ])
        .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
        .env("RUST_BACKTRACE", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Observe the first sweep's record (bounded: 30 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while env.status("octo/app#1")["last_tick_at"].is_null() {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon never swept"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped"));
}

#[test]
fn every_run_writes_the_status_page_and_metrics() {
    let env = TestEnv::with_config(
        "report:\n  html_path: out/status.html\n  metrics_path: out/pr_monitor.prom\n",
    );
    env.gh.world(|w| {
        w.pr("octo/app", 1).title("Add <b>bold</b> things");
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let page = std::fs::read_to_string(env.dir.path().join("out/status.html")).unwrap();
    assert!(
        page.contains("PR #1 ✗ 1 failing") && page.contains("Add &lt;b&gt;bold&lt;/b&gt; things"),
        "{page}"
    );
    assert!(
        page.contains(r#"<span class="pill ci">ci</span>"#),
        "{page}"
    );
    let metrics = std::fs::read_to_string(env.dir.path().join("out/pr_monitor.prom")).unwrap();
    assert!(
        metrics.contains("pr_monitor_pills{pill=\"ci\"} 1"),
        "{metrics}"
    );
    assert!(!env.dir.path().join("out/status.tmp").exists());
}

#[test]
fn run_json_prints_the_status_shape_of_each_pr_ticked() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let v = env.ok(&["run", "--json"]).json();
    let one = &v[0];
    assert_eq!(one["pr"], "https://github.com/octo/app/pull/1");
    assert_eq!(one["pills"]["ci"], true);
    assert_eq!(one["last_tick_at"], "2026-11-29T12:00:00Z");
    assert_eq!(one["next_tick_at"], "2026-11-29T12:00:30Z");
    assert!(
        one["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h == "ci lit: lint failed"),
        "{one}"
    );
}

#[test]
fn jobs_name_the_prs_to_watch() {
    let env = TestEnv::new();
    env.job(
        "auto",
        "name: auto\nwatch:\n  - pr: octo/app#1\n  - repo: octo/app\n    labels: [automerge]\npolicy:\n  merge_when_ready: true\n",
    );
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/app", 2).label("automerge");
        w.pr("octo/app", 3);
    });
    let out = env.ok(&["run"]);
    assert!(
        out.stdout
            .contains("watching https://github.com/octo/app/pull/2 (job auto)"),
        "{}",
        out.stdout
    );
    let all = env.ok(&["status", "--json"]).json();
    let watched: Vec<u64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["number"].as_u64().unwrap())
        .collect();
    assert_eq!(watched, vec![1, 2]);
    for s in all.as_array().unwrap() {
        assert_eq!(s["job"], "auto");
        assert_eq!(s["merge_armed"], true, "the job arms what it watches");
    }
    assert_eq!(env.gh.requests().count("POST /graphql OpenPullRequests"), 1);
    env.ok(&["run"]);
    assert_eq!(
        env.gh.requests().count("POST /graphql OpenPullRequests"),
        1,
        "listed at most once per idle_poll_sec"
    );
    // `watch add --job` arms too.
    env.ok(&["watch", "add", "--job", "auto", "octo/app#3"]);
    assert_eq!(env.status("octo/app#3")["merge_armed"], true);
}

#[test]
fn a_job_names_a_pr_by_its_address_on_the_configured_host() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.job(
        "own",
        &format!(
            "name: own\nwatch:\n  - pr: {}/octo/app/pull/1\n",
            env.gh.url()
        ),
    );
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["job"], "own");
    // Another host is still refused, at the entry's value.
    env.job(
        "foreign",
        "name: foreign\nwatch:\n  - pr: https://evil.example/octo/app/pull/2\n",
    );
    let out = env.run(&["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("foreign.yaml:3:9: ")
            && out.stderr.contains(
                "`https://evil.example/octo/app/pull/2` names host `evil.example`, \
                 which is not a configured github host (github.com, "
            ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_server_without_branch_comparison_still_reads_every_pr() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.missing_fields.push(("Ref".into(), "compare".into()));
        w.pr("octo/app", 1).behind(2);
        w.pr("octo/app", 2);
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    env.advance(600);
    env.ok(&["run"]);
    for n in [1, 2] {
        let s = env.status(&format!("octo/app#{n}"));
        assert_eq!(s["last_error"], json!(null), "{s}");
        assert!(s["head_sha"].is_string());
    }
    // One refused document per run at most: the client stops asking for the comparison.
    // Run 1: a summary, a refused snapshot comparing the branches the summary named, the
    // snapshot without. Run 2: a refused summary with the comparison, then one without,
    // which shows nothing changed: no snapshot.
    assert_eq!(
        env.gh.requests().count("POST /graphql CompareBranches"),
        0,
        "{:?}",
        env.gh.requests().counts()
    );
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSummaries"),
        3,
        "{:?}",
        env.gh.requests().counts()
    );
    assert_eq!(
        env.gh
            .requests()
            .count("POST /graphql PullRequestSnapshots"),
        2,
        "{:?}",
        env.gh.requests().counts()
    );
}

#[test]
fn a_run_line_shows_only_this_runs_error() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    env.vars
        .push(("PRM_TEST_GITHUB_TOKEN".into(), "wrong-token".into()));
    let out = env.run(&["run", "--force"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("error"), "{}", out.stdout);
    env.vars.clear();
    let out = env.ok(&["run", "--force"]);
    assert!(
        !out.stdout.contains("error"),
        "a stale error: {}",
        out.stdout
    );
    assert!(!env.ok(&["status"]).stdout.contains("error"));
}

#[test]
fn watch_add_on_an_existing_watch_says_what_changed_and_records_it() {
    let env = TestEnv::new();
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.ok(&["watch", "add", "octo/app#1"]);
    assert_eq!(
        out.stdout.trim(),
        "already watching https://github.com/octo/app/pull/1; nothing changed"
    );
    let out = env.ok(&[
        "watch",
        "add",
        "octo/app#1",
        "--agent",
        "fixer",
        "--merge-when-ready",
    ]);
    assert_eq!(
        out.stdout.trim(),
        "already watching https://github.com/octo/app/pull/1; now: agent fixer, merge armed"
    );
    let history = env.history_text("octo/app#1");
    assert!(
        history.contains("watch updated: agent fixer, merge armed"),
        "{history}"
    );
}

#[test]
fn run_naming_an_unwatched_pr_is_a_usage_error() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 1);
    let out = env.run(&["run", "--force", "--pr", "octo/app#1"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("not watched"), "{}", out.stderr);
    assert!(
        out.stderr.contains("pr-monitor watch add octo/app#1"),
        "{}",
        out.stderr
    );
    assert_eq!(env.gh.requests().total(), 0);
}

#[test]
fn run_ends_with_a_summary_and_draws_no_progress_into_a_pipe() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1).head_commit(|c| c.by("human"));
        w.check_run("octo/app", 1, "lint").failure();
        for n in 2..=12 {
            w.pr("octo/app", n);
            w.check_run("octo/app", n, "test").in_progress();
        }
    });
    let prs: Vec<String> = (1..=12).map(|n| format!("octo/app#{n}")).collect();
    let mut args = vec!["watch", "add"];
    args.extend(prs.iter().map(String::as_str));
    env.ok(&args);
    let out = env.ok(&["run"]);
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("ticked 12 PRs: ") && last.contains(" · ci lit on 1"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stderr.contains("reading") && !out.stderr.contains('\r'),
        "{}",
        out.stderr
    );
    // A second run changes nothing: a large run lists only what changed.
    let out = env.ok(&["run", "--force"]);
    assert_eq!(
        out.stdout.trim(),
        "ticked 12 PRs: 0 changed, 12 unchanged",
        "{}",
        out.stdout
    );
}

#[test]
fn metrics_keep_the_last_success_when_a_run_fails() {
    let mut env = TestEnv::with_config("report:\n  metrics_path: out/pr_monitor.prom\n");
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["run"]);
    let first = chrono::DateTime::parse_from_rfc3339(&env.now)
        .unwrap()
        .timestamp();
    env.advance(600);
    env.vars
        .push(("PRM_TEST_GITHUB_TOKEN".into(), "not-the-token".into()));
    let out = env.run(&["run", "--force"]);
    assert_eq!(
        out.code, 3,
        "nothing could be read: {}\n{}",
        out.stdout, out.stderr
    );
    let metrics = std::fs::read_to_string(env.dir.path().join("out/pr_monitor.prom")).unwrap();
    let value = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
            .to_owned()
    };
    assert_eq!(
        value("pr_monitor_last_success_timestamp_seconds"),
        first.to_string()
    );
    assert_eq!(
        value("pr_monitor_last_run_timestamp_seconds"),
        (first + 600).to_string()
    );
    for line in metrics.lines().filter(|l| !l.starts_with('#')) {
        let (_, v) = line.rsplit_once(' ').unwrap();
        assert!(v.parse::<f64>().is_ok(), "{line}");
    }
}

/// `run --json` streams one array as chunks finish: every PR ticked exactly once, forge by
/// forge (GitHub, then GitLab), each forge's PRs in due order, across more batches than are
/// read at once; a run with nothing due prints an empty array.
#[test]
fn run_json_streams_every_pr_once_forge_by_forge_in_due_order() {
    const N: u64 = 25;
    let env = crate::support::fake_gitlab::GitLabEnv::new();
    env.gh.world(|w| {
        for n in 1..=N {
            w.pr("octo/app", n);
            w.check_run("octo/app", n, "lint").success();
        }
    });
    env.gl.world(|w| {
        w.project("g/p");
        for n in 1..=N {
            w.mr("g/p", n);
            w.job("g/p", n, "test").success();
        }
    });
    // Added in turns, so the due order (ids, all due at once) interleaves the forges; the
    // GitHub PRs in descending numbers, so due order is not number order.
    for n in 1..=N {
        let mr = format!("g/p!{n}");
        let pr = format!("octo/app#{}", N + 1 - n);
        env.ok(&["watch", "add", &mr, &pr]);
    }
    let v = env.ok(&["run", "--json"]).json();
    let ticked: Vec<(String, u64)> = v
        .as_array()
        .expect("an array")
        .iter()
        .map(|o| {
            (
                o["forge"].as_str().unwrap_or_default().to_owned(),
                o["number"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = (1..=N)
        .map(|n| ("github".to_owned(), N + 1 - n))
        .chain((1..=N).map(|n| ("gitlab".to_owned(), n)))
        .collect();
    assert_eq!(ticked, want);
    let again = env.ok(&["run", "--json"]);
    assert_eq!(again.stdout.trim(), "[]", "{}", again.stdout);
}

#[test]
fn a_jobs_own_cadence_ticks_its_prs() {
    let mut env = TestEnv::new();
    env.job(
        "busy",
        "name: busy\npolicy:\n  poll_sec: 120\n  idle_poll_sec: 900\n",
    );
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").in_progress();
        w.pr("octo/app", 2);
        w.check_run("octo/app", 2, "lint").success();
    });
    env.ok(&["watch", "add", "--job", "busy", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    assert_eq!(
        env.status("octo/app#1")["next_tick_at"],
        "2026-11-29T12:02:00Z",
        "checks running: the job's poll_sec"
    );
    env.advance(150);
    env.ok(&["run"]);
    assert_eq!(
        env.status("octo/app#2")["next_tick_at"],
        "2026-11-29T12:17:30Z",
        "idle: the job's idle_poll_sec"
    );
}

/// A token that cannot be read (its variable empty) is the setup's failure and says so: never
/// "not authorized", which is the forge refusing a token it was sent. Nothing could be read, so
/// the run still exits 3.
#[test]
fn a_token_that_cannot_be_read_is_a_setup_failure_not_a_refusal() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    env.vars
        .push(("PRM_TEST_GITHUB_TOKEN".to_owned(), String::new()));
    let out = env.run(&["run"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let status = env.status("octo/app#1");
    let error = status["last_error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("setup: ") && error.contains("PRM_TEST_GITHUB_TOKEN"),
        "{status}"
    );
    assert!(!error.contains("not authorized"), "{status}");
    assert_eq!(env.gh.requests().total(), 0, "nothing was sent");
}
