//! One JSON POST for the HTTP transports (Slack, agent webhooks), and the mapping of its
//! outcome to a [`DeliveryError`]: 2xx delivered; 429 temporary, with its `Retry-After`; other
//! 4xx permanent; anything else (3xx, 5xx, timeouts, refused connections) temporary.
//!
//! Proxies come from the environment, except for loopback addresses, which are always reached
//! directly. Errors name the receiver as the caller describes it, never by its address (a
//! Slack webhook address is a secret).

use std::time::Duration;

use super::DeliveryError;
use crate::address::is_loopback;

/// The most of an error answer's body quoted in an error.
const BODY_QUOTE_CHARS: usize = 200;

/// A POST of a JSON body.
#[derive(Debug)]
pub(super) struct Post<'a> {
    pub url: &'a str,
    /// How errors name the receiver (`Slack webhook`, `webhook of agent `fixer``).
    pub receiver: &'a str,
    pub body: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub timeout: Duration,
}

/// Sends the POST and classifies the answer.
pub(super) fn post(req: &Post<'_>) -> Result<(), DeliveryError> {
    let mut builder = crate::http::agent(req.timeout, is_loopback(req.url))
        .post(req.url)
        .header("Content-Type", "application/json");
    for (name, value) in req.headers {
        builder = builder.header(*name, *value);
    }
    let mut resp = builder
        .send(req.body)
        .map_err(|e| transport_error(&e, req.receiver))?;
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| crate::http::retry_after_secs(v, std::time::SystemTime::now()));
    let body = if (200..300).contains(&status) {
        String::new()
    } else {
        resp.body_mut()
            .with_config()
            .limit(64 * 1024)
            .read_to_string()
            .unwrap_or_default()
    };
    classify(status, retry_after, &body, req.receiver)
}

/// The outcome of an answer with `status`.
pub(super) fn classify(
    status: u16,
    retry_after: Option<u64>,
    body: &str,
    receiver: &str,
) -> Result<(), DeliveryError> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    let quoted: String = body.trim().chars().take(BODY_QUOTE_CHARS).collect();
    let message = if quoted.is_empty() {
        format!("{receiver} answered HTTP {status}")
    } else {
        format!("{receiver} answered HTTP {status}: {quoted}")
    };
    Err(match status {
        429 => DeliveryError::temporary(message).retry_after(retry_after),
        400..=499 => DeliveryError::permanent(message),
        _ => DeliveryError::temporary(message),
    })
}

/// A transport failure, temporary, described without the URL.
fn transport_error(e: &ureq::Error, receiver: &str) -> DeliveryError {
    let what = match e {
        ureq::Error::Timeout(_) => "timed out".to_owned(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".to_owned()
        }
        ureq::Error::Io(io) => match crate::tls::handshake_failure(io) {
            Some(why) => format!("its TLS certificate is not trusted: {why}"),
            None => format!("connection failed ({})", io.kind()),
        },
        ureq::Error::ConnectionFailed => "connection failed".to_owned(),
        ureq::Error::HostNotFound => "host not found".to_owned(),
        ureq::Error::Tls(why) => format!("TLS failed: {why}"),
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => {
            return DeliveryError::permanent(format!("{receiver}: the address is not a valid URL"));
        }
        ureq::Error::Protocol(p) => format!("protocol error: {p}"),
        _ => "request failed".to_owned(),
    };
    DeliveryError::temporary(format!("{receiver}: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_outcomes() {
        assert!(classify(204, None, "", "r").is_ok());
        let limited = classify(429, Some(90), "slow down", "r").unwrap_err();
        assert!(!limited.permanent);
        assert_eq!(limited.retry_after_secs, Some(90));
        assert_eq!(limited.message, "r answered HTTP 429: slow down");
        assert!(
            classify(404, None, "no_service", "r")
                .unwrap_err()
                .permanent
        );
        assert!(!classify(503, None, "", "r").unwrap_err().permanent);
        assert!(!classify(301, None, "", "r").unwrap_err().permanent);
        let long = "x".repeat(1000);
        assert!(classify(500, None, &long, "r").unwrap_err().message.len() < 250);
    }
}
