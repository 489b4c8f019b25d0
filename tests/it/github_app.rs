//! pr-monitor signed in as a GitHub App against the fake GitHub's App model: a JWT signed with
//! the test key (`tests/keys/`), one installation lookup per owner per process, installation
//! tokens minted per owner, used for reads and writes, renewed before they expire and minted
//! anew when the forge refuses one, and never written anywhere.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::daemon::{sent_with, stop, wait_until};
use crate::support::env::{Out, TestEnv};
use crate::support::fake_github::FakeGitHub;

const APP_ID: u64 = 4242;
const SLUG: &str = "prm-app";
const KEY: &str = include_str!("../keys/github-app-test.pem");
const KEY_PKCS8: &str = include_str!("../keys/github-app-test.pkcs8.pem");

const MINT: &str = "POST /app/installations/{id}/access_tokens";
const LOOKUP: &str = "GET /repos/{o}/{r}/installation";

/// The config of `env` with a `github.app` block (`key` lines under it) instead of a token.
fn app_config(env: &TestEnv, key: &str, extra: &str) {
    let yaml = format!(
        "database: state.db\n\
         github:\n  api_url: {}\n  app:\n    id: {APP_ID}\n    {key}\n\
         agents:\n  fixer:\n    inbox: inbox/fixer\n    logins: [fixer-bot]\n{extra}",
        env.gh.url()
    );
    std::fs::write(env.config_path(), yaml).unwrap();
}

/// A test env signed in as the App with its PKCS#1 key in `app.pem`.
fn app_env() -> TestEnv {
    let env = TestEnv::new();
    std::fs::write(env.dir.path().join("app.pem"), KEY).unwrap();
    app_config(&env, "private_key_file: app.pem", "");
    env
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The secrets the fake saw: every installation token it minted and every JWT sent to it.
fn secrets_seen(gh: &FakeGitHub) -> Vec<String> {
    let mut secrets = gh.world(|w| w.minted_tokens());
    for r in &gh.requests().entries {
        if let Some(jwt) = r
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
            .filter(|t| t.starts_with("ey"))
        {
            secrets.push(jwt.to_owned());
        }
    }
    secrets
}

/// Asserts no secret is in any output or in any file under the env's folder but the key.
fn assert_nowhere(env: &TestEnv, outputs: &[&Out]) {
    let secrets = secrets_seen(&env.gh);
    assert!(
        secrets.iter().any(|s| s.starts_with("ghs_")),
        "no token minted"
    );
    assert!(secrets.iter().any(|s| s.starts_with("ey")), "no JWT sent");
    let key_body: Vec<&str> = KEY.lines().filter(|l| !l.starts_with("-----")).collect();
    for out in outputs {
        for secret in &secrets {
            assert!(!out.stdout.contains(secret.as_str()), "stdout: {secret}");
            assert!(!out.stderr.contains(secret.as_str()), "stderr: {secret}");
        }
    }
    for file in files(env.dir.path()) {
        if file.file_name().is_some_and(|n| n == "app.pem") {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in secrets
            .iter()
            .map(String::as_str)
            .chain(key_body.iter().copied())
        {
            assert!(
                !text.contains(secret),
                "{} holds a secret ({}…)",
                file.display(),
                &secret[..12]
            );
        }
    }
}

#[test]
fn an_app_mints_a_token_per_owner_for_reads_and_writes_and_it_reaches_no_output() {
    let mut env = app_env();
    env.gh.world(|w| {
        w.app(APP_ID, SLUG).install("octo").install("acme");
        w.pr("octo/app", 1).head_commit(|c| c.by("fixer-bot"));
        w.check_run("octo/app", 1, "lint")
            .failure()
            .log("error: unused variable `x`\n");
        w.repo("acme/lib").required_checks(&["test"]).strict();
        w.pr("acme/lib", 7).behind(2);
        w.check_run("acme/lib", 7, "test").success();
    });
    let added = env.ok(&["watch", "add", "--agent", "fixer", "octo/app#1"]);
    env.ok(&["watch", "add", "--merge-when-ready", "acme/lib#7"]);
    let first = env.ok(&["run"]);

    let log = env.gh.requests();
    // Once per owner in this process; the bot's login once (the database keeps it a day).
    assert_eq!(log.count(LOOKUP), 2, "{:#?}", log.entries);
    assert_eq!(log.count(MINT), 2);
    assert_eq!(log.count("GET /app"), 1);
    assert_eq!(log.count("GET /user"), 0);
    let user_token = format!("Bearer {}", env.gh.token());
    assert!(
        log.entries
            .iter()
            .all(|r| r.authorization.as_deref() != Some(user_token.as_str())),
        "the personal token is never sent"
    );
    assert!(
        log.entries.iter().all(|r| r.status < 400),
        "{:#?}",
        log.entries
    );
    // Reads and writes for both owners: the fake refuses a token of the other account.
    let msgs = env.inbox_messages();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "ci_failure");
    assert_eq!(env.gh.world(|w| w.branch_updates("acme/lib", 7)), 1);

    // The next run (a new process) looks each owner up again and recognises the bot's own
    // branch update: the merge stays armed.
    env.advance(30);
    let second = env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(log.count(LOOKUP), 4);
    assert_eq!(log.count(MINT), 4);
    assert_eq!(log.count("GET /app"), 1);
    let armed = env.status("acme/lib#7");
    assert_eq!(armed["merge_armed"], true, "{armed}");
    assert_eq!(armed["last_error"], serde_json::Value::Null, "{armed}");

    let status = env.ok(&["status", "--json"]);
    let detail = env.ok(&["status", "acme/lib#7", "--json"]);
    let check = env.ok(&["config", "check", "--json"]);
    assert_eq!(
        check.json()["paths"]["github app key"],
        env.dir.path().join("app.pem").display().to_string()
    );
    assert_nowhere(&env, &[&added, &first, &second, &status, &detail, &check]);
}

#[test]
fn a_bad_app_key_is_a_config_error_and_a_pkcs8_key_in_a_variable_works() {
    let env = app_env();
    env.gh.world(|w| {
        w.app(APP_ID, SLUG).install("octo");
        w.pr("octo/app", 1);
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let key = env.dir.path().join("app.pem");

    std::fs::write(&key, "ghs_notakey\n").unwrap();
    assert_eq!(env.run(&["config", "check"]).code, 2);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "GitHub App private key file `{}`: not a PEM private key",
            key.display()
        )),
        "{}",
        out.stderr
    );
    std::fs::remove_file(&key).unwrap();
    let out = env.run(&["run"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("cannot be read"), "{}", out.stderr);
    assert!(
        env.gh.requests().entries.is_empty(),
        "nothing is asked of the forge"
    );

    // `status` does not need the key.
    env.ok(&["status"]);

    // The same key as PKCS#8, from a variable.
    app_config(&env, "private_key_env: PRM_TEST_APP_KEY", "");
    let out = env
        .command_for(&["run"])
        .env("PRM_TEST_APP_KEY", KEY_PKCS8)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(env.gh.requests().count(MINT), 1);
}

#[test]
fn a_key_the_app_does_not_have_is_refused_by_github_and_said_so() {
    let env = app_env();
    env.gh.world(|w| {
        w.app(APP_ID, SLUG).install("octo");
        w.pr("octo/app", 1);
        // GitHub knows another public key for this App.
        if let Some(app) = &mut w.app {
            app.public_key[40] ^= 0xff;
        }
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    let out = env.run(&["run"]);
    assert_eq!(out.code, 3, "nothing could be read: {out:?}");
    let status = env.status("octo/app#1");
    let error = status["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("GitHub refused the JWT of App 4242")
            && error.contains("check `github.app.id` and its private key"),
        "{status}"
    );
    assert_eq!(env.gh.requests().count(MINT), 0);
}

/// A daemon signed in as the App, sweeping every second on the real clock.
fn daemon(env: &TestEnv) -> Child {
    app_config(
        env,
        "private_key_file: app.pem",
        "schedule: \"* * * * * *\"\npr:\n  poll_sec: 1\n  idle_poll_sec: 1\n",
    );
    env.ok(&["watch", "add", "octo/app#1"]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
    command
        .current_dir(env.dir.path())
        .arg("--config")
        .arg(env.config_path())
        .arg("daemon")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("RUST_BACKTRACE", "0")
        .env_remove("PR_MONITOR_NOW")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command.spawn().unwrap()
}

fn token(env: &TestEnv, n: usize) -> String {
    env.gh.world(|w| w.minted_tokens()[n].clone())
}

#[test]
fn a_daemon_mints_anew_when_github_refuses_an_expired_token_and_looks_up_once() {
    let env = app_env();
    env.gh.world(|w| {
        w.app(APP_ID, SLUG).install("octo");
        w.pr("octo/app", 1);
    });
    let mut running = daemon(&env);
    wait_for(&env, &env_token(&env, &mut running, 0), 200, &mut running);
    // An hour passes on GitHub's clock: the token is dead.
    env.gh.world(|w| w.advance(3600));
    let first = token(&env, 0);
    wait_for(&env, &first, 401, &mut running);
    let second = env_token(&env, &mut running, 1);
    wait_for(&env, &second, 200, &mut running);
    stop(running);
    assert_eq!(
        env.gh.requests().count(LOOKUP),
        1,
        "once per owner per process"
    );
}

#[test]
fn a_daemon_renews_a_token_before_it_expires() {
    let env = app_env();
    env.gh.world(|w| {
        // Four seconds of life: renewed after two, never refused.
        w.app(APP_ID, SLUG).install("octo").token_lifetime(4);
        w.pr("octo/app", 1);
    });
    let mut running = daemon(&env);
    let first = env_token(&env, &mut running, 0);
    wait_for(&env, &first, 200, &mut running);
    let second = env_token(&env, &mut running, 1);
    wait_for(&env, &second, 200, &mut running);
    stop(running);
    let log = env.gh.requests();
    assert!(log.entries.iter().all(|r| r.status != 401), "{log:#?}");
    assert_eq!(log.count(LOOKUP), 1);
}

/// The `n`th token the fake minted, once it has.
fn env_token(env: &TestEnv, daemon: &mut Child, n: usize) -> String {
    wait_until(daemon, &format!("token {n} minted"), || {
        env.gh.world(|w| w.minted_tokens().len() > n)
    });
    token(env, n)
}

/// Waits until a request carrying `token` was answered `status`.
fn wait_for(env: &TestEnv, token: &str, status: u16, daemon: &mut Child) {
    wait_until(
        daemon,
        &format!("a request with {token} answered {status}"),
        || sent_with(&env.gh, token, status),
    );
}

/// Signed in as an App, a chunk's annotations and its PRs' commits are asked per owner, each
/// with that owner's token, and each PR's commits judge its own head: the agent's signed heads
/// that mallory pushed, in two accounts, are trusted by their signatures, with no REST read
/// of their commits; a human's head between them is the owner's.
#[test]
fn a_chunks_annotations_and_commits_are_asked_per_owner() {
    let env = app_env();
    let prs = [
        ("octo/app", 1, "fixer-bot"),
        ("acme/lib", 2, "fixer-bot"),
        ("octo/app", 3, "dev"),
    ];
    env.gh.world(|w| {
        w.app(APP_ID, SLUG).install("octo").install("acme");
        for (repo, n, by) in prs {
            w.pr(repo, n)
                .head_commit(|c| c.by(by).verified().pushed_by("mallory", None));
            w.check_run(repo, n, "test")
                .failure()
                .log("test parse ... FAILED\n");
        }
    });
    env.ok(&[
        "watch",
        "add",
        "--agent",
        "fixer",
        "octo/app#1",
        "acme/lib#2",
        "octo/app#3",
    ]);
    env.ok(&["run"]);
    let log = env.gh.requests();
    assert_eq!(
        (
            log.count("POST /graphql Annotations"),
            log.count("GET /repos/{o}/{r}/pulls/{n}/commits")
        ),
        (2, 0),
        "{:?}",
        log.counts()
    );
    let mut sent: Vec<(String, String)> = env
        .inbox_messages()
        .iter()
        .map(|m| (m["pr"]["url"].to_string(), m["trusted_by"].to_string()))
        .collect();
    sent.sort();
    assert_eq!(
        sent,
        [
            (
                "\"https://github.com/acme/lib/pull/2\"".to_owned(),
                "\"signatures\"".to_owned()
            ),
            (
                "\"https://github.com/octo/app/pull/1\"".to_owned(),
                "\"signatures\"".to_owned()
            ),
        ]
    );
    assert_eq!(env.status("octo/app#3")["why"], "not_agent_commit");
}
