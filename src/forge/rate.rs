//! The forge's primary rate limit as its answers tell it: GitHub's `x-ratelimit-limit /
//! -remaining / -reset / -used / -resource` headers (REST and GraphQL alike) and GraphQL's
//! `rateLimit { cost remaining resetAt }`, GitLab's `RateLimit-Limit / -Remaining / -Reset`.
//! The figures are kept per forge host and token identity (a fingerprint, never the token),
//! one row per resource (`core`, `graphql`, GitLab's `api`), so the next run knows how much
//! budget is left before it spends any.

/// The budget one resource had left, as the last answer that said so told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateFigures {
    /// GitHub's `x-ratelimit-resource` (`core`, `graphql`, …); `api` on GitLab.
    pub resource: String,
    pub limit: Option<u64>,
    pub remaining: u64,
    pub used: Option<u64>,
    /// When the budget is whole again, in real epoch seconds.
    pub reset_epoch: Option<i64>,
}

/// What one forge client knows about its budget: where, whose, and the last figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// The forge's host (with its port when it names one).
    pub host: String,
    /// A fingerprint of the token: tells tokens apart, never recovers one.
    pub identity: String,
    /// The resource a PR read spends (`graphql` on GitHub, `api` on GitLab).
    pub reads: &'static str,
    pub figures: Vec<RateFigures>,
    /// What this client spent on the `reads` resource so far: GraphQL points as the answers
    /// said (GitHub), requests (GitLab).
    pub spent: u64,
}

/// GitLab names no resource: its one authenticated API budget.
pub const GITLAB_RESOURCE: &str = "api";
/// GitHub's REST budget, when an answer names none.
pub const GITHUB_REST: &str = "core";
/// GitHub's GraphQL budget.
pub const GITHUB_GRAPHQL: &str = "graphql";
/// The hold a secondary limit without `Retry-After` put on a host: `used` counts the limits
/// met in a row, `reset_epoch` is when the hold ends (`remaining` 0 while held, 1 once a
/// request went through again).
pub const SECONDARY: &str = "secondary";

/// The figures of a host's secondary-limit hold: the `streak`th limit in a row, held until
/// `until_epoch` (a streak of 0 ends it).
pub fn secondary_hold(streak: u32, until_epoch: i64) -> RateFigures {
    RateFigures {
        resource: SECONDARY.to_owned(),
        limit: None,
        remaining: u64::from(streak == 0),
        used: Some(u64::from(streak)),
        reset_epoch: Some(until_epoch),
    }
}

/// The figures in one answer's headers (`header` looks a name up, case-insensitively), or
/// `None` when the answer says nothing about the limit. `gitlab` picks the header family.
pub fn from_headers(header: &dyn Fn(&str) -> Option<String>, gitlab: bool) -> Option<RateFigures> {
    let number = |name: &str| header(name).and_then(|v| v.trim().parse::<u64>().ok());
    let prefix = if gitlab { "ratelimit-" } else { "x-ratelimit-" };
    let remaining = number(&format!("{prefix}remaining"))?;
    let resource = if gitlab {
        GITLAB_RESOURCE.to_owned()
    } else {
        header("x-ratelimit-resource")
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| GITHUB_REST.to_owned())
    };
    Some(RateFigures {
        resource,
        limit: number(&format!("{prefix}limit")),
        remaining,
        used: number(&format!("{prefix}used"))
            .or_else(|| gitlab.then(|| number("ratelimit-observed")).flatten()),
        reset_epoch: number(&format!("{prefix}reset")).and_then(|r| i64::try_from(r).ok()),
    })
}

/// An answer's `rateLimit { remaining resetAt }` (the object in its data), as figures of the
/// `graphql` resource (`limit` and `used` left to the headers).
pub fn from_graphql(rate: &serde_json::Value) -> Option<RateFigures> {
    let remaining = rate.get("remaining")?.as_u64()?;
    let reset_epoch = rate
        .get("resetAt")
        .and_then(serde_json::Value::as_str)
        .and_then(|t| crate::model::parse_instant(t).ok())
        .map(|t| t.timestamp());
    Some(RateFigures {
        resource: GITHUB_GRAPHQL.to_owned(),
        limit: rate.get("limit").and_then(serde_json::Value::as_u64),
        remaining,
        used: rate.get("used").and_then(serde_json::Value::as_u64),
        reset_epoch,
    })
}

/// The points an answer's `rateLimit { cost }` says the query cost.
pub fn graphql_cost(rate: &serde_json::Value) -> Option<u64> {
    rate.get("cost")?.as_u64()
}

/// `later` over `earlier` for one resource: the later answer's figures, keeping what only
/// the earlier one said.
#[must_use]
pub fn merged(earlier: Option<&RateFigures>, later: RateFigures) -> RateFigures {
    match earlier {
        Some(e) if e.resource == later.resource => RateFigures {
            limit: later.limit.or(e.limit),
            used: later.used.or(e.used),
            reset_epoch: later.reset_epoch.or(e.reset_epoch),
            ..later
        },
        _ => later,
    }
}

/// A fingerprint of a token (64-bit FNV-1a, as 16 hex digits): the same token always gives
/// the same one, different tokens almost never share one, and it says nothing of the token.
pub fn identity(token: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in token.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The host (and port) of `url`, without credentials, path or query; empty if it does not parse.
pub fn host_of(url: &str) -> String {
    crate::address::Address::parse(url).map_or_else(|_| String::new(), |a| a.host_port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), (*v).to_owned()))
            .collect();
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name.to_ascii_lowercase())
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn github_headers_name_their_resource() {
        let h = lookup(&[
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "4990"),
            ("x-ratelimit-reset", "1764500000"),
            ("x-ratelimit-used", "10"),
            ("x-ratelimit-resource", "graphql"),
        ]);
        assert_eq!(
            from_headers(&h, false),
            Some(RateFigures {
                resource: "graphql".into(),
                limit: Some(5000),
                remaining: 4990,
                used: Some(10),
                reset_epoch: Some(1_764_500_000),
            })
        );
        let core = lookup(&[("x-ratelimit-remaining", "12")]);
        let f = from_headers(&core, false).unwrap();
        assert_eq!(
            (f.resource.as_str(), f.remaining, f.limit),
            ("core", 12, None)
        );
        assert_eq!(from_headers(&lookup(&[]), false), None);
        assert_eq!(
            from_headers(&lookup(&[("x-ratelimit-remaining", "many")]), false),
            None
        );
    }

    #[test]
    fn gitlab_headers_are_its_one_api_budget() {
        let h = lookup(&[
            ("RateLimit-Limit", "2000"),
            ("RateLimit-Observed", "3"),
            ("RateLimit-Remaining", "1997"),
            ("RateLimit-Reset", "1764500060"),
        ]);
        assert_eq!(
            from_headers(&h, true),
            Some(RateFigures {
                resource: "api".into(),
                limit: Some(2000),
                remaining: 1997,
                used: Some(3),
                reset_epoch: Some(1_764_500_060),
            })
        );
        assert_eq!(from_headers(&h, false), None, "GitHub's names only");
    }

    #[test]
    fn graphql_rate_limit_is_read_from_the_data() {
        let data = serde_json::json!({"rateLimit": {"cost": 2, "remaining": 4321, "resetAt": "2026-11-29T13:00:00Z"}, "s0": {}});
        let f = from_graphql(&data["rateLimit"]).unwrap();
        assert_eq!(
            (f.resource.as_str(), f.remaining, f.reset_epoch),
            ("graphql", 4321, Some(1_795_957_200))
        );
        assert_eq!(graphql_cost(&data["rateLimit"]), Some(2));
        assert_eq!(from_graphql(&serde_json::json!({"cost": 1})), None);
    }

    #[test]
    fn later_figures_win_and_keep_what_only_earlier_ones_said() {
        let headers = RateFigures {
            resource: "graphql".into(),
            limit: Some(5000),
            remaining: 100,
            used: Some(4900),
            reset_epoch: Some(10),
        };
        let body = RateFigures {
            resource: "graphql".into(),
            limit: None,
            remaining: 98,
            used: None,
            reset_epoch: Some(11),
        };
        assert_eq!(
            merged(Some(&headers), body),
            RateFigures {
                resource: "graphql".into(),
                limit: Some(5000),
                remaining: 98,
                used: Some(4900),
                reset_epoch: Some(11),
            }
        );
    }

    #[test]
    fn identities_tell_tokens_apart_without_showing_them() {
        let a = identity("ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        assert_eq!(a, identity("ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
        assert_ne!(a, identity("ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
        assert_eq!(a.len(), 16);
        assert!(!a.contains("ghp"));
    }

    #[test]
    fn hosts_keep_their_port_and_drop_the_rest() {
        assert_eq!(host_of("https://api.github.com/graphql"), "api.github.com");
        assert_eq!(
            host_of("http://127.0.0.1:8080/api/v4?x=1"),
            "127.0.0.1:8080"
        );
        assert_eq!(
            host_of("https://user:pw@GitLab.example/api"),
            "gitlab.example"
        );
    }
}
