//! Forge text made safe inside HTML (the status page, the email's HTML part): controls removed
//! (see [`crate::core::text::strip_controls`]), then `& < > " '` escaped for content and
//! double-quoted attributes.

/// Escapes `s` for HTML content and double-quoted attributes, after removing controls.
pub fn escape(s: &str) -> String {
    let clean = crate::core::text::strip_controls(s);
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
}
