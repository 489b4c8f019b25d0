//! Driving a running `pr-monitor daemon` from a test on the real clock: waiting for what it
//! makes the fake GitHub see, and stopping it the way systemd does.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::fake_github::FakeGitHub;

/// Keeps what `daemon` (spawned with `stderr(Stdio::piped())`) says on standard error, line
/// by line, as it says it.
pub fn keep_stderr(daemon: &mut Child) -> Arc<Mutex<String>> {
    let said = Arc::new(Mutex::new(String::new()));
    let stderr = daemon.stderr.take().expect("a piped stderr");
    let keep = said.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let mut s = keep.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    said
}

/// Waits (at most 30 s) until `done` holds; panics with `what` and the daemon's standard
/// error when it does not, or when the daemon exits first.
pub fn wait_until(daemon: &mut Child, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        if Instant::now() > deadline || daemon.try_wait().unwrap().is_some() {
            let _ = daemon.kill();
            let out = daemon.stderr.take().map(std::io::read_to_string);
            panic!("{what} never happened; the daemon said: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the fake logged a request sent with `token` that was answered `status`.
pub fn sent_with(gh: &FakeGitHub, token: &str, status: u16) -> bool {
    let header = format!("Bearer {token}");
    gh.requests()
        .entries
        .iter()
        .any(|r| r.status == status && r.authorization.as_deref() == Some(header.as_str()))
}

/// SIGTERM, then expects a clean exit.
pub fn stop(mut daemon: Child) {
    let pid = daemon.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    assert_eq!(daemon.wait().unwrap().code(), Some(0));
}
