//! Instants: the one type of a moment on pr-monitor's clock, and its one spelling and parse.

use chrono::{DateTime, Utc};

/// An instant on pr-monitor's clock (the real one, or `--now`).
pub type Instant = DateTime<Utc>;

/// How every instant is written (database, JSON, seen keys, messages): RFC 3339 in UTC, to the
/// second. One spelling, so a stored key written by one module matches a key built by another.
pub fn stamp(t: Instant) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Reads an instant as forges, the database and `--now` write it: RFC 3339 with `Z` or any
/// offset, fractional seconds allowed, brought to UTC. The one parse: each caller decides
/// what an unreadable instant means to it (unknown, a default, or an error).
pub fn parse_instant(s: &str) -> Result<Instant, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc))
}

/// [`stamp`] of an instant that may be unknown: empty when it is.
pub fn stamp_or_empty(t: Option<Instant>) -> String {
    t.map(stamp).unwrap_or_default()
}
