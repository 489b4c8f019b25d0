//! `status` as a person reads it: one line per PR (the chip, the repository, the pills, the why
//! in words, the next tick as a relative time, the title cut to the width), sorted by need
//! (errors and lit pills first), then a summary line of counts. Pure: watches, the clock and a
//! [`Term`] in, text out.

use crate::core::text::one_line;
use crate::model::standing::{Standing, Tally};
use crate::model::watch::Ci;
use crate::model::watch::Watch;
use crate::model::{Instant, PrState};
use crate::terminal::{Paint, Term};
use crate::view::chip::{Chip, Tone};
use crate::view::columns::{Column, Keep};
use crate::view::when::relative;

/// How much a PR needs its owner: lower first (see [`Standing::need`]).
pub fn need(w: &Watch) -> u8 {
    Standing::of(w).need()
}

/// The place of a PR in the order a person should read them: need, then repository and
/// number.
pub fn place(need: u8, repo: &str, number: u64) -> (u8, &str, u64) {
    (need, repo, number)
}

/// The watches in the order a person should read them (see [`place`]).
pub fn by_need(watches: &[Watch]) -> Vec<&Watch> {
    let mut v: Vec<&Watch> = watches.iter().collect();
    v.sort_by_cached_key(|w| place(need(w), &w.pr.repo, w.pr.number));
    v
}

/// The lit pills, each with its colour: `ci`, `ci…`, `cnf`, `cmt 3`.
pub fn pills(w: &Watch) -> Vec<(String, Paint)> {
    let p = &w.status.pills;
    let mut out = Vec::new();
    if w.status.state != PrState::Open {
        return out;
    }
    match p.ci {
        Ci::Lit => out.push(("ci".to_owned(), Paint::Bad)),
        Ci::Fixing => out.push(("ci…".to_owned(), Paint::Busy)),
        Ci::Off => {}
    }
    if p.cnf {
        out.push(("cnf".to_owned(), Paint::Bad));
    }
    if p.cmt > 0 {
        out.push((format!("cmt {}", p.cmt), Paint::Warn));
    }
    out
}

/// A PR's own auto-fix override, as `status` and the page name it.
pub fn auto_fix_words(own: bool) -> &'static str {
    if own {
        "auto-fix on (this PR)"
    } else {
        "auto-fix off (this PR)"
    }
}

fn tone_paint(tone: Tone) -> Paint {
    match tone {
        Tone::Good => Paint::Good,
        Tone::Bad => Paint::Bad,
        Tone::Busy => Paint::Busy,
        Tone::Quiet => Paint::Dim,
    }
}

/// The columns of `status`, one row per watch, and what each gives up on a narrow terminal:
/// the title is clipped, then dropped; then the next tick (or `paused`), the PR's own auto-fix
/// override, the why and the error (clipped to 24 cells), and the repository go, in that
/// order. The chip and the pills always show.
fn columns(watches: &[&Watch], now: Instant) -> Vec<Column> {
    let column = |keep, sep, cell: &dyn Fn(&Watch) -> Vec<(String, Paint)>| {
        crate::view::columns::column(watches, keep, sep, cell)
    };
    let open = |w: &Watch| w.status.state == PrState::Open;
    vec![
        column(Keep::Always, " ", &|w| {
            let chip = Chip::of(w);
            vec![(
                format!("{} {}", w.pr.short(), chip.text()),
                tone_paint(chip.tone()),
            )]
        }),
        column(Keep::Drop(4), " ", &|w| {
            vec![(w.pr.repo.clone(), Paint::Dim)]
        }),
        column(Keep::Always, " ", &pills),
        column(Keep::Shrink { rank: 3, min: 24 }, " · ", &|w| {
            let mut note = Vec::new();
            if let Some(e) = &w.last_error {
                note.push((format!("error: {}", one_line(e)), Paint::Bad));
            }
            if let Some(why) = w.status.why.filter(|_| open(w)) {
                note.push((why.words(w.status.attempts), Paint::Bold));
            }
            note
        }),
        column(Keep::Drop(2), " ", &|w| {
            w.auto_fix
                .filter(|_| open(w))
                .map(|own| (auto_fix_words(own).to_owned(), Paint::Warn))
                .into_iter()
                .collect()
        }),
        column(Keep::Drop(1), " ", &|w| {
            if w.paused {
                vec![("paused".to_owned(), Paint::Warn)]
            } else if let Some(next) = w.next_tick_at.filter(|_| open(w)) {
                vec![(format!("next {}", relative(next, now)), Paint::Dim)]
            } else {
                Vec::new()
            }
        }),
        column(Keep::Fill, " ", &|w| {
            let title = one_line(w.status.title.as_deref().unwrap_or(""));
            if title.is_empty() {
                Vec::new()
            } else {
                vec![(title, Paint::Plain)]
            }
        }),
    ]
}

/// One line of `status`, alone (a run's line for a PR).
pub fn line(w: &Watch, now: Instant, term: Term) -> String {
    crate::view::columns::render(&columns(&[w], now), term)
        .pop()
        .unwrap_or_default()
}

/// `5 watched: 3 open, 1 merged, 1 closed · ci 1 · cmt 1 · 1 error · 1 paused`.
pub fn summary(t: &Tally) -> String {
    let mut states = Vec::new();
    for state in [PrState::Open, PrState::Merged, PrState::Closed] {
        let n = t.in_state(state);
        if n > 0 {
            states.push(format!("{n} {}", state.as_str()));
        }
    }
    let mut out = format!("{} watched: {}", t.watched, states.join(", "));
    for (name, n) in [
        ("ci", t.ci),
        ("ci…", t.ci_fixing),
        ("cnf", t.cnf),
        ("cmt", t.cmt),
    ] {
        if n > 0 {
            out.push_str(&format!(" · {name} {n}"));
        }
    }
    if t.errors > 0 {
        out.push_str(&format!(
            " · {} error{}",
            t.errors,
            if t.errors == 1 { "" } else { "s" }
        ));
    }
    if t.paused > 0 {
        out.push_str(&format!(" · {} paused", t.paused));
    }
    out
}

/// The whole of `status`: the lines by need, in aligned columns, then the summary.
pub fn render(watches: &[Watch], now: Instant, term: Term) -> String {
    let mut out = String::new();
    for line in crate::view::columns::render(&columns(&by_need(watches), now), term) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&summary(&Tally::of(watches.iter().map(Standing::of))));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
