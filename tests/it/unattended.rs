//! What an operator running pr-monitor unattended meets: hostile input refused without a
//! panic, bounded runs, exit codes that say what happened, secrets masked on every surface.

use crate::support::env::TestEnv;

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
