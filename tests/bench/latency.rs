//! `cargo bench --bench latency`: how long a failure takes to reach the agent, measured, never
//! asserted. From "a check completes on the forge" to "the agent's message is in its inbox",
//! over 100 PRs (`PRM_BENCH_LATENCY_PRS`) on the fake GitHub answering after 50 ms, with the
//! daemon on the wall clock, sweeping every 5 s, `poll_sec` 30:
//!
//! - `polling`: the daemon learns of the failure at the PR's next poll;
//! - `nudged`: the daemon also serves webhooks, and each completion is followed at once by
//!   the signed `check_run` delivery GitHub would send.
//!
//! Each PR's head is the agent's, with one check `test` running; after the daemon's first
//! look, the checks fail one after another, spread evenly over `poll_sec` (so the polls meet
//! them at every phase), and the bench watches the inbox's `new/` folder (every 5 ms) for each
//! PR's message. It prints p50, p95 and the worst, per mode, from one run of this program.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

#[path = "../it/support/fake_github/mod.rs"]
mod fake_github;

#[path = "../it/support/fake_server.rs"]
mod fake_server;

#[path = "../it/support/http_server.rs"]
mod http_server;

#[path = "../it/support/meet.rs"]
mod meet;

#[path = "../it/support/env.rs"]
#[allow(dead_code)]
mod env;

#[path = "../it/support/daemon.rs"]
#[allow(dead_code)]
mod daemon;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use env::TestEnv;
use fake_github::Fault;

const REPO: &str = "octo/app";
const SECRET: &str = "whsec-bench";
const POLL_SEC: u64 = 30;
const LATENCY_MS: u64 = 50;

/// The daemon, on the wall clock (no `--now`), and where it serves.
struct Daemon {
    child: Child,
    said: Arc<Mutex<String>>,
}

impl Daemon {
    fn start(env: &TestEnv) -> Daemon {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
            .current_dir(env.dir.path())
            .arg("--config")
            .arg(env.config_path())
            .arg("daemon")
            .env("PRM_TEST_GITHUB_TOKEN", env.gh.token())
            .env("GITHUB_WEBHOOK_SECRET", SECRET)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env_remove("PR_MONITOR_CONFIG")
            .env_remove("PR_MONITOR_DB")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the daemon");
        let said = daemon::keep_stderr(&mut child);
        Daemon { child, said }
    }

    /// `http://127.0.0.1:PORT`, once the daemon says it serves.
    fn base(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let said = self.said.lock().unwrap().clone();
            if let Some(at) = said.find("serving on ") {
                return said[at + "serving on ".len()..]
                    .lines()
                    .next()
                    .unwrap()
                    .trim()
                    .to_owned();
            }
            assert!(Instant::now() < deadline, "the daemon never served: {said}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// The wall clock as the fake writes it.
fn wall() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`, as GitHub signs.
fn signature(body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    let hex = ring::hmac::sign(&key, body)
        .as_ref()
        .iter()
        .fold(String::new(), |mut hex, b| {
            let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
            hex
        });
    format!("sha256={hex}")
}

/// A `check_run` `completed` delivery about PR `number` at `sha`, shaped as GitHub's.
fn check_run_completed(number: u64, sha: &str) -> Vec<u8> {
    let pr = serde_json::json!({"number": number, "head": {"sha": sha, "ref": format!("feature-{number}")}});
    serde_json::to_vec(&serde_json::json!({
        "action": "completed",
        "check_run": {
            "name": "test", "head_sha": sha, "status": "completed", "conclusion": "failure",
            "pull_requests": [pr.clone()],
            "check_suite": {"head_sha": sha, "pull_requests": [pr]},
        },
        "repository": {"full_name": REPO},
    }))
    .unwrap()
}

/// The PR numbers whose message is in the inbox's `new/` folder.
fn delivered(env: &TestEnv) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(env.inbox().join("new")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .filter_map(|m| m["pr"]["number"].as_u64())
        .collect()
}

/// One mode's latencies, PR by PR.
fn measure(n: u64, nudged: bool) -> Vec<Duration> {
    let serve = if nudged {
        "serve:\n  listen: \"127.0.0.1:0\"\n"
    } else {
        ""
    };
    let env = TestEnv::with_config(&format!(
        "schedule: \"*/5 * * * * *\"\npr:\n  poll_sec: {POLL_SEC}\n{serve}"
    ));
    let started = chrono::Utc::now() - chrono::Duration::minutes(10);
    env.gh.world(|w| {
        w.set_now(&wall());
        w.auto_merge_executes = false;
        w.rate.limit = u64::from(u32::MAX >> 1);
        for i in 1..=n {
            w.pr(REPO, i)
                .author("dev")
                .head_commit(|c| c.by("fixer-bot"));
            w.check_run(REPO, i, "test")
                .in_progress()
                .started_at(started);
        }
    });
    let args: Vec<String> = (1..=n).map(|i| format!("{REPO}#{i}")).collect();
    for chunk in args.chunks(500) {
        let mut a = vec!["watch", "add", "--agent", "fixer"];
        a.extend(chunk.iter().map(String::as_str));
        env.ok(&a);
    }
    env.gh.fault(Fault::delay(LATENCY_MS).always());
    let daemon = Daemon::start(&env);
    let base = nudged.then(|| daemon.base());
    // The first look: every PR read once (its check still running).
    let deadline = Instant::now() + Duration::from_secs(600);
    while env
        .gh
        .requests()
        .count("POST /graphql PullRequestSnapshots")
        == 0
        || env
            .ok(&["status", "--json"])
            .json()
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["last_tick_at"].is_null())
    {
        assert!(Instant::now() < deadline, "the first look never ended");
        std::thread::sleep(Duration::from_millis(200));
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let gap = Duration::from_millis(POLL_SEC * 1000 / n);
    let mut completed: BTreeMap<u64, Instant> = BTreeMap::new();
    let mut arrived: BTreeMap<u64, Instant> = BTreeMap::new();
    let mut next = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(POLL_SEC * 4 + 120);
    while arrived.len() < usize::try_from(n).unwrap() && Instant::now() < deadline {
        let i = completed.len() as u64 + 1;
        if i <= n && Instant::now() >= next {
            let sha = env.gh.world(|w| {
                w.set_now(&wall());
                w.check_run(REPO, i, "test")
                    .failure()
                    .completed_at(w_now())
                    .log("error[E0425]: cannot find value `x` in this scope\n");
                w.get_pr(REPO, i).head_sha().to_owned()
            });
            completed.insert(i, Instant::now());
            if let Some(base) = &base {
                let body = check_run_completed(i, &sha);
                let _ = agent
                    .post(format!("{base}/webhooks/github"))
                    .header("X-GitHub-Event", "check_run")
                    .header("X-Hub-Signature-256", &signature(&body))
                    .send(&body[..]);
            }
            next += gap;
        }
        for pr in delivered(&env) {
            arrived.entry(pr).or_insert_with(Instant::now);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    daemon.stop();
    completed
        .iter()
        .filter_map(|(pr, at)| {
            arrived
                .get(pr)
                .map(|got| got.saturating_duration_since(*at))
        })
        .collect()
}

/// The fake's clock, as the builder takes it.
fn w_now() -> fake_github::Time {
    chrono::Utc::now()
}

/// The `p`th percentile (nearest rank) of `sorted`.
fn percentile(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * sorted.len()).div_ceil(100);
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: u64 = std::env::var("PRM_BENCH_LATENCY_PRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    println!(
        "failure-to-inbox latency: {n} PRs, fake GitHub at {LATENCY_MS} ms, sweeps every 5 s, poll_sec {POLL_SEC}"
    );
    println!(
        "{:<8} {:>9} {:>8} {:>8} {:>8}",
        "mode", "arrived", "p50", "p95", "max"
    );
    for (name, nudged) in [("polling", false), ("nudged", true)] {
        let mut got = measure(n, nudged);
        got.sort();
        println!(
            "{name:<8} {:>5}/{n:<3} {:>7.1}s {:>7.1}s {:>7.1}s",
            got.len(),
            percentile(&got, 50).as_secs_f64(),
            percentile(&got, 95).as_secs_f64(),
            got.last().copied().unwrap_or_default().as_secs_f64()
        );
    }
}
