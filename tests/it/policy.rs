//! Seed 002's policies end to end, through the binary against the fakes with `--now`: a flake
//! beside a real failure is labelled, conflict files reach the agent, `policy.checks: required`,
//! and the history's words about who merges.

use crate::support::env::TestEnv;

const REPO: &str = "octo/app";

#[test]
fn a_flake_beside_a_real_failure_is_labelled_for_the_agent() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr(REPO, 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run(REPO, 1, "lint")
            .failure()
            .log("error[E0425]: cannot find value `x`\n");
        w.check_run(REPO, 1, "deps").failure().log(
            "fetching crates\nerror: failed to download from registry: 503 Service Unavailable\n",
        );
    });
    env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["run"]);
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    let checks = msgs[0]["checks"].as_array().unwrap();
    let flake = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {checks:?}"))["flake"]
            .clone()
    };
    assert_eq!(flake("lint"), false);
    assert_eq!(flake("deps"), true);
    let body = msgs[0]["body"].as_str().unwrap();
    assert!(
        body.contains("## Failed check: `deps` (infrastructure flake"),
        "{body}"
    );
    assert!(body.contains("## Failed check: `lint`\n"), "{body}");
}
