//! Real answers, recorded or hand-written by other GitHub clients (see
//! `tests/fixtures/github/SOURCES.md`), parse into pr-monitor's types.

use pr_monitor::core::checks::{self, Verdict};
use pr_monitor::forge::github::rollup_checks;
use pr_monitor::model::{CheckKind, CheckState};
use serde_json::Value;

fn rollup(file: &str) -> Vec<pr_monitor::model::Check> {
    let path = format!(
        "{}/tests/fixtures/github/gh-cli/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let nodes = v
        .pointer("/data/node/statusCheckRollup/nodes/0/commit/statusCheckRollup/contexts/nodes")
        .unwrap();
    rollup_checks(nodes).unwrap()
}

#[test]
fn a_rollup_with_failing_and_running_checks() {
    let checks = rollup("checks.someFailing.json");
    let states: Vec<(&str, CheckState)> =
        checks.iter().map(|c| (c.name.as_str(), c.state)).collect();
    assert_eq!(
        states,
        vec![
            ("cool tests", CheckState::Passed),
            ("sad tests", CheckState::Failed),
            ("slow tests", CheckState::Pending)
        ]
    );
    let seen = chrono::Utc::now();
    assert!(
        matches!(
            checks::verdict(&checks, seen, seen, 600, None),
            Verdict::Running { .. }
        ),
        "acts only once all are done"
    );
}

#[test]
fn a_rollup_mixing_check_runs_and_statuses() {
    let checks = rollup("checks.withStatuses.json");
    let status = checks.iter().find(|c| c.kind == CheckKind::Status).unwrap();
    assert_eq!(status.name, "a status");
    assert_eq!(status.state, CheckState::Failed);
    assert_eq!(
        checks
            .iter()
            .filter(|c| c.kind == CheckKind::CheckRun)
            .count(),
        2
    );
}

#[test]
fn push_and_pull_request_runs_of_one_check_stay_apart() {
    let checks = rollup("checks.withEvents.json");
    let events: Vec<Option<&str>> = checks.iter().map(|c| c.event.as_deref()).collect();
    assert!(
        events.contains(&Some("pull_request")) && events.contains(&Some("push")),
        "{events:?}"
    );
    assert_eq!(
        checks::newest(&checks).len(),
        checks.len(),
        "the same name under two events is two checks"
    );
    assert_eq!(checks[0].workflow.as_deref(), Some("tests"));
}
