//! Snapshots of `status`: every chip, pill and why, plain and in colour, and the order by need.

use crate::model::watch::{Ci, Merge};
use chrono::Duration;

use super::*;
use crate::core::decide::tests::{t0, watch};
use crate::model::watch::{MergeVia, Why};

fn ticked(number: u64, title: &str) -> Watch {
    let mut w = watch();
    w.pr.number = number;
    w.status.title = Some(title.into());
    w.last_tick_at = Some(t0());
    w.next_tick_at = Some(t0() + Duration::minutes(4));
    w.status.memory.picture.merge_state = "CLEAN".into();
    w.status.memory.picture.total = 7;
    w
}

/// One watch per chip, pill and why.
fn gallery() -> Vec<Watch> {
    let mut v = Vec::new();
    v.push(ticked(1, "All green"));
    let mut w = ticked(2, "Lint is unhappy");
    w.status.memory.picture.failed = vec![("lint".into(), None), ("test".into(), None)];
    w.status.pills.ci = Ci::Lit;
    w.status.why = Some(Why::NotAgentCommit);
    v.push(w);
    let mut w = ticked(3, "Still building");
    w.status.memory.picture.pending = vec!["a".into(), "b".into(), "c".into(), "d".into()];
    w.next_tick_at = Some(t0() + Duration::seconds(30));
    v.push(w);
    let mut w = ticked(4, "Conflicting change");
    w.status.pills.cnf = true;
    v.push(w);
    let mut w = ticked(5, "Ready to go");
    w.status.merge = Merge::Armed {
        at: t0(),
        via: Some(MergeVia::AutoMerge),
    };
    v.push(w);
    let mut w = ticked(6, "Done");
    w.status.state = PrState::Merged;
    v.push(w);
    let mut w = ticked(7, "Abandoned");
    w.status.state = PrState::Closed;
    v.push(w);
    let mut w = ticked(8, "Agent on it");
    w.status.memory.picture.failed = vec![("test".into(), None)];
    w.status.pills.ci = Ci::Fixing;
    w.status.why = Some(Why::FixSent);
    w.status.attempts = 1;
    v.push(w);
    let mut w = ticked(9, "Reviewers spoke");
    w.status.pills.cmt = 3;
    v.push(w);
    let mut w = ticked(10, "Token trouble");
    w.last_error = Some("not authorized".into());
    v.push(w);
    let mut w = ticked(11, "On hold");
    w.paused = true;
    v.push(w);
    let mut w = ticked(57, "A GitLab change");
    w.pr = "g/p!57".parse().unwrap();
    w.status.title = Some("A GitLab change".into());
    v.push(w);
    v
}

#[test]
fn status_plain_snapshot() {
    let want = "\
PR #10 ✓                  octo/app         error: not authorized          next in 4m   Token trouble
PR #2 ✗ 2 failing         octo/app  ci     yours: not the agent's commit  next in 4m   Lint is unhappy
PR #4 ⚠ conflicts         octo/app  cnf                                   next in 4m   Conflicting change
PR #9 ✓                   octo/app  cmt 3                                 next in 4m   Reviewers spoke
PR #8 ✗ 1 failing         octo/app  ci…    agent is fixing it             next in 4m   Agent on it
MR !57 ✓                  g/p                                             next in 4m   A GitLab change
PR #1 ✓                   octo/app                                        next in 4m   All green
PR #3 ◌ 3/7 running       octo/app                                        next in 30s  Still building
PR #5 merging when ready  octo/app                                        next in 4m   Ready to go
PR #11 ✓                  octo/app                                        paused       On hold
PR #6 merged              octo/app                                                     Done
PR #7 closed              octo/app                                                     Abandoned
12 watched: 10 open, 1 merged, 1 closed · ci 1 · ci… 1 · cnf 1 · cmt 1 · 1 error · 1 paused
";
    assert_eq!(render(&gallery(), t0(), Term::PLAIN), want);
}

#[test]
fn status_colour_snapshot() {
    let term = Term {
        tty: true,
        colour: true,
        width: None,
    };
    let v = gallery();
    let lines: Vec<String> = v.iter().map(|w| line(w, t0(), term)).collect();
    let e = "\u{1b}[";
    assert_eq!(
        lines[1],
        format!(
            "{e}1;31mPR #2 ✗ 2 failing{e}0m  {e}2mocto/app{e}0m  {e}1;31mci{e}0m  \
             {e}1myours: not the agent's commit{e}0m  {e}2mnext in 4m{e}0m  Lint is unhappy"
        )
    );
    assert!(
        lines[0].starts_with(&format!("{e}32mPR #1 ✓{e}0m")),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].starts_with(&format!("{e}36mPR #3 ◌ 3/7 running")),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(&format!("{e}1;31mcnf{e}0m")),
        "{}",
        lines[3]
    );
    assert!(
        lines[6].starts_with(&format!("{e}2mPR #7 closed")),
        "{}",
        lines[6]
    );
    assert!(
        lines[7].contains(&format!("{e}36mci…{e}0m")),
        "{}",
        lines[7]
    );
    assert!(
        lines[8].contains(&format!("{e}33mcmt 3{e}0m")),
        "{}",
        lines[8]
    );
    assert!(
        lines[9].contains(&format!("{e}1;31merror: not authorized")),
        "{}",
        lines[9]
    );
    assert!(
        lines[10].contains(&format!("{e}33mpaused{e}0m")),
        "{}",
        lines[10]
    );
}

#[test]
fn every_why_reads_in_words() {
    for (why, want) in [
        (Why::NotAgentCommit, "yours: not the agent's commit"),
        (Why::AutoFixOff, "yours: auto-fix is off"),
        (Why::MaxAttempts, "yours: auto-fix gave up after 3"),
        (Why::NoNewCommit, "yours: the fix pushed nothing"),
        (Why::SameFailure, "yours: same failure after a fix"),
        (Why::InfraRerun, "re-ran for runner reasons"),
        (Why::InfraAgain, "yours: runner failed again"),
        (Why::FixSent, "agent is fixing it"),
        (Why::FixAsked, "agent is fixing it (asked)"),
    ] {
        let mut w = ticked(1, "t");
        w.status.why = Some(why);
        w.status.attempts = 3;
        assert_eq!(
            line(&w, t0(), Term::PLAIN),
            format!("PR #1 ✓  octo/app  {want}  next in 4m  t")
        );
    }
}

#[test]
fn the_title_is_cut_to_the_width_and_cleaned() {
    let mut w = ticked(1, "A very long title that goes on and on and on");
    let narrow = Term {
        width: Some(40),
        ..Term::PLAIN
    };
    let l = line(&w, t0(), narrow);
    assert_eq!(l, "PR #1 ✓  octo/app  next in 4m  A very l…");
    assert_eq!(l.chars().count(), 40);
    w.status.title = Some("evil\u{1b}[2J title\u{202e}".into());
    assert_eq!(
        line(&w, t0(), Term::PLAIN),
        "PR #1 ✓  octo/app  next in 4m  evil title"
    );
    let tiny = Term {
        width: Some(25),
        ..Term::PLAIN
    };
    // No room for the title, nor for the next tick: never a wrapped row.
    assert_eq!(line(&w, t0(), tiny), "PR #1 ✓  octo/app");
}

#[test]
fn status_json_snapshot_keeps_the_contract_shape() {
    let v = gallery();
    let failing = crate::commands::output::status_json(&v[1]);
    assert_eq!(
        failing,
        serde_json::json!({
            "kind": "pr", "pr": "https://github.com/octo/app/pull/2", "forge": "github", "repo": "octo/app",
            "number": 2, "state": "open", "head_sha": null,
            "pills": {"ci": true, "ci_fixing": false, "cnf": false, "cmt": 0},
            "why": "not_agent_commit", "attempts": 0, "merge_armed": false, "merge_via": null,
            "next_tick_at": "2026-11-29T12:04:00Z", "last_tick_at": "2026-11-29T12:00:00Z",
            "last_error": null, "title": "Lint is unhappy", "job": null, "agent": null, "paused": false, "paused_reason": null,
            "queue": null, "deferred": null, "auto_fix_override": null, "merge_method": null,
            "trusted_by": null
        })
    );
    let all = crate::commands::output::status_array(&v);
    let field = |k: &str| -> Vec<serde_json::Value> {
        all.as_array()
            .unwrap()
            .iter()
            .map(|o| o[k].clone())
            .collect()
    };
    assert_eq!(
        field("state"),
        [
            "open", "open", "open", "open", "open", "merged", "closed", "open", "open", "open",
            "open", "open"
        ]
        .map(serde_json::Value::from)
    );
    assert_eq!(field("why")[7], "fix_sent");
    assert_eq!(field("pills")[7]["ci_fixing"], true);
    assert_eq!(field("pills")[8]["cmt"], 3);
    assert_eq!(field("pills")[3]["cnf"], true);
    assert_eq!(field("merge_via")[4], "auto_merge");
    assert_eq!(
        field("next_tick_at")[5],
        serde_json::Value::Null,
        "merged: no next tick"
    );
    assert_eq!(field("last_error")[9], "not authorized");
    assert_eq!(field("paused")[10], true);
    for w in Why::ALL {
        let mut x = ticked(1, "t");
        x.status.why = Some(w);
        assert_eq!(crate::commands::output::status_json(&x)["why"], w.as_str());
    }
}

/// Every merge and ci state, as `status --json` prints it: the gallery, a PR merged by
/// pr-monitor itself, one armed whose way is not chosen yet, and one armed then closed.
fn every_state() -> Vec<Watch> {
    let mut v = gallery();
    let mut w = ticked(12, "Merged by pr-monitor");
    w.status.state = PrState::Merged;
    w.status.merge = Merge::Merged {
        via: MergeVia::SelfMerge,
    };
    v.push(w);
    let mut w = ticked(13, "Armed, way not chosen");
    w.status.merge = Merge::Armed {
        at: t0() - Duration::minutes(5),
        via: None,
    };
    v.push(w);
    let mut w = ticked(14, "Reopened after a merge");
    w.status.merge = Merge::Merged {
        via: MergeVia::AutoMerge,
    };
    v.push(w);
    v
}

#[test]
fn status_json_of_every_state_is_pinned_byte_for_byte() {
    let all = crate::commands::output::status_array(&every_state());
    let golden = include_str!("status_array.golden.jsonl");
    let printed: Vec<String> = all
        .as_array()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(printed.join("\n") + "\n", golden);
    assert_eq!(
        all.to_string(),
        format!("[{}]", printed.join(",")),
        "the array is its objects"
    );
}
