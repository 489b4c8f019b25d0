//! The optional outputs written at the end of every run (`report.html_path`,
//! `report.metrics_path`): the status page (rendered by [`crate::status_page`]) and Prometheus
//! text-format metrics. Rendering is pure; writing is atomic (a temporary file renamed into place), so a
//! reader never sees half a page.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::{Instant, PrState};
use crate::store::OutboxRow;
use crate::watch::Watch;

/// The status page of what the store holds (see [`crate::status_page`]).
pub fn html(
    watches: &[Watch],
    undelivered: &[OutboxRow],
    history: &std::collections::BTreeMap<i64, Vec<crate::watch::HistoryEntry>>,
    web: &crate::web::WebRoots,
    now: Instant,
) -> String {
    crate::status_page::render(&crate::status_page::PageInput {
        watches,
        undelivered,
        history,
        web,
        now,
    })
}

/// Prometheus text-format metrics.
pub fn metrics(watches: &[Watch], undelivered: &[OutboxRow], now: Instant) -> String {
    let mut out = String::new();
    let count = |f: &dyn Fn(&Watch) -> bool| watches.iter().filter(|w| f(w)).count();
    out.push_str(
        "# HELP pr_monitor_watches Watched PRs by state.\n# TYPE pr_monitor_watches gauge\n",
    );
    for state in [PrState::Open, PrState::Merged, PrState::Closed] {
        let _ = writeln!(
            out,
            "pr_monitor_watches{{state=\"{}\"}} {}",
            state.as_str(),
            count(&|w| w.status.state == state)
        );
    }
    out.push_str(
        "# HELP pr_monitor_pills Open PRs with a pill lit.\n# TYPE pr_monitor_pills gauge\n",
    );
    let open = |w: &Watch| w.status.state == PrState::Open;
    for (pill, n) in [
        ("ci", count(&|w| open(w) && w.status.pills.ci)),
        ("ci_fixing", count(&|w| open(w) && w.status.pills.ci_fixing)),
        ("cnf", count(&|w| open(w) && w.status.pills.cnf)),
        ("cmt", count(&|w| open(w) && w.status.pills.cmt > 0)),
    ] {
        let _ = writeln!(out, "pr_monitor_pills{{pill=\"{pill}\"}} {n}");
    }
    out.push_str("# HELP pr_monitor_merge_armed Open PRs armed to merge.\n# TYPE pr_monitor_merge_armed gauge\n");
    let _ = writeln!(
        out,
        "pr_monitor_merge_armed {}",
        count(&|w| open(w) && w.status.merge_armed)
    );
    out.push_str("# HELP pr_monitor_errors Open PRs whose last tick failed.\n# TYPE pr_monitor_errors gauge\n");
    let _ = writeln!(
        out,
        "pr_monitor_errors {}",
        count(&|w| open(w) && w.last_error.is_some())
    );
    out.push_str("# HELP pr_monitor_undelivered Messages not delivered.\n# TYPE pr_monitor_undelivered gauge\n");
    let _ = writeln!(out, "pr_monitor_undelivered {}", undelivered.len());
    out.push_str("# HELP pr_monitor_last_run_timestamp_seconds When the last run ended.\n# TYPE pr_monitor_last_run_timestamp_seconds gauge\n");
    let _ = writeln!(
        out,
        "pr_monitor_last_run_timestamp_seconds {}",
        now.timestamp()
    );
    out
}

/// Writes `text` to `path` atomically, with file `mode` (a missing folder is made owner-only).
pub fn write_atomically(path: &Path, text: &str, mode: u32) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    crate::private::write(&tmp, text.as_bytes(), mode)
        .with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))
}

/// Writes whichever outputs the config asks for.
pub fn write(
    config: &crate::config::Config,
    store: &crate::store::Store,
    now: Instant,
) -> Result<()> {
    if config.report.html_path.is_none() && config.report.metrics_path.is_none() {
        return Ok(());
    }
    let watches = store.watches()?;
    let undelivered = store.outbox_problems()?;
    if let Some(path) = &config.report.html_path {
        let mut history = std::collections::BTreeMap::new();
        for w in &watches {
            history.insert(
                w.id,
                store.history(&w.pr, crate::status_page::LAST_ACTIONS)?,
            );
        }
        let web = crate::web::WebRoots::of(config);
        write_atomically(
            path,
            &html(&watches, &undelivered, &history, &web, now),
            config.report.file_mode(),
        )?;
    }
    if let Some(path) = &config.report.metrics_path {
        write_atomically(
            path,
            &metrics(&watches, &undelivered, now),
            config.report.file_mode(),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::tests::{t0, watch};

    #[test]
    fn metrics_are_prometheus_text() {
        let mut a = watch();
        a.status.pills.ci = true;
        let mut b = watch();
        b.status.state = PrState::Merged;
        let m = metrics(&[a, b], &[], t0());
        assert!(m.contains("pr_monitor_watches{state=\"open\"} 1\n"));
        assert!(m.contains("pr_monitor_watches{state=\"merged\"} 1\n"));
        assert!(m.contains("pr_monitor_pills{pill=\"ci\"} 1\n"));
        for line in m.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(!name.is_empty() && value.parse::<f64>().is_ok(), "{line}");
        }
    }
}
