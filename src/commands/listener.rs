//! The daemon's HTTP/1.1 listener, bounded in time and in threads: each connection is read
//! on a thread of its own under deadlines (the request line and headers within
//! [`Limits::head`], the whole request within [`Limits::whole`]), so a client that sends half
//! a request holds only its own reading thread, and only until its deadline (then 408). At
//! most [`Limits::readers`] connections are read at once (one more is answered 503 and
//! closed). A request read whole goes to one of [`Limits::workers`] handling threads, each
//! with its own handler. One request per connection (`Connection: close`); a body needs a
//! `Content-Length` (411 otherwise); one over [`Limits::max_body`] is answered 413 unread.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The largest request line and headers read.
const MAX_HEAD: usize = 64 * 1024;
/// The most headers a request may carry.
const MAX_HEADERS: usize = 64;
/// How long writing an answer may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How much a client may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The request line and headers arrive within this.
    pub head: Duration,
    /// The whole request arrives within this.
    pub whole: Duration,
    pub max_body: usize,
    /// Connections read at once.
    pub readers: usize,
    /// Requests handled at once.
    pub workers: usize,
}

/// A request read whole.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Response {
    /// A plain-text answer: `body` and a newline.
    pub fn text(status: u16, body: &str) -> Response {
        Response {
            status,
            headers: vec![("Content-Type", "text/plain; charset=utf-8".to_owned())],
            body: format!("{body}\n"),
        }
    }
}

/// What answers requests on one handling thread.
pub type Handler = Box<dyn FnMut(Request) -> Response + Send>;

/// Serves `listener` until the process ends: an accepting thread, a reading thread per
/// connection and `limits.workers` handling threads, each with a handler from `handlers`.
pub fn serve(listener: TcpListener, limits: Limits, mut handlers: impl FnMut() -> Handler) {
    let (to_workers, jobs) = mpsc::channel::<(Request, TcpStream)>();
    let jobs = Arc::new(Mutex::new(jobs));
    for _ in 0..limits.workers {
        let (jobs, mut handle) = (Arc::clone(&jobs), handlers());
        std::thread::spawn(move || {
            loop {
                let next = jobs.lock().map(|j| j.recv());
                let Ok(Ok((request, mut stream))) = next else {
                    return;
                };
                let response = handle(request);
                answer(&mut stream, &response);
            }
        });
    }
    let reading = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = match stream {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("the listener could not accept a connection: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            if reading.fetch_add(1, Ordering::SeqCst) >= limits.readers {
                reading.fetch_sub(1, Ordering::SeqCst);
                answer(&mut stream, &Response::text(503, "too many connections"));
                continue;
            }
            let (reading, to_workers) = (Arc::clone(&reading), to_workers.clone());
            std::thread::spawn(move || {
                let read = read_request(&mut stream, &limits);
                reading.fetch_sub(1, Ordering::SeqCst);
                match read {
                    Reading::Whole(request) => {
                        let _ = to_workers.send((request, stream));
                    }
                    Reading::Refused(response, unread_body) => {
                        answer(&mut stream, &response);
                        if unread_body {
                            drain(&mut stream, &limits);
                        }
                    }
                    Reading::Gone => {}
                }
            });
        }
    });
}

/// What reading a connection came to.
#[derive(Debug)]
enum Reading {
    Whole(Request),
    /// Answered so, without handling; `true` when a body may still be on its way.
    Refused(Response, bool),
    /// The client closed or the connection failed: nobody to answer.
    Gone,
}

/// Reads one request from `stream` under `limits`' deadlines.
fn read_request(stream: &mut TcpStream, limits: &Limits) -> Reading {
    let start = Instant::now();
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return refused(431, "the request head is too large", false);
        }
        match read_some(stream, &mut buf, start + limits.head) {
            Ok(0) => return Reading::Gone,
            Ok(_) => {}
            Err(e) => return timed_out_or_gone(&e),
        }
    };
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut slots);
    if !matches!(
        parsed.parse(&buf[..head_end]),
        Ok(httparse::Status::Complete(_))
    ) {
        return refused(400, "the request cannot be read", false);
    }
    let method = parsed.method.unwrap_or_default().to_owned();
    let path = parsed
        .path
        .unwrap_or_default()
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let named = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if named("Transfer-Encoding").is_some() {
        return refused(411, "a body needs a Content-Length", true);
    }
    let length = match named("Content-Length").map(str::parse::<usize>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return refused(400, "the Content-Length is not a number", false),
    };
    if length > limits.max_body {
        return refused(413, "the body is over 25 MiB", true);
    }
    let mut body = buf.split_off(head_end);
    while body.len() < length {
        match read_some(stream, &mut body, start + limits.whole) {
            Ok(0) => return Reading::Gone,
            Ok(_) => {}
            Err(e) => return timed_out_or_gone(&e),
        }
    }
    body.truncate(length);
    Reading::Whole(Request {
        method,
        path,
        headers,
        body,
    })
}

fn refused(status: u16, why: &str, unread_body: bool) -> Reading {
    Reading::Refused(Response::text(status, why), unread_body)
}

/// A read that ran past its deadline is answered 408; any other failure ends the connection.
fn timed_out_or_gone(e: &std::io::Error) -> Reading {
    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
        refused(408, "the request did not arrive in time", false)
    } else {
        Reading::Gone
    }
}

/// Reads what has arrived into `buf`, waiting at most until `deadline`.
fn read_some(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    deadline: Instant,
) -> std::io::Result<usize> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ErrorKind::TimedOut.into());
    }
    stream.set_read_timeout(Some(left))?;
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk)?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// Reads and drops what the client still sends after an early answer (until it stops, or
/// the whole request's deadline), so closing does not reset the answer away.
fn drain(stream: &mut TcpStream, limits: &Limits) {
    let deadline = Instant::now() + limits.whole;
    let mut sink = Vec::new();
    while matches!(read_some(stream, &mut sink, deadline), Ok(n) if n > 0) {
        sink.clear();
    }
}

/// Writes `response` and closes the connection (failures mean the client left).
fn answer(stream: &mut TcpStream, response: &Response) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        response.status,
        reason(response.status),
        response.body.len()
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(response.body.as_bytes()))
        .and_then(|()| stream.flush());
    let _ = stream.shutdown(Shutdown::Write);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener on a free loopback port answering every request 200 with its body.
    fn echo(limits: Limits) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        serve(listener, limits, || {
            Box::new(|r: Request| {
                Response::text(200, &format!("{} {} {}", r.method, r.path, r.body.len()))
            })
        });
        addr
    }

    const QUICK: Limits = Limits {
        head: Duration::from_millis(300),
        whole: Duration::from_millis(600),
        max_body: 16,
        readers: 4,
        workers: 1,
    };

    /// Sends `bytes` on a new connection and reads the answer until the server closes.
    fn exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(bytes).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn a_request_is_read_whole_and_answered() {
        let addr = echo(QUICK);
        let out = exchange(
            addr,
            b"POST /hook?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.ends_with("POST /hook 5\n"), "{out}");
    }

    #[test]
    fn what_the_listener_refuses_it_says_why() {
        let addr = echo(QUICK);
        for (request, status) in [
            (&b"POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n"[..], "413"),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "411",
            ),
            (b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "400"),
            (b"NOT HTTP\r\n\r\n", "400"),
            // Half a head, then half a body: each answered once its deadline passes.
            (b"GET /heal", "408"),
            (b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nhalf", "408"),
        ] {
            let out = exchange(addr, request);
            assert!(
                out.starts_with(&format!("HTTP/1.1 {status} ")),
                "{}: {out}",
                String::from_utf8_lossy(request)
            );
        }
    }

    #[test]
    fn past_its_readers_a_connection_is_answered_busy() {
        let addr = echo(Limits {
            head: Duration::from_secs(30),
            readers: 1,
            ..QUICK
        });
        let mut slow = TcpStream::connect(addr).unwrap();
        slow.write_all(b"GET / HT").unwrap();
        // The slow one is being read; the next is turned away at once.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = exchange(addr, b"GET / HTTP/1.1\r\n\r\n");
            if out.starts_with("HTTP/1.1 503 ") {
                break;
            }
            assert!(Instant::now() < deadline, "never busy: {out}");
        }
    }
}
