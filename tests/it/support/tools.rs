//! Tests that need a tool from outside the crate (a browser, `systemd-analyze`, a terminal):
//! without it they skip and say so, except under `CI=true`, where a missing tool fails the
//! test, so a CI run cannot go green by skipping what it was meant to check.

/// The tool a test needs is missing (`why` says which, and how CI installs it): a failure
/// under `CI=true`, else a skip said on stderr.
pub fn missing(why: &str) {
    assert!(
        !required(std::env::var("CI").ok().as_deref()),
        "{why}; under CI=true every tool a test needs must be there"
    );
    eprintln!("skipped: {why}");
}

/// Whether every one of `programs` can be started (asked for `--version`, whatever it
/// answers: `usermod` answers it with a usage error); when one cannot, [`missing`] with `why`.
pub fn present(programs: &[&str], why: &str) -> bool {
    let all = programs.iter().all(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok()
    });
    if !all {
        missing(why);
    }
    all
}

/// Whether the environment's `CI` value asks for every tool.
fn required(ci: Option<&str>) -> bool {
    ci.is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Only [`ci_true_turns_a_missing_tool_into_a_failure`] runs this, in a child process whose
/// environment it sets.
#[test]
#[ignore = "run by ci_true_turns_a_missing_tool_into_a_failure with its own environment"]
fn needs_a_tool_that_is_never_installed() {
    missing("no-such-tool is not installed");
}

#[test]
fn ci_true_turns_a_missing_tool_into_a_failure() {
    let run = |ci: Option<&str>| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "--ignored",
            "support::tools::needs_a_tool_that_is_never_installed",
        ]);
        match ci {
            Some(v) => cmd.env("CI", v),
            None => cmd.env_remove("CI"),
        };
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            text.contains("1 passed") || text.contains("1 failed"),
            "{text}"
        );
        out.status.success()
    };
    assert!(!run(Some("true")), "a missing tool fails under CI=true");
    assert!(run(None), "and is skipped elsewhere");
    assert!(required(Some("1")) && !required(Some("false")) && !required(None));
}
