//! The optional outputs written at the end of every run (`report.html_path`,
//! `report.metrics_path`): a self-contained HTML status page and Prometheus text-format
//! metrics. Rendering is pure; writing is atomic (a temporary file renamed into place), so a
//! reader never sees half a page.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::{Instant, PrState};
use crate::store::OutboxRow;
use crate::watch::Watch;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn stamp(t: Option<Instant>) -> String {
    t.map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%SZ").to_string(),
    )
}

/// The status page: one row per watched PR with its pills, why, merge state and next tick.
pub fn html(watches: &[Watch], undelivered: &[OutboxRow], now: Instant) -> String {
    let mut rows = String::new();
    for w in watches {
        let s = &w.status;
        let mut pills = String::new();
        for (lit, class, text) in [
            (s.pills.ci, "ci", "ci".to_owned()),
            (s.pills.ci_fixing, "fixing", "ci…".to_owned()),
            (s.pills.cnf, "cnf", "cnf".to_owned()),
            (s.pills.cmt > 0, "cmt", format!("cmt {}", s.pills.cmt)),
        ] {
            if lit {
                let _ = write!(pills, r#"<span class="pill {class}">{text}</span> "#);
            }
        }
        let _ = writeln!(
            rows,
            "<tr><td><a href=\"{url}\">{name}</a><div class=\"title\">{title}</div></td><td>{state}</td><td>{pills}</td>\
             <td>{why}</td><td>{merge}</td><td>{next}</td><td class=\"err\">{error}</td></tr>",
            url = escape(&w.pr.url()),
            name = escape(&w.pr.to_string()),
            title = escape(s.title.as_deref().unwrap_or("")),
            state = if w.paused { "paused" } else { s.state.as_str() },
            why = s.why.map_or("", |w| w.as_str()),
            merge = if s.merge_armed {
                s.merge_via.map_or("armed", |v| v.as_str())
            } else {
                ""
            },
            next = if s.state == PrState::Open {
                stamp(w.next_tick_at)
            } else {
                String::new()
            },
            error = escape(w.last_error.as_deref().unwrap_or("")),
        );
    }
    let mut problems = String::new();
    for p in undelivered {
        let _ = write!(
            problems,
            "<li>{} — {}: {}</li>",
            escape(&p.message.channel),
            escape(&p.message.subject),
            escape(p.last_error.as_deref().unwrap_or(""))
        );
    }
    let problems = if problems.is_empty() {
        String::new()
    } else {
        format!("<h2>Undelivered messages</h2><ul>{problems}</ul>")
    };
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pr-monitor</title>\n<style>\
         body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse;width:100%}}\
         td,th{{border-bottom:1px solid #ddd;padding:.4em;text-align:left;vertical-align:top}}\
         .title{{color:#666;font-size:90%}}.pill{{border-radius:1em;padding:0 .6em;color:#fff}}\
         .ci{{background:#c62828}}.fixing{{background:#ef6c00}}.cnf{{background:#c62828}}.cmt{{background:#f9a825}}\
         .err{{color:#c62828}}</style></head>\n<body><h1>pr-monitor</h1><p>{} watched PR(s), as of {}.</p>\n\
         <table><tr><th>PR</th><th>state</th><th>pills</th><th>why</th><th>merge</th><th>next tick</th><th>error</th></tr>\n\
         {rows}</table>{problems}</body></html>\n",
        watches.len(),
        stamp(Some(now)),
    )
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

/// Writes `text` to `path` atomically.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write `{}`", tmp.display()))?;
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
        write_atomically(path, &html(&watches, &undelivered, now))?;
    }
    if let Some(path) = &config.report.metrics_path {
        write_atomically(path, &metrics(&watches, &undelivered, now))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::tests::{t0, watch};

    #[test]
    fn the_page_escapes_forge_text_and_shows_pills() {
        let mut w = watch();
        w.status.title = Some("<script>alert(1)</script>".into());
        w.status.pills.ci = true;
        w.status.pills.cmt = 2;
        let page = html(&[w], &[], t0());
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("&lt;script&gt;"));
        assert!(page.contains(r#"<span class="pill ci">ci</span>"#));
        assert!(page.contains("cmt 2"));
        assert!(page.contains("https://github.com/octo/app/pull/1"));
    }

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
