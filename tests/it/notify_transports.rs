//! The message transports against real servers on 127.0.0.1: email through a hand-written SMTP
//! server, Slack and agent webhooks through an HTTP sink, agent commands through `sh`, the
//! outbox's retry timing, and `pr-monitor notify test` end to end.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pr_monitor::config::{Config, Secret};
use pr_monitor::model::PrRef;
use pr_monitor::notify::{self, DeliveryError, Sent};
use pr_monitor::store::{OutboxMessage, OutboxRow, Store};
use serde_json::{Value, json};

use crate::support::http_sink::{HttpSink, Reply};
use crate::support::smtp::{SmtpServer, free_port};

const PR_URL: &str = "https://github.com/octo/app/pull/342";

/// An owner notice as `report::notice_payload` writes it.
fn notice() -> Value {
    json!({
        "subject": "PR #342: lint failed",
        "text": "PR #342: lint failed\nhttps://github.com/octo/app/pull/342\nlint failed on abc1234\n",
        "url": PR_URL,
        "title": "Add <b>bold</b> & more",
        "kind": "ci",
        "pills": {"ci": true, "ci_fixing": false, "cnf": false, "cmt": 0},
        "failed_checks": [{"name": "lint", "url": "https://github.com/octo/app/actions/runs/1/job/2"}],
    })
}

/// An agent message (the contract's inbox shape, trimmed).
fn agent_message(id: &str) -> Value {
    json!({
        "id": id, "created_at": "2026-11-29T12:00:00Z", "from": "pr-monitor", "agent": "fixer",
        "kind": "ci_failure", "reason": "fix_sent",
        "pr": {"url": PR_URL, "forge": "github", "repo": "octo/app", "number": 342,
               "title": "Add", "head_sha": "abc1234def", "base": "main"},
        "checks": [], "feedback": [], "body": "fix lint",
    })
}

fn row(id: &str, channel: &str, payload: &Value) -> OutboxRow {
    OutboxRow {
        message: message(id, channel, payload),
        attempts: 0,
        delivered_at: None,
        last_error: None,
        permanent: false,
    }
}

fn message(id: &str, channel: &str, payload: &Value) -> OutboxMessage {
    OutboxMessage {
        id: id.to_owned(),
        pr: PR_URL.to_owned(),
        channel: channel.to_owned(),
        kind: payload["kind"].as_str().unwrap_or("ci").to_owned(),
        subject: "PR #342".to_owned(),
        payload: payload.to_string(),
        created_at: chrono::Utc::now(),
    }
}

fn config(dir: &Path, yaml: &str) -> Config {
    Config::parse(yaml, &dir.join("pr-monitor.yaml")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

fn email_config(dir: &Path, smtp_url: &str) -> Config {
    config(
        dir,
        &format!(
            "notify:\n  email:\n    smtp_url: \"{smtp_url}\"\n    from: \"PR Monitor <pr-monitor@example.com>\"\n    to: [owner@example.com, team@example.org]\n"
        ),
    )
}

fn epoch_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap())
}

#[test]
fn email_arrives_with_subject_recipients_text_and_html() {
    let smtp = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = email_config(dir.path(), &smtp.url());

    notify::deliver(&cfg, &row("octo-app-342-ci-email-1", "email", &notice())).unwrap();

    let mails = smtp.mails();
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(mail.from, "pr-monitor@example.com");
    assert_eq!(mail.to, ["owner@example.com", "team@example.org"]);
    assert_eq!(mail.user, None, "no credentials configured, no AUTH");
    assert_eq!(
        mail.header("Subject").as_deref(),
        Some("PR #342: lint failed")
    );
    assert_eq!(
        mail.header("X-PR-Monitor-Id").as_deref(),
        Some("octo-app-342-ci-email-1")
    );
    assert_eq!(
        mail.header("Message-ID").as_deref(),
        Some("<octo-app-342-ci-email-1@example.com>")
    );
    let text = mail.part("text/plain").expect("a text/plain part");
    assert_eq!(
        text.replace("\r\n", "\n").trim_end(),
        notice()["text"].as_str().unwrap().trim_end()
    );
    let html = mail.part("text/html").expect("a text/html part");
    let html = html.replace("\r\n", "\n");
    assert!(
        html.contains(&format!(
            "<a href=\"{PR_URL}\">Add &lt;b&gt;bold&lt;/b&gt; &amp; more</a>"
        )),
        "{html}"
    );
    assert!(
        html.contains("<a href=\"https://github.com/octo/app/actions/runs/1/job/2\">lint</a>"),
        "{html}"
    );
    assert!(!html.contains("<b>bold"), "forge text is escaped: {html}");
}

#[test]
fn smtp_down_is_temporary_and_the_retry_delivers_once_it_is_up() {
    let smtp = SmtpServer::start();
    let port = smtp.port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = email_config(dir.path(), &smtp.url());
    let r = row("m-down", "email", &notice());

    // Down: the service answers 421 and hangs up.
    smtp.set_down(true);
    let e = notify::deliver(&cfg, &r).unwrap_err();
    assert!(!e.permanent, "a 421 greeting is temporary: {e:?}");
    assert!(
        e.message.contains(&format!("smtp://127.0.0.1:{port}")),
        "{}",
        e.message
    );

    // Gone: nothing listens, the connection is refused.
    let gone = email_config(dir.path(), &format!("smtp://127.0.0.1:{}", free_port()));
    let e = notify::deliver(&gone, &r).unwrap_err();
    assert!(!e.permanent, "refused is temporary: {e:?}");

    smtp.set_down(false);
    notify::deliver(&cfg, &r).unwrap();
    assert_eq!(smtp.mails().len(), 1);
}

#[test]
fn smtp_rejections_550_are_permanent_and_451_421_temporary() {
    let smtp = SmtpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = email_config(dir.path(), &smtp.url());
    let r = row("m-rcpt", "email", &notice());

    for (code, permanent) in [(550, true), (451, false), (421, false)] {
        smtp.reject_rcpt(code);
        let e = notify::deliver(&cfg, &r).unwrap_err();
        assert_eq!(e.permanent, permanent, "{code}: {e:?}");
        assert!(
            e.message.contains(&code.to_string()),
            "{code}: {}",
            e.message
        );
    }
    assert!(smtp.mails().is_empty());
}

#[test]
fn plain_smtp_to_a_remote_host_is_refused_by_config_and_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pr-monitor.yaml");
    let yaml = "notify:\n  email:\n    smtp_url: \"smtp://mail.example.com:25\"\n    from: a@example.com\n    to: [b@example.com]\n";
    let e = Config::parse(yaml, &path).unwrap_err().to_string();
    assert!(e.contains(":3:") && e.contains("loopback"), "{e}");
    // Delivery checks again, for a config built in code.
    let mut cfg = email_config(dir.path(), "smtps://mail.example.com:465");
    if let Some(email) = cfg.notify.email.as_mut() {
        email.smtp_url = "smtp://mail.example.com:25".into();
    }
    let e = notify::deliver(&cfg, &row("m-plain", "email", &notice())).unwrap_err();
    assert!(e.permanent);
    assert!(e.message.contains("loopback"), "{}", e.message);
}

#[test]
fn slack_500_is_temporary_then_200_delivers() {
    let sink = HttpSink::start();
    sink.script([
        Reply::status(500).body("oops"),
        Reply::status(200).body("ok"),
    ]);
    let url = Secret::new(sink.url("/services/T0/B0/XYZ"));
    let payload = notice().to_string();

    let e = notify::slack::post_notice(&url, "m-slack", &payload).unwrap_err();
    assert!(!e.permanent, "{e:?}");
    assert_eq!(e.message, "Slack webhook answered HTTP 500: oops");
    notify::slack::post_notice(&url, "m-slack", &payload).unwrap();

    let reqs = sink.requests();
    assert_eq!(reqs.len(), 2);
    let req = &reqs[1];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/services/T0/B0/XYZ")
    );
    assert_eq!(req.header("X-PR-Monitor-Id"), Some("m-slack"));
    assert_eq!(req.header("Content-Type"), Some("application/json"));
    let body = req.json();
    assert_eq!(body["text"], format!("PR #342: lint failed\n{PR_URL}"));
    let section = body["blocks"][0]["text"]["text"].as_str().unwrap();
    assert!(section.starts_with("*PR #342: lint failed*\n"), "{section}");
    assert!(
        section.contains(&format!(
            "<{PR_URL}|Add &lt;b&gt;bold&lt;/b&gt; &amp; more>"
        )),
        "{section}"
    );
    assert!(section.contains("`ci`"), "{section}");
    assert!(
        section.contains("<https://github.com/octo/app/actions/runs/1/job/2|lint>"),
        "{section}"
    );
}

#[test]
fn slack_404_is_permanent_and_names_no_address() {
    let sink = HttpSink::start();
    sink.script([Reply::status(404).body("no_service")]);
    let url = sink.url("/services/SECRET");
    let e = notify::slack::post_notice(&Secret::new(url.clone()), "m", &notice().to_string())
        .unwrap_err();
    assert!(e.permanent);
    assert_eq!(e.message, "Slack webhook answered HTTP 404: no_service");
    assert!(!e.message.contains("SECRET"));
}

#[test]
fn slack_429_asks_for_its_retry_after() {
    let sink = HttpSink::start();
    sink.script([Reply::status(429).header("Retry-After", "120")]);
    let e = notify::slack::post_notice(&Secret::new(sink.url("/s")), "m", &notice().to_string())
        .unwrap_err();
    assert!(!e.permanent);
    assert_eq!(e.retry_after_secs, Some(120));
}

fn webhook_config(dir: &Path, sink: &HttpSink) -> Config {
    config(
        dir,
        &format!(
            "agents:\n  fixer:\n    webhook_url: \"{}\"\n    timeout_sec: 5\n",
            sink.url("/agent")
        ),
    )
}

#[test]
fn the_outbox_waits_at_least_as_long_as_retry_after_asks() {
    let sink = HttpSink::start();
    sink.script([Reply::status(429).header("Retry-After", "7200")]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = webhook_config(dir.path(), &sink);
    let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store
        .enqueue(&[message("m-429", "inbox:fixer", &agent_message("m-429"))])
        .unwrap();

    let before = epoch_now();
    let pass = notify::deliver_pending(&mut store, &cfg, chrono::Utc::now()).unwrap();
    assert_eq!(pass.sent, 0);
    assert_eq!(pass.failed.len(), 1);
    assert!(
        store.pending_outbox(before + 3700).unwrap().is_empty(),
        "not due before Retry-After, though the back-off (30 s) and its cap (1 h) are shorter"
    );
    assert_eq!(store.pending_outbox(before + 7300).unwrap().len(), 1);
    assert_eq!(sink.requests().len(), 1);
}

#[test]
fn a_webhook_agent_receives_the_json_and_its_idempotency_key() {
    let sink = HttpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = webhook_config(dir.path(), &sink);
    let msg = agent_message("octo-app-342-fix-1");

    let sent = notify::deliver(&cfg, &row("octo-app-342-fix-1", "inbox:fixer", &msg)).unwrap();
    assert_eq!(sent, Sent::default());
    let reqs = sink.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("POST", "/agent")
    );
    assert_eq!(
        reqs[0].header("Idempotency-Key"),
        Some("octo-app-342-fix-1")
    );
    assert_eq!(reqs[0].header("Content-Type"), Some("application/json"));
    assert_eq!(reqs[0].json(), msg);

    sink.script([Reply::status(422), Reply::status(503), Reply::status(429)]);
    let outcomes: Vec<bool> = (0..3)
        .map(|_| {
            notify::deliver(&cfg, &row("m", "inbox:fixer", &msg))
                .unwrap_err()
                .permanent
        })
        .collect();
    assert_eq!(outcomes, [true, false, false], "4xx but 429 is permanent");
}

fn command_config(dir: &Path, command: &str, timeout_sec: u64) -> Config {
    config(
        dir,
        &format!(
            "agents:\n  fixer:\n    command: {}\n    timeout_sec: {timeout_sec}\n",
            serde_json::to_string(command).unwrap()
        ),
    )
}

#[test]
fn a_command_agent_gets_the_message_on_stdin_and_its_ids_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let command = format!(
        "cat > '{0}.json'; env | grep '^PR_MONITOR_' | sort > '{0}.env'",
        out.display()
    );
    let cfg = command_config(dir.path(), &command, 30);
    let msg = agent_message("octo-app-342-fix-2");

    let sent = notify::deliver(&cfg, &row("octo-app-342-fix-2", "inbox:fixer", &msg)).unwrap();
    let run = sent.command_run.expect("the run is returned");
    assert_eq!((run.status, run.timed_out), (0, false));
    assert!(run.started <= run.ended);

    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(stdin, msg);
    let env = std::fs::read_to_string(out.with_extension("env")).unwrap();
    assert_eq!(
        env.lines().collect::<Vec<_>>(),
        [
            "PR_MONITOR_HEAD_SHA=abc1234def",
            "PR_MONITOR_KIND=ci_failure",
            "PR_MONITOR_MESSAGE_ID=octo-app-342-fix-2",
            "PR_MONITOR_PR_NUMBER=342",
            &format!("PR_MONITOR_PR_URL={PR_URL}"),
            "PR_MONITOR_REPO=octo/app",
        ]
    );
}

#[test]
fn a_hanging_command_is_killed_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = command_config(dir.path(), "echo waiting >&2; sleep 60", 1);
    let e: DeliveryError = notify::deliver(
        &cfg,
        &row("m-hang", "inbox:fixer", &agent_message("m-hang")),
    )
    .unwrap_err();
    assert!(!e.permanent);
    assert!(e.message.contains("killed after"), "{}", e.message);
    assert!(e.message.ends_with(": waiting"), "{}", e.message);
    let run = e.command_run.expect("the run is returned with the error");
    assert!(run.timed_out);
    let took = run.ended.duration_since(run.started).unwrap();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(20),
        "{took:?}"
    );
}

#[test]
fn an_agent_command_run_is_recorded_in_the_pr_history() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = command_config(dir.path(), "cat >/dev/null; exit 4", 30);
    let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store
        .enqueue(&[message("m-hist", "inbox:fixer", &agent_message("m-hist"))])
        .unwrap();

    let pass = notify::deliver_pending(&mut store, &cfg, chrono::Utc::now()).unwrap();
    assert_eq!(pass.failed.len(), 1);
    assert!(
        pass.failed[0].1.contains("exited with 4"),
        "{:?}",
        pass.failed
    );
    let pr: PrRef = PR_URL.parse().unwrap();
    let history = store.history(&pr, 10).unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(
        history[0].what.starts_with("agent command ran from ")
            && history[0].what.ends_with(" (exit 4)"),
        "{}",
        history[0].what
    );
}

/// A message for a PR on the configured GitHub Enterprise host reads its PR back through the
/// configured hosts: the agent's run is recorded in that PR's history.
#[test]
fn an_agent_command_run_on_an_enterprise_host_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        "github:\n  api_url: https://ghe.example.com/api/v3\nagents:\n  fixer:\n    command: \"cat >/dev/null\"\n    timeout_sec: 30\n",
    );
    let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let mut m = message("m-ghe", "inbox:fixer", &agent_message("m-ghe"));
    m.pr = "https://ghe.example.com/octo/app/pull/342".to_owned();
    store.enqueue(&[m]).unwrap();
    let pass = notify::deliver_pending(&mut store, &cfg, chrono::Utc::now()).unwrap();
    assert_eq!(pass.sent, 1, "{:?}", pass.failed);
    let pr: PrRef = PR_URL.parse().unwrap();
    let history = store.history(&pr, 10).unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(history[0].what.starts_with("agent command ran from "));
}

/// A message whose PR does not read back (a damaged row): the agent's run cannot be recorded,
/// and delivery says so instead of dropping it (its next commit would read as a human push).
#[test]
fn an_agent_run_whose_pr_does_not_read_back_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = command_config(dir.path(), "cat >/dev/null", 30);
    let mut store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let mut m = message("m-bad", "inbox:fixer", &agent_message("m-bad"));
    m.pr = "not a PR".to_owned();
    store.enqueue(&[m]).unwrap();
    let e = notify::deliver_pending(&mut store, &cfg, chrono::Utc::now())
        .expect_err("an unrecorded run is an error");
    let text = format!("{e:#}");
    assert!(
        text.contains("m-bad") && text.contains("not a PR") && text.contains("not recorded"),
        "{text}"
    );
    let pass = notify::deliver_pending(&mut store, &cfg, chrono::Utc::now()).unwrap();
    assert_eq!(pass.sent, 0, "the message itself was delivered once");
}

/// `pr-monitor --config CONFIG notify test [--json]` with the given environment.
fn notify_test(config: &Path, json: bool, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
    cmd.arg("--config").arg(config).args(["notify", "test"]);
    if json {
        cmd.arg("--json");
    }
    cmd.env("RUST_BACKTRACE", "0")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("PR_MONITOR_NOW")
        .env_remove("PR_MONITOR_DB")
        .env_remove("SMTP_USER")
        .env_remove("SMTP_PASSWORD")
        .env_remove("SLACK_WEBHOOK_URL")
        .current_dir(config.parent().unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run pr-monitor");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write_config(dir: &Path, smtp_url: &str, hook: &HttpSink) -> std::path::PathBuf {
    let path = dir.join("pr-monitor.yaml");
    let yaml = format!(
        "database: never-opened.db
agents:
  fixer:
    inbox: inbox/fixer
  hook:
    webhook_url: \"{}\"
    timeout_sec: 5
notify:
  email:
    smtp_url: \"{smtp_url}\"
    username_env: SMTP_USER
    password_env: SMTP_PASSWORD
    from: pr-monitor@example.com
    to: [owner@example.com]
  slack:
    webhook_url_env: SLACK_WEBHOOK_URL
",
        hook.url("/agent")
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

#[test]
fn notify_test_sends_one_message_through_every_channel() {
    let smtp = SmtpServer::start();
    let slack = HttpSink::start();
    let hook = HttpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &smtp.url(), &hook);
    let webhook = slack.url("/services/T000/B000/SeCrEt");

    let (code, stdout, stderr) = notify_test(
        &config,
        false,
        &[
            ("SMTP_USER", "smtp-user"),
            ("SMTP_PASSWORD", "pa55-w0rd"),
            ("SLACK_WEBHOOK_URL", &webhook),
        ],
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "email: sent",
            "slack: sent",
            "inbox:fixer: sent",
            "inbox:hook: sent"
        ],
        "stderr: {stderr}"
    );
    assert_eq!(code, 0, "stderr: {stderr}");

    let mails = smtp.mails();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].user.as_deref(), Some("smtp-user"));
    assert_eq!(mails[0].password.as_deref(), Some("pa55-w0rd"));
    assert_eq!(mails[0].to, ["owner@example.com"]);
    assert_eq!(
        mails[0].header("Subject").as_deref(),
        Some("pr-monitor: test message")
    );

    let posts = slack.requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].path, "/services/T000/B000/SeCrEt");
    assert_eq!(posts[0].json()["text"], "pr-monitor: test message");

    let agent_posts = hook.requests();
    assert_eq!(agent_posts.len(), 1);
    let hooked = agent_posts[0].json();
    assert_eq!(
        (hooked["kind"].as_str(), hooked["agent"].as_str()),
        (Some("test"), Some("hook"))
    );
    assert_eq!(
        agent_posts[0].header("Idempotency-Key"),
        hooked["id"].as_str()
    );

    let inbox: Vec<_> = std::fs::read_dir(dir.path().join("inbox/fixer/new"))
        .unwrap()
        .collect();
    assert_eq!(inbox.len(), 1);
    let file = inbox[0].as_ref().unwrap().path();
    let msg: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(
        (msg["kind"].as_str(), msg["agent"].as_str()),
        (Some("test"), Some("fixer"))
    );
    assert!(
        !dir.path().join("never-opened.db").exists(),
        "notify test needs no database"
    );
}

#[test]
fn notify_test_reports_each_failure_as_json_and_exits_1() {
    let dead_smtp = free_port();
    let slack = HttpSink::start();
    slack.script([Reply::status(404).body("no_service")]);
    let hook = HttpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &format!("smtp://127.0.0.1:{dead_smtp}"), &hook);
    let webhook = slack.url("/services/T000/B000/SeCrEt");

    let (code, stdout, stderr) = notify_test(
        &config,
        true,
        &[
            ("SMTP_USER", "smtp-user"),
            ("SMTP_PASSWORD", "pa55-w0rd"),
            ("SLACK_WEBHOOK_URL", &webhook),
        ],
    );
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let results: Value = serde_json::from_str(&stdout).unwrap();
    let summary: Vec<(String, bool)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["channel"].as_str().unwrap().to_owned(),
                r["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("email".to_owned(), false),
            ("slack".to_owned(), false),
            ("inbox:fixer".to_owned(), true),
            ("inbox:hook".to_owned(), true),
        ]
    );
    assert_eq!(
        results[1]["error"],
        "Slack webhook answered HTTP 404: no_service"
    );
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .contains("SMTP server"),
        "{stdout}"
    );
    assert_eq!(results[2]["error"], Value::Null);
    for secret in ["pa55-w0rd", "SeCrEt"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret} leaked"
        );
    }
}

#[test]
fn notify_test_names_a_missing_webhook_variable_without_a_value() {
    let smtp = SmtpServer::start();
    let hook = HttpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &smtp.url(), &hook);
    let (code, stdout, _) = notify_test(
        &config,
        false,
        &[("SMTP_USER", "u"), ("SMTP_PASSWORD", "p")],
    );
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "slack: failed: Slack webhook: environment variable `SLACK_WEBHOOK_URL` is not set"
        ),
        "{stdout}"
    );
}
