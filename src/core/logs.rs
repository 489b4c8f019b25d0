//! Job logs made fit to hand to an agent or a person: the last lines, ANSI codes and
//! timestamps stripped, secrets masked, capped in bytes. Pure text in, text out: the secrets
//! the process holds come in as a [`Masker`] the shell passes, never read from a global.

/// Masks the secrets the process holds in a text (the shell passes `secrets::mask`).
pub(crate) type Masker = fn(&str) -> String;

/// The tail of a job log: at most `lines` lines and `max_bytes` bytes, cleaned and masked.
/// The whole text goes through the masker before the lines are cut, so a private-key block is
/// masked whole and no tail starts inside one.
pub(crate) fn tail(raw: &str, lines: usize, max_bytes: usize, held: Masker) -> String {
    let masks = declared_masks(raw);
    let raw = &held(raw);
    let cleaned: Vec<String> = raw
        .lines()
        .filter(|l| !l.contains("::add-mask::"))
        .map(|l| {
            held(&mask(
                &strip_timestamp(&crate::core::text::strip_controls(l)),
                &masks,
            ))
        })
        .collect();
    let start = cleaned.len().saturating_sub(lines);
    let mut out = cleaned[start..].join("\n");
    if out.len() > max_bytes {
        let mut cut = out.len() - max_bytes;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        out = out[cut..].to_owned();
    }
    out
}

/// The text of a document read from somewhere in its middle (the last part of a long log):
/// its first line, which may be a part of one, dropped; and when a private-key block's end
/// comes before any beginning (the read began inside the block), everything through that end
/// dropped too, so no key material that cannot be recognised as such is kept.
pub(crate) fn from_middle(text: &str) -> &str {
    let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
    let end = rest.find("-----END ").filter(|&end| {
        rest[end..]
            .lines()
            .next()
            .is_some_and(|l| l.trim_end().ends_with("PRIVATE KEY-----"))
    });
    match end {
        Some(end) if !rest[..end].contains("-----BEGIN ") => {
            let after = &rest[end..];
            after.split_once('\n').map_or("", |(_, rest)| rest)
        }
        _ => rest,
    }
}

/// Feedback written by people (review bodies, comments) made fit for an agent: every line
/// masked like a log line, and at most `max_bytes` kept from the start, with a note of what was
/// cut.
pub(crate) fn feedback_body(raw: &str, max_bytes: usize, held: Masker) -> String {
    let masked: Vec<String> = held(raw).lines().map(|l| held(&mask(l, &[]))).collect();
    let text = masked.join("\n");
    if text.len() <= max_bytes {
        return text;
    }
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n… ({} more bytes not shown)",
        &text[..cut],
        text.len() - cut
    )
}

/// Values the log asked to hide with `::add-mask::VALUE`.
fn declared_masks(raw: &str) -> Vec<String> {
    raw.lines()
        .filter_map(|l| {
            l.split_once("::add-mask::")
                .map(|(_, v)| v.trim().to_owned())
        })
        .filter(|v| v.len() >= 3)
        .collect()
}

/// Removes a leading ISO-8601 timestamp, as GitHub Actions prefixes every log line.
pub(crate) fn strip_timestamp(line: &str) -> String {
    let b = line.as_bytes();
    let looks_like_ts = b.len() > 20
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':';
    if looks_like_ts && let Some(space) = line.find(' ') {
        return line[space + 1..].to_owned();
    }
    line.to_owned()
}

/// Token prefixes that mark a secret whatever the context.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "sk-",
];

/// Masks declared secrets, well-known token shapes, and `key=value` pairs whose key names a
/// secret.
pub(crate) fn mask(line: &str, declared: &[String]) -> String {
    let mut out = line.to_owned();
    for secret in declared {
        out = out.replace(secret.as_str(), "***");
    }
    let words: Vec<String> = out
        .split(|c: char| c.is_whitespace() || "\"'`,;()[]{}<>".contains(c))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    for word in words {
        let value = word
            .rsplit_once(['=', ':'])
            .map_or(word.as_str(), |(_, v)| v);
        let key = word
            .rsplit_once(['=', ':'])
            .map(|(k, _)| k.to_ascii_lowercase());
        let prefixed = TOKEN_PREFIXES.iter().any(|p| value.starts_with(p)) && value.len() >= 12;
        let secret_key = key.is_some_and(|k| {
            [
                "token",
                "password",
                "passwd",
                "secret",
                "api_key",
                "apikey",
                "authorization",
            ]
            .iter()
            .any(|s| k.contains(s))
        }) && value.len() >= 4
            && value != "***";
        let bearer = value.len() >= 20 && out.contains(&format!("Bearer {value}"));
        if prefixed || secret_key || bearer {
            out = out.replace(value, "***");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process holds no secret.
    fn none(text: &str) -> String {
        text.to_owned()
    }

    /// The process holds `held-secret-value`.
    fn one(text: &str) -> String {
        text.replace("held-secret-value", "***")
    }

    #[test]
    fn keeps_the_last_lines_and_strips_noise() {
        let raw = "2026-11-29T12:00:00.1234567Z \u{1b}[31mfirst\u{1b}[0m\r\n2026-11-29T12:00:01.0000000Z second\nthird\n";
        assert_eq!(tail(raw, 2, 1000, none), "second\nthird");
        assert_eq!(tail(raw, 10, 1000, none), "first\nsecond\nthird");
    }

    #[test]
    fn caps_bytes_from_the_end() {
        let raw = "aaaa\nbbbb\ncccc";
        assert_eq!(tail(raw, 10, 4, none), "cccc");
        assert_eq!(tail("ééé", 1, 3, none), "é", "never splits a character");
    }

    #[test]
    fn a_text_read_from_the_middle_drops_its_partial_line_and_a_keys_remainder() {
        let table = [
            ("ror: half a line\nsecond\nthird\n", "second\nthird\n"),
            ("no newline at all", ""),
            (
                "AAAA\nBBBBkeymaterial\n-----END RSA PRIVATE KEY-----\nerror: failed\n",
                "error: failed\n",
            ),
            (
                "x\n-----BEGIN RSA PRIVATE KEY-----\nK\n-----END RSA PRIVATE KEY-----\nok\n",
                "-----BEGIN RSA PRIVATE KEY-----\nK\n-----END RSA PRIVATE KEY-----\nok\n",
            ),
            (
                "x\n-----END CERTIFICATE-----\nok\n",
                "-----END CERTIFICATE-----\nok\n",
            ),
        ];
        for (read, kept) in table {
            assert_eq!(from_middle(read), kept, "{read:?}");
        }
    }

    #[test]
    fn feedback_is_masked_and_capped_from_the_start() {
        assert_eq!(feedback_body("short", 100, none), "short");
        let big = "word ".repeat(200_000);
        let out = feedback_body(&big, 16_384, none);
        assert!(out.len() < 16_384 + 64, "{}", out.len());
        assert!(out.starts_with("word word"));
        assert!(
            out.ends_with("more bytes not shown)"),
            "{}",
            &out[out.len() - 60..]
        );
        assert_eq!(
            feedback_body(
                "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 here",
                100,
                none
            ),
            "use *** here"
        );
        assert_eq!(
            feedback_body("ééé", 3, none),
            "é\n… (4 more bytes not shown)"
        );
    }

    #[test]
    fn masks_planted_secrets() {
        let raw = "::add-mask::hunter2-very-secret\n\
                   login with hunter2-very-secret\n\
                   using ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\
                   PASSWORD=opensesame\n\
                   curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz'\n\
                   error: test failed at line 3\n";
        let out = tail(raw, 80, 10_000, none);
        for secret in [
            "hunter2-very-secret",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "opensesame",
            "abcdefghijklmnopqrstuvwxyz",
        ] {
            assert!(!out.contains(secret), "{secret} leaked: {out}");
        }
        assert!(out.contains("error: test failed at line 3"));
        assert!(!out.contains("add-mask"));
    }

    #[test]
    fn what_the_process_holds_is_masked_by_the_masker_passed_in() {
        let raw = "connecting with held-secret-value\nerror: refused\n";
        assert_eq!(tail(raw, 10, 1000, none), raw.trim_end());
        assert_eq!(
            tail(raw, 10, 1000, one),
            "connecting with ***\nerror: refused"
        );
        assert_eq!(feedback_body("try held-secret-value", 100, one), "try ***");
    }
}
