//! The classification hint of a review feedback item, from plain rules on its words (the
//! agent decides; the hint only says how the words read): a suggestion block asks for a
//! change (`request`), `nit:` marks a `nit`, an approval with nothing more to say is an
//! `approval_note`, a question mark outside code and quotes is a `question`; anything else is a
//! `request`.

use crate::model::plan::FeedbackHint as Hint;

/// Words that approve and ask nothing, when a short note is made of them.
const APPROVALS: &[&str] = &[
    "lgtm",
    "looks good",
    "ship it",
    "approved",
    "👍",
    "✅",
    "nice",
];

/// The hint for `body`.
pub(crate) fn classify(body: &str) -> Hint {
    if body
        .lines()
        .any(|l| l.trim_start().starts_with("```suggestion"))
    {
        return Hint::Request;
    }
    let prose = prose(body);
    // The first words, emphasis and brackets left out (`**Nit**:`, `[nit]`).
    let opening: String = prose
        .trim_start()
        .chars()
        .filter(|c| !"*_[]()".contains(*c))
        .take(12)
        .collect::<String>()
        .to_lowercase();
    if ["nit:", "nit ", "nit,", "nitpick"]
        .iter()
        .any(|n| opening.starts_with(n))
    {
        return Hint::Nit;
    }
    if prose.contains('?') {
        return Hint::Question;
    }
    let lower = prose.trim().to_lowercase();
    if lower.chars().count() <= 80 && APPROVALS.iter().any(|a| lower.contains(a)) {
        return Hint::ApprovalNote;
    }
    Hint::Request
}

/// `body` without fenced code, inline code and quoted lines (`> …`): what the reviewer wrote in
/// their own words.
fn prose(body: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || t.starts_with('>') {
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_read_the_reviewers_own_words() {
        for (body, want) in [
            ("Please rename `x`.", Hint::Request),
            ("```suggestion\nlet y = 1;\n```", Hint::Request),
            ("Why not a `HashMap?` here", Hint::Request),
            ("Could this be a `BTreeMap`?", Hint::Question),
            ("nit: trailing space", Hint::Nit),
            ("**Nit**: a typo", Hint::Nit),
            ("Nitpick, feel free to ignore", Hint::Nit),
            ("LGTM", Hint::ApprovalNote),
            ("Looks good to me 👍", Hint::ApprovalNote),
            ("> is this right?\nYes, fix the loop.", Hint::Request),
            (
                "```rust\nlet a = b?;\n```\nUse the error's context.",
                Hint::Request,
            ),
            (
                "Looks good, but is the lock held across the await?",
                Hint::Question,
            ),
            (
                "LGTM once the test covers the empty case, which it does not do today at all, so please add it",
                Hint::Request,
            ),
            ("", Hint::Request),
        ] {
            assert_eq!(classify(body), want, "{body:?}");
        }
    }
}
