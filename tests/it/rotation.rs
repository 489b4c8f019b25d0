//! A rotated token reaches the daemon without a restart: every sweep reads the token file
//! afresh, here named through `${CREDENTIALS_DIRECTORY}` as systemd's `LoadCredential=` hands it
//! over. Observed through the fake GitHub's request log, on the real clock (no `--now`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::env::TestEnv;

const OLD: &str = "old-token-1";
const NEW: &str = "new-token-2";

/// Waits (at most 30 s) until the fake logged a request sent with `token` that was answered
/// `status`.
fn wait_for(env: &TestEnv, token: &str, status: u16, daemon: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let header = format!("Bearer {token}");
    loop {
        let seen = env
            .gh
            .requests()
            .entries
            .iter()
            .any(|r| r.status == status && r.authorization.as_deref() == Some(header.as_str()));
        if seen {
            return;
        }
        if Instant::now() > deadline || daemon.try_wait().unwrap().is_some() {
            let _ = daemon.kill();
            let out = daemon.stderr.take().map(std::io::read_to_string);
            panic!("no request with {token} answered {status}; the daemon said: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stop(mut daemon: Child) {
    let pid = daemon.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    assert_eq!(daemon.wait().unwrap().code(), Some(0));
}

#[test]
fn the_daemon_reads_a_rotated_token_file_on_its_next_sweep() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.token = OLD.to_owned();
        w.repo("octo/app");
        w.pr("octo/app", 1);
    });
    let credentials = env.dir.path().join("credentials");
    std::fs::create_dir(&credentials).unwrap();
    let token_file = credentials.join("github-token");
    std::fs::write(&token_file, format!("{OLD}\n")).unwrap();
    let config = env.dir.path().join("rotating.yaml");
    std::fs::write(
        &config,
        format!(
            "database: rotating.db\nschedule: \"* * * * * *\"\n\
             github:\n  api_url: {}\n  token_file: ${{CREDENTIALS_DIRECTORY}}/github-token\n\
             pr:\n  poll_sec: 1\n  idle_poll_sec: 1\n",
            env.gh.url()
        ),
    )
    .unwrap();
    let pr_monitor = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
        command
            .current_dir(env.dir.path())
            .arg("--config")
            .arg(&config)
            .args(args)
            .env("CREDENTIALS_DIRECTORY", &credentials)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("RUST_BACKTRACE", "0")
            .env_remove("PR_MONITOR_NOW");
        command
    };
    let added = pr_monitor(&["watch", "add", "octo/app#1"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");

    let mut daemon = pr_monitor(&["daemon"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&env, OLD, 200, &mut daemon);

    // The forge revokes the old token: the daemon's next sweeps are refused...
    env.gh.world(|w| w.token = NEW.to_owned());
    wait_for(&env, OLD, 401, &mut daemon);
    // ...until the file holds the new one, which a later sweep reads without a restart.
    let replaced = credentials.join("github-token.new");
    std::fs::write(&replaced, format!("{NEW}\n")).unwrap();
    std::fs::rename(&replaced, &token_file).unwrap();
    wait_for(&env, NEW, 200, &mut daemon);
    stop(daemon);
    assert!(Path::new(&token_file).exists());
}
