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
