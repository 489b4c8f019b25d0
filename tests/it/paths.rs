//! Where pr-monitor reads and writes: relative paths resolve against the config file's folder;
//! with no config file the database goes to the user's state folder, never the current one; a
//! database in a missing folder is a usage error; `status` and `config check` say what they use.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use crate::support::env::{Out, TestEnv};

/// `pr-monitor ARGS` with no config anywhere: run from an empty folder, with `home` as HOME and
/// `xdg` as XDG_STATE_HOME when given.
fn without_config(cwd: &Path, home: &Path, xdg: Option<&Path>, args: &[&str]) -> Out {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
    command
        .current_dir(cwd)
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("PR_MONITOR_CONFIG")
        .env_remove("PR_MONITOR_DB")
        .env_remove("PR_MONITOR_NOW");
    if let Some(xdg) = xdg {
        command.env("XDG_STATE_HOME", xdg);
    }
    command.output().unwrap().into()
}

/// Asserts that standard error holds `want`.
fn says(out: &Out, want: &str) {
    assert!(
        out.stderr.contains(want),
        "want {want:?} in:\n{}",
        out.stderr
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn with_no_config_the_database_goes_to_the_state_folder() {
    if Path::new("/etc/pr-monitor/config.yaml").exists() {
        eprintln!("skipped: /etc/pr-monitor/config.yaml exists here, so a config is always found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cwd, home) = (dir.path().join("cwd"), dir.path().join("home"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&home).unwrap();

    let out = without_config(&cwd, &home, None, &["status"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let state = home.join(".local/state/pr-monitor");
    let db = state.join("pr-monitor.db");
    assert!(db.is_file(), "{}", out.stderr);
    assert_eq!(mode(&state), 0o700);
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "the current folder stays empty"
    );
    says(
        &out,
        &format!(
            "config none found (built-in defaults) · database {}",
            db.display()
        ),
    );

    let xdg = dir.path().join("xdg");
    let out = without_config(&cwd, &home, Some(&xdg), &["watch", "ls"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(xdg.join("pr-monitor/pr-monitor.db").is_file());
    assert_eq!(mode(&xdg.join("pr-monitor")), 0o700);
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
}

#[test]
fn a_database_in_a_missing_folder_is_a_usage_error() {
    let env = TestEnv::new();
    let missing = env.dir.path().join("missing");
    let db = missing.join("x.db");
    let out = env.run(&["--db", db.to_str().unwrap(), "status"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    says(
        &out,
        &format!(
            "the database `{}` (from --db) is in a folder that does not exist",
            db.display()
        ),
    );
    assert!(!missing.exists(), "no silent mkdir");

    let config = env.dir.path().join("elsewhere.yaml");
    std::fs::write(&config, "database: nowhere/state.db\n").unwrap();
    let out = env.run_with_config(&config, &["run"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    says(&out, &format!("(from `database` in {})", config.display()));
    assert!(!env.dir.path().join("nowhere").exists());
}

#[test]
fn config_check_prints_paths_resolved_against_the_config_folder() {
    let env = TestEnv::new();
    let elsewhere = tempfile::tempdir().unwrap();
    // Run from another folder: the config's relative paths still resolve beside it.
    let out = env.run_in(elsewhere.path(), &["config", "check"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let root = env.dir.path().display().to_string();
    for (what, path) in [("database", "state.db"), ("inbox fixer", "inbox/fixer")] {
        let line = out
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(what))
            .unwrap_or_else(|| panic!("no {what} line:\n{}", out.stdout));
        assert!(line.ends_with(&format!("  {root}/{path}")), "{line}");
    }

    let out = env.run_in(elsewhere.path(), &["config", "check", "--json"]);
    let paths = &out.json()["paths"];
    assert_eq!(paths["database"], format!("{root}/state.db"));
    assert_eq!(paths["inbox fixer"], format!("{root}/inbox/fixer"));

    let db = elsewhere.path().join("other.db");
    let out = env.run(&["--db", db.to_str().unwrap(), "config", "check", "--json"]);
    assert_eq!(out.json()["paths"]["database"], db.display().to_string());
}

#[test]
fn status_names_its_config_and_database_on_stderr_only() {
    let env = TestEnv::new();
    let out = env.ok(&["status"]);
    let want = format!(
        "config {} · database {}",
        env.config_path().display(),
        env.dir.path().join("state.db").display()
    );
    says(&out, &want);
    assert!(!out.stdout.contains(&want), "{}", out.stdout);
    let out = env.ok(&["status", "--json"]);
    assert!(!out.stderr.contains("database"), "{}", out.stderr);
}

/// Runs `args` with standard error on a pseudo-terminal; returns what it wrote there.
fn on_a_terminal(env: &TestEnv, args: &[&str]) -> String {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use std::io::Read as _;
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut command = env.command_for(args);
    command.stdout(std::process::Stdio::null()).stderr(terminal);
    let status = command.status().unwrap();
    drop(command);
    assert!(status.success(), "{args:?}");
    let mut said = Vec::new();
    let mut master = std::fs::File::from(master);
    let mut buf = [0u8; 4096];
    // The terminal's other end is closed: read until the pty says so (EIO).
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        said.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&said).into_owned()
}

#[test]
fn run_names_its_config_and_database_on_a_terminal_only() {
    let env = TestEnv::new();
    env.with_pr("octo/app", 4);
    env.ok(&["watch", "add", "octo/app#4"]);
    let want = format!(
        "config {} · database {}",
        env.config_path().display(),
        env.dir.path().join("state.db").display()
    );
    let said = on_a_terminal(&env, &["run"]);
    assert!(said.contains(&want), "{said:?}");
    let piped = env.ok(&["run"]);
    assert!(!piped.stderr.contains(&want), "{}", piped.stderr);

    // Log lines on a terminal are for a person: no timestamp, the level first.
    let said = on_a_terminal(&env, &["run", "--force", "--log-level", "debug"]);
    let call = said
        .lines()
        .find(|l| l.contains("forge call"))
        .unwrap_or_else(|| panic!("{said:?}"));
    let plain = call.replace('\u{1b}', "");
    assert!(plain.contains("DEBUG"), "{call:?}");
    assert!(!call.starts_with(|c: char| c.is_ascii_digit()), "{call:?}");
}
