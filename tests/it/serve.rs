//! The daemon's listener (`serve:`), end to end over HTTP on 127.0.0.1: webhook deliveries
//! nudge watched PRs, and the daemon serves its metrics, page and health.
//!
//! Every daemon here sweeps on a yearly schedule with a fixed clock (`--now`): after its first
//! sweep, nothing but a nudge makes a watched PR due again, so a read after a delivery is the
//! delivery's doing, and no read is the proof that a refused one changed nothing.

// The metrics compared are whole numbers, exact in an f64.
#![allow(clippy::float_cmp)]

use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::GitLabEnv;
use crate::support::forge::FakeForge as _;

const REPO: &str = "octo/app";
const SECRET: &str = "whsec-4f1c9a0be27d";
const GITLAB_TOKEN: &str = "glwt-77ab21c04e9f";
const CONFIG: &str = "schedule: \"0 0 0 1 1 *\"\nserve:\n  listen: \"127.0.0.1:0\"\n";

/// A running daemon and what it said on standard error.
struct Daemon {
    child: Child,
    base: String,
    said: Arc<Mutex<String>>,
}

impl Daemon {
    fn start(env: &TestEnv) -> Daemon {
        Self::start_with(
            env,
            &[
                ("GITHUB_WEBHOOK_SECRET", SECRET),
                ("GITLAB_WEBHOOK_TOKEN", GITLAB_TOKEN),
            ],
        )
    }

    /// Starts the daemon with `secrets` in its environment (and no other webhook secret).
    fn start_with(env: &TestEnv, secrets: &[(&str, &str)]) -> Daemon {
        let mut child = env
            .command_for(&["daemon"])
            .env_remove("GITHUB_WEBHOOK_SECRET")
            .env_remove("GITLAB_WEBHOOK_TOKEN")
            .envs(secrets.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the daemon");
        let said = crate::support::daemon::keep_stderr(&mut child);
        let mut daemon = Daemon {
            child,
            base: String::new(),
            said,
        };
        daemon.wait("the daemon says where it serves", |d| {
            d.said().contains("serving on http://")
        });
        let said = daemon.said();
        let at = said.find("serving on http://").unwrap() + "serving on ".len();
        said[at..]
            .lines()
            .next()
            .unwrap()
            .trim()
            .clone_into(&mut daemon.base);
        daemon.wait("the first sweep", |d| d.get("/healthz").0 == 200);
        daemon
    }

    fn said(&self) -> String {
        self.said.lock().unwrap().clone()
    }

    /// Waits (at most 30 s) until `done` holds.
    fn wait(&mut self, what: &str, done: impl Fn(&Daemon) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done(self) {
            if Instant::now() > deadline || self.child.try_wait().unwrap().is_some() {
                let _ = self.child.kill();
                panic!("{what} never happened; the daemon said:\n{}", self.said());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn get(&self, path: &str) -> (u16, String, String) {
        let mut resp = agent()
            .get(format!("{}{path}", self.base))
            .call()
            .expect("GET");
        let kind = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        (resp.status().as_u16(), body, kind)
    }

    fn post(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> u16 {
        let mut req = agent().post(format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send(body).expect("POST").status().as_u16()
    }

    /// Posts a GitHub delivery of `event`, signed with `secret`.
    fn github(&self, event: &str, body: &[u8], secret: &str) -> u16 {
        self.post(
            "/webhooks/github",
            &[
                ("X-GitHub-Event", event),
                ("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"),
                ("X-Hub-Signature-256", &signature(secret, body)),
                ("Content-Type", "application/json"),
            ],
            body,
        )
    }

    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        assert_eq!(
            self.child.wait().unwrap().code(),
            Some(0),
            "{}",
            self.said()
        );
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`, as GitHub signs.
fn signature(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let tag = ring::hmac::sign(&key, body);
    let hex = tag.as_ref().iter().fold(String::new(), |mut hex, b| {
        let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
        hex
    });
    format!("sha256={hex}")
}

/// The `check_run` delivery of `tests/fixtures/github/webhooks`, about PR `number` at `sha`.
fn check_run_completed(number: u64, sha: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/webhooks/check_run.completed.json"
    );
    let mut event: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let run = &mut event["check_run"];
    run["head_sha"] = json!(sha);
    run["check_suite"]["head_sha"] = json!(sha);
    for pointer in ["/pull_requests/0", "/check_suite/pull_requests/0"] {
        let pr = run.pointer_mut(pointer).unwrap();
        pr["number"] = json!(number);
        pr["head"]["sha"] = json!(sha);
    }
    serde_json::to_vec_pretty(&event).unwrap()
}

fn head(env: &TestEnv, number: u64) -> String {
    env.gh
        .world(|w| w.get_pr(REPO, number).head_sha().to_owned())
}

/// Whether any request since the log was last cleared was about PR `number`.
fn read_since_cleared(env: &TestEnv, number: u64) -> bool {
    env.gh
        .requests()
        .entries
        .iter()
        .any(|r| r.prs.iter().any(|(repo, n)| repo == REPO && *n == number))
}

#[test]
fn a_signed_check_run_makes_its_pr_due_at_once_and_a_refused_one_changes_nothing() {
    let env = TestEnv::with_config(CONFIG);
    env.gh.world(|w| {
        for n in [1, 2] {
            w.pr(REPO, n);
            w.check_run(REPO, n, "lint").in_progress();
        }
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env.ok(&["watch", "add", "octo/app#2"]);
    let mut daemon = Daemon::start(&env);
    assert_eq!(env.pills("octo/app#1")["ci"], json!(false));

    // Both checks fail on the forge; the yearly schedule would not look for a year.
    env.gh.world(|w| {
        for n in [1, 2] {
            w.update_check_run(REPO, n, "lint").failure();
        }
    });
    env.gh.clear_requests();
    let about_1 = check_run_completed(1, &head(&env, 1));
    // Refused: a wrong secret, no signature, a body changed after signing.
    assert_eq!(daemon.github("check_run", &about_1, "not-the-secret"), 401);
    assert_eq!(
        daemon.post(
            "/webhooks/github",
            &[("X-GitHub-Event", "check_run")],
            &about_1
        ),
        401
    );
    let mut tampered = about_1.clone();
    tampered.push(b'\n');
    assert_eq!(
        daemon.post(
            "/webhooks/github",
            &[
                ("X-GitHub-Event", "check_run"),
                ("X-Hub-Signature-256", &signature(SECRET, &about_1)),
            ],
            &tampered
        ),
        401
    );
    // Accepted, about PR 2: it is read and its pill lights, while PR 1, which the refused
    // deliveries named before it, is not read at all.
    let about_2 = check_run_completed(2, &head(&env, 2));
    assert_eq!(daemon.github("check_run", &about_2, SECRET), 202);
    daemon.wait("PR 2 read after its delivery", |_| {
        env.pills("octo/app#2")["ci"] == json!(true)
    });
    assert!(
        !read_since_cleared(&env, 1),
        "{:?}",
        env.gh.requests().counts()
    );
    assert_eq!(env.pills("octo/app#1")["ci"], json!(false));

    // Accepted, about PR 1: read at once.
    assert_eq!(daemon.github("check_run", &about_1, SECRET), 202);
    daemon.wait("PR 1 read after its delivery", |_| {
        env.pills("octo/app#1")["ci"] == json!(true)
    });
    daemon.stop();
}

#[test]
fn a_replayed_or_stale_delivery_causes_no_action_the_read_would_not() {
    let env = TestEnv::with_config(CONFIG);
    env.gh.world(|w| {
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let mut daemon = Daemon::start(&env);
    assert_eq!(env.pills("octo/app#1")["ci"], json!(true));
    let history = env.history("octo/app#1");

    // The same delivery twice, then one about a head the PR no longer has (out of order):
    // each is read, and the read finds nothing new.
    let delivery = check_run_completed(1, &head(&env, 1));
    for body in [
        delivery.clone(),
        delivery,
        check_run_completed(1, "0123456789abcdef0123456789abcdef01234567"),
    ] {
        env.gh.clear_requests();
        assert_eq!(daemon.github("check_run", &body, SECRET), 202);
        daemon.wait("a read after the delivery", |_| read_since_cleared(&env, 1));
    }
    assert_eq!(env.history("octo/app#1"), history);
    assert!(env.gh.requests().writes().is_empty());
    daemon.stop();
}

#[test]
fn unknown_events_and_oversized_bodies_change_nothing() {
    let env = TestEnv::with_config(CONFIG);
    env.with_pr(REPO, 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    let daemon = Daemon::start(&env);
    env.gh.clear_requests();
    let star = br#"{"action": "created", "repository": {"full_name": "octo/app"}}"#;
    assert_eq!(daemon.github("star", star, SECRET), 202);
    assert_eq!(
        daemon.github("ping", br#"{"zen": "Design for failure."}"#, SECRET),
        202
    );
    let huge = vec![b' '; 25 * 1024 * 1024 + 1];
    assert_eq!(daemon.github("check_run", &huge, SECRET), 413);
    assert_eq!(daemon.post("/webhooks/github", &[], b"{}"), 401);
    assert_eq!(daemon.get("/webhooks/github").0, 405);
    assert_eq!(daemon.get("/nothing-here").0, 404);
    // A GitLab delivery needs GitLab's token.
    let note = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gitlab/webhooks/note_merge_request.json"
    ))
    .unwrap();
    let gitlab = |token: &str| {
        daemon.post(
            "/webhooks/gitlab",
            &[("X-Gitlab-Event", "Note Hook"), ("X-Gitlab-Token", token)],
            &note,
        )
    };
    assert_eq!(gitlab("wrong"), 401);
    assert_eq!(gitlab(SECRET), 401);
    assert_eq!(gitlab(GITLAB_TOKEN), 202);
    assert!(!read_since_cleared(&env, 1));
    daemon.stop();
}

#[test]
fn the_daemon_serves_the_metrics_the_page_and_its_health() {
    let env = TestEnv::with_config(&format!(
        "{CONFIG}report:\n  html_path: out/status.html\n  metrics_path: out/pr_monitor.prom\n"
    ));
    env.gh.world(|w| {
        w.pr(REPO, 1).title("Fix the parser");
        w.check_run(REPO, 1, "lint").failure();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let mut daemon = Daemon::start(&env);
    let out = env.dir.path().join("out");

    // The metrics: Prometheus text, the file's very series and values.
    let (status, metrics, kind) = daemon.get("/metrics");
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let served = crate::metrics_file::parse(&metrics);
    assert_eq!(served["pr_monitor_pills{pill=\"ci\"}"], 1.0);
    assert_eq!(
        metrics,
        std::fs::read_to_string(out.join("pr_monitor.prom")).unwrap()
    );

    // The page, rendered on request: the file's page, under the page's own policy.
    let mut page = agent().get(format!("{}/", daemon.base)).call().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let html = page.body_mut().read_to_string().unwrap();
    assert!(
        html.contains("PR #1 ✗ 1 failing") && html.contains("Fix the parser"),
        "{html}"
    );
    assert_eq!(
        html,
        std::fs::read_to_string(out.join("status.html")).unwrap()
    );

    // Health: the last sweep's time and outcome; unhealthy after a failed sweep, healthy
    // again after the next one succeeds.
    let health = |d: &Daemon| {
        let (status, body, _) = d.get("/healthz");
        (status, serde_json::from_str::<Value>(&body).unwrap())
    };
    let (status, body) = health(&daemon);
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"ok": true, "last_sweep_at": env.now, "last_sweep_ok": true})
    );
    env.gh.fault(
        crate::support::fake_github::Fault::status(502)
            .on("POST /graphql")
            .always(),
    );
    let delivery = check_run_completed(1, &head(&env, 1));
    assert_eq!(daemon.github("check_run", &delivery, SECRET), 202);
    daemon.wait("an unhealthy answer after the failed sweep", |d| {
        health(d).0 == 503
    });
    assert_eq!(health(&daemon).1["last_sweep_ok"], json!(false));
    env.gh.clear_faults();
    assert_eq!(daemon.github("check_run", &delivery, SECRET), 202);
    daemon.wait("a healthy answer after the next sweep", |d| {
        health(d).0 == 200
    });
    daemon.stop();
}

#[test]
fn clients_that_send_half_a_request_do_not_stop_the_daemon_answering() {
    use std::io::Write as _;
    let env = TestEnv::with_config(CONFIG);
    env.with_pr(REPO, 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    let mut daemon = Daemon::start(&env);
    daemon.wait("the first sweep", |d| d.get("/healthz").0 == 200);
    let addr = daemon.base.trim_start_matches("http://").to_owned();
    // More slow clients than the daemon has threads answering: some send a head and half
    // the body it announces, some half a head; none sends the rest.
    let slow: Vec<std::net::TcpStream> = (0..12)
        .map(|i| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            let half: &[u8] = if i % 3 == 0 {
                b"GET /heal"
            } else {
                b"POST /webhooks/github HTTP/1.1\r\nHost: a\r\nX-GitHub-Event: ping\r\nContent-Length: 100000\r\n\r\n{\"zen\""
            };
            s.write_all(half).unwrap();
            s
        })
        .collect();
    let patient = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
        .build();
    let patient: ureq::Agent = patient.into();
    let health = patient
        .get(format!("{}/healthz", daemon.base))
        .call()
        .expect("/healthz answers while slow clients hold their connections");
    assert_eq!(health.status().as_u16(), 200);
    let delivery = check_run_completed(1, &head(&env, 1));
    let accepted = patient
        .post(format!("{}/webhooks/github", daemon.base))
        .header("X-GitHub-Event", "check_run")
        .header("X-Hub-Signature-256", &signature(SECRET, &delivery))
        .send(&delivery[..])
        .expect("a delivery is answered while slow clients hold their connections");
    assert_eq!(accepted.status().as_u16(), 202);
    drop(slow);
    daemon.stop();
}

#[test]
fn an_unset_or_empty_secret_refuses_every_delivery() {
    let env = TestEnv::with_config(CONFIG);
    env.with_pr(REPO, 1);
    env.ok(&["watch", "add", "octo/app#1"]);
    let daemon = Daemon::start_with(&env, &[("GITLAB_WEBHOOK_TOKEN", "")]);
    let said = daemon.said();
    assert!(
        said.contains("`GITHUB_WEBHOOK_SECRET` is not set"),
        "{said}"
    );
    assert!(said.contains("`GITLAB_WEBHOOK_TOKEN` is not set"), "{said}");
    let body = check_run_completed(1, &head(&env, 1));
    assert_eq!(daemon.github("check_run", &body, ""), 401);
    assert_eq!(daemon.github("check_run", &body, SECRET), 401);
    let empty = [("X-Gitlab-Token", "")];
    assert_eq!(daemon.post("/webhooks/gitlab", &empty, b"{}"), 401);
    // What it serves besides deliveries needs no secret.
    assert_eq!(daemon.get("/healthz").0, 200);
    daemon.stop();
}

/// GitHub's `push` delivery: `ref` moved from `before` to `after` in `octo/app`, shaped on the
/// documented payload.
fn push(branch: &str, before: &str) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({
        "ref": format!("refs/heads/{branch}"),
        "before": before,
        "after": "c0ffee0d15ea5e0b57ac1e5f00dfacade1234567",
        "created": false,
        "deleted": false,
        "forced": false,
        "base_ref": null,
        "compare": "https://github.com/octo/app/compare/5b1c0f3e9d2a...c0ffee0d15ea",
        "commits": [],
        "head_commit": null,
        "repository": {"id": 1_296_269, "name": "app", "full_name": REPO},
        "pusher": {"name": "octocat", "email": "octocat@github.com"},
        "sender": {"login": "octocat", "id": 1}
    }))
    .unwrap()
}

#[test]
fn a_push_to_a_base_branch_makes_the_prs_on_it_due_and_an_armed_one_is_updated() {
    let env = TestEnv::with_config(CONFIG);
    env.gh.world(|w| {
        w.repo(REPO)
            .required_checks(&["test"])
            .strict()
            .required_approvals(1);
        w.pr(REPO, 1);
        w.check_run(REPO, 1, "test").success();
        w.pr(REPO, 2).base_ref("release");
        w.check_run(REPO, 2, "test").success();
    });
    env.ok(&["watch", "add", "--merge-when-ready", "octo/app#1"]);
    env.ok(&["watch", "add", "octo/app#2"]);
    let mut daemon = Daemon::start(&env);
    let updates = env.gh.world(|w| w.branch_updates(REPO, 1));

    // `main` moves on: PR 1 is behind it now, and the yearly schedule would not look for a year.
    env.gh.world(|w| w.advance_base(REPO, "main", 1));
    env.gh.clear_requests();
    let body = push("main", "5b1c0f3e9d2a4c6b8e7f0a1d2c3b4a5968778695");
    assert_eq!(daemon.github("push", &body, SECRET), 202);
    daemon.wait("PR 1's branch updated after the push to its base", |_| {
        env.gh.world(|w| w.branch_updates(REPO, 1)) == updates + 1
    });
    // PR 2 is based on `release`, which did not move: it is not read.
    assert!(
        !read_since_cleared(&env, 2),
        "{:?}",
        env.gh.requests().counts()
    );
    daemon.stop();
}

/// The note hook of `tests/fixtures/gitlab/webhooks`, about MR `iid` of the fake's `g/p`.
fn gitlab_note(iid: u64) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gitlab/webhooks/note_merge_request.json"
    );
    let mut event: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    event["project"]["path_with_namespace"] = json!("g/p");
    event["merge_request"]["iid"] = json!(iid);
    serde_json::to_vec_pretty(&event).unwrap()
}

#[test]
fn a_gitlab_delivery_with_its_token_makes_its_mr_due_at_once_and_a_refused_one_changes_nothing() {
    let f = GitLabEnv::with_config(CONFIG);
    for n in [1, 2] {
        f.open(n, "dev");
        f.running(n, "test");
        f.ok(&["watch", "add", &f.pr(n)]);
    }
    let mut daemon = Daemon::start(&f);
    assert_eq!(f.pills(&f.pr(1))["ci"], json!(false));
    // Both pipelines fail on the forge; the yearly schedule would not look for a year.
    for n in [1, 2] {
        f.fail(n, "test", "error: assertion failed\n");
    }
    let note = |token: &str, iid: u64| {
        daemon.post(
            "/webhooks/gitlab",
            &[("X-Gitlab-Event", "Note Hook"), ("X-Gitlab-Token", token)],
            &gitlab_note(iid),
        )
    };
    assert_eq!(note("not-the-token", 1), 401);
    assert_eq!(note(GITLAB_TOKEN, 2), 202);
    daemon.wait("MR 2 read after its delivery", |_| {
        f.pills(&f.pr(2))["ci"] == json!(true)
    });
    assert_eq!(
        f.pills(&f.pr(1))["ci"],
        json!(false),
        "the refused delivery about MR 1 made nothing due"
    );
    daemon.stop();
}
