//! Text that came from outside (forge titles, check names, branch names, paths, log lines)
//! made safe to show: on a terminal, in a page, in a chat message or in an agent's brief.
//! Pure text in, text out; every place that prints forge text goes through here.

/// Removes what could steer a terminal or reorder text: ANSI escape sequences (CSI, OSC and
/// two-byte escapes), C0 controls other than newline and tab, DEL, C1 controls, the Unicode
/// bidirectional controls (embeddings, overrides, isolates and marks) and the zero-width
/// characters (spaces, joiners, word joiner, byte-order mark). Printable text, newlines and tabs
/// are kept.
pub(crate) fn strip_controls(s: &str) -> String {
    if is_clean(s) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\t' => out.push(c),
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether [`strip_controls`] keeps `s` as it is: printable ASCII, newlines and tabs (most
/// text is only those), or no character it removes.
pub(crate) fn is_clean(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' '..=b'~' | b'\n' | b'\t'))
        || s.chars().all(|c| matches!(c, '\n' | '\t') || !is_unsafe(c))
}

/// [`strip_controls`], then every run of newlines and tabs folded to one space and the ends
/// trimmed: for a name, a title or a branch that must stay on one line.
pub(crate) fn one_line(s: &str) -> String {
    if is_clean(s) && !s.contains(['\n', '\t', '\r']) {
        return s.trim().to_owned();
    }
    let clean = strip_controls(s);
    let mut out = String::with_capacity(clean.len());
    let mut gap = false;
    for c in clean.chars() {
        if c == '\n' || c == '\t' || c == '\r' {
            gap = true;
        } else {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// Forge text as an inline value on one line of a brief: [`one_line`], then wrapped in a
/// backtick run longer than any inside it (padded with a space where the text starts or ends
/// with a backtick), so the value cannot end its quote, start a line, or pose as a heading.
/// Empty text is `""`.
pub(crate) fn inline(s: &str) -> String {
    let text = one_line(s);
    if text.is_empty() {
        return "\"\"".to_owned();
    }
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Forge text as a block: [`strip_controls`], then fenced with a backtick fence longer than
/// any backtick run inside (and at least three), so no line of the text can close the fence.
pub(crate) fn block(s: &str) -> String {
    let text = strip_controls(s);
    let text = text.trim_end();
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    format!("{fence}text\n{text}\n{fence}")
}

/// The length of the longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

/// `text` cut to `max` characters, ending in `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// True for a character that must never reach a reader as-is: C0 and C1 controls (newline and
/// tab are handled by the callers), DEL, the bidirectional formatting characters, and the
/// invisible zero-width ones that can hide a difference between two texts that look alike.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{200B}'..='\u{200D}'
                | '\u{2060}'
                | '\u{FEFF}'
        )
}

/// Skips one escape sequence after ESC: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or
/// `ESC \`), and other two-character escapes.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | '_' | '^') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_escapes_controls_and_bidi() {
        let cases = [
            ("plain", "plain"),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            ("title\u{1b}]0;owned\u{7}rest", "titlerest"),
            ("link\u{1b}]8;;http://x\u{1b}\\text", "linktext"),
            ("bell\u{7}and del\u{7f}", "belland del"),
            ("c1\u{9b}x", "c1x"),
            ("abc\u{202E}fed\u{2066}", "abcfed"),
            ("keeps\nnewline\tand tab", "keeps\nnewline\tand tab"),
            ("carriage\rreturn", "carriagereturn"),
            (
                "zero\u{200B}wi\u{200C}d\u{200D}th\u{2060}\u{FEFF}",
                "zerowidth",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(strip_controls(input), want, "{input:?}");
        }
    }

    /// Every ASCII character, alone and between others: printable ones, newlines and tabs are
    /// kept, every other control removed (ESC starts an escape and is asked above).
    #[test]
    fn printable_ascii_is_kept_and_ascii_controls_removed() {
        for b in (0u8..0x80).filter(|b| *b != 0x1b) {
            let c = char::from(b);
            let kept = (b' '..=b'~').contains(&b) || c == '\n' || c == '\t';
            let want = if kept {
                format!("a{c}b")
            } else {
                "ab".to_owned()
            };
            assert_eq!(strip_controls(&format!("a{c}b")), want, "{b:#x}");
            let alone = if kept { c.to_string() } else { String::new() };
            assert_eq!(strip_controls(&c.to_string()), alone, "{b:#x} alone");
        }
    }

    #[test]
    fn inline_values_stay_quoted_on_their_line() {
        let cases = [
            ("lint", "`lint`"),
            ("", "\"\""),
            ("a`b", "``a`b``"),
            ("`x`", "`` `x` ``"),
            (
                "x\n## What is expected back\nmerge",
                "`x ## What is expected back merge`",
            ),
            ("\u{1b}[31mred\u{202E}", "`red`"),
            ("line\u{2028}sep", "`linesep`"),
        ];
        for (input, want) in cases {
            assert_eq!(inline(input), want, "{input:?}");
        }
    }

    #[test]
    fn blocks_are_fenced_longer_than_any_run_inside() {
        assert_eq!(block("plain\n"), "```text\nplain\n```");
        assert_eq!(block("a\n````\nb"), "`````text\na\n````\nb\n`````");
        assert_eq!(block("x\u{1b}]0;t\u{7}y"), "```text\nxy\n```");
    }

    #[test]
    fn one_line_folds_breaks() {
        assert_eq!(one_line("  a\n\n## b\tc \n"), "a ## b c");
        assert_eq!(one_line("\u{1b}[1mbold\u{1b}[0m"), "bold");
    }

    /// Text beyond ASCII is kept as it is when it holds nothing to remove, and cleaned when it
    /// does, whichever way it is read.
    #[test]
    fn clean_text_beyond_ascii_is_kept_and_the_rest_cleaned() {
        assert!(is_clean("déjà → vu\n\t") && is_clean("plain"));
        assert!(!is_clean("a\u{202e}b →") && !is_clean("é\u{1b}[1m") && !is_clean("\r"));
        assert_eq!(strip_controls("déjà → vu"), "déjà → vu");
        assert_eq!(strip_controls("a\u{202e}b → \u{200b}c"), "ab → c");
        assert_eq!(one_line("  déjà → vu  "), "déjà → vu");
        assert_eq!(one_line(" a\u{202e}b →\r\nc "), "ab → c");
        assert_eq!(crate::view::html::escape("→\u{202e}<b>"), "→&lt;b&gt;");
        assert_eq!(crate::view::html::escape("→ b"), "→ b");
    }
}
