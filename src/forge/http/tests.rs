use super::*;

#[test]
fn only_https_or_loopback_http_is_allowed() {
    for ok in [
        "https://api.github.com",
        "http://127.0.0.1:8080/graphql",
        "http://localhost/x",
        "http://[::1]:9/",
    ] {
        assert!(check_url(ok).is_ok(), "{ok}");
    }
    for bad in [
        "http://example.com",
        "http://10.0.0.1/",
        "ftp://x",
        "http://127.0.0.1.evil.com/",
    ] {
        assert!(check_url(bad).is_err(), "{bad}");
    }
}

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
    let table: [(u16, Headers, Option<u64>); 5] = [
        (429, &[("retry-after", " 120 ")], Some(120)),
        (
            403,
            &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
            Some(80),
        ),
        (200, &[("retry-after", "5")], None),
        (403, &[], None),
        (429, &[], Some(DEFAULT_RATE_LIMIT_WAIT.as_secs())),
    ];
    for (status, pairs, want) in table {
        assert_eq!(
            rate_limit_wait(status, headers(pairs), now).map(|d| d.as_secs()),
            want,
            "{status} {pairs:?}"
        );
    }
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
fn echoed_credentials_never_reach_an_error() {
    let echoed =
        "bad gateway; request was GET /x\nAuthorization: token 0f1e2d3c4b5a6978\nAccept: */*";
    assert_eq!(
        error_message(echoed),
        "bad gateway; request was GET /x\nAuthorization: ***\nAccept: */*"
    );
    assert_eq!(
        error_message(
            r#"{"message":"denied","headers":{"authorization":"Bearer abc","private-token":"glpat-x"}}"#
        ),
        "denied"
    );
    assert_eq!(
        error_message(r#"{"error":"echo: PRIVATE-TOKEN: glpat-sentinel, x"}"#),
        "echo: PRIVATE-TOKEN: ***, x"
    );
}

#[test]
fn error_messages_come_from_the_json_body() {
    assert_eq!(
        error_message(r#"{"message":"Not Found","documentation_url":"x"}"#),
        "Not Found"
    );
    assert_eq!(error_message("Retry later\n"), "Retry later");
}

#[test]
fn graphql_rate_limits_are_told_by_the_error_type() {
    assert!(is_graphql_rate_limited(
        r#"{"errors":[{"type":"RATE_LIMITED","message":"API rate limit already exceeded"}]}"#
    ));
    assert!(!is_graphql_rate_limited(
        r#"{"data":{"title":"RATE_LIMITED"},"errors":[]}"#
    ));
    assert!(!is_graphql_rate_limited(r#"{"data":{"a":1}}"#));
}

#[test]
fn paths_drop_signed_query_strings() {
    assert_eq!(path_of("https://blob.example/logs/1?sig=secret"), "/logs/1");
}
