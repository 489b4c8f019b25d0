//! Owner notices by email: one SMTP submission per message, with lettre.
//!
//! `smtp_url` is `smtps://HOST:465` (implicit TLS), `smtp://HOST:587?tls=required`
//! (STARTTLS), or plain `smtp://HOST:PORT` — plain (and `tls=opportunistic`, which may end up
//! plain) only to a loopback host, since the password and the mail would cross the network
//! unencrypted. The user name and password are read from the environment variables the config
//! names, when a message is sent; no error contains them, nor the URL (which may hold a
//! password): errors name the server by scheme, host and port.
//!
//! The message is `multipart/alternative`: the notice's text (the PR's title, the failing
//! checks with their links and a short log excerpt), and a small HTML part with a `<title>`,
//! linking the PR and each failed check, every forge text escaped. `Auto-Submitted:
//! auto-generated` keeps auto-responders quiet. Its `Message-ID` is made from the outbox
//! id, and `X-PR-Monitor-Id` carries the id itself, so a resend after a crash is recognisably
//! the same message. The messages about one PR form one thread: every one after the PR's first
//! names the first's `Message-ID` in `In-Reply-To` and `References`; and every message carries
//! the same `List-Id` (`pr-monitor.DOMAIN`, the sender's domain), for mail filters.

use std::time::Duration;

use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{Message, SmtpTransport, Transport};

use super::DeliveryError;
use super::notice::NoticePayload;
use crate::address::Address;
use crate::config::{EmailConfig, TokenSource};
use crate::view::html::escape;
use crate::view::web::web_link;

/// How long connecting, and each SMTP exchange, may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The header carrying the outbox id.
pub const ID_HEADER: &str = "X-PR-Monitor-Id";

/// How the connection to the server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Security {
    /// `smtps://`: TLS from the first byte.
    Implicit,
    /// `smtp://…?tls=required`: STARTTLS, or no mail.
    StartTls,
    /// `smtp://` (or `tls=opportunistic`): possibly none at all.
    Plain,
}

/// `scheme://host:port` of `url`, without user, password, path or query.
fn server_name(url: &str) -> String {
    Address::parse(url).map_or_else(
        |_| "(an unreadable address)".to_owned(),
        |a| format!("{}://{}", a.scheme(), a.host_port()),
    )
}

fn security(url: &str) -> Result<Security, DeliveryError> {
    let server = server_name(url);
    let address = Address::parse(url).map_err(|_| {
        DeliveryError::permanent(format!(
            "SMTP server `{server}`: use an smtps:// or smtp:// URL"
        ))
    })?;
    let tls = address.query("tls");
    let security = match (address.scheme(), tls.as_deref()) {
        ("smtps", _) => Security::Implicit,
        ("smtp", Some("required")) => Security::StartTls,
        ("smtp", None | Some("opportunistic")) => Security::Plain,
        ("smtp", Some(other)) => {
            return Err(DeliveryError::permanent(format!(
                "SMTP server `{server}`: `tls={other}` is not known; use `tls=required`"
            )));
        }
        _ => {
            return Err(DeliveryError::permanent(format!(
                "SMTP server `{server}`: use an smtps:// or smtp:// URL"
            )));
        }
    };
    if security == Security::Plain && !address.is_loopback() {
        return Err(DeliveryError::permanent(format!(
            "SMTP server `{server}` would get the mail (and the password) unencrypted: plain \
             smtp:// is allowed only to a loopback host; use `smtps://HOST:465` or \
             `smtp://HOST:587?tls=required`"
        )));
    }
    Ok(security)
}

fn credentials(config: &EmailConfig) -> Result<Option<Credentials>, DeliveryError> {
    let (Some(user_env), Some(password_env)) = (&config.username_env, &config.password_env) else {
        return Ok(None);
    };
    let read = |name: &String| {
        TokenSource::Env(name.clone())
            .resolve()
            .map_err(|e| DeliveryError::temporary(format!("SMTP credentials: {e:#}")))
    };
    let user = read(user_env)?;
    let password = read(password_env)?;
    Ok(Some(Credentials::new(
        user.expose().to_owned(),
        password.expose().to_owned(),
    )))
}

fn transport(config: &EmailConfig) -> Result<SmtpTransport, DeliveryError> {
    let security = security(&config.smtp_url)?;
    let server = server_name(&config.smtp_url);
    let unusable = |e: &dyn std::fmt::Display| {
        DeliveryError::permanent(format!("SMTP server `{server}`: not usable: {e}"))
    };
    let mut builder = SmtpTransport::from_url(&config.smtp_url).map_err(|e| unusable(&e))?;
    // `tls.ca_file`: its certificates are trusted beside lettre's bundled roots.
    let roots = crate::tls::lettre_roots();
    if !roots.is_empty() && security != Security::Plain {
        let host = Address::parse(&config.smtp_url)
            .map(|a| a.host())
            .unwrap_or_default();
        let parameters = roots
            .into_iter()
            .fold(TlsParameters::builder(host), |b, cert| {
                b.add_root_certificate(cert)
            })
            .build()
            .map_err(|e| unusable(&e))?;
        builder = builder.tls(match security {
            Security::Implicit => Tls::Wrapper(parameters),
            Security::StartTls | Security::Plain => Tls::Required(parameters),
        });
    }
    if let Some(credentials) = credentials(config)? {
        builder = builder.credentials(credentials);
    }
    Ok(builder.timeout(Some(TIMEOUT)).build())
}

/// Sends the owner notice `payload` (outbox message `id`) to the configured recipients, in
/// reply to the outbox message `thread` (the PR's first) when it is another.
pub fn send(
    config: &EmailConfig,
    id: &str,
    payload: &str,
    thread: Option<&str>,
) -> Result<(), DeliveryError> {
    let notice = NoticePayload::parse(payload)?;
    let message = message(config, id, &notice, thread)?;
    let transport = transport(config)?;
    transport
        .send(&message)
        .map(|_| ())
        .map_err(|e| classify(&e, &server_name(&config.smtp_url)))
}

/// 5xx replies are permanent; 4xx replies, refused connections, timeouts, TLS and protocol
/// trouble are temporary.
fn classify(e: &lettre::transport::smtp::Error, server: &str) -> DeliveryError {
    let message = format!("SMTP server `{server}`: {e}");
    if e.is_permanent() {
        DeliveryError::permanent(message)
    } else {
        DeliveryError::temporary(message)
    }
}

fn mailbox(which: &str, address: &str) -> Result<Mailbox, DeliveryError> {
    address.parse::<Mailbox>().map_err(|e| {
        DeliveryError::permanent(format!("the {which} address `{address}` is not valid: {e}"))
    })
}

/// `<ID@DOMAIN>`: the outbox id (unsafe characters replaced) at the sender's domain.
fn message_id(id: &str, from: &Mailbox) -> String {
    let local: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+=".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let local = local.trim_matches('.');
    let local = if local.is_empty() { "message" } else { local };
    format!("<{local}@{}>", from.email.domain())
}

/// `List-Id` (RFC 2919): one list for every message of an installation, at the sender's domain.
fn list_id(from: &Mailbox) -> String {
    format!("pr-monitor <pr-monitor.{}>", from.email.domain())
}

/// The email for a notice; in the thread of outbox message `thread` when it is another.
fn message(
    config: &EmailConfig,
    id: &str,
    notice: &NoticePayload,
    thread: Option<&str>,
) -> Result<Message, DeliveryError> {
    let from = mailbox("sender", &config.from)?;
    let mut builder = Message::builder()
        .message_id(Some(message_id(id, &from)))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("List-Id"),
            list_id(&from),
        ));
    if let Some(root) = thread.filter(|root| *root != id) {
        let root = message_id(root, &from);
        builder = builder.in_reply_to(root.clone()).references(root);
    }
    let mut builder = builder
        .from(from)
        .subject(notice.subject.clone())
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str(ID_HEADER),
            id.to_owned(),
        ))
        // RFC 3834: a machine wrote this; auto-responders stay quiet.
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".to_owned(),
        ));
    for to in &config.to {
        builder = builder.to(mailbox("recipient", to)?);
    }
    builder
        .multipart(MultiPart::alternative_plain_html(
            notice.text.clone(),
            html(notice),
        ))
        .map_err(|e| DeliveryError::permanent(format!("cannot build the email: {e}")))
}

/// The HTML part: the text, a link to the PR, and the failed checks, all escaped.
pub fn html(notice: &NoticePayload) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head><body>\n",
        escape(&notice.subject)
    );
    out.push_str(&format!("<h3>{}</h3>\n", escape(&notice.subject)));
    if let Some(url) = notice.link() {
        out.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>\n",
            escape(url),
            escape(notice.label())
        ));
    }
    if let Some(words) = notice.pills.map(|p| p.words()).filter(|w| !w.is_empty()) {
        let words: Vec<String> = words
            .iter()
            .map(|w| format!("<code>{}</code>", escape(w)))
            .collect();
        out.push_str(&format!("<p>{}</p>\n", words.join(" ")));
    }
    if !notice.checks().is_empty() {
        out.push_str("<p>Failed checks:</p>\n<ul>\n");
        for check in notice.checks() {
            let name = escape(&check.name);
            match check.url.as_deref().and_then(web_link) {
                Some(url) => {
                    out.push_str(&format!(
                        "<li><a href=\"{}\">{name}</a></li>\n",
                        escape(url)
                    ));
                }
                None => out.push_str(&format!("<li>{name}</li>\n")),
            }
        }
        out.push_str("</ul>\n");
    }
    out.push_str(&format!(
        "<pre style=\"white-space: pre-wrap\">{}</pre>\n</body></html>\n",
        escape(notice.text.trim_end())
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> EmailConfig {
        EmailConfig {
            smtp_url: url.to_owned(),
            username_env: None,
            password_env: None,
            from: "PR Monitor <pr-monitor@example.com>".to_owned(),
            to: vec!["owner@example.com".to_owned(), "b@example.org".to_owned()],
            on: None,
        }
    }

    fn notice() -> NoticePayload {
        NoticePayload::parse(
            r#"{"subject":"PR #342: lint failed","text":"PR #342: lint failed\nhttps://github.com/o/r/pull/342\nlint failed on abc\n",
            "url":"https://github.com/o/r/pull/342","title":"<script>alert(1)</script> & \"q\"","kind":"ci",
            "pills":{"ci":true,"ci_fixing":false,"cnf":false,"cmt":0},
            "failed_checks":[{"name":"lint <x>","url":"https://ci.example/1?a=1&b=2"},{"name":"e2e","url":"javascript:alert(1)"}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn security_follows_the_url_and_plain_smtp_stays_on_loopback() {
        assert_eq!(
            security("smtps://smtp.example.com:465"),
            Ok(Security::Implicit)
        );
        assert_eq!(
            security("smtp://smtp.example.com:587?tls=required"),
            Ok(Security::StartTls)
        );
        assert_eq!(security("smtp://127.0.0.1:2525"), Ok(Security::Plain));
        assert_eq!(
            security("smtp://localhost?tls=opportunistic"),
            Ok(Security::Plain)
        );
        let e = security("smtp://user:hunter2@smtp.example.com:25").unwrap_err();
        assert!(e.permanent);
        assert!(
            e.message.contains("`smtp://smtp.example.com:25`"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("hunter2"));
        assert!(security("smtp://smtp.example.com:587?tls=opportunistic").is_err());
        assert!(security("smtp://smtp.example.com:587?tls=wrapper").is_err());
    }

    #[test]
    fn the_message_has_both_parts_ids_and_escaped_html() {
        let msg = message(
            &config("smtp://127.0.0.1:25"),
            "o-r-342-ci-email-1",
            &notice(),
            None,
        )
        .unwrap();
        let raw = String::from_utf8(msg.formatted()).unwrap();
        assert!(
            raw.contains("Message-ID: <o-r-342-ci-email-1@example.com>"),
            "{raw}"
        );
        assert!(raw.contains("X-PR-Monitor-Id: o-r-342-ci-email-1"), "{raw}");
        assert!(
            raw.contains("List-Id: pr-monitor <pr-monitor.example.com>"),
            "{raw}"
        );
        assert!(
            !raw.contains("In-Reply-To") && !raw.contains("References"),
            "{raw}"
        );
        assert!(raw.contains("Subject: PR #342: lint failed"), "{raw}");
        assert!(raw.contains("multipart/alternative"), "{raw}");
        assert!(
            raw.contains("text/plain") && raw.contains("text/html"),
            "{raw}"
        );
        let to: Vec<String> = msg
            .envelope()
            .to()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(to, ["owner@example.com", "b@example.org"]);
    }

    #[test]
    fn html_links_the_pr_and_checks_and_escapes_forge_text() {
        let h = html(&notice());
        assert!(h.contains(
            "<a href=\"https://github.com/o/r/pull/342\">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;</a>"
        ), "{h}");
        assert!(
            h.contains("<li><a href=\"https://ci.example/1?a=1&amp;b=2\">lint &lt;x&gt;</a></li>"),
            "{h}"
        );
        assert!(
            h.contains("<li>e2e</li>"),
            "a non-web address is not linked: {h}"
        );
        assert!(!h.contains("<script>") && !h.contains("javascript:"));
        assert!(h.contains("<code>ci</code>"));
    }

    #[test]
    fn bad_addresses_are_permanent_and_missing_credentials_are_kept_for_later() {
        let mut c = config("smtp://127.0.0.1:25");
        c.to = vec!["not an address".into()];
        let e = message(&c, "m", &notice(), None).unwrap_err();
        assert!(
            e.permanent && e.message.contains("recipient"),
            "{}",
            e.message
        );

        let mut c = config("smtp://127.0.0.1:25");
        c.username_env = Some("PR_MONITOR_TEST_SMTP_UNSET_USER".into());
        c.password_env = Some("PR_MONITOR_TEST_SMTP_UNSET_PASSWORD".into());
        let e = transport(&c).unwrap_err();
        assert!(!e.permanent, "a setup mistake the owner will fix");
        assert!(
            e.message.contains("`PR_MONITOR_TEST_SMTP_UNSET_USER`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn forge_text_cannot_add_headers() {
        let mut n = notice();
        n.subject = "PR #1: x\r\nBcc: evil@example.net\r\n failed".to_owned();
        let msg = message(&config("smtp://127.0.0.1:25"), "m", &n, None).unwrap();
        let raw = String::from_utf8(msg.formatted()).unwrap();
        let headers = raw.split("\r\n\r\n").next().unwrap();
        assert!(!headers.contains("\r\nBcc:"), "{headers}");
        assert_eq!(msg.envelope().to().len(), 2);
    }

    #[test]
    fn a_later_message_answers_the_prs_first_and_the_first_answers_nothing() {
        let c = config("smtp://127.0.0.1:25");
        let later = message(&c, "o-r-342-merged", &notice(), Some("o-r-342-ci")).unwrap();
        let raw = String::from_utf8(later.formatted()).unwrap();
        assert!(
            raw.contains("Message-ID: <o-r-342-merged@example.com>"),
            "{raw}"
        );
        assert!(
            raw.contains("In-Reply-To: <o-r-342-ci@example.com>"),
            "{raw}"
        );
        assert!(
            raw.contains("References: <o-r-342-ci@example.com>"),
            "{raw}"
        );
        let first = message(&c, "o-r-342-ci", &notice(), Some("o-r-342-ci")).unwrap();
        let raw = String::from_utf8(first.formatted()).unwrap();
        assert!(
            !raw.contains("In-Reply-To") && !raw.contains("References"),
            "{raw}"
        );
    }

    #[test]
    fn message_ids_are_safe() {
        let from: Mailbox = "a@example.com".parse().unwrap();
        assert_eq!(message_id("x y<z>", &from), "<x-y-z-@example.com>");
        assert_eq!(message_id("..", &from), "<message@example.com>");
    }
}
