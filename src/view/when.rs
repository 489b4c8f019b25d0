//! Times as a person reads them next to a PR: `in 4m`, `3h ago`, `now`. Pure functions of the
//! instant and the run's clock (`--now`), so every output that shows them is reproducible.

use crate::model::Instant;

/// `in 4m`, `in 30s`, `now`, `2h ago`, `3d ago`: the distance from `now` in its largest unit.
pub fn relative(t: Instant, now: Instant) -> String {
    let secs = (t - now).num_seconds();
    let span = secs.unsigned_abs();
    if span < 5 {
        return "now".to_owned();
    }
    let amount = match span {
        s if s < 60 => format!("{s}s"),
        s if s < 3_600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    };
    if secs > 0 {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// `2026-11-29 12:00:00Z`: the absolute time, for a detail view beside the relative one.
pub fn absolute(t: Instant) -> String {
    t.format("%Y-%m-%d %H:%M:%SZ").to_string()
}

/// `4m ago (2026-11-29 11:56:00Z)`, or `-` when there is no time.
pub fn both(t: Option<Instant>, now: Instant) -> String {
    t.map_or_else(
        || "-".to_owned(),
        |t| format!("{} ({})", relative(t, now), absolute(t)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::decide::tests::t0;
    use chrono::Duration;

    #[test]
    fn distances_read_in_their_largest_unit() {
        let now = t0();
        for (offset, want) in [
            (0, "now"),
            (4, "now"),
            (30, "in 30s"),
            (-30, "30s ago"),
            (240, "in 4m"),
            (299, "in 4m"),
            (-3 * 3_600, "3h ago"),
            (2 * 86_400 + 5, "in 2d"),
        ] {
            assert_eq!(relative(now + Duration::seconds(offset), now), want);
        }
        assert_eq!(
            both(Some(now - Duration::minutes(4)), now),
            "4m ago (2026-11-29 11:56:00Z)"
        );
        assert_eq!(both(None, now), "-");
    }
}
