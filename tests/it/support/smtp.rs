//! A real SMTP server on 127.0.0.1 for tests: greeting, EHLO/HELO, AUTH PLAIN, MAIL, RCPT,
//! DATA (dot-unstuffed), RSET, NOOP, QUIT over `std::net`, one thread per connection. It
//! records every accepted message, can be told to answer RCPT with an error code (421/451
//! temporary, 550 permanent), can be taken down (421 at the greeting) while keeping its port,
//! and can hold back its answer to the next message it accepts ([`SmtpServer::hold_next_answer`]:
//! the message is recorded, its `250` waits for [`SmtpServer::release`]) so a client can be
//! killed after the server took a message and before the client learned it.
//!
//! [`Mail`] also reads the message back: its headers and its decoded text and HTML parts.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// One accepted message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// The user of AUTH PLAIN, if the client authenticated.
    pub user: Option<String>,
    pub password: Option<String>,
    /// The message as received, dot-unstuffed, CRLF line ends.
    pub data: String,
}

#[derive(Debug, Default)]
struct Shared {
    mails: Mutex<Vec<Mail>>,
    rcpt_reply: Mutex<Option<u16>>,
    /// Down: every connection is greeted with 421 and closed, and the port stays ours (no
    /// other test can take it while it is down).
    down: AtomicBool,
    hold: Mutex<Holding>,
    released: Condvar,
}

/// Answers to hold back, and how many were.
#[derive(Debug, Default)]
struct Holding {
    /// Accepted messages still to have their answer held.
    next: usize,
    /// Accepted messages whose answer was held so far.
    held: usize,
    released: bool,
}

/// The server. Dropping it stops it.
#[derive(Debug)]
pub struct SmtpServer {
    port: u16,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

impl SmtpServer {
    /// A server on a free port.
    pub fn start() -> Self {
        Self::listen(TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0"))
    }

    fn listen(listener: TcpListener) -> Self {
        let port = listener.local_addr().expect("addr").port();
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || {
                        let _ = session(conn, &s);
                    });
                }
            }
        });
        SmtpServer {
            port,
            shared,
            stop,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Plain SMTP to this server.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Answer every RCPT with `code` (421, 451, 550 …) instead of 250.
    pub fn reject_rcpt(&self, code: u16) {
        *self.shared.rcpt_reply.lock().expect("lock") = Some(code);
    }

    /// Takes the service down (421 at the greeting) or brings it back up.
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
    }

    /// The next message accepted is recorded, and its `250` held until [`SmtpServer::release`]
    /// (or a minute).
    pub fn hold_next_answer(&self) {
        let mut h = self.shared.hold.lock().expect("lock");
        h.next = 1;
        h.released = false;
    }

    /// How many accepted messages had their answer held so far.
    pub fn held(&self) -> usize {
        self.shared.hold.lock().expect("lock").held
    }

    /// Lets held answers go, and holds no more.
    pub fn release(&self) {
        let mut h = self.shared.hold.lock().expect("lock");
        h.next = 0;
        h.released = true;
        self.shared.released.notify_all();
    }

    /// The messages accepted so far.
    pub fn mails(&self) -> Vec<Mail> {
        self.shared.mails.lock().expect("lock").clone()
    }

    /// The subjects of the messages accepted so far.
    pub fn subjects(&self) -> Vec<String> {
        self.mails()
            .iter()
            .filter_map(|m| m.header("Subject"))
            .collect()
    }

    /// A config's `notify:` block sending email to `owner@example.com` through this server.
    pub fn notify_config(&self) -> String {
        format!(
            "notify:\n  email:\n    smtp_url: smtp://127.0.0.1:{}\n    from: pr-monitor@example.com\n    to: [owner@example.com]\n",
            self.port
        )
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            // Wake the accept loop so it sees the flag and drops the listener.
            let _ = TcpStream::connect(("127.0.0.1", self.port));
            let _ = thread.join();
        }
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn reply(w: &mut TcpStream, text: &str) -> std::io::Result<()> {
    w.write_all(text.as_bytes())?;
    w.write_all(b"\r\n")
}

fn path_arg(line: &str) -> String {
    let start = line.find('<').map_or(line.len(), |i| i + 1);
    let end = line.rfind('>').unwrap_or(line.len()).max(start);
    line[start..end].to_owned()
}

/// `AUTH PLAIN` (its initial response on the line, or asked for): the user and password, or
/// none when the mechanism or the response is refused (said to the client).
fn auth_plain(
    cmd: &str,
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
) -> std::io::Result<Option<(String, String)>> {
    let mut parts = cmd.split(' ').skip(1);
    let mech = parts.next().unwrap_or("").to_ascii_uppercase();
    let mut initial = parts.next().map(str::to_owned);
    if mech != "PLAIN" {
        reply(w, "504 5.5.4 only PLAIN")?;
        return Ok(None);
    }
    if initial.is_none() {
        reply(w, "334 ")?;
        let mut l = String::new();
        r.read_line(&mut l)?;
        initial = Some(l.trim().to_owned());
    }
    let decoded = base64_decode(&initial.unwrap_or_default());
    let fields: Vec<String> = decoded
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if fields.len() == 3 {
        reply(w, "235 2.7.0 Authentication successful")?;
        Ok(Some((fields[1].clone(), fields[2].clone())))
    } else {
        reply(w, "501 5.5.2 malformed AUTH PLAIN")?;
        Ok(None)
    }
}

/// The message after `DATA`, up to the lone `.` (dot-stuffing undone); none when the client
/// hung up first.
fn read_data(r: &mut BufReader<TcpStream>) -> std::io::Result<Option<String>> {
    let mut data = String::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l)? == 0 {
            return Ok(None);
        }
        if l == ".\r\n" || l == ".\n" {
            return Ok(Some(data));
        }
        data.push_str(l.strip_prefix('.').unwrap_or(&l));
    }
}

/// When the test asked to hold the next messages, the session waits (up to a minute) before
/// answering the message just taken, until the test releases them.
fn hold_if_asked(shared: &Shared) {
    let mut h = shared.hold.lock().expect("lock");
    if h.next > 0 {
        h.next -= 1;
        h.held += 1;
        let (h, _) = shared
            .released
            .wait_timeout_while(h, std::time::Duration::from_secs(60), |h| !h.released)
            .expect("lock");
        drop(h);
    } else {
        drop(h);
    }
}

fn session(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut w = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    if shared.down.load(Ordering::SeqCst) {
        return reply(&mut w, "421 4.3.2 sink.test service not available");
    }
    reply(&mut w, "220 sink.test ESMTP test server")?;
    let (mut from, mut to, mut auth) = (None::<String>, Vec::<String>::new(), None);
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end_matches(['\r', '\n']);
        let verb = cmd.split(' ').next().unwrap_or("").to_ascii_uppercase();
        match verb.as_str() {
            "EHLO" => reply(&mut w, "250-sink.test\r\n250-8BITMIME\r\n250 AUTH PLAIN")?,
            "HELO" | "NOOP" => reply(&mut w, "250 OK")?,
            "AUTH" => {
                if let Some(login) = auth_plain(cmd, &mut r, &mut w)? {
                    auth = Some(login);
                }
            }
            "MAIL" => {
                from = Some(path_arg(cmd));
                to.clear();
                reply(&mut w, "250 2.1.0 OK")?;
            }
            "RCPT" => match *shared.rcpt_reply.lock().expect("lock") {
                Some(421) => {
                    reply(&mut w, "421 4.3.2 service shutting down")?;
                    return w.shutdown(Shutdown::Both);
                }
                Some(code) if code >= 500 => reply(&mut w, &format!("{code} 5.1.1 no such user"))?,
                Some(code) => reply(&mut w, &format!("{code} 4.3.0 try again later"))?,
                None => {
                    to.push(path_arg(cmd));
                    reply(&mut w, "250 2.1.5 OK")?;
                }
            },
            "DATA" => {
                if from.is_none() || to.is_empty() {
                    reply(&mut w, "503 5.5.1 need MAIL and RCPT first")?;
                    continue;
                }
                reply(&mut w, "354 end with <CRLF>.<CRLF>")?;
                let Some(data) = read_data(&mut r)? else {
                    return Ok(());
                };
                shared.mails.lock().expect("lock").push(Mail {
                    from: from.take().unwrap_or_default(),
                    to: std::mem::take(&mut to),
                    user: auth.as_ref().map(|a| a.0.clone()),
                    password: auth.as_ref().map(|a| a.1.clone()),
                    data,
                });
                hold_if_asked(shared);
                reply(&mut w, "250 2.0.0 queued")?;
            }
            "RSET" => {
                from = None;
                to.clear();
                reply(&mut w, "250 OK")?;
            }
            "QUIT" => {
                reply(&mut w, "221 2.0.0 bye")?;
                return Ok(());
            }
            _ => reply(&mut w, "502 5.5.2 unknown command")?,
        }
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut out, mut acc, mut bits) = (Vec::new(), 0_u32, 0);
    for c in s.bytes() {
        let Some(v) = ALPHABET.iter().position(|a| *a == c) else {
            continue;
        };
        acc = (acc << 6) | u32::try_from(v).unwrap();
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).unwrap());
        }
    }
    out
}

fn quoted_printable_decode(s: &str) -> String {
    let mut out = Vec::new();
    for line in s.split("\r\n") {
        let (body, soft) = match line.strip_suffix('=') {
            Some(b) => (b, true),
            None => (line, false),
        };
        let bytes = body.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'='
                && i + 2 < bytes.len()
                && let Ok(b) = u8::from_str_radix(&body[i + 1..i + 3], 16)
            {
                out.push(b);
                i += 3;
                continue;
            }
            out.push(bytes[i]);
            i += 1;
        }
        if !soft {
            out.extend_from_slice(b"\r\n");
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes RFC 2047 encoded words (`=?utf-8?b?…?=`, `=?utf-8?q?…?=`) in a header value; the
/// space between two encoded words is dropped, as the RFC says.
fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut after_word = false;
    while let Some(start) = rest.find("=?") {
        let (before, tail) = rest.split_at(start);
        let word = tail[2..].splitn(3, '?').collect::<Vec<_>>();
        let Some(end) = word.get(2).and_then(|t| t.find("?=")) else {
            break;
        };
        if !(after_word && before.trim().is_empty()) {
            out.push_str(before);
        }
        let text = &word[2][..end];
        let decoded = if word[1].eq_ignore_ascii_case("b") {
            String::from_utf8_lossy(&base64_decode(text)).into_owned()
        } else {
            quoted_printable_decode(&text.replace('_', " "))
        };
        out.push_str(&decoded);
        let consumed = 2 + word[0].len() + 1 + word[1].len() + 1 + end + 2;
        rest = &tail[consumed..];
        after_word = true;
    }
    out.push_str(rest);
    out
}

impl Mail {
    /// The value of the top-level header `name` (unfolded).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next().unwrap_or("");
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.split("\r\n").find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| decode_words(v.trim()))
        })
    }

    /// The decoded body of the first MIME part of `content_type` (`text/plain`, `text/html`).
    pub fn part(&self, content_type: &str) -> Option<String> {
        let boundary = self
            .header("Content-Type")?
            .split("boundary=")
            .nth(1)?
            .trim_matches('"')
            .to_owned();
        self.data
            .split(&format!("--{boundary}"))
            .skip(1)
            .find_map(|part| {
                let (head, body) = part.trim_start_matches("\r\n").split_once("\r\n\r\n")?;
                let head = head.to_ascii_lowercase();
                if !head.contains(&format!("content-type: {content_type}")) {
                    return None;
                }
                let body = body.trim_end_matches("\r\n");
                Some(if head.contains("content-transfer-encoding: base64") {
                    String::from_utf8_lossy(&base64_decode(body)).into_owned()
                } else if head.contains("content-transfer-encoding: quoted-printable") {
                    quoted_printable_decode(body)
                } else {
                    body.to_owned()
                })
            })
    }
}
