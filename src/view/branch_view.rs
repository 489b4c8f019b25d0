//! Watched branches as `status` shows them: one line per branch (`branch octo/app@main ✗ 1
//! failing  ci  test failed  next in 4m`) in aligned columns, lit ones first, then a count; and the branch rows
//! of `status --json` (`kind: "branch"`, `branch`, `number: null`). Pure: stored rows, the
//! clock and a [`Term`] in, text out.

use serde_json::{Value, json};

use crate::model::branch::BranchWatch;
use crate::model::{Instant, stamp};
use crate::terminal::{Paint, Term};
use crate::view::columns::{Column, Keep};
use crate::view::when::relative;

/// One `status --json` row of a watched branch: the PR rows' keys, with `kind: "branch"`,
/// the branch's `branch` and `url`, `number: null`, and `failing` (the mapped checks failing).
pub fn json(b: &BranchWatch) -> Value {
    let ts = |t: Option<Instant>| t.map_or(Value::Null, |t| json!(stamp(t)));
    json!({
        "kind": "branch",
        "pr": null,
        "url": b.branch.url(),
        "forge": b.branch.forge.as_str(),
        "repo": b.branch.repo,
        "branch": b.branch.name,
        "number": null,
        "state": "open",
        "head_sha": b.head_sha.as_ref().map(crate::model::Sha::as_str),
        "pills": { "ci": b.ci(), "ci_fixing": false, "cnf": false, "cmt": 0 },
        "failing": b.memory.failing,
        "why": null,
        "attempts": 0,
        "merge_armed": false,
        "merge_via": null,
        "next_tick_at": ts(b.next_tick_at),
        "last_tick_at": ts(b.last_tick_at),
        "last_error": b.last_error,
        "title": null,
        "job": b.job,
        "agent": null,
        "paused": false,
        "paused_reason": null,
        "queue": null,
        "deferred": null,
        "auto_fix_override": null,
        "merge_method": null,
        "trusted_by": b.trusted_by(),
        "held_by": null,
    })
}

/// The chip of a branch: `✓`, `✗ N failing`, `◌ running`, or `not read yet`.
fn chip(b: &BranchWatch) -> (String, Paint) {
    match (
        b.head_sha.is_some(),
        b.memory.failing.len(),
        b.memory.pending,
    ) {
        (false, _, _) => ("not read yet".to_owned(), Paint::Dim),
        (true, 0, true) => ("◌ running".to_owned(), Paint::Busy),
        (true, 0, false) => ("✓".to_owned(), Paint::Good),
        (true, n, _) => (format!("✗ {n} failing"), Paint::Bad),
    }
}

/// The columns of a branch's `status` line: the chip and the `ci` pill always; what fails and
/// the error (cut down to 24 cells), then the next look, give way on a narrow terminal.
fn columns(branches: &[&BranchWatch], now: Instant) -> Vec<Column> {
    let column = |keep, sep, cell: &dyn Fn(&BranchWatch) -> Vec<(String, Paint)>| {
        crate::view::columns::column(branches, keep, sep, cell)
    };
    vec![
        column(Keep::Always, " ", &|b| {
            let (chip, paint) = chip(b);
            vec![(format!("branch {} {chip}", b.branch.short()), paint)]
        }),
        column(Keep::Always, " ", &|b| {
            if b.ci() {
                vec![("ci".to_owned(), Paint::Bad)]
            } else {
                Vec::new()
            }
        }),
        column(Keep::Shrink { rank: 2, min: 24 }, " · ", &|b| {
            let mut note = Vec::new();
            if b.ci() {
                note.push((crate::core::report::failed(&b.memory.failing), Paint::Bold));
            }
            if let Some(e) = &b.last_error {
                note.push((
                    format!("error: {}", crate::core::text::one_line(e)),
                    Paint::Bad,
                ));
            }
            note
        }),
        column(Keep::Drop(1), " ", &|b| {
            b.next_tick_at
                .map(|next| (format!("next {}", relative(next, now)), Paint::Dim))
                .into_iter()
                .collect()
        }),
    ]
}

/// The branches' lines, lit and erring ones first, then `2 branches watched · ci 1`.
pub fn render(branches: &[BranchWatch], now: Instant, term: Term) -> String {
    let mut sorted: Vec<&BranchWatch> = branches.iter().collect();
    sorted.sort_by_key(|b| (!b.ci() && b.last_error.is_none(), b.branch.short()));
    let mut out = String::new();
    for line in crate::view::columns::render(&columns(&sorted, now), term) {
        out.push_str(&line);
        out.push('\n');
    }
    let lit = branches.iter().filter(|b| b.ci()).count();
    out.push_str(&format!(
        "{} branch{} watched",
        branches.len(),
        if branches.len() == 1 { "" } else { "es" }
    ));
    if lit > 0 {
        out.push_str(&format!(" · ci {lit}"));
    }
    out.push('\n');
    out
}

/// The branches' cards on the status page, lit ones first: the chip linked to the branch,
/// the `ci` pill, the failing checks, the head and its trust, the next look.
pub fn cards(branches: &[BranchWatch], web: &crate::model::web::WebRoots, now: Instant) -> String {
    use crate::view::html::escape;
    let mut sorted: Vec<&BranchWatch> = branches.iter().collect();
    sorted.sort_by_key(|b| (!b.ci() && b.last_error.is_none(), b.branch.short()));
    let mut out = String::new();
    for b in sorted {
        let (chip, paint) = chip(b);
        let tone = match paint {
            Paint::Bad => "bad",
            Paint::Good => "good",
            Paint::Busy => "busy",
            _ => "quiet",
        };
        let pill = if b.ci() {
            r#" <span class="pill ci">ci</span>"#
        } else {
            ""
        };
        let why = match (&b.last_error, b.ci()) {
            (Some(e), _) => format!("The last look failed: {}", crate::core::text::one_line(e)),
            (None, true) => format!(
                "{} on the branch's head.",
                crate::core::report::failed(&b.memory.failing)
            ),
            (None, false) if b.memory.pending => "Checks are running.".to_owned(),
            (None, false) => "Nothing needs you.".to_owned(),
        };
        let mut facts = Vec::new();
        if let Some(head) = &b.head_sha {
            facts.push(format!("head {}", head.short()));
        }
        if let Some(by) = b.trusted_by() {
            facts.push(format!("trusted: {by}"));
        }
        if let Some(next) = b.next_tick_at {
            facts.push(format!("next look {}", relative(next, now)));
        }
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "<li class=\"pr branch need-{need}\" id=\"{id}\">\n<div class=\"top\"><a class=\"chip {tone}\" \
                 href=\"{url}\">branch {name} {chip}</a> <span class=\"repo muted\">{repo}</span>{pill}</div>\n\
                 <p class=\"why\">{why}</p>\n<p class=\"facts\">{facts}</p>\n</li>\n",
                need = if b.ci() || b.last_error.is_some() {
                    1
                } else {
                    4
                },
                id = escape(
                    &format!("branch-{}-{}", b.branch.repo, b.branch.name).replace('/', "-")
                ),
                url = escape(&b.branch.url_on(web)),
                name = escape(&b.branch.name),
                chip = escape(&chip),
                repo = escape(&b.branch.repo),
                why = escape(&why),
                facts = escape(&facts.join(" · ")),
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::branch::{BranchMemory, BranchRef};
    use crate::model::{ForgeKind, Sha};
    use chrono::TimeZone;

    fn branch(repo: &str, failing: &[&str], pending: bool) -> BranchWatch {
        BranchWatch {
            id: 1,
            branch: BranchRef {
                forge: ForgeKind::GitHub,
                repo: repo.into(),
                name: "main".into(),
            },
            job: "j".into(),
            head_sha: Some(Sha("abc".into())),
            memory: BranchMemory {
                failing: failing.iter().map(|s| (*s).to_owned()).collect(),
                pending,
                ..BranchMemory::default()
            },
            next_tick_at: Some(chrono::Utc.timestamp_opt(1_800_000_240, 0).unwrap()),
            last_tick_at: None,
            last_error: None,
        }
    }

    #[test]
    fn lit_branches_come_first_with_their_failures() {
        let now = chrono::Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let all = [
            branch("octo/a", &[], true),
            branch("octo/b", &["test"], false),
            branch("octo/c", &[], false),
        ];
        assert_eq!(
            render(&all, now, Term::PLAIN),
            "branch octo/b@main ✗ 1 failing  ci  test failed  next in 4m\n\
             branch octo/a@main ◌ running                     next in 4m\n\
             branch octo/c@main ✓                             next in 4m\n\
             3 branches watched · ci 1\n"
        );
        let row = json(&all[1]);
        assert_eq!(row["kind"], "branch");
        assert_eq!(row["branch"], "main");
        assert_eq!(row["number"], Value::Null);
        assert_eq!(row["pills"]["ci"], true);
        assert_eq!(row["failing"], json!(["test"]));
        let web = crate::model::web::WebRoots::default();
        let page = cards(&all, &web, now);
        let first = page.split("</li>").next().unwrap();
        assert!(
            first.contains(r#"<span class="pill ci">ci</span>"#),
            "{page}"
        );
        assert!(
            first.contains("test failed on the branch&#39;s head."),
            "{page}"
        );
        assert!(first.contains("/octo/b/tree/main"), "{page}");
    }
}
