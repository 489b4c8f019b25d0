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

/// A server on 127.0.0.1 that answers each request only once a burst of `burst` requests is
/// there together (or after a bound no passing run reaches), every connection on its own
/// thread and kept open, and counts the connections it accepted.
struct BurstServer {
    port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stopping: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl BurstServer {
    fn start(burst: usize) -> Self {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::{Arc, Condvar, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stopping = Arc::new(AtomicBool::new(false));
        let came = Arc::new((Mutex::new(0_usize), Condvar::new()));
        let (counted, stop) = (Arc::clone(&accepted), Arc::clone(&stopping));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let came = Arc::clone(&came);
                std::thread::spawn(move || answer_in_bursts(stream.unwrap(), burst, &came));
            }
        });
        BurstServer {
            port,
            accepted,
            stopping,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for BurstServer {
    fn drop(&mut self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Answers the bodiless requests of one connection, each once its burst is complete.
fn answer_in_bursts(
    stream: std::net::TcpStream,
    burst: usize,
    came: &(std::sync::Mutex<usize>, std::sync::Condvar),
) {
    use std::io::{BufRead, Write};
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => {}
            }
        }
        let (count, met) = came;
        let mut n = count.lock().unwrap();
        *n += 1;
        let complete = n.div_ceil(burst) * burst;
        met.notify_all();
        drop(
            met.wait_timeout_while(n, Duration::from_secs(5), |n| *n < complete)
                .unwrap(),
        );
        if writer
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .is_err()
        {
            return;
        }
    }
}

/// A forge client keeps as many idle connections to a host as it has requests in flight: a
/// second burst of eight reads finds the first burst's eight connections open and opens none
/// (a client keeping ureq's default of three would open five more).
#[test]
fn a_burst_of_reads_finds_the_last_bursts_connections_open() {
    let server = BurstServer::start(MAX_IN_FLIGHT);
    let client = HttpClient::without_github_headers("t".to_owned());
    let url = format!("http://127.0.0.1:{}/x", server.port);
    for _ in 0..2 {
        std::thread::scope(|s| {
            for _ in 0..MAX_IN_FLIGHT {
                s.spawn(|| {
                    let resp = client.send("GET", &url, None, Idempotency::Retry);
                    assert_eq!(resp.map(|r| r.status).ok(), Some(200));
                });
            }
        });
    }
    assert_eq!(client.requests(), 16);
    assert_eq!(server.accepted(), MAX_IN_FLIGHT);
}
