//! Aligned columns for the terminal: each column as wide as its widest cell (measured in
//! terminal cells, so wide and combining characters line up), two spaces between columns, and
//! at a narrow width the least useful columns dropped first, then what is left clipped, so a
//! row never wraps. Pure: cells and a [`Term`] in, lines out.

use unicode_width::UnicodeWidthStr as _;

use crate::terminal::{Paint, Term};

/// The gap between two columns.
const GAP: usize = 2;
/// A column narrower than this is not worth showing: it is dropped instead of clipped.
const MIN_WIDTH: usize = 8;

/// What a column may give up when the row is too wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Always shown; clipped only as the last resort.
    Always,
    /// Dropped when the row does not fit; lower ranks give way first.
    Drop(u8),
    /// Narrowed (its cells clipped), never below `min` cells, when its rank's turn comes.
    Shrink { rank: u8, min: usize },
    /// The last column: takes what width is left, clipped to it, dropped when under
    /// [`MIN_WIDTH`] are left (before anything else gives way).
    Fill,
}

/// One column: its cells (one per row, each a list of painted pieces joined by `sep`, empty
/// for a blank cell) and what it may give up.
#[derive(Debug, Clone)]
pub struct Column {
    pub keep: Keep,
    pub sep: &'static str,
    pub cells: Vec<Vec<(String, Paint)>>,
}

/// A column of `rows`, each row's cell made by `cell`.
pub fn column<T>(
    rows: &[&T],
    keep: Keep,
    sep: &'static str,
    cell: impl Fn(&T) -> Vec<(String, Paint)>,
) -> Column {
    Column {
        keep,
        sep,
        cells: rows.iter().map(|r| cell(r)).collect(),
    }
}

/// The width a terminal gives `text`.
pub fn width(text: &str) -> usize {
    text.width()
}

/// `text` cut to at most `max` terminal cells, ending in `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    if max > 0 {
        out.truncate(out.trim_end().len());
        out.push('…');
    }
    out
}

impl Column {
    fn cell_width(&self, cell: &[(String, Paint)]) -> usize {
        let pieces: usize = cell.iter().map(|(t, _)| width(t)).sum();
        pieces + width(self.sep) * cell.len().saturating_sub(1)
    }

    fn width(&self) -> usize {
        self.cells
            .iter()
            .map(|c| self.cell_width(c))
            .max()
            .unwrap_or(0)
    }
}

/// Which columns show (by index), and how wide each is, for a terminal `limit` cells wide
/// (`None`: all, each as wide as its widest cell).
fn layout(columns: &[Column], limit: Option<usize>) -> Vec<(usize, usize)> {
    let mut shown: Vec<(usize, usize)> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.width()))
        .filter(|(_, w)| *w > 0)
        .collect();
    let Some(limit) = limit else {
        return shown;
    };
    let total = |s: &[(usize, usize)]| -> usize {
        s.iter().map(|(_, w)| w).sum::<usize>() + GAP * s.len().saturating_sub(1)
    };
    if let Some(at) = shown
        .iter()
        .position(|(i, _)| columns[*i].keep == Keep::Fill)
    {
        let mut fixed = shown.clone();
        fixed.remove(at);
        let room = limit.saturating_sub(total(&fixed) + GAP);
        if room >= MIN_WIDTH {
            shown[at].1 = shown[at].1.min(room);
            return shown;
        }
        shown.remove(at);
    }
    let mut turns: Vec<(u8, usize)> = shown
        .iter()
        .filter_map(|(i, _)| match columns[*i].keep {
            Keep::Drop(rank) | Keep::Shrink { rank, .. } => Some((rank, *i)),
            Keep::Always | Keep::Fill => None,
        })
        .collect();
    turns.sort_unstable();
    for (_, i) in turns {
        let excess = total(&shown).saturating_sub(limit);
        if excess == 0 {
            break;
        }
        let at = shown.iter().position(|(j, _)| *j == i).unwrap_or(0);
        match columns[i].keep {
            Keep::Shrink { min, .. } => shown[at].1 = shown[at].1.saturating_sub(excess).max(min),
            _ => {
                shown.remove(at);
            }
        }
    }
    shown
}

/// The rows, aligned, each at most `term.width` cells wide, painted as `term` says.
pub fn render(columns: &[Column], term: Term) -> Vec<String> {
    let rows = columns.iter().map(|c| c.cells.len()).max().unwrap_or(0);
    let shown = layout(columns, term.width);
    let mut out = Vec::with_capacity(rows);
    for row in 0..rows {
        let mut line = String::new();
        let mut used = 0;
        let mut pending_pad = 0;
        for (n, (i, col_width)) in shown.iter().enumerate() {
            let empty = Vec::new();
            let cell = columns[*i].cells.get(row).unwrap_or(&empty);
            if n > 0 {
                pending_pad += GAP;
            }
            let mut cell_used = 0;
            for (k, (text, paint)) in cell.iter().enumerate() {
                let sep = if k > 0 { width(columns[*i].sep) } else { 0 };
                let room = (*col_width).saturating_sub(cell_used + sep);
                let room = term.width.map_or(room, |w| {
                    room.min(w.saturating_sub(used + pending_pad + sep))
                });
                if room == 0 {
                    break;
                }
                let text = clip(text, room);
                line.push_str(&" ".repeat(pending_pad));
                if k > 0 {
                    line.push_str(columns[*i].sep);
                }
                used += pending_pad + sep + width(&text);
                cell_used += sep + width(&text);
                pending_pad = 0;
                line.push_str(&term.paint(*paint, &text));
            }
            pending_pad += col_width.saturating_sub(cell_used);
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(keep: Keep, cells: &[&str]) -> Column {
        Column {
            keep,
            sep: " ",
            cells: cells
                .iter()
                .map(|c| {
                    if c.is_empty() {
                        Vec::new()
                    } else {
                        vec![((*c).to_owned(), Paint::Dim)]
                    }
                })
                .collect(),
        }
    }

    fn term(width: Option<usize>) -> Term {
        Term {
            tty: false,
            colour: false,
            width,
        }
    }

    fn table() -> Vec<Column> {
        vec![
            col(Keep::Always, &["PR #1 ✓", "PR #22 ✗ 2 failing"]),
            col(Keep::Drop(3), &["octo/app", "g/p"]),
            col(Keep::Always, &["", "ci"]),
            col(Keep::Drop(1), &["next in 4m", "next in 30s"]),
            col(Keep::Fill, &["Fix the parser", "漢字のタイトル and more"]),
        ]
    }

    #[test]
    fn columns_line_up_with_wide_characters_and_blank_cells() {
        let lines = render(&table(), term(None));
        assert_eq!(
            lines,
            [
                "PR #1 ✓             octo/app      next in 4m   Fix the parser",
                "PR #22 ✗ 2 failing  g/p       ci  next in 30s  漢字のタイトル and more",
            ]
        );
    }

    #[test]
    fn a_narrow_terminal_clips_the_title_then_drops_columns_by_rank_never_wrapping() {
        for (limit, want) in [
            (
                60,
                [
                    "PR #1 ✓             octo/app      next in 4m   Fix the pars…",
                    "PR #22 ✗ 2 failing  g/p       ci  next in 30s  漢字のタイト…",
                ],
            ),
            // No room for 8 cells of title: it goes first, then `next`, then the repository.
            (
                50,
                [
                    "PR #1 ✓             octo/app      next in 4m",
                    "PR #22 ✗ 2 failing  g/p       ci  next in 30s",
                ],
            ),
            (
                40,
                [
                    "PR #1 ✓             octo/app",
                    "PR #22 ✗ 2 failing  g/p       ci",
                ],
            ),
            (24, ["PR #1 ✓", "PR #22 ✗ 2 failing  ci"]),
            // What is always kept is clipped as the last resort.
            (12, ["PR #1 ✓", "PR #22 ✗ 2…"]),
        ] {
            let lines = render(&table(), term(Some(limit)));
            assert_eq!(lines, want, "at {limit}");
            assert!(lines.iter().all(|l| width(l) <= limit), "at {limit}");
        }
    }

    #[test]
    fn a_shrinking_column_is_cut_in_its_turn_and_no_further_than_its_minimum() {
        let columns = [
            col(Keep::Always, &["PR #1 ✓", "PR #2 ✓"]),
            col(Keep::Drop(4), &["octo/app", "octo/app"]),
            col(
                Keep::Shrink { rank: 3, min: 10 },
                &["error: the forge refused the token twice", ""],
            ),
            col(Keep::Drop(1), &["next in 4m", "next in 4m"]),
        ];
        // The next tick goes first (rank 1), then the error is cut to fit (rank 3).
        assert_eq!(
            render(&columns, term(Some(40))),
            [
                "PR #1 ✓  octo/app  error: the forge ref…",
                "PR #2 ✓  octo/app"
            ]
        );
        // Cut no further than 10 cells: then the repository goes.
        assert_eq!(
            render(&columns, term(Some(25))),
            ["PR #1 ✓  error: th…", "PR #2 ✓"]
        );
    }

    #[test]
    fn colour_pads_outside_the_paint() {
        let coloured = Term {
            tty: true,
            colour: true,
            width: None,
        };
        let lines = render(
            &[
                col(Keep::Always, &["a", "bbb"]),
                col(Keep::Always, &["x", "y"]),
            ],
            coloured,
        );
        assert_eq!(lines[0], "\u{1b}[2ma\u{1b}[0m    \u{1b}[2mx\u{1b}[0m");
    }

    #[test]
    fn clip_counts_terminal_cells() {
        assert_eq!(clip("漢字漢字", 5), "漢字…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
    }
}
