//! `status` as a person reads it: one line per PR (the chip, the repository, the pills, the why
//! in words, the next tick as a relative time, the title cut to the width), sorted by need
//! (errors and lit pills first), then a summary line of counts. Pure: watches, the clock and a
//! [`Term`] in, text out.

use crate::core::text::clip;
use crate::core::text::one_line;
use crate::model::watch::Ci;
use crate::model::watch::Watch;
use crate::model::{Instant, PrState};
use crate::terminal::{Paint, Term};
use crate::view::chip::{Chip, Tone};
use crate::view::when::relative;

/// How much a PR needs its owner: lower first.
pub fn need(w: &Watch) -> u8 {
    let s = &w.status;
    let p = &s.pills;
    match s.state {
        PrState::Merged | PrState::Closed => 6,
        PrState::Open if w.last_error.is_some() => 0,
        PrState::Open if w.paused => 5,
        PrState::Open if p.ci == Ci::Lit || p.cnf => 1,
        PrState::Open if p.cmt > 0 => 2,
        PrState::Open if p.ci == Ci::Fixing => 3,
        PrState::Open => 4,
    }
}

/// The watches in the order a person should read them: need, then repository and number.
pub fn by_need(watches: &[Watch]) -> Vec<&Watch> {
    let mut v: Vec<&Watch> = watches.iter().collect();
    v.sort_by(|a, b| (need(a), &a.pr.repo, a.pr.number).cmp(&(need(b), &b.pr.repo, b.pr.number)));
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

/// One line of `status`.
pub fn line(w: &Watch, now: Instant, term: Term) -> String {
    let chip = Chip::of(w);
    let mut parts: Vec<(String, Paint)> = vec![
        (
            format!("{} {}", w.pr.short(), chip.text()),
            tone_paint(chip.tone()),
        ),
        (w.pr.repo.clone(), Paint::Dim),
    ];
    let lit = pills(w);
    if !lit.is_empty() {
        parts.push((
            lit.iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            Paint::Bold,
        ));
    }
    if let Some(e) = &w.last_error {
        parts.push((format!("error: {}", one_line(e)), Paint::Bad));
    }
    if let Some(why) = w.status.why.filter(|_| w.status.state == PrState::Open) {
        parts.push((why.words(w.status.attempts), Paint::Bold));
    }
    if let Some(own) = w.auto_fix.filter(|_| w.status.state == PrState::Open) {
        parts.push((auto_fix_words(own).to_owned(), Paint::Warn));
    }
    if w.paused {
        parts.push(("paused".to_owned(), Paint::Warn));
    } else if w.status.state == PrState::Open
        && let Some(next) = w.next_tick_at
    {
        parts.push((format!("next {}", relative(next, now)), Paint::Dim));
    }
    let title = one_line(w.status.title.as_deref().unwrap_or(""));
    let used: usize = parts.iter().map(|(t, _)| t.chars().count() + 2).sum();
    let title = match term.width {
        Some(width) if width.saturating_sub(used) < 8 => String::new(),
        Some(width) => clip(&title, width - used),
        None => title,
    };
    let mut out = Vec::new();
    for (i, (text, paint)) in parts.iter().enumerate() {
        if i == 2 && !lit.is_empty() {
            // Each pill in its own colour.
            let painted: Vec<String> = lit.iter().map(|(t, p)| term.paint(*p, t)).collect();
            out.push(painted.join(" "));
        } else {
            out.push(term.paint(*paint, text));
        }
    }
    if !title.is_empty() {
        out.push(title);
    }
    out.join("  ")
}

/// `5 watched: 3 open, 1 merged, 1 closed · ci 1 · cmt 1 · 1 error · 1 paused`.
pub fn summary(watches: &[Watch]) -> String {
    let count = |f: &dyn Fn(&Watch) -> bool| watches.iter().filter(|w| f(w)).count();
    let open = |w: &Watch| w.status.state == PrState::Open;
    let mut states = Vec::new();
    for state in [PrState::Open, PrState::Merged, PrState::Closed] {
        let n = count(&|w| w.status.state == state);
        if n > 0 {
            states.push(format!("{n} {}", state.as_str()));
        }
    }
    let mut out = format!("{} watched: {}", watches.len(), states.join(", "));
    for (name, n) in [
        ("ci", count(&|w| open(w) && w.status.pills.ci == Ci::Lit)),
        (
            "ci…",
            count(&|w| open(w) && w.status.pills.ci == Ci::Fixing),
        ),
        ("cnf", count(&|w| open(w) && w.status.pills.cnf)),
        ("cmt", count(&|w| open(w) && w.status.pills.cmt > 0)),
    ] {
        if n > 0 {
            out.push_str(&format!(" · {name} {n}"));
        }
    }
    let errors = count(&|w| open(w) && w.last_error.is_some());
    if errors > 0 {
        out.push_str(&format!(
            " · {errors} error{}",
            if errors == 1 { "" } else { "s" }
        ));
    }
    let paused = count(&|w| w.paused);
    if paused > 0 {
        out.push_str(&format!(" · {paused} paused"));
    }
    out
}

/// The whole of `status`: the lines by need, then the summary.
pub fn render(watches: &[Watch], now: Instant, term: Term) -> String {
    let mut out = String::new();
    for w in by_need(watches) {
        out.push_str(&line(w, now, term));
        out.push('\n');
    }
    out.push_str(&summary(watches));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
