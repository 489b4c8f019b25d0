//! Diagnostics on stderr: `--log-format json` writes one JSON object a line, `--log-level debug`
//! adds every forge call (method, path template, status, duration, points) and never the token;
//! a PR whose tick failed is logged there too, while stdout keeps the run's results.

use serde_json::Value;

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

#[test]
fn json_log_lines_parse_and_name_each_forge_call_without_the_token() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.pr("octo/app", 2);
    });
    env.ok(&["watch", "add", "octo/app#1", "octo/app#2"]);
    env.ok(&["run"]);
    let plain = env.ok(&["run", "--force"]);
    let out = env.ok(&[
        "run",
        "--force",
        "--log-format",
        "json",
        "--log-level",
        "debug",
    ]);
    assert_eq!(
        out.stdout, plain.stdout,
        "stdout is the results, whatever the log"
    );
    let lines: Vec<Value> = out
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let call = lines
        .iter()
        .find(|l| l["message"] == "forge call" && l["path"] == "/graphql")
        .unwrap_or_else(|| panic!("no forge call line:\n{}", out.stderr));
    assert_eq!(call["level"], "DEBUG");
    assert_eq!(call["method"], "POST");
    assert_eq!(call["status"], 200);
    assert_eq!(call["points"], 1);
    assert!(call["duration_ms"].is_u64(), "{call}");
    assert!(!call["operation"].as_str().unwrap().is_empty(), "{call}");
    assert!(!out.stderr.contains(&env.gh.token()), "{}", out.stderr);

    // Without --log-level, the default (warn; pr-monitor's own from info) is quiet on success.
    let quiet = env.ok(&["run", "--force", "--log-format", "json"]);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);

    // What `status` says on stderr is a JSON line too.
    let status = env.ok(&["status", "--log-format", "json"]);
    let said: Value = serde_json::from_str(status.stderr.trim()).unwrap();
    assert_eq!(said["level"], "INFO", "{said}");
    assert!(
        said["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("config ") && m.contains(" · database ")),
        "{said}"
    );
}

#[test]
fn a_failed_tick_is_logged_on_stderr_and_rust_log_sets_the_level() {
    let mut env = TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 3).title("Refused");
    });
    env.ok(&["watch", "add", "octo/app#3"]);
    let refused = Fault::status(401).on("POST /graphql").always();
    env.gh.fault(refused);
    let out = env.run(&["run", "--log-format", "json"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let failed: Value = out
        .stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["message"] == "tick failed")
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert_eq!(failed["level"], "WARN");
    assert_eq!(failed["pr"], "https://github.com/octo/app/pull/3");

    env.gh.clear_faults();
    env.vars
        .push(("RUST_LOG".into(), "pr_monitor=debug".into()));
    let out = env.ok(&["run", "--force"]);
    assert!(out.stderr.contains("forge call"), "{}", out.stderr);
    let bad = env.run(&["run", "--log-level", "not a [filter"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn with_json_logs_even_a_usage_error_is_a_json_line() {
    let env = TestEnv::new();
    for args in [
        &["--log-format", "json", "run", "--no-such-flag"][..],
        &["--log-format=json", "status", "not a pr"][..],
    ] {
        let out = env.run(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        for line in out.stderr.lines() {
            let v: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert_eq!(v["level"], "ERROR", "{v}");
            assert!(v["run_id"].is_string(), "{v}");
            assert!(!v["message"].as_str().unwrap().is_empty(), "{v}");
        }
    }
    let plain = env.run(&["run", "--no-such-flag"]);
    assert!(plain.stderr.starts_with("error: "), "{}", plain.stderr);
}
