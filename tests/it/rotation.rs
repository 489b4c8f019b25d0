//! A rotated token reaches the daemon without a restart: every sweep reads the token file
//! afresh, here named through `${CREDENTIALS_DIRECTORY}` as systemd's `LoadCredential=` hands it
//! over. Observed through the fake GitHub's request log, on the real clock (no `--now`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::daemon::{sent_with, stop, wait_until};
use crate::support::env::TestEnv;

const OLD: &str = "old-token-1";
const NEW: &str = "new-token-2";

#[test]
fn the_daemon_reads_a_rotated_token_file_on_its_next_sweep() {
    let env = TestEnv::new();
    env.gh.world(|w| {
        w.token = OLD.to_owned();
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
    wait_until(&mut daemon, "a request with OLD answered 200", || {
        sent_with(&env.gh, OLD, 200)
    });

    // The forge revokes the old token: the daemon's next sweeps are refused...
    env.gh.world(|w| w.token = NEW.to_owned());
    wait_until(&mut daemon, "a request with OLD answered 401", || {
        sent_with(&env.gh, OLD, 401)
    });
    // ...until the file holds the new one, which a later sweep reads without a restart.
    let replaced = credentials.join("github-token.new");
    std::fs::write(&replaced, format!("{NEW}\n")).unwrap();
    std::fs::rename(&replaced, &token_file).unwrap();
    wait_until(&mut daemon, "a request with NEW answered 200", || {
        sent_with(&env.gh, NEW, 200)
    });
    stop(daemon);
    assert!(Path::new(&token_file).exists());
}
