//! A real headless Chromium driven through the DevTools protocol, for tests that must measure
//! a page from its DOM: one browser per test, a fresh profile, every event kept (network
//! requests, console messages, exceptions) so a test can assert on what the page did.
//!
//! `Chromium::start` returns `None` (and the test prints why it skipped) only when no Chromium
//! is installed; `.ci/run` installs Debian's `chromium`.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// A running headless Chromium with one page attached.
pub struct Chromium {
    child: Child,
    socket: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    /// Every event received so far, in order.
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

fn binary() -> Option<String> {
    if let Ok(path) = std::env::var("CHROMIUM") {
        return Some(path);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(str::to_owned)
}

impl Chromium {
    /// Starts Chromium, or `None` when none is installed.
    pub fn start() -> Option<Chromium> {
        let binary = binary()?;
        let profile = tempfile::tempdir().expect("a profile dir");
        let mut child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let ws = loop {
            let line = lines
                .next()
                .expect("chromium printed its DevTools address")
                .expect("read stderr");
            if let Some(at) = line.find("ws://") {
                break line[at..].trim().to_owned();
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let authority = ws
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("host:port")
            .to_owned();
        let stream = TcpStream::connect(&authority).expect("connect to DevTools");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let (socket, _) = tungstenite::client(ws.as_str(), stream).expect("WebSocket handshake");
        let mut browser = Chromium {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let attached = browser.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        attached["sessionId"]
            .as_str()
            .expect("a session")
            .clone_into(&mut browser.session);
        for domain in [
            "Page.enable",
            "Network.enable",
            "Runtime.enable",
            "Log.enable",
        ] {
            browser.call(domain, json!({}));
        }
        Some(browser)
    }

    fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method});
        msg["params"] = params;
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.socket
            .send(Message::text(msg.to_string()))
            .expect("send to DevTools");
        loop {
            let v = self.read();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.socket.read().expect("read from DevTools") {
                Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
                Message::Close(_) => panic!("DevTools closed the connection"),
                _ => {}
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// A command on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(&session))
    }

    /// Loads `url` at `width`×`height` CSS pixels and returns once its load event fired.
    pub fn load(&mut self, url: &str, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}),
        );
        self.call("Page.navigate", json!({"url": url}));
        while !self
            .events
            .iter()
            .any(|e| e["method"] == "Page.loadEventFired")
        {
            let v = self.read();
            self.events.push(v);
        }
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
    }

    /// Evaluates `expression` in the page and returns its value (by value, as JSON).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    /// Events of one method.
    pub fn events_of(&self, method: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["method"] == method)
            .collect()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
