//! PURE: the mention gate: whether a comment calls on the agent by its handle
//! (`policy.mention: "@fixer"`), counting only what its author wrote anew — never inside a
//! quoted line, a code block or span, or an HTML comment.

/// Whether `body` mentions `handle` (`@fixer`, compared case-insensitively) outside quoted
/// lines, fenced and indented code blocks, inline code spans and HTML comments.
pub(crate) fn mentions(body: &str, handle: &str) -> bool {
    let handle = handle.trim_start_matches('@');
    if handle.is_empty() {
        return false;
    }
    let text = strip_html_comments(body);
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((ch, len)) = fence {
            if fence_of(trimmed).is_some_and(|(c, l)| c == ch && l >= len)
                && trimmed.trim_start_matches(ch).trim().is_empty()
            {
                fence = None;
            }
            continue;
        }
        if indent < 4
            && let Some(open) = fence_of(trimmed)
        {
            fence = Some(open);
            continue;
        }
        if indent >= 4 || trimmed.starts_with('>') {
            continue;
        }
        if names(&strip_code_spans(line), handle) {
            return true;
        }
    }
    false
}

/// A code fence opening a line: its character and length (at least three).
fn fence_of(line: &str) -> Option<(char, usize)> {
    let ch = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = line.chars().take_while(|c| *c == ch).count();
    (len >= 3).then_some((ch, len))
}

/// The text without `<!-- … -->` comments (an unclosed one runs to the end).
fn strip_html_comments(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// One line without its inline code spans (a run of backticks to the same run).
fn strip_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        if let Some(end) = after.find(&closing) {
            rest = &after[end + ticks..];
        } else {
            // An unclosed run is literal text.
            out.push_str(&rest[start..start + ticks]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` holds `@handle` as a mention: not inside a word or an address before it, and
/// not continued by another login character after it.
fn names(text: &str, handle: &str) -> bool {
    let login_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let lower = text.to_lowercase();
    let want = format!("@{}", handle.to_lowercase());
    lower.match_indices(&want).any(|(i, m)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + m.len()..].chars().next();
        !before.is_some_and(|c| login_char(c) || c == '.' || c == '/')
            && !after.is_some_and(|c| login_char(c) || c == '[')
    })
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn a_mention_counts_only_where_the_author_wrote_it() {
        for (body, want) in [
            ("@fixer please rename `x`", true),
            ("please, @Fixer.", true),
            ("(@fixer) thoughts?", true),
            ("@fixers rename", false),
            ("@fixer-bot rename", false),
            ("mail me at a@fixer.com", false),
            ("> @fixer said so\nI disagree", false),
            ("  > quoted @fixer", false),
            ("```\n@fixer in code\n```\nnothing here", false),
            ("~~~sh\n@fixer\n~~~", false),
            ("````\n```\n@fixer\n````", false),
            ("    @fixer indented code", false),
            ("see `@fixer` in a span", false),
            ("``a ` @fixer``", false),
            ("<!-- @fixer -->hidden", false),
            ("<!--\n@fixer\n-->", false),
            ("<!-- unclosed @fixer", false),
            ("```\ncode\n```\n@fixer after the block", true),
            ("<!-- x -->\n@fixer after the comment", true),
            ("", false),
        ] {
            assert_eq!(mentions(body, "@fixer"), want, "{body:?}");
        }
        assert!(
            mentions("hey @fixer", "fixer"),
            "the @ is optional in the handle"
        );
        assert!(
            !mentions("@ anything", "@"),
            "an empty handle mentions nothing"
        );
    }
}
