//! The systemd units in systemd/: they pass `systemd-analyze verify`, and
//! `systemd-analyze security --offline=yes` rates each service 2.0 or better.

use std::path::{Path, PathBuf};
use std::process::Command;

const SERVICES: [&str; 2] = ["pr-monitor.service", "pr-monitor-daemon.service"];

fn units() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd")
}

fn analyze_available() -> bool {
    crate::support::tools::present(
        &["systemd-analyze"],
        "systemd-analyze is not installed (.ci/run installs the systemd package)",
    )
}

/// The units as installed, with the binary path pointing at the one this test built.
fn installed_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in SERVICES.iter().chain(&["pr-monitor.timer"]) {
        let text = std::fs::read_to_string(units().join(name)).unwrap();
        let text = text.replace(
            "/usr/local/bin/pr-monitor",
            env!("CARGO_BIN_EXE_pr-monitor"),
        );
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn the_units_verify() {
    if !analyze_available() {
        return;
    }
    let dir = installed_copy();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .args(
            SERVICES
                .iter()
                .chain(&["pr-monitor.timer"])
                .map(|n| dir.path().join(n)),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{stderr}");
}

#[test]
fn each_service_is_rated_two_or_better() {
    if !analyze_available() {
        return;
    }
    let dir = installed_copy();
    for name in SERVICES {
        let out = Command::new("systemd-analyze")
            .args(["security", "--offline=yes"])
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let score = text
            .lines()
            .find_map(|l| l.split_once("Overall exposure level for ").map(|(_, r)| r))
            .and_then(|r| r.split_once(": ").map(|(_, s)| s))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no score for {name}:\n{text}"));
        assert!(score <= 2.0, "{name} is rated {score}:\n{text}");
    }
}

#[test]
fn the_oneshot_has_a_start_timeout_and_the_services_a_private_umask_and_credentials() {
    for name in SERVICES {
        // A dynamic user's state folders live in /var/lib/private, which only root may enter:
        // the report folder could not be read by anyone.
        let text = std::fs::read_to_string(units().join(name)).unwrap();
        for key in [
            "\nUser=pr-monitor\n",
            "StateDirectory=pr-monitor\n",
            "ReadWritePaths=/var/lib/pr-monitor-report\n",
            "ConfigurationDirectory=pr-monitor",
            "LoadCredential=github-token:",
            "UMask=0077",
        ] {
            assert!(text.contains(key), "{name} lacks {key}");
        }
        assert!(!text.contains("DynamicUser=yes"), "{name}");
    }
    let oneshot = std::fs::read_to_string(units().join("pr-monitor.service")).unwrap();
    assert!(oneshot.contains("\nTimeoutStartSec="), "{oneshot}");
    let success: Vec<&str> = oneshot
        .lines()
        .filter_map(|l| l.strip_prefix("SuccessExitStatus="))
        .collect();
    assert_eq!(success, ["1"], "exit 1 is a success, exit 3 never");
}

/// The system example config installed in a scratch root: its `/var/lib/pr-monitor` moved
/// under `root` and created (systemd's `StateDirectory=` does that), the credential folder
/// systemd hands over holding the token, `CREDENTIALS_DIRECTORY` naming it in `env`.
fn installed_config(root: &Path, env: &mut crate::support::env::TestEnv) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/system/config.yaml"),
    )
    .unwrap();
    for folder in ["var/lib/pr-monitor", "var/lib/pr-monitor-report"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    let credentials = root.join("run/credentials/pr-monitor.service");
    std::fs::create_dir_all(&credentials).unwrap();
    std::fs::write(credentials.join("github-token"), "ghp_x\n").unwrap();
    env.vars.push((
        "CREDENTIALS_DIRECTORY".to_owned(),
        credentials.display().to_string(),
    ));
    let config = root.join("etc/pr-monitor/config.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        text.replace(" /var/lib/", &format!(" {}/var/lib/", root.display())),
    )
    .unwrap();
    config
}

#[test]
fn the_system_example_config_passes_config_check() {
    let mut env = crate::support::env::TestEnv::new();
    let root = tempfile::tempdir().unwrap();
    let installed = installed_config(root.path(), &mut env);
    let out = env.run_with_config(&installed, &["config", "check"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/system/config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("database: /var/lib/pr-monitor/"), "{text}");
    assert!(
        text.contains("token_file: ${CREDENTIALS_DIRECTORY}/github-token"),
        "{text}"
    );
}

#[test]
fn the_daemon_serves_on_the_loopback_with_its_webhook_secrets_from_a_root_only_file() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/system/config.yaml");
    let config: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    let serve: pr_monitor::config::ServeConfig =
        serde_json::from_value(config["serve"].clone()).unwrap();
    assert!(serve.listen.ip().is_loopback(), "{}", serve.listen);
    let daemon = std::fs::read_to_string(units().join("pr-monitor-daemon.service")).unwrap();
    assert!(
        daemon.contains("\nEnvironmentFile=-/etc/pr-monitor/webhooks.env\n"),
        "{daemon}"
    );
}
