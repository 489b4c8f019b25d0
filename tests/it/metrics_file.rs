//! The metrics file (`report.metrics_path`) as Prometheus reads it: it parses as the text
//! format; the forge requests and points are counters that add up across runs (the requests
//! match the fake's request log); the rate limit left is a gauge; the last-success time does not
//! move on a failed run while the last-run time does.

// The values compared are whole numbers (counts, epoch seconds), exact in an f64.
#![allow(clippy::float_cmp)]

use std::collections::BTreeMap;

use crate::support::env::TestEnv;
use crate::support::fake_github::Fault;

/// Parses the Prometheus text format strictly enough to catch a malformed line: every sample is
/// `name{label="value",…} number` of a family declared by `# TYPE` before it. Returns the
/// samples by series (`name{labels}` as written).
pub fn parse(text: &str) -> BTreeMap<String, f64> {
    let mut typed = BTreeMap::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["counter", "gauge"].contains(&kind), "{line}");
            assert!(
                typed.insert(name.to_owned(), kind).is_none(),
                "twice: {line}"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        assert!(typed.contains_key(name), "no TYPE before {line}");
        if let Some(labels) = series.strip_prefix(name).filter(|l| !l.is_empty()) {
            let inner = labels.strip_prefix('{').and_then(|l| l.strip_suffix('}'));
            for pair in inner.unwrap_or_else(|| panic!("{line}")).split(',') {
                let (k, v) = pair.split_once('=').unwrap_or_else(|| panic!("{line}"));
                assert!(
                    k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{line}"
                );
                assert!(
                    v.starts_with('"') && v.ends_with('"') && v.len() >= 2,
                    "{line}"
                );
            }
        }
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "twice: {line}"
        );
    }
    samples
}

#[test]
fn the_metrics_file_counts_forge_use_across_runs_and_keeps_the_last_success() {
    let mut env = TestEnv::with_config("report:\n  metrics_path: metrics/pr_monitor.prom\n");
    std::fs::create_dir(env.dir.path().join("metrics")).unwrap();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.gh.clear_requests();
    let file = env.dir.path().join("metrics/pr_monitor.prom");
    let read = || parse(&std::fs::read_to_string(&file).unwrap());

    env.ok(&["run"]);
    let first = read();
    let requests = "pr_monitor_forge_requests_total{forge=\"github\"}";
    let points = "pr_monitor_forge_points_total{forge=\"github\"}";
    assert!(first[requests] >= 1.0, "{first:?}");
    assert!(first[points] >= first[requests], "{first:?}");
    assert!(first.contains_key("pr_monitor_rate_limit_remaining{forge=\"github\"}"));
    assert_eq!(first["pr_monitor_watches{state=\"open\"}"], 1.0);
    assert_eq!(first["pr_monitor_pills{pill=\"ci\"}"], 1.0);
    let success = first["pr_monitor_last_success_timestamp_seconds"];
    assert_eq!(success, first["pr_monitor_last_run_timestamp_seconds"]);

    env.advance(60);
    env.ok(&["run", "--force"]);
    let second = read();
    #[allow(clippy::cast_precision_loss)]
    let logged = env.gh.requests().entries.len() as f64;
    assert_eq!(
        second[requests], logged,
        "every request, counted once, across runs"
    );
    assert!(second[requests] > first[requests]);

    env.advance(60);
    env.gh
        .fault(Fault::status(502).on("POST /graphql").always());
    let failed = env.run(&["run", "--force"]);
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let third = read();
    assert_eq!(
        third["pr_monitor_last_success_timestamp_seconds"],
        second["pr_monitor_last_success_timestamp_seconds"]
    );
    assert_eq!(
        third["pr_monitor_last_run_timestamp_seconds"],
        second["pr_monitor_last_run_timestamp_seconds"] + 60.0
    );
    assert!(
        third[requests] > second[requests],
        "failed requests count too"
    );
}
