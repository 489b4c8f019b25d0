//! Forge text made safe inside HTML (the status page, the email's HTML part): controls removed
//! (see [`crate::core::text::strip_controls`]), then `& < > " '` escaped for content and
//! double-quoted attributes.

/// Escapes `s` for HTML content and double-quoted attributes, after removing controls.
pub fn escape(s: &str) -> String {
    // Most text has no control and no markup: it needs nothing.
    let clean = if crate::core::text::is_clean(s) {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(crate::core::text::strip_controls(s))
    };
    if !clean
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
        return clean.into_owned();
    }
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_and_controls_do_not_survive() {
        assert_eq!(
            super::escape("<a href=\"x\">'&'</a>\u{1b}[2J\u{202e}"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    /// Every ASCII character between letters: markup escaped, controls but newlines and tabs
    /// removed (ESC starts an escape, asked above), the rest as it is.
    #[test]
    fn each_ascii_character_is_escaped_kept_or_removed() {
        for b in (0u8..0x80).filter(|b| *b != 0x1b) {
            let c = char::from(b);
            let middle = match c {
                '&' => "&amp;".to_owned(),
                '<' => "&lt;".to_owned(),
                '>' => "&gt;".to_owned(),
                '"' => "&quot;".to_owned(),
                '\'' => "&#39;".to_owned(),
                '\n' | '\t' | ' '..='~' => c.to_string(),
                _ => String::new(),
            };
            assert_eq!(
                super::escape(&format!("a{c}b")),
                format!("a{middle}b"),
                "{b:#x}"
            );
        }
        assert_eq!(super::escape("déjà <vu>"), "déjà &lt;vu&gt;");
    }
}
