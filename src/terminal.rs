//! Whether output goes to a person, decided once at the edge: colour only on a terminal (or
//! with `CLICOLOR_FORCE`), never with `NO_COLOR`; the width to cut lines to (`COLUMNS`, else the
//! terminal's). Everything that renders takes a [`Term`], so tests choose colour and width
//! without a terminal.

use std::io::IsTerminal as _;

/// How to render for the reader at hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// Standard output is a terminal (progress lines are drawn only then).
    pub tty: bool,
    pub colour: bool,
    /// Cut lines to this many characters; `None` leaves them whole (a pipe or a file).
    pub width: Option<usize>,
}

/// The colours in use, each a meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Bad,
    Good,
    Busy,
    Warn,
    Dim,
    Bold,
    /// No colour: the text as it is.
    Plain,
}

impl Paint {
    fn sgr(self) -> &'static str {
        match self {
            Paint::Bad => "1;31",
            Paint::Good => "32",
            Paint::Busy => "36",
            Paint::Warn => "33",
            Paint::Dim => "2",
            Paint::Bold => "1",
            Paint::Plain => "0",
        }
    }
}

impl Term {
    /// Plain text, whole lines: what a pipe gets.
    pub const PLAIN: Term = Term {
        tty: false,
        colour: false,
        width: None,
    };

    /// The decision for this process's standard output and environment.
    pub fn detect() -> Term {
        let stdout = std::io::stdout();
        let tty = stdout.is_terminal();
        let measured = if tty {
            rustix::termios::tcgetwinsize(&stdout)
                .ok()
                .map(|w| usize::from(w.ws_col))
                .filter(|w| *w > 0)
        } else {
            None
        };
        Term::decide(tty, |k| std::env::var(k).ok(), measured)
    }

    /// The decision as a pure function of its inputs.
    pub fn decide(
        tty: bool,
        var: impl Fn(&str) -> Option<String>,
        measured: Option<usize>,
    ) -> Term {
        let set = |k: &str| var(k).is_some_and(|v| !v.is_empty() && v != "0");
        let colour = var("NO_COLOR").is_none_or(|v| v.is_empty()) && (tty || set("CLICOLOR_FORCE"));
        let columns = var("COLUMNS").and_then(|c| c.trim().parse::<usize>().ok());
        let width = columns
            .filter(|c| *c > 0)
            .or(measured)
            .filter(|_| tty || columns.is_some());
        Term { tty, colour, width }
    }

    /// `text` in `paint` when colour is on.
    pub fn paint(&self, paint: Paint, text: &str) -> String {
        if self.colour && !text.is_empty() && paint != Paint::Plain {
            format!("\u{1b}[{}m{text}\u{1b}[0m", paint.sgr())
        } else {
            text.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn colour_only_on_a_terminal_and_never_with_no_color() {
        assert!(Term::decide(true, env(&[]), Some(90)).colour);
        assert!(!Term::decide(false, env(&[]), None).colour);
        assert!(!Term::decide(true, env(&[("NO_COLOR", "1")]), None).colour);
        assert!(Term::decide(false, env(&[("CLICOLOR_FORCE", "1")]), None).colour);
        assert!(
            !Term::decide(
                false,
                env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "x")]),
                None
            )
            .colour
        );
        assert!(!Term::decide(false, env(&[("CLICOLOR_FORCE", "0")]), None).colour);
    }

    #[test]
    fn width_comes_from_columns_then_the_terminal() {
        assert_eq!(Term::decide(true, env(&[]), Some(90)).width, Some(90));
        assert_eq!(
            Term::decide(true, env(&[("COLUMNS", "60")]), Some(90)).width,
            Some(60)
        );
        assert_eq!(Term::decide(false, env(&[]), None).width, None);
        assert_eq!(
            Term::decide(false, env(&[("COLUMNS", "70")]), None).width,
            Some(70)
        );
    }

    #[test]
    fn clipping_keeps_short_text_and_marks_a_cut() {
        assert_eq!(crate::core::text::clip("abc", 5), "abc");
        assert_eq!(crate::core::text::clip("abcdef", 4), "abc…");
        let t = Term {
            colour: true,
            ..Term::PLAIN
        };
        assert_eq!(t.paint(Paint::Bad, "ci"), "\u{1b}[1;31mci\u{1b}[0m");
        assert_eq!(Term::PLAIN.paint(Paint::Bad, "ci"), "ci");
    }
}
