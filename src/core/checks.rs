//! Pure reading of a head commit's checks: newest entry per check, and one verdict.
//!
//! Traps handled here: re-runs leave older entries for the same check (keep the newest per
//! name, workflow and event); zero checks right after a push is *pending*, not green, for a
//! grace period; a check the forge still reports as queued counts as running.

use std::collections::BTreeMap;

use crate::model::{Check, CheckState, Instant};

/// What the checks on a head say, once duplicates are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No checks yet, within the grace period after the head was first seen.
    AwaitingChecks,
    /// No checks at all, past the grace period: nothing to wait for.
    NoChecks,
    /// At least one check is still queued or running.
    Running { pending: Vec<String> },
    /// Every check is done, and at least one failed.
    Failed { failed: Vec<String> },
    /// Every check is done and none failed.
    Passed,
}

impl Verdict {
    /// Whether the checks are still moving (pr-monitor acts only once all are done).
    pub(crate) fn in_progress(&self) -> bool {
        matches!(self, Verdict::AwaitingChecks | Verdict::Running { .. })
    }
}

/// The checks a policy judges: every one, or with `required_only` (`policy.checks: required`)
/// those the base requires; the others never fail the PR, light nothing and reach no agent.
pub(crate) fn judged(checks: &[Check], required_only: bool) -> Vec<Check> {
    checks
        .iter()
        .filter(|c| !(required_only && c.optional))
        .cloned()
        .collect()
}

/// The newest entry per (name, workflow, event, kind), in name order.
pub(crate) fn newest(checks: &[Check]) -> Vec<&Check> {
    let mut by_key: BTreeMap<(&str, &str, &str, bool), &Check> = BTreeMap::new();
    for c in checks {
        let key = (
            c.name.as_str(),
            c.workflow.as_deref().unwrap_or(""),
            c.event.as_deref().unwrap_or(""),
            c.kind == crate::model::CheckKind::Status,
        );
        let newer = |old: &Check| (c.started_at, c.job_id) >= (old.started_at, old.job_id);
        match by_key.get(&key) {
            Some(old) if !newer(old) => {}
            _ => {
                by_key.insert(key, c);
            }
        }
    }
    by_key.into_values().collect()
}

/// Checks still pending more than `timeout_secs` after `since` (when the head was first seen,
/// or last re-run) or after they started, whichever is later: they never finished (a
/// third-party suite can sit queued forever) and count as failed.
pub(crate) fn overdue(
    checks: &[Check],
    since: Instant,
    now: Instant,
    timeout_secs: Option<u64>,
) -> Vec<String> {
    let Some(timeout) = timeout_secs else {
        return Vec::new();
    };
    let timeout = i64::try_from(timeout).unwrap_or(i64::MAX);
    newest(checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Pending)
        .filter(|c| (now - c.started_at.map_or(since, |s| s.max(since))).num_seconds() > timeout)
        .map(|c| c.name.clone())
        .collect()
}

/// The instants at which [`verdict`] and [`overdue`] of `checks` (waited on since `since`)
/// can turn with the clock alone: the no-checks grace ending while there is no check, and each
/// pending check passing its timeout.
pub(crate) fn turns(
    checks: &[Check],
    since: Instant,
    grace_secs: u64,
    pending_timeout_secs: Option<u64>,
) -> Vec<Instant> {
    let later = |t: Instant, secs: u64| {
        let secs = chrono::Duration::try_seconds(i64::try_from(secs).ok()?)?;
        t.checked_add_signed(secs)
    };
    let current = newest(checks);
    if current.is_empty() {
        return later(since, grace_secs).into_iter().collect();
    }
    let Some(timeout) = pending_timeout_secs else {
        return Vec::new();
    };
    current
        .into_iter()
        .filter(|c| c.state == CheckState::Pending)
        // Overdue once more than `timeout` whole seconds have passed.
        .filter_map(|c| {
            later(c.started_at.map_or(since, |s| s.max(since)), timeout)?
                .checked_add_signed(chrono::Duration::seconds(1))
        })
        .collect()
}

/// The verdict on `checks`, for a head first seen at `head_seen_at`; checks pending past
/// `pending_timeout_secs` count as failed.
pub(crate) fn verdict(
    checks: &[Check],
    head_seen_at: Instant,
    now: Instant,
    grace_secs: u64,
    pending_timeout_secs: Option<u64>,
) -> Verdict {
    let overdue = overdue(checks, head_seen_at, now, pending_timeout_secs);
    let current: Vec<&Check> = newest(checks);
    if current.is_empty() {
        let waited = (now - head_seen_at).num_seconds();
        return if waited < i64::try_from(grace_secs).unwrap_or(i64::MAX) {
            Verdict::AwaitingChecks
        } else {
            Verdict::NoChecks
        };
    }
    let names = |state: CheckState| -> Vec<String> {
        current
            .iter()
            .filter(|c| c.state == state)
            .map(|c| c.name.clone())
            .collect()
    };
    let pending: Vec<String> = names(CheckState::Pending)
        .into_iter()
        .filter(|n| !overdue.contains(n))
        .collect();
    if !pending.is_empty() {
        return Verdict::Running { pending };
    }
    let mut failed = names(CheckState::Failed);
    failed.extend(overdue);
    failed.sort();
    if failed.is_empty() {
        Verdict::Passed
    } else {
        Verdict::Failed { failed }
    }
}

/// Words that make a check a freshness check (seed 002's "a freshness check tripping"): it
/// fails because the branch is behind its base, not because of the code.
const FRESHNESS_WORDS: [&str; 7] = [
    "out of date",
    "out-of-date",
    "outdated",
    "up to date",
    "up-to-date",
    "behind",
    "freshness",
];

/// Whether a check is a freshness check: its name says so (`branch-up-to-date`, `Freshness`),
/// or its summary speaks of the branch being out of date or behind its base.
pub(crate) fn is_freshness(c: &Check) -> bool {
    let says = |text: &str| {
        let lower = text.to_lowercase();
        FRESHNESS_WORDS.iter().any(|w| lower.contains(w))
    };
    let name = c.name.replace(['-', '_'], " ");
    says(&name) || (says(&c.output) && c.output.to_lowercase().contains("branch"))
}

/// The failing freshness checks among `checks`, by name (newest entry per check).
pub(crate) fn failing_freshness(checks: &[Check]) -> Vec<String> {
    newest(checks)
        .into_iter()
        .filter(|c| c.state == CheckState::Failed && is_freshness(c))
        .map(|c| c.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CheckKind;
    use chrono::{Duration, TimeZone, Utc};

    #[test]
    fn a_freshness_check_is_told_by_its_name_or_its_summary() {
        let table = [
            ("branch-up-to-date", "", true),
            ("Freshness", "", true),
            ("check_behind_base", "", true),
            (
                "gate",
                "The branch is out of date with main: rebase it.",
                true,
            ),
            ("gate", "This branch is 3 commits behind main", true),
            ("lint", "", false),
            ("test", "error: assertion failed", false),
            // A summary that does not speak of the branch is about the code.
            ("deps", "Cargo.lock is not up to date", false),
        ];
        for (name, output, want) in table {
            let mut c = Check {
                output: output.into(),
                ..crate::core::decide::tests::check(name, CheckState::Failed)
            };
            assert_eq!(is_freshness(&c), want, "{name}: {output}");
            c.state = CheckState::Passed;
            assert_eq!(
                failing_freshness(&[c]),
                Vec::<String>::new(),
                "{name}: passing"
            );
        }
    }

    #[test]
    fn only_required_checks_are_judged_when_the_policy_says_so() {
        let mut lint = check("lint", CheckState::Failed, 0);
        lint.optional = true;
        let test = check("test", CheckState::Passed, 0);
        let both = [lint, test];
        let names = |required_only| -> Vec<String> {
            judged(&both, required_only)
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(names(false), ["lint", "test"]);
        assert_eq!(names(true), ["test"]);
    }

    fn check(name: &str, state: CheckState, started_min: i64) -> Check {
        Check {
            name: name.into(),
            kind: CheckKind::CheckRun,
            state,
            conclusion: None,
            url: None,
            job_id: Some(u64::try_from(started_min).unwrap()),
            run_id: None,
            workflow: Some("ci".into()),
            event: Some("pull_request".into()),
            started_at: Some(
                Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap()
                    + Duration::minutes(started_min),
            ),
            completed_at: None,
            output: String::new(),
            node_id: None,
            failure_reason: None,
            optional: false,
        }
    }

    #[test]
    fn verdicts_table() {
        let seen = Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap();
        let soon = seen + Duration::seconds(60);
        let late = seen + Duration::seconds(601);
        use CheckState::{Failed, Passed, Pending, Skipped};
        let cases: Vec<(&str, Vec<Check>, Instant, Verdict)> = vec![
            (
                "no checks right after a push is pending",
                vec![],
                soon,
                Verdict::AwaitingChecks,
            ),
            (
                "no checks after the grace period",
                vec![],
                late,
                Verdict::NoChecks,
            ),
            (
                "all passed",
                vec![check("lint", Passed, 0), check("docs", Skipped, 0)],
                soon,
                Verdict::Passed,
            ),
            (
                "one running hides a failure until all are done",
                vec![check("lint", Failed, 0), check("test", Pending, 0)],
                soon,
                Verdict::Running {
                    pending: vec!["test".into()],
                },
            ),
            (
                "failed",
                vec![check("lint", Failed, 0), check("test", Passed, 0)],
                soon,
                Verdict::Failed {
                    failed: vec!["lint".into()],
                },
            ),
            (
                "a re-run's newer entry replaces the older failure",
                vec![check("lint", Failed, 0), check("lint", Passed, 5)],
                soon,
                Verdict::Passed,
            ),
            (
                "an older success does not hide a newer failure",
                vec![check("lint", Passed, 0), check("lint", Failed, 5)],
                soon,
                Verdict::Failed {
                    failed: vec!["lint".into()],
                },
            ),
        ];
        for (what, checks, now, want) in cases {
            assert_eq!(verdict(&checks, seen, now, 600, None), want, "{what}");
        }
    }

    #[test]
    fn a_check_pending_past_the_timeout_never_finished() {
        let seen = Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap();
        let checks = vec![
            check("lint", CheckState::Passed, 0),
            check("third-party", CheckState::Pending, 0),
        ];
        let early = seen + Duration::seconds(3600);
        assert!(matches!(
            verdict(&checks, seen, early, 600, Some(3600)),
            Verdict::Running { .. }
        ));
        let late = seen + Duration::seconds(3601);
        assert_eq!(
            verdict(&checks, seen, late, 600, Some(3600)),
            Verdict::Failed {
                failed: vec!["third-party".into()]
            }
        );
        assert!(
            matches!(
                verdict(&checks, seen, late, 600, None),
                Verdict::Running { .. }
            ),
            "0: wait forever"
        );
    }

    #[test]
    fn push_and_pull_request_runs_are_separate_checks() {
        let mut push = check("test", CheckState::Failed, 0);
        push.event = Some("push".into());
        let pr = check("test", CheckState::Passed, 1);
        assert_eq!(newest(&[push, pr]).len(), 2);
    }
}
