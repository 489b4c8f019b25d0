//! The owner notice as the email and Slack transports read it: the [`NoticePayload`]
//! `report::notice_payload` writes into the outbox, read back and cleaned in one place.
//!
//! Every field but `subject` is optional, because older rows and the tick's error notice carry
//! fewer fields. Nothing here is trusted: titles, check names and URLs come from the forge, and
//! each transport escapes them for its own markup.

pub use crate::model::message::{CheckLink, DigestItem, NoticePayload};

use super::DeliveryError;
use crate::view::web::web_link;

impl NoticePayload {
    /// Reads an outbox payload. A payload that is not a notice can never be sent: permanent.
    pub fn parse(payload: &str) -> Result<NoticePayload, DeliveryError> {
        let notice: NoticePayload = serde_json::from_str(payload).map_err(|e| {
            DeliveryError::permanent(format!("the message is not an owner notice: {e}"))
        })?;
        let notice = notice.cleaned();
        if notice.subject.trim().is_empty() {
            return Err(DeliveryError::permanent("the message has no subject"));
        }
        Ok(notice)
    }

    /// Every text with terminal escapes, control characters and bidi marks removed (one line
    /// each, but the plain text), before any transport lays it out.
    fn cleaned(self) -> NoticePayload {
        use crate::core::text::{one_line, strip_controls};
        let line = |s: Option<String>| s.map(|s| one_line(&s));
        NoticePayload {
            subject: one_line(&self.subject),
            text: strip_controls(&self.text),
            url: line(self.url),
            title: line(self.title),
            reason: line(self.reason),
            done: line(self.done),
            failed_checks: self.failed_checks.map(|checks| {
                checks
                    .into_iter()
                    .map(|c| CheckLink {
                        name: one_line(&c.name),
                        url: line(c.url),
                        log_excerpt: strip_controls(&c.log_excerpt),
                    })
                    .collect()
            }),
            items: self
                .items
                .into_iter()
                .map(|i| DigestItem {
                    subject: one_line(&i.subject),
                    url: one_line(&i.url),
                    title: one_line(&i.title),
                    done: one_line(&i.done),
                })
                .collect(),
            ..self
        }
    }

    /// The PR's address, when it is a web link.
    pub fn link(&self) -> Option<&str> {
        self.url.as_deref().and_then(web_link)
    }

    /// What a link to the PR says: its title, else its address.
    pub fn label(&self) -> &str {
        self.title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .or(self.url.as_deref())
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_full_notice_and_the_short_error_notice() {
        let full = r#"{"subject":"PR #1: lint failed","text":"t","url":"https://github.com/o/r/pull/1",
            "title":"Fix","kind":"ci","pills":{"ci":true,"ci_fixing":false,"cnf":true,"cmt":2},
            "failed_checks":[{"name":"lint","url":"https://ci/1"},{"name":"e2e","url":null}]}"#;
        let n = NoticePayload::parse(full).unwrap();
        assert_eq!(n.label(), "Fix");
        assert_eq!(n.pills.unwrap().words(), ["ci", "cnf", "cmt:2"]);
        assert_eq!(n.checks()[1].url, None);

        let short = r#"{"subject":"PR #1: keeps failing to tick","text":"t","url":"https://github.com/o/r/pull/1","kind":"error"}"#;
        let n = NoticePayload::parse(short).unwrap();
        assert_eq!(n.label(), "https://github.com/o/r/pull/1");
        assert!(n.checks().is_empty() && n.pills.is_none());

        assert!(NoticePayload::parse("[]").unwrap_err().permanent);
        assert!(
            NoticePayload::parse(r#"{"text":"x"}"#)
                .unwrap_err()
                .permanent
        );
    }

    /// Email and Slack read notices only through `parse`: no escape, control or bidi mark of
    /// a title, check name or branch reaches either.
    #[test]
    fn forge_text_loses_its_controls_before_any_transport() {
        let hostile = r#"{"subject":"PR #1: \u001b]0;owned\u0007lint\u202e failed","text":"a\u001b[31m\nb\u0007",
            "title":"Fix\u001b[2J\n\u2066x","kind":"ci",
            "failed_checks":[{"name":"li\u001b[1mnt\u0008","url":"https://ci/1\u200f"}],
            "items":[{"subject":"s\u0007","url":"u","title":"t\u001b[0m"}]}"#;
        let n = NoticePayload::parse(hostile).unwrap();
        assert_eq!(n.subject, "PR #1: lint failed");
        assert_eq!(n.text, "a\nb");
        assert_eq!(n.title.as_deref(), Some("Fix x"));
        assert_eq!(n.checks()[0].name, "lint");
        assert_eq!(n.checks()[0].url.as_deref(), Some("https://ci/1"));
        assert_eq!(
            (n.items[0].subject.as_str(), n.items[0].title.as_str()),
            ("s", "t")
        );
    }

    #[test]
    fn only_web_addresses_are_links() {
        assert_eq!(web_link(" https://x/y "), Some("https://x/y"));
        assert_eq!(web_link("HTTP://x"), Some("HTTP://x"));
        assert_eq!(web_link("javascript:alert(1)"), None);
        assert_eq!(web_link(""), None);
    }
}
