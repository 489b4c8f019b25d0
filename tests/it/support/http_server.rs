//! The fake forges' HTTP/1.1 server on `127.0.0.1:<random port>`. Every connection is served
//! on a thread of its own from the moment it is accepted, and kept open between requests until
//! the client closes it (or sends `Connection: close`), as a real forge's front end does: a
//! client's whole pool of kept-open connections is served at once, however many it keeps.
//!
//! What this module owns: accepting, reading a request ([`Incoming`]: the head with httparse,
//! the body by `Content-Length` or chunked), writing a [`Reply`] (with `Content-Length`, and a
//! `Date` when the reply names none, as every real server sends one), counting the connections
//! it accepted, and, once stopped, closing every connection still open. What a request means
//! is the handler's.
#![allow(dead_code)] // A support API: each test binary uses a different part of it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::fake_server::{Incoming, Reply, lock};

/// How a request is answered.
pub type Serve = Arc<dyn Fn(&Incoming) -> Reply + Send + Sync>;

/// The longest request head read (a real server refuses longer ones too).
const MAX_HEAD: usize = 64 * 1024;
/// The most headers one request may have.
const MAX_HEADERS: usize = 64;

/// A listener on `127.0.0.1:<random port>`, for [`HttpServer::start`].
pub fn listener() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0")
}

/// A running server. Dropping it stops it.
pub struct HttpServer {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    /// The connections accepted so far.
    accepted: Arc<AtomicUsize>,
    /// The connections open now, by the order they were accepted: closed when the server stops.
    open: Arc<Mutex<BTreeMap<u64, TcpStream>>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Starts answering every request on `listener` with `serve`.
    pub fn start(listener: TcpListener, serve: Serve) -> Self {
        let addr = listener.local_addr().expect("a local address");
        let stopping = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(Mutex::new(BTreeMap::new()));
        let thread = {
            let state = Accepting {
                stopping: Arc::clone(&stopping),
                accepted: Arc::clone(&accepted),
                open: Arc::clone(&open),
            };
            std::thread::spawn(move || accept(&listener, &state, &serve))
        };
        HttpServer {
            addr,
            stopping,
            accepted,
            open,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// How many connections clients have opened to it so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Stops accepting and closes every open connection (a request being answered is cut).
    pub fn stop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which sees `stopping`.
        let _ = TcpStream::connect(self.addr);
        let _ = thread.join();
        for (_, stream) in std::mem::take(&mut *lock(&self.open)) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the accepting thread shares with the server.
struct Accepting {
    stopping: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    open: Arc<Mutex<BTreeMap<u64, TcpStream>>>,
}

/// Accepts connections until `stopping`, each served on its own thread.
fn accept(listener: &TcpListener, state: &Accepting, serve: &Serve) {
    for (id, stream) in (0_u64..).zip(listener.incoming()) {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        state.accepted.fetch_add(1, Ordering::SeqCst);
        // Answers leave at once: the head and body of an answer go in one write anyway, but a
        // client's next request must not wait for a delayed ACK either.
        let _ = stream.set_nodelay(true);
        let Ok(kept) = stream.try_clone() else {
            continue;
        };
        lock(&state.open).insert(id, kept);
        let (open, serve) = (Arc::clone(&state.open), Arc::clone(serve));
        std::thread::spawn(move || {
            let _ = serve_connection(stream, &serve);
            lock(&open).remove(&id);
        });
    }
}

/// Answers the requests of one connection, one after another, until the client closes it or
/// asks to.
fn serve_connection(stream: TcpStream, serve: &Serve) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut head = match read_head(&mut reader)? {
            Head::Closed => return Ok(()),
            Head::Unreadable => {
                let refused = Reply::text(400, "unreadable request");
                writer.write_all(&answer(&refused, false))?;
                return Ok(());
            }
            Head::Request(head) => head,
        };
        if head.expects_continue {
            writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }
        let body = read_body(&mut reader, &head.request)?;
        head.request.body = String::from_utf8_lossy(&body).into_owned();
        let reply = serve(&head.request);
        writer.write_all(&answer(&reply, head.request.method == "HEAD"))?;
        if !head.keep_alive {
            return Ok(());
        }
    }
}

/// What reading a request's head gave.
enum Head {
    /// The client closed the connection between requests.
    Closed,
    /// Not HTTP/1.x: answered 400 and closed, as the next request's start is unknown.
    Unreadable,
    Request(RequestHead),
}

/// A request's head: the request without its body yet, and what it asks of the connection.
struct RequestHead {
    request: Incoming,
    /// The connection stays open after the answer.
    keep_alive: bool,
    /// The client waits for `100 Continue` before sending the body.
    expects_continue: bool,
}

/// Reads the head of the next request on the connection.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<Head> {
    let mut raw = Vec::new();
    loop {
        let before = raw.len();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            return Ok(if raw.is_empty() {
                Head::Closed
            } else {
                Head::Unreadable
            });
        }
        if raw[before..] == *b"\r\n" || raw[before..] == *b"\n" {
            if before == 0 {
                // Blank lines before a request are ignored (RFC 9112 §2.2).
                raw.clear();
                continue;
            }
            break;
        }
        if raw.len() > MAX_HEAD {
            return Ok(Head::Unreadable);
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let (Ok(httparse::Status::Complete(_)), Some(method), Some(target), Some(minor)) = (
        parsed.parse(&raw),
        parsed.method,
        parsed.path,
        parsed.version,
    ) else {
        return Ok(Head::Unreadable);
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (target.to_owned(), None),
    };
    let request = Incoming {
        method: method.to_ascii_uppercase(),
        path,
        query,
        headers: parsed
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_ascii_lowercase(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
        body: String::new(),
    };
    let connection = request
        .header("connection")
        .unwrap_or_default()
        .to_ascii_lowercase();
    Ok(Head::Request(RequestHead {
        keep_alive: if minor == 0 {
            connection.contains("keep-alive")
        } else {
            !connection.contains("close")
        },
        expects_continue: request
            .header("expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue")),
        request,
    }))
}

/// Reads a request's body: chunked, of its `Content-Length`, or none.
fn read_body(reader: &mut impl BufRead, head: &Incoming) -> std::io::Result<Vec<u8>> {
    let chunked = head
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return read_chunked(reader);
    }
    let length = head
        .header("content-length")
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(body)
}

/// A chunked body, its trailer read and dropped.
fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| bad("a chunk size"))?;
        if size == 0 {
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut end = [0; 2];
        reader.read_exact(&mut end)?;
        if end != *b"\r\n" {
            return Err(bad("a chunk's end"));
        }
    }
}

/// `reply` as written on the wire: the status line, its headers, `Content-Type`,
/// `Content-Length` and `Date` (unless it names its own), and the body (none for `HEAD`, 204
/// or 304).
fn answer(reply: &Reply, head_only: bool) -> Vec<u8> {
    let reason = ureq::http::StatusCode::from_u16(reply.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", reply.status).into_bytes();
    let mut headers: Vec<(&str, String)> = reply
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    if let Some(ct) = &reply.content_type {
        headers.push(("content-type", ct.clone()));
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("date")) {
        let now = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT");
        headers.push(("date", now.to_string()));
    }
    let bodiless = matches!(reply.status, 204 | 304);
    if !bodiless {
        headers.push(("content-length", reply.body.len().to_string()));
    }
    for (k, v) in headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if !(head_only || bodiless) {
        out.extend_from_slice(&reply.body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `request` on a connection to `server` and reads until it closes.
    fn exchange(server: &HttpServer, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        stream.write_all(request).unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    fn echo() -> HttpServer {
        HttpServer::start(
            listener(),
            Arc::new(|req: &Incoming| {
                Reply::text(
                    200,
                    &format!("{} {} {:?} {}", req.method, req.path, req.query, req.body),
                )
            }),
        )
    }

    /// Two requests on one connection, the first chunked, the second of a `Content-Length`
    /// and asking to close: both are answered in order, then the connection is closed.
    #[test]
    fn requests_on_one_connection_are_answered_in_order() {
        let server = echo();
        let text = exchange(
            &server,
            b"POST /a?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;n=v\r\nde\r\n0\r\n\r\n\
              PUT /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nConnection: close\r\n\r\nfg",
        );
        let first = text.find("POST /a Some(\"x=1\") abcde").expect(&text);
        let second = text.find("PUT /b None fg").expect(&text);
        assert!(first < second, "{text}");
        assert_eq!(text.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{text}");
        assert!(text.contains("content-length: 25\r\n"), "{text}");
        assert!(text.contains("content-length: 14\r\n"), "{text}");
        assert!(text.contains("date: "), "{text}");
    }

    /// An HTTP/1.0 request is answered and its connection closed; what is not HTTP is refused
    /// with 400.
    #[test]
    fn http_1_0_closes_and_garbage_is_refused() {
        let server = echo();
        let text = exchange(&server, b"GET /old HTTP/1.0\r\n\r\n");
        assert!(text.ends_with("GET /old None "), "{text}");
        let text = exchange(&server, b"not http at all\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
    }
}
