//! The Prometheus metrics file (`report.metrics_path`, node_exporter's textfile convention),
//! written atomically at the end of every run that is not a dry run.
//!
//! [`render`] is pure: watched PRs by state and pill, the outbox, the run's times and duration,
//! and the series kept in the store ([`crate::store::Labels`]: counters that survive across runs,
//! last-known gauges). [`write`] is the shell: it records this run's facts in the store — the
//! last-success time moves only when the run succeeded — then renders and writes the file.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Result;

use crate::model::standing::Tally;
use crate::model::{Instant, PrState};
use crate::store::{Labels, Store, StoredMetric};

const LAST_RUN: &str = "metrics.last_run_at";
const LAST_SUCCESS: &str = "metrics.last_success_at";
const LAST_DURATION: &str = "metrics.last_run_duration_seconds";

/// Counter of actions taken, by kind.
pub const ACTIONS_TOTAL: &str = "pr_monitor_actions_total";
/// Counter of failed ticks, by PR.
pub const TICK_ERRORS_TOTAL: &str = "pr_monitor_tick_errors_total";

/// Everything the file shows.
#[derive(Debug, Clone, Default)]
pub struct MetricsInput<'a> {
    /// The counts of every watch.
    pub tally: Tally,
    /// The watched branches (`pr_monitor_branches`).
    pub branches: &'a [crate::model::branch::BranchWatch],
    /// Undelivered outbox messages not yet failed, and failed at least once.
    pub outbox_pending: i64,
    pub outbox_failed: i64,
    /// Epoch seconds of the last run, and of the last run that succeeded (if any did).
    pub last_run: i64,
    pub last_success: Option<i64>,
    pub last_duration_seconds: f64,
    pub stored: &'a [StoredMetric],
}

/// How a run went, as the metrics see it.
#[derive(Debug, Clone, Copy)]
pub struct RunFacts {
    pub now: Instant,
    /// Every forge the run needed answered (a run that read nothing at all of some forge is
    /// no success, however many PRs of others it ticked; one PR's failed tick is no failure).
    pub read_every_forge: bool,
    pub duration_seconds: f64,
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Prometheus text-format metrics.
#[expect(
    clippy::too_many_lines,
    reason = "one metric family after another, in the order of the text format"
)]
pub fn render(input: &MetricsInput<'_>) -> String {
    let t = &input.tally;
    let mut out = String::new();
    family(
        &mut out,
        "pr_monitor_watches",
        "gauge",
        "Watched PRs by state.",
    );
    for state in [PrState::Open, PrState::Merged, PrState::Closed] {
        let _ = writeln!(
            out,
            "pr_monitor_watches{{state=\"{}\"}} {}",
            state.as_str(),
            t.in_state(state)
        );
    }
    family(
        &mut out,
        "pr_monitor_pills",
        "gauge",
        "Open PRs with a pill lit.",
    );
    for (pill, n) in [
        ("ci", t.ci),
        ("ci_fixing", t.ci_fixing),
        ("cnf", t.cnf),
        ("cmt", t.cmt),
    ] {
        let _ = writeln!(out, "pr_monitor_pills{{pill=\"{pill}\"}} {n}");
    }
    family(
        &mut out,
        "pr_monitor_branches",
        "gauge",
        "Watched branches, all and with ci lit (a mapped check failing on the head).",
    );
    let lit = input.branches.iter().filter(|b| b.ci()).count();
    let _ = writeln!(
        out,
        "pr_monitor_branches{{pill=\"all\"}} {}\npr_monitor_branches{{pill=\"ci\"}} {lit}",
        input.branches.len()
    );
    family(
        &mut out,
        "pr_monitor_merge_armed",
        "gauge",
        "Open PRs armed to merge.",
    );
    let _ = writeln!(out, "pr_monitor_merge_armed {}", t.armed);
    family(
        &mut out,
        "pr_monitor_errors",
        "gauge",
        "Open PRs whose last tick failed.",
    );
    let _ = writeln!(out, "pr_monitor_errors {}", t.errors);
    family(
        &mut out,
        "pr_monitor_undelivered",
        "gauge",
        "Messages that failed and are not delivered.",
    );
    let _ = writeln!(out, "pr_monitor_undelivered {}", input.outbox_failed);
    family(
        &mut out,
        "pr_monitor_outbox_messages",
        "gauge",
        "Undelivered outbox messages: pending (not yet failed) and failed (at least once).",
    );
    let _ = writeln!(
        out,
        "pr_monitor_outbox_messages{{state=\"pending\"}} {}\npr_monitor_outbox_messages{{state=\"failed\"}} {}",
        input.outbox_pending, input.outbox_failed
    );
    family(
        &mut out,
        "pr_monitor_last_run_timestamp_seconds",
        "gauge",
        "When the last run ended, whether or not it succeeded.",
    );
    let _ = writeln!(
        out,
        "pr_monitor_last_run_timestamp_seconds {}",
        input.last_run
    );
    if let Some(t) = input.last_success {
        family(
            &mut out,
            "pr_monitor_last_success_timestamp_seconds",
            "gauge",
            "When the last run in which every PR's tick completed ended.",
        );
        let _ = writeln!(out, "pr_monitor_last_success_timestamp_seconds {t}");
    }
    family(
        &mut out,
        "pr_monitor_run_duration_seconds",
        "gauge",
        "How long the last run took.",
    );
    let _ = writeln!(
        out,
        "pr_monitor_run_duration_seconds {:.3}",
        input.last_duration_seconds
    );
    let mut last_name = "";
    for m in input.stored {
        if m.name != last_name {
            let kind = if m.kind == "counter" {
                "counter"
            } else {
                "gauge"
            };
            family(&mut out, &m.name, kind, "Kept across runs.");
            last_name = &m.name;
        }
        if m.labels.as_str().is_empty() {
            let _ = writeln!(out, "{} {}", m.name, m.value);
        } else {
            let _ = writeln!(out, "{}{{{}}} {}", m.name, m.labels.as_str(), m.value);
        }
    }
    out
}

/// Records the run's facts in the store: when it ran, how long it took, and when it
/// succeeded.
pub fn record_run(store: &mut Store, run: RunFacts) -> Result<()> {
    let now = run.now.timestamp().to_string();
    store.set_meta(LAST_RUN, &now)?;
    if run.read_every_forge {
        store.set_meta(LAST_SUCCESS, &now)?;
    }
    store.set_meta(LAST_DURATION, &format!("{:.3}", run.duration_seconds))
}

/// Writes the metrics file of `tally` (the counts of every watch the store holds) if the
/// config asks for one.
pub fn write(config: &crate::config::Config, store: &Store, tally: Tally) -> Result<()> {
    let Some(path) = &config.report.metrics_path else {
        return Ok(());
    };
    crate::tick::pages::write_atomically(path, &text_of(store, tally)?, config.report.file_mode())
}

/// The metrics as the store holds them after the last run: the text [`write`] puts in the
/// file, and what the daemon serves at `/metrics`.
pub fn text(store: &Store) -> Result<String> {
    store.snapshot(|store| {
        let tally = Tally::of(store.standings()?.iter().map(|p| p.standing));
        text_of(store, tally)
    })
}

/// The metrics of `tally` (the counts of every watch the store holds) and the store's other
/// figures.
fn text_of(store: &Store, tally: Tally) -> Result<String> {
    let number = |key: &str| -> Result<Option<String>> { store.meta(key) };
    let (outbox_pending, outbox_failed) = store.outbox_counts()?;
    let stored = store.stored_metrics()?;
    let branches = store.branch_watches()?;
    Ok(render(&MetricsInput {
        tally,
        branches: &branches,
        outbox_pending,
        outbox_failed,
        last_run: number(LAST_RUN)?.and_then(|s| s.parse().ok()).unwrap_or(0),
        last_success: number(LAST_SUCCESS)?.and_then(|s| s.parse().ok()),
        last_duration_seconds: number(LAST_DURATION)?
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0),
        stored: &stored,
    }))
}

/// Counter of HTTP requests sent to a forge, by forge.
pub const FORGE_REQUESTS_TOTAL: &str = "pr_monitor_forge_requests_total";
/// Counter of points spent against a forge's secondary limits, by forge.
pub const FORGE_POINTS_TOTAL: &str = "pr_monitor_forge_points_total";
/// Gauge of the forge's primary rate limit left, by forge, as last answered.
pub const RATE_LIMIT_REMAINING: &str = "pr_monitor_rate_limit_remaining";

/// Adds a run's forge requests and points to the counters, and sets the rate-limit gauges.
pub fn count_forge_usage(
    store: &mut Store,
    usage: &[(crate::model::ForgeKind, crate::forge::http::Usage)],
) -> Result<()> {
    for (kind, used) in usage {
        let forge = Labels::of(&[("forge", kind.as_str())]);
        #[allow(clippy::cast_precision_loss)]
        let (requests, points) = (used.requests as f64, used.points as f64);
        store.add_to_counter(FORGE_REQUESTS_TOTAL, &forge, requests)?;
        store.add_to_counter(FORGE_POINTS_TOTAL, &forge, points)?;
        if let Some(remaining) = used.rate_limit_remaining {
            #[allow(clippy::cast_precision_loss)]
            store.set_gauge(RATE_LIMIT_REMAINING, &forge, remaining as f64)?;
        }
    }
    Ok(())
}

/// Counts a run's planned actions, by kind.
pub fn count_actions(store: &mut Store, by_kind: &BTreeMap<&'static str, u64>) -> Result<()> {
    for (kind, n) in by_kind {
        #[allow(clippy::cast_precision_loss)]
        store.add_to_counter(ACTIONS_TOTAL, &Labels::of(&[("kind", kind)]), *n as f64)?;
    }
    Ok(())
}

/// Adds one failed tick to each PR's error counter.
pub fn count_errors(store: &mut Store, failed_prs: &[String]) -> Result<()> {
    for pr in failed_prs {
        store.add_to_counter(TICK_ERRORS_TOTAL, &Labels::of(&[("pr", pr)]), 1.0)?;
    }
    Ok(())
}

/// The label an action is counted under.
pub fn action_kind(a: &crate::core::decide::Action) -> &'static str {
    use crate::core::decide::Action;
    match a {
        Action::SendToAgent(_) => "send_to_agent",
        Action::RerunFailed { .. } => "rerun_failed",
        Action::UpdateBranch { .. } => "update_branch",
        Action::EnableAutoMerge { .. } => "enable_auto_merge",
        Action::DisableAutoMerge => "disable_auto_merge",
        Action::Merge { .. } => "merge",
        Action::Notify(_) => "notify",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::{t0, watch};
    use crate::model::standing::Standing;
    use crate::model::watch::Ci;

    /// Every sample line is `name{labels} value` with a number, and every family has HELP and TYPE.
    pub(super) fn assert_prometheus_text(m: &str) {
        let mut typed = std::collections::BTreeSet::new();
        for line in m.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(["gauge", "counter"].contains(&kind), "{line}");
                typed.insert(name.to_string());
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
            let name = series.split('{').next().unwrap();
            assert!(typed.contains(name), "untyped: {line}");
        }
    }

    #[test]
    fn metrics_are_prometheus_text() {
        let mut a = watch();
        a.status.pills.ci = Ci::Lit;
        let mut b = watch();
        b.status.state = PrState::Merged;
        let stored = [StoredMetric {
            name: ACTIONS_TOTAL.into(),
            labels: Labels::of(&[("kind", "merge")]),
            kind: "counter".into(),
            value: 2.0,
        }];
        let m = render(&MetricsInput {
            tally: Tally::of([&a, &b].map(Standing::of)),
            branches: &[],
            outbox_pending: 1,
            outbox_failed: 2,
            last_run: t0().timestamp(),
            last_success: Some(t0().timestamp() - 60),
            last_duration_seconds: 0.25,
            stored: &stored,
        });
        assert!(m.contains("pr_monitor_watches{state=\"open\"} 1\n"));
        assert!(m.contains("pr_monitor_watches{state=\"merged\"} 1\n"));
        assert!(m.contains("pr_monitor_pills{pill=\"ci\"} 1\n"));
        assert!(m.contains("pr_monitor_outbox_messages{state=\"failed\"} 2\n"));
        assert!(m.contains("# TYPE pr_monitor_actions_total counter\n"));
        assert!(m.contains("pr_monitor_actions_total{kind=\"merge\"} 2\n"));
        assert!(m.contains("pr_monitor_run_duration_seconds 0.250\n"));
        assert!(m.contains(&format!(
            "pr_monitor_last_success_timestamp_seconds {}\n",
            t0().timestamp() - 60
        )));
        assert_prometheus_text(&m);
    }

    #[test]
    fn last_success_moves_only_on_a_successful_run() {
        let mut store = Store::open_in_memory().unwrap();
        let ok = RunFacts {
            now: t0(),
            read_every_forge: true,
            duration_seconds: 1.0,
        };
        record_run(&mut store, ok).unwrap();
        let later = t0() + chrono::Duration::minutes(5);
        record_run(
            &mut store,
            RunFacts {
                now: later,
                read_every_forge: false,
                ..ok
            },
        )
        .unwrap();
        assert_eq!(
            store.meta(LAST_SUCCESS).unwrap(),
            Some(t0().timestamp().to_string())
        );
        assert_eq!(
            store.meta(LAST_RUN).unwrap(),
            Some(later.timestamp().to_string())
        );
    }
}
