//! What a rate-limit answer asks of a forge client: how long to wait (GitHub's and GitLab's
//! `Retry-After`, a spent budget's reset, GraphQL's HTTP-200 `RATE_LIMITED`), whether to sleep
//! that out inside the run or give up, and the hold a secondary limit without `Retry-After`
//! puts on a host: at least a minute, doubling while the limit keeps answering.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest rate-limit wait taken inside a tick; longer ones end the PR's tick instead.
pub const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// The wait a rate-limit answer implies when it names no reset.
pub(crate) const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// Rate-limit waits one request may sleep before it gives up and defers its PR.
pub(crate) const RATE_LIMIT_WAITS: u32 = 3;
/// The shortest rate-limit wait: `Retry-After: 0` is a pause, never a spin.
pub(crate) const MIN_RATE_LIMIT_WAIT: Duration = Duration::from_secs(1);
/// How long one client (one run) may sleep on rate limits in all; after that every request
/// of the run is deferred to the reset.
pub(crate) const RATE_LIMIT_BUDGET: Duration = Duration::from_secs(120);
/// How long a client that gave up on a rate limit stays blocked, at least.
pub(crate) const GIVE_UP_BLOCK: Duration = Duration::from_secs(60);

/// The shortest hold a secondary limit without `Retry-After` puts on its host (GitHub: "wait
/// for at least one minute").
pub const SECONDARY_HOLD: Duration = Duration::from_secs(60);
/// The longest hold: doubling stops here.
const MAX_SECONDARY_HOLD: Duration = Duration::from_secs(32 * 60);

/// What a rate-limit answer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Wait this long (its `Retry-After`, or until its budget's reset), then ask again.
    Wait(Duration),
    /// A secondary limit that names no time: hold the host for [`secondary_hold`].
    Secondary,
}

/// What a 403/429 answer (or GraphQL's HTTP 200) says of the rate limits, or `None` when it
/// is not a rate limit: then a 403 is a refused permission. `header` looks up an answer's
/// header by name; `body` is its text.
pub fn limit_of(
    status: u16,
    header: impl Fn(&str) -> Option<String>,
    body: &str,
    now: SystemTime,
) -> Option<Limit> {
    if let Some(wait) = rate_limit_wait(status, &header, now) {
        return Some(Limit::Wait(wait));
    }
    if matches!(status, 403 | 429) && is_secondary_limit(body) {
        return Some(Limit::Secondary);
    }
    if status == 429 {
        return Some(Limit::Wait(DEFAULT_RATE_LIMIT_WAIT));
    }
    (status == 200 && is_graphql_rate_limited(body))
        .then(|| Limit::Wait(reset_wait(&header, now).unwrap_or(DEFAULT_RATE_LIMIT_WAIT)))
}

/// Whether an error body is GitHub's secondary rate limit ("You have exceeded a secondary
/// rate limit", or the older "abuse detection mechanism").
fn is_secondary_limit(body: &str) -> bool {
    let msg = body.to_ascii_lowercase();
    msg.contains("secondary rate limit") || msg.contains("abuse detection")
}

/// How long a host is held after the `streak`th secondary limit in a row (counting this one):
/// a minute, then twice as long each time, at most [`MAX_SECONDARY_HOLD`].
pub fn secondary_hold(streak: u32) -> Duration {
    let doublings = streak.saturating_sub(1).min(5);
    (SECONDARY_HOLD * 2u32.pow(doublings)).min(MAX_SECONDARY_HOLD)
}

/// How long a 403/429 rate-limit answer asks to wait, or `None` if it is not one. `header`
/// looks up an answer's header by name.
fn rate_limit_wait(
    status: u16,
    header: &impl Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Option<Duration> {
    if status != 403 && status != 429 {
        return None;
    }
    if let Some(secs) = header("retry-after").and_then(|v| crate::http::retry_after_secs(&v, now)) {
        return Some(Duration::from_secs(secs));
    }
    if let Some(wait) = reset_wait(header, now) {
        return Some(wait);
    }
    None
}

/// The wait until the budget's reset when the answer says none is left
/// (`x-ratelimit-remaining: 0`, GitLab's `RateLimit-Remaining: 0`), else `None`.
pub(crate) fn reset_wait(
    header: &impl Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Option<Duration> {
    let remaining = header("x-ratelimit-remaining").or_else(|| header("ratelimit-remaining"));
    if remaining.as_deref().map(str::trim) != Some("0") {
        return None;
    }
    let reset = header("x-ratelimit-reset")
        .or_else(|| header("ratelimit-reset"))
        .and_then(|v| v.trim().parse::<u64>().ok())?;
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Some(Duration::from_secs(reset.saturating_sub(now) + 1))
}

/// Whether a GraphQL answer is GitHub's primary rate limit (`errors[].type: RATE_LIMITED`).
pub(crate) fn is_graphql_rate_limited(body: &str) -> bool {
    if !body.contains("RATE_LIMITED") {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("errors").and_then(|e| e.as_array()).cloned())
        .is_some_and(|errors| {
            errors
                .iter()
                .any(|e| e.get("type").and_then(serde_json::Value::as_str) == Some("RATE_LIMITED"))
        })
}

/// How long a request answered with a rate limit asking for `asked` sleeps before it asks
/// again, given the rate-limit waits it has taken (`waits`) and what its client (its run) has
/// slept on rate limits in all (`spent`); `None` when it gives up instead: a wait longer than
/// [`MAX_RATE_LIMIT_WAIT`], a request past [`RATE_LIMIT_WAITS`] waits, or a run whose
/// [`RATE_LIMIT_BUDGET`] the wait would overrun. `Retry-After: 0` sleeps
/// [`MIN_RATE_LIMIT_WAIT`].
pub(crate) fn rate_limit_sleep(asked: Duration, waits: u32, spent: Duration) -> Option<Duration> {
    let wait = asked.max(MIN_RATE_LIMIT_WAIT);
    (wait <= MAX_RATE_LIMIT_WAIT && waits < RATE_LIMIT_WAITS && spent + wait <= RATE_LIMIT_BUDGET)
        .then_some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Retry-After` reads as the webhook senders read it: seconds, or an HTTP date.
    #[test]
    fn a_rate_limit_answer_asks_to_wait_in_seconds_or_until_a_date() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_400); // 2015-10-21 07:26:40 UTC
        type Headers = &'static [(&'static str, &'static str)];
        let headers = |pairs: Headers| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let table: [(u16, Headers, Option<u64>); 6] = [
            (429, &[("retry-after", " 120 ")], Some(120)),
            (
                403,
                &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
                Some(80),
            ),
            (200, &[("retry-after", "5")], None),
            (403, &[], None),
            (429, &[], Some(DEFAULT_RATE_LIMIT_WAIT.as_secs())),
            (
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "1445412460"),
                ],
                Some(61),
            ),
        ];
        for (status, pairs, want) in table {
            let waits = match limit_of(status, headers(pairs), "{}", now) {
                Some(Limit::Wait(d)) => Some(d.as_secs()),
                Some(Limit::Secondary) => panic!("{status} {pairs:?} is no secondary limit"),
                None => None,
            };
            assert_eq!(waits, want, "{status} {pairs:?}");
        }
    }

    /// GitHub's secondary limit often names no time: it is a limit (never a refused token),
    /// held for a minute, then twice as long each time it answers again.
    #[test]
    fn a_secondary_limit_without_retry_after_holds_the_host_a_minute_then_longer() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        let none = |_: &str| None::<String>;
        let secondary = r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest"}"#;
        let abuse = r#"{"message":"You have triggered an abuse detection mechanism."}"#;
        let refused = r#"{"message":"Resource not accessible by integration"}"#;
        assert_eq!(limit_of(403, none, secondary, now), Some(Limit::Secondary));
        assert_eq!(limit_of(429, none, secondary, now), Some(Limit::Secondary));
        assert_eq!(limit_of(403, none, abuse, now), Some(Limit::Secondary));
        assert_eq!(
            limit_of(403, none, refused, now),
            None,
            "a refused permission"
        );
        assert_eq!(limit_of(200, none, secondary, now), None);
        let with_retry_after = |name: &str| (name == "retry-after").then(|| "5".to_owned());
        assert_eq!(
            limit_of(403, with_retry_after, secondary, now),
            Some(Limit::Wait(Duration::from_secs(5)))
        );
        let holds: Vec<u64> = (1..=8).map(|n| secondary_hold(n).as_secs()).collect();
        assert_eq!(holds, [60, 120, 240, 480, 960, 1920, 1920, 1920]);
        assert_eq!(secondary_hold(0).as_secs(), 60);
    }

    #[test]
    fn rate_limit_waits_are_bounded_per_request_and_per_run() {
        let s = Duration::from_secs;
        for (asked, waits, spent, want) in [
            (0, 0, 0, Some(1)),
            (0, 2, 0, Some(1)),
            (0, 3, 0, None),
            (60, 0, 0, Some(60)),
            (61, 0, 0, None),
            (30, 0, 90, Some(30)),
            (30, 0, 91, None),
            (0, 0, 119, Some(1)),
            (0, 0, 120, None),
        ] {
            assert_eq!(
                rate_limit_sleep(s(asked), waits, s(spent)),
                want.map(s),
                "{asked} s asked after {waits} waits, {spent} s spent"
            );
        }
        // A run whose every request meets `Retry-After: 0` sleeps 120 s in all, then stops.
        let (mut spent, mut requests) = (Duration::ZERO, 0);
        loop {
            requests += 1;
            let mut waits = 0;
            while let Some(wait) = rate_limit_sleep(Duration::ZERO, waits, spent) {
                spent += wait;
                waits += 1;
            }
            if waits == 0 {
                break;
            }
        }
        assert_eq!((spent, requests), (s(120), 41));
    }

    #[test]
    fn graphql_rate_limits_are_told_by_the_error_type() {
        let now = UNIX_EPOCH;
        let none = |_: &str| None::<String>;
        let limited = r#"{"errors":[{"type":"RATE_LIMITED","message":"x"}]}"#;
        assert_eq!(
            limit_of(200, none, limited, now),
            Some(Limit::Wait(DEFAULT_RATE_LIMIT_WAIT))
        );
        assert!(is_graphql_rate_limited(
            r#"{"errors":[{"type":"RATE_LIMITED","message":"API rate limit already exceeded"}]}"#
        ));
        assert!(!is_graphql_rate_limited(
            r#"{"data":{"title":"RATE_LIMITED"},"errors":[]}"#
        ));
        assert!(!is_graphql_rate_limited(r#"{"data":{"a":1}}"#));
    }
}
