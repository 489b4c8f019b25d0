//! HTTP plumbing shared by the forge clients and the webhook senders: the one way an agent is
//! configured (timeouts, no redirects, statuses as answers, proxies off for a loopback
//! address, the trust roots of [`crate::tls`]) and the one reading of `Retry-After`.

use std::time::{Duration, SystemTime};

/// An agent whose every request ends within `timeout` (connecting within ten seconds at
/// most); `direct` turns the environment's proxies off (for a loopback address).
pub(crate) fn agent(timeout: Duration, direct: bool) -> ureq::Agent {
    config(timeout, direct).build().into()
}

/// [`agent`]'s settings, for a caller that adds its own (how many connections it keeps).
pub(crate) fn config(
    timeout: Duration,
    direct: bool,
) -> ureq::config::ConfigBuilder<ureq::typestate::AgentScope> {
    let mut config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("pr-monitor/", env!("CARGO_PKG_VERSION")));
    if direct {
        config = config.proxy(None);
    }
    if let Some(tls) = crate::tls::ureq_tls() {
        config = config.tls_config(tls);
    }
    config
}

/// Seconds a `Retry-After` value asks to wait: a number of seconds, or an HTTP date (a date
/// already past asks for none).
pub(crate) fn retry_after_secs(value: &str, now: SystemTime) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs);
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let now = chrono::DateTime::<chrono::Utc>::from(now);
    Some(u64::try_from((at.to_utc() - now).num_seconds()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        assert_eq!(retry_after_secs(" 120 ", now), Some(120));
        assert_eq!(
            retry_after_secs("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(80)
        );
        assert_eq!(
            retry_after_secs("Wed, 21 Oct 2015 07:20:00 GMT", now),
            Some(0)
        );
        assert_eq!(retry_after_secs("soon", now), None);
    }
}
