//! The page's promises that need no browser: escaping, nothing external or executable, the
//! forge's own addresses, order by need, counts, links to runs and logs, last actions.

use crate::model::watch::Ci;
use std::collections::BTreeMap;

use chrono::Duration;

use super::*;
use crate::core::decide::tests::{t0, watch};
use crate::model::Sha;
use crate::model::watch::Why;

fn ticked(id: i64, number: u64) -> Watch {
    let mut w = watch();
    w.id = id;
    w.pr.number = number;
    w.last_tick_at = Some(t0() - Duration::minutes(2));
    w.next_tick_at = Some(t0() + Duration::minutes(4));
    w.status.memory.picture.merge_state = "CLEAN".into();
    w.status.memory.picture.total = 3;
    w.status.title = Some(format!("Title {number}"));
    w
}

fn page(watches: &[Watch], history: &BTreeMap<i64, Vec<HistoryEntry>>, web: &WebRoots) -> String {
    render(&PageInput {
        watches,
        branches: &[],
        undelivered: &[],
        history,
        web,
        now: t0(),
    })
}

fn sample() -> Vec<Watch> {
    let green = ticked(1, 1);
    let mut failing = ticked(2, 2);
    failing.status.pills.ci = Ci::Lit;
    failing.status.why = Some(Why::NotAgentCommit);
    failing.status.head_sha = Some(Sha("abcdef1234".into()));
    failing.status.head_ref = Some("feature".into());
    failing.status.base_ref = Some("main".into());
    failing.status.memory.picture.failed = vec![
        (
            "lint".into(),
            Some("https://ghe.example.com/octo/app/actions/runs/5/job/9".into()),
        ),
        ("evil".into(), Some("javascript:alert(1)".into())),
    ];
    let mut merged = ticked(3, 3);
    merged.status.state = PrState::Merged;
    vec![merged, green, failing]
}

#[test]
fn the_page_is_self_contained_and_escapes_forge_text() {
    let mut w = ticked(1, 1);
    w.status.title = Some("<script>alert(1)</script><img src=x onerror=alert(2)>\u{1b}[31m".into());
    let html = page(&[w], &BTreeMap::new(), &WebRoots::default());
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;")
    );
    assert!(!html.contains('\u{1b}'));
    for external in [
        "<link",
        " src=\"",
        "@import",
        "url(",
        "<iframe",
        "<object",
        "javascript:",
    ] {
        assert!(!html.contains(external), "{external} in {html}");
    }
    assert!(
        html.contains(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#)
    );
    assert!(html.contains("prefers-color-scheme: dark"));
}

#[test]
fn cards_come_by_need_with_chip_why_checks_head_and_last_actions() {
    let mut history = BTreeMap::new();
    history.insert(
        2,
        vec![
            HistoryEntry {
                at: t0() - Duration::minutes(9),
                what: "first".into(),
                why: None,
            },
            HistoryEntry {
                at: t0() - Duration::minutes(3),
                what: "ci lit".into(),
                why: None,
            },
        ],
    );
    let web = WebRoots {
        github: "https://ghe.example.com".into(),
        gitlab: "https://gitlab.com".into(),
    };
    let html = page(&sample(), &history, &web);
    let pos = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} not in {html}"));
    assert!(pos("PR #2 ✗ 2 failing") < pos("PR #1 ✓"));
    assert!(pos("PR #1 ✓") < pos("PR #3 merged"));
    assert!(html.contains(r#"<a class="chip bad" href="https://ghe.example.com/octo/app/pull/2">PR #2 ✗ 2 failing</a>"#));
    assert!(html.contains(r#"<span class="pill ci">ci</span>"#));
    assert!(
        html.contains(
            "The head commit isn&#39;t one the agent made, so auto-fix leaves it to you."
        )
    );
    assert!(html.contains(
        r#"<li>✗ lint — <a href="https://ghe.example.com/octo/app/actions/runs/5">run</a> · <a href="https://ghe.example.com/octo/app/actions/runs/5/job/9">log</a></li>"#
    ));
    assert!(
        html.contains("<li>✗ evil</li>"),
        "a javascript: address is no link"
    );
    assert!(html.contains("head abcdef1 (feature → main) · next look in 4m · last look 2m ago"));
    assert!(html.contains("<li>3m ago — ci lit</li><li>9m ago — first</li>"));
    assert!(html.contains("Nothing needs you."));
    assert!(
        html.contains("<p class=\"summary\">1 need you · 3 watched: 2 open, 1 merged · ci 1</p>")
    );
    assert!(html.contains("As of 2026-11-29 12:00:00Z"));
    assert!(html.contains("the next PR is due in 4m (2026-11-29 12:04:00Z)"));
    assert!(html.contains("<title>pr-monitor: 1 need you</title>"));
}

#[test]
fn a_failed_checks_tail_its_runner_mark_and_the_prs_own_auto_fix_show() {
    let mut w = ticked(1, 1);
    w.status.pills.ci = Ci::Lit;
    w.auto_fix = Some(false);
    w.status.memory.picture.failed = vec![("e2e".into(), None), ("lint".into(), None)];
    w.status.memory.picture.failed_logs = vec![
        crate::model::watch::FailedLog {
            name: "e2e".into(),
            tail: "runner lost".into(),
            runner: true,
        },
        crate::model::watch::FailedLog {
            name: "lint".into(),
            tail: "error: <unused>".into(),
            runner: false,
        },
    ];
    let html = page(&[w], &BTreeMap::new(), &WebRoots::default());
    assert!(html.contains("<li>✗ e2e (runner)"), "{html}");
    assert!(html.contains("<li>✗ lint<pre"), "{html}");
    assert!(html.contains("error: &lt;unused&gt;</pre>"), "{html}");
    assert!(html.contains("auto-fix off (this PR)"), "{html}");
}

/// Everything the page shows, held whole (see [`render`]).
#[derive(Debug)]
pub(crate) struct PageInput<'a> {
    pub(crate) watches: &'a [Watch],
    /// The watched branches, carded after the PRs.
    pub(crate) branches: &'a [crate::model::branch::BranchWatch],
    pub(crate) undelivered: &'a [OutboxRow],
    /// Recent history per watch id, oldest first.
    pub(crate) history: &'a BTreeMap<i64, Vec<HistoryEntry>>,
    pub(crate) web: &'a WebRoots,
    pub(crate) now: Instant,
}

/// The whole page of watches held whole: [`head`], each [`card`] by need, [`foot`].
pub(crate) fn render(input: &PageInput<'_>) -> String {
    let mut out = String::new();
    let tally = Tally::of(
        input
            .watches
            .iter()
            .map(crate::model::standing::Standing::of),
    );
    let nothing = input.watches.is_empty() && input.branches.is_empty();
    head(&mut out, &tally, nothing, input.now);
    for w in crate::view::status_view::by_need(input.watches) {
        let history = input.history.get(&w.id).map_or(&[][..], Vec::as_slice);
        card(&mut out, w, history, input.web, input.now);
    }
    foot(
        &mut out,
        input.branches,
        input.undelivered,
        input.web,
        input.now,
    );
    out
}
