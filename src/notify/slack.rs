//! Owner notices to Slack through an incoming webhook. The webhook address is a secret: it is
//! read from the environment variable the config names, only when a message is sent, and no
//! error or output ever contains it.
//!
//! The message's first line is the notice's subject (the contract's `PR #342: lint failed`);
//! a section block carries the PR link, a merge's `done` record in its short form, the pills
//! and the failed checks as links. Forge text
//! is escaped for Slack's mrkdwn, so a title cannot mention `@channel` or forge a link.

use std::time::Duration;

use serde_json::{Value, json};

use super::DeliveryError;
use super::http::{Post, post};
use super::notice::NoticePayload;
use crate::address::is_https_or_loopback;
use crate::config::{Secret, SlackConfig, TokenSource};
use crate::core::text::clip;
use crate::view::web::web_link;

/// How long one webhook call may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most failed checks listed; the rest are counted.
const MAX_CHECKS: usize = 10;
/// The longest subject, title or check name shown, in characters.
const MAX_TEXT: usize = 150;
/// The longest reason shown (an error said in a sentence or two), in characters.
const MAX_REASON: usize = 500;
/// Slack's limit on a section's text, in characters.
const SECTION_LIMIT: usize = 3000;

/// Sends the owner notice `payload` (outbox message `id`) to the webhook whose address is in
/// the environment variable the config names.
pub fn send(config: &SlackConfig, id: &str, payload: &str) -> Result<(), DeliveryError> {
    let source = TokenSource::Env(config.webhook_url_env.clone());
    let url = source
        .resolve()
        // A missing variable is a setup mistake the owner will fix: keep the message.
        .map_err(|e| DeliveryError::temporary(format!("Slack webhook: {e:#}")))?;
    if !is_https_or_loopback(url.expose()) {
        return Err(DeliveryError::permanent(format!(
            "Slack webhook: {source} must hold an https URL (plain http only to a loopback host)"
        )));
    }
    post_notice(&url, id, payload)
}

/// Sends the owner notice `payload` (outbox message `id`) to the webhook at `url`.
pub fn post_notice(url: &Secret, id: &str, payload: &str) -> Result<(), DeliveryError> {
    let notice = NoticePayload::parse(payload)?;
    let body = body(&notice).to_string();
    post(&Post {
        url: url.expose(),
        receiver: "Slack webhook",
        body: &body,
        headers: &[("X-PR-Monitor-Id", id)],
        timeout: TIMEOUT,
    })
}

/// Slack's limit on blocks in one message.
const BLOCK_LIMIT: usize = 50;

/// A digest: its subject, then every PR as a line with its headline and link, packed into as
/// few sections as Slack's limits allow; past the block limit the rest are counted.
fn digest_body(notice: &NoticePayload) -> Value {
    let lines: Vec<String> = notice
        .items
        .iter()
        .map(|item| {
            let subject = clip(&item.subject, MAX_TEXT);
            let head = match web_link(&item.url) {
                Some(url) => link(url, &subject),
                None => escape(&subject),
            };
            let mut line = format!("• {head}");
            for said in [&item.title, &item.done] {
                if !said.trim().is_empty() {
                    line.push_str(&format!(" — {}", escape(&clip(said, MAX_TEXT))));
                }
            }
            line
        })
        .collect();
    let mut sections: Vec<String> = vec![format!("*{}*", escape(&clip(&notice.subject, MAX_TEXT)))];
    let mut shown = 0;
    for line in &lines {
        let fits = sections
            .last()
            .is_some_and(|s| s.chars().count() + 1 + line.chars().count() <= SECTION_LIMIT);
        if fits && let Some(section) = sections.last_mut() {
            section.push('\n');
            section.push_str(line);
        } else if sections.len() < BLOCK_LIMIT - 1 {
            sections.push(line.clone());
        } else {
            break;
        }
        shown += 1;
    }
    if shown < lines.len() {
        sections.push(format!("and {} more", lines.len() - shown));
    }
    let fallback: Vec<String> = std::iter::once(escape(&notice.subject))
        .chain(
            notice
                .items
                .iter()
                .map(|i| escape(&clip(&i.subject, MAX_TEXT))),
        )
        .collect();
    json!({
        "text": clip(&fallback.join("\n"), SECTION_LIMIT),
        "blocks": sections
            .into_iter()
            .map(|text| json!({"type": "section", "text": {"type": "mrkdwn", "text": text}}))
            .collect::<Vec<_>>(),
    })
}

/// The webhook's JSON body for a notice.
pub fn body(notice: &NoticePayload) -> Value {
    if !notice.items.is_empty() {
        return digest_body(notice);
    }
    let fallback = match notice.link() {
        Some(url) => format!("{}\n{}", escape(&notice.subject), escape(url)),
        None => escape(&notice.subject),
    };
    json!({
        "text": fallback,
        "blocks": [{
            "type": "section",
            "text": { "type": "mrkdwn", "text": section(notice) },
        }],
    })
}

/// The section's mrkdwn: subject, PR link, pills, failed checks — as many checks as fit in
/// Slack's limit, the rest counted.
fn section(notice: &NoticePayload) -> String {
    let mut head = vec![format!("*{}*", escape(&clip(&notice.subject, MAX_TEXT)))];
    if let Some(url) = notice.link() {
        head.push(link(url, &clip(notice.label(), MAX_TEXT)));
    }
    if let Some(reason) = notice.reason.as_deref().filter(|r| !r.trim().is_empty()) {
        head.push(format!("Why: {}", escape(&clip(reason, MAX_REASON))));
    }
    if let Some(done) = notice.done.as_deref().filter(|d| !d.trim().is_empty()) {
        head.push(escape(&clip(done, MAX_REASON)));
    }
    if let Some(pills) = notice.pills {
        let words: Vec<String> = pills.words().iter().map(|w| format!("`{w}`")).collect();
        if !words.is_empty() {
            head.push(words.join(" "));
        }
    }
    let total = notice.checks().len();
    let checks: Vec<String> = notice
        .checks()
        .iter()
        .take(MAX_CHECKS)
        .map(|c| {
            let name = clip(&c.name, MAX_TEXT);
            match c.url.as_deref().and_then(web_link) {
                Some(url) => link(url, &name),
                None => escape(&name),
            }
        })
        .collect();
    let compose = |shown: &[String]| {
        let mut lines = head.clone();
        if total > 0 {
            let mut listed = shown.to_vec();
            if total > shown.len() {
                listed.push(if shown.is_empty() {
                    format!("{total} checks")
                } else {
                    format!("and {} more", total - shown.len())
                });
            }
            lines.push(format!("Failed: {}", listed.join(", ")));
        }
        lines.join("\n")
    };
    (0..=checks.len())
        .rev()
        .map(|n| compose(&checks[..n]))
        .find(|text| text.chars().count() <= SECTION_LIMIT)
        .unwrap_or_else(|| clip(&compose(&[]), SECTION_LIMIT))
}

/// Escapes text for mrkdwn: `&`, `<` and `>` are the control characters.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `<url|label>`. A label cannot contain `|` (Slack has no escape for it), so it becomes `¦`.
fn link(url: &str, label: &str) -> String {
    let label = if label.trim().is_empty() { url } else { label };
    format!(
        "<{}|{}>",
        escape(url).replace('|', "%7C"),
        escape(label).replace('|', "¦")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice() -> NoticePayload {
        NoticePayload::parse(
            r#"{"subject":"PR #342: lint failed","text":"t","url":"https://github.com/o/r/pull/342",
            "title":"Fix <!channel> & stuff | now","kind":"ci",
            "pills":{"ci":true,"ci_fixing":false,"cnf":false,"cmt":1},
            "failed_checks":[{"name":"lint","url":"https://ci.example/1"},{"name":"e2e <b>","url":"javascript:x"}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn the_body_leads_with_the_subject_and_links_the_pr_and_checks() {
        let b = body(&notice());
        assert_eq!(
            b["text"],
            "PR #342: lint failed\nhttps://github.com/o/r/pull/342"
        );
        assert_eq!(b["blocks"][0]["type"], "section");
        let text = b["blocks"][0]["text"]["text"].as_str().unwrap();
        assert_eq!(
            text,
            "*PR #342: lint failed*\n\
             <https://github.com/o/r/pull/342|Fix &lt;!channel&gt; &amp; stuff ¦ now>\n\
             `ci` `cmt:1`\n\
             Failed: <https://ci.example/1|lint>, e2e &lt;b&gt;"
        );
    }

    #[test]
    fn a_merge_says_its_done_record_under_the_link() {
        let n = NoticePayload::parse(
            r#"{"subject":"PR #342: merged · o/r","text":"t","url":"https://github.com/o/r/pull/342",
            "title":"Fix","kind":"merge","done":"checks green (1/1) · no approvals · 1 review thread left <open>"}"#,
        )
        .unwrap();
        assert_eq!(
            body(&n)["blocks"][0]["text"]["text"],
            "*PR #342: merged · o/r*\n<https://github.com/o/r/pull/342|Fix>\n\
             checks green (1/1) · no approvals · 1 review thread left &lt;open&gt;"
        );
    }

    #[test]
    fn a_notice_without_a_pr_or_checks_is_just_its_subject() {
        let n = NoticePayload::parse(
            r#"{"subject":"pr-monitor test message","text":"t","kind":"test"}"#,
        )
        .unwrap();
        let b = body(&n);
        assert_eq!(b["text"], "pr-monitor test message");
        assert_eq!(b["blocks"][0]["text"]["text"], "*pr-monitor test message*");
    }

    #[test]
    fn many_failed_checks_are_counted() {
        let mut n = notice();
        n.failed_checks = Some(
            (0..12)
                .map(|i| super::super::notice::CheckLink {
                    name: format!("c{i}"),
                    ..Default::default()
                })
                .collect(),
        );
        let text = body(&n)["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.ends_with("c9, and 2 more"), "{text}");
    }

    #[test]
    fn the_section_stays_under_slacks_limit_and_the_fallback_is_escaped() {
        let mut n = notice();
        n.subject = format!("PR #1: {} failed", "<!here>".repeat(100));
        n.title = Some("t".repeat(300));
        n.failed_checks = Some(
            (0..12)
                .map(|i| super::super::notice::CheckLink {
                    name: format!("{i}{}", "n".repeat(300)),
                    url: Some(format!("https://ci.example/{}", "x".repeat(100))),
                    ..Default::default()
                })
                .collect(),
        );
        let b = body(&n);
        let section = b["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(section.chars().count() <= 3000, "{}", section.len());
        assert!(
            section.contains(", and "),
            "some checks are counted: {section}"
        );
        let fallback = b["text"].as_str().unwrap();
        assert!(!fallback.contains("<!here>"), "{fallback}");
    }

    fn digest(n: usize) -> NoticePayload {
        NoticePayload {
            subject: format!("pr-monitor: {n} pull requests changed"),
            kind: "digest".into(),
            items: (1..=n)
                .map(|i| super::super::notice::DigestItem {
                    subject: format!("PR #{i}: lint failed · o/r"),
                    url: format!("https://github.com/o/r/pull/{i}"),
                    title: format!("Title {i} <!here>"),
                    done: String::new(),
                })
                .collect(),
            ..NoticePayload::default()
        }
    }

    #[test]
    fn a_digest_lists_every_pr_with_its_headline_and_link() {
        let b = body(&digest(7));
        let blocks = b["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 1);
        let text = blocks[0]["text"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("*pr-monitor: 7 pull requests changed*\n"),
            "{text}"
        );
        for i in 1..=7 {
            assert!(
                text.contains(&format!(
                    "• <https://github.com/o/r/pull/{i}|PR #{i}: lint failed · o/r> — Title {i} &lt;!here&gt;"
                )),
                "{text}"
            );
        }
        assert!(b["text"].as_str().unwrap().contains("PR #7: lint failed"));
    }

    #[test]
    fn a_huge_digest_stays_within_block_kits_limits() {
        let b = body(&digest(3000));
        let blocks = b["blocks"].as_array().unwrap();
        assert!(blocks.len() <= 50, "{}", blocks.len());
        for block in blocks {
            assert!(block["text"]["text"].as_str().unwrap().chars().count() <= 3000);
        }
        let last = blocks.last().unwrap()["text"]["text"].as_str().unwrap();
        assert!(
            last.starts_with("and ") && last.ends_with(" more"),
            "{last}"
        );
        assert!(b["text"].as_str().unwrap().chars().count() <= 3000);
    }

    #[test]
    fn a_missing_variable_is_named_and_kept_for_later() {
        let config = SlackConfig {
            webhook_url_env: "PR_MONITOR_TEST_SLACK_UNSET_VARIABLE".into(),
            on: None,
        };
        let e = send(&config, "m-1", r#"{"subject":"s"}"#).unwrap_err();
        assert!(!e.permanent);
        assert!(
            e.message.contains("`PR_MONITOR_TEST_SLACK_UNSET_VARIABLE`"),
            "{}",
            e.message
        );
    }
}
