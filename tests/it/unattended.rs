//! What an operator running pr-monitor unattended meets: hostile input refused without a
//! panic, bounded runs, exit codes that say what happened, secrets masked on every surface.

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

#[test]
fn a_non_ascii_reference_is_refused_not_a_panic() {
    let env = TestEnv::new();
    for reference in [
        "éxyz/app#1",
        "o/\u{202e}r.git#1",
        "https://github.com/é/app/pull/1",
    ] {
        let out = env.run(&["watch", "add", reference]);
        assert_eq!(out.code, 2, "{reference}: {}", out.stderr);
        assert!(out.stderr.contains("not a pull request"), "{}", out.stderr);
    }
    env.job("odd", "name: odd\nwatch:\n  - pr: éxyz/app#1\n");
    let out = env.run(&["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("odd.yaml:3:"), "{}", out.stderr);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// One PR whose tick fails is exit 1 and no failed run for the metrics (the forge was read):
/// the last success moves, the PR's error counter counts; a forge that refuses the token for
/// every PR is exit 3 and the last success stays.
#[test]
fn exit_codes_and_last_success_say_whether_anything_could_be_read() {
    let mut env = TestEnv::with_config("report:\n  metrics_path: pr_monitor.prom\n");
    env.with_pr("octo/app", 1);
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    let out = env.run(&["run"]);
    assert_eq!(
        out.code, 1,
        "#2 does not exist: {}\n{}",
        out.stdout, out.stderr
    );
    let file = env.dir.path().join("pr_monitor.prom");
    let metrics = || std::fs::read_to_string(&file).unwrap();
    let value = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .map(str::to_owned)
    };
    let first = metrics();
    let success = value(&first, "pr_monitor_last_success_timestamp_seconds");
    assert!(success.is_some(), "GitHub was read: {first}");
    assert_eq!(
        value(
            &first,
            "pr_monitor_tick_errors_total{pr=\"https://github.com/octo/app/pull/2\"}"
        )
        .as_deref(),
        Some("1"),
        "{first}"
    );
    env.advance(600);
    env.gh.fault(Fault::status(401).always());
    let out = env.run(&["run", "--force"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let second = metrics();
    assert_eq!(
        value(&second, "pr_monitor_last_success_timestamp_seconds"),
        success
    );
}

#[test]
fn config_check_refuses_what_run_would_refuse() {
    let env = TestEnv::new();
    let config = env.dir.path().join("other.yaml");
    std::fs::write(&config, "database: missing/deeper/state.db\n").unwrap();
    let out = env.run_with_config(&config, &["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("is in a folder that does not exist"),
        "{}",
        out.stderr
    );
    assert_eq!(env.run_with_config(&config, &["run"]).code, 2);
    let db = env.dir.path().join("nowhere/x.db");
    let out = env.run(&["--db", db.to_str().unwrap(), "config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    std::fs::write(
        &config,
        "agents:\n  fixer:\n    inbox: inbox\n    command: cat\n    logins: [a]\n",
    )
    .unwrap();
    let out = env.run_with_config(&config, &["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("give only one of"), "{}", out.stderr);
}

/// One byte that is not UTF-8 in a job log leaves the rest of it readable: an infrastructure
/// failure is still told (and re-run), and a real failure reaches the agent with its tail.
#[test]
fn a_log_with_a_byte_that_is_not_utf8_is_read_and_classified() {
    let env = TestEnv::new();
    let run_id = env.gh.world(|w| {
        w.pr("octo/app", 1).head_commit(|c| c.by("human"));
        w.check_run("octo/app", 1, "test")
            .failure()
            .log_bytes(
                b"progress \xff\xfe 50%\n##[error]The runner has received a shutdown signal.\n",
            )
            .run_id()
    });
    env.gh.world(|w| {
        w.pr("octo/app", 2).head_commit(|c| c.by("fixer-bot"));
        w.check_run("octo/app", 2, "lint")
            .failure()
            .log_bytes(b"caf\xe9 latin-1 output\nerror: unused variable `x`\n");
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#2"]);
    env.ok(&["run"]);
    assert_eq!(env.status("octo/app#1")["why"], "infra_rerun");
    assert_eq!(env.gh.world(|w| w.reruns(run_id.unwrap())), 1);
    assert_eq!(env.status("octo/app#2")["why"], "fix_sent");
    let messages = env.inbox_messages();
    let tail = messages[0]["checks"][0]["log_tail"].as_str().unwrap();
    assert!(tail.contains("error: unused variable"), "{tail}");
    assert!(tail.contains("caf\u{fffd} latin-1"), "{tail}");
}

#[test]
fn config_check_names_each_secret_a_run_would_miss_without_printing_any() {
    let mut env = TestEnv::new();
    // The test config's GitHub token variable is set for every run: it is read, not printed.
    let out = env.ok(&["config", "check"]);
    assert!(
        out.stdout
            .contains("github token: environment variable `PRM_TEST_GITHUB_TOKEN` (readable)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains(&env.gh.token()), "{}", out.stdout);

    let write = |name: &str, yaml: &str| {
        let config = env.dir.path().join(name);
        std::fs::write(&config, format!("database: state.db\n{yaml}")).unwrap();
        config
    };
    let unset = write(
        "unset.yaml",
        "github:\n  token_env: PRM_TEST_TOKEN_NOBODY_SET\n",
    );
    let out = env.run_with_config(&unset, &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("github token: environment variable `PRM_TEST_TOKEN_NOBODY_SET` is not set"),
        "{}",
        out.stderr
    );

    let missing = write("missing.yaml", "gitlab:\n  token_file: no-such-token\n");
    let out = env.run_with_config(&missing, &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("gitlab token") && out.stderr.contains("no-such-token"),
        "{}",
        out.stderr
    );

    // The SMTP password and the Slack webhook a notice would need, named together.
    let channels = write(
        "channels.yaml",
        "notify:\n  email:\n    smtp_url: smtp://127.0.0.1:25\n    from: a@example.com\n    to: [b@example.com]\n    username_env: PRM_TEST_SMTP_USER\n    password_env: PRM_TEST_SMTP_PASSWORD\n  slack:\n    webhook_url_env: PRM_TEST_SLACK_NOBODY_SET\n",
    );
    env.vars.push(("PRM_TEST_SMTP_USER".into(), "robot".into()));
    env.vars
        .push(("PRM_TEST_SMTP_PASSWORD".into(), "hunter2-secret".into()));
    let out = env.run_with_config(&channels, &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("Slack webhook: environment variable `PRM_TEST_SLACK_NOBODY_SET`"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("SMTP"), "{}", out.stderr);
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);

    // A forge nobody configured is needed once something watches on it: GitLab's default
    // variable then.
    let bare = write("bare.yaml", "");
    env.vars.push(("GITLAB_TOKEN".into(), String::new()));
    env.ok(&["--db", "state.db", "watch", "add", "g/p!3"]);
    let out = env.run_with_config(&bare, &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("gitlab token: environment variable `GITLAB_TOKEN`"),
        "{}",
        out.stderr
    );
}

/// GitHub hangs (every GraphQL answer would come after 30 s); with `timeout_sec: 1` each read
/// gives up after a second, GitHub is not asked again after two, and the GitLab MRs of the
/// same run are ticked as if nothing happened: the run ends in seconds, exit 1 (some PRs
/// failed, not "nothing could be read").
#[test]
fn a_hanging_forge_costs_only_its_own_prs_and_the_run_goes_on() {
    let mut env = crate::support::fake_gitlab::GitLabEnv::new();
    env.env.set_github_keys("  timeout_sec: 1\n");
    env.gh.world(|w| {
        for n in 1..=3 {
            w.pr("octo/app", n);
        }
    });
    env.gl.world(|w| {
        w.project("g/p");
        for n in 1..=3 {
            w.mr("g/p", n);
        }
    });
    env.ok(&[
        "watch",
        "add",
        "octo/app#1",
        "octo/app#2",
        "octo/app#3",
        "g/p!1",
        "g/p!2",
        "g/p!3",
    ]);
    env.gh
        .fault(Fault::delay(30_000).on("POST /graphql").always());
    let started = std::time::Instant::now();
    let out = env.run(&["run", "--json"]);
    let took = started.elapsed();
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        took < std::time::Duration::from_secs(20),
        "the run took {took:?}"
    );
    let graphql = graphql_requests(&env.gh);
    assert!(graphql <= 2, "asked a hanging GitHub {graphql} times");
    let rows = out.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6, "{}", out.stdout);
    for row in rows {
        let error = row["last_error"].as_str().unwrap_or("");
        if row["forge"] == "github" {
            assert!(!error.is_empty(), "{row}");
        } else {
            assert_eq!(error, "", "{row}");
            assert_eq!(row["state"], "open", "{row}");
        }
    }
    let status = env.status("octo/app#3");
    assert!(
        status["last_error"].as_str().is_some_and(|e| e
            .contains("not asked again until the next run")
            || e.contains("timed out")),
        "{status}"
    );
}

/// SIGTERM to `run` (a CronJob's pod stopped, a unit stopped): the run finishes what it has in
/// hand, releases the leases of the PRs it has not started, and exits 0 well before it would
/// have read them all; the next run ticks them at once.
#[test]
fn run_on_sigterm_finishes_in_hand_and_releases_the_rest() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        for n in 1..=25 {
            w.pr("octo/app", n);
        }
    });
    let prs: Vec<String> = (1..=25).map(|n| format!("octo/app#{n}")).collect();
    let mut add = vec!["watch", "add"];
    add.extend(prs.iter().map(String::as_str));
    env.ok(&add);
    env.gh
        .fault(Fault::delay(1500).on("POST /graphql").always());
    let started = std::time::Instant::now();
    let mut run = env.spawn(&["run", "--json"]);
    crate::support::daemon::wait_until(&mut run, "a first GraphQL request", || {
        !env.gh.requests().entries.is_empty()
    });
    let pid = run.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = run.wait_with_output().unwrap();
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reads = graphql_requests(&env.gh);
    assert!(reads < 4, "{reads} reads after SIGTERM, in {took:?}");

    env.gh.clear_faults();
    let rows = env.ok(&["status", "--json"]).json();
    let rows = rows.as_array().unwrap();
    assert!(rows.iter().all(|r| r["held_by"].is_null()), "{rows:?}");
    let unticked = rows.iter().filter(|r| r["last_tick_at"].is_null()).count();
    assert!(unticked > 0, "every PR was read despite the signal");
    // The next run takes them at once: nothing is left leased.
    env.ok(&["run"]);
    let rows = env.ok(&["status", "--json"]).json();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| !r["last_tick_at"].is_null()),
        "{rows}"
    );
}

/// How many GraphQL requests the fake GitHub has had.
fn graphql_requests(gh: &crate::support::fake_github::FakeGitHub) -> usize {
    gh.requests()
        .entries
        .iter()
        .filter(|r| r.path == "/graphql")
        .count()
}

#[test]
fn completions_for_bash_load_in_bash_and_complete_the_commands() {
    let env = TestEnv::new();
    let out = env.ok(&["completions", "bash"]);
    let script = env.dir.path().join("pr-monitor.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    // Load the script, then ask bash what it completes after `pr-monitor wa`.
    let probe = format!(
        "source '{}' && complete -p pr-monitor && COMP_WORDS=(pr-monitor wa) COMP_CWORD=1 \
         COMP_LINE='pr-monitor wa' COMP_POINT=13 && _pr__monitor pr-monitor wa pr-monitor && \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let bash = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &probe])
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&bash.stdout);
    assert!(
        bash.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&bash.stderr)
    );
    assert!(said.contains("-F _pr__monitor pr-monitor"), "{said}");
    assert!(said.lines().any(|l| l == "watch"), "{said}");
}
