//! A real HTTP listener on 127.0.0.1 for tests (tiny_http): it records every request
//! (method, path, headers, body) before answering, and answers from a scripted queue of
//! replies (500 then 200; 429 with `Retry-After`; 404 …), then 200 once the queue is empty.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::Value;

/// The path of a Slack incoming webhook, for a sink that stands in for Slack.
pub const SLACK_HOOK: &str = "/services/T0/B0/hook";

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The status it was answered with.
    pub status: u16,
}

impl Recorded {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    /// Recorded, then not answered until [`HttpSink::release`].
    held: bool,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: String::new(),
            held: false,
        }
    }

    /// A 200 that is held back after the request is recorded, until [`HttpSink::release`]
    /// (the listener answers nothing else meanwhile): for tests that kill the client mid-send.
    pub fn held() -> Self {
        Reply {
            held: true,
            ..Reply::status(200)
        }
    }

    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    #[must_use]
    pub fn body(mut self, body: &str) -> Self {
        body.clone_into(&mut self.body);
        self
    }
}

#[derive(Debug, Default)]
struct Shared {
    requests: Mutex<Vec<Recorded>>,
    script: Mutex<VecDeque<Reply>>,
    /// Set by [`HttpSink::release`]: a held reply may go.
    released: Mutex<bool>,
    release: std::sync::Condvar,
}

/// The listener. Dropping it stops it.
pub struct HttpSink {
    url: String,
    server: Arc<tiny_http::Server>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSink")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HttpSink {
    /// A listener on a free port, answering 200 until scripted otherwise.
    pub fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
        let addr = server.server_addr().to_ip().expect("an IP address");
        let shared = Arc::new(Shared::default());
        let (srv, s) = (server.clone(), shared.clone());
        let thread = std::thread::spawn(move || {
            for mut req in srv.incoming_requests() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let reply = s
                    .script
                    .lock()
                    .expect("lock")
                    .pop_front()
                    .unwrap_or_else(|| Reply::status(200).body("ok"));
                s.requests.lock().expect("lock").push(Recorded {
                    method: req.method().as_str().to_owned(),
                    path: req.url().to_owned(),
                    headers: req
                        .headers()
                        .iter()
                        .map(|h| {
                            (
                                h.field.as_str().as_str().to_owned(),
                                h.value.as_str().to_owned(),
                            )
                        })
                        .collect(),
                    body,
                    status: reply.status,
                });
                if reply.held {
                    let mut released = s.released.lock().expect("lock");
                    while !*released {
                        released = s.release.wait(released).expect("lock");
                    }
                    *released = false;
                }
                let mut resp =
                    tiny_http::Response::from_string(reply.body).with_status_code(reply.status);
                for (k, v) in &reply.headers {
                    resp = resp.with_header(
                        tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("header"),
                    );
                }
                let _ = req.respond(resp);
            }
        });
        HttpSink {
            url: format!("http://{addr}"),
            server,
            shared,
            thread: Some(thread),
        }
    }

    /// Lets a [`Reply::held`] answer go.
    pub fn release(&self) {
        *self.shared.released.lock().expect("lock") = true;
        self.shared.release.notify_all();
    }

    /// The address of `path` on this listener (`/hook` → `http://127.0.0.1:PORT/hook`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// Queues answers for the next requests, in order.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().expect("lock").extend(replies);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// The first line of the `text` of each request answered 200: a Slack post's headline.
    pub fn slack_lines(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter(|r| r.status == 200)
            .map(|r| {
                r.json()["text"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    }
}

impl Drop for HttpSink {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
