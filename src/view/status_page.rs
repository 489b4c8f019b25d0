//! The status page (`report.html_path`) as a pure function: one self-contained HTML file, no
//! external assets and nothing executable, readable on a phone (390 px) and a desktop, light
//! and dark. PRs are cards sorted by need (what needs the owner first), each with its chip,
//! pills, the why in words, the failed checks linked to their runs and logs, the head, the last
//! actions, and the forge's own web address; summary counts and an honest "as of" on top.
//!
//! It is written in pieces, in the page's order, so a page of ten thousand PRs is never held
//! whole, nor are its watches: [`head`] from the counts of all watches, then [`card`] for each
//! PR by need, then [`foot`]; the tests' `render` is the whole page of watches held whole.

use std::fmt::Write as _;

use crate::core::text::one_line;
use crate::model::standing::Tally;
use crate::model::watch::{HistoryEntry, Picture, Watch};
use crate::model::web::WebRoots;
use crate::model::{Instant, PrState};
use crate::store::OutboxRow;
use crate::view::chip::Chip;
use crate::view::html::escape;
use crate::view::palette;
use crate::view::status_view::{need, summary};
use crate::view::web::check_links;
use crate::view::web::web_link;
use crate::view::when::{absolute, relative};

/// The last actions shown per PR.
pub const LAST_ACTIONS: usize = 3;

const LAYOUT: &str = "\
*{box-sizing:border-box}\
body{margin:0;font:16px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);background:var(--bg)}\
header,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}\
h1{font-size:1.4rem;margin:1rem 0 .25rem}\
a{color:var(--link)}\
.muted,.asof,.facts,.history{color:var(--muted)}\
.summary{font-weight:600;margin:.25rem 0}\
.asof{margin:.25rem 0 1rem;font-size:.9rem}\
ol.prs{list-style:none;margin:0;padding:0}\
.pr{border:1px solid var(--quiet-bg);border-radius:.5rem;padding:.75rem;margin:0 0 .75rem;overflow-wrap:anywhere}\
.top{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}\
.chip{font-weight:700;border-radius:.4rem;padding:.1rem .5rem;text-decoration:none}\
.pill{border-radius:1rem;padding:0 .55rem;font-size:.9rem;font-weight:600}\
.repo{font-size:.9rem}\
.title{margin:.35rem 0 .2rem;font-size:1.05rem}\
.why{margin:.2rem 0;font-weight:600}\
.tail{margin:.2rem 0;font-size:.8em;white-space:pre-wrap;overflow-wrap:anywhere}\
.checks,.history{margin:.3rem 0;padding-left:1.2rem;font-size:.9rem}\
.facts{font-size:.9rem;margin:.3rem 0}\
.err{color:var(--err);font-weight:600;margin:.3rem 0}\
@media (min-width:48rem){.pr{display:grid;grid-template-columns:minmax(16rem,1fr) 2fr;column-gap:1rem}\
.pr>.top,.pr>.title{grid-column:1}.pr>*:not(.top):not(.title){grid-column:2}.pr>.why{grid-row:1}}\
";

fn pills_html(w: &Watch) -> String {
    crate::view::status_view::pills(w)
        .iter()
        .map(|(text, _)| {
            let class = match text.as_str() {
                "ci" => "ci",
                "ci…" => "fixing",
                "cnf" => "cnf",
                _ => "cmt",
            };
            format!(r#"<span class="pill {class}">{}</span>"#, escape(text))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The why in words, or what the state itself says.
fn why_words(w: &Watch) -> String {
    let s = &w.status;
    if let Some(e) = &w.last_error {
        return format!("The last tick failed: {}", one_line(e));
    }
    if s.state == PrState::Open
        && let Some(why) = s.why
    {
        return why.explain(s.attempts);
    }
    match Chip::of(w) {
        Chip::Merged => "Merged.".into(),
        Chip::Closed => "Closed without merging.".into(),
        Chip::Conflicts => "It conflicts with its base: yours to resolve.".into(),
        Chip::Failing(_) => "Checks failed: yours to look at.".into(),
        Chip::Running { .. } => "Checks are running.".into(),
        Chip::InQueue { train, .. } => {
            let ahead = s
                .memory
                .picture
                .queue
                .as_ref()
                .filter(|e| !e.ahead.is_empty())
                .map(|e| {
                    format!(
                        " Ahead of it: {}.",
                        crate::core::decide::queue::ahead_words(w.pr.forge, &e.ahead)
                    )
                })
                .unwrap_or_default();
            format!(
                "In the {}: the forge tests it on top of what is ahead of it, then merges it.{ahead}",
                if train { "merge train" } else { "merge queue" }
            )
        }
        Chip::MergingWhenReady => "Armed: it merges when the forge says it is ready.".into(),
        Chip::Unread => "Not read yet: the next run reads it.".into(),
        Chip::Draft => "A draft: it waits until it is marked ready for review.".into(),
        Chip::Passing if s.pills.cmt > 0 => {
            format!("{} unresolved review thread(s) wait for you.", s.pills.cmt)
        }
        Chip::Passing => "Nothing needs you.".into(),
    }
}

/// One PR's card, with `history` (its recent entries, oldest first).
pub fn card(out: &mut String, w: &Watch, history: &[HistoryEntry], web: &WebRoots, now: Instant) {
    let s = &w.status;
    let chip = Chip::of(w);
    let url = w.pr.url_on(web);
    let _ = write!(
        out,
        "<li class=\"pr need-{need}\" id=\"{id}\">\n<div class=\"top\"><a class=\"chip {tone}\" href=\"{url}\">{chip}</a> \
         <span class=\"repo muted\">{repo}</span> {pills}</div>\n<div class=\"title\">{title}</div>\n<p class=\"why\">{why}</p>\n",
        need = need(w),
        id = escape(&format!(
            "pr-{}-{}",
            w.pr.repo.replace('/', "-"),
            w.pr.number
        )),
        tone = chip.class(),
        url = escape(&url),
        chip = escape(&crate::view::chip::label(w)),
        repo = escape(&w.pr.repo),
        pills = pills_html(w),
        title = escape(&one_line(s.title.as_deref().unwrap_or(""))),
        why = escape(&why_words(w)),
    );
    if s.state == PrState::Open {
        failed_checks(out, &s.memory.picture);
    }
    let facts = facts(w, now);
    if !facts.is_empty() {
        let _ = writeln!(out, "<p class=\"facts\">{}</p>", escape(&facts.join(" · ")));
    }
    if !history.is_empty() {
        out.push_str("<ul class=\"history\">");
        for e in history.iter().rev().take(LAST_ACTIONS) {
            let _ = write!(
                out,
                "<li>{} — {}</li>",
                escape(&relative(e.at, now)),
                escape(&one_line(&e.what))
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</li>\n");
}

/// A card's failed checks, each linked to its run and log, with its log's tail.
fn failed_checks(out: &mut String, picture: &Picture) {
    if picture.failed.is_empty() {
        return;
    }
    out.push_str("<ul class=\"checks\">");
    for (name, link) in &picture.failed {
        let tail = picture.failed_logs.iter().find(|l| &l.name == name);
        let _ = write!(out, "<li>✗ {}", escape(name));
        if tail.is_some_and(|l| l.runner) {
            out.push_str(" (runner)");
        }
        if let Some(link) = link.as_deref().and_then(web_link) {
            let (run, log) = check_links(link);
            let _ = write!(out, " — <a href=\"{}\">run</a>", escape(&run));
            if let Some(log) = log {
                let _ = write!(out, " · <a href=\"{}\">log</a>", escape(&log));
            }
        }
        if let Some(tail) = tail.filter(|l| !l.tail.is_empty()) {
            let _ = write!(out, "<pre class=\"tail\">{}</pre>", escape(&tail.tail));
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>\n");
}

/// A card's facts line: head and branches, who pushed it, the arming, the PR's own auto-fix
/// setting, and the next and last look.
fn facts(w: &Watch, now: Instant) -> Vec<String> {
    let s = &w.status;
    let mut facts = Vec::new();
    if let Some(head) = &s.head_sha {
        let branch = s
            .head_ref
            .as_deref()
            .map(|r| {
                format!(
                    " ({} → {})",
                    one_line(r),
                    one_line(s.base_ref.as_deref().unwrap_or("?"))
                )
            })
            .unwrap_or_default();
        facts.push(format!("head {}{branch}", head.short()));
        if let Some(words) = s.trust_words() {
            facts.push(one_line(&words));
        }
    }
    if s.merge.is_armed() {
        facts.push(format!(
            "merge armed ({})",
            s.merge.via().map_or("pending", |v| v.as_str())
        ));
    }
    if let Some(own) = w.auto_fix.filter(|_| s.state == PrState::Open) {
        facts.push(crate::view::status_view::auto_fix_words(own).into());
    }
    if w.paused {
        facts.push("paused".into());
    } else if s.state == PrState::Open
        && let Some(next) = w.next_tick_at
    {
        facts.push(format!("next look {}", relative(next, now)));
    }
    if let Some(last) = w.last_tick_at {
        facts.push(format!("last look {}", relative(last, now)));
    }
    facts
}

/// The page's Content-Security-Policy: no script, no external asset, its own inline style.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'";

/// The page's head, from the counts of every watch: the summary, the "as of", and the next
/// look due; `nothing` when no PR or branch is watched.
pub fn head(out: &mut String, tally: &Tally, nothing: bool, now: Instant) {
    let needing = tally.needing;
    let next = tally.next_due.map_or_else(
        || "nothing open is waiting for a look".to_owned(),
        |t| {
            format!(
                "the next PR is due {} ({}), at the first run after that",
                relative(t, now),
                absolute(t)
            )
        },
    );
    let empty = if nothing {
        "<p>Nothing is watched. Add a PR with <code>pr-monitor watch add OWNER/REPO#N</code>.</p>\n"
    } else {
        ""
    };
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
         <title>pr-monitor: {needing} need you</title>\n<style>\n{colours}{LAYOUT}\n</style></head>\n<body>\n\
         <header><h1>pr-monitor</h1>\n<p class=\"summary\">{needing} need you · {summary}</p>\n\
         <p class=\"asof\">As of {asof} (written at the end of the last run); {next}.</p></header>\n\
         <main>{empty}<ol class=\"prs\">\n",
        colours = palette::css(),
        summary = escape(&summary(tally)),
        asof = absolute(now),
    );
}

/// The page's foot, after the PRs' cards: the watched branches' cards and the undelivered
/// messages.
pub fn foot(
    out: &mut String,
    branches: &[crate::model::branch::BranchWatch],
    undelivered: &[OutboxRow],
    web: &WebRoots,
    now: Instant,
) {
    out.push_str(&crate::view::branch_view::cards(branches, web, now));
    out.push_str("</ol></main>\n");
    if !undelivered.is_empty() {
        out.push_str("<footer><h2>Undelivered messages</h2><ul>");
        for p in undelivered {
            let _ = write!(
                out,
                "<li>{} — {}: {}</li>",
                escape(&p.message.channel),
                escape(&p.message.subject),
                escape(p.last_error.as_deref().unwrap_or(""))
            );
        }
        out.push_str("</ul></footer>\n");
    }
    out.push_str("</body></html>\n");
}

#[cfg(test)]
pub(crate) mod tests;
