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
fn paths_drop_signed_query_strings() {
    assert_eq!(path_of("https://blob.example/logs/1?sig=secret"), "/logs/1");
}
