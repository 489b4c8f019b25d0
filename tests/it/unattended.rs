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
